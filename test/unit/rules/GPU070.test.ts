import assert from "node:assert/strict";
import { test } from "node:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lint, projectTree } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU070");

const LOADER =
  "import jax\nimport tensorflow as tf\n\n\ndef batches(paths):\n    return tf.data.TFRecordDataset(paths).batch(8).as_numpy_iterator()\n";

test("GPU070: a preview warning on the TensorFlow import, naming the pipeline call and the framework it starves", async () => {
  const found = (await lint(LOADER, { preview: true })).filter((d) => d.code === "GPU070");
  assert.equal(found.length, 1);
  const [d] = found;
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 23 } });
  assert.equal(
    d.message,
    `TensorFlow is imported beside JAX and runs the input pipeline (tf.data.TFRecordDataset(), line 6) with every GPU visible to it: its first op maps nearly all of each visible GPU's memory (TensorFlow's GPU guide), which JAX then lacks. Call tf.config.set_visible_devices([], "GPU") right after importing TensorFlow`,
  );
  assert.deepEqual(
    (await lint(LOADER)).filter((x) => x.code === "GPU070"),
    [],
    "preview only",
  );
});

test("GPU070: silent where the file hides the GPUs, bounds TF's memory, names CUDA_VISIBLE_DEVICES or JAX's platform, or is a test module", async () => {
  const variants = [
    LOADER.replace(
      "import tensorflow as tf\n",
      'import tensorflow as tf\ntf.config.experimental.set_visible_devices([], "GPU")\n',
    ),
    LOADER.replace(
      "import tensorflow as tf\n",
      'import tensorflow as tf\nfor g in tf.config.list_physical_devices("GPU"):\n    tf.config.experimental.set_memory_growth(g, True)\n',
    ),
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n' + LOADER,
    'import os\nos.environ["JAX_PLATFORMS"] = "cpu"\n' + LOADER,
  ];
  for (const text of variants)
    assert.deepEqual(
      (await lint(text, { preview: true })).filter((d) => d.code === "GPU070"),
      [],
      text,
    );
  assert.deepEqual(
    (await lint(LOADER, { preview: true, testModule: true })).filter((d) => d.code === "GPU070"),
    [],
  );
});

test("GPU070: PyTorch counts only in a module that names cuda; a module importing jax2tf serves TensorFlow", async () => {
  const torchLoader = LOADER.replace("import jax\n", "import torch\n");
  const found = async (text: string) => (await lint(text, { preview: true })).filter((d) => d.code === "GPU070").length;
  assert.equal(await found(torchLoader), 0);
  assert.equal(await found(torchLoader + 'model = torch.nn.Linear(2, 2).to("cuda")\n'), 1);
  assert.equal(await found(LOADER.replace("import jax\n", "from jax.experimental import jax2tf\n")), 0);
});

test("GPU070 with the project: silent where another module hides TensorFlow's GPUs (Flax's main.py), else reported", () => {
  const main =
    'import tensorflow as tf\n\nimport input_pipeline\n\ntf.config.experimental.set_visible_devices([], "GPU")\n';
  const run = (files: Record<string, string>) => {
    const dir = projectTree(files);
    const project = new ProjectIndex().lookupFor(join(dir, "input_pipeline.py"), lookupOptions({}));
    const r = lintPython(LOADER, { project, select: ["GPU070"], preview: true });
    r.tree?.delete();
    return { diagnostics: r.diagnostics, deps: [...project.deps()].map((f) => f.slice(dir.length + 1)).sort() };
  };
  const hidden = run({ "input_pipeline.py": LOADER, "main.py": main });
  assert.deepEqual(hidden.diagnostics, []);
  assert.deepEqual(hidden.deps, ["main.py"]);
  const alone = run({ "input_pipeline.py": LOADER, "train.py": "import input_pipeline\n" });
  assert.equal(alone.diagnostics.length, 1);
  assert.deepEqual(alone.deps, ["train.py"]);
});

test("GPU070 with the project: the scan is kept until a module under the root changes, then read again", () => {
  const main = 'import tensorflow as tf\n\nimport input_pipeline\n\ntf.config.set_visible_devices([], "GPU")\n';
  const dir = projectTree({ "input_pipeline.py": LOADER, "main.py": main });
  const index = new ProjectIndex();
  const lookup = () => index.lookupFor(join(dir, "input_pipeline.py"), lookupOptions({}));
  assert.equal(lookup().projectMentions?.(["set_visible_devices"]), "main.py");
  writeFileSync(join(dir, "main.py"), "import input_pipeline\n");
  assert.equal(lookup().projectMentions?.(["set_visible_devices"]), "main.py", "kept until told");
  assert.equal(index.invalidate(join(dir, "main.py")), true);
  assert.equal(lookup().projectMentions?.(["set_visible_devices"]), null);
});

test("GPU070 with the project: an edit that leaves a module's mention as it was keeps the scan (no new version)", () => {
  const dir = projectTree({ "input_pipeline.py": LOADER, "train.py": "import input_pipeline\n" });
  const index = new ProjectIndex();
  const lookup = () => index.lookupFor(join(dir, "input_pipeline.py"), lookupOptions({}));
  assert.equal(lookup().projectMentions?.(["set_visible_devices"]), null);
  writeFileSync(join(dir, "train.py"), "import input_pipeline  # edited\n");
  assert.equal(index.invalidate(join(dir, "train.py")), false);
  writeFileSync(join(dir, "train.py"), 'import tensorflow as tf\ntf.config.set_visible_devices([], "GPU")\n');
  assert.equal(index.invalidate(join(dir, "train.py")), true);
  assert.equal(lookup().projectMentions?.(["set_visible_devices"]), "train.py");
});
