import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { stateBefore } from "../python/timeline";
import { nodeRange } from "../python/events";
import { moveWriteFix } from "./shared/moveWrite";
import { asyncBackendWritesAfterImport } from "./GPU026-alloc-backend-after-import";
import { importedModules, importsRunAtImport, NON_GPU_LIBRARIES, STDLIB_MODULES } from "../python/imports";
import { frameworkOfModule } from "../frameworks";
import { catalogueSummary, isCatalogued, throughNote } from "../initCatalogue";
import type { ModuleModel, ProjectLookup } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import type { ImportEvent } from "../python/events";

/**
 * The framework roots: the runtimes themselves, whose import leaves CUDA uninitialised (ground-truth.md
 * rows `import torch` only, `import jax` only, `import cupy`; TensorFlow's and Keras's import by their
 * documentation: the runtime initialises at the first op). A library that merely imports one of them
 * (FRAMEWORK_MODULES' other keys: vllm, diffusers, ...) is not a root: its own
 * module-level code may initialise CUDA, and unless the catalogue holds it nothing says it does not.
 */
/** TensorFlow and Keras: import laziness documented (the runtime initialises at the first op), not measured here. */
const TF_FAMILY: ReadonlySet<string> = new Set(["tensorflow", "keras", "tf_keras", "keras_core"]);
const FRAMEWORK_ROOTS: ReadonlySet<string> = new Set([
  "torch",
  "tensorflow",
  "keras",
  "tf_keras",
  "keras_core",
  "jax",
  "jaxlib",
  "cupy",
  "cupyx",
  "numba",
  "paddle",
  "mxnet",
]);

/**
 * Whether importing `module` is known to leave CUDA alone, or to initialise it in a way the engine
 * sees: the standard library, a library with no CUDA code ({@link NON_GPU_LIBRARIES}), a framework
 * root ({@link FRAMEWORK_ROOTS}), or a library the catalogue holds for the project's `pins`
 * (initCatalogue.ts `isCatalogued`). A module of the project is not settled here: its import runs
 * the project's code.
 */
export function settledLibrary(module: string, pins: Readonly<Record<string, string>> = {}): boolean {
  const top = module.split(".")[0];
  return (
    STDLIB_MODULES.has(top) || NON_GPU_LIBRARIES.has(top) || FRAMEWORK_ROOTS.has(top) || isCatalogued(module, pins)
  );
}

/**
 * The first import that runs between two lines of the module (0-based rows, both exclusive) of a
 * library that may initialise CUDA and that the catalogue does not settle: not the standard library,
 * not a framework root ({@link FRAMEWORK_ROOTS}), not catalogued for the project's pins
 * (initCatalogue.ts `isCatalogued`: an entry for the pinned version, whatever it says, or for an
 * unpinned project the newest release's; peft, which imports bitsandbytes where it is installed, is
 * open unless both are pinned), not a library with no CUDA code ({@link NON_GPU_LIBRARIES}), not
 * relative, and not a module of the project (`project`: the engine reads those, and one that
 * initialises makes the write GPU001's). Top-level statements and the blocks that run with them
 * (python/imports.ts `importsRunAtImport`).
 * @returns the module path, its import statement, `gpu`: whether the library brings a GPU
 *   framework itself (a FRAMEWORK_MODULES key such as vllm or diffusers: GPU code that may run at
 *   import) rather than being an unknown library of any kind, and `note`: what the catalogue knows
 *   of it where an entry leaves it open (initCatalogue.ts `throughNote`); or null.
 */
export function uncataloguedImportBetween(
  model: ModuleModel,
  afterRow: number,
  beforeRow: number,
  pins: Readonly<Record<string, string>> = {},
  project?: ProjectLookup,
): { module: string; node: SyntaxNode; gpu: boolean; note: string | null } | null {
  const between = model.tree.statements.filter(
    (s) => s.startPosition.row > afterRow && s.startPosition.row < beforeRow,
  );
  for (const stmt of importsRunAtImport(between)) {
    if (stmt.startPosition.row >= beforeRow) break;
    for (const module of importedModules(stmt)) {
      if (settledLibrary(module, pins) || project?.isProjectModule?.(module)) continue;
      return { module, node: stmt, gpu: frameworkOfModule(module) !== null, note: throughNote(module, pins) };
    }
  }
  return null;
}

/**
 * Why a write after the framework import `firstImport` works, and what it depends on: the clause
 * GPU002's message (and GPU062's, for a Hydra `env_set` entry) gives after naming the import.
 * @param where names a 0-based line for messages (RuleContext.where)
 * @param suspect the uncatalogued library in between ({@link uncataloguedImportBetween}), or null
 * @param catalogue where the catalogue is listed, for the message
 */
export function afterImportWhy(
  where: (row: number) => string,
  firstImport: ImportEvent,
  suspect: { module: string; node: SyntaxNode; note?: string | null } | null,
  catalogue: string,
): string {
  const root = firstImport.module.split(".")[0];
  if (suspect?.note)
    return `: it works only if \`${suspect.module}\` (imported on ${where(suspect.node.startPosition.row)}) does not initialise CUDA: ${suspect.note}`;
  return suspect
    ? `: it works only if \`${suspect.module}\` (imported on ${where(suspect.node.startPosition.row)}) does not initialise CUDA; it is not in GPU Pilot's catalogue of libraries that do (listed in ${catalogue})`
    : `: it works today (importing ${root} leaves CUDA uninitialised, ${TF_FAMILY.has(root) ? "documented" : "measured"}), but only while nothing initialises CUDA before the write`;
}

/** GPU002: a startup variable written after a framework import, before any initialising call. */
export const rule: PythonRule = {
  meta: {
    code: "GPU002",
    name: "env-after-framework-import",
    // Information: the program works as written (nothing has initialised CUDA yet); the write is
    // fragile, not wrong. On the ecosystem corpus every finding was of this kind (test/ecosystem).
    severity: "information",
    fixable: true,
    fixSafety: "both",
    // An environment write of a startup variable, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(STARTUP_VARIABLES),
    docs: {
      what: "Finds a CUDA startup variable written after a framework (or a library that imports one) was imported, but before any call that initialised CUDA. In the default set only where a GPU library that is neither measured nor catalogued (one that brings a framework itself: `vllm`, `diffusers`, `flax`, ...; the catalogue is under References) is imported between the framework import and the write, or is that import: the message names it, since its own import-time code may initialise CUDA. With preview on, also where the library in between has no known GPU code (named), and where nothing in between can initialise (the write works today and is one initialising import away from GPU001). A catalogued library that initialises at import makes the write GPU001 (rules.md amendment 2026-12-05: hygiene, information).",
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, for the framework import and the CUDA initialisations before each write (an import of a project module that initialises CUDA makes the write GPU001's); the library named as a suspect is one imported between that import and the write by the module's top-level code or the blocks that run with it, that the catalogue does not settle for the project's pins (requirements*.txt, pyproject.toml, environment.yml: an entry for the pinned version, or for an unpinned library the newest release's; `peft`, which imports `bitsandbytes` where it is installed in some releases, is named with what the catalogue knows unless the project pins both), and that is no module of the project (the engine reads those). Not followed: writes in functions the module never calls or in other modules, and the code an imported library runs when imported (only the catalogue tells).",
      why: "It still works today — measured on 2 x H200, torch 2.11: `CUDA_VISIBLE_DEVICES=\"1\"` set after `import torch`, after seeding or after `torch.cuda.device_count()` lands on physical GPU 1, because CUDA initialises lazily. But it is fragile: any module imported in between may initialise CUDA (torch 1.12.0 did so on import; `deepspeed` and `bitsandbytes` do: see the catalogue under References), and torch < 2.4 cached `device_count()`. The folklore 'set it before import torch or it is ignored' is wrong for current PyTorch, so this is information, not an error: on 29 real ML code bases (test/ecosystem, 14,504 files) every such write worked as written; the 22 writes with nothing unmeasured in between moved to preview on 2026-12-05 (23 findings, all noise, 1.6 per 1,000 files against the goal of 1), and the one behind `ray.util.queue` (a library with no known GPU code) with them.",
      example:
        'import os\nimport torch\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # GPU002: works, but one import away from GPU001\nx = torch.ones(4, device="cuda")\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\nx = torch.ones(4, device="cuda")\n',
      whenNotToCare:
        "When the value is only known after parsing arguments that need the framework. Better still: let the launcher set the variable (GPU Pilot's run command, `CUDA_VISIBLE_DEVICES=1 python train.py`).",
      references: [
        "ground-truth.md rows `import torch` only, `torch.manual_seed(0)`, `torch.cuda.device_count()`: effective",
        "ground-truth.md: 'Torch < 2.4 cached device_count() before initialisation'",
        catalogueSummary(),
      ],
    },
  },
  check(ctx) {
    // backend:cudaMallocAsync after the import does not "work while nothing initialises CUDA": it
    // crashes at the first CUDA use (GPU026 reports it).
    const async = new Set(asyncBackendWritesAfterImport(ctx.model).map((x) => x.write));
    for (const w of envWrites(ctx.model)) {
      if (async.has(w)) continue;
      // PYTORCH_NVML_BASED_CUDA_CHECK is read by every torch.cuda.is_available() call, not frozen at
      // import, so writing it after `import torch` is fine.
      if (
        !STARTUP_VARIABLES.includes(w.variable) ||
        w.form === "putenv" ||
        w.variable === "PYTORCH_NVML_BASED_CUDA_CHECK"
      )
        continue;
      const { frozenBy, firstImport } = stateBefore(ctx.model, w);
      if (frozenBy || !firstImport) continue;
      const line = ctx.where(firstImport.node.startPosition.row);
      // From the framework import itself: `from vllm import LLM` as the first one is a suspect too.
      const suspect = uncataloguedImportBetween(
        ctx.model,
        firstImport.node.startPosition.row - 1,
        w.range.start.line,
        ctx.libraryPins,
        ctx.project,
      );
      const why = afterImportWhy(ctx.where, firstImport, suspect, "this rule's documentation");
      ctx.report({
        range: w.range,
        message: `${w.variable} is set after \`${firstImport.node.text.split("\n")[0]}\` (${line})${why}; set it before the import`,
        related: [{ range: nodeRange(firstImport.node), message: `${firstImport.module} imported here` }],
        fix: moveWriteFix(ctx, w) ?? undefined,
        // Default only where an unmeasured GPU library (one that brings a framework) sits between the
        // import and the write; a write that works today, or that depends on a library of no known GPU
        // code, is hygiene (rules.md amendment 2026-12-05): preview. Ecosystem: test/ecosystem.
        preview: !suspect?.gpu,
      });
    }
  },
};
