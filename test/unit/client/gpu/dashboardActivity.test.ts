// SM activity on the dashboard (client/src/gpu/dashboardModel.ts): the card's "SM" bar and the
// "busy but idle" flag on the GPU and on the user's own processes, from the real H200 dmon captures
// (test/fixtures/nvidia-smi/h200-gpm): spin (flag on), full matmuls (off), idle (off); unsupported
// GPUs say so once; the monitor streams dmon while the dashboard is visible and stops it after.
import { memento, settings } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDmon } from "../../../../client/src/gpu/dmon";
import { ActivityTracker, type ActivitySnapshot, NOT_AVAILABLE } from "../../../../client/src/gpu/activity";
import { buildDashboardModel } from "../../../../client/src/gpu/dashboardModel";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import type { Inventory, ProcessDetails } from "../../../../common/src/gpu/nvidiaSmi";
import { GpuTreeProvider, treeRows } from "../../../../client/src/gpu/tree";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const DIR = join(ROOT, "test", "fixtures", "nvidia-smi", "h200-gpm");

/** The snapshot after replaying a capture (GPU 0) and, optionally, the idle capture as GPU 1. */
function snapshotOf(gpu0: string, gpu1 = "dmon-idle.txt"): ActivitySnapshot {
  const t = new ActivityTracker();
  const a = parseDmon(readFileSync(join(DIR, gpu0), "utf8"));
  const b = parseDmon(readFileSync(join(DIR, gpu1), "utf8"));
  a.samples.forEach((s, i) => {
    t.push(s, a.gpmColumns);
    if (b.samples[i]) t.push({ ...b.samples[i], index: 1 }, b.gpmColumns);
  });
  return { state: "on", note: "", gpus: t.gpuList() };
}

let inventory: Inventory;
const own = (pid: number): ProcessDetails => ({
  pid,
  uid: 1000,
  user: "me",
  commandLine: "python3 train.py",
  argv: ["python3", "train.py"],
  own: true,
  workspaceRun: false,
});

test.before(async () => {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  const monitor = new GpuMonitor({ proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" } });
  await monitor.refresh();
  assert.equal(monitor.state, "ok", monitor.problem);
  inventory = monitor.inventory as Inventory;
  monitor.dispose();
});

const model = (activity: ActivitySnapshot | undefined, processes: ProcessDetails[] = []) =>
  buildDashboardModel({
    state: "ok",
    problem: "",
    inventory: { ...inventory, processes },
    selection: [],
    ...(activity ? { activity } : {}),
  });

test("spin capture: GPU 0 shows SM 0% and is flagged busy but idle, and so is the user's own process on it", () => {
  const m = model(snapshotOf("dmon-spin.txt"), [own(582)]);
  const [g0, g1] = m.gpus;
  assert.deepEqual(g0.smActivity, { fraction: 0, level: "low", text: "0%" });
  assert.equal(g0.busyButIdle, true);
  assert.equal(
    g0.busyButIdleText,
    "Busy but idle: GPU-Util 100% while SM activity is 0% over the last 3 samples: a kernel runs, but almost no SMs work (a heuristic: GPU-Util ≥ 80%, SM activity ≤ 5%).",
  );
  assert.deepEqual(
    g0.processes.map((p) => [p.pid, p.own, p.busyButIdle]),
    [[582, true, true]],
  );
  assert.equal(g1.busyButIdle, false);
  assert.deepEqual(g1.smActivity, { fraction: 0, level: "low", text: "0%" });
});

test("spin capture with another user's process: the GPU is flagged, the process is not", () => {
  const m = model(snapshotOf("dmon-spin.txt"), [{ ...own(582), own: false, uid: 0, user: "root" }]);
  assert.equal(m.gpus[0].busyButIdle, true);
  assert.deepEqual(
    m.gpus[0].processes.map((p) => p.busyButIdle),
    [false],
  );
});

test("full matmul capture: SM 95% (high), no flag", () => {
  const m = model(snapshotOf("dmon-full.txt"), [own(582)]);
  assert.deepEqual(m.gpus[0].smActivity, { fraction: 0.95, level: "high", text: "95%" });
  assert.equal(m.gpus[0].busyButIdle, false);
  assert.equal(m.gpus[0].busyButIdleText, "");
  assert.deepEqual(
    m.gpus[0].processes.map((p) => p.busyButIdle),
    [false],
  );
});

test("idle capture: SM 0%, no flag", () => {
  const m = model(snapshotOf("dmon-idle.txt"), [own(582)]);
  assert.deepEqual(
    m.gpus.map((g) => [g.smActivity?.text, g.busyButIdle]),
    [
      ["0%", false],
      ["0%", false],
    ],
  );
});

test("before dmon's first values: SM '…'; off or absent: no SM bar; unsupported: the calm note, no bar", () => {
  const first = parseDmon(readFileSync(join(DIR, "dmon-spin.txt"), "utf8"));
  const t = new ActivityTracker();
  t.push(first.samples[0], first.gpmColumns);
  const probing = model({ state: "probing", note: "", gpus: t.gpuList() });
  assert.deepEqual(probing.gpus[0].smActivity, { fraction: null, level: "unknown", text: "…" });
  assert.equal(probing.gpus[0].busyButIdle, false);
  for (const m of [model(undefined), model({ state: "off", note: "", gpus: [] })]) {
    assert.deepEqual(
      m.gpus.map((g) => [g.smActivity, g.activityNote, g.busyButIdle]),
      [
        [undefined, undefined, false],
        [undefined, undefined, false],
      ],
    );
  }
  const none = model({ state: "unsupported", note: NOT_AVAILABLE, gpus: [] });
  assert.deepEqual(
    none.gpus.map((g) => [g.smActivity, g.activityNote]),
    [
      [undefined, "SM activity: not available on this GPU/driver"],
      [undefined, "SM activity: not available on this GPU/driver"],
    ],
  );
});

test("monitor: dmon runs while held for the dashboard (not for a quick pick), the tree tooltip shows SM activity, dmon stops on release", async () => {
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  const monitor = new GpuMonitor({
    env: { FAKE_NVIDIA_SMI_MODE: "spin", FAKE_NVIDIA_SMI_DMON_MS: "30" },
    proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" },
  });
  const pick = monitor.hold();
  await until(() => monitor.state === "ok", "the stream");
  assert.equal(monitor.activityPid, undefined, "a quick pick does not start dmon");
  const hold = monitor.hold({ activity: true });
  await until(() => monitor.activity.gpus[0]?.busyButIdle === true, "GPU 0 flagged");
  assert.ok(monitor.activityPid);
  const tree = new GpuTreeProvider(monitor, new SelectionStore(memento()));
  const row = treeRows(tree).find((r) => r.label === "GPU 0");
  assert.match(row?.tooltip ?? "", /\| SM activity \| 0% \(GPU-Util 100%, dmon\) \|/);
  assert.match(row?.tooltip ?? "", /Busy but idle: GPU-Util 100% while SM activity is 0%/);
  assert.doesNotMatch(row?.description ?? "", /SM/, "the row stays short");
  tree.dispose();
  hold.dispose();
  await until(() => monitor.activityPid === undefined, "dmon stopped");
  pick.dispose();
  settings.set("monitor.smActivity", "off");
  assert.equal(monitor.activity.state, "off");
  monitor.dispose();
});

test("monitor with nogpm: the tree tooltip says once that SM activity is not available", async () => {
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  const monitor = new GpuMonitor({
    env: { FAKE_NVIDIA_SMI_MODE: "nogpm", FAKE_NVIDIA_SMI_DMON_MS: "30" },
    proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" },
  });
  const hold = monitor.hold({ activity: true });
  await until(() => monitor.activity.state === "unsupported" && monitor.state === "ok", "unsupported");
  const tree = new GpuTreeProvider(monitor, new SelectionStore(memento()));
  const tips = treeRows(tree)
    .filter((r) => r.contextValue === "gpu")
    .map((r) => r.tooltip);
  assert.equal(tips.length, 2);
  for (const t of tips) assert.equal(t.split("SM activity: not available on this GPU/driver").length - 1, 1);
  tree.dispose();
  hold.dispose();
  monitor.dispose();
});
