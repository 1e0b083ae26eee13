import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { lint, lintCode, applyFix, projectTree } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
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
  // careless#37: the file's only set_visible_devices hides every GPU (a --cpu branch); it narrows
  // nothing for the growth call, which still warns. One that keeps a GPU silences it.
  const hide = (devices: string) =>
    `import tensorflow as tf\nif cpu_only:\n    tf.config.set_visible_devices(${devices})\ngpus = tf.config.list_physical_devices("GPU")\ntf.config.experimental.set_memory_growth(gpus[0], True)\n`;
  assert.deepEqual(
    (await lintCode(hide('[], "GPU"'), "GPU012")).map((x) => x.range.start.line),
    [4],
  );
  assert.deepEqual(
    (await lintCode(hide('devices=(), device_type="GPU"'), "GPU012")).map((x) => x.range.start.line),
    [4],
  );
  assert.deepEqual(await lintCode(hide('gpus[:1], "GPU"'), "GPU012"), []);
});

test("GPU012: a default value runs when its def does: tf.constant(1) as a method's default starts TensorFlow at import; in a body it does not", async () => {
  const growth =
    'gpus = tf.config.list_physical_devices("GPU")\nfor g in gpus:\n    tf.config.experimental.set_memory_growth(g, True)\n';
  const method = `import tensorflow as tf\n\n\nclass Out(tf.keras.layers.Layer):\n    def call(self, x, batch_size=tf.constant(1)):\n        return x\n\n\n${growth}`;
  const [d] = await lintCode(method, "GPU012");
  assert.equal(d.range.start.line, 10);
  assert.match(d.message, /initialised its devices at `tf\.constant\(1\)` \(line 5\)/);
  const fn = `import tensorflow as tf\n\n\n@tf.function\ndef call(x, scale: float = float(tf.ones(1)[0])):\n    return x\n\n\n${growth}`;
  assert.deepEqual(
    (await lintCode(fn, "GPU012")).map((x) => x.range.start.line),
    [10],
    "a decorated def's default too",
  );
  const inBody = `import tensorflow as tf\n\n\nclass Out(tf.keras.layers.Layer):\n    def call(self, x, batch_size=None):\n        return tf.constant(1)\n\n\n${growth}`;
  assert.deepEqual(await lintCode(inBody, "GPU012"), []);
});

test("GPU012 with the project: importing a module whose class body starts TensorFlow (a tf.constant default) comes before set_memory_growth; imported after it, nothing", () => {
  const nets =
    "import tensorflow as tf\n\n\nclass Out(tf.keras.layers.Layer):\n    def call(self, x, batch_size=tf.constant(1)):\n        return tf.reshape(x, (batch_size, -1))\n";
  const before =
    'import tensorflow as tf\n\nimport nets\n\nfor g in tf.config.list_physical_devices("GPU"):\n    tf.config.experimental.set_memory_growth(g, True)\n';
  const after =
    'import tensorflow as tf\n\nfor g in tf.config.list_physical_devices("GPU"):\n    tf.config.experimental.set_memory_growth(g, True)\n\nimport nets  # noqa: E402\n';
  const dir = projectTree({ "nets.py": nets, "agent.py": before, "agent2.py": after });
  const run = (name: string, text: string) => {
    const project = new ProjectIndex().lookupFor(join(dir, name), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU012"] });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d] = run("agent.py", before);
  assert.equal(d.range.start.line, 5);
  assert.equal(d.severity, "error");
  assert.match(d.message, /at `import nets` \(line 3: it runs tensorflow\.constant\(\) at nets\.py:5\)/);
  assert.deepEqual(run("agent2.py", after), []);
  // Without the project index the import is opaque: silent.
  const alone = lintPython(before, { select: ["GPU012"] });
  alone.tree?.delete();
  assert.deepEqual(alone.diagnostics, []);
});

const GPU_HELPER = [
  "import tensorflow as tf",
  "",
  "",
  "def pick_gpus(ids):",
  '    gpus = tf.config.list_physical_devices("GPU")',
  '    tf.config.set_visible_devices([gpus[i] for i in ids], "GPU")',
  "",
].join("\n");

test("GPU012 (preview) with the project: a helper of another module that configures the devices, called once per job", () => {
  const perJob =
    'import tensorflow as tf\nfrom gpu_util import pick_gpus\n\n\ndef score(task):\n    pick_gpus(task["ids"])\n    net = tf.keras.models.load_model(task["path"])\n    return net(task["x"])\n\n\ndef serve(tasks):\n    for task in tasks:\n        print(score(task))\n';
  const inLoop =
    "import tensorflow as tf\nfrom gpu_util import pick_gpus\n\nfor ids in ([0], [1]):\n    pick_gpus(ids)\n    print(tf.reduce_sum(tf.ones(3)))\n";
  const once =
    "import tensorflow as tf\nfrom gpu_util import pick_gpus\n\npick_gpus([0])\nfor n in range(3):\n    print(tf.reduce_sum(tf.ones(n)))\n";
  const guarded = GPU_HELPER.replace(
    "    gpus = tf",
    '    if tf.config.get_visible_devices("GPU"):\n        return\n    gpus = tf',
  );
  const files = { "gpu_util.py": GPU_HELPER, "per_job.py": perJob, "in_loop.py": inLoop, "once.py": once };
  const dir = projectTree(files);
  const dir2 = projectTree({ ...files, "gpu_util.py": guarded });
  const run = (root: string, name: string, text: string, preview = true) => {
    const project = new ProjectIndex().lookupFor(join(root, name), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU012"], preview });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d, ...rest] = run(dir, "per_job.py", perJob);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  assert.equal(d.severity, "warning");
  assert.equal(
    d.message,
    'pick_gpus() runs tf.config.set_visible_devices(...) (gpu_util.py:6) on every call, and it is called once per job: by score() (line 13), which runs TensorFlow after it (`tf.keras.models.load_model(task["path"])` at line 7), in the loop at line 12; from the second pass the runtime is initialised and tf.config.set_visible_devices raises RuntimeError "cannot be modified after being initialized" (or, caught, leaves the devices as they were); configure the devices once, before the loop',
  );
  assert.equal(d.related?.[0].file, join(dir, "gpu_util.py"));
  assert.deepEqual(run(dir, "per_job.py", perJob, false), [], "preview only");
  assert.equal(run(dir, "in_loop.py", inLoop).length, 1);
  // Called once before the loop; a helper that returns early when already configured; no project index.
  assert.deepEqual(run(dir, "once.py", once), []);
  assert.deepEqual(run(dir2, "per_job.py", perJob), []);
  const r = lintPython(perJob, { select: ["GPU012"], preview: true });
  r.tree?.delete();
  assert.deepEqual(r.diagnostics, []);
});
