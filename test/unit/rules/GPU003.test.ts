import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../helpers";
import { fixtureTests } from "./fixtureCheck";
import { parseVisibleDevices } from "../../../server/src/engine/visibleDevices";

fixtureTests("GPU003");

test("parseVisibleDevices follows ground truth's parsing table", () => {
  assert.equal(parseVisibleDevices("1").count, 1);
  assert.equal(parseVisibleDevices("1,0").count, 2);
  assert.deepEqual(parseVisibleDevices("0, 1").kept.map((e) => e.index), [0, 1]);
  assert.equal(parseVisibleDevices(" 1").count, 1);
  assert.equal(parseVisibleDevices("0,0").hidesAll, true);
  assert.equal(parseVisibleDevices("").hidesAll, true);
  assert.equal(parseVisibleDevices("-1").hidesAll, true);
  assert.deepEqual(parseVisibleDevices("0,-1,1").kept.map((e) => e.text), ["0"]);
  assert.equal(parseVisibleDevices("GPU-6486822f-842c-1320-f829-e4155c0d2130").kept[0].kind, "uuid");
  assert.equal(parseVisibleDevices("GPU-6486822f").kept[0].kind, "uuid");
});

test("GPU003 int value: error with a fix to the string it means (\"1\", not str(1))", async () => {
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
  const [d] = await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "-1"\nimport torch\ntorch.cuda.init()\n', "GPU003");
  assert.equal(d.severity, "warning");
  assert.deepEqual(await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,-1"\n', "GPU003"), []);
});
