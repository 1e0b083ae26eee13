import type { Rule } from "../rule";
import { envWrites } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { stateBefore } from "../python/timeline";
import { nodeRange } from "../python/model";
import { moveWriteFix } from "./shared/moveWrite";
import { asyncBackendWritesAfterImport } from "./GPU026-alloc-backend-after-import";

/** GPU002: a startup variable written after a framework import, before any initialising call. */
export const rule: Rule = {
  meta: {
    code: "GPU002",
    name: "env-after-framework-import",
    // Information: the program works as written (nothing has initialised CUDA yet); the write is
    // fragile, not wrong. On the ecosystem corpus every finding was of this kind (test/ecosystem).
    severity: "information",
    fixable: true,
    docs: {
      what: "Finds a CUDA startup variable written after a framework (or a library that imports one) was imported, but before any call that initialised CUDA.",
      why: "It still works today — measured on 2 x H200, torch 2.11: `CUDA_VISIBLE_DEVICES=\"1\"` set after `import torch`, after seeding or after `torch.cuda.device_count()` lands on physical GPU 1, because CUDA initialises lazily. But it is fragile: any module imported in between may initialise CUDA (torch 1.12.0 did so on import; `flash_attn`, `deepspeed` do), and torch < 2.4 cached `device_count()`. The folklore 'set it before import torch or it is ignored' is wrong for current PyTorch, so this is information, not an error: on 21 real ML code bases (test/ecosystem) every such write worked as written.",
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
      // import (issue 16, pattern 10), so writing it after `import torch` is fine.
      if (!STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv" || w.variable === "PYTORCH_NVML_BASED_CUDA_CHECK") continue;
      const { frozenBy, firstImport } = stateBefore(ctx.model, w);
      if (frozenBy || !firstImport) continue;
      const line = ctx.where(firstImport.node.startPosition.row);
      ctx.report({
        range: w.range,
        message: `${w.variable} is set after \`${firstImport.node.text.split("\n")[0]}\` (${line}): it works only while nothing initialises CUDA first; set it before the import`,
        related: [{ range: nodeRange(firstImport.node), message: `${firstImport.module} imported here` }],
        fix: moveWriteFix(ctx, w) ?? undefined,
      });
    }
  },
};
