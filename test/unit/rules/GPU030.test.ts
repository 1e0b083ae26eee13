import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU030");

test("GPU030 warns on KERAS_BACKEND after from keras import ..., says it is documented", async () => {
  const [d] = await lintCode('import os\nfrom keras import layers\nos.environ["KERAS_BACKEND"] = "torch"\n', "GPU030");
  assert.equal(d.severity, "warning");
  assert.match(d.message, /after `from keras import layers` \(line 2\)/);
  assert.match(d.message, /Keras documentation/);
});

test("GPU030: import tensorflow (tf.keras) is not Keras 3's import", async () => {
  assert.deepEqual(
    await lintCode('import os\nimport tensorflow as tf\nos.environ["KERAS_BACKEND"] = "jax"\nimport keras\n', "GPU030"),
    [],
  );
});
