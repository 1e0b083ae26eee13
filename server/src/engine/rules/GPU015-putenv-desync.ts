import type { PythonRule, RuleContext } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import { STARTUP_VARIABLES } from "../frameworks";
import type { Fix } from "../types";
import { callArgs, namesFor } from "./shared/py";

/** GPU015: `os.putenv` of a startup variable. */
export const rule: PythonRule = {
  meta: {
    code: "GPU015",
    name: "putenv-desync",
    severity: "error",
    fixable: true,
    fixSafety: "both",
    // os.putenv of a startup variable, by name.
    trigger: (t) => t.has("putenv") && t.hasAny(STARTUP_VARIABLES),
    docs: {
      what: "Finds `os.putenv(K, v)` for a CUDA startup variable (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, PYTORCH_CUDA_ALLOC_CONF, XLA_*, TF_*).",
      follows:
        "Every `os.putenv` call in the file (functions and methods included) with a literal name, and the file's `os.environ` writes of the same variable and value. Not followed: names built at run time, a `putenv` the file's imports do not bind to `os`, and other modules.",
      why: '`os.putenv` changes the C-level environment but not `os.environ`, which is what PyTorch consults in Python. Measured on 2 x H200 with torch 2.11 (ground-truth.md): after `os.putenv("CUDA_VISIBLE_DEVICES", "1")` torch\'s view and the CUDA runtime\'s disagree, and the first CUDA use failed: the program crashes instead of running on GPU 1. Python\'s documentation also says to prefer `os.environ`, since `putenv` does not update it.',
      example:
        'import os\n\nos.putenv("CUDA_VISIBLE_DEVICES", "1")  # GPU015: torch and CUDA disagree, first CUDA use fails\nimport torch\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n',
      whenNotToCare:
        "Only for variables meant for child processes started with an explicit environment; even then `os.environ` (or `subprocess.run(env=...)`) is clearer.",
      references: [
        'ground-truth.md: row `os.putenv("CUDA_VISIBLE_DEVICES", "1")` (not os.environ) → breaks, crash',
        "Python documentation, os.putenv: calls to putenv() do not update os.environ, so assigning to items of os.environ is preferable",
      ],
    },
  },
  check(ctx) {
    for (const w of envWritesAnywhere(ctx.model)) {
      if (w.form !== "putenv" || !STARTUP_VARIABLES.includes(w.variable)) continue;
      // `os.environ[K] = v` and `os.putenv(K, v)` with the same value: both views agree
      // (os.environ's assignment calls putenv itself, so the repeat is redundant, not wrong).
      const same = (o: EnvWriteEvent) =>
        o !== w &&
        o.form !== "putenv" &&
        o.variable === w.variable &&
        ((o.literal !== null && o.literal === w.literal) || (!!o.value && !!w.value && o.value.text === w.value.text));
      if (envWritesAnywhere(ctx.model).some(same)) continue;
      ctx.report({
        range: w.range,
        message: `os.putenv("${w.variable}", ...) changes the C environment but not os.environ: the framework's Python side and the native runtime then disagree about ${w.variable}${w.variable === "CUDA_VISIBLE_DEVICES" ? " (measured: torch's view and the CUDA runtime's differ and the first CUDA use fails)" : ""}; assign os.environ["${w.variable}"] instead`,
        fix: environFix(ctx, w),
      });
    }
  },
};

/** Rewrites `os.putenv(K, v)` (a statement of its own) as `os.environ[K] = v` (bytes: `os.environb`, unsafe), reusing the file's name for `os` or `environ`. */
function environFix(ctx: RuleContext, w: EnvWriteEvent): Fix | undefined {
  const stmt = w.statement;
  const call = stmt?.type === "expression_statement" && stmt.namedChildren.length === 1 ? stmt.namedChildren[0] : null;
  if (!call || call.type !== "call") return undefined;
  const { positional, keywords } = callArgs(call);
  if (positional.length !== 2 || keywords.size) return undefined;
  const fn = call.childForFieldName("function");
  let environ: string | null = null;
  if (fn?.type === "attribute" && ctx.model.resolve(fn.childForFieldName("object")) === "os")
    environ = `${fn.childForFieldName("object")!.text}.environ`;
  else
    environ =
      namesFor(ctx.model, "os.environ")[0] ??
      (namesFor(ctx.model, "os")[0] ? `${namesFor(ctx.model, "os")[0]}.environ` : null);
  if (!environ) return undefined;
  // `os.putenv` takes bytes, `os.environ` only str: `os.environ[b"K"] = b"1"` raises TypeError (str
  // expected, not bytes). Bytes on both sides go to `os.environb` (POSIX only, so not a safe fix).
  const bytes = positional.map((p) => p.type === "string" && /^[a-zA-Z]*[bB]/.test(p.text));
  if (bytes[0] !== bytes[1]) return undefined;
  if (bytes[0]) environ += "b";
  return {
    title: `Assign ${environ}[${positional[0].text}] instead`,
    edits: [{ range: nodeRange(call), newText: `${environ}[${positional[0].text}] = ${positional[1].text}` }],
    safe: w.literal !== null && !bytes[0],
  };
}
