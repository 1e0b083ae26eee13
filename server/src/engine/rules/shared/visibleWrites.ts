/**
 * The CUDA_VISIBLE_DEVICES writes a Python file makes whenever it runs as started (GPU063: under a
 * Slurm job's GPUs; GPU064: under the value a project script starts it with).
 */
import type { RuleContext } from "../../rule";
import { envWrites } from "../../rule";
import type { EnvWriteEvent } from "../../python/events";
import { enclosingFunction, type SyntaxNode } from "../../python/parser";
import { branchesOf, inOtherBranch, testsMembership } from "./py";
import { isMainGuard } from "../../python/walker";

/**
 * Whether a statement sits directly in the body of the module's `if __name__ == "__main__":` (not
 * in its `else`, nor in a block inside it): it runs whenever the file is started as a script.
 */
function inMainGuardBody(stmt: SyntaxNode | null): boolean {
  const block = stmt?.parent;
  const guard = block?.parent;
  return (
    block?.type === "block" &&
    guard?.type === "if_statement" &&
    guard.parent?.type === "module" &&
    guard.childForFieldName("consequence")?.id === block.id &&
    isMainGuard(guard)
  );
}

/**
 * Whether a statement in `stmt`'s place runs whenever the code around it does: directly at module
 * level, in the body of the `__main__` block, or directly in a function body (the walk's events
 * hold only the functions it inlined on the started path).
 */
function onStartedPath(stmt: SyntaxNode): boolean {
  const block = stmt.parent;
  return (
    block?.type === "module" ||
    inMainGuardBody(stmt) ||
    (block?.type === "block" && block.parent?.type === "function_definition")
  );
}

/** The `if` statement one of whose branches (its body, an `elif`, the `else`) holds `stmt` directly, or null. */
function branchIf(stmt: SyntaxNode): SyntaxNode | null {
  const block = stmt.parent;
  const owner = block?.type === "block" ? block.parent : null;
  if (owner?.type === "if_statement") return owner;
  if ((owner?.type === "elif_clause" || owner?.type === "else_clause") && owner.parent?.type === "if_statement")
    return owner.parent;
  return null;
}

/**
 * Whether every pass through the `if` statement writes: it has an `else`, and each branch holds
 * one of the `writing` statements directly, or an `if` of which the same holds.
 */
function everyBranchWrites(stmt: SyntaxNode, writing: ReadonlySet<number>): boolean {
  const branches = branchesOf(stmt);
  if (!branches.some((b) => b.type === "else_clause")) return false;
  return branches.every((b) => {
    const block = b.type === "block" ? b : b.namedChildren.find((c) => c?.type === "block");
    return !!block?.namedChildren.some(
      (s) => !!s && (writing.has(s.id) || (s.type === "if_statement" && everyBranchWrites(s, writing))),
    );
  });
}

/**
 * Whether the nested write statement `stmt` lies in branches of `if` statements that write on
 * every path (`if args.gpu: ... = args.gpu` / `else: ... = "0"`), the outermost of them where a
 * statement runs whenever the file does: whichever branch runs replaces the inherited value.
 */
function writesOnEveryPath(stmt: SyntaxNode, writing: ReadonlySet<number>): boolean {
  for (let s = stmt; ;) {
    const owner = branchIf(s);
    if (!owner || !everyBranchWrites(owner, writing)) return false;
    if (onStartedPath(owner)) return true;
    s = owner;
  }
}

/**
 * The writes that replace CUDA_VISIBLE_DEVICES whenever the module's started path runs: on the
 * module's timeline (top level, the body of the `__main__` block, the functions, constructors and
 * methods it calls), not inside another block (`if`, `try`, `with`, a loop), not `setdefault`
 * (which keeps a set value), and not an empty or `-1` value (that hides the GPUs on purpose,
 * GPU003's business). With `everyBranch`, also the writes in the branches of an `if`/`elif`/`else`
 * that writes in each branch (GPU063: Slurm's value is replaced on every path).
 */
export function overwrites(ctx: RuleContext, opts: { everyBranch?: boolean } = {}): EnvWriteEvent[] {
  const replacing = envWrites(ctx.model).filter(
    (w) =>
      w.variable === "CUDA_VISIBLE_DEVICES" &&
      w.form !== "setdefault" &&
      w.value !== null &&
      w.literal?.trim() !== "" &&
      w.literal?.trim() !== "-1",
  );
  const writing = new Set(replacing.flatMap((w) => (w.statement ? [w.statement.id] : [])));
  return replacing.filter(
    (w) =>
      !w.nested ||
      inMainGuardBody(w.statement) ||
      (!!opts.everyBranch && !!w.statement && writesOnEveryPath(w.statement, writing)),
  );
}

/**
 * Whether the file may keep a value its environment already holds for one of `prefixes`' variables
 * (a name, or a prefix such as `SLURM_`): it reads one that is not CUDA_VISIBLE_DEVICES read after
 * one of `writes` in the same function, not in another branch of an `if` (or both at module level; after such a write, which runs
 * whenever the file does, the read sees the file's own value: `print(os.environ["CUDA_VISIBLE_DEVICES"])`
 * after the write), or tests one with `in` (`if "SLURM_JOB_ID" not in os.environ:`). Such a file may
 * leave the inherited value alone on a path the model does not follow.
 */
export function mayKeepSetValue(
  ctx: RuleContext,
  writes: readonly EnvWriteEvent[],
  prefixes: readonly string[],
): boolean {
  const named = (v: string) => prefixes.some((p) => (p.endsWith("_") ? v.startsWith(p) : v === p));
  const readsOwnValue = (read: SyntaxNode) =>
    writes.some(
      (w) =>
        w.statement !== null &&
        read.startIndex >= w.statement.endIndex &&
        !inOtherBranch(read, w.statement) &&
        enclosingFunction(read)?.id === enclosingFunction(w.statement)?.id,
    );
  for (const e of ctx.model.events) {
    if (e.kind !== "envRead" || !named(e.variable)) continue;
    if (e.variable !== "CUDA_VISIBLE_DEVICES" || !readsOwnValue(e.node)) return true;
  }
  return testsMembership(ctx.model, prefixes, named);
}
