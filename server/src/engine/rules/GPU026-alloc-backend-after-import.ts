import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { ALLOC_CONF_VARIABLES, selectsAsyncAllocator } from "../frameworks";
import { stateBefore } from "../python/timeline";
import { nodeRange, type EnvWriteEvent } from "../python/events";
import type { ModuleModel } from "../python/model";
import { moveWriteFix } from "./shared/moveWrite";

/**
 * The allocator-backend writes GPU026 reports: `PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_ALLOC_CONF` set
 * to a literal selecting `backend:cudaMallocAsync` after torch (or a library importing it) was
 * imported and before any call froze the allocator variables (after one, GPU001 reports it).
 * GPU002 leaves these writes to GPU026: they do not "work while nothing initialises CUDA".
 */
export function asyncBackendWritesAfterImport(
  model: ModuleModel,
): Array<{ write: EnvWriteEvent; importNode: EnvWriteEvent["statement"] & object; module: string }> {
  const out: Array<{ write: EnvWriteEvent; importNode: EnvWriteEvent["statement"] & object; module: string }> = [];
  for (const w of envWrites(model)) {
    if (
      !ALLOC_CONF_VARIABLES.includes(w.variable) ||
      w.form === "putenv" ||
      w.literal === null ||
      !selectsAsyncAllocator(w.literal)
    )
      continue;
    const { frozenBy, firstImport } = stateBefore(model, w);
    if (frozenBy || !firstImport || (firstImport.framework !== "torch" && !firstImport.eagerInit)) continue;
    out.push({ write: w, importNode: firstImport.node, module: firstImport.module });
  }
  return out;
}

/** GPU026: `backend:cudaMallocAsync` written after `import torch`: the first CUDA use crashes. */
export const rule: PythonRule = {
  meta: {
    code: "GPU026",
    name: "alloc-backend-after-import",
    severity: "error",
    fixable: true,
    fixSafety: "both",
    // An environment write of an allocator variable, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(ALLOC_CONF_VARIABLES),
    docs: {
      what: "Finds `PYTORCH_CUDA_ALLOC_CONF` or `PYTORCH_ALLOC_CONF` set to a value with `backend:cudaMallocAsync` after `import torch` (or a library that imports it), before anything initialised CUDA.",
      follows:
        "The PYTORCH_CUDA_ALLOC_CONF and PYTORCH_ALLOC_CONF writes of the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, each against the import of torch (or of a library that imports it) and the CUDA initialisations before it. Not followed: writes in functions the module never calls, a value held in a variable, and torch loaded by another module of the project.",
      why: 'torch reads the allocator backend twice: once when it loads (`import torch`) and again at the first CUDA use, and it insists they agree. Measured on 1 x H200 with torch 2.11 (docs/ground-truth.md, \'Allocator variables\'; verify/results-frameworks-h200.json): `os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"` after `import torch` — also after `torch.cuda.is_available()` or `device_count()` — makes the first CUDA tensor raise `RuntimeError: tokenizer[i] == get()->name() INTERNAL ASSERT FAILED ... Allocator backend parsed at runtime != allocator backend parsed at load time`; the same with the newer name `PYTORCH_ALLOC_CONF`. Other options (`expandable_segments:True`, ...) written at that point do apply; set before `import torch`, the async backend works. This is pytorch#104801, open since torch 2.0.',
      example:
        'import os\nimport torch\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"  # GPU026: the first CUDA use crashes\nx = torch.ones(4, device="cuda")\n',
      fix: 'import os\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"\nimport torch\n\nx = torch.ones(4, device="cuda")\n',
      whenNotToCare:
        "When the process never uses CUDA after the write (it only prepares the environment of a child process started with `subprocess`), or when the same backend was already in the environment when torch loaded (then the two readings agree).",
      references: [
        "docs/ground-truth.md, 'Freeze points and framework variables': `PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync` after import torch → raises INTERNAL ASSERT FAILED (torch 2.11.0+cu130)",
        "pytorch/pytorch#104801: 'Allocator backend parsed at runtime != allocator backend parsed at load time' when PYTORCH_CUDA_ALLOC_CONF is set after import",
        "PyTorch documentation, CUDA semantics: Using custom memory allocators / PYTORCH_CUDA_ALLOC_CONF backend option",
      ],
    },
  },
  check(ctx) {
    for (const { write, importNode, module } of asyncBackendWritesAfterImport(ctx.model)) {
      ctx.report({
        range: write.range,
        message: `${write.variable} selects backend:cudaMallocAsync after \`${importNode.text.split("\n")[0]}\` (${ctx.where(importNode.startPosition.row)}): torch read the allocator backend when it loaded, so the first CUDA use fails with "Allocator backend parsed at runtime != allocator backend parsed at load time" (measured, torch 2.11; pytorch#104801); set it before the import`,
        related: [
          { range: nodeRange(importNode), message: `${module} imported here: torch read the allocator backend` },
        ],
        fix: moveWriteFix(ctx, write) ?? undefined,
      });
    }
  },
};
