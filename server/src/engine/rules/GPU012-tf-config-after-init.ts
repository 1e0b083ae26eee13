import type { PythonRule, RuleContext } from "../rule";
import { snippet } from "../rule";
import type { SyntaxNode } from "../python/parser";
import type { InitEvent } from "../python/events";
import { nodeRange } from "../python/events";
import { timelineCall } from "../python/timeline";
import { TF_CONFIG_INIT, TF_DEVICE_CONFIG, TF_NON_INIT_PREFIXES } from "../frameworks";
import { eolOf, lineStarts, topLevelStatement } from "../fixes";
import type { Fix, TextEdit } from "../types";
import {
  callArgs,
  calleePath,
  contains,
  enclosingFunction,
  intLiteral,
  namesBound,
  namesRead,
  ownsItsLines,
  removeStatement,
  startsItsLine,
} from "./shared/py";

const MEMORY_GROWTH = "tensorflow.config.experimental.set_memory_growth";
/**
 * TensorFlow calls the timeline counts as initialising but that only read build information or
 * files: scripts often print them before configuring devices, so they do not trigger GPU012.
 */
const TF_BUILD_QUERIES = [
  "tensorflow.test.is_built_with_cuda",
  "tensorflow.test.is_built_with_gpu_support",
  "tensorflow.test.is_built_with_rocm",
  "tensorflow.sysconfig.",
  "tensorflow.io.gfile.",
  "tensorflow.version.",
];

/** GPU012: TensorFlow device configuration after the runtime initialised; memory growth on some GPUs only. */
export const rule: PythonRule = {
  meta: {
    code: "GPU012",
    name: "tf-config-after-init",
    severity: "error",
    fixable: true,
    fixSafety: "unsafe",
    // tensorflow or keras in a code word (TextProbe.codeWord): the config call resolves through them.
    trigger: (t) => t.codeWord("tensorflow", false) || t.codeWord("keras", false),
    docs: {
      what: 'Finds `tf.config.set_visible_devices`, `tf.config.experimental.set_memory_growth`, `tf.config.set_logical_device_configuration` and `tf.config.experimental.set_virtual_device_configuration` called after something initialised the TensorFlow runtime (any op such as `tf.constant`, model construction, `tf.config.list_logical_devices`, `tf.test.is_gpu_available`): error. Also memory growth set on some GPUs but not all (`set_memory_growth(gpus[0], True)` with no loop and no `set_visible_devices` that narrows the GPUs; one that hides them all, `set_visible_devices([], "GPU")`, does not count): warning.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each device-configuration call against the TensorFlow work that ran before it; the memory-growth check reads every `set_memory_growth` and `set_visible_devices` call of the file. Default parameter values count where the `def` runs (at import for a module's or a class's functions). The project's own modules count where the file imports them: an import whose module starts TensorFlow when imported (its top level, a class body, a default value such as `batch_size=tf.constant(1)`, followed through the modules it imports) comes before the configuration calls after it; the message names the line that starts it. Not followed: configuration calls in functions the module never calls or in other modules. Preview (warning): a function of another project module that configures the devices on every call (the configuration call a statement of its own body, no `return` or `raise` before it) called once per job: in a loop of this file that also runs TensorFlow, or as a statement of a module-level function that runs TensorFlow after it and that this file calls in a loop; the second call comes after the first job started TensorFlow. Reported on the helper's call, with the configuration call as related information. Not followed there: helpers of this file, methods, loops in another module, a helper that checks whether it already ran.",
      why: "From TensorFlow's documentation (TensorFlow was not installed on the measured machine, so this is documented, not measured): these functions raise `RuntimeError` once the runtime is initialised ('Physical devices cannot be modified after being initialized' / 'Visible devices cannot be modified after being initialized'), and `tf.config.list_physical_devices` exists precisely to query devices before that point. Scripts often wrap the call in `try/except RuntimeError: print(e)`, so the setting is silently lost and TensorFlow maps nearly all GPU memory. TensorFlow also refuses to start when memory growth differs between visible GPUs ('Memory growth cannot differ between GPU devices'), so setting it for `gpus[0]` alone breaks on any machine with two GPUs.",
      example:
        'import tensorflow as tf\n\na = tf.constant([1.0, 2.0])  # initialises the runtime\ngpus = tf.config.list_physical_devices("GPU")\nfor g in gpus:\n    tf.config.experimental.set_memory_growth(g, True)  # GPU012: RuntimeError\n',
      fix: 'import tensorflow as tf\n\ngpus = tf.config.list_physical_devices("GPU")\nfor g in gpus:\n    tf.config.experimental.set_memory_growth(g, True)\na = tf.constant([1.0, 2.0])\n',
      whenNotToCare:
        "Never for the error. The partial memory-growth warning does not matter on a machine (or container) that exposes exactly one GPU.",
      references: [
        "TensorFlow documentation (documented, not measured): tf.config.experimental.set_memory_growth and tf.config.set_visible_devices — 'Raises: RuntimeError: Runtime is already initialized'",
        "TensorFlow guide 'Use a GPU', Limiting GPU memory growth: configure devices before any GPU has been initialised",
        "TensorFlow source, eager/context.py: 'Memory growth cannot differ between GPU devices'",
      ],
    },
  },
  check(ctx) {
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    const config = calls.filter((c) => TF_DEVICE_CONFIG.has(calleePath(ctx.model, c) ?? ""));
    for (const call of config) {
      const tc = timelineCall(ctx.model, call);
      const init = tc ? firstTfInit(ctx, tc.at) : null;
      if (!init) continue;
      const name = calleePath(ctx.model, call)!.replace(/^tensorflow\./, "tf.");
      ctx.report({
        range: nodeRange(call),
        message: `${name}(...) runs after TensorFlow initialised its devices at \`${snippet(init.node)}\` (${ctx.where(init.node.startPosition.row)}${init.note ? `: ${init.note}` : ""}): it raises RuntimeError "cannot be modified after being initialized", so the setting is lost; configure devices before the first op`,
        related: [
          { range: nodeRange(init.node), message: `TensorFlow runtime initialised here by \`${snippet(init.node)}\`` },
        ],
        fix: moveBlockFix(ctx, call, init),
      });
    }
    partialGrowth(ctx, calls);
    if (ctx.preview) perJobHelpers(ctx, calls);
  },
};

/** A TensorFlow call that starts the runtime, as the timeline counts them (walker.ts), build queries and configuration aside. */
function startsTf(path: string): boolean {
  if (!path.startsWith("tensorflow.")) return false;
  if (TF_CONFIG_INIT.includes(path) || path === "tensorflow.test.is_gpu_available") return true;
  if (TF_NON_INIT_PREFIXES.some((p) => path.startsWith(p))) return false;
  return !TF_BUILD_QUERIES.some((p) => path === p || (p.endsWith(".") && path.startsWith(p)));
}

/** The loop (`for`/`while`) around `n` in its own function (or the module), or null. */
function loopAround(n: SyntaxNode): SyntaxNode | null {
  for (let p = n.parent; p && p.type !== "function_definition" && p.type !== "class_definition"; p = p.parent)
    if (p.type === "for_statement" || p.type === "while_statement") return p;
  return null;
}

/**
 * Preview: a project function that configures TensorFlow's devices on every call
 * (ProjectLookup.callableTfConfig), called once per job: in a loop that also runs TensorFlow, or as
 * a statement of a module-level function that runs TensorFlow after it and is itself called in a
 * loop of this module. From the second pass the runtime is initialised and the call raises.
 */
function perJobHelpers(ctx: RuleContext, calls: SyntaxNode[]): void {
  const project = ctx.project;
  if (!project?.callableTfConfig) return;
  const tfCalls = calls.filter((c) => startsTf(calleePath(ctx.model, c) ?? ""));
  if (!tfCalls.length) return;
  for (const call of calls) {
    const path = calleePath(ctx.model, call);
    if (!path || path.startsWith("tensorflow.") || !project.isProjectFunction?.(path)) continue;
    const fn = enclosingFunction(call);
    let loop = loopAround(call);
    let work = loop ? tfCalls.find((t) => contains(loop!, t) && t.id !== call.id) : undefined;
    let via: string | null = null;
    if (!loop && fn && fn.parent?.type === "module" && call.parent?.parent?.id === fn.childForFieldName("body")?.id) {
      // A statement of a module-level function that runs TensorFlow after it, called in a loop here.
      work = tfCalls.find((t) => contains(fn, t) && t.startIndex > call.endIndex);
      const name = fn.childForFieldName("name")?.text ?? "";
      const outer = work
        ? calls.find((c) => c.childForFieldName("function")?.text === name && loopAround(c))
        : undefined;
      loop = outer ? loopAround(outer) : null;
      via = outer ? `${name}() (${ctx.where(outer.startPosition.row)})` : null;
    }
    if (!loop || !work) continue;
    const helper = project.callableTfConfig(path);
    if (!helper) continue;
    const name = path.slice(path.lastIndexOf(".") + 1);
    ctx.report({
      range: nodeRange(call),
      preview: true,
      message: `${name}() runs ${helper.call}(...) (${helper.where}) on every call, and it is called once per job: ${via ? `by ${via}, which runs TensorFlow after it` : "in a loop that runs TensorFlow"} (\`${snippet(work)}\` at ${ctx.where(work.startPosition.row)}), in the loop at ${ctx.where(loop.startPosition.row)}; from the second pass the runtime is initialised and ${helper.call} raises RuntimeError "cannot be modified after being initialized" (or, caught, leaves the devices as they were); configure the devices once, before the loop`,
      severity: "warning",
      related: [
        {
          range: { start: { line: helper.line - 1, character: 0 }, end: { line: helper.line - 1, character: 0 } },
          message: "the device configuration",
          file: helper.file,
        },
      ],
    });
  }
}

/** The first TensorFlow-initialising event among the first `at` timeline events, build queries excepted. */
function firstTfInit(ctx: RuleContext, at: number): InitEvent | null {
  for (const e of ctx.model.events.slice(0, at)) {
    if (e.kind !== "init" || e.framework !== "tensorflow") continue;
    const q = e.node.type === "call" ? (calleePath(ctx.model, e.node) ?? "") : "";
    if (!TF_BUILD_QUERIES.some((p) => q === p || (p.endsWith(".") && q.startsWith(p)))) return e;
  }
  return null;
}

/** Warns when memory growth is set for constant device indices only, with no loop over the GPUs and no set_visible_devices that narrows them (one that hides every GPU does not). */
function partialGrowth(ctx: RuleContext, calls: SyntaxNode[]): void {
  const growth = calls.filter((c) => calleePath(ctx.model, c) === MEMORY_GROWTH);
  if (!growth.length) return;
  // A call that hides every GPU (`set_visible_devices([], "GPU")`, a --cpu branch) leaves no GPU
  // whose growth could differ; it does not narrow the GPUs the growth call sees (careless#37).
  const hidesAll = (c: SyntaxNode) => {
    const devices = callArgs(c).positional[0] ?? callArgs(c).keywords.get("devices");
    return (devices?.type === "list" || devices?.type === "tuple") && devices.namedChildren.length === 0;
  };
  const restricted = calls.some(
    (c) =>
      /^tensorflow\.config\.(experimental\.)?set_visible_devices$/.test(calleePath(ctx.model, c) ?? "") && !hidesAll(c),
  );
  if (restricted) return;
  const indexOf = (c: SyntaxNode): number | null => {
    let dev: SyntaxNode | null | undefined = callArgs(c).positional[0] ?? callArgs(c).keywords.get("device");
    if (dev?.type === "identifier") dev = ctx.model.valueOf(dev.text, dev.startIndex);
    return dev?.type === "subscript" ? intLiteral(dev.childForFieldName("subscript")) : null;
  };
  const inLoop = (c: SyntaxNode) => {
    for (let p = c.parent; p; p = p.parent)
      if (["for_statement", "while_statement", "list_comprehension", "generator_expression"].includes(p.type))
        return true;
    return false;
  };
  if (growth.some((c) => inLoop(c) || indexOf(c) === null)) return;
  const indices = [...new Set(growth.map(indexOf))].sort();
  const c = growth[0];
  ctx.report({
    range: nodeRange(c),
    severity: "warning",
    message: `Memory growth is set for GPU index ${indices.join(", ")} only: TensorFlow refuses to start when memory growth differs between visible GPUs ("Memory growth cannot differ between GPU devices"); set it in a loop over tf.config.list_physical_devices("GPU"), or restrict the GPUs with tf.config.set_visible_devices first`,
  });
}

/**
 * Moves the module-level statement holding the config call above the statement of the first
 * initialising call, with the statements in between that it needs (e.g. `gpus = tf.config.list_physical_devices("GPU")`).
 * Null when either sits in a function, a needed statement initialises TensorFlow itself, or a needed name is bound only in between.
 */
function moveBlockFix(ctx: RuleContext, call: SyntaxNode, init: InitEvent): Fix | undefined {
  if (enclosingFunction(call) || enclosingFunction(init.node)) return undefined;
  const target = topLevelStatement(init.node);
  const stmt = topLevelStatement(call);
  if (target.startIndex >= stmt.startIndex || !startsItsLine(ctx.model, target)) return undefined;
  const inits = ctx.model.events.filter((e): e is InitEvent => e.kind === "init" && e.framework === "tensorflow");
  const initialises = (s: SyntaxNode) => inits.some((e) => contains(s, e.node));
  const siblings = ctx.model.tree.statements.filter((s) => s.type !== "comment");
  const from = siblings.findIndex((s) => s.id === target.id);
  const to = siblings.findIndex((s) => s.id === stmt.id);
  if (from < 0 || to < 0 || initialises(stmt)) return undefined;
  const moved: SyntaxNode[] = [stmt];
  const bound = namesBound(stmt);
  const needs = new Set([...namesRead(stmt)].filter((n) => !bound.has(n)));
  const stay: SyntaxNode[] = [];
  for (let i = to - 1; i >= from; i--) {
    const s = siblings[i];
    const b = namesBound(s);
    if (i > from && [...b].some((n) => needs.has(n))) {
      if (initialises(s)) return undefined;
      moved.unshift(s);
      for (const n of b) needs.delete(n);
      for (const n of namesRead(s)) if (!b.has(n)) needs.add(n);
    } else stay.push(s);
  }
  for (const s of stay) if ([...namesBound(s)].some((n) => needs.has(n))) return undefined;
  if (!moved.every((s) => ownsItsLines(ctx.model, s))) return undefined;
  const starts = lineStarts(ctx.model.text);
  const eol = eolOf(ctx.model.text);
  const lines = (s: SyntaxNode) => {
    const end = s.endPosition.row + 1 < starts.length ? starts[s.endPosition.row + 1] : ctx.model.text.length;
    const t = ctx.model.text.slice(starts[s.startPosition.row], end);
    return /[\r\n]$/.test(t) ? t : t + eol;
  };
  const at = { line: target.startPosition.row, character: 0 };
  const edits: TextEdit[] = [{ range: { start: at, end: at }, newText: moved.map(lines).join("") }];
  for (const s of moved) {
    const removal = removeStatement(ctx.model, s);
    if (!removal) return undefined;
    edits.push(removal);
  }
  return { title: `Move the device configuration above \`${target.text.split("\n")[0]}\``, edits, safe: false };
}
