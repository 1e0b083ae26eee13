/**
 * The GPU History panel's words, as pure functions (no `vscode`, no DOM; the webview
 * client/webview/history.ts writes what they return, and the unit tests check them): the summary
 * line under the panel's heading.
 */

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
