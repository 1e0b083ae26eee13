import assert from "node:assert/strict";
import { test } from "node:test";
import { applyFix, lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU061");

const PREVIEW = { preview: true };

const ACTOR = "@ray.remote(num_gpus=1)\nclass Learner:\n    def step(self):\n        return 1\n\n\n";

test("GPU061: ray.init's runtime_env copying os.environ, in a file with a GPU actor: a warning on the copy, the actor's request related, an unsafe fix that leaves the masks out", async () => {
  const src = `import os\nimport ray\n\n\n${ACTOR}ray.init(runtime_env={"env_vars": dict(os.environ)})\n`;
  const [d, ...rest] = await lintCode(src, "GPU061", PREVIEW);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 10, character: 34 }, end: { line: 10, character: 50 } });
  assert.equal(
    d.message,
    "ray.init's runtime_env gives every worker of the job a copy of this process's environment (`dict(os.environ)`), so a CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES on AMD) set for the driver is set in each worker: Ray maps the GPUs it assigns a task or actor through the list the worker starts with (ray.get_gpu_ids: a subset of the IDs in CUDA_VISIBLE_DEVICES), so on a node whose Ray sees other GPUs than the driver does, a GPU task or actor runs on a GPU Ray gave another one or dies at start (IndexError in Ray's accelerator-id lookup, measured with Ray 2.58); leave the GPU masks out of the copy",
  );
  assert.deepEqual(
    d.related?.map((r) => [r.range.start.line, r.range.start.character, r.message]),
    [[4, 12, "the job asks Ray for GPUs here"]],
  );
  assert.equal(d.fix?.safe, false);
  assert.equal(
    applyFix(src, d).split("\n")[10],
    'ray.init(runtime_env={"env_vars": {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")}})',
  );
  // The fixed text is not reported again.
  assert.deepEqual(await lintCode(applyFix(src, d), "GPU061", PREVIEW), []);
});

test("GPU061: a copy made through names is reported at the runtime_env argument, the copy related, with no fix", async () => {
  const src = `import os\nimport ray\n\n\n${ACTOR}def main():\n    env = os.environ.copy()\n    env["NCCL_DEBUG"] = "WARN"\n    ray.init(address="auto", runtime_env={"env_vars": env})\n`;
  const [d] = await lintCode(src, "GPU061", PREVIEW);
  assert.deepEqual(d.range.start, { line: 13, character: 41 });
  assert.match(d.message, /a copy of this process's environment \(`os\.environ\.copy\(\)`\)/);
  assert.deepEqual(
    d.related?.map((r) => [r.range.start.line, r.message]),
    [
      [11, "the environment is copied here"],
      [4, "the job asks Ray for GPUs here"],
    ],
  );
  assert.equal(d.fix, undefined);
});

test("GPU061: a GPU actor's own runtime_env names the actor and its num_gpus; the fix rewrites only the os.environ of a spread", async () => {
  const src = `import os\nimport ray\n\n\n${ACTOR}a = Learner.options(runtime_env={"env_vars": {**os.environ, "A": "1"}}).remote()\n`;
  const [d] = await lintCode(src, "GPU061", PREVIEW);
  assert.match(d.message, /^The runtime_env of this GPU actor \(num_gpus=1\) gives its workers a copy/);
  assert.deepEqual(
    d.related?.map((r) => r.message),
    ["Ray assigns GPUs to it here"],
  );
  assert.match(applyFix(src, d), /\{\*\*\{k: v for k, v in os\.environ\.items\(\) if k not in \(.*\)\}, "A": "1"\}/);
});

test("GPU061: silent where the masks may be gone, the value is not seen, no GPU is asked for, or ray.init starts its own cluster", async () => {
  const silent = [
    // filtered comprehension
    `import os\nimport ray\n${ACTOR}ray.init(runtime_env={"env_vars": {k: v for k, v in os.environ.items() if not k.endswith("_DEVICES")}})\n`,
    // popped before
    `import os\nimport ray\n${ACTOR}env = dict(os.environ)\nenv.pop("ROCR_VISIBLE_DEVICES")\nray.init(runtime_env={"env_vars": env})\n`,
    // a mask set on purpose
    `import os\nimport ray\n${ACTOR}env = dict(os.environ)\nenv["CUDA_VISIBLE_DEVICES"] = "0"\nray.init(runtime_env={"env_vars": env})\n`,
    // a parameter
    `import os\nimport ray\n${ACTOR}def start(env):\n    ray.init(runtime_env={"env_vars": env})\n`,
    // a local cluster
    `import os\nimport ray\n${ACTOR}ray.init(num_gpus=4, runtime_env={"env_vars": dict(os.environ)})\n`,
    // no GPU anywhere
    'import os\nimport ray\nray.init(runtime_env={"env_vars": dict(os.environ)})\n',
    // an actor asking for no GPU
    `import os\nimport ray\n${ACTOR}Learner.options(num_gpus=0, runtime_env={"env_vars": dict(os.environ)}).remote()\n`,
    // not Ray's
    'import os\nimport myray as ray\n\n@ray.remote(num_gpus=1, runtime_env={"env_vars": dict(os.environ)})\ndef f():\n    pass\n',
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU061", PREVIEW), [], src);
});

test("GPU061 is a preview rule: nothing without preview", async () => {
  const src = `import os\nimport ray\n\n\n${ACTOR}ray.init(runtime_env={"env_vars": dict(os.environ)})\n`;
  assert.deepEqual(await lintCode(src, "GPU061"), []);
  assert.equal((await lintCode(src, "GPU061", PREVIEW)).length, 1);
});

test("GPU061: ray.init(address='local') starts its own cluster; a num_gpus given to another library's call is no GPU request to Ray", async () => {
  const silent = [
    `import os\nimport ray\n${ACTOR}ray.init(address="local", runtime_env={"env_vars": dict(os.environ)})\n`,
    'import os\nimport ray\nfrom perf import mfu\nray.init(runtime_env={"env_vars": dict(os.environ)})\nprint(mfu(tokens=1, num_gpus=8))\n',
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU061", PREVIEW), [], src);
  // A copy spread from dict(os.environ) into RuntimeEnv's env_vars, for an actor that asks for a GPU.
  const spread = `import os\nimport ray\nfrom ray.runtime_env import RuntimeEnv\n${ACTOR}Learner.options(num_gpus=1, runtime_env=RuntimeEnv(env_vars={**dict(os.environ), "A": "1"})).remote()\n`;
  const [d] = await lintCode(spread, "GPU061", PREVIEW);
  assert.match(d.message, /\(`\{\*\*dict\(os\.environ\), "A": "1"\}`\)/);
});
