import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU056");

/** GPU056 is in the preview set (its precision is not measured). */
const PREVIEW = { preview: true };

test("GPU056 is a preview rule: off by default", async () => {
  assert.deepEqual(await lintCode('from vllm import LLM\nLLM("m", device="cuda:3")\n', "GPU056"), []);
});

test('GPU056: LLM(device="cuda:3") is a warning on the device value, naming the GPU, the worker\'s binding and CUDA_VISIBLE_DEVICES', async () => {
  const [d, ...rest] = await lintCode(
    'from vllm import LLM\n\nllm = LLM(model="m", device="cuda:3")\n',
    "GPU056",
    PREVIEW,
  );
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 28 }, end: { line: 2, character: 36 } });
  assert.equal(
    d.message,
    "vLLM reads only the device type from device=: its worker binds cuda:{local rank}, the first visible GPU for a one-GPU engine, so this engine does not run on GPU 3. Choose the GPU with CUDA_VISIBLE_DEVICES=3 in the environment that starts the program, and drop device=",
  );
});

test("GPU056: torch.device forms and a bound name are read; a device type, cuda:0, an unknown value or another library's call are not", async () => {
  const found = async (code: string) => (await lintCode(code, "GPU056", PREVIEW)).map((d) => d.range.start.line);
  assert.deepEqual(await found('import torch, vllm\nvllm.EngineArgs(model="m", device=torch.device("cuda:2"))\n'), [1]);
  assert.deepEqual(await found('from vllm import LLM\nd = "cuda:1"\nLLM("m", device=d)\n'), [2]);
  assert.deepEqual(await found('from vllm import LLM\nLLM("m", device="cuda")\nLLM("m", device="cuda:0")\n'), []);
  assert.deepEqual(await found('from vllm import LLM\ndef f(d):\n    return LLM("m", device=d)\n'), []);
  assert.deepEqual(await found('from transformers import pipeline\npipeline("x", device="cuda:1")  # vllm\n'), []);
});
