// The selection everywhere (client/src/gpu/environment.ts, actions.ts, features.ts) with the
// stand-in `vscode` module: terminals' environmentVariableCollection, the Python debug provider,
// "Pick Free GPUs", "Stop Process", and the API part of the GPU view.
import { debug, FakeEnvironmentVariableCollection, recorded, settings, memento } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugConfiguration } from "vscode";
import { pickFreeGpusCommand, stopProcessCommand } from "../../../../client/src/gpu/actions";
import {
  applyToCollection,
  GpuDebugConfigurationProvider,
  registerSelectionEnvironment,
} from "../../../../client/src/gpu/environment";
import { createGpuFeatures } from "../../../../client/src/gpu/features";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { readProcStat } from "../../../../common/src/gpu/procinfo";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-env-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const emptyProc = { procRoot: join(tmp, "no-proc"), passwdFile: join(tmp, "no-passwd"), ownUid: 1000, ownUser: "me" };

function setup(mode = "busy") {
  process.env.FAKE_NVIDIA_SMI_MODE = mode;
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  settings.set("nvidiaSmiTimeoutMs", 5000);
  recorded.messages.length = 0;
  recorded.answers.length = 0;
  const monitor = new GpuMonitor({ proc: emptyProc });
  const selection = new SelectionStore(memento());
  return { monitor, selection };
}

const launch = (extra: Partial<DebugConfiguration> = {}): DebugConfiguration => ({
  type: "debugpy",
  request: "launch",
  name: "Train",
  program: "/w/train.py",
  ...extra,
});

test("terminals: the selection's variables as Replace mutators with a description; cleared when empty; no rewrite when unchanged", async () => {
  const { monitor, selection } = setup();
  await monitor.refresh();
  const collection = new FakeEnvironmentVariableCollection();
  const reg = registerSelectionEnvironment(collection as never, selection, monitor);
  assert.deepEqual([...collection.map.keys()], [], "nothing selected: nothing set");
  await selection.set(["1"]);
  assert.deepEqual(collection.get("CUDA_VISIBLE_DEVICES"), { value: "1", type: 1, options: {} });
  assert.deepEqual(collection.get("CUDA_DEVICE_ORDER"), { value: "PCI_BUS_ID", type: 1, options: {} });
  assert.equal(
    collection.description,
    "GPU Pilot: CUDA_VISIBLE_DEVICES=1 (GPU 1 (NVIDIA H200)) and CUDA_DEVICE_ORDER=PCI_BUS_ID, from the GPU selection.",
  );
  assert.equal(collection.persistent, true);
  const writes = collection.writes;
  await monitor.refresh(); // a new inventory, same selection
  assert.equal(collection.writes, writes, "unchanged values are not written again (terminals are not marked stale)");
  await selection.set(["0", "1"]);
  assert.equal(collection.get("CUDA_VISIBLE_DEVICES")?.value, "0,1");
  await selection.set([]);
  assert.deepEqual([...collection.map.keys()], []);
  assert.equal(collection.description, undefined);
  for (const d of reg.disposables) d.dispose();
  monitor.dispose();
});

test("debug: a provider for debugpy and python adds the selection to launch configurations, unless they set it", async () => {
  const { monitor, selection } = setup();
  const before = debug.providers.length;
  const reg = registerSelectionEnvironment(undefined, selection, monitor);
  assert.deepEqual(
    debug.providers.slice(before).map((p) => p.type),
    ["debugpy", "python"],
  );
  const provider = reg.provider;
  assert.deepEqual(provider.resolveDebugConfiguration(undefined, launch()), launch(), "no selection: unchanged");
  await selection.set(["1"]);
  assert.deepEqual(
    provider.resolveDebugConfiguration(undefined, launch({ env: { FOO: "bar" } })),
    launch({ env: { FOO: "bar", CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" } }),
  );
  assert.deepEqual(
    provider.resolveDebugConfiguration(undefined, launch({ env: { CUDA_VISIBLE_DEVICES: "0" } })),
    launch({ env: { CUDA_VISIBLE_DEVICES: "0" } }),
    "the launch config wins",
  );
  assert.deepEqual(
    provider.resolveDebugConfiguration(undefined, launch({ env: { CUDA_DEVICE_ORDER: "FASTEST_FIRST" } })),
    launch({ env: { CUDA_DEVICE_ORDER: "FASTEST_FIRST", CUDA_VISIBLE_DEVICES: "1" } }),
  );
  const attach = { type: "debugpy", request: "attach", name: "Attach", connect: { port: 5678 } };
  assert.deepEqual(provider.resolveDebugConfiguration(undefined, attach), attach, "attach: the process already runs");
  const folder = join(tmp, "ws");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, ".env"), "# settings\nexport CUDA_VISIBLE_DEVICES=0\n");
  writeFileSync(join(folder, "other.env"), "FOO=1\n");
  const ws = { uri: { fsPath: folder }, name: "ws", index: 0 } as never;
  assert.deepEqual(
    provider.resolveDebugConfiguration(ws, launch({ envFile: "${workspaceFolder}/.env" })),
    launch({ envFile: "${workspaceFolder}/.env" }),
    "the envFile sets it",
  );
  assert.equal(
    (provider.resolveDebugConfiguration(ws, launch({ envFile: "other.env" })) as DebugConfiguration).env
      .CUDA_VISIBLE_DEVICES,
    "1",
  );
  for (const d of reg.disposables) d.dispose();
  assert.equal(debug.providers.length, before, "disposed");
  assert.ok(provider instanceof GpuDebugConfigurationProvider);
  monitor.dispose();
});

test("applyToCollection turns MIG entries into a description naming the MIG device", async () => {
  const { monitor, selection } = setup("mig");
  await monitor.refresh();
  await selection.set(["MIG-0b9d7e42-5a1c-58f3-b6e2-91c4d7a3f086"]);
  const c = new FakeEnvironmentVariableCollection();
  applyToCollection(c as never, selection.get(), monitor.inventory);
  assert.equal(c.get("CUDA_VISIBLE_DEVICES")?.value, "MIG-0b9d7e42-5a1c-58f3-b6e2-91c4d7a3f086");
  assert.match(String(c.description), /\(MIG 1g\.18gb on GPU 0\)/);
  monitor.dispose();
});

test("Pick Free GPUs: busy fixture picks GPU 1 (GPU 0 has a process of an unknown user); the policy comes from settings", async () => {
  const { monitor, selection } = setup("busy");
  const r = await pickFreeGpusCommand(monitor, selection);
  assert.deepEqual(r.picked, [1]);
  assert.deepEqual(selection.get(), ["1"]);
  assert.deepEqual(r.skipped, [{ index: 0, reasons: ["in use by another (unknown) user (pid 582)"] }]);
  assert.deepEqual(recorded.messages, ["GPU Pilot: picked GPU 1 (139.8 GiB free, 0% busy)."]);

  settings.set("pick.count", 2);
  settings.set("selectBy", "uuid");
  recorded.messages.length = 0;
  const two = await pickFreeGpusCommand(monitor, selection);
  assert.equal(two.short, true);
  assert.deepEqual(selection.get(), ["GPU-6486822f-842c-1320-f829-e4155c0d2130"]);
  assert.match(recorded.messages[0], /Only 1 of 2 matched the policy\./);

  settings.set("pick.excludeBusyWithOtherUsers", false);
  const any = await pickFreeGpusCommand(monitor, selection);
  assert.deepEqual(any.picked, [1, 0], "the idle GPU first");

  recorded.messages.length = 0;
  const before = selection.get();
  const none = await pickFreeGpusCommand(monitor, selection, { minFreeMemoryMiB: 200_000 });
  assert.deepEqual(none.picked, []);
  assert.deepEqual(none.selection, before, "nothing matched: the selection is unchanged");
  assert.match(recorded.messages[0], /no GPU is free by the pick policy .*GPU 0: 139\.8 GiB free < 195\.3 GiB/);
  monitor.dispose();

  const broken = setup("fail9");
  const failed = await pickFreeGpusCommand(broken.monitor, broken.selection);
  assert.match(failed.problem ?? "", /couldn't communicate with the NVIDIA driver/);
  assert.match(recorded.messages[0], /^GPU Pilot: no GPUs to pick from\./);
  broken.monitor.dispose();
});

test("Stop Process: asks first, then SIGTERM to the user's own process; refuses another user's, and one holding no GPU device", async () => {
  // A stand-in for /dev/nvidia*: the child holds it open, as a CUDA process holds its devices.
  const device = join(mkdtempSync(join(tmpdir(), "gpu-pilot-dev-")), "nvidia0");
  writeFileSync(device, "");
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const fd = require("fs").openSync(${JSON.stringify(device)}, "r"); process.stdout.write("open"); setTimeout(() => fd, 30000)`,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_c, s) => r(s)));
  assert.ok(child.pid);
  const pid = child.pid;
  await new Promise((r) => child.stdout!.once("data", r));
  const start = (await readProcStat(pid)).startTicks;
  let refreshed = 0;
  const own = {
    pid,
    uid: 0,
    user: "me",
    commandLine: "node -e ...",
    argv: [],
    own: true,
    workspaceRun: false,
    ...(start !== undefined ? { startTicks: start } : {}),
  };
  const fakeMonitor = {
    processOf: (p: number) =>
      p === pid ? own : p === 582 ? { ...own, pid: 582, own: false, user: "alice" } : undefined,
    refresh: () => (refreshed++, Promise.resolve()),
  };
  const node = { kind: "app", gpu: { index: 0 }, app: { pid, processName: "node" } };
  recorded.messages.length = 0;

  recorded.answers.push(undefined); // the user closes the confirmation
  await stopProcessCommand(fakeMonitor as never, node);
  assert.doesNotThrow(() => process.kill(pid, 0), "still running");
  assert.match(recorded.messages[0], new RegExp(`^Stop process ${pid} \\(node -e \\.\\.\\.\\) on GPU 0\\?$`));

  // With the real /dev/nvidia prefix the child holds no GPU device: refused, still running.
  recorded.answers.push("Stop Process");
  await stopProcessCommand(fakeMonitor as never, node);
  assert.doesNotThrow(() => process.kill(pid, 0), "still running");
  assert.match(
    recorded.messages.at(-1) ?? "",
    new RegExp(`^GPU Pilot: Process ${pid} holds no NVIDIA device open here: nvidia-smi may see another PID namespace`),
  );

  recorded.answers.push("Stop Process");
  await stopProcessCommand(fakeMonitor as never, node, { devicePrefix: device });
  assert.equal(await exited, "SIGTERM");
  assert.equal(recorded.messages.at(-1), `GPU Pilot: sent SIGTERM to process ${pid}.`);
  assert.equal(refreshed, 2);

  await stopProcessCommand(fakeMonitor as never, {
    kind: "app",
    gpu: { index: 0 },
    app: { pid: 582, processName: "python3" },
  });
  assert.equal(recorded.messages.at(-1), "GPU Pilot stops only your own processes; process 582 belongs to alice.");
  await stopProcessCommand(fakeMonitor as never, undefined);
  assert.match(recorded.messages.at(-1) ?? "", /right-click a process/);
});

test("the GPU view's API part: tree rows, processes, terminal environment, debug resolution, status bar text", async () => {
  const { monitor, selection } = setup("busy");
  const collection = new FakeEnvironmentVariableCollection();
  const features = createGpuFeatures(
    { environmentVariableCollection: collection, workspaceState: memento() } as never,
    monitor,
    selection,
  );
  await monitor.refresh();
  const rows = features.api.getTreeRows();
  assert.deepEqual(
    rows.filter((r) => r.depth === 0).map((r) => r.label),
    ["GPU 0", "GPU 1"],
  );
  const proc = rows.find((r) => r.contextValue.startsWith("computeApp"));
  assert.deepEqual(
    proc && [proc.label, proc.description],
    ["582 python3", "3.3 GiB"],
    "pid 582 is not in this /proc: its user is left out of the row, and the tooltip says why",
  );
  assert.match(
    proc?.tooltip ?? "",
    /^User unknown: pid 582 is not visible in .*another PID namespace.*a container.*has ended/m,
    "the tooltip explains the unknown user",
  );
  assert.deepEqual(
    features.api.getProcesses().map((p) => [p.pid, p.user, p.own]),
    [[582, "unknown", false]],
  );
  recorded.messages.length = 0;
  const picked = await features.api.pickFreeGpus({ count: 1 });
  assert.deepEqual(picked.selection, ["1"]);
  // One source of numbers: the free memory Pick Free GPUs reports is the tree's for the same GPU.
  const pickedFree = /GPU 1 \(([^,]+ free),/.exec(recorded.messages.at(-1) ?? "")?.[1];
  const treeFree = /\(([^()]+ free)\)/.exec(
    features.api.getTreeRows().find((r) => r.label === "GPU 1")?.tooltip ?? "",
  )?.[1];
  assert.equal(pickedFree, "139.8 GiB free", recorded.messages.join("\n"));
  assert.equal(treeFree, pickedFree);
  assert.deepEqual(features.api.getTerminalEnvironment(), {
    CUDA_VISIBLE_DEVICES: { value: "1", type: "replace" },
    CUDA_DEVICE_ORDER: { value: "PCI_BUS_ID", type: "replace" },
  });
  const resolved = await features.api.resolveDebugConfiguration(launch());
  assert.deepEqual(resolved?.env, { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.equal(features.api.getStatusBarText(), "$(circuit-board) GPU 1 · 0% · 0.0/140.4 GiB");
  assert.deepEqual(features.api.getMonitorStatus(), { streaming: false, streamPid: undefined, notices: [] });
  for (const d of features.disposables) d.dispose();
  monitor.dispose();
});
