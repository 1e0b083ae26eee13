/// <reference lib="dom" />
/**
 * The GPU dashboard webview (bundled by esbuild into dist/dashboard.js: browser, iife). Renders the
 * {@link DashboardModel} the extension posts (client/src/gpu/dashboard.ts) in two tabs:
 *
 * - **GPUs**: one card per GPU (tick box, name and index, temperature, labelled utilisation and
 *   memory bars coloured by threshold, power/cap and free memory, a sparkline of the recent minutes,
 *   MIG devices with their tick boxes, a process table whose column headers sort it), or, when the
 *   GPUs would not fit the pane (dashboardLayout.ts chooseLayout: from 5 GPUs, or too little
 *   height), nvitop's density: two lines per GPU (tick, index and short name, util and memory bars,
 *   °C, W, processes and their users), a click on a row opening its full card beneath it;
 * - **Processes**: every GPU's processes in one table (GPU, pid, user, GPU memory, SM %, CPU %, host
 *   memory, running time, full command line), sorted by any column header, filtered by user, with
 *   Stop (SIGTERM) and Kill (SIGKILL) per process behind a confirmation the extension words. The
 *   webview tells the extension which tab it shows (`view`): SM % is read (nvidia-smi pmon, every
 *   10 s) only while this one is.
 *
 * Everything is a native control (checkbox, button, select), so it is reachable with Tab and works
 * with Space/Enter. Text goes in through textContent only; bar widths through the CSSOM (the CSP
 * forbids inline style attributes).
 */
import type {
  DashboardClickTarget,
  DashboardRendered,
  DashboardView,
  FromDashboard,
  ToDashboard,
} from "../src/gpu/dashboard";
import type { DashboardBar, DashboardGpu, DashboardModel } from "../src/gpu/dashboardModel";
import { chooseLayout, type DashboardLayout } from "../src/gpu/dashboardLayout";
import { SPARK_BOX, sparkBaseline, sparkPath } from "../src/gpu/sparkline";
import {
  commandCell,
  type DashboardProcess,
  PROCESS_COLUMNS,
  PROCESS_SORT_KEYS,
  type ProcessSortKey,
  SM_NOT_READ,
} from "../src/gpu/processTable";

interface PageState {
  view: DashboardView;
  expanded: string[];
}
declare function acquireVsCodeApi(): {
  postMessage(m: FromDashboard): void;
  getState(): PageState | undefined;
  setState(s: PageState): void;
};
const vscode = acquireVsCodeApi();
const root = document.getElementById("cards") as HTMLElement;
const SVG = "http://www.w3.org/2000/svg";

let model: DashboardModel | undefined;
const saved = vscode.getState();
let view: DashboardView = saved?.view === "processes" ? "processes" : "gpus";
const expanded = new Set<string>(
  Array.isArray(saved?.expanded) ? saved.expanded.filter((u) => typeof u === "string") : [],
);
let layout: DashboardLayout = "full";
/** The confirmation on screen (from the extension), and the last result line. */
let confirm: Extract<ToDashboard, { type: "confirm" }> | undefined;
let result: { ok: boolean; message: string } | undefined;

function saveState(): void {
  vscode.setState({ view, expanded: [...expanded] });
}

/** Shows tab `v` from the next render on, and tells the extension (SM % is read only for the Processes tab). */
function setView(v: DashboardView): void {
  if (v === view) return;
  view = v;
  saveState();
  vscode.postMessage({ type: "view", view });
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
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
  row.append(el("span", "metric-label", label), meterTrack(b, what, "bar"), el("span", "metric-value", b.text));
  return row;
}

/** A bar's track (class `cls`, plus its level) with its fill: role meter, `what: 12%` for screen readers. */
function meterTrack(b: DashboardBar, what: string, cls: string): HTMLElement {
  const track = el("div", `${cls} level-${b.level}`);
  track.setAttribute("role", "meter");
  track.setAttribute("aria-label", `${what}: ${b.text}`);
  track.setAttribute("aria-valuemin", "0");
  track.setAttribute("aria-valuemax", "100");
  if (b.fraction !== null) track.setAttribute("aria-valuenow", String(Math.round(b.fraction * 100)));
  const fill = el("div", "fill");
  fill.style.width = `${b.fraction === null ? 0 : Math.max(b.fraction > 0 ? 1 : 0, b.fraction * 100)}%`;
  track.append(fill);
  return track;
}

/**
 * The sparkline: utilisation (0..100) and memory (0..1) over the window, as two polylines in an SVG
 * over the 0 level's baseline (sparkline.ts: kept clear of the box's edges, so that an idle GPU's
 * flat line reads as data). Memory is dashed and drawn over utilisation: where the two meet (an idle
 * GPU with little memory in use) both show.
 */
function sparkline(g: DashboardGpu): HTMLElement {
  const box = el("div", "spark");
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${SPARK_BOX.width} ${SPARK_BOX.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  const n = Math.max(g.spark.utilization.length, g.spark.memory.length);
  const span = g.spark.seconds < 120 ? `${g.spark.seconds} s` : `${Math.round(g.spark.seconds / 60)} min`;
  svg.setAttribute("aria-label", n === 0 ? "No history yet" : `Utilisation and memory over the last ${span}`);
  const line = (d: string, cls: string) => {
    if (!d) return;
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    path.setAttribute("class", cls);
    svg.append(path);
  };
  line(sparkBaseline(), "spark-base");
  line(sparkPath(g.spark.utilization, 100), "spark-util");
  line(sparkPath(g.spark.memory, 1), "spark-mem");
  box.append(svg);
  const legend = el("div", "spark-legend");
  legend.append(
    el("span", "key-util", "util"),
    el("span", "key-mem", "memory"),
    el("span", "spark-span", n === 0 ? "no history yet" : `last ${span}`),
  );
  box.append(legend);
  return box;
}

const COLUMNS: { key: ProcessSortKey; label: string }[] = [
  { key: "pid", label: "PID" },
  { key: "user", label: "User" },
  { key: "memory", label: "Mem" },
  { key: "command", label: "Command" },
];

const capitalised = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

function sortButton(key: ProcessSortKey, label: string, m: DashboardModel): HTMLTableCellElement {
  const th = el("th", `col-${key}`);
  th.setAttribute("scope", "col");
  const active = m.sort.key === key;
  th.setAttribute("aria-sort", active ? (m.sort.descending ? "descending" : "ascending") : "none");
  // The arrow in a smaller span of its own: it fits the narrow columns (GPU, SM) beside its name.
  const b = el("button", "sort", label);
  if (active) b.append(el("span", "arrow", m.sort.descending ? "▾" : "▴"));
  b.type = "button";
  b.dataset.sort = key;
  b.title = `${capitalised(PROCESS_COLUMNS[key].full)}: sort the processes by it`;
  b.addEventListener("click", () => vscode.postMessage({ type: "sort", key }));
  th.append(b);
  return th;
}

function processTable(g: DashboardGpu, m: DashboardModel): HTMLElement {
  if (g.processes.length === 0) return el("p", "none", "No compute processes");
  const table = el("table", "procs");
  table.setAttribute("aria-label", `Processes on GPU ${g.index}`);
  const head = el("thead");
  const tr = el("tr");
  for (const c of COLUMNS) tr.append(sortButton(c.key, c.label, m));
  head.append(tr);
  const body = el("tbody");
  for (const p of g.processes) {
    const row = el(
      "tr",
      [p.workspaceRun ? "run" : p.own ? "own" : "", p.busyButIdle ? "busy-idle" : ""].filter(Boolean).join(" "),
    );
    row.dataset.pid = String(p.pid);
    if (p.busyButIdle) row.title = `Your process on a GPU that is busy but idle. ${g.busyButIdleText}`;
    // The column says "User": an unknown one reads "unknown" (as in the tree), its tooltip says why.
    const user = el("td", "col-user", p.user);
    user.title = p.userNote ?? p.user;
    const cmd = el("td", "col-command", p.program);
    cmd.title =
      p.command + (p.workspaceRun ? " (this workspace's run)" : "") + (p.busyButIdle ? `\n${g.busyButIdleText}` : "");
    row.append(el("td", "col-pid", String(p.pid)), user, el("td", "col-memory", p.memory), cmd);
    body.append(row);
  }
  table.append(head, body);
  return table;
}

/** The tick box that selects GPU `g` for runs (the card's and the compact row's). */
function gpuTick(g: DashboardGpu): HTMLInputElement {
  const tick = el("input", "tick");
  tick.type = "checkbox";
  tick.id = `tick-${g.index}`;
  tick.checked = g.selected;
  tick.dataset.uuid = g.uuid;
  tick.title = g.selected
    ? `Runs, terminals and debug sessions see GPU ${g.index} (CUDA_VISIBLE_DEVICES)`
    : `Tick to let runs use GPU ${g.index}`;
  tick.addEventListener("change", () =>
    vscode.postMessage({ type: "toggle", kind: "gpu", uuid: g.uuid, checked: tick.checked }),
  );
  return tick;
}

function card(g: DashboardGpu, m: DashboardModel): HTMLElement {
  const c = el("section", `gpu${g.selected ? " selected" : ""}${g.lost ? " lost" : ""}`);
  c.dataset.uuid = g.uuid;
  c.setAttribute("aria-label", `GPU ${g.index}: ${g.name}`);
  const head = el("div", "head");
  const tick = gpuTick(g);
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
  c.append(
    bar(
      "Util",
      g.utilization,
      "GPU utilisation",
      "util",
      ["GPU-Util: the share of time any kernel ran (utilization.gpu)", g.activityNote].filter(Boolean).join("\n"),
    ),
  );
  if (g.smActivity)
    c.append(
      bar(
        "SM",
        g.smActivity,
        "SM activity",
        "sm",
        "SM activity: the share of SMs that were busy (nvidia-smi dmon, GPM). GPU-Util only says that some kernel ran.",
      ),
    );
  // used + free falls short of the total by what the driver reserves: the tooltips say so.
  c.append(bar("Mem", g.memory, "Memory used", "memory", `Memory used of total. ${g.memoryNote}`));
  const facts = el("div", "facts");
  const free = el("span", "free", g.free);
  free.title = g.memoryNote;
  facts.append(el("span", "", `Power ${g.power}`), free);
  c.append(facts, sparkline(g));
  for (const w of g.warnings) c.append(el("p", "warning", w));
  if (g.busyButIdle) {
    const mine = g.processes.filter((p) => p.busyButIdle).map((p) => p.pid);
    const flag = el(
      "p",
      "warning busy-idle",
      `Busy but idle: GPU-Util ${g.utilization.text}, SM ${g.smActivity?.text ?? "?"}${mine.length ? ` · your process ${mine.join(", ")}` : ""}`,
    );
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
      box.addEventListener("change", () =>
        vscode.postMessage({ type: "toggle", kind: "mig", uuid: d.uuid, checked: box.checked }),
      );
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

/** A small bar for the compact row: role meter, its value in the label. */
function miniBar(b: DashboardBar, what: string, key: string): HTMLElement {
  const track = meterTrack(b, what, "bar mini");
  track.dataset.metric = key;
  return track;
}

/**
 * A GPU in two lines (nvitop's density): tick, `0 H200`, util bar and %, memory bar and
 * `used/total GiB`; then °C, W (draw/cap) and the processes with their users. The name opens
 * (or closes) the full card beneath the row.
 */
function compactRow(g: DashboardGpu, m: DashboardModel): HTMLElement {
  const open = expanded.has(g.uuid);
  const row = el(
    "section",
    `gpu-row${g.selected ? " selected" : ""}${g.lost ? " lost" : ""}${g.busyButIdle || g.warnings.length ? " flagged" : ""}`,
  );
  row.dataset.uuid = g.uuid;
  row.setAttribute("aria-label", `GPU ${g.index}: ${g.name}`);
  const line1 = el("div", "line1");
  const tick = gpuTick(g);
  const name = el("button", "expand");
  name.type = "button";
  name.dataset.expand = g.uuid;
  name.setAttribute("aria-expanded", String(open));
  name.title = `${open ? "Hide" : "Show"} the full card of GPU ${g.index}: ${g.name}`;
  name.append(el("span", "index", String(g.index)), el("span", "model", g.shortName));
  name.addEventListener("click", () => {
    if (expanded.has(g.uuid)) expanded.delete(g.uuid);
    else expanded.add(g.uuid);
    saveState();
    if (model) render(model);
  });
  line1.append(tick, name);
  if (g.lost) {
    line1.append(el("span", "warning", "lost: reboot to recover"));
    row.append(line1);
    return row;
  }
  const util = el("span", "metric-value util", g.utilization.text);
  util.dataset.metric = "util";
  util.title = ["GPU-Util (utilization.gpu)", g.smActivity ? `SM activity ${g.smActivity.text}` : g.activityNote]
    .filter(Boolean)
    .join(" · ");
  // The compact column is fixed (bars line up across GPUs): "129.9/140.4" is shown, the unit is in the
  // tooltip and in a hidden span (the element's text stays the tree's `129.9/140.4 GiB`).
  const shown = g.memory.text.replace(/ GiB$/, "");
  const mem = el("span", "metric-value mem", shown);
  if (shown !== g.memory.text) mem.append(el("span", "unit", g.memory.text.slice(shown.length)));
  mem.dataset.metric = "memory";
  mem.title = `Memory used of total: ${g.memory.text}. ${g.memoryNote}`;
  line1.append(
    miniBar(g.utilization, "GPU utilisation", "util-bar"),
    util,
    miniBar(g.memory, "Memory used", "memory-bar"),
    mem,
  );
  const line2 = el("div", "line2");
  line2.append(el("span", "temp", g.temperature), el("span", "power", g.power.replace("/", " / ").replace(" / ", "/")));
  const procs = el("span", "procs-summary", g.summary || "no processes");
  procs.title =
    g.processes.map((p) => `${p.pid} ${p.user} ${p.memory} ${p.program}`).join("\n") || "No compute processes";
  line2.append(procs);
  if (g.busyButIdle) {
    const flag = el("span", "warning busy-idle", "busy but idle");
    flag.title = g.busyButIdleText;
    line2.append(flag);
  } else if (g.warnings.length > 0) {
    const flag = el("span", "warning", "⚠");
    flag.title = g.warnings.join("\n");
    line2.append(flag);
  }
  row.append(line1, line2);
  if (open) row.append(card(g, m));
  return row;
}

/**
 * The Processes tab's columns: one header line, over line 1 of each process (GPU, PID, User, GPU
 * memory, SM, CPU); line 2 holds host memory and running time, each labelled in the cell, and
 * Stop/Kill; line 3 the full command line. Every column sorts from the Sort list; the six of line 1
 * also from their header.
 */
const LINE1: ProcessSortKey[] = ["gpu", "pid", "user", "memory", "sm", "cpu"];

/** The value of `p` in column `key`, as the table writes it. */
function cellText(p: DashboardProcess, key: ProcessSortKey): string {
  switch (key) {
    case "gpu":
      return String(p.gpuIndex);
    case "pid":
      return String(p.pid);
    case "user":
      return p.user;
    case "memory":
      return p.memory;
    case "sm":
      return p.sm;
    case "cpu":
      return p.cpu;
    case "host":
      return p.hostMemory;
    case "time":
      return p.time;
    case "command":
      return commandCell(p);
  }
}

/** The process table of every GPU: two lines per process, every header sorts, a user filter, Stop and Kill. */
function processesView(m: DashboardModel): HTMLElement {
  const box = el("div", "processes");
  const bar = el("div", "table-bar");
  const label = el("label", "filter");
  label.append(el("span", "", "User "));
  const select = el("select", "user-filter");
  select.title = "Show the processes of one user";
  // Each user with their count (the table's count when filtered: `alice (3)`).
  const counts = new Map<string, number>();
  for (const p of m.gpus.flatMap((g) => g.processes)) counts.set(p.user, (counts.get(p.user) ?? 0) + 1);
  const all = el("option", "", `everyone (${m.processCount})`);
  all.value = "";
  select.append(all);
  for (const u of m.users) {
    const o = el("option", "", counts.has(u) ? `${u} (${counts.get(u)})` : u);
    o.value = u;
    select.append(o);
  }
  select.value = m.userFilter;
  select.addEventListener("change", () => vscode.postMessage({ type: "filter", user: select.value }));
  label.append(select);
  bar.append(label, sortControl(m));
  box.append(bar);
  if (confirm) box.append(confirmBox(confirm));
  if (result) box.append(el("p", `result${result.ok ? "" : " warning"}`, result.message));
  if (m.processes.length === 0) {
    box.append(el("p", "none", m.processCount === 0 ? "No compute processes on any GPU" : "No processes of this user"));
    return box;
  }
  const table = el("table", "ptable");
  table.setAttribute("aria-label", "Processes on every GPU");
  const head = el("thead");
  const headRow = el("tr");
  for (const key of LINE1) headRow.append(sortButton(key, PROCESS_COLUMNS[key].short, m));
  head.append(headRow);
  table.append(head);
  for (const p of m.processes) {
    const body = el(
      "tbody",
      [p.workspaceRun ? "run" : p.own ? "own" : "", p.busyButIdle ? "busy-idle" : ""].filter(Boolean).join(" "),
    );
    body.dataset.pid = String(p.pid);
    const rows = [el("tr", "line1"), el("tr", "line2"), el("tr", "line3")];
    for (const key of LINE1) {
      const td = el("td", `col-${key}`, cellText(p, key));
      if (key === "user") td.title = p.userNote ?? p.user;
      if (key === "sm") td.title = p.smNote ?? SM_NOT_READ;
      if (key === "cpu" && p.hostNote) td.title = `Not readable: ${p.hostNote}`;
      rows[0].append(td);
    }
    // Line 2: host memory and running time, each with its name (no header line of their own).
    const hostTime = el("td", "col-host-time");
    hostTime.setAttribute("colspan", "3");
    for (const key of ["host", "time"] as const) {
      const part = el("span", `col-${key}`);
      part.append(el("span", "cell-label", key === "host" ? "host " : "up "), cellText(p, key));
      part.title = p.hostNote ? `Not readable: ${p.hostNote}` : capitalised(PROCESS_COLUMNS[key].full);
      hostTime.append(part);
    }
    const act = el("td", "col-actions");
    act.setAttribute("colspan", "3");
    act.append(actions(p));
    rows[1].append(hostTime, act);
    const cmd = el("td", "col-command", cellText(p, "command"));
    cmd.setAttribute("colspan", "6");
    cmd.title = p.command + (p.workspaceRun ? " (this workspace's run)" : "") + (p.hostNote ? `\n${p.hostNote}` : "");
    rows[2].append(cmd);
    body.append(...rows);
    table.append(body);
  }
  box.append(table);
  return box;
}

/**
 * The Sort list (every column by its full name, host memory, time and command line too) and the
 * direction button beside it (▾ descending, ▴ ascending: a click turns it round).
 */
function sortControl(m: DashboardModel): HTMLElement {
  const label = el("label", "sort-by");
  label.append(el("span", "", "Sort "));
  const select = el("select", "sort-key");
  select.title = "Sort the processes by a column";
  for (const key of PROCESS_SORT_KEYS) {
    const o = el("option", "", capitalised(PROCESS_COLUMNS[key].full.replace(/ \(.*\)$/, "")));
    o.value = key;
    select.append(o);
  }
  select.value = m.sort.key;
  select.addEventListener("change", () => vscode.postMessage({ type: "sort", key: select.value as ProcessSortKey }));
  const dir = el("button", "sort-dir", m.sort.descending ? "▾" : "▴");
  dir.type = "button";
  dir.dataset.sortDir = m.sort.key;
  dir.title = m.sort.descending ? "Descending: click for ascending" : "Ascending: click for descending";
  dir.setAttribute("aria-label", dir.title);
  dir.addEventListener("click", () => vscode.postMessage({ type: "sort", key: m.sort.key }));
  label.append(select);
  const box = el("span", "sort");
  box.append(label, dir);
  return box;
}

/** Stop and Kill of a process row (where /proc showed it), or a tooltip saying why not. */
function actions(p: DashboardProcess): HTMLElement {
  const box = el("span", "col-actions");
  if (!p.canSignal) {
    box.title = p.hostNote ? `Stop and Kill need the process in this /proc: ${p.hostNote}` : "Not read yet";
    return box;
  }
  for (const [signal, text] of [
    ["SIGTERM", "Stop"],
    ["SIGKILL", "Kill"],
  ] as const) {
    const b = el("button", `signal ${signal === "SIGKILL" ? "kill" : "stop"}`, text);
    b.type = "button";
    b.dataset.signal = signal;
    b.dataset.pid = String(p.pid);
    b.title = `${text} process ${p.pid} (${signal}); asks first`;
    b.addEventListener("click", () => vscode.postMessage({ type: "askSignal", pid: p.pid, signal }));
    box.append(b);
  }
  return box;
}

/** The Stop/Kill confirmation: the extension's question (pid, user, command line), its warning, the two answers. */
function confirmBox(c: Extract<ToDashboard, { type: "confirm" }>): HTMLElement {
  const box = el("div", "confirm");
  box.setAttribute("role", "alertdialog");
  box.setAttribute("aria-label", c.question);
  box.append(el("p", "question", c.question));
  if (c.warning) box.append(el("p", "warning", c.warning));
  const yes = el(
    "button",
    `confirm-yes ${c.signal === "SIGKILL" ? "kill" : "stop"}`,
    c.signal === "SIGKILL" ? `Kill ${c.pid}` : `Stop ${c.pid}`,
  );
  yes.type = "button";
  yes.dataset.confirm = "yes";
  const no = el("button", "confirm-no", "Cancel");
  no.type = "button";
  no.dataset.confirm = "no";
  const answer = (confirmed: boolean) => {
    vscode.postMessage({ type: "signal", token: c.token, confirmed });
    confirm = undefined;
    if (model) render(model);
  };
  yes.addEventListener("click", () => answer(true));
  no.addEventListener("click", () => answer(false));
  const buttons = el("div", "buttons");
  buttons.append(yes, no);
  box.append(buttons);
  return box;
}

/** The tabs: GPUs and Processes, with their counts. */
function tabs(m: DashboardModel): HTMLElement {
  const nav = el("div", "tabs");
  nav.setAttribute("role", "tablist");
  for (const [v, text] of [
    ["gpus", `GPUs (${m.gpus.length})`],
    ["processes", `Processes (${m.processCount})`],
  ] as const) {
    const b = el("button", `tab${view === v ? " active" : ""}`, text);
    b.type = "button";
    b.setAttribute("role", "tab");
    b.setAttribute("aria-selected", String(view === v));
    b.dataset.view = v;
    b.addEventListener("click", () => {
      setView(v);
      if (model) render(model);
    });
    nav.append(b);
  }
  return nav;
}

function render(m: DashboardModel): void {
  // Keep the focused control focused across re-renders (keyboard users), by its data attributes.
  const focused = document.activeElement as HTMLElement | null;
  const focusKey = focused?.dataset.sort
    ? `[data-sort="${focused.dataset.sort}"]`
    : focused?.dataset.uuid
      ? `input[data-uuid="${CSS.escape(focused.dataset.uuid)}"]`
      : focused?.dataset.view
        ? `[data-view="${focused.dataset.view}"]`
        : focused?.dataset.expand
          ? `[data-expand="${CSS.escape(focused.dataset.expand)}"]`
          : focused?.dataset.signal
            ? `[data-signal="${focused.dataset.signal}"][data-pid="${focused.dataset.pid ?? ""}"]`
            : focused?.dataset.confirm
              ? `[data-confirm="${focused.dataset.confirm}"]`
              : focused?.classList.contains("user-filter")
                ? "select.user-filter"
                : focused?.classList.contains("sort-key")
                  ? "select.sort-key"
                  : focused?.classList.contains("sort-dir")
                    ? "button.sort-dir"
                    : undefined;
  const focusCard = focused?.closest("section.gpu, section.gpu-row") as HTMLElement | null;
  root.replaceChildren();
  layout = chooseLayout(m.gpus.length, window.innerHeight);
  document.body.dataset.layout = layout;
  if (m.gpus.length === 0) {
    root.append(el("p", "message", m.message || "No GPUs"));
  } else {
    root.append(tabs(m));
    if (view === "processes") root.append(processesView(m));
    else for (const g of m.gpus) root.append(layout === "compact" ? compactRow(g, m) : card(g, m));
  }
  if (focusKey) {
    const scope = focusCard?.dataset.uuid
      ? (root.querySelector(`section[data-uuid="${CSS.escape(focusCard.dataset.uuid)}"]`) ?? root)
      : root;
    (scope.querySelector(focusKey) as HTMLElement | null)?.focus();
  }
  report(m);
}

function report(m: DashboardModel): void {
  const sections = Array.from(root.querySelectorAll<HTMLElement>(":scope > section.gpu, :scope > section.gpu-row"));
  const doc = document.documentElement;
  const rendered: DashboardRendered = {
    gpus: sections.map((c) => {
      const full = c.matches("section.gpu") ? c : c.querySelector<HTMLElement>("section.gpu");
      const g = m.gpus.find((x) => x.uuid === c.dataset.uuid);
      return {
        uuid: c.dataset.uuid ?? "",
        index: Number(c.querySelector(".index")?.textContent?.replace(/^GPU /, "") ?? NaN),
        checked: c.querySelector<HTMLInputElement>("input.tick")?.checked ?? false,
        // A compact row lists its processes in its summary; the pids are the model's in the card's order.
        pids: full
          ? Array.from(full.querySelectorAll<HTMLElement>("tbody tr")).map((r) => Number(r.dataset.pid))
          : (g?.processes.map((p) => p.pid) ?? []),
        mig: Array.from(c.querySelectorAll<HTMLInputElement>("ul.mig input.tick")).map((b) => ({
          uuid: b.dataset.uuid ?? "",
          checked: b.checked,
        })),
        utilization: c.querySelector('[data-metric="util"] .metric-value, span[data-metric="util"]')?.textContent ?? "",
        memory: c.querySelector('[data-metric="memory"] .metric-value, span[data-metric="memory"]')?.textContent ?? "",
        // A compact row writes SM activity in its util tooltip; the value is the model's.
        smActivity:
          c.querySelector('[data-metric="sm"] .metric-value')?.textContent ?? (full ? "" : (g?.smActivity?.text ?? "")),
        busyButIdle: c.querySelector(".busy-idle:not(tr)") !== null,
        busyIdlePids: Array.from(c.querySelectorAll<HTMLElement>("tbody tr.busy-idle")).map((r) =>
          Number(r.dataset.pid),
        ),
      };
    }),
    sort: m.sort,
    view,
    layout,
    expanded: [...expanded].filter((u) => m.gpus.some((g) => g.uuid === u)),
    table: {
      pids: Array.from(root.querySelectorAll<HTMLElement>("table.ptable tbody")).map((b) => Number(b.dataset.pid)),
      userFilter: root.querySelector<HTMLSelectElement>("select.user-filter")?.value ?? m.userFilter,
      headers: Array.from(root.querySelectorAll<HTMLElement>("table.ptable th button")).map((b) => b.textContent ?? ""),
      ...headerFit(),
      cellsClipped: cellsClipped(),
      sortList: root.querySelector<HTMLSelectElement>("select.sort-key")?.value ?? "",
    },
    confirm: root.querySelector(".confirm .question")?.textContent ?? "",
    result: root.querySelector("p.result")?.textContent ?? "",
    height: doc.clientHeight,
    fitsHeight: doc.scrollHeight <= doc.clientHeight + 1,
    width: doc.clientWidth,
    overflowing: sections.some((c) => c.scrollWidth > c.clientWidth + 1) || doc.scrollWidth > doc.clientWidth + 1,
  };
  vscode.postMessage({ type: "rendered", rendered });
}

/**
 * How the Processes tab's header is laid out: the lines its sort buttons take (distinct tops) and
 * the labels of those that do not fit their cell (wider than the cell's content box: clipped or
 * running into the next column).
 */
function headerFit(): { headerLines: number; clipped: string[] } {
  const buttons = Array.from(root.querySelectorAll<HTMLElement>("table.ptable thead th button"));
  const boxes = buttons.map((b) => b.getBoundingClientRect());
  // Lines: the header's height in lines of its shortest button (a glyph such as ▾ may shift one a
  // pixel: still one line).
  const lineHeight = Math.min(...boxes.map((r) => r.height));
  const span = Math.max(...boxes.map((r) => r.bottom)) - Math.min(...boxes.map((r) => r.top));
  const clipped = buttons
    .filter((b) => {
      const th = b.closest("th") as HTMLElement;
      const cell = th.getBoundingClientRect();
      const style = getComputedStyle(th);
      const contentLeft = cell.left + parseFloat(style.paddingLeft);
      const contentRight = cell.right - parseFloat(style.paddingRight);
      const r = b.getBoundingClientRect();
      return b.scrollWidth > b.clientWidth + 0.5 || r.left < contentLeft - 0.5 || r.right > contentRight + 0.5;
    })
    .map((b) => b.textContent ?? "");
  return { headerLines: buttons.length === 0 ? 0 : Math.round(span / lineHeight), clipped };
}

/**
 * The numbers in the Processes tab's rows (GPU, PID, memory, SM %, CPU %) that do not fit their
 * cells, as `<column> <text>` (`sm 100%`): cut with an ellipsis by the fixed table layout.
 */
function cellsClipped(): string[] {
  const cells = Array.from(
    root.querySelectorAll<HTMLElement>(
      "table.ptable tr.line1 td.col-gpu, table.ptable tr.line1 td.col-pid, table.ptable tr.line1 td.col-memory, table.ptable tr.line1 td.col-sm, table.ptable tr.line1 td.col-cpu",
    ),
  );
  return cells
    .filter((td) => td.scrollWidth > td.clientWidth + 0.5)
    .map((td) => `${td.className.replace(/^col-/, "").split(" ")[0]} ${td.textContent ?? ""}`);
}

/** Clicks one of the dashboard's own controls (end-to-end tests: the same handlers as a user's click). */
function click(target: DashboardClickTarget): void {
  const cardOf = (uuid: string) => root.querySelector<HTMLElement>(`section[data-uuid="${CSS.escape(uuid)}"]`);
  switch (target.kind) {
    case "tick":
      root.querySelector<HTMLInputElement>(`input.tick[data-uuid="${CSS.escape(target.uuid)}"]`)?.click();
      return;
    case "sort": {
      const button = () =>
        (target.uuid ? cardOf(target.uuid) : root)?.querySelector<HTMLButtonElement>(
          `button[data-sort="${target.key}"]`,
        );
      // A compact row's table is in its full card: open it first, as a user would.
      if (!button() && target.uuid) cardOf(target.uuid)?.querySelector<HTMLButtonElement>("button.expand")?.click();
      if (button()) return button()?.click();
      // The Processes tab's host memory, time and command sort from the Sort list (the same
      // column again: its direction button).
      const list = root.querySelector<HTMLSelectElement>("select.sort-key");
      if (!list || target.uuid) return;
      if (list.value === target.key) return root.querySelector<HTMLButtonElement>("button.sort-dir")?.click();
      list.value = target.key;
      list.dispatchEvent(new Event("change"));
      return;
    }
    case "view":
      root.querySelector<HTMLButtonElement>(`button[data-view="${target.view}"]`)?.click();
      return;
    case "expand":
      root.querySelector<HTMLButtonElement>(`button[data-expand="${CSS.escape(target.uuid)}"]`)?.click();
      return;
    case "filter": {
      const select = root.querySelector<HTMLSelectElement>("select.user-filter");
      if (!select) return;
      select.value = target.user;
      select.dispatchEvent(new Event("change"));
      return;
    }
    case "signal":
      root
        .querySelector<HTMLButtonElement>(`button[data-signal="${target.signal}"][data-pid="${target.pid}"]`)
        ?.click();
      return;
    case "confirm":
    case "cancel":
      root
        .querySelector<HTMLButtonElement>(`button[data-confirm="${target.kind === "confirm" ? "yes" : "no"}"]`)
        ?.click();
      return;
  }
}

window.addEventListener("message", (ev: MessageEvent<ToDashboard>) => {
  const m = ev.data;
  if (m?.type === "model") {
    model = m.model;
    render(model);
  } else if (m?.type === "click") {
    click(m.target);
  } else if (m?.type === "confirm") {
    confirm = m;
    result = undefined;
    setView("processes");
    if (model) render(model);
  } else if (m?.type === "signalResult") {
    result = { ok: m.ok, message: m.message };
    if (model) render(model);
  }
});

let resizeTimer: number | undefined;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    // The layout follows the pane's height: render again when it changes the choice.
    if (model && chooseLayout(model.gpus.length, window.innerHeight) !== layout) render(model);
    else if (model) report(model);
  }, 100);
});

vscode.postMessage({ type: "view", view });
vscode.postMessage({ type: "ready" });
