import type { PythonRule } from "../rule";
import { envWritesAnywhere } from "../python/model";
import type { EnvWriteEvent } from "../python/events";
import type { Framework } from "../frameworks";
import type { Fix, Range } from "../types";
import { nodeRange } from "../python/events";

/** One variable that folklore recommends but no CUDA component reads. */
export interface FolkloreVariable {
  /** What people expect it to do. */
  meant: string;
  /** The real controls, for the message. */
  instead: string;
  /** Only reported in files that use one of these frameworks (null: always). */
  onlyWith: readonly Framework[] | null;
  /** The startup variable a rename fix writes instead, when it has the same meaning. */
  renameTo: string | null;
}

/** The maintained list: name → what it is believed to do and what does it for real. */
export const FOLKLORE_VARIABLES: ReadonlyMap<string, FolkloreVariable> = new Map<string, FolkloreVariable>([
  [
    "CUDA_MEMORY_LIMIT",
    {
      meant: "cap the GPU memory the process may use",
      instead:
        "torch.cuda.set_per_process_memory_fraction(f) or PYTORCH_CUDA_ALLOC_CONF for PyTorch, tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=MB)]) for TensorFlow, XLA_CLIENT_MEM_FRACTION for JAX",
      onlyWith: null,
      renameTo: null,
    },
  ],
  [
    "CUDA_DEVICE",
    {
      meant: "pick the GPU",
      instead: 'CUDA_VISIBLE_DEVICES (set before CUDA starts) or an explicit torch.device("cuda:0")',
      onlyWith: null,
      renameTo: "CUDA_VISIBLE_DEVICES",
    },
  ],
  [
    "GPU_DEVICE_ORDINAL",
    {
      meant: "pick the GPU",
      instead: "CUDA_VISIBLE_DEVICES: GPU_DEVICE_ORDINAL is read by AMD's ROCm runtime, not by CUDA builds of PyTorch",
      onlyWith: ["torch"],
      renameTo: "CUDA_VISIBLE_DEVICES",
    },
  ],
]);

/** The folklore variables' names, for the text trigger. */
const FOLKLORE_NAMES: readonly string[] = [...FOLKLORE_VARIABLES.keys()];

/** GPU016: a write of a variable that folklore recommends but no CUDA component reads. */
export const rule: PythonRule = {
  meta: {
    code: "GPU016",
    name: "unknown-gpu-variable",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // An environment access naming one of the folklore variables (TextProbe.envWith).
    trigger: (t) => t.envWith(FOLKLORE_NAMES),
    docs: {
      what: "Finds writes of environment variables that are often recommended for GPU selection or memory limits but that no CUDA component reads: `CUDA_MEMORY_LIMIT`, `CUDA_DEVICE`, and `GPU_DEVICE_ORDINAL` in PyTorch code (an AMD ROCm variable). The message names the real control.",
      follows:
        "Every environment write in the file with a literal name (functions included) and a notebook's `%env` and `!export` lines, with the frameworks the file imports and its ROCm variables (which decide about `GPU_DEVICE_ORDINAL`). Not followed: variables set outside the file (shell scripts, manifests, other modules), and names built at run time.",
      why: "Nothing reads these names on a CUDA machine, so the write is silently ignored: the process still sees every GPU and may take all of their memory. The project's seed article recommends `CUDA_MEMORY_LIMIT`; ground-truth.md lists it among the claims that are wrong ('CUDA_MEMORY_LIMIT is not a variable any CUDA component reads'). The real controls are `torch.cuda.set_per_process_memory_fraction`, `PYTORCH_CUDA_ALLOC_CONF`, TensorFlow's `memory_limit` and JAX's `XLA_CLIENT_MEM_FRACTION` (formerly `XLA_PYTHON_CLIENT_MEM_FRACTION`) for memory, and CUDA_VISIBLE_DEVICES for the device.",
      example: 'import os\n\nos.environ["CUDA_MEMORY_LIMIT"] = "0.8"  # GPU016: nothing reads this\nimport torch\n',
      fix: "import torch\n\ntorch.cuda.set_per_process_memory_fraction(0.8)  # a real cap (it initialises CUDA)\n",
      whenNotToCare:
        "When your own code (or a cluster wrapper) reads the variable and acts on it; when the code also runs on AMD GPUs, where ROCm reads GPU_DEVICE_ORDINAL (a file that also writes ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES is taken to and is not reported).",
      references: [
        'seeds/README.md and ground-truth.md: "CUDA_MEMORY_LIMIT" is not a variable any CUDA component reads',
        "CUDA C Programming Guide, CUDA Environment Variables (the variables CUDA reads)",
        "PyTorch documentation: torch.cuda.set_per_process_memory_fraction; CUDA semantics, PYTORCH_CUDA_ALLOC_CONF",
        "ROCm documentation: GPU_DEVICE_ORDINAL (HIP/ROCm device selection)",
      ],
    },
  },
  check(ctx) {
    const writes = envWritesAnywhere(ctx.model);
    const setsVisible = writes.some((w) => w.variable === "CUDA_VISIBLE_DEVICES");
    // A file that also selects ROCm devices targets AMD GPUs, where the ROCm runtime reads GPU_DEVICE_ORDINAL (GPU031's sources).
    const rocm = writes.some((w) => w.variable === "ROCR_VISIBLE_DEVICES" || w.variable === "HIP_VISIBLE_DEVICES");
    const report = (variable: string, range: Range, w: EnvWriteEvent | null) => {
      const known = FOLKLORE_VARIABLES.get(variable);
      if (!known || (known.onlyWith && !known.onlyWith.some((f) => ctx.model.frameworks.has(f)))) return;
      if (rocm && variable === "GPU_DEVICE_ORDINAL") return;
      let fix: Fix | undefined;
      if (known.renameTo && !setsVisible && w?.nameNode?.type === "string") {
        const content = w.nameNode.namedChildren.filter((c) => c?.type === "string_content");
        if (content.length === 1 && content[0]!.text === variable) {
          fix = {
            title: `Write ${known.renameTo} instead`,
            edits: [{ range: nodeRange(content[0]!), newText: known.renameTo }],
            safe: false,
          };
        }
      }
      ctx.report({
        range,
        message: `No CUDA component reads ${variable}: setting it does not ${known.meant}. Use ${known.instead}`,
        ...(fix ? { fix } : {}),
      });
    };
    for (const w of writes) report(w.variable, w.range, w);
    for (const e of ctx.model.events) if (e.kind === "shellExport") report(e.variable, e.range, null);
  },
};
