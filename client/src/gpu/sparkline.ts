/**
 * The dashboard card's sparkline as SVG path data (pure and import-free: the webview,
 * client/webview/dashboard.ts, draws it). Its lines keep clear of the box's edges, so that a flat
 * line (a GPU at 0 % the whole time, or at 100 %) reads as data: at 3 px from the edge a line at 0 %
 * read as the box's bottom border and the box as an empty plot. The 0 level is drawn as a baseline
 * under the lines ({@link sparkBaseline}).
 */

/** The sparkline's drawing box (SVG user units; the SVG is stretched to the card's width, 28 CSS px tall). */
export const SPARK_BOX = { width: 200, height: 28 } as const;

/** Units between the box's top edge and the 100 % level, and between the 0 level and the bottom edge. */
export const SPARK_INSET = { top: 4, bottom: 6 } as const;

/** The y of value `v` on a scale of 0..`scale` (clamped), in {@link SPARK_BOX} units: 0 at the baseline. */
export function sparkY(v: number, scale: number): number {
  const { height } = SPARK_BOX;
  const f = Math.min(1, Math.max(0, v / scale));
  return height - SPARK_INSET.bottom - f * (height - SPARK_INSET.top - SPARK_INSET.bottom);
}

/** The 0 level across the whole box: `M0 22 L200 22`. */
export function sparkBaseline(): string {
  const y = sparkY(0, 1).toFixed(1);
  return `M0 ${y} L${SPARK_BOX.width} ${y}`;
}

/**
 * The path of `values` (one per equal slice of the window, null where a slice has no sample) on a
 * scale of 0..`scale`: the window's start at the left edge, now at the right; a gap where a slice
 * has no sample; a lone sample as a short dash. Empty for no values.
 */
export function sparkPath(values: readonly (number | null)[], scale: number): string {
  const w = SPARK_BOX.width;
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const y = (v: number) => sparkY(v, scale).toFixed(1);
  let d = "";
  values.forEach((v, i) => {
    if (v === null) return;
    const x = values.length > 1 ? i * step : w;
    const before = i > 0 && values[i - 1] !== null;
    const after = i + 1 < values.length && values[i + 1] !== null;
    if (before) d += `L${x.toFixed(1)} ${y(v)} `;
    else if (after) d += `M${x.toFixed(1)} ${y(v)} `;
    else d += `M${Math.max(0, x - step / 2).toFixed(1)} ${y(v)} L${Math.min(w, x + step / 2).toFixed(1)} ${y(v)} `;
  });
  return d.trim();
}
