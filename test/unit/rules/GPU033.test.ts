import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU033");

test("GPU033 names the task, its num_gpus and the decorator", async () => {
  const [d] = await lintCode(
    'import os\nfrom ray import remote\n\n@remote(num_gpus=2)\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n\nf.remote()\n',
    "GPU033",
  );
  assert.equal(d.severity, "warning");
  assert.match(d.message, /inside the Ray task `f`: Ray already set CUDA_VISIBLE_DEVICES for it from num_gpus=2/);
  assert.deepEqual(d.related?.[0].range.start, { line: 3, character: 0 });
  // Started from another module only: the num_gpus it runs with is not known here.
  const [e] = await lintCode(
    'import os\nimport ray\n\n@ray.remote(num_gpus=0)\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "GPU033",
  );
  assert.match(e.message, /from its num_gpus \(Ray documentation, Accelerator Support\); this value/);
});

test("GPU033: a function that is not a Ray task, and @ray.remote of another module named ray, are not reported", async () => {
  assert.deepEqual(
    await lintCode(
      'import os\nimport ray\n\n@ray.method\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
      "GPU033",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nimport myray as ray\n\n@ray.remote\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
      "GPU033",
    ),
    [],
  );
});
