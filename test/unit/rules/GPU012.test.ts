import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU012");

const C10 =
  'import tensorflow as tf\n\na = tf.constant([1.0, 2.0])\ngpus = tf.config.list_physical_devices("GPU")\nfor g in gpus:\n    tf.config.experimental.set_memory_growth(g, True)\n';
const C11 =
  'import tensorflow as tf\n\ngpus = tf.config.list_physical_devices("GPU")\nfor g in gpus:\n    tf.config.experimental.set_memory_growth(g, True)\na = tf.constant([1.0, 2.0])\n';

test("GPU012 sits on the config call, is an error and points at the initialising op", async () => {
  const [d] = await lintCode(C10, "GPU012");
  assert.deepEqual(d.range, { start: { line: 5, character: 4 }, end: { line: 5, character: 53 } });
  assert.equal(d.severity, "error");
  assert.match(
    d.message,
    /tf\.config\.experimental\.set_memory_growth\(\.\.\.\) runs after TensorFlow initialised its devices at `tf\.constant\(\[1\.0, 2\.0\]\)` \(line 3\)/,
  );
  assert.match(d.message, /cannot be modified after being initialized/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 2, character: 4 }, end: { line: 2, character: 27 } });
});

test("GPU012 fix moves the loop and the list it needs above the first op (c10 becomes c11)", async () => {
  const [d] = await lintCode(C10, "GPU012");
  assert.equal(d.fix?.title, "Move the device configuration above `a = tf.constant([1.0, 2.0])`");
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(C10, d);
  assert.equal(fixed, C11);
  assert.deepEqual(await lint(fixed), []);
});

test("GPU012 offers no fix when what the block needs initialises TensorFlow itself", async () => {
  const src =
    'import tensorflow as tf\nx = tf.constant(1)\ngpus = tf.config.list_logical_devices("GPU")\ntf.config.set_visible_devices(gpus[:1], "GPU")\n';
  const [d] = await lintCode(src, "GPU012");
  assert.ok(d);
  assert.equal(d.fix, undefined);
});

test("GPU012 follows the timeline into called functions, and ignores functions never called", async () => {
  const called =
    'import tensorflow as tf\n\n\ndef setup():\n    tf.config.set_visible_devices([], "GPU")\n\n\nx = tf.ones(2)\nsetup()\n';
  const [d] = await lintCode(called, "GPU012");
  assert.equal(d.range.start.line, 4);
  assert.equal(d.fix, undefined, "a function body is not moved");
  const never =
    'import tensorflow as tf\n\n\ndef setup():\n    tf.config.set_visible_devices([], "GPU")\n\n\nx = tf.ones(2)\n';
  assert.deepEqual(await lintCode(never, "GPU012"), []);
});

test("GPU012 partial memory growth is a warning; a loop or a restricted visibility is fine", async () => {
  const src =
    'import tensorflow as tf\ngpus = tf.config.list_physical_devices("GPU")\ntf.config.experimental.set_memory_growth(gpus[0], True)\n';
  const [d] = await lintCode(src, "GPU012");
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 55 } });
  assert.match(d.message, /Memory growth cannot differ between GPU devices/);
  assert.deepEqual(await lintCode(C11, "GPU012"), []);
});
