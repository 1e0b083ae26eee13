import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

/** Preview on: these tests document every check of the rule, preview ones too (ecosystemPatterns.test.ts tests the default set). */
const PREVIEW = { preview: true } as const;

fixtureTests("GPU013");

test("GPU013 deprecated tf.config.experimental endpoint: warning on the call, safe rename", async () => {
  const src = 'import tensorflow as tf\ngpus = tf.config.experimental.list_physical_devices("GPU")\n';
  const [d] = await lintCode(src, "GPU013", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 1, character: 7 }, end: { line: 1, character: 58 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /deprecated alias: use tf\.config\.list_physical_devices/);
  assert.equal(d.fix?.safe, true);
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import tensorflow as tf\ngpus = tf.config.list_physical_devices("GPU")\n');
  assert.deepEqual(await lint(fixed, PREVIEW), []);
});

test('GPU013 tf.test.is_gpu_available() becomes bool(tf.config.list_physical_devices("GPU"))', async () => {
  const src = 'import tensorflow as tf\nif tf.test.is_gpu_available():\n    print("gpu")\n';
  const [d] = await lintCode(src, "GPU013", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 1, character: 3 }, end: { line: 1, character: 29 } });
  assert.match(d.message, /deprecated and initialises the TensorFlow runtime/);
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import tensorflow as tf\nif bool(tf.config.list_physical_devices("GPU")):\n    print("gpu")\n');
  assert.deepEqual(await lint(fixed, PREVIEW), []);
  const withArgs = "import tensorflow as tf\nok = tf.test.is_gpu_available(cuda_only=True)\n";
  assert.equal((await lintCode(withArgs, "GPU013", PREVIEW))[0].fix, undefined);
});

test("GPU013 tf.config.gpu.* is an error; the memory-growth call becomes a loop", async () => {
  const src = "import tensorflow as tf\n\ntf.config.gpu.set_per_process_memory_growth(True)\nx = tf.ones(1)\n";
  const [d] = await lintCode(src, "GPU013", PREVIEW);
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 49 } });
  assert.match(d.message, /removed before TensorFlow 2\.0 was released/);
  assert.match(d.message, /AttributeError/);
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    'import tensorflow as tf\n\nfor gpu in tf.config.list_physical_devices("GPU"):\n    tf.config.experimental.set_memory_growth(gpu, True)\nx = tf.ones(1)\n',
  );
  assert.deepEqual(await lint(fixed, PREVIEW), []);
  const fraction = "import tensorflow as tf\ntf.config.gpu.set_per_process_memory_fraction(0.5)\n";
  const [f] = await lintCode(fraction, "GPU013", PREVIEW);
  assert.match(f.message, /set_logical_device_configuration/);
  assert.equal(f.fix, undefined, "a fraction cannot be turned into a memory_limit in MB");
});

test("GPU013 GPUOptions in TF2 code is a warning naming the TF2 control; TF1 session code is left alone", async () => {
  const src = "import tensorflow as tf\nopts = tf.compat.v1.GPUOptions(allow_growth=True)\n";
  const [d] = await lintCode(src, "GPU013", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 1, character: 7 }, end: { line: 1, character: 49 } });
  assert.match(d.message, /only configures a TF1 Session/);
  assert.match(d.message, /set_memory_growth/);
  const tf1 = src + "sess = tf.compat.v1.Session(config=tf.compat.v1.ConfigProto(gpu_options=opts))\n";
  assert.deepEqual(await lintCode(tf1, "GPU013", PREVIEW), []);
});
