import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { stateBefore } from "../python/timeline";
import { nodeRange } from "../python/model";
import { moveWriteFix } from "./shared/moveWrite";
import { asyncBackendWritesAfterImport } from "./GPU026-alloc-backend-after-import";
import { importedModules, importsRunAtImport, NON_GPU_LIBRARIES, STDLIB_MODULES } from "../python/imports";
import { frameworkOfModule } from "../frameworks";
import { isCatalogued } from "../initCatalogue";
import type { ModuleModel } from "../python/model";
import type { SyntaxNode } from "../python/parser";

/**
 * The first import that runs between two lines of the module (0-based rows, both exclusive) of a
 * library that may initialise CUDA and that the catalogue does not know: not the standard library,
 * not a framework (measured lazy at import: ground-truth.md), not catalogued (initCatalogue.json,
 * whatever it says), not a library with no CUDA code ({@link NON_GPU_LIBRARIES}), not relative.
 * Top-level statements and the blocks that run with them (python/imports.ts `importsRunAtImport`).
 * @returns the module path and its import statement, or null.
 */
export function uncataloguedImportBetween(model: ModuleModel, afterRow: number, beforeRow: number): { module: string; node: SyntaxNode } | null {
  const between = model.tree.statements.filter((s) => s.startPosition.row > afterRow && s.startPosition.row < beforeRow);
  for (const stmt of importsRunAtImport(between)) {
    if (stmt.startPosition.row >= beforeRow) break;
    for (const module of importedModules(stmt)) {
      const top = module.split(".")[0];
      if (STDLIB_MODULES.has(top) || NON_GPU_LIBRARIES.has(top) || frameworkOfModule(module) || isCatalogued(module)) continue;
      return { module, node: stmt };
    }
  }
  return null;
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
    // An environment write of a startup variable, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(STARTUP_VARIABLES),
    docs: {
      what: "Finds a CUDA startup variable written after a framework (or a library that imports one) was imported, but before any call that initialised CUDA. The message says what the write depends on: where a library that may initialise CUDA and that the catalogue (docs/init-catalogue.md) does not know is imported between the framework import and the write (not the standard library, not a framework, not a catalogued library, not a library with no CUDA code), it names that import; otherwise it says the write works today and is one initialising import away from GPU001. A catalogued library that initialises at import makes the write GPU001. Reported in both cases (rules.md amendment 2026-12-05: hygiene, information).",
      why: "It still works today — measured on 2 x H200, torch 2.11: `CUDA_VISIBLE_DEVICES=\"1\"` set after `import torch`, after seeding or after `torch.cuda.device_count()` lands on physical GPU 1, because CUDA initialises lazily. But it is fragile: any module imported in between may initialise CUDA (torch 1.12.0 did so on import; `deepspeed` and `bitsandbytes` do: docs/init-catalogue.md), and torch < 2.4 cached `device_count()`. The folklore 'set it before import torch or it is ignored' is wrong for current PyTorch, so this is information, not an error: on 21 real ML code bases (test/ecosystem) every such write worked as written.",
      example: "import os\nimport torch\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"  # GPU002: works, but one import away from GPU001\nx = torch.ones(4, device=\"cuda\")\n",
      fix: "import os\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\nimport torch\n\nx = torch.ones(4, device=\"cuda\")\n",
      whenNotToCare: "When the value is only known after parsing arguments that need the framework. Better still: let the launcher set the variable (GPU Pilot's run command, `CUDA_VISIBLE_DEVICES=1 python train.py`).",
      references: [
        "ground-truth.md rows `import torch` only, `torch.manual_seed(0)`, `torch.cuda.device_count()`: effective",
        "ground-truth.md: 'Torch < 2.4 cached device_count() before initialisation'",
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
      if (!STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv" || w.variable === "PYTORCH_NVML_BASED_CUDA_CHECK") continue;
      const { frozenBy, firstImport } = stateBefore(ctx.model, w);
      if (frozenBy || !firstImport) continue;
      const line = ctx.where(firstImport.node.startPosition.row);
      const suspect = uncataloguedImportBetween(ctx.model, firstImport.node.endPosition.row, w.range.start.line);
      const why = suspect
        ? `: it works only if \`${suspect.module}\` (imported on ${ctx.where(suspect.node.startPosition.row)}) does not initialise CUDA; it is not in the catalogue of libraries that do (docs/init-catalogue.md)`
        : `: it works today (importing ${firstImport.module.split(".")[0]} leaves CUDA uninitialised, measured), but only while nothing initialises CUDA before the write`;
      ctx.report({
        range: w.range,
        message: `${w.variable} is set after \`${firstImport.node.text.split("\n")[0]}\` (${line})${why}; set it before the import`,
        related: [{ range: nodeRange(firstImport.node), message: `${firstImport.module} imported here` }],
        fix: moveWriteFix(ctx, w) ?? undefined,
      });
    }
  },
};
