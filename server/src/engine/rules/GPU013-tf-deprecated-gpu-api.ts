import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import type { Fix } from "../types";
import { callArgs, calleePath, indentOf, namesFor, ownsItsLines } from "./shared/py";

/** `tf.config.experimental.X` endpoints that TensorFlow marks deprecated, and their replacement in `tf.config`. */
export const DEPRECATED_EXPERIMENTAL: ReadonlyMap<string, string> = new Map([
  ["list_physical_devices", "list_physical_devices"],
  ["set_visible_devices", "set_visible_devices"],
  ["list_logical_devices", "list_logical_devices"],
  ["get_visible_devices", "get_visible_devices"],
  ["set_virtual_device_configuration", "set_logical_device_configuration"],
  ["get_virtual_device_configuration", "get_logical_device_configuration"],
]);

/** Calls that mark TF1-style graph code, where GPUOptions/ConfigProto still configure a Session. */
const TF1_STYLE = new Set([
  "tensorflow.compat.v1.Session",
  "tensorflow.compat.v1.InteractiveSession",
  "tensorflow.compat.v1.disable_v2_behavior",
  "tensorflow.compat.v1.disable_eager_execution",
  "tensorflow.Session",
  "tensorflow.compat.v1.keras.backend.set_session",
]);

/** GPU013: TensorFlow GPU APIs that are deprecated, TF1-only, or were never released. */
export const rule: PythonRule = {
  meta: {
    code: "GPU013",
    name: "tf-deprecated-gpu-api",
    severity: "warning",
    fixable: true,
    fixSafety: "both",
    // tensorflow or keras in a code word (TextProbe.codeWord): the deprecated call resolves through them.
    trigger: (t) => t.codeWord("tensorflow", false) || t.codeWord("keras", false),
    docs: {
      what: "Finds TensorFlow GPU APIs with a current replacement: `tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=...)` / `allow_growth` (and `config.gpu_options.allow_growth = True`) in TF2 code, `tf.test.is_gpu_available()`, the deprecated `tf.config.experimental.list_physical_devices` / `set_visible_devices` (and the other deprecated `tf.config.experimental` device endpoints): warnings. Calls into `tf.config.gpu.*`: errors.",
      follows:
        "Every call and `gpu_options` assignment in the file (functions included), resolved through the file's own imports; TF1-style code anywhere in the file (a `Session`, `disable_v2_behavior()`) turns the GPUOptions check off. Not followed: other modules, and TensorFlow reached through a name the file's imports do not bind (a module passed in as a parameter).",
      why: 'From TensorFlow\'s documentation and source (documented, not measured: TensorFlow was not installed on the measured machine). `GPUOptions` configures a TF1 `Session`; eager TF2 code never creates one, so the memory fraction or growth setting is silently ignored — the TF2 controls are `tf.config.experimental.set_memory_growth` and `tf.config.set_logical_device_configuration(memory_limit=...)`. `tf.test.is_gpu_available` is deprecated (its documentation: use `tf.config.list_physical_devices("GPU")` instead) and, unlike its replacement, initialises the runtime, after which device configuration fails (GPU012). The `tf.config.experimental` device endpoints are deprecated aliases of `tf.config` functions. `tf.config.gpu` existed only in a TensorFlow 2.0 pre-release: every released TF 2.x raises `AttributeError` (module has no attribute `gpu`).',
      example:
        "import tensorflow as tf\n\nif tf.test.is_gpu_available():  # GPU013: deprecated, initialises the runtime\n    tf.config.gpu.set_per_process_memory_fraction(0.5)  # GPU013 (error): AttributeError\n",
      fix: 'import tensorflow as tf\n\ngpus = tf.config.list_physical_devices("GPU")\nif gpus:\n    tf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=40960)])\n',
      whenNotToCare:
        "TF1-style code that runs a `tf.compat.v1.Session` (with `disable_v2_behavior()` or `disable_eager_execution()`): GPUOptions still applies there and the rule stays silent. Pinned TensorFlow 1.x projects.",
      references: [
        "TensorFlow documentation (documented, not measured): tf.config.experimental.set_memory_growth; tf.config.set_logical_device_configuration; guide 'Use a GPU', Limiting GPU memory growth",
        'TensorFlow documentation: tf.test.is_gpu_available is deprecated; use tf.config.list_physical_devices("GPU") instead',
        "TensorFlow source, python/framework/config.py: deprecated_endpoints('config.experimental.list_physical_devices'), ('config.experimental.set_visible_devices'), ...",
        "seeds/README.md: tf.config.gpu.set_per_process_memory_fraction existed only in a TensorFlow 2.0 pre-release and raises AttributeError in every released TF 2.x",
      ],
    },
  },
  check(ctx) {
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    const tf1 = calls.some((c) => TF1_STYLE.has(calleePath(ctx.model, c) ?? ""));
    for (const call of calls) {
      const q = calleePath(ctx.model, call);
      if (!q?.startsWith("tensorflow.")) continue;
      const name = q.replace(/^tensorflow\./, "tf.");
      const { positional, keywords } = callArgs(call);
      if (q.startsWith("tensorflow.config.gpu.")) {
        ctx.report({
          range: nodeRange(call),
          severity: "error",
          message: `${name}() does not exist: tf.config.gpu was removed before TensorFlow 2.0 was released, so this raises AttributeError: module has no attribute 'gpu'. ${q.endsWith("memory_fraction") ? "Use tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=MB)])" : "Use tf.config.experimental.set_memory_growth(gpu, True) for each GPU"}`,
          fix: q.endsWith(".set_per_process_memory_growth") ? growthLoopFix(ctx, call) : undefined,
        });
      } else if ((q === "tensorflow.compat.v1.GPUOptions" || q === "tensorflow.GPUOptions") && !tf1) {
        const kw = keywords.get("per_process_gpu_memory_fraction")
          ? "per_process_gpu_memory_fraction"
          : keywords.get("allow_growth")
            ? "allow_growth"
            : null;
        if (!kw) continue;
        ctx.report({ range: nodeRange(call), message: gpuOptionsMessage(`${name}(${kw}=...)`, kw) });
      } else if (q === "tensorflow.test.is_gpu_available") {
        ctx.report({
          range: nodeRange(call),
          message: `${name}() is deprecated and initialises the TensorFlow runtime (device configuration after it fails); use tf.config.list_physical_devices("GPU")`,
          preview: true, // ecosystem check: tests and examples that never configure devices afterwards
          fix:
            !positional.length && !keywords.size
              ? replaceCall(ctx, call, (tf) => `bool(${tf}.config.list_physical_devices("GPU"))`)
              : undefined,
        });
      } else if (
        q.startsWith("tensorflow.config.experimental.") &&
        DEPRECATED_EXPERIMENTAL.has(q.slice("tensorflow.config.experimental.".length))
      ) {
        const member = q.slice("tensorflow.config.experimental.".length);
        const replacement = DEPRECATED_EXPERIMENTAL.get(member)!;
        ctx.report({
          range: nodeRange(call),
          message: `${name} is a deprecated alias: use tf.config.${replacement}`,
          preview: true, // ecosystem check: the aliases still work in TF 2.x; hygiene a maintainer rarely changes
          fix: renameExperimental(call, replacement),
        });
      }
    }
    if (tf1) return;
    // config.gpu_options.allow_growth = True / .per_process_gpu_memory_fraction = 0.5
    for (const a of ctx.model.nodesOfType("assignment")) {
      const left = a?.childForFieldName("left");
      if (left?.type !== "attribute" || !ctx.model.frameworks.has("tensorflow")) continue;
      const attr = left.childForFieldName("attribute")?.text;
      const obj = left.childForFieldName("object");
      if (
        (attr !== "allow_growth" && attr !== "per_process_gpu_memory_fraction") ||
        obj?.type !== "attribute" ||
        obj.childForFieldName("attribute")?.text !== "gpu_options"
      )
        continue;
      ctx.report({
        range: nodeRange(a!.parent?.type === "expression_statement" ? a!.parent : a!),
        message: gpuOptionsMessage(left.text, attr),
      });
    }
  },
};

function gpuOptionsMessage(what: string, kw: string): string {
  return `${what} only configures a TF1 Session; eager TensorFlow 2 code never creates one, so the setting is ignored. Use ${kw === "allow_growth" ? "tf.config.experimental.set_memory_growth(gpu, True) for each GPU" : "tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=MB)])"} before the first op`;
}

/** The source text naming the `tensorflow` module in a call's callee (`tf` in `tf.test.is_gpu_available`), or the file's name for it. */
function tfName(ctx: RuleContext, call: SyntaxNode): string | null {
  let n: SyntaxNode | null = call.childForFieldName("function");
  while (n?.type === "attribute") n = n.childForFieldName("object");
  if (n?.type === "identifier" && ctx.model.symbols.get(n.text) === "tensorflow") return n.text;
  return namesFor(ctx.model, "tensorflow")[0] ?? null;
}

function replaceCall(ctx: RuleContext, call: SyntaxNode, build: (tf: string) => string): Fix | undefined {
  const tf = tfName(ctx, call);
  if (!tf) return undefined;
  const newText = build(tf);
  return { title: `Use ${newText}`, edits: [{ range: nodeRange(call), newText }], safe: false };
}

/** `tf.config.experimental.list_physical_devices` → `tf.config.list_physical_devices` (callee written as an attribute chain only). */
function renameExperimental(call: SyntaxNode, replacement: string): Fix | undefined {
  const fn = call.childForFieldName("function");
  const experimental = fn?.type === "attribute" ? fn.childForFieldName("object") : null;
  const config =
    experimental?.type === "attribute" && experimental.childForFieldName("attribute")?.text === "experimental"
      ? experimental.childForFieldName("object")
      : null;
  if (!fn || !config) return undefined;
  const newText = `${config.text}.${replacement}`;
  return { title: `Use ${newText}`, edits: [{ range: nodeRange(fn), newText }], safe: true };
}

/** `tf.config.gpu.set_per_process_memory_growth(True)` → a loop setting memory growth on every GPU. */
function growthLoopFix(ctx: RuleContext, call: SyntaxNode): Fix | undefined {
  const stmt = call.parent;
  const arg = callArgs(call).positional[0];
  const tf = tfName(ctx, call);
  if (
    !tf ||
    !arg ||
    stmt?.type !== "expression_statement" ||
    stmt.namedChildren.length !== 1 ||
    !ownsItsLines(ctx.model, stmt)
  )
    return undefined;
  const indent = indentOf(ctx.model, stmt);
  const unit = indent.includes("\t") ? "\t" : "    ";
  const eol = /\r\n/.test(ctx.model.text) ? "\r\n" : "\n";
  const v = ctx.model.symbols.has("gpu") || ctx.model.valueOf("gpu", Number.MAX_SAFE_INTEGER) ? "_gpu" : "gpu";
  const newText = `for ${v} in ${tf}.config.list_physical_devices("GPU"):${eol}${indent}${unit}${tf}.config.experimental.set_memory_growth(${v}, ${arg.text})`;
  return {
    title: "Set memory growth on every GPU with tf.config.experimental.set_memory_growth",
    edits: [{ range: nodeRange(stmt), newText }],
    safe: false,
  };
}
