import type { PythonRule } from "../rule";
import { nodeRange } from "../python/events";
import { fileVisibleDevices } from "./shared/fileVisible";

/** The vLLM entry points that take `tensor_parallel_size` (vLLM documentation, engine arguments). */
export const VLLM_TP_CALLS: readonly string[] = [
  "vllm.LLM",
  "vllm.EngineArgs",
  "vllm.AsyncEngineArgs",
  "vllm.engine.arg_utils.EngineArgs",
  "vllm.engine.arg_utils.AsyncEngineArgs",
];

/** GPU035: `LLM(tensor_parallel_size=N)` with N above the number of GPUs the file's CUDA_VISIBLE_DEVICES leaves. */
export const rule: PythonRule = {
  meta: {
    code: "GPU035",
    name: "vllm-tensor-parallel-exceeds-visible",
    severity: "error",
    fixable: false,
    // A CUDA_VISIBLE_DEVICES access and vLLM's `tensor_parallel_size` (the word parallel_size).
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]) && t.has("parallel_size"),
    docs: {
      what: "Finds vLLM's `LLM(...)`, `EngineArgs(...)` and `AsyncEngineArgs(...)` with a literal `tensor_parallel_size` (times a literal `pipeline_parallel_size`) larger than the number of GPUs that the same file puts in `CUDA_VISIBLE_DEVICES`.",
      follows:
        "The CUDA_VISIBLE_DEVICES value written before CUDA initialises by the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, and every vLLM `LLM`, `EngineArgs` and `AsyncEngineArgs` call in the file with literal sizes. Not followed: sizes held in variables or passed through `**kwargs`, writes in functions the module never calls, CUDA_VISIBLE_DEVICES set outside the file, and the other nodes of a Ray cluster (`distributed_executor_backend` is skipped).",
      why: "vLLM runs one worker per GPU of the tensor-parallel (and pipeline-parallel) group on a single node, and counts the GPUs it may use from `CUDA_VISIBLE_DEVICES`. With fewer visible GPUs than workers, it stops at start-up (vllm-project/vllm#25113, #22677, #5790: 'please set tensor_parallel_size to less than max local gpu count'), or, with a Ray cluster, waits for GPUs that never come. Documented, not measured here: vLLM is not run on the GPU machine this project measures on.",
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\nfrom vllm import LLM\n\nllm = LLM(model="facebook/opt-125m", tensor_parallel_size=4)  # GPU035: 2 GPUs visible\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"\nfrom vllm import LLM\n\nllm = LLM(model="facebook/opt-125m", tensor_parallel_size=4)\n',
      whenNotToCare:
        'When the engine runs on a multi-node Ray cluster (`distributed_executor_backend="ray"`) whose other nodes provide the remaining GPUs; the rule stays silent when that argument is given.',
      references: [
        "vllm-project/vllm#25113 and #22677: tensor_parallel_size larger than the GPUs CUDA_VISIBLE_DEVICES leaves",
        "vllm-project/vllm#5790: 'please set tensor_parallel_size to less than max local gpu count' ('this means the program can only see 1 GPU. please check your CUDA_VISIBLE_DEVICES')",
        "vLLM documentation, Parallelism and scaling: tensor_parallel_size is the number of GPUs per model replica",
      ],
    },
  },
  check(ctx) {
    const seen = fileVisibleDevices(ctx.model);
    if (!seen) return;
    const { value, count: k, write } = seen;
    for (const call of ctx.model.nodesOfType("call")) {
      const path = ctx.model.resolve(call.childForFieldName("function"));
      if (!path || !VLLM_TP_CALLS.includes(path)) continue;
      let tp: { n: number; node: ReturnType<typeof call.childForFieldName> } | null = null;
      let pp = 1;
      let unknown = false;
      for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
        if (a?.type === "dictionary_splat") unknown = true;
        if (a?.type !== "keyword_argument") continue;
        const name = a.childForFieldName("name")?.text;
        const v = a.childForFieldName("value");
        const n = v?.type === "integer" && /^[0-9]+$/.test(v.text) ? Number(v.text) : null;
        if (name === "distributed_executor_backend") unknown = true;
        if (name === "tensor_parallel_size") {
          if (n === null) unknown = true;
          else tp = { n, node: v };
        }
        if (name === "pipeline_parallel_size") {
          if (n === null) unknown = true;
          else pp = n;
        }
      }
      if (!tp || unknown || tp.n * pp <= k) continue;
      const need = tp.n * pp;
      ctx.report({
        range: nodeRange(tp.node!),
        message: `tensor_parallel_size=${tp.n}${pp > 1 ? ` with pipeline_parallel_size=${pp}` : ""} needs ${need} GPUs, but CUDA_VISIBLE_DEVICES="${value}" (${ctx.where(write.range.start.line)}) leaves ${k} GPU${k === 1 ? "" : "s"} visible: vLLM stops at start-up (vllm-project/vllm#5790, #25113, #22677)`,
        related: [{ range: write.range, message: `${k} GPU${k === 1 ? "" : "s"} made visible here` }],
      });
    }
  },
};
