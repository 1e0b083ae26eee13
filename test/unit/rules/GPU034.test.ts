import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU034");

test("GPU034 points at the decorator and at the first CUDA use, a vLLM engine in an actor", async () => {
  const [d] = await lintCode(
    'import ray\nfrom vllm import LLM\n\n@ray.remote\nclass Gen:\n    def __init__(self):\n        self.llm = LLM(model="m")\n\ng = Gen.remote()\n',
    "GPU034",
  );
  assert.equal(d.severity, "warning");
  assert.match(d.message, /The Ray actor `Gen` asks for no GPU .* uses CUDA at line 7 \(`LLM\(model="m"\)`\)/);
  assert.deepEqual(d.range.start, { line: 3, character: 0 });
  assert.deepEqual(d.related?.[0].range.start, { line: 6, character: 19 });
});

test("GPU034: a computed num_gpus, or RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES in the file, is not reported", async () => {
  assert.deepEqual(
    await lintCode(
      "import ray\nimport torch\nN = 1\n@ray.remote(num_gpus=N)\ndef f():\n    return torch.ones(1).cuda()\nf.remote()\n",
      "GPU034",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os, ray\nimport torch\nos.environ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"] = "1"\n@ray.remote\ndef f():\n    return torch.ones(1).cuda()\nf.remote()\n',
      "GPU034",
    ),
    [],
  );
});
