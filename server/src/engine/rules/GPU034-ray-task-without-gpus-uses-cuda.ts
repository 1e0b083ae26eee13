import type { PythonRule } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import { cudaUseIn, remoteDefinitions } from "../python/ray";
import { RAY_NOSET_CUDA } from "./GPU033-ray-task-sets-visible-devices";

/** GPU034: a Ray task or actor that asks for no GPU (`num_gpus` absent or 0) but puts work on CUDA. */
export const rule: PythonRule = {
  meta: {
    code: "GPU034",
    name: "ray-task-without-gpus-uses-cuda",
    severity: "warning",
    fixable: false,
    // `@ray.remote` needs `ray` imported.
    trigger: (t) => t.has("remote") && t.hasWord("ray"),
    docs: {
      what: 'Finds functions and classes decorated with `@ray.remote` without `num_gpus` (or with `num_gpus=0`) whose body puts work on a CUDA device: a `"cuda"`/`"cuda:N"` device argument, `.cuda()`, a `torch.cuda.*` call, or a vLLM `LLM(...)` engine. Only definitions the file itself starts (`Name.remote(...)`) are reported: one started from another module may get its GPUs there (`Name.options(num_gpus=1).remote()`). Bodies that ask `torch.cuda.is_available()` or `device_count()` first (and so handle the no-GPU case) are not reported, nor definitions whose resources `Name.options(...)` may change.',
      follows:
        "The bodies of the file's `@ray.remote` functions and classes, their `num_gpus`, and whether the file starts them itself (`Name.remote(...)`) or overrides their resources (`Name.options(...)`); a RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES write anywhere in the file turns the rule off. Not followed: CUDA used in functions the task calls that are defined outside its body, tasks started from other modules, tasks made with `ray.remote(fn)` rather than a decorator, and settings in the driver's environment.",
      why: "Ray gives a task or actor the GPUs it asks for with `num_gpus`, and the default is 0: Ray then sets `CUDA_VISIBLE_DEVICES` to an empty value in the worker (Ray documentation, 'Accelerator Support'; vllm-project/vllm#3198: 'When LLM engine is initialized in a ray actor with num_gpus=0, ray set its CUDA_VISIBLE_DEVICES to \"\"'), so torch sees no GPU and the first CUDA use raises 'No CUDA GPUs are available'. Processes the actor starts inherit the empty value, so vLLM workers spawned from it see no GPU either. Documented, not measured here: Ray is not run on the GPU machine this project measures on.",
      example:
        'import ray\nimport torch\n\n@ray.remote  # GPU034: no num_gpus, so Ray hides every GPU from this task\ndef embed(batch):\n    return torch.tensor(batch, device="cuda").sum().item()\n\nprint(ray.get(embed.remote([1.0, 2.0])))\n',
      fix: 'import ray\nimport torch\n\n@ray.remote(num_gpus=1)\ndef embed(batch):\n    return torch.tensor(batch, device="cuda").sum().item()\n\nprint(ray.get(embed.remote([1.0, 2.0])))\n',
      whenNotToCare:
        "When the Ray workers were started with `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1` (Ray then leaves the variable alone) or a placement group's bundle gives the GPUs; when the task only runs on a CPU-only cluster by design.",
      references: [
        "Ray documentation, Ray Core, Accelerator Support (docs.ray.io/en/latest/ray-core/scheduling/accelerators.html): tasks and actors request GPUs with num_gpus; Ray sets CUDA_VISIBLE_DEVICES to the GPUs it assigned",
        "vllm-project/vllm#3198: an LLM engine created in a Ray actor with num_gpus=0 finds no CUDA device (CUDA_VISIBLE_DEVICES='')",
      ],
    },
  },
  check(ctx) {
    const defs = remoteDefinitions(ctx.model);
    if (defs.length === 0) return;
    if (envWritesAnywhere(ctx.model).some((w) => w.variable === RAY_NOSET_CUDA)) return;
    for (const def of defs) {
      // Started only from other modules, it may get GPUs there (`.options(num_gpus=1)`).
      if (def.numGpus !== 0 || !def.startedHere) continue;
      const use = cudaUseIn(ctx.model, def.def);
      if (!use) continue;
      ctx.report({
        range: nodeRange(def.decorator),
        message: `The Ray ${def.kind} \`${def.name}\` asks for no GPU (num_gpus is 0, Ray's default), so Ray sets CUDA_VISIBLE_DEVICES="" in its worker (Ray documentation), but it uses CUDA at ${ctx.where(use.startPosition.row)} (\`${use.text.split("\n")[0].slice(0, 60)}\`): torch will find no GPU. Add num_gpus=1 (or the number it needs) to @ray.remote`,
        related: [{ range: nodeRange(use), message: "CUDA used here" }],
      });
    }
  },
};
