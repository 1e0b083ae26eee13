import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { nodeRange } from "../python/events";
import type { ImportEvent } from "../python/events";

/**
 * The packages that choose their backend from `KERAS_BACKEND` when imported: `keras` (Keras 3) and
 * `keras_core`, the Keras 3 preview package of 2023 (read in keras-team/keras @ 10d0349a75,
 * `keras_core/backend/config.py:248`: `if "KERAS_BACKEND" in os.environ: _BACKEND = ...` at module
 * level, reached from `keras_core/__init__.py` through `from keras_core import backend`).
 */
const KERAS_PACKAGES = ["keras", "keras_core"] as const;

/** GPU030: `KERAS_BACKEND` written after `import keras`: Keras 3 already chose its backend. */
export const rule: PythonRule = {
  meta: {
    code: "GPU030",
    name: "keras-backend-after-import",
    severity: "warning",
    fixable: false,
    // A KERAS_BACKEND write, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["KERAS_BACKEND"]),
    docs: {
      what: "Finds `KERAS_BACKEND` written after `import keras` (or `from keras import ...`, or the Keras 3 preview package `keras_core`) in the same program.",
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each KERAS_BACKEND write against the `keras` and `keras_core` imports before it. Not followed: writes in functions the module never calls, and keras imported by another module (a project module, or a library that imports keras).",
      why: "Keras 3 reads `KERAS_BACKEND` once, when `keras` is imported, and loads that backend; writing the variable afterwards changes nothing, and the program runs on the backend chosen at import (TensorFlow by default, or the one in `~/.keras/keras.json`). Keras's documentation: 'You must set the KERAS_BACKEND environment variable before importing keras'; `keras.config.set_backend()` afterwards is documented as unsafe for objects already created. Documented, not measured here: Keras is not installed on the GPU machine this project measures on.",
      example:
        'import os\nimport keras\n\nos.environ["KERAS_BACKEND"] = "jax"  # GPU030: Keras already chose its backend\nmodel = keras.Sequential([keras.layers.Dense(1)])\n',
      fix: 'import os\n\nos.environ["KERAS_BACKEND"] = "jax"\nimport keras\n\nmodel = keras.Sequential([keras.layers.Dense(1)])\n',
      whenNotToCare:
        "When the write only prepares the environment of a child process (`subprocess.run(...)` started afterwards inherits it).",
      references: [
        "Keras documentation, Getting started / Configuring your backend: 'You must set the KERAS_BACKEND environment variable before importing keras, and the backend cannot be changed after the package has been imported.'",
        "Keras API documentation, keras.config.set_backend: 'calling this function will not affect existing objects ... unsafe'",
        "keras_core (the Keras 3 preview package): keras-team/keras @ 10d0349a75 keras_core/backend/config.py:248 reads KERAS_BACKEND at module level, when keras_core is imported",
      ],
    },
  },
  check(ctx) {
    for (const w of envWrites(ctx.model)) {
      if (w.variable !== "KERAS_BACKEND" || w.form === "putenv") continue;
      const idx = ctx.model.events.indexOf(w);
      const keras = ctx.model.events
        .slice(0, idx)
        .find(
          (e): e is ImportEvent =>
            e.kind === "import" && KERAS_PACKAGES.some((k) => e.module === k || e.module.startsWith(k + ".")),
        );
      if (!keras) continue;
      ctx.report({
        range: w.range,
        message: `KERAS_BACKEND is set after \`${keras.node.text.split("\n")[0]}\` (${ctx.where(keras.node.startPosition.row)}): Keras chose its backend when it was imported, so this write has no effect (Keras documentation); set it before importing keras`,
        related: [{ range: nodeRange(keras.node), message: "keras imported here: the backend was chosen" }],
      });
    }
  },
};
