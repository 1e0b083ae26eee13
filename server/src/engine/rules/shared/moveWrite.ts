/** The quick fix shared by GPU001 and GPU002: move the write above the first framework import. */
import type { RuleContext } from "../../rule";
import type { Fix } from "../../types";
import type { EnvWriteEvent } from "../../python/events";
import { firstFrameworkImport } from "../../python/timeline";
import { moveAboveEdits } from "../../fixes";

/** The fix, or null when the write cannot be moved without changing the program (see moveAboveEdits). */
export function moveWriteFix(ctx: RuleContext, write: EnvWriteEvent): Fix | null {
  const anchor = firstFrameworkImport(ctx.model);
  if (!anchor) return null;
  // In a notebook, ctx.where names the cell ("cell 2, line 1"): comments move only within the write's cell.
  const cellOf = (row: number) => ctx.where(row).split(",")[0];
  const move = moveAboveEdits(
    ctx.model,
    write,
    anchor.node,
    !ctx.notebook,
    ctx.notebook ? (a, b) => cellOf(a) === cellOf(b) : undefined,
  );
  if (!move) return null;
  const where = anchor.node.text.split("\n")[0];
  return {
    title: `Move the ${write.variable} write above \`${where}\``,
    edits: move.edits,
    safe: move.safe,
    ...(ctx.notebook ? { note: "Restart the kernel: it keeps the CUDA state it already initialised." } : {}),
  };
}
