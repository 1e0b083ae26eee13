import type { PythonRule } from "../rule";
import { envWritesAnywhere } from "../python/model";

/** The variables whose value JAX reads as the fraction of each GPU's memory to preallocate (the new name and the deprecated one). */
const FRACTIONS = ["XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION"];

/** A decimal number as written (`100`, `90.0`, `.9`); null for anything else (`0.75+`, `90%`, an expansion). */
function number(text: string): number | null {
  const t = text.trim();
  return /^(?:\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : null;
}

/** GPU058: JAX's memory fraction written as a percentage (`XLA_PYTHON_CLIENT_MEM_FRACTION="90"`). */
export const rule: PythonRule = {
  meta: {
    code: "GPU058",
    name: "xla-mem-fraction-as-percent",
    severity: "warning",
    fixable: false,
    // A write of one of the two memory-fraction variables, by name.
    trigger: (t) => t.has("MEM_FRACTION"),
    docs: {
      what: 'Finds JAX\'s GPU memory fraction written as a number above 1: `os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = "90"` (or `XLA_CLIENT_MEM_FRACTION`, or a notebook\'s `%env`), a percentage where JAX takes a fraction of each GPU\'s memory.',
      follows:
        "Every write of the two variables in the file with a literal value (functions included, notebook cells and `%env` lines). Values that are not a plain decimal number (`0.75+`, an expansion, a value computed at run time) are left alone, as are values from 0 to 1. Not followed: shell scripts, job scripts and container files, and values written in other modules.",
      why: 'JAX\'s documentation ("GPU memory allocation"): "XLA_CLIENT_MEM_FRACTION=.XX: If preallocation is enabled, this makes JAX preallocate XX% of the total GPU memory, instead of the default 75%" (the old name XLA_PYTHON_CLIENT_MEM_FRACTION the same). The value is a fraction: `"90"` asks for ninety times each GPU\'s memory, not 90 % of it. A maintainer answered a user who had written `"100"` that the variable is a ratio (0.75 is typical), that 100 is a mistake, and that XLA cannot take the whole GPU anyway, since cuDNN and NCCL need memory of their own (jax-ml/jax#17426, where the program then failed with an XLA runtime error).',
      example:
        'import os\n\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = "90"  # GPU058: a fraction, not a percentage\nimport jax\n',
      fix: 'import os\n\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".90"\nimport jax\n',
      whenNotToCare: "Never: no value above 1 is a fraction of a GPU's memory.",
      references: [
        'JAX documentation, GPU memory allocation (https://docs.jax.dev/en/latest/gpu_memory_allocation.html): "XLA_PYTHON_CLIENT_MEM_FRACTION=.XX If preallocation is enabled, this makes JAX preallocate XX% of the total GPU memory, instead of the default 75%"',
        "jaxlib 0.4.1 release notes: XLA_PYTHON_CLIENT_MEM_FRACTION=.XX allocates XX% of the total GPU memory",
        'jax-ml/jax#17426 (2023): XLA_PYTHON_CLIENT_MEM_FRACTION set to "100"; the maintainer\'s answer that it is a ratio',
      ],
    },
  },
  check(ctx) {
    for (const w of envWritesAnywhere(ctx.model)) {
      if (!FRACTIONS.includes(w.variable) || w.literal === null) continue;
      const n = number(w.literal);
      if (n === null || n <= 1) continue;
      const meant = n <= 100 ? ` (for ${w.literal.trim()} %, write "${Number((n / 100).toFixed(4))}")` : "";
      ctx.report({
        range: w.range,
        message: `${w.variable}="${w.literal}" is read as a fraction of each GPU's memory, not a percentage: it asks JAX to preallocate ${w.literal.trim()} times the memory of each GPU when its backend starts. Write a value between 0 and 1${meant}, and leave room for cuDNN and NCCL (JAX's default is 0.75)`,
      });
    }
  },
};
