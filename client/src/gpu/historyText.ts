/**
 * The GPU History panel's words, as pure functions (no `vscode`, no DOM; the webview
 * client/webview/history.ts writes what they return, and the unit tests check them): the summary
 * line under the panel's heading, the charts' titles, their legends' labels and values, and the
 * label of the line at a memory chart's total.
 *
 * Each chart says its unit once, in its title (`Utilisation (%)`, `Memory used (GiB)`) and on
 * its y axis' ticks; its legend's entries give the bare numbers (`GPU 0: 100`, `Memory used: 3.3`):
 * the 8-GPU legend wrote `%` eight times, and a GPU's memory legend `Memory used (GiB, of 140.4 GiB): 3.3 GiB`.
 */

import { formatMiB } from "../../../common/src/gpu/units";

/** A chart's unit: every tick of its y axis, and every value of its legend without writing it, are in it. */
export type ChartUnit = "%" | "GiB" | "MiB";

/**
 * `1 run marked (▶ start, ■ end) on the GPUs it used`, `2 runs marked (▶ start, ■ end) on the GPUs
 * they used` (it said `1 run(s) marked`).
 */
export function runsMarkedText(runs: number): string {
  const n = Math.max(0, Math.floor(runs));
  return `${n} run${n === 1 ? "" : "s"} marked (▶ start, ■ end) on the GPUs ${n === 1 ? "it" : "they"} used`;
}

/**
 * The line under the panel's heading: `Last 4 min · 220 of 240 samples per GPU · 1 run marked (▶
 * start, ■ end) on the GPUs it used · hover a chart for its values`; with no GPU yet, why it is empty.
 */
export function historySummary(o: {
  gpus: number;
  minutes: number;
  samples: number;
  capacity: number;
  runs: number;
}): string {
  if (o.gpus === 0)
    return "No samples yet: the numbers are recorded while nvidia-smi streams (this panel or the GPU view is open).";
  return `Last ${o.minutes} min · ${o.samples} of ${o.capacity} samples per GPU · ${runsMarkedText(o.runs)} · hover a chart for its values`;
}

/** The legend's labels (the unit is in the chart's title): a GPU's `Utilisation` and `Memory used`, All GPUs' memory. */
export const LEGEND_LABELS = { utilization: "Utilisation", memory: "Memory used", allMemory: "All GPUs" } as const;

/** The legend's label of a GPU's line on the All GPUs chart: `GPU 0`. */
export function gpuLegendLabel(index: number): string {
  return `GPU ${index}`;
}

/**
 * A value in the legend, in the chart's unit without writing it (the title and the axis do): `100`
 * (%), `3.3` (GiB, one decimal as the units policy writes GiB), `812` (MiB); `n/a` where there is no sample.
 */
export function legendValue(v: number | null | undefined, unit: ChartUnit): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  return unit === "GiB" ? v.toFixed(1) : String(Math.round(v));
}

/**
 * The memory charts' titles, the unit once: `Memory used (GiB)`, `Memory used by all GPUs (GiB)`.
 * The total is the label of the line at the top of the axis ({@link memoryTotalLabel}; the title
 * said `Memory used (GiB, of 140.4 GiB)`) and in the box's heading (`3.3/140.4 GiB`).
 */
export function memoryChartTitle(unit: "GiB" | "MiB", allGpus = false): string {
  return `Memory used${allGpus ? " by all GPUs" : ""} (${unit})`;
}

/**
 * The label of the line at a memory chart's total (the top of its axis): `140.4 GiB total`,
 * `1123.2 GiB total` (All 8 GPUs), `900 MiB total` (the units policy's amount, as the box's heading
 * writes the total); undefined where the total is unknown: no line then.
 */
export function memoryTotalLabel(totalMiB: number | null | undefined): string | undefined {
  if (totalMiB === null || totalMiB === undefined || !Number.isFinite(totalMiB) || totalMiB <= 0) return undefined;
  return `${formatMiB(totalMiB)} total`;
}
