// The dashboard's process table and compact layout (issue 45 items 1 and 2): sorting by every
// column, the user filter, the compact row's summary, durations and CPU %, what /proc could not say,
// the confirmation's words (client/src/gpu/processTable.ts, dashboardLayout.ts); the model of the
// fake nvidia-smi's 16 x H200 (x16) with a real process of this test listed (FAKE_NVIDIA_SMI_EXTRA_APPS):
// its user, host memory, CPU % and running time from the real /proc; the tree and the dashboard
// show one sample; Stop/Kill through the dashboard provider with its confirmation.
import { memento, settings, Uri, EventEmitter } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { chooseLayout } from "../../../../client/src/gpu/dashboardLayout";
import {
  commandCell,
  type DashboardProcess,
  filterByUser,
  formatCpu,
  formatDuration,
  hostFields,
  nextSort,
  PROCESS_COLUMNS,
  PROCESS_SORT_KEYS,
  processSummary,
  signalQuestion,
  SM_NO_SAMPLE,
  SM_NOTE,
  sortProcesses,
  usersOf,
} from "../../../../client/src/gpu/processTable";
import { buildDashboardModel } from "../../../../client/src/gpu/dashboardModel";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { GpuTreeProvider, treeRows } from "../../../../client/src/gpu/tree";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import {
  checkDashboardMessage,
  GpuDashboard,
  type FromDashboard,
  type ToDashboard,
} from "../../../../client/src/gpu/dashboard";
import { readProcStat } from "../../../../common/src/gpu/procinfo";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-ptable-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

const row = (pid: number, gpuIndex: number, user: string, more: Partial<DashboardProcess> = {}): DashboardProcess => ({
  pid,
  gpuIndex,
  gpuUuid: `GPU-${gpuIndex}`,
  user,
  memoryMiB: null,
  memory: "?",
  smPercent: null,
  sm: "–",
  cpuPercent: null,
  cpu: "–",
  hostMemoryMiB: null,
  hostMemory: "–",
  runningS: null,
  time: "–",
  command: `cmd${pid}`,
  program: `cmd${pid}`,
  own: false,
  workspaceRun: false,
  busyButIdle: false,
  canSignal: true,
  ...more,
});

const rows = [
  row(30, 1, "bob", { memoryMiB: 100, cpuPercent: 5, hostMemoryMiB: 900, runningS: 50, command: "b.py" }),
  row(10, 0, "alice", { memoryMiB: 4000, cpuPercent: 99, hostMemoryMiB: null, runningS: 7200, command: "z.py" }),
  row(20, 0, "Alice2", { memoryMiB: null, cpuPercent: null, hostMemoryMiB: 10, runningS: null, command: "a.py" }),
  row(40, 2, "bob", { memoryMiB: 4000, cpuPercent: 0.5, hostMemoryMiB: 50, runningS: 3, command: "c.py" }),
];

test("sortProcesses: every column both ways; unknown numbers below known ones; ties by GPU then pid", () => {
  const by = (key: Parameters<typeof nextSort>[1], descending: boolean) =>
    sortProcesses(rows, { key, descending }).map((p) => p.pid);
  assert.deepEqual(by("gpu", false), [10, 20, 30, 40]);
  assert.deepEqual(by("gpu", true), [40, 30, 10, 20], "GPU 0's two by pid");
  assert.deepEqual(by("pid", true), [40, 30, 20, 10]);
  assert.deepEqual(by("user", false), [10, 20, 30, 40], "alice < Alice2 < bob (case-insensitive, numeric)");
  assert.deepEqual(by("memory", true), [10, 40, 30, 20], "4000 (GPU 0) before 4000 (GPU 2); unknown last");
  assert.deepEqual(by("memory", false), [20, 30, 10, 40], "unknown first when ascending");
  assert.deepEqual(by("cpu", true), [10, 30, 40, 20]);
  assert.deepEqual(by("host", true), [30, 40, 20, 10]);
  assert.deepEqual(by("time", true), [10, 30, 40, 20]);
  assert.deepEqual(by("command", false), [20, 30, 40, 10]);
  assert.deepEqual(by("sm", true), [10, 20, 30, 40], "no SM numbers: GPU, pid order");
  assert.deepEqual(
    nextSort({ key: "pid", descending: false }, "cpu"),
    { key: "cpu", descending: true },
    "amounts start descending",
  );
  assert.deepEqual(nextSort({ key: "cpu", descending: true }, "cpu"), { key: "cpu", descending: false });
  assert.deepEqual(nextSort({ key: "cpu", descending: true }, "gpu"), { key: "gpu", descending: false });
});

test("filter by user, the users list, the compact row's summary", () => {
  assert.deepEqual(
    filterByUser(rows, "bob").map((p) => p.pid),
    [30, 40],
  );
  assert.deepEqual(
    filterByUser(rows, "").map((p) => p.pid),
    [30, 10, 20, 40],
    "everyone",
  );
  assert.deepEqual(filterByUser(rows, "carol"), []);
  assert.deepEqual(usersOf(rows), ["alice", "Alice2", "bob"]);
  assert.equal(processSummary([]), "");
  assert.equal(processSummary([{ user: "me" }]), "1 proc · me");
  assert.equal(processSummary([{ user: "alice" }, { user: "bob" }, { user: "alice" }]), "3 procs · alice, bob");
  assert.equal(
    processSummary([{ user: "alexandra" }, { user: "bartholomew" }, { user: "christopher" }]),
    "3 procs · alexandra +2",
    "users that do not fit: +N",
  );
});

test("formatDuration, formatCpu, and the row of a process /proc could not show", () => {
  assert.deepEqual([0, 45, 60, 754, 3600, 11_040, 86_400, 191_000].map(formatDuration), [
    "0 s",
    "45 s",
    "1 min",
    "12 min",
    "1 h 00 min",
    "3 h 04 min",
    "1 d 00 h",
    "2 d 05 h",
  ]);
  assert.equal(formatDuration(null), "–");
  assert.deepEqual([0, 0.44, 9.96, 10, 98.6, 190].map(formatCpu), ["0.0%", "0.4%", "10.0%", "10%", "99%", "190%"]);
  assert.equal(formatCpu(undefined), "–");
  const hidden = hostFields({
    pid: 582,
    uid: null,
    user: "unknown",
    commandLine: "python3",
    argv: [],
    own: false,
    workspaceRun: false,
    note: "pid 582 is not visible in /proc (another PID namespace, e.g. a container, or it has ended)",
  });
  assert.deepEqual(hidden, {
    cpuPercent: null,
    cpu: "–",
    hostMemoryMiB: null,
    hostMemory: "–",
    runningS: null,
    time: "–",
    canSignal: false,
    hostNote:
      "in another PID namespace: pid 582 is not visible in /proc (another PID namespace, e.g. a container, or it has ended)",
  });
  const seen = hostFields({
    pid: 7,
    uid: 1001,
    user: "alice",
    commandLine: "python3 t.py",
    argv: ["python3", "t.py"],
    own: false,
    workspaceRun: false,
    startTicks: 777,
    cpuTicks: 5000,
    rssKiB: 2_516_582,
    readAtS: 11_047.77,
    cpuPercent: 50,
  });
  assert.deepEqual(seen, {
    cpuPercent: 50,
    cpu: "50%",
    hostMemoryMiB: 2457.6,
    hostMemory: "2.4 GiB",
    runningS: 11_040,
    time: "3 h 04 min",
    canSignal: true,
  });
  assert.equal(
    signalQuestion("SIGKILL", { pid: 7, user: "alice", command: "python3 t.py", gpuIndex: 3 }),
    "Kill process 7 of alice on GPU 3 (python3 t.py)? GPU Pilot sends it SIGKILL: it ends at once, unsaved work is lost.",
  );
  assert.equal(
    signalQuestion("SIGTERM", { pid: 7, user: "alice", command: "python3 t.py", gpuIndex: 3 }),
    "Stop process 7 of alice on GPU 3 (python3 t.py)? GPU Pilot sends it SIGTERM: a program may take a moment to exit.",
  );
});

test("chooseLayout: compact from 5 GPUs or when the cards would not fit the height", () => {
  assert.equal(chooseLayout(2, 900), "full");
  assert.equal(chooseLayout(2, 0), "full", "height unknown");
  assert.equal(chooseLayout(2, 300), "compact", "two 200 px cards in 300 px");
  assert.equal(chooseLayout(4, 800), "full");
  assert.equal(chooseLayout(8, 5000), "compact");
  assert.equal(chooseLayout(16, 0), "compact");
});

test("webview messages of the process table are checked: filter, askSignal, signal", () => {
  assert.deepEqual(checkDashboardMessage({ type: "filter", user: "alice" }), { type: "filter", user: "alice" });
  assert.deepEqual(checkDashboardMessage({ type: "askSignal", pid: 42, signal: "SIGKILL" }), {
    type: "askSignal",
    pid: 42,
    signal: "SIGKILL",
  });
  assert.deepEqual(checkDashboardMessage({ type: "signal", token: "a".repeat(32), confirmed: true }), {
    type: "signal",
    token: "a".repeat(32),
    confirmed: true,
  });
  assert.deepEqual(checkDashboardMessage({ type: "sort", key: "cpu" }), { type: "sort", key: "cpu" });
  for (const bad of [
    { type: "filter", user: 5 },
    { type: "filter", user: "x".repeat(257) },
    { type: "askSignal", pid: -1, signal: "SIGKILL" },
    { type: "askSignal", pid: 1.5, signal: "SIGTERM" },
    { type: "askSignal", pid: 42, signal: "SIGHUP" },
    { type: "askSignal", pid: "42", signal: "SIGKILL" },
    { type: "signal", token: "zz", confirmed: true },
    { type: "signal", token: "a".repeat(32), confirmed: "yes" },
    { type: "sort", key: "rss" },
  ]) {
    assert.equal(checkDashboardMessage(bad), undefined, JSON.stringify(bad));
  }
});

function fakeView() {
  const fromWebview = new EventEmitter<FromDashboard>();
  const visibility = new EventEmitter<void>();
  const disposed = new EventEmitter<void>();
  const posted: ToDashboard[] = [];
  const view = {
    visible: true,
    webview: {
      options: {},
      html: "",
      cspSource: "vscode-resource:",
      asWebviewUri: (u: unknown) => u,
      postMessage: async (m: ToDashboard) => (posted.push(m), true),
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
const settle = async (ms = 0) => {
  if (ms) await new Promise((r) => setTimeout(r, ms));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

test("16 x H200 with a real `sleep` listed on GPU 3: host numbers from /proc; one sample in tree and dashboard; Kill through the confirmation ends it", async () => {
  const child = spawn("sleep", ["300"], { stdio: "ignore" });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_c, sig) => r(sig)));
  assert.ok(child.pid);
  const pid = child.pid;
  for (const end = Date.now() + 10_000; (await readProcStat(pid)).argv?.[0] !== "sleep";) {
    if (Date.now() > end) assert.fail("sleep did not start");
    await settle(10);
  }
  const extra = join(tmp, "extra-apps.csv");
  writeFileSync(extra, `3, ${pid}, sleep, 2048\n`);
  process.env.FAKE_NVIDIA_SMI_MODE = "x16";
  process.env.FAKE_NVIDIA_SMI_EXTRA_APPS = extra;
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  settings.set("nvidiaSmiTimeoutMs", 5000);
  const monitor = new GpuMonitor();
  try {
    await monitor.refresh();
    assert.equal(monitor.state, "ok", monitor.problem);
    const model = buildDashboardModel({
      state: "ok",
      problem: "",
      inventory: monitor.inventory,
      selection: [],
      sort: { key: "memory", descending: true },
    });
    assert.equal(model.gpus.length, 16);
    assert.equal(model.processCount, 17, "16 from the fixture and the sleep");
    assert.deepEqual(
      model.gpus.map((g) => g.shortName),
      Array(16).fill("H200"),
    );
    assert.equal(model.gpus[3].summary, `1 proc · ${userInfo().username}`);
    // The replay's pids 5120/5121 (python3, torchrun) are someone else's processes: unknown here,
    // unless this machine happens to run processes with those pids now (then their owner shows).
    if (!existsSync("/proc/5120") && !existsSync("/proc/5121"))
      assert.equal(model.gpus[4].summary, "2 procs · unknown");
    const sleep = model.processes.find((p) => p.pid === pid);
    assert.ok(sleep);
    assert.equal(sleep.user, userInfo().username);
    assert.equal(sleep.command, "sleep 300");
    assert.equal(sleep.memory, "2.0 GiB");
    assert.equal(sleep.sm, "–");
    assert.equal(sleep.canSignal, true);
    assert.equal(sleep.hostNote, undefined);
    assert.ok(
      sleep.hostMemoryMiB !== null && sleep.hostMemoryMiB > 0 && sleep.hostMemoryMiB < 64,
      `sleep's resident memory: ${sleep.hostMemoryMiB} MiB`,
    );
    assert.match(sleep.time, /^\d+ s$/);
    assert.ok(sleep.cpuPercent !== null && sleep.cpuPercent < 50, `sleep hardly uses CPU: ${sleep.cpuPercent}`);
    const mine = buildDashboardModel({
      state: "ok",
      problem: "",
      inventory: monitor.inventory,
      selection: [],
      userFilter: userInfo().username,
    });
    assert.deepEqual(
      mine.processes.map((p) => p.pid),
      [pid],
      "filtered to this user",
    );
    assert.equal(
      buildDashboardModel({
        state: "ok",
        problem: "",
        inventory: monitor.inventory,
        selection: [],
        userFilter: "nobody-here",
      }).userFilter,
      "",
      "a user no longer listed: everyone",
    );

    // The tree and the dashboard render the same sample.
    const state = memento();
    const selection = new SelectionStore(state);
    const tree = new GpuTreeProvider(monitor, selection);
    const dash = new GpuDashboard(Uri.file("/ext") as never, monitor, selection, state as never);
    const f = fakeView();
    dash.resolveWebviewView(f.view as never);
    f.send({ type: "ready" });
    await monitor.refresh();
    await settle();
    const last = f.posted.filter((m): m is Extract<ToDashboard, { type: "model" }> => m.type === "model").at(-1)?.model;
    assert.ok(last && last.takenAt > 0);
    assert.equal(tree.sampleTakenAt, last.takenAt, "one sample in both panes");
    const treeRow = treeRows(tree).find((r) => r.label === "GPU 3");
    // With 16 GPUs (a GPU 10 or more) the rows leave the temperature to the tooltip (present.ts rowsShowTemperature).
    assert.equal(treeRow?.description, `${last.gpus[3].utilization.text} · ${last.gpus[3].memory.text}`);
    assert.match(
      treeRows(tree).find((r) => r.id === `gpu/${last.gpus[0].uuid}`)?.tooltip ?? "",
      /\| Memory bandwidth \| 58 % of the time memory was read or written \|/,
    );

    // Kill: the confirmation names pid, user and command; Cancel sends nothing; Confirm kills.
    f.send({ type: "askSignal", pid, signal: "SIGKILL" });
    await settle(50);
    const ask = f.posted.filter((m): m is Extract<ToDashboard, { type: "confirm" }> => m.type === "confirm").at(-1);
    assert.ok(ask, JSON.stringify(f.posted.at(-1)));
    assert.equal(
      ask.question,
      `Kill process ${pid} of ${userInfo().username} on GPU 3 (sleep 300)? GPU Pilot sends it SIGKILL: it ends at once, unsaved work is lost.`,
    );
    assert.match(ask.warning ?? "", /holds no NVIDIA device open here/);
    f.send({ type: "signal", token: ask.token, confirmed: false });
    await settle(50);
    assert.equal((await readProcStat(pid)).argv?.[0], "sleep", "Cancel: still running");
    f.send({ type: "signal", token: ask.token, confirmed: true });
    await settle(50);
    assert.equal(dash.getState().lastSignal, undefined, "a used token is not honoured twice");
    f.send({ type: "askSignal", pid, signal: "SIGKILL" });
    await settle(50);
    const again = f.posted.filter((m): m is Extract<ToDashboard, { type: "confirm" }> => m.type === "confirm").at(-1);
    assert.ok(again && again.token !== ask.token);
    f.send({ type: "signal", token: again.token, confirmed: true });
    assert.equal(await exited, "SIGKILL");
    await settle(50);
    assert.deepEqual(dash.getState().lastSignal, { ok: true, message: `Sent SIGKILL to process ${pid}.` });
    // A pid nvidia-smi does not list is refused before any question.
    f.send({ type: "askSignal", pid: 1, signal: "SIGTERM" });
    await settle(20);
    assert.deepEqual(dash.getState().lastSignal, {
      ok: false,
      message: "Process 1 is no longer listed by nvidia-smi. Nothing was sent.",
    });
    tree.dispose();
    dash.dispose();
  } finally {
    child.kill("SIGKILL");
    delete process.env.FAKE_NVIDIA_SMI_EXTRA_APPS;
    monitor.dispose();
  }
});

test("the Processes tab's header names (issue 45): at most 4 characters each, the full name for the tooltip and the Sort list", () => {
  assert.deepEqual(Object.keys(PROCESS_COLUMNS), [...PROCESS_SORT_KEYS], "every sort key has its names");
  for (const key of PROCESS_SORT_KEYS) {
    const { short, full } = PROCESS_COLUMNS[key];
    assert.ok(short.length <= 4, `${key}: "${short}" fits its column with the sort arrow`);
    assert.ok(full.length > short.length || full.toLowerCase() === short.toLowerCase(), `${key}: "${full}"`);
  }
  assert.equal(PROCESS_COLUMNS.memory.short, "Mem", "was 'GPU mem', whose ▾ was clipped");
  assert.equal(PROCESS_COLUMNS.memory.full, "GPU memory (nvidia-smi used_memory)");
});

test("the command cell names why a process's command line is missing, also when nvidia-smi's name for it is a path", () => {
  const note = "in another PID namespace: /proc has no pid 6001";
  assert.equal(
    commandCell({ command: "/opt/conda/bin/python", hostNote: note }),
    "/opt/conda/bin/python (in another PID namespace)",
  );
  assert.equal(commandCell({ command: "python3", hostNote: note }), "python3 (in another PID namespace)");
  assert.equal(commandCell({ command: "python3 train.py --epochs 3" }), "python3 train.py --epochs 3");
});

test("SM % is read (nvidia-smi pmon) only while the Processes tab is shown in a visible dashboard: joined to the rows by (GPU, pid)", async () => {
  assert.deepEqual(checkDashboardMessage({ type: "view", view: "processes" }), { type: "view", view: "processes" });
  assert.equal(checkDashboardMessage({ type: "view", view: "history" }), undefined);
  process.env.FAKE_NVIDIA_SMI_MODE = "x8";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  settings.set("nvidiaSmiTimeoutMs", 5000);
  const monitor = new GpuMonitor({ proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" } });
  const state = memento();
  const dash = new GpuDashboard(Uri.file("/ext") as never, monitor, new SelectionStore(state), state as never);
  try {
    await monitor.refresh();
    // The tree, a quick pick and the GPUs tab hold the stream, never pmon.
    const quickPick = monitor.hold();
    const f = fakeView();
    dash.resolveWebviewView(f.view as never);
    f.send({ type: "view", view: "gpus" });
    f.send({ type: "ready" });
    await settle(300);
    assert.equal(monitor.isStreaming, true);
    assert.deepEqual(monitor.processSmReading, { active: false, calls: 0 }, "no pmon for the GPUs tab");
    assert.equal(dash.getState().readingSm, false);
    quickPick.dispose();

    f.send({ type: "view", view: "processes" });
    assert.equal(dash.getState().shownView, "processes");
    assert.equal(dash.getState().readingSm, true);
    const models = () =>
      f.posted.filter((m): m is Extract<ToDashboard, { type: "model" }> => m.type === "model").map((m) => m.model);
    const row = (pid: number, gpu: number) =>
      models()
        .at(-1)
        ?.processes.find((p) => p.pid === pid && p.gpuIndex === gpu);
    for (const end = Date.now() + 15_000; row(3102, 0)?.sm !== "97%"; await settle(20))
      if (Date.now() > end) assert.fail(`no SM % in the model: ${JSON.stringify(row(3102, 0))}`);
    assert.deepEqual(
      [row(3102, 0)?.smPercent, row(3102, 0)?.smNote],
      [97, SM_NOTE],
      "the busy GPU's last process: its GPU's utilisation, from pmon",
    );
    assert.deepEqual([row(3101, 0)?.sm, row(3101, 0)?.smNote], ["–", SM_NO_SAMPLE], "no sample: did no work");
    assert.equal(row(582, 2)?.sm, "12%", "pid 582 on GPU 2 is its own row");
    // Processes on GPUs 0, 1, 2, 4, 5 and 6: pmon reports on four GPUs a call (pmon.ts PMON_MAX_GPUS).
    assert.equal(monitor.processSmReading.calls, 2);

    f.send({ type: "view", view: "gpus" });
    assert.equal(dash.getState().readingSm, false);
    assert.equal(monitor.processSmReading.active, false, "back to the GPUs tab: pmon stops");
    assert.equal(monitor.processSm.state, "off");
    f.send({ type: "view", view: "processes" });
    assert.equal(monitor.processSmReading.active, true);
    f.hide();
    assert.equal(monitor.processSmReading.active, false, "hidden: nothing");
    assert.equal(dash.getState().readingSm, false);
    await settle(300);
    assert.equal(monitor.processSmReading.calls, 2, "within 10 s of the last round nothing more was asked");
  } finally {
    dash.dispose();
    monitor.dispose();
  }
});
