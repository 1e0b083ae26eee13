/// <reference lib="dom" />
/**
 * The GPU History webview (bundled by esbuild into dist/history.js: browser, iife). Draws, per GPU,
 * utilisation (axis 0..100 %) and memory used (axis 0..the GPU's memory.total, every tick in one
 * unit: GiB from a 1 GiB total up, else MiB) with uPlot, each chart the panel's full width, in the
 * theme's colours (CSS variables of the webview), the selected GPUs highlighted, run starts and
 * ends marked with lines labelled with the file, and in the legend the values under the cursor (the
 * newest sample's while the cursor is off the chart). It
 * keeps nothing when hidden: it asks the extension for the whole history (`ready`) each time it
 * starts. After each redraw it reports the axes it drew (`drawn`), for the API and tests.
 */
import uPlot from "uplot";
import type { FromWebview, HistoryAxes, RunMark, ToWebview } from "../src/gpu/historyPanel";
import { type GpuSeries, timeAxis, type TimeAxis } from "../src/gpu/history";
import { formatMemoryPair } from "../src/gpu/units";

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
    blue: cssVar("--vscode-charts-blue", "#3794ff"),
    purple: cssVar("--vscode-charts-purple", "#b180d7"),
    orange: cssVar("--vscode-charts-orange", "#d18616"),
    green: cssVar("--vscode-charts-green", "#89d185"),
    red: cssVar("--vscode-charts-red", "#f14c4c"),
    font: `${cssVar("--vscode-font-size", "13px")} ${cssVar("--vscode-font-family", "sans-serif")}`,
  };
}

/** Per plot: the labels drawn beside run markers and the y tick labels, at its last draw (reported in `drawn`). */
const runLabelsOf = new WeakMap<uPlot, string[]>();
const ticksOf = new WeakMap<uPlot, string[]>();
const timeTicksOf = new WeakMap<uPlot, string[]>();

/**
 * The x axis of every chart: the whole `gpuPilot.history.minutes` window ending at the newest
 * sample (now, while nvidia-smi streams), not just the span of the samples there are.
 */
function currentTimeAxis(): TimeAxis {
  const newest = series.reduce((m, g) => Math.max(m, g.at[g.at.length - 1] ?? -Infinity), -Infinity);
  return timeAxis(minutes, Number.isFinite(newest) ? newest : Date.now());
}

/**
 * Draws the run starts (green, `▶ <file>`) and ends (red, `■ <file>`) as vertical lines over the
 * plot area, each labelled at its top with the script's file name.
 */
function runMarksPlugin(labelled: boolean): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const t = theme();
          const ctx = u.ctx;
          const { left, top, width, height } = u.bbox;
          const [min, max] = [u.scales.x.min ?? 0, u.scales.x.max ?? 0];
          const px = devicePixelRatio;
          const drawnLabels: string[] = [];
          runLabelsOf.set(u, drawnLabels);
          ctx.save();
          ctx.font = `${Math.round(11 * px)}px ${cssVar("--vscode-font-family", "sans-serif")}`;
          ctx.textBaseline = "top";
          for (const r of runs) {
            for (const [ms, color, glyph] of [[r.startedAt, t.green, "▶"], [r.endedAt, t.red, "■"]] as [number | undefined, string, string][]) {
              if (ms === undefined) continue;
              const s = ms / 1000;
              if (s < min || s > max) continue;
              const x = Math.round(u.valToPos(s, "x", true));
              ctx.strokeStyle = color;
              ctx.lineWidth = 1.5 * px;
              ctx.setLineDash([5 * px, 3 * px]);
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + height);
              ctx.stroke();
              if (!labelled) continue;
              const text = `${glyph} ${r.file || r.title}`;
              const w = ctx.measureText(text).width;
              // Right of the line, or left of it when it would leave the plot.
              const tx = x + 4 * px + w > left + width ? x - 4 * px - w : x + 4 * px;
              ctx.setLineDash([]);
              ctx.fillStyle = t.bg;
              ctx.fillRect(tx - 2 * px, top + 2 * px, w + 4 * px, 14 * px);
              ctx.fillStyle = color;
              ctx.fillText(text, tx, top + 3 * px);
              drawnLabels.push(text);
            }
          }
          ctx.restore();
        },
      ],
    },
  };
}

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
function tickLabel(v: number, unit: "%" | "GiB" | "MiB", step: number): string {
  if (unit === "%") return `${Math.round(v)}%`;
  const digits = step >= 1 || unit === "MiB" ? 0 : step >= 0.1 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`;
}

/** The legend's value under the cursor: `12%`, `3.3 GiB`, `812 MiB`, `n/a`. */
function hoverValue(v: number | null | undefined, unit: "%" | "GiB" | "MiB"): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  if (unit === "%") return `${Math.round(v)}%`;
  return unit === "GiB" ? `${v.toFixed(1)} GiB` : `${Math.round(v)} MiB`;
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

function makePlot(title: string, unit: "%" | "GiB" | "MiB", color: string, max: number, el: HTMLElement, emphasised: boolean, labelRuns: boolean): uPlot {
  const t = theme();
  const fill = translucent(color, 0.13);
  const axis: uPlot.Axis = { stroke: t.fg, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid, width: 1 }, font: t.font };
  const opts: uPlot.Options = {
    title,
    width: chartWidth(),
    height: 170,
    scales: { x: { time: true, range: () => { const x = currentTimeAxis(); return [x.min, x.max]; } }, y: { range: [0, max] } },
    axes: [
      { ...axis, splits: () => currentTimeAxis().ticks, values: (u) => { const labels = currentTimeAxis().labels; timeTicksOf.set(u, labels); return labels; } },
      {
        ...axis,
        size: 72,
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
      { value: (u, v, _s, idx) => { const at = idx === null ? newest(u.data[0]) : v; return at === null ? "" : `${idx === null ? "latest " : ""}${new Date(at * 1000).toLocaleTimeString()}`; } },
      { label: title, stroke: color, width: (emphasised ? 3 : 1.5), fill, spanGaps: false, points: { show: false }, value: (u, v, s, idx) => hoverValue(idx === null ? newest(u.data[s]) : v, unit) },
    ],
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    plugins: [runMarksPlugin(labelRuns)],
  };
  const plot = new uPlot(opts, [[], []], el);
  fillOfPlot.set(plot, fill);
  return plot;
}

function dataOf(g: GpuSeries, which: "util" | "mem", memUnit: "GiB" | "MiB"): uPlot.AlignedData {
  const ys = which === "util" ? g.utilizationPercent : g.memoryUsedMiB.map((m) => (m === null ? null : memUnit === "GiB" ? m / 1024 : m));
  // Where the stream stopped (the views were hidden) no line joins the samples either side: a
  // point without a value 1 ms after the last sample before the gap (more than 3 sample intervals).
  const gapMs = 3 * ((minutes * 60_000) / Math.max(1, capacity));
  const xs: number[] = [];
  const vs: (number | null)[] = [];
  g.at.forEach((ms, i) => {
    if (i > 0 && ms - g.at[i - 1] > gapMs) {
      xs.push((g.at[i - 1] + 1) / 1000);
      vs.push(null);
    }
    xs.push(ms / 1000);
    vs.push(ys[i]);
  });
  return [xs, vs];
}

function rebuild(): void {
  for (const c of charts.values()) {
    c.util.destroy();
    c.mem.destroy();
  }
  charts.clear();
  root.replaceChildren();
  const t = theme();
  for (const g of series) {
    const isSel = selected.some((u) => u.toLowerCase() === g.uuid.toLowerCase());
    const box = document.createElement("section");
    box.className = `gpu${isSel ? " selected" : ""}${focus === g.uuid ? " focus" : ""}`;
    const title = document.createElement("h2");
    box.append(title);
    const row = document.createElement("div");
    row.className = "row";
    const u = document.createElement("div");
    const m = document.createElement("div");
    row.append(u, m);
    box.append(row);
    root.append(box);
    const util = makePlot("Utilisation (%)", "%", isSel ? t.orange : t.blue, 100, u, isSel, true);
    // Memory: from 0 to the GPU's total, so that the chart shows how full the GPU is.
    const axis = memoryAxis(g.memoryTotalMiB);
    const mem = makePlot(`Memory used (${axis.unit}, of ${axis.max.toFixed(axis.unit === "GiB" ? 1 : 0)} ${axis.unit})`, axis.unit, isSel ? t.orange : t.purple, axis.max, m, isSel, false);
    charts.set(g.uuid, { uuid: g.uuid, box, title, util, mem, memUnit: axis.unit, memMax: axis.max });
  }
  redraw();
  if (focus) charts.get(focus)?.box.scrollIntoView({ block: "nearest" });
}

/** What the charts of `c` were drawn with: y ranges, memory unit and tick labels, run labels, widths. */
function axesOf(c: Chart): HistoryAxes {
  const range = (u: uPlot): [number, number] => [u.scales.y.min ?? NaN, u.scales.y.max ?? NaN];
  return {
    uuid: c.uuid,
    utilization: range(c.util),
    time: [c.util.scales.x.min ?? NaN, c.util.scales.x.max ?? NaN],
    timeTicks: [...(timeTicksOf.get(c.util) ?? [])],
    memory: range(c.mem),
    memoryUnit: c.memUnit,
    memoryTicks: [...(ticksOf.get(c.mem) ?? [])],
    runLabels: [...(runLabelsOf.get(c.util) ?? [])],
    legend: { utilization: legendOf(c.util), memory: legendOf(c.mem) },
    fill: { utilization: fillOfPlot.get(c.util) ?? "", memory: fillOfPlot.get(c.mem) ?? "" },
    width: c.util.width,
    availableWidth: availableWidth(),
  };
}

function redraw(): void {
  let drawn = 0;

  for (const g of series) {
    const c = charts.get(g.uuid);
    if (!c) continue;
    const isSel = selected.some((u) => u.toLowerCase() === g.uuid.toLowerCase());
    const n = g.at.length;
    const last = n > 0 ? `${hoverValue(g.utilizationPercent[n - 1], "%")} · ${formatMemoryPair(g.memoryUsedMiB[n - 1], g.memoryTotalMiB)}` : "no samples yet";
    c.title.textContent = `GPU ${g.index}: ${g.name}${isSel ? " (selected)" : ""} · ${last}`;
    c.util.setData(dataOf(g, "util", c.memUnit));
    c.mem.setData(dataOf(g, "mem", c.memUnit));
    drawn += n;
  }
  const n = series.reduce((m, g) => Math.max(m, g.at.length), 0);
  summary.textContent = series.length === 0
    ? "No samples yet: the numbers are recorded while nvidia-smi streams (this panel or the GPU view is open)."
    : `Last ${minutes} min · ${n} of ${capacity} samples per GPU · ${runs.length} run(s) marked (▶ start, ■ end) · hover a chart for its values`;
  // uPlot draws in a microtask after setData: report once the frame is drawn.
  const gpus = charts.size;
  requestAnimationFrame(() => {
    const axes = series.map((g) => charts.get(g.uuid)).filter((c): c is Chart => c !== undefined).map(axesOf);
    vscode.postMessage({ type: "drawn", samples: drawn, gpus, axes });
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
    for (const c of charts.values()) {
      c.util.setSize({ width: chartWidth(), height: 170 });
      c.mem.setSize({ width: chartWidth(), height: 170 });
    }
    redraw();
  }, 100);
});

// A theme change changes the CSS variables: redraw with the new colours.
new MutationObserver(() => rebuild()).observe(document.body, { attributes: true, attributeFilter: ["class"] });

vscode.postMessage({ type: "ready" });
