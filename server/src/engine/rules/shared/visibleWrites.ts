/**
 * The CUDA_VISIBLE_DEVICES writes a Python file makes whenever it runs as started (GPU063: under a
 * Slurm job's GPUs; GPU064: under the value a project script starts it with).
 */
import type { RuleContext } from "../../rule";
import { envWrites } from "../../rule";
import type { EnvWriteEvent } from "../../python/events";
import { enclosingFunction, type SyntaxNode } from "../../python/parser";
import { testsMembership } from "./py";
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
 * The writes that replace CUDA_VISIBLE_DEVICES whenever the module's started path runs: on the
 * module's timeline (top level, the body of the `__main__` block, the functions, constructors and
 * methods it calls), not inside another block (`if`, `try`, `with`, a loop), not `setdefault`
 * (which keeps a set value), and not an empty or `-1` value (that hides the GPUs on purpose,
 * GPU003's business).
 */
export function overwrites(ctx: RuleContext): EnvWriteEvent[] {
  return envWrites(ctx.model).filter(
    (w) =>
      w.variable === "CUDA_VISIBLE_DEVICES" &&
      (!w.nested || inMainGuardBody(w.statement)) &&
      w.form !== "setdefault" &&
      w.value !== null &&
      w.literal?.trim() !== "" &&
      w.literal?.trim() !== "-1",
  );
}

/**
 * Whether the file may keep a value its environment already holds for one of `prefixes`' variables
 * (a name, or a prefix such as `SLURM_`): it reads one that is not CUDA_VISIBLE_DEVICES read after
 * one of `writes` in the same function (or both at module level; after such a write, which runs
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
        enclosingFunction(read)?.id === enclosingFunction(w.statement)?.id,
    );
  for (const e of ctx.model.events) {
    if (e.kind !== "envRead" || !named(e.variable)) continue;
    if (e.variable !== "CUDA_VISIBLE_DEVICES" || !readsOwnValue(e.node)) return true;
  }
  return testsMembership(ctx.model, prefixes, named);
}
