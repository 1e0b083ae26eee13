/// <reference lib="dom" />
/**
 * The GPU dashboard webview (bundled by esbuild into dist/dashboard.js: browser, iife). Renders the
 * {@link DashboardModel} the extension posts (client/src/gpu/dashboard.ts) as one card per GPU:
 * tick box, name and index, temperature, labelled utilisation and memory bars coloured by
 * threshold, power/cap and free memory, a sparkline of the recent minutes, MIG devices with their
 * tick boxes, and a process table whose column headers sort it. Everything is a native control
 * (checkbox, button), so it is reachable with Tab and works with Space/Enter. Text goes in through
 * textContent only; bar widths through the CSSOM (the CSP forbids inline style attributes).
 */
import type { DashboardClickTarget, DashboardRendered, FromDashboard, ToDashboard } from "../src/gpu/dashboard";
import type { DashboardBar, DashboardGpu, DashboardModel, ProcessSortKey } from "../src/gpu/dashboardModel";

declare function acquireVsCodeApi(): { postMessage(m: FromDashboard): void };
const vscode = acquireVsCodeApi();
const root = document.getElementById("cards") as HTMLElement;
const SVG = "http://www.w3.org/2000/svg";

let model: DashboardModel | undefined;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A labelled bar: `Util [████░░] 12%`, role meter with its value for screen readers. */
function bar(label: string, b: DashboardBar, what: string, key: string, title?: string): HTMLElement {
  const row = el("div", "metric");
  row.dataset.metric = key;
  if (title) row.title = title;
  row.append(el("span", "metric-label", label));
  const track = el("div", `bar level-${b.level}`);
  track.setAttribute("role", "meter");
  track.setAttribute("aria-label", `${what}: ${b.text}`);
  track.setAttribute("aria-valuemin", "0");
  track.setAttribute("aria-valuemax", "100");
  if (b.fraction !== null) track.setAttribute("aria-valuenow", String(Math.round(b.fraction * 100)));
  const fill = el("div", "fill");
  fill.style.width = `${b.fraction === null ? 0 : Math.max(b.fraction > 0 ? 1 : 0, b.fraction * 100)}%`;
  track.append(fill);
  row.append(track, el("span", "metric-value", b.text));
  return row;
}

/** The sparkline: utilisation (0..100) and memory (0..1) over the window, as two polylines in an SVG. */
function sparkline(g: DashboardGpu): HTMLElement {
  const box = el("div", "spark");
  const w = 200;
  const h = 28;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  const n = Math.max(g.spark.utilization.length, g.spark.memory.length);
  const span = g.spark.seconds < 120 ? `${g.spark.seconds} s` : `${Math.round(g.spark.seconds / 60)} min`;
  svg.setAttribute("aria-label", n === 0 ? "No history yet" : `Utilisation and memory over the last ${span}`);
  const line = (values: (number | null)[], scale: number, cls: string) => {
    if (values.length === 0) return;
    // One point per equal slice of the window (the model buckets by time): the window's start at the
    // left edge, now at the right; a gap where a slice has no sample; a lone sample as a short dash.
    const step = values.length > 1 ? w / (values.length - 1) : w;
    const yOf = (v: number) => (h - 3 - Math.min(1, Math.max(0, v / scale)) * (h - 6)).toFixed(1); // 3 px clear of the box's edges
    let d = "";
    values.forEach((v, i) => {
      if (v === null) return;
      const x = values.length > 1 ? i * step : w;
      const before = i > 0 && values[i - 1] !== null;
      const after = i + 1 < values.length && values[i + 1] !== null;
      if (before) d += `L${x.toFixed(1)} ${yOf(v)} `;
      else if (after) d += `M${x.toFixed(1)} ${yOf(v)} `;
      else d += `M${Math.max(0, x - step / 2).toFixed(1)} ${yOf(v)} L${Math.min(w, x + step / 2).toFixed(1)} ${yOf(v)} `;
    });
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d.trim());
    path.setAttribute("class", cls);
    svg.append(path);
  };
  line(g.spark.utilization, 100, "spark-util");
  line(g.spark.memory, 1, "spark-mem");
  box.append(svg);
  const legend = el("div", "spark-legend");
  legend.append(el("span", "key-util", "util"), el("span", "key-mem", "memory"), el("span", "spark-span", n === 0 ? "no history yet" : `last ${span}`));
  box.append(legend);
  return box;
}

const COLUMNS: { key: ProcessSortKey; label: string }[] = [
  { key: "pid", label: "PID" },
  { key: "user", label: "User" },
  { key: "memory", label: "Mem" },
  { key: "command", label: "Command" },
];

function processTable(g: DashboardGpu, m: DashboardModel): HTMLElement {
  if (g.processes.length === 0) return el("p", "none", "No compute processes");
  const table = el("table", "procs");
  table.setAttribute("aria-label", `Processes on GPU ${g.index}`);
  const head = el("thead");
  const tr = el("tr");
  for (const c of COLUMNS) {
    const th = el("th", `col-${c.key}`);
    th.setAttribute("scope", "col");
    const active = m.sort.key === c.key;
    th.setAttribute("aria-sort", active ? (m.sort.descending ? "descending" : "ascending") : "none");
    const b = el("button", "sort", `${c.label}${active ? (m.sort.descending ? " ▾" : " ▴") : ""}`);
    b.type = "button";
    b.dataset.sort = c.key;
    b.title = `Sort the processes by ${c.key === "memory" ? "GPU memory" : c.label.toLowerCase()}`;
    b.addEventListener("click", () => vscode.postMessage({ type: "sort", key: c.key }));
    th.append(b);
    tr.append(th);
  }
  head.append(tr);
  const body = el("tbody");
  for (const p of g.processes) {
    const row = el("tr", [p.workspaceRun ? "run" : p.own ? "own" : "", p.busyButIdle ? "busy-idle" : ""].filter(Boolean).join(" "));
    row.dataset.pid = String(p.pid);
    if (p.busyButIdle) row.title = `Your process on a GPU that is busy but idle. ${g.busyButIdleText}`;
    // The column says "User": an unknown one reads "unknown" (as in the tree), its tooltip says why.
    const user = el("td", "col-user", p.user);
    user.title = p.userNote ?? p.user;
    const cmd = el("td", "col-command", p.program);
    cmd.title = p.command + (p.workspaceRun ? " (this workspace's run)" : "") + (p.busyButIdle ? `\n${g.busyButIdleText}` : "");
    row.append(el("td", "col-pid", String(p.pid)), user, el("td", "col-memory", p.memory), cmd);
    body.append(row);
  }
  table.append(head, body);
  return table;
}

function card(g: DashboardGpu, m: DashboardModel): HTMLElement {
  const c = el("section", `gpu${g.selected ? " selected" : ""}${g.lost ? " lost" : ""}`);
  c.dataset.uuid = g.uuid;
  c.setAttribute("aria-label", `GPU ${g.index}: ${g.name}`);
  const head = el("div", "head");
  const tick = el("input", "tick");
  tick.type = "checkbox";
  tick.id = `tick-${g.index}`;
  tick.checked = g.selected;
  tick.dataset.uuid = g.uuid;
  tick.title = g.selected ? `Runs, terminals and debug sessions see GPU ${g.index} (CUDA_VISIBLE_DEVICES)` : `Tick to let runs use GPU ${g.index}`;
  tick.addEventListener("change", () => vscode.postMessage({ type: "toggle", kind: "gpu", uuid: g.uuid, checked: tick.checked }));
  const name = el("label", "name");
  name.htmlFor = tick.id;
  name.append(el("span", "index", `GPU ${g.index}`), el("span", "model", g.name));
  const hist = el("button", "history", "History");
  hist.type = "button";
  hist.title = `Show the history of GPU ${g.index}`;
  hist.addEventListener("click", () => vscode.postMessage({ type: "showHistory", uuid: g.uuid }));
  head.append(tick, name, el("span", "temp", g.temperature), hist);
  c.append(head);
  if (g.lost) {
    c.append(el("p", "warning", "nvidia-smi reports this GPU as lost: reboot to recover it."));
    return c;
  }
  c.append(bar("Util", g.utilization, "GPU utilisation", "util", ["GPU-Util: the share of time any kernel ran (utilization.gpu)", g.activityNote].filter(Boolean).join("\n")));
  if (g.smActivity) c.append(bar("SM", g.smActivity, "SM activity", "sm", "SM activity: the share of SMs that were busy (nvidia-smi dmon, GPM). GPU-Util only says that some kernel ran."));
  c.append(bar("Mem", g.memory, "Memory used", "memory"));
  const facts = el("div", "facts");
  facts.append(el("span", "", `Power ${g.power}`), el("span", "", g.free));
  c.append(facts, sparkline(g));
  for (const w of g.warnings) c.append(el("p", "warning", w));
  if (g.busyButIdle) {
    const mine = g.processes.filter((p) => p.busyButIdle).map((p) => p.pid);
    const flag = el("p", "warning busy-idle", `Busy but idle: GPU-Util ${g.utilization.text}, SM ${g.smActivity?.text ?? "?"}${mine.length ? ` · your process ${mine.join(", ")}` : ""}`);
    flag.title = g.busyButIdleText;
    c.append(flag);
  }
  if (g.mig.length > 0) {
    const list = el("ul", "mig");
    list.setAttribute("aria-label", `MIG devices of GPU ${g.index}`);
    for (const d of g.mig) {
      const li = el("li");
      const box = el("input", "tick");
      box.type = "checkbox";
      box.id = `mig-${d.uuid}`;
      box.checked = d.selected;
      box.dataset.uuid = d.uuid;
      box.addEventListener("change", () => vscode.postMessage({ type: "toggle", kind: "mig", uuid: d.uuid, checked: box.checked }));
      const label = el("label", "", `MIG ${d.profile} · device ${d.device}`);
      label.htmlFor = box.id;
      label.title = d.uuid;
      li.append(box, label);
      list.append(li);
    }
    c.append(list);
  }
  c.append(processTable(g, m));
  return c;
}

function render(m: DashboardModel): void {
  // Keep the focused control focused across re-renders (keyboard users), by its data attributes.
  const focused = document.activeElement as HTMLElement | null;
  const focusKey = focused?.dataset.sort ? `[data-sort="${focused.dataset.sort}"]` : focused?.dataset.uuid ? `input[data-uuid="${CSS.escape(focused.dataset.uuid)}"]` : undefined;
  const focusCard = focused?.closest("section.gpu") as HTMLElement | null;
  root.replaceChildren();
  if (m.gpus.length === 0) root.append(el("p", "message", m.message || "No GPUs"));
  for (const g of m.gpus) root.append(card(g, m));
  if (focusKey) {
    const scope = focusCard?.dataset.uuid ? root.querySelector(`section.gpu[data-uuid="${CSS.escape(focusCard.dataset.uuid)}"]`) ?? root : root;
    (scope.querySelector(focusKey) as HTMLElement | null)?.focus();
  }
  report(m);
}

function report(m: DashboardModel): void {
  const cards = Array.from(root.querySelectorAll<HTMLElement>("section.gpu"));
  const rendered: DashboardRendered = {
    gpus: cards.map((c) => ({
      uuid: c.dataset.uuid ?? "",
      index: Number(c.querySelector(".index")?.textContent?.replace(/^GPU /, "") ?? NaN),
      checked: (c.querySelector<HTMLInputElement>(".head input.tick")?.checked) ?? false,
      pids: Array.from(c.querySelectorAll<HTMLElement>("tbody tr")).map((r) => Number(r.dataset.pid)),
      mig: Array.from(c.querySelectorAll<HTMLInputElement>("ul.mig input.tick")).map((b) => ({ uuid: b.dataset.uuid ?? "", checked: b.checked })),
      utilization: c.querySelector('[data-metric="util"] .metric-value')?.textContent ?? "",
      memory: c.querySelector('[data-metric="memory"] .metric-value')?.textContent ?? "",
      smActivity: c.querySelector('[data-metric="sm"] .metric-value')?.textContent ?? "",
      busyButIdle: c.querySelector("p.busy-idle") !== null,
      busyIdlePids: Array.from(c.querySelectorAll<HTMLElement>("tbody tr.busy-idle")).map((r) => Number(r.dataset.pid)),
    })),
    sort: m.sort,
    width: document.documentElement.clientWidth,
    overflowing: cards.some((c) => c.scrollWidth > c.clientWidth + 1) || document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
  };
  vscode.postMessage({ type: "rendered", rendered });
}

/** Clicks one of the dashboard's own controls (end-to-end tests: the same handlers as a user's click). */
function click(target: DashboardClickTarget): void {
  const cardOf = (uuid: string) => root.querySelector<HTMLElement>(`section.gpu[data-uuid="${CSS.escape(uuid)}"]`);
  if (target.kind === "tick") {
    const box = root.querySelector<HTMLInputElement>(`input.tick[data-uuid="${CSS.escape(target.uuid)}"]`);
    box?.click();
  } else {
    const scope = target.uuid ? cardOf(target.uuid) : root;
    scope?.querySelector<HTMLButtonElement>(`button[data-sort="${target.key}"]`)?.click();
  }
}

window.addEventListener("message", (ev: MessageEvent<ToDashboard>) => {
  const m = ev.data;
  if (m?.type === "model") {
    model = m.model;
    render(model);
  } else if (m?.type === "click") {
    click(m.target);
  }
});

let resizeTimer: number | undefined;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    if (model) report(model);
  }, 100);
});

vscode.postMessage({ type: "ready" });
