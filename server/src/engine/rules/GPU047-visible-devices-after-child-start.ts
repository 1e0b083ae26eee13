import type { Rule, RuleContext } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { nodeRange, type EnvWriteEvent } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { callArgs, calleePath, readsAnyName } from "./shared/py";
import { SUBPROCESS_STARTS } from "./shared/childProcess";

/** Packages whose `Process` class (or a context's `ctx.Process`) starts a child at `.start()`. */
const PROCESS_PACKAGES = ["multiprocessing", "torch.multiprocessing", "multiprocess"];

/** Every startup-variable write anywhere in the file (module, functions, methods), by statement node id. */
function writesByStatement(ctx: RuleContext): Map<number, EnvWriteEvent> {
  const out = new Map<number, EnvWriteEvent>();
  for (const { statement, writes } of ctx.model.statementWrites()) {
    const w = writes.find((x) => x.form !== "putenv" && STARTUP_VARIABLES.includes(x.variable));
    if (w) out.set(statement.id, w);
  }
  return out;
}

/** The names a `for` statement binds (`for gpu in ...`, `for i, gpu in ...`). */
function loopNames(loop: SyntaxNode): Set<string> {
  const names = new Set<string>();
  const visit = (n: SyntaxNode | null) => {
    if (!n) return;
    if (n.type === "identifier") names.add(n.text);
    for (const c of n.namedChildren) visit(c);
  };
  visit(loop.childForFieldName("left"));
  return names;
}

/** The call of an expression or assignment statement (`p.start()`, `p = Popen(...)`), or null. */
function statementCall(stmt: SyntaxNode): SyntaxNode | null {
  const expr = stmt.type === "expression_statement" ? stmt.namedChildren[0] : null;
  if (!expr) return null;
  if (expr.type === "call") return expr;
  if (expr.type === "assignment") {
    const right = expr.childForFieldName("right");
    return right?.type === "call" ? right : null;
  }
  return null;
}

/**
 * Whether `stmt` starts a child process that copies the environment now: `p.start()` where `p` was
 * made by a `...Process(...)` call earlier in `body`, or a subprocess call without `env=`.
 */
function startsChild(
  ctx: RuleContext,
  stmt: SyntaxNode,
  body: readonly SyntaxNode[],
  usesProcessPackage: boolean,
): boolean {
  const call = statementCall(stmt);
  if (!call) return false;
  const path = calleePath(ctx.model, call);
  if (path && SUBPROCESS_STARTS.has(path)) return !callArgs(call).keywords.has("env");
  const fn = call.childForFieldName("function");
  if (!usesProcessPackage || fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "start")
    return false;
  const target = fn.childForFieldName("object");
  if (target?.type !== "identifier") return false;
  return body.some((s) => {
    if (s.startIndex >= stmt.startIndex || s.type !== "expression_statement") return false;
    const a = s.namedChildren[0];
    if (a?.type !== "assignment" || a.childForFieldName("left")?.text !== target.text) return false;
    const made = a.childForFieldName("right");
    const callee = made?.type === "call" ? made.childForFieldName("function") : null;
    const last = callee?.type === "attribute" ? callee.childForFieldName("attribute")?.text : callee?.text;
    return last === "Process";
  });
}

/** GPU047: a startup variable written in a loop right after the child it was meant for started. */
export const rule: Rule = {
  meta: {
    code: "GPU047",
    name: "visible-devices-after-child-start",
    severity: "warning",
    fixable: false,
    // A startup-variable write (by name) and a child start: a `Process` (its `.start()`) or `subprocess`.
    trigger: (t) => t.envWith(STARTUP_VARIABLES) && (t.has("Process") || t.hasWord("subprocess")),
    docs: {
      what: "Finds, in the body of a `for` loop, a write of `CUDA_VISIBLE_DEVICES` (or another startup variable) whose value depends on the loop variable and that comes after the statement that started a child process in the same iteration: `p.start()` of a `multiprocessing`/`torch.multiprocessing` `Process` made in the loop, or a `subprocess.Popen/run/call` without `env=`. Only writes directly in the loop body; not a write that restores a saved value, and not when the body wrote the variable before the start too.",
      follows:
        "Startup-variable writes anywhere in the file (functions and methods included) that stand directly in a `for` loop's body, with the statements before them in that body: `.start()` of a `Process` made earlier in the body, or a `subprocess` call without `env=`. Not followed: writes or starts in blocks nested in the loop body or in functions it calls, processes made outside the loop, and pools.",
      why: "A child process takes its copy of the environment when it starts: `Process.start()` (spawn passes the parent's `os.environ`; fork copies the whole process) or `subprocess.Popen(...)` (the `env` argument defaults to the parent's environment). A write after the start reaches only the children started later, so child k runs with the value meant for child k-1 and the first child with the parent's own: every worker lands on the wrong GPU, the first on all of them. Python documentation: `subprocess.Popen` 'If env is not None, it must be a mapping that defines the environment variables for the new process; these are used instead of the default behavior of inheriting the current process' environment'; `os.environ` 'changes to the environment made by modifying os.environ ... affect subprocesses started with os.system(), popen() or fork() and execv()'.",
      example:
        'import multiprocessing as mp\nimport os\n\nfor gpu in range(4):\n    p = mp.Process(target=work)\n    p.start()\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)  # GPU047: p already started\n',
      fix: 'import multiprocessing as mp\nimport os\n\nfor gpu in range(4):\n    p = mp.Process(target=work)\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n    p.start()\n',
      whenNotToCare:
        "When the write is deliberately for the next child (an off-by-one schedule nobody would write on purpose), or when each child sets its own GPU from an argument.",
      references: [
        "Python documentation, os.environ: 'Such changes to the environment affect subprocesses started with os.system(), popen() or fork() and execv()'",
        "Python documentation, subprocess.Popen: env=None means the child inherits the current process' environment",
        "Python documentation, multiprocessing: start methods spawn (a fresh interpreter started with the parent's environment) and fork (a copy of the parent)",
      ],
    },
  },
  check(ctx) {
    const writes = writesByStatement(ctx);
    if (writes.size === 0) return;
    const usesProcessPackage = [...ctx.model.symbols.values()].some((m) =>
      PROCESS_PACKAGES.some((p) => m === p || m.startsWith(p + ".")),
    );
    for (const w of writes.values()) {
      const stmt = w.statement!;
      const block = stmt.parent;
      const loop = block?.type === "block" ? block.parent : null;
      if (loop?.type !== "for_statement" || loop.childForFieldName("body")?.id !== block!.id) continue;
      if (!readsAnyName(w.value, loopNames(loop))) continue;
      const body = block!.namedChildren.filter((c): c is SyntaxNode => !!c);
      const before = body.filter((s) => s.startIndex < stmt.startIndex);
      const start = before.find((s) => startsChild(ctx, s, body, usesProcessPackage));
      if (!start) continue;
      if (before.some((s) => s.startIndex < start.startIndex && writes.get(s.id)?.variable === w.variable)) continue;
      ctx.report({
        range: w.range,
        message: `${w.variable} is set after the child process started on ${ctx.where(start.startPosition.row)} (\`${start.text.split("\n")[0].trim()}\`): the child copied the environment when it started, so it never sees this value (the next child gets it instead); set it before starting the child`,
        related: [
          { range: nodeRange(start), message: "the child process starts here, with the environment as it is now" },
        ],
      });
    }
  },
};
