// User and command line of GPU processes from /proc (common/src/gpu/procinfo.ts): a fake /proc tree
// for other users and other PID namespaces, the real /proc for a child of this test, and stopping
// (SIGTERM through process.kill, only own processes, never a reused pid).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import type { ComputeApp } from "../../../../common/src/gpu/nvidiaSmi";
import {
  checkSignalTarget,
  cpuPercent,
  describeProcesses,
  parseCmdline,
  parseStat,
  processDetails,
  readProcStat,
  readUptime,
  runningSeconds,
  sameProgram,
  signalProcess,
  stopProcess,
} from "../../../../common/src/gpu/procinfo";

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-proc-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const procRoot = join(tmp, "proc");
const passwdFile = join(tmp, "passwd");
writeFileSync(
  passwdFile,
  "root:x:0:0:root:/root:/bin/bash\nalice:x:1001:1001::/home/alice:/bin/sh\n# comment\nbroken line\n",
);

/** A fake /proc/<pid> with status, cmdline and stat. */
function fakeProc(
  pid: number,
  {
    uid,
    name,
    argv,
    ppid = 1,
    start = 4242,
    utime = 0,
    stime = 0,
    rssKiB,
  }: {
    uid?: number;
    name: string;
    argv: string[];
    ppid?: number;
    start?: number;
    utime?: number;
    stime?: number;
    rssKiB?: number;
  },
) {
  const dir = join(procRoot, String(pid));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "status"),
    `Name:\t${name}\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t${pid}\nPPid:\t${ppid}\n${uid !== undefined ? `Uid:\t${uid}\t${uid}\t${uid}\t${uid}\n` : ""}${rssKiB !== undefined ? `VmRSS:\t  ${rssKiB} kB\n` : ""}`,
  );
  writeFileSync(join(dir, "cmdline"), argv.map((a) => a + "\u0000").join(""));
  // state (3), ppid (4), 9 zeros (5-13), utime (14), stime (15), 6 zeros (16-21), starttime (22), vsize (23)
  const fields = [
    "S",
    String(ppid),
    ...Array(9).fill("0"),
    String(utime),
    String(stime),
    ...Array(6).fill("0"),
    String(start),
    "0",
  ];
  writeFileSync(join(dir, "stat"), `${pid} (${name}) ${fields.join(" ")}\n`);
}
/** Waits until the spawned child has exec'd (before that, /proc shows the parent's cmdline). */
async function execed(pid: number): Promise<void> {
  const end = Date.now() + 10_000;
  while ((await readProcStat(pid)).argv?.[1] !== "-e") {
    if (Date.now() > end) assert.fail(`child ${pid} did not start`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const app = (pid: number, processName = "python3"): ComputeApp => ({
  gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
  gpuBusId: null,
  pid,
  processName,
  usedMemoryMiB: 3380,
});

mkdirSync(procRoot, { recursive: true });
writeFileSync(join(procRoot, "uptime"), "107.77 200.00\n"); // seconds since boot, idle seconds
// started 7.77 s after boot, 100 s ago; 50 s of CPU (user 4000 + system 1000 ticks): 50 % of a core on average
fakeProc(582, {
  uid: 1001,
  name: "python3",
  argv: ["python3", "train.py", "--lr", "3e-4"],
  start: 777,
  utime: 4000,
  stime: 1000,
  rssKiB: 2_516_582,
});
fakeProc(583, { uid: 1002, name: "python3", argv: ["/usr/bin/python3", "-m", "torch.distributed.run"] });
fakeProc(600, { uid: 1001, name: "sshd", argv: ["sshd: alice"] }); // another program under the pid nvidia-smi reports
fakeProc(601, { name: "python3", argv: [] }); // no Uid line, kernel-thread-like empty cmdline

test("parsers: cmdline is NUL-separated; stat's command may contain ') '", () => {
  assert.deepEqual(parseCmdline("python3\u0000a b.py\u0000\u0000x\u0000"), ["python3", "a b.py", "", "x"]);
  assert.deepEqual(parseStat("42 (weird) name) S 7 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99 0"), {
    ppid: 7,
    cpuTicks: 0,
    startTicks: 99,
  });
  assert.deepEqual(parseStat("42 (w) S 7 0 0 0 0 0 0 0 0 0 250 30 0 0 0 0 0 0 99 0"), {
    ppid: 7,
    cpuTicks: 280,
    startTicks: 99,
  });
  assert.deepEqual(parseStat("garbage"), {});
});

test("another user's process: user from /etc/passwd, full command line, not own", async () => {
  const d = await processDetails(app(582), undefined, { procRoot, passwdFile, ownUid: 1000, ownUser: "me" });
  assert.deepEqual(d, {
    pid: 582,
    uid: 1001,
    user: "alice",
    commandLine: "python3 train.py --lr 3e-4",
    argv: ["python3", "train.py", "--lr", "3e-4"],
    own: false,
    workspaceRun: false,
    startTicks: 777,
    cpuTicks: 5000,
    rssKiB: 2_516_582,
    readAtS: 107.77,
    cpuPercent: 50,
  });
  const unnamed = await processDetails(app(583), undefined, { procRoot, passwdFile, ownUid: 1000, ownUser: "me" });
  assert.equal(unnamed.user, "uid 1002", "a uid without a passwd entry");
  assert.equal(unnamed.commandLine, "/usr/bin/python3 -m torch.distributed.run");
});

test("own uid: the own user name (os.userInfo), own = true", async () => {
  const d = await processDetails(app(582), undefined, {
    procRoot,
    passwdFile,
    ownUid: 1001,
    ownUser: "alice-from-userinfo",
  });
  assert.equal(d.user, "alice-from-userinfo");
  assert.equal(d.own, true);
});

test("other PID namespace: a missing pid, or another program under it, reads 'unknown' with a note", async () => {
  const gone = await processDetails(app(9999), undefined, { procRoot, passwdFile });
  assert.equal(gone.user, "unknown");
  assert.equal(gone.commandLine, "python3", "nvidia-smi's name stands in");
  assert.equal(gone.own, false);
  assert.match(gone.note ?? "", /not visible .*another PID namespace/);
  const other = await processDetails(app(600), undefined, { procRoot, passwdFile });
  assert.equal(other.user, "unknown");
  assert.match(other.note ?? "", /pid 600 here is sshd: alice, not python3/);
  const noUid = await processDetails(app(601), undefined, { procRoot, passwdFile });
  assert.equal(noUid.user, "unknown");
  assert.equal(noUid.commandLine, "python3", "empty cmdline: the status Name");
  assert.match(noUid.note ?? "", /owner could not be read/);
});

test("sameProgram compares base names of nvidia-smi's name, argv[0], exe and the 15-character status Name", () => {
  assert.ok(sameProgram("/usr/bin/python3", { pid: 1, argv: ["python3", "x.py"] }));
  assert.ok(sameProgram("python3.12", { pid: 1, name: "python3.12", argv: ["python"] }));
  assert.ok(sameProgram("python", { pid: 1, argv: ["python"], exe: "/usr/bin/python3.12" }));
  assert.ok(sameProgram("very_long_program_name", { pid: 1, name: "very_long_progr", argv: [] }));
  assert.ok(!sameProgram("python3", { pid: 1, name: "bash", argv: ["-bash"] }));
});

test("the real /proc: a child of this test is own, named by os.userInfo, with its command line, and descends from us", async () => {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)", "gpu-pilot-test-arg"], {
    stdio: "ignore",
  });
  try {
    assert.ok(child.pid);
    await execed(child.pid);
    const d = await processDetails(app(child.pid, "node"), process.pid);
    assert.equal(d.own, true);
    assert.equal(d.user, userInfo().username);
    assert.equal(d.uid, process.getuid?.());
    assert.deepEqual(d.argv, [process.execPath, "-e", "setTimeout(() => {}, 30000)", "gpu-pilot-test-arg"]);
    assert.equal(d.workspaceRun, true, "its parent is the run pid");
    assert.ok(typeof d.startTicks === "number");
    const notRun = await processDetails(app(child.pid, "node"), 1_999_999);
    assert.equal(notRun.workspaceRun, false);
    const all = await describeProcesses([app(child.pid, "node"), app(child.pid, "node")], undefined);
    assert.equal(all.length, 1, "one entry per pid");
  } finally {
    child.kill("SIGKILL");
  }
});

test("stopProcess: SIGTERM to an own process holding a GPU device; refuses other users' processes, reused pids, and a pid it cannot tie to a GPU; calm when gone", async () => {
  // The child holds a stand-in "device" open: stopProcess looks for an open file under devicePrefix
  // (default /dev/nvidia: a CUDA context holds /dev/nvidiactl and /dev/nvidia<N> open).
  const device = join(tmp, "nvidia-stand-in");
  writeFileSync(device, "");
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const fd = require("fs").openSync(${JSON.stringify(device)}, "r"); process.stdout.write("open"); setTimeout(() => fd, 30000)`,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_code, signal) => r(signal)));
  assert.ok(child.pid);
  await new Promise((r) => child.stdout!.once("data", r));
  const stat = await readProcStat(child.pid);
  assert.ok(stat.startTicks !== undefined);
  const dev = { devicePrefix: device };
  const reused = await stopProcess(child.pid, { startTicks: stat.startTicks + 1 }, dev);
  assert.deepEqual(reused.ok ? "ok" : reused.reason, "reused");
  const unsure = await stopProcess(child.pid, {}, dev);
  assert.deepEqual(unsure.ok ? "ok" : [unsure.reason, unsure.message], [
    "unsure",
    `GPU Pilot cannot tell that pid ${child.pid} is still the process nvidia-smi listed (its start time was not read). Nothing was stopped.`,
  ]);
  // Same pid, same user, but no GPU device open: nvidia-smi's pid is another process here (a container's PID namespace).
  const noGpu = await stopProcess(child.pid, { startTicks: stat.startTicks });
  assert.deepEqual(noGpu.ok ? "ok" : noGpu.reason, "unsure");
  assert.match(
    noGpu.ok ? "" : noGpu.message,
    /holds no NVIDIA device open here: nvidia-smi may see another PID namespace \(a container\), where this pid is another process\. Nothing was stopped\./,
  );
  const r = await stopProcess(child.pid, { startTicks: stat.startTicks }, dev);
  assert.deepEqual(r, { ok: true });
  assert.equal(await exited, "SIGTERM");
  const gone = await stopProcess(child.pid, {});
  assert.equal(gone.ok ? "ok" : gone.reason, "gone");

  const killed: number[] = [];
  const notMine = await stopProcess(582, {}, { procRoot, ownUid: 1000 }, (pid) => killed.push(pid));
  assert.equal(notMine.ok ? "ok" : notMine.reason, "not-own");
  assert.equal(killed.length, 0, "nothing was sent");
  const noFds = await stopProcess(582, { startTicks: 777 }, { procRoot, ownUid: 1001 }, (pid) => killed.push(pid));
  assert.equal(noFds.ok ? "ok" : noFds.reason, "unsure", "fd not readable: unsure");
  mkdirSync(join(procRoot, "582", "fd"), { recursive: true });
  symlinkSync("/dev/nvidiactl", join(procRoot, "582", "fd", "3"));
  symlinkSync("/dev/nvidia0", join(procRoot, "582", "fd", "4"));
  const mine = await stopProcess(582, { startTicks: 777 }, { procRoot, ownUid: 1001 }, (pid, sig) =>
    killed.push(pid, sig === "SIGTERM" ? 15 : 0),
  );
  assert.deepEqual(mine, { ok: true });
  assert.deepEqual(killed, [582, 15]);
});

test("host numbers: CPU % of one core since the last read (or since start), running time, uptime", () => {
  assert.equal(readUptime(procRoot), 107.77);
  assert.equal(readUptime(join(tmp, "nowhere")), undefined);
  // first read: 5000 ticks = 50 s of CPU over 100 s of life
  assert.equal(cpuPercent({ cpuTicks: 5000, startTicks: 777, readAtS: 107.77 }), 50);
  // 2 s later 380 more ticks (3.8 s of CPU): 190 % (nearly two cores)
  assert.equal(
    cpuPercent(
      { cpuTicks: 5380, startTicks: 777, readAtS: 109.77 },
      { cpuTicks: 5000, startTicks: 777, readAtS: 107.77 },
    ),
    190,
  );
  // a reused pid (another start time): the average since its own start, not a delta
  assert.equal(
    cpuPercent({ cpuTicks: 100, startTicks: 9777, readAtS: 107.77 }, { cpuTicks: 5000, startTicks: 777, readAtS: 105 }),
    10,
  );
  assert.equal(cpuPercent({ startTicks: 777, readAtS: 107.77 }), undefined, "no CPU ticks read");
  assert.equal(runningSeconds({ startTicks: 777, readAtS: 107.77 }), 100);
  assert.equal(runningSeconds({ startTicks: 777 }), undefined);
});

test("checkSignalTarget / signalProcess: any user's process with the listed start time and program; EPERM said with the owner; refusals calm", async () => {
  const opts = { procRoot, passwdFile, ownUid: 1000, ownUser: "me" };
  const sent: [number, string][] = [];
  const eperm = (pid: number) => {
    sent.push([pid, "tried"]);
    throw Object.assign(new Error("kill EPERM"), { code: "EPERM" });
  };
  const denied = await signalProcess(582, "SIGKILL", { startTicks: 777, processName: "python3" }, opts, eperm);
  assert.deepEqual(denied, {
    ok: false,
    reason: "permission",
    message:
      "Not permitted (EPERM): process 582 belongs to alice; only alice or root can send it SIGKILL. Nothing was sent.",
  });
  assert.deepEqual(sent, [[582, "tried"]], "another user's process is tried: the kernel decides");
  const ok = await signalProcess(582, "SIGTERM", { startTicks: 777, processName: "python3" }, opts, (pid, sig) =>
    sent.push([pid, sig]),
  );
  assert.deepEqual(ok.ok ? ok.user : ok.reason, "alice");
  assert.deepEqual(sent.at(-1), [582, "SIGTERM"]);
  const reused = await checkSignalTarget(582, { startTicks: 778, processName: "python3" }, opts);
  assert.equal(reused.ok ? "ok" : reused.reason, "reused");
  const noStart = await checkSignalTarget(582, { processName: "python3" }, opts);
  assert.equal(noStart.ok ? "ok" : noStart.reason, "unsure");
  const other = await checkSignalTarget(600, { startTicks: 4242, processName: "python3" }, opts);
  assert.deepEqual(other.ok ? "ok" : [other.reason, other.message], [
    "other-namespace",
    "pid 600 here is sshd: alice, not python3: nvidia-smi sees another PID namespace. Nothing was sent.",
  ]);
  const gone = await checkSignalTarget(9999, { startTicks: 1, processName: "python3" }, opts);
  assert.deepEqual(gone.ok ? "ok" : [gone.reason, gone.message], [
    "gone",
    "Process 9999 is not visible here: it has ended, or it runs in another PID namespace (a container) that VS Code cannot see. Nothing was sent.",
  ]);
});

test("signalProcess on a real child: SIGKILL ends it; the no-device warning is carried to the confirmation", async () => {
  const child = spawn("sleep", ["300"], { stdio: "ignore" });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_c, sig) => r(sig)));
  assert.ok(child.pid);
  const end = Date.now() + 10_000;
  while ((await readProcStat(child.pid)).argv?.[0] !== "sleep") {
    if (Date.now() > end) assert.fail("sleep did not start");
    await new Promise((r) => setTimeout(r, 10));
  }
  const stat = await readProcStat(child.pid);
  const check = await checkSignalTarget(child.pid, { startTicks: stat.startTicks, processName: "sleep" });
  assert.deepEqual(check, {
    ok: true,
    user: userInfo().username,
    warning: `It holds no NVIDIA device open here: nvidia-smi may see another PID namespace, where pid ${child.pid} is another process.`,
  });
  const r = await signalProcess(child.pid, "SIGKILL", { startTicks: stat.startTicks, processName: "sleep" });
  assert.equal(r.ok, true);
  assert.equal(await exited, "SIGKILL");
});
