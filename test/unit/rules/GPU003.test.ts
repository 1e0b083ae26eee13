import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { parseVisibleDevices } from "../../../server/src/engine/visibleDevices";

fixtureTests("GPU003");

test("parseVisibleDevices follows ground truth's parsing table", () => {
  assert.equal(parseVisibleDevices("1").count, 1);
  assert.equal(parseVisibleDevices("1,0").count, 2);
  assert.deepEqual(
    parseVisibleDevices("0, 1").kept.map((e) => e.index),
    [0, 1],
  );
  assert.equal(parseVisibleDevices(" 1").count, 1);
  assert.equal(parseVisibleDevices("0,0").hidesAll, true);
  assert.equal(parseVisibleDevices("").hidesAll, true);
  assert.equal(parseVisibleDevices("-1").hidesAll, true);
  assert.deepEqual(
    parseVisibleDevices("0,-1,1").kept.map((e) => e.text),
    ["0"],
  );
  assert.equal(parseVisibleDevices("GPU-6486822f-842c-1320-f829-e4155c0d2130").kept[0].kind, "uuid");
  assert.equal(parseVisibleDevices("GPU-6486822f").kept[0].kind, "uuid");
});

test('GPU003 int value: error with a fix to the string it means ("1", not str(1))', async () => {
  const src = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = 1\nimport torch\n';
  const [d] = await lintCode(src, "GPU003");
  assert.equal(d.severity, "error");
  assert.equal(d.range.start.line, 2);
  assert.match(d.message, /TypeError/);
  assert.equal(applyFix(src, d), 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n');
});

test("GPU003 list value: a literal list becomes its string", async () => {
  const src = 'import os\nids = [0, 1]\nos.environ["CUDA_VISIBLE_DEVICES"] = (0, 1)\n';
  const [d] = await lintCode(src, "GPU003");
  assert.equal(applyFix(src, d), 'import os\nids = [0, 1]\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n');
});

test("GPU003 duplicate: drops it", async () => {
  const src = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,0,1"\n';
  const [d] = await lintCode(src, "GPU003");
  assert.match(d.message, /repeats id 1/);
  assert.equal(applyFix(src, d), 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,0"\n');
});

test("GPU003 hidden-all before CUDA use is a warning; trailing negative id alone is not reported", async () => {
  const [d] = await lintCode(
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "-1"\nimport torch\ntorch.cuda.init()\n',
    "GPU003",
  );
  assert.equal(d.severity, "warning");
  assert.deepEqual(await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,-1"\n', "GPU003"), []);
});

// Issue 21: measured on 1 x H200, torch 2.11 (verify/results-frameworks-h200.json): "[0, 1]" → 0 devices, "1,1" → 0.
test('GPU003: str() of an nargs list gives "[0, 1]": every GPU hidden; the fix joins the ids', async () => {
  const src =
    'import argparse, os\np = argparse.ArgumentParser()\np.add_argument("--gpus", type=int, nargs="+")\nargs = p.parse_args()\nos.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpus)\n';
  const [d] = await lintCode(src, "GPU003");
  assert.equal(d.severity, "error");
  assert.match(d.message, /str\(args\.gpus\), the text of a list/);
  assert.match(d.message, /"\[0, 1\]" → 0 devices/);
  assert.equal(d.fix?.title, 'Join the ids: ",".join(map(str, args.gpus))');
  const fixed = applyFix(src, d);
  assert.match(fixed, /= ",".join\(map\(str, args\.gpus\)\)\n$/);
  assert.deepEqual(await lintCode(fixed, "GPU003"), []);
});

test("GPU003: a computed join is checked like the literal it makes", async () => {
  const [d] = await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, [1, 1]))\n', "GPU003");
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES=",".join(map(str, [1, 1])) (= "1,1") repeats id 1: a duplicate hides every GPU (0 devices; the first CUDA use raises)',
  );
  assert.equal(d.fix, undefined, "no text edit for a computed value");
});

test('GPU003: the literal "[0, 1]" hides every GPU', async () => {
  const [d] = await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "[0, 1]"\n', "GPU003");
  assert.match(d.message, /malformed id "\[0": CUDA stops parsing there, so no GPU is visible/);
});

// Ecosystem (bigscience-workshop/bigscience, a TensorBoard event rewriter): CUDA_VISIBLE_DEVICES=""
// to keep TensorFlow off the GPU, then TensorFlow ops. TensorFlow with no visible GPU places its ops
// on the CPU and runs (its GPU guide: ops run on the CPU when no GPU is visible); only code that
// needs CUDA (torch .cuda(), cupy, numba.cuda) fails.
test("GPU003 hide-all: TensorFlow or JAX work after it runs on the CPU and is not reported", async () => {
  const tf =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = ""\nimport tensorflow as tf\nfor rec in tf.data.TFRecordDataset(["events"]):\n    print(rec)\n';
  assert.deepEqual(await lintCode(tf, "GPU003"), []);
  const jax = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "-1"\nimport jax\nprint(jax.devices())\n';
  assert.deepEqual(await lintCode(jax, "GPU003"), []);
  const torch =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = ""\nimport tensorflow as tf\nimport torch\nx = torch.zeros(2).cuda()\n';
  const [d] = await lintCode(torch, "GPU003");
  assert.equal(d?.range.start.line, 1);
  assert.match(d.message, /hides every GPU/);
});
