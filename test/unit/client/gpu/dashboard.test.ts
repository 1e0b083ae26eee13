// The GPU dashboard: its model (client/src/gpu/dashboardModel.ts: cards, bars, sparkline, sorted
// processes, MIG, ticks) from the fake nvidia-smi's 2 x H200, 8 x H200 and MIG shapes, and its
// provider (client/src/gpu/dashboard.ts) with a stand-in webview: ticks in the webview write the
// selection the tree and status bar read, sort clicks re-sort, the CSP is strict.
import { commands, memento, recorded, settings, Uri, EventEmitter } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import {
  checkDashboardMessage,
  GpuDashboard,
  type FromDashboard,
  type ToDashboard,
} from "../../../../client/src/gpu/dashboard";
import {
  buildDashboardModel,
  bucketByTime,
  nextSort,
  sparkPoints,
  sortProcesses,
  type DashboardProcess,
} from "../../../../client/src/gpu/dashboardModel";
import { GpuTreeProvider, treeRows } from "../../../../client/src/gpu/tree";
import { statusBarContent } from "../../../../client/src/gpu/statusBar";
import { GpuHistory } from "../../../../client/src/gpu/history";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");

async function monitorFor(mode: string): Promise<GpuMonitor> {
  process.env.FAKE_NVIDIA_SMI_MODE = mode;
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  settings.set("nvidiaSmiTimeoutMs", 5000);
  recorded.messages.length = 0;
  const monitor = new GpuMonitor({ proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" } });
  await monitor.refresh();
  assert.equal(monitor.state, "ok", monitor.problem);
  return monitor;
}

const proc = (
  pid: number,
  user: string,
  memoryMiB: number | null,
  command: string,
  more: Partial<DashboardProcess> = {},
): DashboardProcess => ({
  pid,
  gpuIndex: 0,
  gpuUuid: "GPU-0",
  user,
  memoryMiB,
  memory: "",
  smPercent: null,
  sm: "–",
  cpuPercent: null,
  cpu: "–",
  hostMemoryMiB: null,
  hostMemory: "–",
  runningS: null,
  time: "–",
  command,
  program: command,
  own: false,
  workspaceRun: false,
  busyButIdle: false,
  canSignal: false,
  ...more,
});

test("sortProcesses: each column both ways, unknown memory last when descending, ties by pid", () => {
  const rows = [
    proc(30, "bob", 100, "python b.py"),
    proc(10, "alice", null, "torchrun x"),
    proc(20, "Carol", 5000, "jupyter"),
    proc(5, "alice", 100, "a.out"),
  ];
  assert.deepEqual(
    sortProcesses(rows, { key: "memory", descending: true }).map((p) => p.pid),
    [20, 5, 30, 10],
  );
  assert.deepEqual(
    sortProcesses(rows, { key: "memory", descending: false }).map((p) => p.pid),
    [10, 5, 30, 20],
  );
  assert.deepEqual(
    sortProcesses(rows, { key: "pid", descending: false }).map((p) => p.pid),
    [5, 10, 20, 30],
  );
  assert.deepEqual(
    sortProcesses(rows, { key: "user", descending: false }).map((p) => p.pid),
    [5, 10, 30, 20],
    "case-insensitive; ties by pid",
  );
  assert.deepEqual(
    sortProcesses(rows, { key: "command", descending: true }).map((p) => p.pid),
    [10, 30, 20, 5],
  );
  assert.deepEqual(nextSort({ key: "memory", descending: true }, "memory"), { key: "memory", descending: false });
  assert.deepEqual(nextSort({ key: "memory", descending: true }, "pid"), { key: "pid", descending: false });
  assert.deepEqual(nextSort({ key: "pid", descending: false }, "memory"), { key: "memory", descending: true });
});

test("bucketByTime: equal slices of the window by time, averages, empty slices null, outside ignored", () => {
  // 4 slices of 0..400 ms: samples at 10 and 20 share slice 0, nothing in slice 1, 250 in slice 2, 400 (the right end) in slice 3.
  assert.deepEqual(bucketByTime([10, 20, 250, 400], [2, 4, 6, 8], 0, 400, 4), [3, null, 6, 8]);
  assert.deepEqual(
    bucketByTime([-5, 100, 500], [1, 2, 3], 0, 400, 4),
    [null, 2, null, null],
    "samples before the window or after its end are ignored",
  );
  assert.deepEqual(
    bucketByTime([10, 20], [null, 5], 0, 400, 4),
    [5, null, null, null],
    "an unknown value does not count in its slice's average",
  );
  // A minute of samples in a 10-minute window fills only the right tenth: the x axis is time, not sample count.
  const at = Array.from({ length: 60 }, (_, i) => 540_000 + i * 1000);
  const sl = bucketByTime(
    at,
    at.map(() => 50),
    0,
    600_000,
    60,
  );
  assert.equal(sl.length, 60);
  assert.equal(sl.filter((v) => v !== null).length, 6, "60 one-second samples cover 6 of 60 ten-second slices");
  assert.deepEqual(sl.slice(0, 54), new Array(54).fill(null));
});

test("model of the 2 x H200 capture: numbers as the tree writes them, the process, ticks from the selection", async () => {
  const monitor = await monitorFor("busy");
  const model = buildDashboardModel({
    state: monitor.state,
    problem: monitor.problem,
    inventory: monitor.inventory,
    selection: ["1"],
  });
  assert.deepEqual(
    model.gpus.map((g) => [
      g.index,
      g.name,
      g.selected,
      g.utilization.text,
      g.memory.text,
      g.temperature,
      g.power,
      g.free,
    ]),
    [
      [0, "NVIDIA H200", false, "0%", "0.0/140.4 GiB", "35°C", "109/700 W", "139.8 GiB free"],
      [1, "NVIDIA H200", true, "0%", "0.0/140.4 GiB", "36°C", "101/700 W", "139.8 GiB free"],
    ],
  );
  // 0.0 used + 139.8 free is not 140.4: the tooltips give the reserved 615 MiB (nvidia-smi's memory.reserved, 616 in -q).
  assert.equal(
    model.gpus[0].memoryNote,
    "0 MiB used + 139.8 GiB free + 615 MiB reserved by the NVIDIA driver and firmware (nvidia-smi memory.reserved) = 140.4 GiB total",
  );
  assert.deepEqual(model.gpus[0].utilization, { fraction: 0, level: "low", text: "0%" });
  assert.deepEqual(
    model.gpus[0].processes.map((p) => [p.pid, p.user, p.memory, p.command]),
    [[582, "unknown", "3.3 GiB", "python3"]],
  );
  assert.match(
    model.gpus[0].processes[0].userNote ?? "",
    /^User unknown: pid 582 is not visible in \/nonexistent-proc \(another PID namespace/,
  );
  assert.deepEqual(model.gpus[1].processes, []);
  // The same numbers as the tree's row for the same GPU.
  const tree = new GpuTreeProvider(monitor, new SelectionStore(memento()));
  const row = treeRows(tree).find((r) => r.label === "GPU 0");
  assert.equal(
    row?.description,
    `${model.gpus[0].utilization.text} · ${model.gpus[0].memory.text} · ${model.gpus[0].temperature}`,
  );
  tree.dispose();
  monitor.dispose();
});

test("model of the 8 x H200 shape: 8 cards, threshold levels, processes sorted by memory, several per GPU", async () => {
  const monitor = await monitorFor("x8");
  const model = buildDashboardModel({ state: "ok", problem: "", inventory: monitor.inventory, selection: [] });
  assert.equal(model.gpus.length, 8);
  assert.deepEqual(
    model.gpus.map((g) => g.utilization.level),
    ["high", "medium", "low", "low", "medium", "high", "low", "low"],
  );
  assert.deepEqual(
    model.gpus.map((g) => g.memory.level),
    ["high", "medium", "low", "low", "low", "high", "low", "low"],
    "131072 of 143771 MiB is 91%: high",
  );
  assert.equal(model.gpus[5].memory.text, "137.3/140.4 GiB", "140544 MiB");
  assert.deepEqual(
    model.gpus[4].processes.map((p) => p.pid),
    [5120, 5121],
    "equal memory: by pid",
  );
  assert.deepEqual(
    model.gpus[5].processes.map((p) => [p.command, p.program, p.memory]),
    [["/opt/conda/bin/python", "python", "137.3 GiB"]],
  );
  const byPid = buildDashboardModel({
    state: "ok",
    problem: "",
    inventory: monitor.inventory,
    selection: [],
    sort: { key: "pid", descending: true },
  });
  assert.deepEqual(
    byPid.gpus[0].processes.map((p) => p.pid),
    [3102, 3101],
  );
  monitor.dispose();
});

test("model: MIG devices under their GPU, ticked by UUID; sparkline from the history ring, recent window only", async () => {
  const monitor = await monitorFor("mig");
  const inv = monitor.inventory!;
  const mig = inv.mig ?? [];
  const model = buildDashboardModel({ state: "ok", problem: "", inventory: inv, selection: [mig[2].uuid] });
  assert.deepEqual(
    model.gpus[0].mig.map((m) => [m.profile, m.device, m.selected]),
    [
      ["3g.71gb", 0, false],
      ["2g.35gb", 1, false],
      ["1g.18gb", 2, true],
    ],
  );
  assert.deepEqual(model.gpus[1].mig, []);
  assert.equal(model.gpus[0].utilization.text, "?%", "no utilisation under MIG");
  assert.equal(model.gpus[0].utilization.fraction, null);

  const h = new GpuHistory(1000);
  const now = 1_000_000_000;
  const g1 = inv.gpus[1];
  h.push({ at: now - 400_000, gpus: [{ ...g1, utilizationGpuPercent: 99, memoryUsedMiB: 100 }] }); // outside the 5 min window
  h.push({ at: now - 2000, gpus: [{ ...g1, utilizationGpuPercent: 10, memoryUsedMiB: 71885 }] });
  h.push({ at: now - 1000, gpus: [{ ...g1, utilizationGpuPercent: null, memoryUsedMiB: null }] });
  h.push({ at: now, gpus: [{ ...g1, utilizationGpuPercent: 30, memoryUsedMiB: 0 }] });
  const withHistory = buildDashboardModel({
    state: "ok",
    problem: "",
    inventory: inv,
    selection: [],
    history: h.snapshot(),
    now,
  });
  // The history (2 s) is shorter than the 5 min window: the line spans those 2 s (it spanned 60 s,
  // the last 2 of them drawn), in slices no narrower than 1.25 samples: 2 slices of 1 s.
  assert.deepEqual(
    withHistory.gpus[1].spark.utilization,
    [10, 30],
    "-2 s in slice 0; -1 s (unknown) and now in slice 1",
  );
  assert.equal(withHistory.gpus[1].spark.seconds, 2, "the legend says the span shown: last 2 s");
  assert.deepEqual(
    withHistory.gpus[1].spark.memory.map((v) => Number(v!.toFixed(3))),
    [0.5, 0],
    "memory as a fraction of the GPU's total; the sample 400 s ago is outside the window",
  );
  assert.deepEqual(withHistory.gpus[0].spark.utilization, [], "no history for GPU 0");
  // The dashboard passes the History panel's window (gpuPilot.history.minutes = 10): the sample 400 s ago is in it.
  const tenMin = buildDashboardModel({
    state: "ok",
    problem: "",
    inventory: inv,
    selection: [],
    history: h.snapshot(),
    now,
    sparkSeconds: 600,
  });
  // The oldest sample in the 600 s window is 400 s old: the line spans 400 s (slices of 6.7 s), first slice 99, last the average of 10 and 30.
  const known = tenMin.gpus[1].spark.utilization.map((v, i) => [i, v]).filter(([, v]) => v !== null);
  assert.deepEqual(known, [
    [0, 99],
    [59, 20],
  ]);
  assert.equal(
    tenMin.gpus[1].spark.seconds,
    400,
    "labelled 'last 7 min' (400 s): what the history holds, within the History panel's 10 min",
  );
  monitor.dispose();
});

test("sparkline: a short history fills the box, every slice with a sample (it was the right part of a 60 s box)", async () => {
  const monitor = await monitorFor("busy");
  const inv = monitor.inventory!;
  const g1 = inv.gpus[1];
  const h = new GpuHistory(1000);
  const now = 2_000_000_000;
  // 25 samples a second apart (with the stream's jitter of up to 40 ms), the newest 300 ms ago.
  for (let i = 24; i >= 0; i--)
    h.push({
      at: now - 300 - i * 1000 + ((i * 37) % 41) - 20,
      gpus: [{ ...g1, utilizationGpuPercent: 4 * i, memoryUsedMiB: 1000 * i }],
    });
  const m = buildDashboardModel({
    state: "ok",
    problem: "",
    inventory: inv,
    selection: [],
    history: h.snapshot(),
    now,
    sparkSeconds: 600,
  });
  const spark = m.gpus[1].spark;
  monitor.dispose();
  assert.equal(spark.seconds, 24, "'last 24 s': from the oldest sample, not 'last 60 s' or 'last 10 min'");
  assert.equal(spark.utilization.length, 19, "24.3 s in slices of at least 1.25 s");
  assert.deepEqual(
    spark.utilization.map((v, i) => (v === null ? i : -1)).filter((i) => i >= 0),
    [],
    "no empty slice: the line is unbroken",
  );
  assert.equal(
    spark.utilization[0],
    94,
    "the first slice starts at the oldest sample (24 s ago, 96 %; with the next, 92 %)",
  );
  assert.equal(spark.utilization[18], 0, "the last slice holds the newest");
  assert.deepEqual(
    [sparkPoints(0, 1000), sparkPoints(5000, NaN), sparkPoints(1000, 1000), sparkPoints(600_000, 1000)],
    [1, 1, 2, 60],
  );
});

test("model when nvidia-smi is missing or failed: no cards, the reason", () => {
  assert.deepEqual(
    buildDashboardModel({ state: "missing", problem: "spawn nvidia-smi ENOENT", inventory: undefined, selection: [] })
      .message,
    "nvidia-smi could not be run here, so no GPUs can be shown. spawn nvidia-smi ENOENT",
  );
  assert.equal(
    buildDashboardModel({ state: "failed", problem: "", inventory: undefined, selection: [] }).message,
    "nvidia-smi failed",
  );
  assert.equal(
    buildDashboardModel({ state: "unknown", problem: "", inventory: undefined, selection: [] }).gpus.length,
    0,
  );
});

/** A stand-in WebviewView: records posted messages; `send` plays the webview. */
function fakeView() {
  const fromWebview = new EventEmitter<FromDashboard>();
  const visibility = new EventEmitter<void>();
  const disposed = new EventEmitter<void>();
  const posted: ToDashboard[] = [];
  const view = {
    visible: true,
    webview: {
      options: {} as unknown,
      html: "",
      cspSource: "vscode-resource:",
      asWebviewUri: (u: Uri) => u,
      postMessage: (m: ToDashboard) => {
        posted.push(m);
        return Promise.resolve(true);
      },
      onDidReceiveMessage: fromWebview.event,
    },
    onDidChangeVisibility: visibility.event,
    onDidDispose: disposed.event,
  };
  return {
    view,
    posted,
    send: (m: FromDashboard) => fromWebview.fire(m),
    hide: () => ((view.visible = false), visibility.fire()),
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

test("provider: strict CSP with a nonce; ticks from the webview change the selection the tree and status bar read; sorting; streaming while visible", async () => {
  const monitor = await monitorFor("busy");
  const state = memento();
  const selection = new SelectionStore(state);
  const dash = new GpuDashboard(Uri.file("/ext") as never, monitor, selection, state as never);
  const f = fakeView();
  dash.resolveWebviewView(f.view as never);
  const html = f.view.webview.html;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? "";
  assert.match(
    csp,
    /^default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]{24}'; style-src vscode-resource:; img-src vscode-resource: data:; font-src vscode-resource:$/,
  );
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(html.includes(`<script nonce="${nonce}" src=`), "the script carries the nonce");
  assert.ok(!/https?:\/\//.test(html.replace(/http-equiv/g, "")), "no network URL (no CDN)");
  assert.ok(!/style="/.test(html), "no inline style");
  assert.equal(monitor.isStreaming, true, "the visible dashboard holds the stream");

  f.send({ type: "ready" });
  await settle();
  const models = () =>
    f.posted.filter((m): m is Extract<ToDashboard, { type: "model" }> => m.type === "model").map((m) => m.model);
  assert.equal(models().at(-1)?.gpus.length, 2);

  f.send({ type: "toggle", kind: "gpu", uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130", checked: true });
  await settle();
  assert.deepEqual(selection.get(), ["1"], "the tick wrote the shared selection");
  assert.deepEqual(
    models()
      .at(-1)
      ?.gpus.map((g) => g.selected),
    [false, true],
    "the dashboard was re-sent with the tick",
  );
  const tree = new GpuTreeProvider(monitor, selection);
  assert.deepEqual(
    treeRows(tree)
      .filter((r) => r.depth === 0)
      .map((r) => r.checked),
    [false, true],
    "the tree shows the same tick",
  );
  assert.equal(
    statusBarContent(selection.get(), monitor.inventory).text,
    "$(circuit-board) GPU 1 · 0% · 0.0/140.4 GiB",
  );
  await selection.set(["0"]);
  await settle();
  assert.deepEqual(
    models()
      .at(-1)
      ?.gpus.map((g) => g.selected),
    [true, false],
    "a selection made elsewhere reaches the dashboard",
  );
  f.send({ type: "toggle", kind: "gpu", uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", checked: false });
  await settle();
  assert.deepEqual(selection.get(), []);
  f.send({ type: "toggle", kind: "gpu", uuid: "GPU-not-here", checked: true });
  await settle();
  assert.deepEqual(selection.get(), [], "an unknown UUID changes nothing");

  f.send({ type: "sort", key: "pid" });
  await settle();
  assert.deepEqual(models().at(-1)?.sort, { key: "pid", descending: false });
  f.send({ type: "sort", key: "pid" });
  await settle();
  assert.deepEqual(models().at(-1)?.sort, { key: "pid", descending: true });
  assert.deepEqual(
    state.data.get("gpuPilot.dashboard.sort"),
    { key: "pid", descending: true },
    "the sort is remembered",
  );

  f.send({
    type: "rendered",
    rendered: {
      gpus: [],
      sort: { key: "pid", descending: true },
      view: "gpus",
      layout: "full",
      expanded: [],
      table: { pids: [], userFilter: "", headers: [], headerLines: 0, clipped: [], cellsClipped: [], sortList: "" },
      confirm: "",
      result: "",
      height: 600,
      fitsHeight: true,
      width: 300,
      overflowing: false,
    },
  });
  assert.equal(dash.getState().renders, 1);
  assert.equal(dash.getState().rendered?.width, 300);
  assert.equal(await dash.click({ kind: "sort", key: "memory" }), true);
  assert.deepEqual(f.posted.at(-1), { type: "click", target: { kind: "sort", key: "memory" } });

  f.hide();
  await settle();
  assert.equal(monitor.isStreaming, false, "hidden: the stream is let go");
  tree.dispose();
  dash.dispose();
  monitor.dispose();
});

test("messages from the webview are checked (issue 46 item 9): wrong shapes are ignored; a failing command is logged, not an unhandled rejection", async () => {
  assert.deepEqual(checkDashboardMessage({ type: "toggle", kind: "gpu", uuid: "GPU-1", checked: true }), {
    type: "toggle",
    kind: "gpu",
    uuid: "GPU-1",
    checked: true,
  });
  for (const bad of [
    null,
    5,
    "ready",
    { type: "toggle", kind: "gpu", uuid: 5, checked: true },
    { type: "toggle", kind: "gpu", uuid: "GPU-1", checked: "yes" },
    { type: "toggle", kind: "x", uuid: "GPU-1", checked: true },
    { type: "sort", key: "__proto__" },
    { type: "showHistory", uuid: {} },
    { type: "showHistory", uuid: "x".repeat(129) },
    { type: "rendered", rendered: "garbage" },
    { type: "rendered", rendered: { gpus: [null], width: 1 } },
    { type: "nope" },
  ]) {
    assert.equal(checkDashboardMessage(bad), undefined, JSON.stringify(bad));
  }
  const monitor = await monitorFor("busy");
  const state = memento();
  const dash = new GpuDashboard(Uri.file("/ext") as never, monitor, new SelectionStore(state), state as never);
  const f = fakeView();
  dash.resolveWebviewView(f.view as never);
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on("unhandledRejection", onUnhandled);
  const cmd = commands.registerCommand("gpuPilot.showHistory", () => {
    throw new Error("history refused");
  });
  try {
    f.send({ type: "rendered", rendered: "garbage" } as never);
    f.send({ type: "toggle", kind: "gpu", uuid: Object.create(null) as string, checked: true });
    f.send({ type: "showHistory", uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130" });
    await settle();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled, []);
    assert.notEqual(dash.getState().rendered as unknown, "garbage");
    assert.ok(
      recorded.log.some((l) => /GPU dashboard: a message from the webview failed/.test(l)),
      recorded.log.slice(-5).join("\n"),
    );
  } finally {
    process.off("unhandledRejection", onUnhandled);
    cmd.dispose();
    dash.dispose();
    monitor.dispose();
  }
});
