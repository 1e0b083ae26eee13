import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU035");

test("GPU035 is an error on the tensor_parallel_size value, naming the visible count", async () => {
  const [d] = await lintCode(
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\nimport vllm\nllm = vllm.LLM("m", tensor_parallel_size=2)\n',
    "GPU035",
  );
  assert.equal(d.severity, "error");
  assert.match(
    d.message,
    /tensor_parallel_size=2 needs 2 GPUs, but CUDA_VISIBLE_DEVICES="3" \(line 2\) leaves 1 GPU visible/,
  );
  assert.deepEqual(d.range.start, { line: 3, character: 41 });
});

test("GPU035: a computed tensor_parallel_size, **kwargs, or a write after CUDA started is not reported", async () => {
  assert.deepEqual(
    await lintCode(
      'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nfrom vllm import LLM\nn = 4\nLLM("m", tensor_parallel_size=n)\nLLM("m", tensor_parallel_size=4, **kw)\n',
      "GPU035",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nfrom vllm import LLM\nLLM("m", tensor_parallel_size=4)\n',
      "GPU035",
    ),
    [],
  );
});
