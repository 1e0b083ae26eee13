import type { PythonRule } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { callArgs, calleePath } from "./shared/py";

/** The `gpu` entry of a comma-separated platform list, or -1. */
function gpuEntry(value: string): number {
  return value.split(",").findIndex((p) => p.trim().toLowerCase() === "gpu");
}

/** The replacement edit of a string literal's content (`"gpu"` → `"cuda"`), or undefined. */
function cudaEdit(node: SyntaxNode | null | undefined, value: string) {
  const content = node?.type === "string" ? node.namedChildren.find((c) => c?.type === "string_content") : null;
  if (!content) return undefined;
  const next = value
    .split(",")
    .map((p) => (p.trim().toLowerCase() === "gpu" ? p.replace(/gpu/i, "cuda") : p))
    .join(",");
  return {
    title: `Name the CUDA platform: "${next}"`,
    edits: [{ range: nodeRange(content), newText: next }],
    safe: false,
  };
}

/** GPU027: `JAX_PLATFORMS="gpu"` (or `jax.config.update("jax_platforms", "gpu")`): JAX 0.11 fails to start. */
export const rule: PythonRule = {
  meta: {
    code: "GPU027",
    name: "jax-platforms-gpu",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // A JAX_PLATFORMS write, or `jax.config.update("jax_platforms", ...)`.
    trigger: (t) => t.envWith(["JAX_PLATFORMS"]) || t.has("jax_platforms"),
    docs: {
      what: 'Finds `JAX_PLATFORMS` set to a list containing `gpu` (`os.environ["JAX_PLATFORMS"] = "gpu"`, `jax.config.update("jax_platforms", "gpu")`).',
      follows:
        'Every JAX_PLATFORMS write with a literal value in the file (functions and notebook `%env` lines included), and every `jax.config.update("jax_platforms", ...)` call with a literal value. Not followed: values held in variables or computed, and settings made in the shell, a launcher or other modules.',
      why: "Measured on 1 x H200 with jax 0.11.2 and its CUDA 13 plugin (docs/ground-truth.md, 'JAX and Keras'): with `JAX_PLATFORMS=gpu`, `jax.devices()` raises `RuntimeError: Unable to initialize backend 'rocm': Backend 'rocm' is not in the list of known backends: ['cpu', 'tpu', 'cuda']`, while `JAX_PLATFORMS=cuda` (and `cuda,cpu`) gives the GPU. `gpu` is an alias that JAX expands to both GPU vendors' platforms, and the one not installed fails. Older JAX releases accepted `gpu`, so this is a warning, not an error.",
      example:
        'import os\n\nos.environ["JAX_PLATFORMS"] = "gpu"  # GPU027: jax.devices() raises on jax 0.11\nimport jax\n\nprint(jax.devices())\n',
      fix: 'import os\n\nos.environ["JAX_PLATFORMS"] = "cuda"  # "rocm" on an AMD machine\nimport jax\n\nprint(jax.devices())\n',
      whenNotToCare:
        "When the project pins a JAX release that still accepts `gpu` (the fix is not marked safe for that reason), or on a machine with both GPU plugins installed.",
      references: [
        "docs/ground-truth.md, 'JAX and Keras': JAX_PLATFORMS=gpu → RuntimeError: Unable to initialize backend 'rocm' (jax 0.11.2, jax-cuda13-plugin 0.11.2)",
        "JAX documentation, Installation / configuration options: JAX_PLATFORMS takes platform names such as cpu, cuda, rocm, tpu",
      ],
    },
  },
  check(ctx) {
    for (const w of envWritesAnywhere(ctx.model)) {
      if (w.variable !== "JAX_PLATFORMS" || w.literal === null || gpuEntry(w.literal) < 0) continue;
      ctx.report({
        range: w.range,
        message: `JAX_PLATFORMS="${w.literal}" names the platform "gpu": jax 0.11 expands it to cuda and rocm and fails to start ("Unable to initialize backend 'rocm'", measured); name the platform: "cuda" (NVIDIA) or "rocm" (AMD)`,
        fix: cudaEdit(w.value, w.literal),
      });
    }
    // The key must be the string "jax_platforms": only statements whose text holds it (the
    // prefilter's own test for this rule), not every call of the file.
    for (const call of ctx.model.nodesMentioning("call", ["jax_platforms"])) {
      if (!call || calleePath(ctx.model, call) !== "jax.config.update") continue;
      const [key, value] = callArgs(call).positional;
      const v = value ? stringValue(value) : null;
      if (!key || stringValue(key) !== "jax_platforms" || v === null || gpuEntry(v) < 0) continue;
      ctx.report({
        range: nodeRange(call),
        message: `jax_platforms="${v}" names the platform "gpu": jax 0.11 expands it to cuda and rocm and fails to start ("Unable to initialize backend 'rocm'", measured); name the platform: "cuda" (NVIDIA) or "rocm" (AMD)`,
        fix: cudaEdit(value, v),
      });
    }
  },
};
