import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { initEngine } from "../../../server/src/engine/lint";
import { lintNotebook } from "../../../server/src/engine/notebook";

fixtureTests("GPU016");

const C19 = 'import os\n\nos.environ["CUDA_MEMORY_LIMIT"] = "0.8"\nimport torch\n';

test("GPU016 is a warning on the write that names the real controls", async () => {
  const [d] = await lintCode(C19, "GPU016");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 39 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /No CUDA component reads CUDA_MEMORY_LIMIT/);
  assert.match(d.message, /torch\.cuda\.set_per_process_memory_fraction/);
  assert.match(d.message, /PYTORCH_CUDA_ALLOC_CONF/);
  assert.match(d.message, /memory_limit/);
  assert.equal(d.fix, undefined, "no variable does what CUDA_MEMORY_LIMIT is believed to do");
});

test("GPU016: CUDA_DEVICE can be rewritten as CUDA_VISIBLE_DEVICES when the file does not set that already", async () => {
  const src = 'import os\nos.environ["CUDA_DEVICE"] = "1"\nimport torch\n';
  const [d] = await lintCode(src, "GPU016");
  assert.equal(d.fix?.title, "Write CUDA_VISIBLE_DEVICES instead");
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n');
  assert.deepEqual(await lintCode(fixed, "GPU016"), []);
  const both = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ["CUDA_DEVICE"] = "1"\n';
  const [d2] = await lintCode(both, "GPU016");
  assert.equal(d2.fix, undefined, "a second CUDA_VISIBLE_DEVICES write would fight the first");
});

test("GPU016 reports %env and shell exports in notebooks too", async () => {
  await initEngine();
  const { diagnostics } = lintNotebook([
    { kind: "code", text: "%env CUDA_MEMORY_LIMIT=0.5\n!CUDA_DEVICE=1 python train.py" },
  ]);
  assert.deepEqual(
    diagnostics.filter((d) => d.code === "GPU016").map((d) => d.range.start.line),
    [0, 1],
  );
});

test("GPU016: GPU_DEVICE_ORDINAL in a file that also selects ROCm devices (ROCR/HIP_VISIBLE_DEVICES) is AMD code, not reported", async () => {
  const rocm =
    'import os\nos.environ["ROCR_VISIBLE_DEVICES"] = "0,1"\nos.environ["GPU_DEVICE_ORDINAL"] = "1"\nimport torch\n';
  assert.deepEqual(await lintCode(rocm, "GPU016"), []);
  const cuda = 'import os\nos.environ["GPU_DEVICE_ORDINAL"] = "1"\nimport torch\n';
  assert.equal((await lintCode(cuda, "GPU016")).length, 1);
});
