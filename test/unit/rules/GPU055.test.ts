import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";

manifestFixtureTests("GPU055", {});

test("GPU055: CUDA_VISIBLE_DEVICE before accelerate launch: warning on the name, with an unsafe rename", () => {
  const text = '#!/bin/bash\nCUDA_VISIBLE_DEVICE="6" accelerate launch --main_process_port 5432 train.py\n';
  const [d, ...rest] = lintManifestCode(text, "jobscript", "GPU055");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 19 } });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICE is not a variable that CUDA or the frameworks read: did you mean CUDA_VISIBLE_DEVICES? As written, the program gets a variable nobody reads, and sees the GPUs the caller's CUDA_VISIBLE_DEVICES leaves (every GPU when it has none)",
  );
  assert.equal(d.fix?.safe, false);
  const fixed = applyEdits(text, d.fix!.edits);
  assert.equal(fixed, text.replace("CUDA_VISIBLE_DEVICE=", "CUDA_VISIBLE_DEVICES="));
  assert.deepEqual(lintManifestCode(fixed, "jobscript", "GPU055"), []);
});

test("GPU055: a name cut short before a command (mmagic#1580); read back by the script, silent", () => {
  const text = "#!/bin/bash\nCUDA_VISIBLE=0 python tools/train.py configs/a.py\n";
  const [d, ...rest] = lintManifestCode(text, "jobscript", "GPU055");
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 12 } });
  assert.match(d.message, /^CUDA_VISIBLE is not a variable .* did you mean CUDA_VISIBLE_DEVICES\?/);
  assert.equal(applyEdits(text, d.fix!.edits), text.replace("CUDA_VISIBLE=", "CUDA_VISIBLE_DEVICES="));
  const own = '#!/bin/bash\nexport CUDA_VISIBLE=0\npython train.py --gpu "$CUDA_VISIBLE"\n';
  assert.deepEqual(lintManifestCode(own, "jobscript", "GPU055"), []);
});

test("GPU055: export, declare -x and env forms; a name the script reads back, a real variable or a right name is silent", () => {
  const lines = (text: string) => lintManifestCode(text, "jobscript", "GPU055").map((d) => d.range.start.character);
  assert.deepEqual(lines("export CUDA_VISIBLE_DEVICE=0\n"), [7]);
  assert.deepEqual(lines("declare -x cuda_visible_devices=0\n"), [11]);
  assert.deepEqual(lines("env -u X CUDA_VISBLE_DEVICES=1 python t.py\n"), [9]);
  assert.deepEqual(lines("export CUDA_VISIBLE_DEVICE\n"), [7]);
  for (const text of [
    "CUDA_VISIBLE_DEVICE=0\npython t.py --gpu $CUDA_VISIBLE_DEVICE\n",
    "export CUDA_VISIBLE_DEVICE=0\necho ${CUDA_VISIBLE_DEVICE}\n",
    "CUDA_HOME=/usr/local/cuda CUDA_LAUNCH_BLOCKING=1 python t.py\n",
    "export CUDA_VISIBLE_DEVICES=0 NCCL_DEBUG=INFO ROCR_VISIBLE_DEVICES=0\n",
    "python t.py CUDA_VISIBLE_DEVICE=0\n",
  ])
    assert.deepEqual(lines(text), [], text);
});
