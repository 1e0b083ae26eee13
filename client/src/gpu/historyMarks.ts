/**
 * The GPU History panel's run markers and its "All GPUs" chart, as pure functions (no `vscode`, no
 * DOM; the webview client/webview/history.ts draws what they return, and the unit tests check them):
 *
 * - {@link marksForGpu}: the runs whose markers belong on one GPU's chart (the GPUs the run was given).
 * - {@link layoutMarkLabels}: where each marker's label goes so that no two labels overlap: stacked
 *   on rows, and a label that fits on none of the rows is left for the hover (see {@link MarkLabelSlot}).
 * - {@link combineGpus}: every GPU's utilisation on one time axis, and the memory used by all of them.
 */
import type { GpuSeries } from "./history";

/** A run as the History panel marks it (see historyPanel.ts). */
export interface RunMarkLike {
  /**
   * Lower-case UUIDs of the physical GPUs the run was given (a MIG instance's parent GPU), from the
   * CUDA_VISIBLE_DEVICES it started with; empty when not known (a Slurm run on another node, no
   * inventory yet): such a run is marked on the "All GPUs" chart only.
   */
  gpus: readonly string[];
}

/** The runs of `runs` that were given the GPU `uuid` (compared without case), in their order. */
export function marksForGpu<R extends RunMarkLike>(runs: readonly R[], uuid: string): R[] {
  const id = uuid.toLowerCase();
  return runs.filter((r) => r.gpus.some((g) => g.toLowerCase() === id));
}

/** A marker's label to place: the marker line's x and the label's measured width, both in canvas px. */
export interface MarkLabelInput {
  /** The marker line's x, canvas px. */
  x: number;
  /** The label's width as measured (text plus its background's padding), canvas px. */
  width: number;
}

/** Where one label goes (same order as the input). */
export interface MarkLabelSlot {
  /** False: no row had room; the label is shown only while the cursor is near its marker. */
  visible: boolean;
  /** Row from the top of the plot, 0 first (meaningful only when visible). */
  row: number;
  /** The label's left edge, canvas px: right of the line, or left of it where it would leave the plot. */
  left: number;
}

/** Options of {@link layoutMarkLabels}, all in canvas px except `maxRows`. */
export interface MarkLabelOptions {
  /** The plot's left and right edges, canvas px. */
  plotLeft: number;
  plotRight: number;
  /** Space between a line and its label, canvas px. */
  pad: number;
  /** Least space between two labels on one row, canvas px. */
  gap: number;
  /** Rows of labels at most (the rest are hover-only). */
  maxRows: number;
}

/**
 * Places marker labels so that no two drawn labels overlap. Each label sits right of its line
 * (`x + pad`), or left of it (`x - pad - width`) where it would run past `plotRight`, clamped to
 * `plotLeft`; labels are taken in x order (ties in input order) and each goes on the first row
 * whose last label ends at least `gap` before it starts; one that fits on none of the `maxRows` rows
 * is not drawn ({@link MarkLabelSlot.visible} false: the webview shows it on hover).
 *
 * For example, a 2 s run at 1 px/s with 80 px labels: start at x 100 → row 0, end at x 102 → row 1.
 * @returns one slot per input, in input order.
 */
export function layoutMarkLabels(labels: readonly MarkLabelInput[], o: MarkLabelOptions): MarkLabelSlot[] {
  const slots: MarkLabelSlot[] = labels.map((l) => {
    const right = l.x + o.pad;
    const left = right + l.width > o.plotRight ? l.x - o.pad - l.width : right;
    return { visible: false, row: 0, left: Math.max(o.plotLeft, left) };
  });
  const order = labels.map((_, i) => i).sort((a, b) => slots[a].left - slots[b].left || a - b);
  /** Per row, the right edge of its last label, canvas px. */
  const rowEnds: number[] = [];
  for (const i of order) {
    const s = slots[i];
    let row = rowEnds.findIndex((end) => s.left >= end + o.gap);
    if (row < 0 && rowEnds.length < o.maxRows) row = rowEnds.length;
    if (row < 0) continue;
    rowEnds[row] = s.left + labels[i].width;
    s.row = row;
    s.visible = true;
  }
  return slots;
}

/**
 * The label (index into `xs`) nearest to the cursor at `cursorX` within `reach` canvas px among
 * the hidden ones (`visible[i]` false), or -1: the label the webview shows on hover.
 */
export function hoveredMark(
  xs: readonly number[],
  visible: readonly boolean[],
  cursorX: number,
  reach: number,
): number {
  let best = -1;
  for (let i = 0; i < xs.length; i++) {
    if (visible[i]) continue;
    const d = Math.abs(xs[i] - cursorX);
    if (d <= reach && (best < 0 || d < Math.abs(xs[best] - cursorX))) best = i;
  }
  return best;
}

/** What {@link combineGpus} returns: the "All GPUs" chart's data. */
export interface CombinedSeries {
  /** ms since the epoch, ascending: every time any GPU has a sample at. */
  at: number[];
  /** Per GPU (in the input's order), its utilisation %, at each of {@link at}; null where it has no sample then. */
  utilizationPercent: (number | null)[][];
  /**
   * Memory used by all the GPUs together, MiB, at each of {@link at}; null where any GPU has no
   * value then (a sum of some GPUs would read as a drop).
   */
  memoryUsedMiB: (number | null)[];
  /** The GPUs' memory.total added up, MiB; null when any is unknown (or there are no GPUs). */
  memoryTotalMiB: number | null;
}

/**
 * Every GPU's history on one time axis (the samples of one tick share its time, so the GPUs line
 * up; a GPU without a sample at a time gets null there): each GPU's utilisation % and the sum of
 * memory used, MiB.
 */
export function combineGpus(gpus: readonly GpuSeries[]): CombinedSeries {
  const times = new Set<number>();
  for (const g of gpus) for (const t of g.at) times.add(t);
  const at = [...times].sort((a, b) => a - b);
  const slot = new Map(at.map((t, i) => [t, i]));
  const utilizationPercent = gpus.map((g) => {
    const ys: (number | null)[] = new Array<number | null>(at.length).fill(null);
    g.at.forEach((t, i) => (ys[slot.get(t) as number] = g.utilizationPercent[i] ?? null));
    return ys;
  });
  const memoryUsedMiB: (number | null)[] = new Array<number | null>(at.length).fill(gpus.length > 0 ? 0 : null);
  for (const g of gpus) {
    const have = new Array<boolean>(at.length).fill(false);
    g.at.forEach((t, i) => {
      const k = slot.get(t) as number;
      const v = g.memoryUsedMiB[i];
      const sum = memoryUsedMiB[k];
      have[k] = true;
      memoryUsedMiB[k] = v === null || v === undefined || sum === null ? null : sum + v;
    });
    have.forEach((h, k) => {
      if (!h) memoryUsedMiB[k] = null;
    });
  }
  const totals = gpus.map((g) => g.memoryTotalMiB);
  const memoryTotalMiB =
    totals.length > 0 && totals.every((t): t is number => t !== null) ? totals.reduce((a, b) => a + b, 0) : null;
  return { at, utilizationPercent, memoryUsedMiB, memoryTotalMiB };
}
