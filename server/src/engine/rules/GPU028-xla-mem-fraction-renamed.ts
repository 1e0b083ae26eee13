import type { PythonRule } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { nodeRange, type EnvWriteEvent } from "../python/events";
import type { Fix } from "../types";

const OLD = "XLA_PYTHON_CLIENT_MEM_FRACTION";
const NEW = "XLA_CLIENT_MEM_FRACTION";

/** Renames the key string of a write (`os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"]` → the new name). */
function renameFix(w: EnvWriteEvent): Fix | undefined {
  const key = w.nameNode;
  if (!key) return undefined;
  const content =
    key.type === "string"
      ? key.namedChildren.find((c) => c?.type === "string_content")
      : key.type === "identifier"
        ? key
        : null;
  if (!content || content.text !== OLD) return undefined;
  // Not safe: a JAX release older than the new name reads only the old one.
  return { title: `Use ${NEW}`, edits: [{ range: nodeRange(content), newText: NEW }], safe: false };
}

/** GPU028: `XLA_PYTHON_CLIENT_MEM_FRACTION`, deprecated for `XLA_CLIENT_MEM_FRACTION`; both together fail. */
export const rule: PythonRule = {
  meta: {
    code: "GPU028",
    name: "xla-mem-fraction-renamed",
    severity: "information",
    fixable: true,
    fixSafety: "unsafe",
    // An XLA_PYTHON_CLIENT_MEM_FRACTION write, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["XLA_PYTHON_CLIENT_MEM_FRACTION"]),
    docs: {
      what: "Finds a file that writes both `XLA_CLIENT_MEM_FRACTION` and the name it replaced, `XLA_PYTHON_CLIENT_MEM_FRACTION` (an error); with preview on, also any write of the deprecated `XLA_PYTHON_CLIENT_MEM_FRACTION` (information).",
      follows:
        "Every write of XLA_PYTHON_CLIENT_MEM_FRACTION and XLA_CLIENT_MEM_FRACTION in the file (functions and notebook `%env` lines included). Not followed: either variable set in the shell, a launcher or another module.",
      why: "Measured on 1 x H200 with jax 0.11.2 (docs/ground-truth.md, 'JAX and Keras'): `XLA_PYTHON_CLIENT_MEM_FRACTION=.25` and `XLA_CLIENT_MEM_FRACTION=.25` each limit JAX's pool to 37,528,535,040 bytes (default 112,583,507,968), and neither warns. With both set, the CUDA backend does not start: the plugin raises `ValueError: XLA_CLIENT_MEM_FRACTION is specified together with XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated.`, JAX logs 'Falling back to cpu' and the program runs on no GPU (verify/GPU028: no process on the GPU). So the old name works today (information), and a file that sets both — say, the new name added next to the old one — silently loses the GPU (error).",
      example:
        'import os\n\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".5"  # GPU028: deprecated name\nimport jax\n',
      fix: 'import os\n\nos.environ["XLA_CLIENT_MEM_FRACTION"] = ".5"\nimport jax\n',
      whenNotToCare:
        "When the project supports JAX releases older than the new name (they read only XLA_PYTHON_CLIENT_MEM_FRACTION); the fix is not marked safe for that reason. Never ignore the both-set error.",
      references: [
        "docs/ground-truth.md, 'JAX and Keras': both fractions set → ValueError '... Remove the latter one, it is deprecated.' (jax 0.11.2); verify/GPU028: then 'Falling back to cpu', no GPU used",
        "JAX documentation, GPU memory allocation: XLA_CLIENT_MEM_FRACTION (formerly XLA_PYTHON_CLIENT_MEM_FRACTION)",
      ],
    },
  },
  check(ctx) {
    const writes = envWritesAnywhere(ctx.model);
    const newName = writes.find((w) => w.variable === NEW && w.form !== "putenv");
    for (const w of writes) {
      if (w.variable !== OLD || w.form === "putenv") continue;
      if (newName) {
        ctx.report({
          range: w.range,
          severity: "error",
          message: `${OLD} and ${NEW} are both set (${NEW} at ${ctx.where(newName.range.start.line)}): jax 0.11's CUDA backend then fails ("ValueError: ${NEW} is specified together with ${OLD}. Remove the latter one, it is deprecated.") and JAX falls back to the CPU (measured); remove this write`,
          related: [{ range: newName.range, message: `${NEW} set here` }],
        });
        continue;
      }
      // Preview: on the ecosystem corpus (jax's own tests, 8 findings) the old name works as written and
      // nobody had changed it: hygiene a maintainer may not act on, below the default set's bar.
      ctx.report({
        range: w.range,
        preview: true,
        message: `${OLD} is deprecated in favour of ${NEW} (jax 0.11 reads both; with both set it falls back to the CPU); use ${NEW}`,
        fix: renameFix(w),
      });
    }
  },
};
