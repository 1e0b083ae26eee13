/**
 * `textDocument/inlayHint` (setting gpuPilot.inlayHints, with GPUs in the inventory): the GPU a
 * device string or a visible-devices write names, after the document's last GPU001 lines and a
 * notebook's running kernel (its OpenDocument, session.ts).
 */
import type { InlayHint } from "vscode-languageserver/node";
import { machineInlayHints } from "../engine/machineHelp";
import type { ServerContext } from "./context";
import { lineWhere, shifted, shiftedRange, withCellModel, withModel } from "./models";

/** Registers the inlay hint handler (the GPU a device string or a visible-devices write names). */
export function registerInlayHints(ctx: ServerContext): void {
  const { connection, session } = ctx;
  connection.languages.inlayHint.on(async (params): Promise<InlayHint[]> => {
    await ctx.engineReady;
    const { settings, inventory } = session;
    if (!settings.inlayHints || !inventory.gpus?.length) return [];
    const hints =
      withModel(ctx, params.textDocument.uri, (m) =>
        machineInlayHints(m, params.range, inventory, lineWhere, session.get(params.textDocument.uri)?.noEffect?.lines),
      ) ??
      withCellModel(ctx, params.textDocument.uri, (m, start, where, noEffect, kernel) => {
        // The asked range, within the cell, in the joined text; the hints back in the cell.
        const last = start.line + start.lines - 1;
        const range = shiftedRange(params.range, start.line);
        if (range.end.line > last) range.end = { line: last, character: Number.MAX_SAFE_INTEGER };
        return machineInlayHints(m, range, inventory, where, noEffect, true, kernel)
          .filter((h) => h.position.line >= start.line && h.position.line <= last)
          .map((h) => ({ ...h, position: shifted(h.position, -start.line) }));
      });
    return (
      hints?.map((h) => ({ position: h.position, label: ` ${h.label}`, tooltip: h.tooltip, paddingLeft: true })) ?? []
    );
  });
}
