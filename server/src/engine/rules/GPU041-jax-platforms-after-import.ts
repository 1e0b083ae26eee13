import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { nodeRange } from "../python/events";
import type { ImportEvent } from "../python/events";
import { startsChildAfter, type ChildProcessFacts } from "./shared/childProcess";
import { moveWriteFix } from "./shared/moveWrite";

/**
 * The JAX configuration variables that choose platforms and devices, each read once when `jax` is
 * imported (read in jax-ml/jax at cec06d116c05, 2026-08-08):
 * - `JAX_PLATFORMS`: jax/_src/config.py line 1156 defines `jax_platforms` with
 *   `optional_string_state`, whose state takes its default from
 *   `default = os.getenv(name.upper(), default)` (line 906) when the module runs; `jax/__init__.py`
 *   line 47 imports it. The backend later reads `config.jax_platforms.value` (xla_bridge.py line
 *   803), never the environment.
 * - `JAX_PLATFORM_NAME` (deprecated): xla_bridge.py line 79, `os.getenv('JAX_PLATFORM_NAME', '')`
 *   at module level; `jax/__init__.py` line 137 imports xla_bridge.
 */
export const JAX_IMPORT_TIME_VARIABLES: readonly string[] = ["JAX_PLATFORMS", "JAX_PLATFORM_NAME"];

/** GPU041: `JAX_PLATFORMS` written after `import jax`: JAX read it when it was imported. */
export const rule: PythonRule = {
  meta: {
    code: "GPU041",
    name: "jax-platforms-after-import",
    severity: "warning",
    fixable: true,
    fixSafety: "both",
    // A JAX_PLATFORMS or JAX_PLATFORM_NAME write, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["JAX_PLATFORMS", "JAX_PLATFORM_NAME"]),
    docs: {
      what: "Finds `JAX_PLATFORMS` (or the deprecated `JAX_PLATFORM_NAME`) written to `os.environ` after `import jax` (or an import of a library that imports jax: flax, optax, ...) in the same program. Not reported: a write followed, in its block, by a call that starts a child process (the write prepares that child's environment).",
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each JAX_PLATFORMS or JAX_PLATFORM_NAME write against the imports of jax (or of a library that imports it) before it. Not followed: writes in functions the module never calls, and jax imported by another module of the project.",
      why: 'JAX copies `JAX_PLATFORMS` into its configuration when `jax` is imported, and its backend later reads only that configuration: written afterwards, the variable is ignored and JAX starts on the platforms it would have picked anyway (the GPU when one is there, where the write asked for `cpu`). Read in JAX\'s source (jax-ml/jax at cec06d116c05): jax/_src/config.py line 906 `default = os.getenv(name.upper(), default)` runs when `jax_platforms` is defined (line 1156), and xla_bridge.py line 803 reads `config.jax_platforms.value`. Not measured here (no GPU machine this session); `jax.config.update("jax_platforms", ...)` before the backend starts is the documented way after the import.',
      example:
        'import os\nimport jax\n\nos.environ["JAX_PLATFORMS"] = "cpu"  # GPU041: JAX read it at import\nprint(jax.devices())\n',
      fix: 'import os\n\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n\nprint(jax.devices())\n',
      whenNotToCare:
        'When the write only prepares the environment of a child process started afterwards (it inherits `os.environ`), or when `jax.config.update("jax_platforms", ...)` sets the same value before the backend starts.',
      references: [
        "jax-ml/jax cec06d116c05 jax/_src/config.py line 906: `default = os.getenv(name.upper(), default)`; line 1156: `jax_platforms = optional_string_state(`",
        "jax-ml/jax cec06d116c05 jax/_src/xla_bridge.py line 79: `os.getenv('JAX_PLATFORM_NAME', '').lower(),`; line 803: `if jax_platforms := config.jax_platforms.value:`",
        "JAX documentation, 'Configuration options': options are read from environment variables when JAX is imported, or set with jax.config.update",
      ],
    },
  },
  check(ctx) {
    const childFacts: ChildProcessFacts = { lastWord: new Map() };
    for (const w of envWrites(ctx.model)) {
      if (!JAX_IMPORT_TIME_VARIABLES.includes(w.variable) || w.form === "putenv") continue;
      const idx = ctx.model.events.indexOf(w);
      const jax = ctx.model.events
        .slice(0, idx)
        .find((e): e is ImportEvent => e.kind === "import" && e.framework === "jax");
      if (!jax || (w.statement && startsChildAfter(ctx, w.statement, childFacts))) continue;
      const fix = moveWriteFix(ctx, w);
      ctx.report({
        range: w.range,
        message: `${w.variable} is set after \`${jax.node.text.split("\n")[0]}\` (${ctx.where(jax.node.startPosition.row)}): JAX read it when it was imported, so this write has no effect (jax/_src/config.py); set it before importing jax, or use jax.config.update("jax_platforms", ...) before the first JAX call`,
        related: [{ range: nodeRange(jax.node), message: "jax imported here: JAX_PLATFORMS was read" }],
        ...(fix ? { fix } : {}),
      });
    }
  },
};
