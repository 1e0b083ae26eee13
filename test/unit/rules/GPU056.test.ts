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

test('GPU056: LLM(device="cuda:3") unpinned is a warning on the device value: current vLLM rejects the keyword, and only 0.7.3 to 0.8.x honoured it', async () => {
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
    "With the vLLM an unpinned install gets (0.10 or later), device=\"cuda:3\" does not place this engine on GPU 3 alone: 0.10 and later no longer take device=: LLM(...) raises TypeError (unexpected keyword argument 'device', vllm-project/vllm#21349). Only vLLM 0.7.3 to 0.8.x place a one-GPU engine on GPU 3 (vllm-project/vllm#13027). Choose the GPU with CUDA_VISIBLE_DEVICES=3 in the environment that starts the program, and drop device=",
  );
});

test("GPU056: the project's vLLM pin decides: silent where every admitted release honours the index, each other release's behaviour said", async () => {
  const code = 'import vllm\nargs = vllm.EngineArgs(model="m", device="cuda:1")\n';
  const withPin = async (vllm: string) => lintCode(code, "GPU056", { ...PREVIEW, libraryPins: { vllm } });
  assert.deepEqual(await withPin("==0.8.4"), [], "0.7.3 to 0.8.x put a one-GPU engine on GPU 1");
  assert.deepEqual(await withPin(">=0.7.3,<0.9"), []);
  const [old] = await withPin("==0.6.3");
  assert.match(
    old.message,
    /^With the pinned vllm==0\.6\.3, .*before 0\.7\.3 the weights follow device= while the worker binds cuda:\{local rank\} \(cuda:0\)/,
  );
  assert.doesNotMatch(old.message, /TypeError|Only vLLM 0\.7\.3/);
  const [ignored] = await withPin("==0.9.2");
  assert.match(ignored.message, /0\.9 ignores device=.*runs on the first visible GPU, not GPU 1/);
  const [removed] = await withPin(">=0.10");
  assert.match(removed.message, /EngineArgs\(\.\.\.\) raises TypeError/);
  const [wide] = await withPin(">=0.8");
  assert.match(
    wide.message,
    /0\.9 ignores.*; 0\.10 and later.*\. Only vLLM 0\.7\.3 to 0\.8\.x place a one-GPU engine on GPU 1/,
  );
  const [unreadable] = await withPin("latest");
  assert.match(unreadable.message, /^With the vLLM an unpinned install gets/, "an unreadable pin reads as none");
});

test("GPU056: torch.device forms and a bound name are read; a device type, cuda:0, an unknown value or another library's call are not", async () => {
  const found = async (code: string) => (await lintCode(code, "GPU056", PREVIEW)).map((d) => d.range.start.line);
  assert.deepEqual(await found('import torch, vllm\nvllm.EngineArgs(model="m", device=torch.device("cuda:2"))\n'), [1]);
  assert.deepEqual(await found('from vllm import LLM\nd = "cuda:1"\nLLM("m", device=d)\n'), [2]);
  assert.deepEqual(await found('from vllm import LLM\nLLM("m", device="cuda")\nLLM("m", device="cuda:0")\n'), []);
  assert.deepEqual(await found('from vllm import LLM\ndef f(d):\n    return LLM("m", device=d)\n'), []);
  assert.deepEqual(await found('from transformers import pipeline\npipeline("x", device="cuda:1")  # vllm\n'), []);
});
