import type { PythonRule, RuleContext } from "../rule";
import { snippet } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import { inside, remoteDefinitions } from "../python/ray";
import type { SyntaxNode } from "../python/parser";
import { calleePath } from "./shared/py";

/**
 * Whether `statement` runs only where a condition asked about RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES:
 * it lies in the body of an `if`/`elif` whose condition calls a function of this file, or of a
 * project module, whose source names the variable (OpenRLHF's `elif ray_noset_visible_devices():`
 * in a helper module that checks Ray's NOSET variables). The else branch of such a test is not
 * guarded (there Ray did set the variable).
 */
function guardedByNoset(ctx: RuleContext, statement: SyntaxNode): boolean {
  for (let child = statement, p = statement.parent; p; child = p, p = p.parent) {
    if (p.type !== "if_statement" && p.type !== "elif_clause") continue;
    if (p.childForFieldName("consequence")?.id !== child.id) continue;
    const condition = p.childForFieldName("condition");
    const calls = condition
      ? [condition, ...condition.descendantsOfType("call")].filter((n): n is SyntaxNode => n?.type === "call")
      : [];
    for (const call of calls) {
      const fn = call.childForFieldName("function");
      const own = fn?.type === "identifier" ? ctx.model.functions.get(fn.text) : undefined;
      if (own) {
        if (own.text.includes(RAY_NOSET_CUDA)) return true;
        continue;
      }
      const path = calleePath(ctx.model, call);
      if (path && ctx.project?.callableModuleMentions?.(path, RAY_NOSET_CUDA)) return true;
    }
  }
  return false;
}

/** The variable that turns off Ray's own CUDA_VISIBLE_DEVICES (Ray's source: ray_constants.py, NOSET_CUDA_VISIBLE_DEVICES_ENV_VAR). */
export const RAY_NOSET_CUDA = "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES";

/**
 * GPU033: CUDA_VISIBLE_DEVICES written inside a Ray task or actor (`@ray.remote`), where Ray
 * already set it from `num_gpus`; or RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES written inside one,
 * where it is too late to change what Ray did for that worker.
 */
export const rule: PythonRule = {
  meta: {
    code: "GPU033",
    name: "ray-task-sets-visible-devices",
    severity: "warning",
    fixable: false,
    // `@ray.remote` needs `ray` imported, and the task writes CUDA_VISIBLE_DEVICES (or Ray's opt-out).
    trigger: (t) =>
      t.has("remote") &&
      t.hasWord("ray") &&
      t.envWith(["CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: "Finds `CUDA_VISIBLE_DEVICES` written in the body of a function or class decorated with `@ray.remote` (a Ray task or actor), when the file does not set `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES`; and `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES` written inside such a body.",
      follows:
        "The bodies of the file's `@ray.remote` functions and classes (their methods and nested functions included), for writes of CUDA_VISIBLE_DEVICES and RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES, and the file's writes and reads of the latter outside them; a write in the branch of an `if`/`elif` whose condition calls a function of the file whose body names RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES, or a function of a project module whose source names it (a helper that checks Ray's NOSET variables, as OpenRLHF's `ray_noset_visible_devices()`), is taken as guarded and not reported (its else branch is). Not followed: functions a task calls that are defined outside its body, tasks made with `ray.remote(fn)` rather than a decorator, and settings in the driver's environment, a `runtime_env` or other modules.",
      why: "Ray assigns GPUs to a task or actor from its `num_gpus` and sets `CUDA_VISIBLE_DEVICES` in the worker to the ids of the GPUs it assigned, before the task runs (Ray documentation, 'Accelerator Support'; `ray.get_gpu_ids()` returns them). A task that writes its own value picks GPUs that Ray may have given to another task or actor on the same node, so two workers share one GPU while another idles, and Ray's accounting no longer says where work runs; with `num_gpus=0` Ray set the variable to an empty string and, in a reused worker where CUDA already started, a new value has no effect at all (vllm-project/vllm#3198). `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES` is read by Ray when it starts a worker; written inside the task it changes nothing for that worker. Documented, not measured here: Ray is not run on the GPU machine this project measures on.",
      example:
        'import os\nimport ray\n\n@ray.remote(num_gpus=1)\ndef train(rank):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)  # GPU033: Ray already chose this task\'s GPU\n    import torch\n    return torch.ones(1, device="cuda").item()\n',
      fix: 'import ray\n\n@ray.remote(num_gpus=1)\ndef train(rank):\n    import torch  # cuda:0 is the GPU Ray assigned (ray.get_gpu_ids())\n    return torch.ones(1, device="cuda").item()\n',
      whenNotToCare:
        "When the process that runs the Ray workers was started with `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1` (set outside this file, e.g. in `runtime_env` or the `ray start` environment) and the task deliberately manages its own GPUs, as vLLM's data-parallel engine actors do.",
      references: [
        "Ray documentation, Ray Core, Accelerator Support (docs.ray.io/en/latest/ray-core/scheduling/accelerators.html): Ray sets CUDA_VISIBLE_DEVICES for each task or actor to the GPUs it reserved for it",
        "Ray documentation, ray.get_gpu_ids: the ids of the GPUs available to the worker",
        "vllm-project/vllm#3198: in an actor with num_gpus=0 Ray sets CUDA_VISIBLE_DEVICES to '', and later writes are ignored once torch has looked",
        "vLLM source, vllm/v1/engine/core.py (DPEngineCoreActor): 'Ray sets CUDA_VISIBLE_DEVICES based on num_gpus configuration. To bypass, we need to also set RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES'",
      ],
    },
  },
  check(ctx) {
    const defs = remoteDefinitions(ctx.model);
    if (defs.length === 0) return;
    const writes = envWritesAnywhere(ctx.model);
    const inTask = (n: SyntaxNode) => defs.some((d) => inside(n, d.def));
    // Ray told (outside the tasks) not to set the variable: a task that sets it does so by design.
    const noset =
      writes.some((w) => w.variable === RAY_NOSET_CUDA && !(w.statement && inTask(w.statement))) ||
      ctx.model.events.some((e) => e.kind === "envRead" && e.variable === RAY_NOSET_CUDA);
    for (const w of writes) {
      if (!w.statement || (w.variable !== "CUDA_VISIBLE_DEVICES" && w.variable !== RAY_NOSET_CUDA)) continue;
      const def = defs.find((d) => inside(w.statement!, d.def));
      if (!def) continue;
      const what = `${def.kind === "actor" ? "actor" : "task"} \`${def.name}\``;
      if (w.variable === RAY_NOSET_CUDA) {
        ctx.report({
          range: w.range,
          message: `${RAY_NOSET_CUDA} is written inside the Ray ${what}: Ray reads it when it starts a worker, so for this worker it already set CUDA_VISIBLE_DEVICES (Ray documentation); set it in the driver's environment or runtime_env instead`,
          related: [{ range: nodeRange(def.decorator), message: "Ray task or actor declared here" }],
        });
        continue;
      }
      if (noset || guardedByNoset(ctx, w.statement)) continue;
      const known = def.numGpus !== null && def.startedHere;
      const gpus = known ? `num_gpus=${def.numGpus}` : "its num_gpus";
      ctx.report({
        range: w.range,
        message: `\`${snippet(w.statement)}\` inside the Ray ${what}: Ray already set CUDA_VISIBLE_DEVICES for it from ${gpus} (Ray documentation, Accelerator Support)${known && def.numGpus === 0 ? ", to an empty value" : ""}; this value can select GPUs Ray gave to another task; ask for GPUs with num_gpus and use cuda:0, the first GPU Ray assigned`,
        related: [{ range: nodeRange(def.decorator), message: `Ray reserves GPUs for this ${def.kind} here` }],
      });
    }
  },
};
