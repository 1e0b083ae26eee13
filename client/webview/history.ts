/// <reference lib="dom" />
/**
 * The GPU History webview (bundled by esbuild into dist/history.js: browser, iife). Draws, at the
 * top, an "All GPUs" chart (every GPU's utilisation, one line each, and the memory used by all of
 * them against their total), then per GPU
 * utilisation (axis 0..100 %) and memory used (axis 0..the GPU's memory.total, every tick in one
 * unit: GiB from a 1 GiB total up, else MiB; a thin line at the total labelled `140.4 GiB total`,
 * historyMarks.ts drawTotalLine) with uPlot, each chart the panel's full width, in the
 * theme's colours (CSS variables of the webview) and one colour per GPU (historyMarks.ts
 * GPU_PALETTE, made legible on the theme's background), the selected GPUs highlighted, run starts and
 * ends marked with lines labelled with the file (a run only on its GPUs' charts, every run on "All
 * GPUs"; the first row of labels in a band above the plot, clear of the data, a start's left of its
 * line and an end's right of it; labels stacked on rows so that none overlap, those with no room
 * shown while the cursor is near their line: historyMarks.ts), and in the legend the values under
 * the cursor (the newest sample's while the cursor is off the chart) as bare numbers, the unit being
 * in the chart's title and on its axis (historyText.ts), each line's marker in its colour and dash. It
 * keeps nothing when hidden: it asks the extension for the whole history (`ready`) each time it
 * starts. After each redraw it reports the axes it drew (`drawn`), for the API and tests.
 */
import uPlot from "uplot";
import type { FromWebview, HistoryAllAxes, HistoryAxes, RunMark, ToWebview } from "../src/gpu/historyPanel";
import { type GpuSeries, timeAxis, type TimeAxis } from "../src/gpu/history";
import {
  combineGpus,
  drawRunMarks,
  drawTotalLine,
  GPU_PALETTE,
  legibleOn,
  gpuLineStyle,
  hoveredMark,
  LABEL_BAND_PX,
  LABEL_ROW_PX,
  lineBorderStyle,
  marksForGpu,
  runMarkers,
} from "../src/gpu/historyMarks";
import {
  type ChartUnit,
  gpuLegendLabel,
  historySummary,
  LEGEND_LABELS,
  legendValue,
  memoryChartTitle,
  memoryTotalLabel,
} from "../src/gpu/historyText";
import { formatMemoryPair } from "../../common/src/gpu/units";

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void };
const vscode = acquireVsCodeApi();

interface Chart {
  uuid: string;
  box: HTMLElement;
  title: HTMLElement;
  util: uPlot;
  mem: uPlot;
  /** The memory axis: its unit and top (the GPU's total, in that unit). */
  memUnit: "GiB" | "MiB";
  memMax: number;
}

let series: GpuSeries[] = [];
let capacity = 600;
let selected: string[] = [];
let runs: RunMark[] = [];
let minutes = 10;
let focus: string | undefined;
const charts = new Map<string, Chart>();
/** The "All GPUs" chart (undefined with no GPUs). */
let allChart:
  { box: HTMLElement; title: HTMLElement; util: uPlot; mem: uPlot; memUnit: "GiB" | "MiB"; memMax: number } | undefined;
const root = document.getElementById("charts") as HTMLElement;
const summary = document.getElementById("summary") as HTMLElement;

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

function theme() {
  return {
    fg: cssVar("--vscode-editor-foreground", "#333"),
    bg: cssVar("--vscode-editor-background", "#fff"),
    grid: cssVar("--vscode-editorWidget-border", "rgba(128,128,128,0.25)"),
    font: `${cssVar("--vscode-font-size", "13px")} ${cssVar("--vscode-font-family", "sans-serif")}`,
  };
}

/** Per plot: the labels drawn beside run markers and the y tick labels, at its last draw (reported in `drawn`). */
const runLabelsOf = new WeakMap<
  uPlot,
  { drawn: string[]; rows: number[]; hover: string[]; at: HistoryAxes["runLabelAt"] }
>();
const ticksOf = new WeakMap<uPlot, string[]>();
const timeTicksOf = new WeakMap<uPlot, string[]>();
/** Per plot: its markers at the last draw, for the hover: x in CSS px from the plot area's left, label, colour, drawn or not. */
const markersOf = new WeakMap<uPlot, { xs: number[]; texts: string[]; colors: string[]; visible: boolean[] }>();

/**
 * The x axis of every chart: the whole `gpuPilot.history.minutes` window ending at the newest
 * sample (now, while nvidia-smi streams), not just the span of the samples there are.
 */
function currentTimeAxis(): TimeAxis {
  const newest = series.reduce((m, g) => Math.max(m, g.at[g.at.length - 1] ?? -Infinity), -Infinity);
  return timeAxis(minutes, Number.isFinite(newest) ? newest : Date.now());
}

/** Rows of marker labels at most; labels with no room on them are shown on hover. */
const MAX_LABEL_ROWS = 3;

/**
 * Draws the run starts (green, `▶ <file>`) and ends (red, `■ <file>`) of `runsOf()` as vertical
 * lines over the plot area; when `labelled`, each labelled with the script's file name at the top,
 * on the row layoutMarkLabels gives it (the first row in the chart's top band, LABEL_BAND_PX, above
 * the data; a start's label left of its line, an end's right of it, so that a run's two labels share
 * that row), none over another; a label with no row is shown while the cursor is within 6 px of its line. The drawing is
 * historyMarks.ts drawRunMarks (unit-tested with a canvas that models textAlign).
 */
function runMarksPlugin(labelled: boolean, runsOf: () => RunMark[]): uPlot.Plugin {
  let tip: HTMLElement | undefined;
  return {
    hooks: {
      init: [
        (u: uPlot) => {
          if (!labelled) return;
          tip = document.createElement("div");
          tip.className = "mark-tip";
          tip.hidden = true;
          u.over.append(tip);
        },
      ],
      setCursor: [
        (u: uPlot) => {
          const m = markersOf.get(u);
          if (!tip || !m) return;
          const i =
            u.cursor.left === undefined || u.cursor.left < 0 ? -1 : hoveredMark(m.xs, m.visible, u.cursor.left, 6);
          tip.hidden = i < 0;
          if (i < 0) return;
          tip.textContent = m.texts[i];
          tip.style.color = m.colors[i];
          tip.style.left = `${m.xs[i] + 4}px`;
          tip.style.top = "2px";
        },
      ],
      draw: [
        (u: uPlot) => {
          const t = theme();
          const { left, top, width, height } = u.bbox;
          const px = devicePixelRatio;
          // Both in the text's colour: a GPU's series has a hue of the palette (Tableau 10's green
          // and red are GPUs 2 and 3), a run's dashed start and end lines have none; ▶ and ■ tell them apart.
          const markers = runMarkers(runsOf(), u.scales.x.min ?? 0, u.scales.x.max ?? 0, {
            start: t.fg,
            end: t.fg,
          });
          const marks = drawRunMarks(u.ctx, markers, {
            left,
            top,
            width,
            height,
            px,
            xOf: (s) => u.valToPos(s, "x", true),
            labelled,
            fontFamily: cssVar("--vscode-font-family", "sans-serif"),
            // A see-through background: the lines under a label stay visible, its text readable.
            labelBackground: translucent(t.bg, 0.75),
            maxRows: Math.max(1, Math.min(MAX_LABEL_ROWS, 1 + Math.floor(height / (LABEL_ROW_PX * px * 2)))),
            labelBand: labelled ? LABEL_BAND_PX : 0,
          });
          const shown = labelled ? marks.filter((m) => m.visible) : [];
          runLabelsOf.set(u, {
            drawn: shown.map((m) => m.text),
            rows: shown.map((m) => m.row),
            hover: labelled ? marks.filter((m) => !m.visible).map((m) => m.text) : [],
            // CSS px from the plot area's left edge.
            at: shown.map((m) => ({
              marker: (m.lineX - left) / px,
              textLeft: (m.textLeft - left) / px,
              boxLeft: (m.boxLeft - left) / px,
              boxRight: (m.boxLeft + m.boxWidth - left) / px,
            })),
          });
          if (labelled)
            markersOf.set(u, {
              xs: marks.map((m) => (m.lineX - left) / px),
              texts: marks.map((m) => m.text),
              colors: marks.map((m) => m.color),
              visible: marks.map((m) => m.visible),
            });
        },
      ],
    },
  };
}

/** Per memory plot: the label of the line drawn at its total at its last draw (reported in `drawn`). */
const totalOf = new WeakMap<uPlot, string>();

/**
 * Draws the line at a memory chart's total (the top of its axis), labelled `140.4 GiB total` just
 * above it at the plot's right edge, in the band kept above the plot (historyMarks.ts drawTotalLine).
 */
function totalLinePlugin(label: string): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const t = theme();
          const drawn = drawTotalLine(u.ctx, {
            left: u.bbox.left,
            width: u.bbox.width,
            y: u.valToPos(u.scales.y.max ?? 0, "y", true),
            px: devicePixelRatio,
            label,
            // The chart titles' colour (the theme's secondary text): not the All GPUs line's (the text colour).
            color: cssVar("--vscode-descriptionForeground", t.fg),
            fontFamily: cssVar("--vscode-font-family", "sans-serif"),
            labelBackground: translucent(t.bg, 0.75),
          });
          totalOf.set(u, drawn.label);
        },
      ],
    },
  };
}

/** Per plot: its height, CSS px (a chart with a band above its plot is taller by the band). */
const heightOf = new WeakMap<uPlot, number>();

/** The width each chart gets: the whole width of the charts' column (one chart per row). */
function availableWidth(): number {
  return Math.floor(root.clientWidth || window.innerWidth - 32);
}

function chartWidth(): number {
  return Math.max(240, availableWidth() - 22);
}

/** The memory axis of a GPU with `totalMiB`: GiB from 1 GiB up, else MiB; top = the total in that unit. */
function memoryAxis(totalMiB: number | null): { unit: "GiB" | "MiB"; max: number } {
  const total = totalMiB !== null && totalMiB > 0 ? totalMiB : 1024;
  return total >= 1024 ? { unit: "GiB", max: total / 1024 } : { unit: "MiB", max: total };
}

/** A tick label in the axis's one unit: `70 GiB`, `12.5 GiB`, `512 MiB`, `50%`. */
function tickLabel(v: number, unit: ChartUnit, step: number): string {
  if (unit === "%") return `${Math.round(v)}%`;
  const digits = step >= 1 || unit === "MiB" ? 0 : step >= 0.1 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`;
}

/** A GPU box heading's utilisation: `12%`, `n/a`. */
function headingPercent(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? "n/a" : `${Math.round(v)}%`;
}

/**
 * `color` (any CSS colour: a theme variable may be `#rgb`, `#rrggbb`, `#rrggbbaa` or `rgb(...)`) with
 * opacity `alpha` (or its own, when lower), as `rgba(...)`, so that every chart's area is equally
 * faint whatever the theme gives its line: appending an alpha to the text (`${color}22`) is no
 * colour when the theme's value already has one, and the canvas then kept its previous fill (the
 * selected GPU's area was grey instead of orange).
 */
function translucent(color: string, alpha: number): string {
  const probe = document.createElement("span");
  probe.style.color = color;
  document.body.append(probe);
  const rgb = getComputedStyle(probe).color;
  probe.remove();
  const [r, g, b, a = 1] = (rgb.match(/[\d.]+/g) ?? []).map(Number);
  return r === undefined ? color : `rgba(${r}, ${g}, ${b}, ${Math.min(a, alpha)})`;
}

/** Per plot: its area fill as given to uPlot (reported in `drawn`). */
const fillOfPlot = new WeakMap<uPlot, string>();
/** Per plot: its lines' colours as given to uPlot (which keeps them as functions), reported in `drawn`. */
const strokesOfPlot = new WeakMap<uPlot, string[]>();

/** The newest value of `ys` that is not a gap (null), or null when there is none. */
function newest(ys: ArrayLike<number | null | undefined> | undefined): number | null {
  if (!ys) return null;
  for (let i = ys.length - 1; i >= 0; i--) {
    const v = ys[i];
    if (v !== null && v !== undefined && Number.isFinite(v)) return v;
  }
  return null;
}

/** The legend of `u` as drawn: its series' values, the time first (`latest 07:25:31`, `100%`). */
function legendOf(u: uPlot): string[] {
  return Array.from(u.root.querySelectorAll(".u-legend .u-value"), (e) => e.textContent ?? "");
}

/** One line of a chart: its legend label, colour and whether it is drawn thick (the selected GPU). */
interface Line {
  label: string;
  color: string;
  emphasised: boolean;
  /** Dash pattern, CSS px (`[6, 3]`); solid when absent. The legend's marker shows it (lineBorderStyle). */
  dash?: number[];
}

function makePlot(
  title: string,
  unit: ChartUnit,
  lines: Line[],
  max: number,
  el: HTMLElement,
  labelRuns: boolean,
  runsOf: () => RunMark[],
  totalLabel?: string,
): uPlot {
  const t = theme();
  // One line: its area filled; several (All GPUs): lines only, a fill each would hide the others.
  const fill = lines.length === 1 ? translucent(lines[0].color, 0.13) : undefined;
  const axis: uPlot.Axis = {
    stroke: t.fg,
    grid: { stroke: t.grid, width: 1 },
    ticks: { stroke: t.grid, width: 1 },
    font: t.font,
  };
  // A labelled chart keeps a band above its plot for the first row of run labels (clear of the data),
  // a memory chart one for its total's label.
  const band = labelRuns || totalLabel !== undefined;
  const height = band ? 170 + LABEL_BAND_PX : 170;
  const opts: uPlot.Options = {
    title,
    width: chartWidth(),
    height,
    ...(band ? { padding: [LABEL_BAND_PX, null, null, null] as uPlot.Padding } : {}),
    scales: {
      x: {
        time: true,
        range: () => {
          const x = currentTimeAxis();
          return [x.min, x.max];
        },
      },
      y: { range: [0, max] },
    },
    axes: [
      {
        ...axis,
        splits: () => currentTimeAxis().ticks,
        values: (u) => {
          const labels = currentTimeAxis().labels;
          timeTicksOf.set(u, labels);
          return labels;
        },
      },
      {
        ...axis,
        size: yAxisSize,
        values: (u, ticks) => {
          const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
          const labels = ticks.map((v) => tickLabel(v, unit, step));
          ticksOf.set(u, labels);
          return labels;
        },
      },
    ],
    series: [
      // Off the chart (no cursor index), the legend gives the newest sample, not "n/a".
      {
        value: (u, v, _s, idx) => {
          const at = idx === null ? newest(u.data[0]) : v;
          return at === null ? "" : `${idx === null ? "latest " : ""}${new Date(at * 1000).toLocaleTimeString()}`;
        },
      },
      ...lines.map((l): uPlot.Series => ({
        label: l.label,
        stroke: l.color,
        width: l.emphasised ? 3 : 1.5,
        ...(l.dash ? { dash: l.dash } : {}),
        ...(fill ? { fill } : {}),
        spanGaps: false,
        points: { show: false },
        // The bare number: the unit is in the chart's title and on its axis (historyText.ts legendValue).
        value: (u, v, s, idx) => legendValue(idx === null ? newest(u.data[s]) : v, unit),
      })),
    ],
    // Each marker a short line in the series' colour and dash (a CSS border: history.css keeps its top edge only).
    legend: {
      show: true,
      live: true,
      markers: { width: 3, dash: (_u, i) => lineBorderStyle(lines[i - 1] ?? { color: "" }), fill: "transparent" },
    },
    cursor: { drag: { x: false, y: false } },
    plugins: [runMarksPlugin(labelRuns, runsOf), ...(totalLabel !== undefined ? [totalLinePlugin(totalLabel)] : [])],
  };
  const plot = new uPlot(opts, [[], ...lines.map(() => [])], el);
  heightOf.set(plot, height);
  fillOfPlot.set(plot, fill ?? "");
  strokesOfPlot.set(
    plot,
    lines.map((l) => l.color),
  );
  return plot;
}

/**
 * uPlot's data for samples at `at` (ms since the epoch) with one array of values per line. Where
 * the stream stopped (the views were hidden) no line joins the samples either side: a point without
 * a value 1 ms after the last sample before the gap (more than 3 sample intervals).
 */
function aligned(at: readonly number[], ys: readonly (readonly (number | null)[])[]): uPlot.AlignedData {
  const gapMs = 3 * ((minutes * 60_000) / Math.max(1, capacity));
  const xs: number[] = [];
  const vs: (number | null)[][] = ys.map(() => []);
  at.forEach((ms, i) => {
    if (i > 0 && ms - at[i - 1] > gapMs) {
      xs.push((at[i - 1] + 1) / 1000);
      for (const v of vs) v.push(null);
    }
    xs.push(ms / 1000);
    ys.forEach((y, k) => vs[k].push(y[i] ?? null));
  });
  return [xs, ...vs];
}

/** Memory used MiB in the axis unit. */
function inUnit(ys: readonly (number | null)[], unit: "GiB" | "MiB"): (number | null)[] {
  return ys.map((m) => (m === null ? null : unit === "GiB" ? m / 1024 : m));
}

function dataOf(g: GpuSeries, which: "util" | "mem", memUnit: "GiB" | "MiB"): uPlot.AlignedData {
  return aligned(g.at, [which === "util" ? g.utilizationPercent : inUnit(g.memoryUsedMiB, memUnit)]);
}

/**
 * The colours in the order GPUs take them (historyMarks.ts GPU_PALETTE, gpuLineStyle: GPU 0 blue,
 * GPU 1 orange, ... GPU 7 olive; dashed from the ninth GPU, dotted from the seventeenth), each
 * darkened toward the foreground, or lightened, where it shows too faint on the theme's background
 * (historyMarks.ts legibleOn).
 */
function palette(): string[] {
  const { fg, bg } = theme();
  return GPU_PALETTE.map((c) => legibleOn(c.colour, bg, fg));
}

/**
 * The line of the GPU at `position` (in index order): the same colour and dash on "All GPUs" and on
 * the GPU's own charts, thick where it is selected.
 */
function gpuLine(position: number, label: string, emphasised: boolean): Line {
  return { label, emphasised, ...gpuLineStyle(position, palette()) };
}

function isSelected(uuid: string): boolean {
  return selected.some((u) => u.toLowerCase() === uuid.toLowerCase());
}

/** A chart box (section with a heading and a column for the two charts) appended to the charts' root. */
function chartBox(className: string): { box: HTMLElement; title: HTMLElement; util: HTMLElement; mem: HTMLElement } {
  const box = document.createElement("section");
  box.className = className;
  const title = document.createElement("h2");
  box.append(title);
  const row = document.createElement("div");
  row.className = "row";
  const util = document.createElement("div");
  const mem = document.createElement("div");
  row.append(util, mem);
  box.append(row);
  root.append(box);
  return { box, title, util, mem };
}

/**
 * The y axes' width, CSS px, the same on every chart so that their time axes line up: room for the
 * widest tick label there can be (`2000 GiB` on All 16 GPUs' memory axis was cut at its left).
 */
let yAxisSize = 72;

/** The width `yAxisSize` needs for tick labels up to `maxLabel` in the theme's font (ticks and gaps beside them). */
function axisSizeFor(maxLabel: string): number {
  const ctx = document.createElement("canvas").getContext("2d");
  if (!ctx) return 72;
  ctx.font = theme().font;
  return Math.max(72, Math.ceil(ctx.measureText(maxLabel).width) + 18);
}

function rebuild(): void {
  for (const c of charts.values()) {
    c.util.destroy();
    c.mem.destroy();
  }
  charts.clear();
  allChart?.util.destroy();
  allChart?.mem.destroy();
  allChart = undefined;
  root.replaceChildren();
  const t = theme();
  // The widest memory tick: All GPUs' total (or a GPU's, in MiB) in whole units.
  const widest = [combineGpus(series).memoryTotalMiB, ...series.map((g) => g.memoryTotalMiB)]
    .map((m) => memoryAxis(m))
    .map((a) => `${Math.round(a.max)} ${a.unit}`)
    .reduce((a, b) => (b.length > a.length ? b : a), "100%");
  yAxisSize = axisSizeFor(widest);
  if (series.length > 0) {
    // All GPUs: each GPU's utilisation (its own colour; the selected ones thick) and the memory of
    // all of them against their total; every run marked.
    const b = chartBox("gpu all");
    const combined = combineGpus(series);
    const axis = memoryAxis(combined.memoryTotalMiB);
    const util = makePlot(
      "Utilisation of every GPU (%)",
      "%",
      series.map((g, i) => gpuLine(i, gpuLegendLabel(g.index), isSelected(g.uuid))),
      100,
      b.util,
      true,
      () => runs,
    );
    const mem = makePlot(
      memoryChartTitle(axis.unit, true),
      axis.unit,
      // The sum of every GPU's memory: the theme's text colour, no GPU's.
      [{ label: LEGEND_LABELS.allMemory, color: t.fg, emphasised: false }],
      axis.max,
      b.mem,
      false,
      () => runs,
      memoryTotalLabel(combined.memoryTotalMiB),
    );
    allChart = { box: b.box, title: b.title, util, mem, memUnit: axis.unit, memMax: axis.max };
  }
  series.forEach((g, position) => {
    const isSel = isSelected(g.uuid);
    const b = chartBox(`gpu${isSel ? " selected" : ""}${focus === g.uuid ? " focus" : ""}`);
    // The GPU's colour, as on All GPUs: its box's edge and both its lines (thick when selected).
    const style = gpuLineStyle(position, palette());
    b.box.style.borderLeftColor = style.color;
    b.box.style.borderLeftStyle = lineBorderStyle(style);
    // A run is marked only on the charts of the GPUs it was given.
    const mine = () => marksForGpu(runs, g.uuid);
    const util = makePlot(
      "Utilisation (%)",
      "%",
      [gpuLine(position, LEGEND_LABELS.utilization, isSel)],
      100,
      b.util,
      true,
      mine,
    );
    // Memory: from 0 to the GPU's total, so that the chart shows how full the GPU is; a line at the total.
    const axis = memoryAxis(g.memoryTotalMiB);
    const mem = makePlot(
      memoryChartTitle(axis.unit),
      axis.unit,
      [gpuLine(position, LEGEND_LABELS.memory, isSel)],
      axis.max,
      b.mem,
      false,
      mine,
      memoryTotalLabel(g.memoryTotalMiB),
    );
    charts.set(g.uuid, { uuid: g.uuid, box: b.box, title: b.title, util, mem, memUnit: axis.unit, memMax: axis.max });
  });
  redraw();
  if (focus) charts.get(focus)?.box.scrollIntoView({ block: "nearest" });
}

/** What the charts of `c` were drawn with: y ranges, memory unit and tick labels, run labels, widths. */
function axesOf(c: Chart): HistoryAxes {
  const range = (u: uPlot): [number, number] => [u.scales.y.min ?? NaN, u.scales.y.max ?? NaN];
  const labels = runLabelsOf.get(c.util);
  return {
    uuid: c.uuid,
    utilization: range(c.util),
    time: [c.util.scales.x.min ?? NaN, c.util.scales.x.max ?? NaN],
    timeTicks: [...(timeTicksOf.get(c.util) ?? [])],
    memory: range(c.mem),
    memoryUnit: c.memUnit,
    memoryTicks: [...(ticksOf.get(c.mem) ?? [])],
    memoryTotal: totalOf.get(c.mem) ?? "",
    runLabels: [...(labels?.drawn ?? [])],
    runLabelRows: [...(labels?.rows ?? [])],
    runLabelAt: [...(labels?.at ?? [])],
    hoverLabels: [...(labels?.hover ?? [])],
    color: { utilization: strokeOf(c.util, 1), memory: strokeOf(c.mem, 1) },
    legend: { utilization: legendOf(c.util), memory: legendOf(c.mem) },
    fill: { utilization: fillOfPlot.get(c.util) ?? "", memory: fillOfPlot.get(c.mem) ?? "" },
    width: c.util.width,
    availableWidth: availableWidth(),
  };
}

/** What the All GPUs chart was drawn with (undefined with no GPUs). */
function allAxes(): HistoryAllAxes | undefined {
  if (!allChart) return undefined;
  const labels = runLabelsOf.get(allChart.util);
  return {
    series: allChart.util.series.slice(1).map((s) => String(s.label ?? "")),
    colors: allChart.util.series.slice(1).map((_, i) => strokeOf(allChart!.util, i + 1)),
    memory: [allChart.mem.scales.y.min ?? NaN, allChart.mem.scales.y.max ?? NaN],
    memoryUnit: allChart.memUnit,
    memoryTotal: totalOf.get(allChart.mem) ?? "",
    runLabels: [...(labels?.drawn ?? [])],
    runLabelAt: [...(labels?.at ?? [])],
    hoverLabels: [...(labels?.hover ?? [])],
  };
}

/** The colour series `i` of `u` (1 for its first line) was given, as the theme wrote it. */
function strokeOf(u: uPlot, i: number): string {
  return strokesOfPlot.get(u)?.[i - 1] ?? "";
}

function redraw(): void {
  let drawn = 0;

  if (allChart) {
    const combined = combineGpus(series);
    const busy = series
      .map((g) => g.utilizationPercent[g.utilizationPercent.length - 1])
      .filter((v): v is number => v !== null && v !== undefined);
    const used = combined.memoryUsedMiB[combined.memoryUsedMiB.length - 1] ?? null;
    const mean =
      busy.length > 0 ? `${Math.round(busy.reduce((a, b) => a + b, 0) / busy.length)}% mean` : "no samples yet";
    allChart.title.textContent = `All ${series.length} GPUs · ${mean}${combined.at.length > 0 ? ` · ${formatMemoryPair(used, combined.memoryTotalMiB)}` : ""}`;
    allChart.util.setData(aligned(combined.at, combined.utilizationPercent));
    allChart.mem.setData(aligned(combined.at, [inUnit(combined.memoryUsedMiB, allChart.memUnit)]));
  }
  for (const g of series) {
    const c = charts.get(g.uuid);
    if (!c) continue;
    const isSel = isSelected(g.uuid);
    const n = g.at.length;
    const last =
      n > 0
        ? `${headingPercent(g.utilizationPercent[n - 1])} · ${formatMemoryPair(g.memoryUsedMiB[n - 1], g.memoryTotalMiB)}`
        : "no samples yet";
    c.title.textContent = `GPU ${g.index}: ${g.name}${isSel ? " (selected)" : ""} · ${last}`;
    c.util.setData(dataOf(g, "util", c.memUnit));
    c.mem.setData(dataOf(g, "mem", c.memUnit));
    drawn += n;
  }
  const n = series.reduce((m, g) => Math.max(m, g.at.length), 0);
  summary.textContent = historySummary({ gpus: series.length, minutes, samples: n, capacity, runs: runs.length });
  // uPlot draws in a microtask after setData: report once the frame is drawn.
  const gpus = charts.size;
  requestAnimationFrame(() => {
    const axes = series
      .map((g) => charts.get(g.uuid))
      .filter((c): c is Chart => c !== undefined)
      .map(axesOf);
    const all = allAxes();
    vscode.postMessage({ type: "drawn", samples: drawn, gpus, axes, ...(all ? { all } : {}) });
  });
}

window.addEventListener("message", (ev: MessageEvent<ToWebview>) => {
  const m = ev.data;
  if (m?.type === "history") {
    series = m.snapshot.gpus;
    capacity = m.snapshot.capacity;
    selected = m.selected;
    runs = m.runs;
    minutes = m.minutes;
    focus = m.focus;
    rebuild();
  } else if (m?.type === "append") {
    const selChanged = JSON.stringify(selected) !== JSON.stringify(m.selected);
    selected = m.selected;
    runs = m.runs;
    for (const s of m.samples) {
      const g = series.find((x) => x.uuid === s.uuid);
      if (!g) continue;
      g.at.push(m.at);
      g.utilizationPercent.push(s.utilizationPercent);
      g.memoryUsedMiB.push(s.memoryUsedMiB);
      const extra = g.at.length - capacity;
      if (extra > 0) {
        g.at.splice(0, extra);
        g.utilizationPercent.splice(0, extra);
        g.memoryUsedMiB.splice(0, extra);
      }
    }
    if (selChanged) rebuild();
    else redraw();
  }
});

let resizeTimer: number | undefined;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    for (const c of [...charts.values(), ...(allChart ? [allChart] : [])]) {
      // Each at its own height: a chart with a band above its plot is taller (it lost the band here).
      for (const u of [c.util, c.mem]) u.setSize({ width: chartWidth(), height: heightOf.get(u) ?? 170 });
    }
    redraw();
  }, 100);
});

// A theme change changes the CSS variables: redraw with the new colours.
new MutationObserver(() => rebuild()).observe(document.body, { attributes: true, attributeFilter: ["class"] });

vscode.postMessage({ type: "ready" });
