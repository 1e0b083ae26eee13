import type { Rule, RuleContext } from "../rule";
import { freezesVariable } from "../python/timeline";
import { nodeRange } from "../python/events";
import { enclosingFunction, type SyntaxNode } from "../python/parser";
import { deviceUses } from "../python/devices";
import { callArgs } from "./shared/py";
import { SELECT_DEVICE_SOURCE, ultralyticsModelCall } from "./shared/ultralytics";
import { literalOrdinal } from "./GPU046-ultralytics-device-after-cuda-init";

/** Whether nothing before timeline position `at` initialised CUDA (then Ultralytics' write of CUDA_VISIBLE_DEVICES takes effect). */
function cudaNotStartedBefore(ctx: RuleContext, at: number): boolean {
  return !ctx.model.events.slice(0, at).some((e) => freezesVariable(e, "CUDA_VISIBLE_DEVICES"));
}

/** GPU053: Ultralytics' `device=N` before CUDA started narrows the whole process to GPU N; a later ordinal >= 1 does not exist. */
export const rule: Rule = {
  meta: {
    code: "GPU053",
    name: "ultralytics-device-narrows-process",
    severity: "warning",
    fixable: false,
    // Preview: its precision is not measured (neither the corpus nor the public Ultralytics scripts
    // read with the code search hold such a call: ecosystem.md), and an import the catalogue does not
    // know may have started CUDA before the call, which makes the write harmless.
    preview: true,
    // An Ultralytics model call with device= needs the package's name (its import) and the keyword.
    trigger: (t) => t.hasWord("ultralytics") && t.has("device") && t.has("cuda"),
    docs: {
      what: 'Finds an Ultralytics model call with a literal GPU (`model.predict(..., device=0)`, `device="cuda:0"`; the model made in this module, as GPU046 reads it) made before anything initialised CUDA, followed in the same code by a literal device ordinal that the one GPU it leaves cannot have: `"cuda:1"`, `torch.cuda.set_device(1)`, `device_ids=[0, 1]`, `.to(1)`.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order), including the bodies of the module's own functions that it calls, for the Ultralytics call and the CUDA initialisations before it (a catalogued import counts); the later device ordinals written in the same function or at the same top level after the call (not one given to another Ultralytics call: its select_device takes cuda:0, the one GPU left, as GPU046 says). Not followed: devices held in variables, a model returned by a function or held in an attribute, code in other modules, and CUDA initialised by an import the catalogue does not know (a library that starts CUDA when imported makes the write harmless: the rule then says something that is not so).",
      why: 'Ultralytics applies `device=N` by writing `CUDA_VISIBLE_DEVICES=N` before its first `torch.cuda.is_available()` (ultralytics/utils/torch_utils.py, `select_device`: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`; read at ultralytics/ultralytics 0009995d90). When CUDA has not started yet, that write is what CUDA reads when it starts (measured, ground-truth.md: a write before the first CUDA call takes effect), so for the rest of the process GPU N is the only device, ordinal 0; an ordinal of 1 or more then raises `invalid device ordinal` (ground-truth.md: `CUDA_VISIBLE_DEVICES="1"`, then `torch.cuda.set_device(1)` or `device="cuda:1"`), and `DataParallel(device_ids=[0, 1])` fails the same way (ultralytics#24853).',
      example:
        'import torch\nfrom ultralytics import YOLO\n\nresults = YOLO("yolo11n.pt").predict("frames/", device=0)  # GPU053: the process now sees one GPU\nreid = torch.nn.DataParallel(torch.nn.Linear(8, 8).to("cuda:0"), device_ids=[0, 1])\n',
      fix: 'import torch\nfrom ultralytics import YOLO\n\n# A torch.device is used as it is: select_device returns it without writing CUDA_VISIBLE_DEVICES.\nresults = YOLO("yolo11n.pt").predict("frames/", device=torch.device("cuda:0"))\nreid = torch.nn.DataParallel(torch.nn.Linear(8, 8).to("cuda:0"), device_ids=[0, 1])\n',
      whenNotToCare:
        "When the later ordinals are meant for another process, or CUDA_VISIBLE_DEVICES is set again before the process ever starts CUDA (rare: the model call itself starts it).",
      references: [
        'ultralytics/ultralytics 0009995d90 ultralytics/utils/torch_utils.py select_device: `if isinstance(device, torch.device) ...: return device`; `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`',
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
    if (!uses.length) return;
    for (const tc of ctx.model.calls) {
      const device = callArgs(tc.node).keywords.get("device");
      const n = literalOrdinal(device);
      if (n === null || !ultralyticsModelCall(ctx.model, tc.node) || !cudaNotStartedBefore(ctx, tc.at)) continue;
      const scope = enclosingFunction(tc.node)?.id ?? -1;
      const later = uses.find(
        (u) => u.node.startIndex > tc.node.endIndex && (enclosingFunction(u.node)?.id ?? -1) === scope,
      );
      if (!later) continue;
      const line = ctx.where(later.node.startPosition.row);
      ctx.report({
        range: nodeRange(device!.parent ?? device!),
        message: `Ultralytics applies device=${device!.text} by writing CUDA_VISIBLE_DEVICES="${n}" (${SELECT_DEVICE_SOURCE}) and nothing has started CUDA yet, so from here on the process sees GPU ${n} alone, as device 0: ${later.form} (${line}) names device ${later.ordinal}, which does not exist then (invalid device ordinal); pass device=torch.device("cuda:${n}") (used as it is, without the write), or start CUDA before this call`,
        related: [{ range: nodeRange(later.node), message: `device ${later.ordinal}, not visible after the call` }],
      });
    }
  },
};
