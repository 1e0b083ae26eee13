/**
 * The machine model a request reads (hovers, inlay hints, the "use the selected GPUs" action): the
 * one kept with the document's (or notebook's) last lint while it is of the current version, else a
 * fresh analysis whose tree is deleted after.
 */
import { analyzePython } from "../engine/lint";
import { cellInJoined, type CellStart } from "../engine/notebook";
import type { MachineModel } from "../engine/machineHelp";
import { fileTooLarge } from "../engine/limits";
import type { RunningKernelFacts } from "../../../common/src/kernel/runningKernel";
import type { ServerContext } from "./context";

type Position = { line: number; character: number };
type Range = { start: Position; end: Position };

/** A position in a cell moved to the joined text (`by`: the cell's first line there), or back (`-by`). */
export const shifted = (p: Position, by: number) => ({ line: p.line + by, character: p.character });
/** {@link shifted} for both ends of a range. */
export const shiftedRange = (r: Range, by: number) => ({ start: shifted(r.start, by), end: shifted(r.end, by) });
/** "line N" of a 0-based line of a plain Python document. */
export const lineWhere = (l: number) => `line ${l + 1}`;

/**
 * Runs `f` on the model of a plain Python document (not notebook cells): the one kept with the
 * last lint while that lint is of the document's version, else a fresh analysis (its tree deleted after).
 */
export function withModel<T>(ctx: ServerContext, uri: string, f: (model: MachineModel) => T): T | null {
  const { documents, notebooks, trees, settings } = ctx.session;
  const doc = documents.get(uri);
  if (!doc || doc.languageId !== "python" || notebooks.findNotebookDocumentForCell(uri)) return null;
  // The last lint's model while it is of this version (hovers, inlay hints and the light bulb ask
  // at every cursor move and edit: a fresh analysis of a 5,000-line file took ~100 ms each).
  const kept = trees.modelOf(uri, doc.version);
  if (kept) return f(kept);
  if (fileTooLarge(doc.getText(), settings.maxFileSizeKB)) return null;
  const model = analyzePython(doc.getText(), ctx.lintOptions(uri));
  try {
    return f(model);
  } finally {
    model.tree.delete();
  }
}

/**
 * A notebook cell's machine help: `f` gets the model of the notebook's joined code cells (the last
 * lint's while it is of the notebook's version, else a fresh analysis), the cell's place in the
 * joined text, the "cell K, line N" of a joined line, the notebook's GPU001 lines (joined) and its
 * running kernel. Null for a URI that is no code cell of an open notebook.
 */
export function withCellModel<T>(
  ctx: ServerContext,
  cellUri: string,
  f: (
    model: MachineModel,
    start: CellStart,
    where: (line: number) => string,
    noEffect: ReadonlySet<number> | undefined,
    kernel: RunningKernelFacts | undefined,
  ) => T,
): T | null {
  const { notebooks, trees, settings } = ctx.session;
  const nb = notebooks.findNotebookDocumentForCell(cellUri);
  if (!nb) return null;
  const { cells, uris } = ctx.cellsOf(nb);
  const place = cellInJoined(cells, uris.indexOf(cellUri), trees.analysisOf(nb.uri, nb.version));
  if (!place) return null;
  const open = ctx.session.get(nb.uri);
  const noEffect = open?.noEffect?.lines;
  const kernel = open?.kernel;
  const kept = trees.modelOf(nb.uri, nb.version);
  if (kept) return f(kept, place.start, place.where, noEffect, kernel);
  if (fileTooLarge(place.joined, settings.maxFileSizeKB)) return null;
  const model = analyzePython(place.joined, ctx.lintOptions(nb.uri), place.magics);
  try {
    return f(model, place.start, place.where, noEffect, kernel);
  } finally {
    model.tree.delete();
  }
}
