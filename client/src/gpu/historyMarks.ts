/**
 * The GPU History panel's run markers and its "All GPUs" chart, as pure functions (no `vscode`, no
 * DOM; the webview client/webview/history.ts draws what they return, and the unit tests check them):
 *
 * - {@link marksForGpu}: the runs whose markers belong on one GPU's chart (the GPUs the run was given).
 * - {@link layoutMarkLabels}: where each marker's label goes so that no two labels overlap: stacked
 *   on rows, and a label that fits on none of the rows is left for the hover (see {@link MarkLabelSlot}).
 * - {@link combineGpus}: every GPU's utilisation on one time axis, and the memory used by all of them.
 * - {@link drawTotalLine}: the line at a memory chart's total, labelled, so that the memory used reads
 *   against the GPU's capacity.
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
  /**
   * Which side of its line the label goes (default `right`); the other side where that one would
   * leave the plot. A run's start label goes left (before the run, where its GPU is idle, not over the
   * run's first rise), its end label right (after the run).
   */
  side?: "left" | "right";
}

/** Where one label goes (same order as the input). */
export interface MarkLabelSlot {
  /** False: no row had room; the label is shown only while the cursor is near its marker. */
  visible: boolean;
  /** Row from the top of the plot, 0 first (meaningful only when visible). */
  row: number;
  /** The label's left edge, canvas px: on its side of the line, or on the other where it would leave the plot. */
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
 * Places marker labels so that no two drawn labels overlap. Each label sits on its side of its line
 * ({@link MarkLabelInput.side}): right (`x + pad`), or left of it (`x - pad - width`) where it would run
 * past `plotRight`; left, or right of it where it would start before `plotLeft`; clamped to
 * `plotLeft`. Labels are taken in x order (ties in input order) and each goes on the first row
 * whose last label ends at least `gap` before it starts; one that fits on none of the `maxRows` rows
 * is not drawn ({@link MarkLabelSlot.visible} false: the webview shows it on hover).
 *
 * For example, a 2 s run at 1 px/s with 80 px labels: start at x 100 → row 0, end at x 102 → row 1.
 * @returns one slot per input, in input order.
 */
export function layoutMarkLabels(labels: readonly MarkLabelInput[], o: MarkLabelOptions): MarkLabelSlot[] {
  const slots: MarkLabelSlot[] = labels.map((l) => {
    const right = l.x + o.pad;
    const left = l.x - o.pad - l.width;
    const at =
      l.side === "left"
        ? left < o.plotLeft && right + l.width <= o.plotRight
          ? right
          : left
        : right + l.width > o.plotRight
          ? left
          : right;
    return { visible: false, row: 0, left: Math.max(o.plotLeft, at) };
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

/** A run's start or end as a marker to draw: where (s since the epoch), its colour and its label. */
export interface RunMarker {
  /** s since the epoch (uPlot's time unit). */
  seconds: number;
  color: string;
  /** `▶ train.py` (start) or `■ train.py` (end). */
  text: string;
  /** The side of its line its label goes: a start's left (before the run), an end's right (after it); absent: right. */
  side?: "left" | "right";
}

/** A run as {@link runMarkers} reads it (historyPanel.ts RunMark has these fields). */
export interface RunTimes {
  title: string;
  file: string;
  /** ms since the epoch. */
  startedAt: number;
  /** ms since the epoch, once ended. */
  endedAt?: number;
}

/**
 * The markers of `runs` inside the time axis `[min, max]` (s since the epoch): per run its start
 * (`▶ file`, `colors.start`, labelled left of its line) and, once ended, its end (`■ file`,
 * `colors.end`, labelled right of it), in run order.
 */
export function runMarkers(
  runs: readonly RunTimes[],
  min: number,
  max: number,
  colors: { start: string; end: string },
): RunMarker[] {
  const out: RunMarker[] = [];
  for (const r of runs) {
    for (const [ms, color, glyph, side] of [
      [r.startedAt, colors.start, "▶", "left"],
      [r.endedAt, colors.end, "■", "right"],
    ] as [number | undefined, string, string, "left" | "right"][]) {
      if (ms === undefined) continue;
      const s = ms / 1000;
      if (s < min || s > max) continue;
      out.push({ seconds: s, color, text: `${glyph} ${r.file || r.title}`, side });
    }
  }
  return out;
}

/**
 * The part of a canvas 2D context {@link drawRunMarks} uses (the DOM's CanvasRenderingContext2D
 * has it; the unit tests pass a recorder that models `textAlign`).
 */
export interface MarkCanvas {
  font: string;
  textAlign: string;
  textBaseline: string;
  strokeStyle: unknown;
  fillStyle: unknown;
  lineWidth: number;
  save(): void;
  restore(): void;
  setLineDash(segments: number[]): void;
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  stroke(): void;
  fillRect(x: number, y: number, w: number, h: number): void;
  fillText(text: string, x: number, y: number): void;
  measureText(text: string): { width: number };
}

/** Where {@link drawRunMarks} draws: the plot area and the x scale, all in canvas px. */
export interface MarkGeometry {
  /** The plot area, canvas px. */
  left: number;
  top: number;
  width: number;
  height: number;
  /** Canvas px per CSS px (devicePixelRatio). */
  px: number;
  /** x of a time (s since the epoch), canvas px (uPlot: `valToPos(s, "x", true)`). */
  xOf(seconds: number): number;
  /** Whether the markers get labels (the utilisation charts; the memory charts only the lines). */
  labelled: boolean;
  /** The labels' font family (the theme's). */
  fontFamily: string;
  /** The labels' background (see-through: the lines under a label stay visible). */
  labelBackground: string;
  /** Rows of labels at most; labels with no room on them are hover-only. */
  maxRows: number;
  /**
   * CSS px above `top` kept free for the labels' first row (uPlot's top padding: {@link LABEL_BAND_PX}),
   * where no data line is drawn; the marker lines reach up into it. 0 or absent: every row inside the plot.
   */
  labelBand?: number;
}

/** One marker as drawn. */
export interface DrawnMarker {
  text: string;
  color: string;
  /** The marker line's x, canvas px. */
  lineX: number;
  /** Whether its label was drawn (false: no room on a row; shown on hover). */
  visible: boolean;
  /** The label's row (0 at the top); meaningful only when visible. */
  row: number;
  /** The label's box (text plus 2 px either side), canvas px: left edge and width. */
  boxLeft: number;
  boxWidth: number;
  /**
   * The left edge of the label's text as the canvas drew it: fillText's x moved by the context's
   * `textAlign` at that moment (`right`: the text ends at x), canvas px; NaN when not drawn.
   */
  textLeft: number;
}

/** Height of one row of marker labels, CSS px (11 px text on a 14 px background, 2 px apart). */
export const LABEL_ROW_PX = 16;

/** Space between a marker line and its label's box, CSS px (it was 2: the label nearly touched the line). */
export const LABEL_PAD_PX = 6;

/**
 * The band above a labelled chart's plot (uPlot's top padding, CSS px) that holds the first row of
 * marker labels, clear of the data: a GPU at 100 % drew its line along the labels' top edge.
 */
export const LABEL_BAND_PX = 20;

/**
 * The top of label row `row`'s 14 px background, CSS px from the plot's top edge: with a band
 * ({@link MarkGeometry.labelBand}), row 0 is centred in it and the next rows start 4 px inside the
 * plot; without one, every row starts 4 px inside the plot (clear of its top grid line).
 */
export function labelRowTop(row: number, band = 0): number {
  if (band >= 14 && row === 0) return -band + (band - 14) / 2;
  return 4 + (band >= 14 ? row - 1 : row) * LABEL_ROW_PX;
}

/** Where text drawn at `x` starts for a canvas `textAlign` (left-to-right text). */
export function textLeftOf(x: number, width: number, textAlign: string): number {
  if (textAlign === "right" || textAlign === "end") return x - width;
  if (textAlign === "center") return x - width / 2;
  return x;
}

/**
 * Draws `markers` as dashed vertical lines over the plot area and, when labelled, each one's label
 * at the top, on the row {@link layoutMarkLabels} gives it ({@link labelRowTop}: the first row in the
 * band above the plot, clear of the data), {@link LABEL_PAD_PX} from its line on its side (a start's
 * left, an end's right; the other side near the plot's edges). The context's state is saved and restored; `textAlign` is set to `left`
 * (uPlot leaves it `right` after drawing the y axis, which drew every label a whole label's width
 * left of its box and line: about 1.3 min on a 10 min axis).
 */
export function drawRunMarks(ctx: MarkCanvas, markers: readonly RunMarker[], g: MarkGeometry): DrawnMarker[] {
  const px = g.px;
  ctx.save();
  ctx.font = `${Math.round(11 * px)}px ${g.fontFamily}`;
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const band = g.labelled ? (g.labelBand ?? 0) : 0;
  const drawn: DrawnMarker[] = markers.map((m) => {
    const x = Math.round(g.xOf(m.seconds));
    ctx.strokeStyle = m.color;
    ctx.lineWidth = 1.5 * px;
    ctx.setLineDash([5 * px, 3 * px]);
    ctx.beginPath();
    ctx.moveTo(x, g.top - band * px);
    ctx.lineTo(x, g.top + g.height);
    ctx.stroke();
    return {
      text: m.text,
      color: m.color,
      lineX: x,
      visible: false,
      row: 0,
      boxLeft: NaN,
      boxWidth: ctx.measureText(m.text).width + 4 * px,
      textLeft: NaN,
    };
  });
  if (g.labelled) {
    const slots = layoutMarkLabels(
      drawn.map((d, i) => ({ x: d.lineX, width: d.boxWidth, side: markers[i].side })),
      { plotLeft: g.left, plotRight: g.left + g.width, pad: LABEL_PAD_PX * px, gap: 8 * px, maxRows: g.maxRows },
    );
    ctx.setLineDash([]);
    slots.forEach((slot, i) => {
      const d = drawn[i];
      d.boxLeft = slot.left;
      if (!slot.visible) return;
      const y = g.top + labelRowTop(slot.row, band) * px;
      ctx.fillStyle = g.labelBackground;
      ctx.fillRect(slot.left, y, d.boxWidth, 14 * px);
      ctx.fillStyle = d.color;
      const textX = slot.left + 2 * px;
      ctx.fillText(d.text, textX, y + px);
      d.visible = true;
      d.row = slot.row;
      d.textLeft = textLeftOf(textX, d.boxWidth - 4 * px, ctx.textAlign);
    });
  }
  ctx.restore();
  return drawn;
}

/** Where {@link drawTotalLine} draws, canvas px except where said. */
export interface TotalLineGeometry {
  /** The plot area's left edge and width, canvas px. */
  left: number;
  width: number;
  /** The total's y, canvas px (uPlot: `valToPos(total, "y", true)`: the plot's top, the axis ending at the total). */
  y: number;
  /** Canvas px per CSS px (devicePixelRatio). */
  px: number;
  /** The label: `140.4 GiB total` (historyText.ts memoryTotalLabel). */
  label: string;
  /** The line's and the label's colour (the panel gives the chart titles' colour: not the All GPUs memory line's). */
  color: string;
  fontFamily: string;
  /** The label's background (see-through, as the run labels'). */
  labelBackground: string;
}

/** The line at a memory chart's total as drawn, canvas px. */
export interface DrawnTotalLine {
  label: string;
  /** The line's y and its ends. */
  y: number;
  x0: number;
  x1: number;
  /** The label's box (text plus 2 px either side): left, right, top and bottom edges. */
  boxLeft: number;
  boxRight: number;
  boxTop: number;
  boxBottom: number;
}

/**
 * Draws a thin (1 CSS px) solid line across the plot at the memory total `g.y`, and its label
 * (`140.4 GiB total`, 11 px) right-aligned at the plot's right edge just above the line: in the
 * band above the plot (uPlot's top padding, {@link LABEL_BAND_PX}), clear of the data, which never
 * passes the total. The run markers' lines are dashed; this one is solid, and the axis' top tick
 * (`100 GiB` of 140.4) is below it. The context's state is saved and restored.
 */
export function drawTotalLine(ctx: MarkCanvas, g: TotalLineGeometry): DrawnTotalLine {
  const px = g.px;
  ctx.save();
  // Half a line's width off the pixel grid: a crisp 1 px line on the total's row, not two faint ones.
  const y = Math.round(g.y) + (Math.round(px) % 2 === 1 ? 0.5 : 0);
  const x0 = g.left;
  const x1 = g.left + g.width;
  ctx.strokeStyle = g.color;
  ctx.lineWidth = px;
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.moveTo(x0, y);
  ctx.lineTo(x1, y);
  ctx.stroke();
  ctx.font = `${Math.round(11 * px)}px ${g.fontFamily}`;
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const boxWidth = ctx.measureText(g.label).width + 4 * px;
  const boxHeight = 14 * px;
  const boxLeft = x1 - boxWidth;
  const boxTop = y - 2 * px - boxHeight;
  ctx.fillStyle = g.labelBackground;
  ctx.fillRect(boxLeft, boxTop, boxWidth, boxHeight);
  ctx.fillStyle = g.color;
  ctx.fillText(g.label, boxLeft + 2 * px, boxTop + px);
  ctx.restore();
  return { label: g.label, y, x0, x1, boxLeft, boxRight: x1, boxTop, boxBottom: boxTop + boxHeight };
}

/** A GPU's line on the History panel's charts: its colour, and a dash pattern (CSS px) from the ninth GPU on. */
export interface GpuLineStyle {
  color: string;
  /** Absent: solid. */
  dash?: number[];
}

/**
 * The colours GPUs take in turn on the History panel: the classic Tableau 10 categorical palette
 * ("tab10": matplotlib's default colour cycle, d3's schemeCategory10), in its order, without its
 * grey (the All GPUs memory line and the All box's edge are the theme's grey) and its cyan (too near
 * the blue once darkened for a light theme). Fixed colours, not theme variables: VS Code's six
 * `charts.*` colours and the terminal's cyan and magenta, used before, put orange, red and yellow
 * (GPUs 3, 4, 5) and blue and cyan (GPUs 0, 6) too close to tell apart on the 8-GPU chart. Each
 * passes through {@link legibleOn} for the theme's background (3:1); every two of the eight stay at
 * least 0.1 apart in OKLab on VS Code's default dark and light themes (historyMarks.test.ts). 9 to
 * 16 GPUs take the eight again, dashed ({@link gpuLineStyle}), the legend's markers too.
 */
export const GPU_PALETTE: readonly { name: string; colour: string }[] = [
  { name: "blue", colour: "#1f77b4" },
  { name: "orange", colour: "#ff7f0e" },
  { name: "green", colour: "#2ca02c" },
  { name: "red", colour: "#d62728" },
  { name: "purple", colour: "#9467bd" },
  { name: "brown", colour: "#8c564b" },
  { name: "pink", colour: "#e377c2" },
  { name: "olive", colour: "#bcbd22" },
];

/** `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb(r, g, b)` or `rgba(r, g, b, a)` → [r, g, b] (0-255) and the alpha (0-1); null otherwise. */
export function parseColour(css: string): { rgb: [number, number, number]; alpha: number } | null {
  const c = css.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(c)?.[1];
  if (hex) {
    const full = hex.length <= 4 ? [...hex].map((d) => d + d).join("") : hex;
    const [r, g, b, a] = [0, 2, 4, 6].map((i) => parseInt(full.slice(i, i + 2) || "ff", 16));
    return { rgb: [r, g, b], alpha: a / 255 };
  }
  const m = /^rgba?\(\s*(\d{1,3})[\s,]+(\d{1,3})[\s,]+(\d{1,3})(?:[\s,/]+([\d.]+%?))?/.exec(c);
  if (!m) return null;
  const alpha = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
  return { rgb: [Number(m[1]), Number(m[2]), Number(m[3])], alpha: Math.min(1, Math.max(0, alpha)) };
}

/** WCAG 2.x relative luminance of an sRGB colour (0 black to 1 white). */
function luminance([r, g, b]: [number, number, number]): number {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG 2.x contrast ratio of two colours (1 to 21). */
export function contrastRatio(a: [number, number, number], b: [number, number, number]): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/**
 * `colour` as it shows on `background` (a theme value may carry an alpha: VS Code's light theme
 * takes its orange chart colour from a translucent one, which drew GPU 3 as a faint peach line on
 * white): where that shows too faint, the colour made opaque, and if that is still too faint,
 * mixed toward `foreground` in tenths until it has a contrast of at least `minimum` against
 * the background (WCAG 2.1 success criterion 1.4.11, non-text contrast: 3:1 for the parts of a chart
 * needed to understand it). A legible colour is returned as it is; colours that cannot be parsed
 * too. Returns `#rrggbb` (opaque) when it had to change the colour.
 */
export function legibleOn(colour: string, background: string, foreground: string, minimum = 3): string {
  const c = parseColour(colour);
  const bg = parseColour(background)?.rgb;
  const fg = parseColour(foreground)?.rgb;
  if (!c || !bg || !fg) return colour;
  const shown = c.rgb.map((v, i) => Math.round(v * c.alpha + bg[i] * (1 - c.alpha))) as [number, number, number];
  if (contrastRatio(shown, bg) >= minimum) return colour;
  const hex = (rgb: readonly number[]) => `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
  // The theme's hue made opaque first (its orange stays orange), then mixed toward the foreground.
  let mixed = c.rgb;
  for (let t = 1; t <= 10 && contrastRatio(mixed, bg) < minimum; t++)
    mixed = c.rgb.map((v, i) => Math.round(v + ((fg[i] - v) * t) / 10)) as [number, number, number];
  return hex(mixed);
}

/**
 * The line of the GPU at `position` (0 for the first GPU of the panel, in index order) on every
 * chart of the panel, "All GPUs" and its own alike (they differed: GPU 1 was purple on All GPUs and
 * blue, or orange when selected, on its own): the palette's colours in turn, solid for the first
 * round, dashed (`6 3`) for the second, dotted (`2 2`) after (16 GPUs with 8 colours: no two alike).
 */
export function gpuLineStyle(position: number, palette: readonly string[]): GpuLineStyle {
  const n = Math.max(1, palette.length);
  const i = Math.max(0, Math.floor(position));
  const round = Math.floor(i / n);
  return { color: palette[i % n] ?? "", ...(round === 0 ? {} : { dash: round === 1 ? [6, 3] : [2, 2] }) };
}

/**
 * The CSS border style that draws `style`'s dash in the legend's marker and on the GPU box's edge
 * (uPlot's legend marker is a CSS border: `solid`, `dashed` for `6 3`, `dotted` for `2 2`), so that
 * a dashed line's legend entry is dashed too.
 */
export function lineBorderStyle(style: GpuLineStyle): "solid" | "dashed" | "dotted" {
  if (!style.dash || style.dash.length === 0) return "solid";
  return style.dash[0] > style.dash[1] ? "dashed" : "dotted";
}
