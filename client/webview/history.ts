/// <reference lib="dom" />
/**
 * The GPU History webview (bundled by esbuild into dist/history.js: browser, iife). Draws, per GPU,
 * utilisation % and memory used MiB with uPlot, in the theme's colours (CSS variables of the
 * webview), the selected GPUs highlighted and run starts/ends marked. It keeps nothing when hidden:
 * it asks the extension for the whole history (`ready`) each time it starts.
 */
import uPlot from "uplot";
import type { FromWebview, RunMark, ToWebview } from "../src/gpu/historyPanel";
import type { GpuSeries } from "../src/gpu/history";

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void };
const vscode = acquireVsCodeApi();

interface Chart {
  uuid: string;
  box: HTMLElement;
  title: HTMLElement;
  util: uPlot;
  mem: uPlot;
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
    grid: cssVar("--vscode-editorWidget-border", "rgba(128,128,128,0.25)"),
    blue: cssVar("--vscode-charts-blue", "#3794ff"),
    purple: cssVar("--vscode-charts-purple", "#b180d7"),
    orange: cssVar("--vscode-charts-orange", "#d18616"),
    green: cssVar("--vscode-charts-green", "#89d185"),
    red: cssVar("--vscode-charts-red", "#f14c4c"),
    font: `${cssVar("--vscode-font-size", "13px")} ${cssVar("--vscode-font-family", "sans-serif")}`,
  };
}

/** Draws the run starts (green) and ends (red) as vertical lines over the plot area. */
function runMarksPlugin(): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const t = theme();
          const ctx = u.ctx;
          const { top, height } = u.bbox;
          const [min, max] = [u.scales.x.min ?? 0, u.scales.x.max ?? 0];
          ctx.save();
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
          for (const r of runs) {
            for (const [ms, color] of [[r.startedAt, t.green], [r.endedAt, t.red]] as [number | undefined, string][]) {
              if (ms === undefined) continue;
              const s = ms / 1000;
              if (s < min || s > max) continue;
              const x = Math.round(u.valToPos(s, "x", true));
              ctx.strokeStyle = color;
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + height);
              ctx.stroke();
            }
          }
          ctx.restore();
        },
      ],
    },
  };
}

function chartWidth(): number {
  return Math.max(240, Math.floor((root.clientWidth || window.innerWidth) / 2) - 24);
}

/** Axis label: `50%`, `812 MiB`, `3.3 GiB`. */
function label(v: number, unit: "%" | "MiB"): string {
  if (unit === "%") return `${Math.round(v)}%`;
  return v >= 1024 ? `${(v / 1024).toFixed(v >= 10 * 1024 ? 0 : 1)} GiB` : `${Math.round(v)} MiB`;
}

function makePlot(title: string, unit: "%" | "MiB", color: string, max: number | null, el: HTMLElement, emphasised: boolean): uPlot {
  const t = theme();
  const axis: uPlot.Axis = { stroke: t.fg, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid, width: 1 }, font: t.font };
  const opts: uPlot.Options = {
    title,
    width: chartWidth(),
    height: 180,
    scales: { x: { time: true }, y: max === null ? { range: (_u, _min, mx) => [0, Math.max(1, mx) * 1.1] } : { range: [0, max] } },
    axes: [{ ...axis }, { ...axis, size: 80, values: (_u, ticks) => ticks.map((v) => label(v, unit)) }],
    series: [{}, { label: title, stroke: color, width: (emphasised ? 3 : 1.5), fill: `${color}22`, spanGaps: false, points: { show: false } }],
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    plugins: [runMarksPlugin()],
  };
  return new uPlot(opts, [[], []], el);
}

function dataOf(g: GpuSeries, which: "util" | "mem"): uPlot.AlignedData {
  const xs = g.at.map((ms) => ms / 1000);
  return [xs, which === "util" ? g.utilizationPercent : g.memoryUsedMiB];
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
    const util = makePlot("Utilisation", "%", isSel ? t.orange : t.blue, 100, u, isSel);
    // Memory: scaled to what is used (the total is in the title), so that small use still shows.
    const mem = makePlot("Memory used", "MiB", isSel ? t.orange : t.purple, null, m, isSel);
    charts.set(g.uuid, { uuid: g.uuid, box, title, util, mem });
  }
  redraw();
  if (focus) charts.get(focus)?.box.scrollIntoView({ block: "nearest" });
}

function redraw(): void {
  let drawn = 0;
  for (const g of series) {
    const c = charts.get(g.uuid);
    if (!c) continue;
    const isSel = selected.some((u) => u.toLowerCase() === g.uuid.toLowerCase());
    const n = g.at.length;
    const last = n > 0 ? `${g.utilizationPercent[n - 1] ?? "n/a"}% · ${g.memoryUsedMiB[n - 1] ?? "n/a"}/${g.memoryTotalMiB ?? "?"} MiB` : "no samples yet";
    c.title.textContent = `GPU ${g.index}: ${g.name}${isSel ? " (selected)" : ""} · ${last}`;
    c.util.setData(dataOf(g, "util"));
    c.mem.setData(dataOf(g, "mem"));
    drawn += n;
  }
  const n = series.reduce((m, g) => Math.max(m, g.at.length), 0);
  summary.textContent = series.length === 0
    ? "No samples yet: the numbers are recorded while nvidia-smi streams (this panel or the GPU view is open)."
    : `Last ${minutes} min · ${n} of ${capacity} samples per GPU · ${runs.length} run(s) marked (green: start, red: end)`;
  vscode.postMessage({ type: "drawn", samples: drawn, gpus: charts.size });
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
      c.util.setSize({ width: chartWidth(), height: 180 });
      c.mem.setSize({ width: chartWidth(), height: 180 });
    }
  }, 100);
});

// A theme change changes the CSS variables: redraw with the new colours.
new MutationObserver(() => rebuild()).observe(document.body, { attributes: true, attributeFilter: ["class"] });

vscode.postMessage({ type: "ready" });
