import type { Rule, RuleContext } from "../rule";
import { freezesVariable } from "../python/timeline";
import { nodeRange } from "../python/events";
import { enclosingFunction, type SyntaxNode } from "../python/parser";
import { importBindings } from "../python/walker";
import { deviceUses } from "../python/devices";
import { callArgs } from "./shared/py";
import {
  makesModel,
  pinnedReleases,
  SELECT_DEVICE_SOURCE,
  STOPS_WRITING_FROM,
  ultralyticsModelCall,
} from "./shared/ultralytics";
import { literalOrdinal } from "./GPU046-ultralytics-device-after-cuda-init";
import { settledLibrary, uncataloguedImportBetween } from "./GPU002-env-after-framework-import";
import { importedModules, NON_GPU_LIBRARIES, STDLIB_MODULES } from "../python/imports";
import type { TimelineCall } from "../python/events";

/** Whether nothing before timeline position `at` initialised CUDA (then Ultralytics' write of CUDA_VISIBLE_DEVICES takes effect). */
function cudaNotStartedBefore(ctx: RuleContext, at: number): boolean {
  return !ctx.model.events.slice(0, at).some((e) => freezesVariable(e, "CUDA_VISIBLE_DEVICES"));
}

/**
 * The Ultralytics releases whose select_device writes CUDA_VISIBLE_DEVICES for a GPU `device=`: read
 * at the commits that set 8.0.0 (ultralytics/yolo/utils/torch_utils.py:71), 8.1.0 (utils/torch_utils.py:118),
 * 8.2.0 (:126), 8.3.0 (:174), 8.3.100 (:181), 8.3.218 (:190) and 8.4.0 (:190); 8.4.87 (ultralytics#25021,
 * 21e038cfa3 "stop mutating CUDA_VISIBLE_DEVICES") selects the GPU with torch.cuda.set_device instead.
 */
const WRITES_VISIBLE_UNTIL = STOPS_WRITING_FROM;

/**
 * What the project's ultralytics pin says of the write: `"all"` when every release it admits writes
 * the variable (8.0.0 up to {@link WRITES_VISIBLE_UNTIL}), `"none"` when none does, `"some"` when
 * unpinned, unreadable, or both.
 */
export function pinnedWrite(pin: string | undefined): "all" | "none" | "some" {
  return pinnedReleases(pin, WRITES_VISIBLE_UNTIL);
}

/** Calls that run code the engine does not read (a module named at run time, a string of code). */
const RUNS_UNREAD = new Set([
  "__import__",
  "exec",
  "eval",
  "importlib.import_module",
  "runpy.run_path",
  "runpy.run_module",
]);
/**
 * Torch calls that start nothing on the GPU: a seed (ground-truth.md row `torch.manual_seed(0)`:
 * the write still applies after it), a device value, and grad-mode switches.
 */
const TORCH_INERT = new Set([
  "torch.manual_seed",
  "torch.device",
  "torch.no_grad",
  "torch.inference_mode",
  "torch.set_grad_enabled",
]);

/**
 * Whether the module settles that nothing before the Ultralytics call `tc` (the `index`th timeline
 * call) can have started CUDA unseen: every import that may run before it (at the top level before
 * its line, in function bodies too, every import of the module when the call is in a function) is of
 * a library whose import the engine knows (GPU002 `settledLibrary`: the standard library, a library
 * with no CUDA code, a framework root, or one the catalogue holds for the pins, ultralytics
 * included), none is relative or of the project (the project lookup sees whether a module of the
 * project initialises, not whether a library it imports does); and every call before it is of the
 * standard library, a library with no CUDA code, the module's own code (followed), an Ultralytics
 * model class, or a torch call that starts nothing ({@link TORCH_INERT}), with no `.to(...)` or
 * `.cuda()`. Not in a notebook (cells may run in any order, and magics run other code).
 */
function settledBefore(ctx: RuleContext, tc: TimelineCall, index: number): boolean {
  if (ctx.notebook) return false;
  const pins = ctx.libraryPins ?? {};
  const inFunction = !!enclosingFunction(tc.node);
  if (uncataloguedImportBetween(ctx.model, -1, inFunction ? Infinity : tc.node.startPosition.row, pins, ctx.project))
    return false;
  for (const stmt of importsBefore(ctx, tc)) {
    const modules = importedModules(stmt);
    const relative = stmt.type === "import_from_statement" && !modules.length;
    if (relative || modules.some((m) => !settledLibrary(m, pins) || ctx.project?.isProjectModule?.(m))) return false;
  }
  const tops = new Set(
    ctx.model
      .nodesOfType(["import_statement", "import_from_statement"])
      .flatMap((stmt) => importedModules(stmt).map((m) => m.split(".")[0])),
  );
  return ctx.model.calls.slice(0, index).every((c) => inertCall(ctx, c, tops));
}

/**
 * The import statements of the module that may run before the call `tc`: those above its line
 * (function bodies included), or every one when the call is in a function (it may be called last).
 */
function importsBefore(ctx: RuleContext, tc: TimelineCall): SyntaxNode[] {
  const all = ctx.model.nodesOfType(["import_statement", "import_from_statement"]);
  return enclosingFunction(tc.node) ? all : all.filter((s) => s.startPosition.row < tc.node.startPosition.row);
}

/**
 * Whether an import of a project module that may run before `tc` initialises CUDA (the project
 * lookup's `moduleInit`, which the timeline asks only in files that write a startup variable): the
 * variable Ultralytics writes is then read already, and there is nothing to report.
 */
function projectInitBefore(ctx: RuleContext, tc: TimelineCall): boolean {
  const project = ctx.project;
  if (!project) return false;
  return importsBefore(ctx, tc).some((stmt) =>
    importBindings(stmt).some(([, path]) => !settledLibrary(path) && project.moduleInit(path) !== null),
  );
}

/** {@link settledBefore} for one call before the Ultralytics call; `tops`: the modules the module imports. */
function inertCall(ctx: RuleContext, c: TimelineCall, tops: ReadonlySet<string>): boolean {
  const fn = c.node.childForFieldName("function");
  const attr = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : undefined;
  if (attr === "to" || attr === "cuda" || (c.path && RUNS_UNREAD.has(c.path))) return false;
  if (!c.path) return true;
  const top = c.path.split(".")[0];
  if (!tops.has(top) || STDLIB_MODULES.has(top) || NON_GPU_LIBRARIES.has(top)) return true;
  return TORCH_INERT.has(c.path) || makesModel(ctx.model, c.node);
}

/**
 * GPU053's message: `written` the call's device= text, `n` its GPU, `use` the later device use and
 * where, `ordinal` the device it names; `pin` the project's ultralytics pin where every release it
 * admits writes the variable (else the message says which releases do).
 */
function narrowsMessage(written: string, n: number, use: string, ordinal: number, pin: string | undefined): string {
  const who = pin ? `The pinned ultralytics${pin}` : `Ultralytics before ${WRITES_VISIBLE_UNTIL}`;
  const newer = pin
    ? ""
    : `, or use ultralytics ${WRITES_VISIBLE_UNTIL} or later (it selects the GPU with torch.cuda.set_device)`;
  return `${who} applies device=${written} by writing CUDA_VISIBLE_DEVICES="${n}" (${SELECT_DEVICE_SOURCE}) and nothing has started CUDA yet, so from here on the process sees GPU ${n} alone, as device 0: ${use} names device ${ordinal}, which does not exist then (invalid device ordinal); pass device=torch.device("cuda:${n}") (from 8.0.179 used as it is, without the write), or start CUDA before this call${newer}`;
}

/** GPU053: Ultralytics' `device=N` before CUDA started narrows the whole process to GPU N; a later ordinal >= 1 does not exist. */
export const rule: Rule = {
  meta: {
    code: "GPU053",
    name: "ultralytics-device-narrows-process",
    severity: "warning",
    fixable: false,
    // Warning: the preview findings (an unpinned ultralytics may be 8.4.87 or later, which does not
    // write the variable; an import or call the engine does not read may have started CUDA first).
    // The default sub-check, where the pin and the module settle both, reports an error.
    // An Ultralytics model call with device= needs the package's name (its import) and the keyword.
    trigger: (t) => t.hasWord("ultralytics") && t.has("device") && t.has("cuda"),
    docs: {
      what: 'Finds an Ultralytics model call with a literal GPU (`model.predict(..., device=0)`, `device="cuda:0"`; the model made in this module, as GPU046 reads it) made before anything initialised CUDA, followed in the same code by a literal device ordinal that the one GPU it leaves cannot have: `"cuda:1"`, `torch.cuda.set_device(1)`, `device_ids=[0, 1]`, `.to(1)`. In the default set (an error) only where the project pins ultralytics to releases that all write CUDA_VISIBLE_DEVICES (8.0.0 to 8.4.86) and the module settles that nothing before the call started CUDA unseen: every import that may run before it is of the standard library, a library with no CUDA code, a framework root or a library the init catalogue holds for the pins (ultralytics among them), none is relative or a module of the project, and every call before it is of the standard library, such a library, the module\'s own code, an Ultralytics model class, or a torch call that starts nothing (`torch.manual_seed`, `torch.device`), with no `.to(...)` or `.cuda()`; not in notebooks. The rest is preview (a warning): unpinned, the install may be 8.4.87 or later. Silent when the pin admits only 8.4.87 or later, which selects the GPU with `torch.cuda.set_device` and leaves the variable alone.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order), including the bodies of the module's own functions that it calls, for the Ultralytics call and the CUDA initialisations before it (a catalogued import counts, and an import of a project module that initialises CUDA, as the project lookup finds it); the later device ordinals written in the same function or at the same top level after the call (not one given to another Ultralytics call: its select_device takes cuda:0, the one GPU left, as GPU046 says); the project's ultralytics pin (`requirements*.txt`, `pyproject.toml`, as the init catalogue reads them). For the default check, the module's import statements that may run before the call (above it, function bodies included; all of them when the call is in a function) and the calls before it. Not followed: devices held in variables, a model returned by a function or held in an attribute, code in other modules, the ultralytics actually installed, and (for the preview findings) CUDA initialised by an import the catalogue does not know or a call the engine does not read (it makes the write harmless: the rule then says something that is not so).",
      why: 'Ultralytics 8.0.0 to 8.4.86 applies `device=N` by writing `CUDA_VISIBLE_DEVICES=N` before its first `torch.cuda.is_available()` (`select_device`: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`, read at the commits that set 8.0.0, 8.1.0, 8.2.0, 8.3.0, 8.3.100, 8.3.218 and 8.4.0; 8.4.87 stopped it: ultralytics#25021). When CUDA has not started yet, that write is what CUDA reads when it starts (measured, ground-truth.md: a write before the first CUDA call takes effect), so for the rest of the process GPU N is the only device, ordinal 0; an ordinal of 1 or more then raises `invalid device ordinal` (ground-truth.md: `CUDA_VISIBLE_DEVICES="1"`, then `torch.cuda.set_device(1)` or `device="cuda:1"`), and `DataParallel(device_ids=[0, 1])` fails the same way (ultralytics#24853). Importing ultralytics starts nothing (init catalogue: read at the same releases and 8.4.114).',
      example:
        'import torch\nfrom ultralytics import YOLO\n\nresults = YOLO("yolo11n.pt").predict("frames/", device=0)  # GPU053: the process now sees one GPU\nreid = torch.nn.DataParallel(torch.nn.Linear(8, 8).to("cuda:0"), device_ids=[0, 1])\n',
      fix: 'import torch\nfrom ultralytics import YOLO\n\n# A torch.device is used as it is: select_device returns it without writing CUDA_VISIBLE_DEVICES.\nresults = YOLO("yolo11n.pt").predict("frames/", device=torch.device("cuda:0"))\nreid = torch.nn.DataParallel(torch.nn.Linear(8, 8).to("cuda:0"), device_ids=[0, 1])\n',
      whenNotToCare:
        "When the later ordinals are meant for another process, when the ultralytics that runs the code is 8.4.87 or later (pin it, and the rule is silent), or when CUDA_VISIBLE_DEVICES is set again before the process ever starts CUDA (rare: the model call itself starts it).",
      references: [
        'ultralytics/ultralytics 0009995d90 ultralytics/utils/torch_utils.py select_device: `if isinstance(device, torch.device) ...: return device`; `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`',
        "ultralytics/ultralytics select_device's write of CUDA_VISIBLE_DEVICES, at the commits that set each version: 8.0.0 422c49d439 ultralytics/yolo/utils/torch_utils.py:71; 8.1.0 808984c6cf ultralytics/utils/torch_utils.py:118; 8.2.0 edc8263120 :126; 8.3.0 6e43d1e1e5 :174; 8.3.100 815f003802 :181; 8.3.218 8da29ee37a :190; 8.4.0 f2d3aed634 :190 (read through forks that carry the upstream history); `if isinstance(device, torch.device): return device` from 8.0.179 (c17106db1f)",
        "ultralytics/ultralytics#25021 (21e038cfa3, 8.4.87, 2026-07-03): select_device no longer writes CUDA_VISIBLE_DEVICES; a single GPU is selected with torch.cuda.set_device (read at 8.4.114, ee3fe3eabf ultralytics/utils/torch_utils.py:210)",
        'ground-truth.md: \'When does setting os.environ["CUDA_VISIBLE_DEVICES"] = "1" still take effect?\' (before the first CUDA call) and Other facts measured (`CUDA_VISIBLE_DEVICES="1"`, then `torch.cuda.set_device(1)`: invalid device ordinal)',
        "ultralytics/ultralytics#24853 (a YOLO prediction with device=0, then a second model on several GPUs in the same process)",
      ],
    },
  },
  check(ctx) {
    // An ordinal given to another Ultralytics call is not used as one: its select_device writes
    // CUDA_VISIBLE_DEVICES (too late) and takes cuda:0, the process's only GPU (GPU046 reports it).
    const ultralyticsDevices = ctx.model.calls
      .map((tc) => (ultralyticsModelCall(ctx.model, tc.node) ? callArgs(tc.node).keywords.get("device") : undefined))
      .filter((d): d is SyntaxNode => !!d);
    const insideUltralyticsDevice = (n: SyntaxNode) =>
      ultralyticsDevices.some((d) => n.startIndex >= d.startIndex && n.endIndex <= d.endIndex);
    const uses = deviceUses(ctx.model).filter((u) => u.ordinal >= 1 && !u.library && !insideUltralyticsDevice(u.node));
    // A pin that admits only releases from 8.4.87 on: select_device no longer writes the variable.
    const pinned = pinnedWrite(ctx.libraryPins?.ultralytics);
    if (!uses.length || pinned === "none") return;
    for (const [index, tc] of ctx.model.calls.entries()) {
      const device = callArgs(tc.node).keywords.get("device");
      const n = literalOrdinal(device);
      if (n === null || !ultralyticsModelCall(ctx.model, tc.node) || !cudaNotStartedBefore(ctx, tc.at)) continue;
      const scope = enclosingFunction(tc.node)?.id ?? -1;
      const later = uses.find(
        (u) => u.node.startIndex > tc.node.endIndex && (enclosingFunction(u.node)?.id ?? -1) === scope,
      );
      if (!later || projectInitBefore(ctx, tc)) continue;
      const line = ctx.where(later.node.startPosition.row);
      // Default (an error) only where the project's pin and files settle it: every release the pin
      // admits writes the variable, and nothing before the call can have started CUDA unseen.
      const certain = pinned === "all" && settledBefore(ctx, tc, index);
      ctx.report({
        range: nodeRange(device!.parent ?? device!),
        ...(certain ? { severity: "error" as const } : { preview: true }),
        message: narrowsMessage(
          device!.text,
          n,
          `${later.form} (${line})`,
          later.ordinal,
          certain ? ctx.libraryPins?.ultralytics : undefined,
        ),
        related: [{ range: nodeRange(later.node), message: `device ${later.ordinal}, not visible after the call` }],
      });
    }
  },
};
