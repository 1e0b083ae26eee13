import type { PythonRule } from "../rule";
import { nodeRange } from "../python/model";
import type { InitEvent } from "../python/model";
import { stringValue } from "../python/parser";
import { callArgs } from "./shared/py";

/** GPU029: `jax.config.update("jax_platforms", ...)` after the JAX backend started: no effect. */
export const rule: PythonRule = {
  meta: {
    code: "GPU029",
    name: "jax-platforms-after-backend",
    severity: "error",
    fixable: false,
    // `jax.config.update("jax_platforms", ...)`.
    trigger: (t) => t.has("jax_platforms"),
    docs: {
      what: "Finds `jax.config.update(\"jax_platforms\", ...)` after a call that started JAX's backend (`jax.devices()`, `jax.device_count()`, an array from `jax.numpy` or `jax.random`, ...).",
      why: "JAX picks its platforms once, when the backend starts. Measured on 1 x H200 with jax 0.11.2 (docs/ground-truth.md, 'JAX and Keras'): `jax.config.update(\"jax_platforms\", \"cpu\")` before the first `jax.devices()` gives the CPU; after it, new arrays still land on the GPU and `jax.devices()` still lists the GPU. No error or warning says so.",
      example: "import jax\n\nprint(jax.devices())\njax.config.update(\"jax_platforms\", \"cpu\")  # GPU029: no effect, still on the GPU\nx = jax.numpy.ones(3)\n",
      fix: "import jax\n\njax.config.update(\"jax_platforms\", \"cpu\")\nprint(jax.devices())\nx = jax.numpy.ones(3)\n",
      whenNotToCare: "Never in the same process; to run a later step on the CPU, place arrays explicitly (`jax.device_put(x, jax.devices(\"cpu\")[0])`) or start a new process.",
      references: [
        "docs/ground-truth.md, 'JAX and Keras': config jax_platforms=cpu after backend → platform gpu (jax 0.11.2)",
        "JAX documentation, jax.config / JAX_PLATFORMS: the platforms are chosen when the backend initialises",
      ],
    },
  },
  check(ctx) {
    for (const c of ctx.model.calls) {
      if (c.path !== "jax.config.update") continue;
      const [key, value] = callArgs(c.node).positional;
      if (!key || stringValue(key) !== "jax_platforms") continue;
      const started = ctx.model.events.slice(0, c.at).find((e): e is InitEvent => e.kind === "init" && e.framework === "jax");
      if (!started) continue;
      ctx.report({
        range: nodeRange(c.node),
        message: `jax_platforms is set after \`${started.what}\` (${ctx.where(started.node.startPosition.row)}) started JAX's backend: the platforms are already chosen, so this has no effect (measured: arrays stay on the GPU); set it before the first JAX call${value ? ` or JAX_PLATFORMS=${stringValue(value) ?? "..."} in the environment` : ""}`,
        related: [{ range: nodeRange(started.node), message: "JAX's backend started here" }],
      });
    }
  },
};
