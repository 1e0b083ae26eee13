// User and command line of GPU processes from /proc (client/src/gpu/procinfo.ts): a fake /proc tree
// for other users and other PID namespaces, the real /proc for a child of this test, and stopping
// (SIGTERM through process.kill, only own processes, never a reused pid).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import type { ComputeApp } from "../../client/src/gpu/nvidiaSmi";
import { describeProcesses, parseCmdline, parseStat, processDetails, readProcStat, sameProgram, stopProcess } from "../../client/src/gpu/procinfo";

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-proc-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const procRoot = join(tmp, "proc");
const passwdFile = join(tmp, "passwd");
writeFileSync(passwdFile, "root:x:0:0:root:/root:/bin/bash\nalice:x:1001:1001::/home/alice:/bin/sh\n# comment\nbroken line\n");

/** A fake /proc/<pid> with status, cmdline and stat. */
function fakeProc(pid: number, { uid, name, argv, ppid = 1, start = 4242 }: { uid?: number; name: string; argv: string[]; ppid?: number; start?: number }) {
  const dir = join(procRoot, String(pid));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "status"), `Name:\t${name}\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t${pid}\nPPid:\t${ppid}\n${uid !== undefined ? `Uid:\t${uid}\t${uid}\t${uid}\t${uid}\n` : ""}`);
  writeFileSync(join(dir, "cmdline"), argv.map((a) => a + "\u0000").join(""));
  const fields = ["S", String(ppid), ...Array(17).fill("0"), String(start), "0"]; // state, ppid, ..., starttime is field 22
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
const app = (pid: number, processName = "python3"): ComputeApp => ({ gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", gpuBusId: null, pid, processName, usedMemoryMiB: 3380 });

fakeProc(582, { uid: 1001, name: "python3", argv: ["python3", "train.py", "--lr", "3e-4"], start: 777 });
fakeProc(583, { uid: 1002, name: "python3", argv: ["/usr/bin/python3", "-m", "torch.distributed.run"] });
fakeProc(600, { uid: 1001, name: "sshd", argv: ["sshd: alice"] }); // another program under the pid nvidia-smi reports
fakeProc(601, { name: "python3", argv: [] }); // no Uid line, kernel-thread-like empty cmdline

test("parsers: cmdline is NUL-separated; stat's command may contain ') '", () => {
  assert.deepEqual(parseCmdline("python3\u0000a b.py\u0000\u0000x\u0000"), ["python3", "a b.py", "", "x"]);
  assert.deepEqual(parseStat("42 (weird) name) S 7 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99 0"), { ppid: 7, startTicks: 99 });
  assert.deepEqual(parseStat("garbage"), {});
});

test("another user's process: user from /etc/passwd, full command line, not own", async () => {
  const d = await processDetails(app(582), undefined, { procRoot, passwdFile, ownUid: 1000, ownUser: "me" });
  assert.deepEqual(d, { pid: 582, uid: 1001, user: "alice", commandLine: "python3 train.py --lr 3e-4", argv: ["python3", "train.py", "--lr", "3e-4"], own: false, workspaceRun: false, startTicks: 777 });
  const unnamed = await processDetails(app(583), undefined, { procRoot, passwdFile, ownUid: 1000, ownUser: "me" });
  assert.equal(unnamed.user, "uid 1002", "a uid without a passwd entry");
  assert.equal(unnamed.commandLine, "/usr/bin/python3 -m torch.distributed.run");
});

test("own uid: the own user name (os.userInfo), own = true", async () => {
  const d = await processDetails(app(582), undefined, { procRoot, passwdFile, ownUid: 1001, ownUser: "alice-from-userinfo" });
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
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)", "gpu-pilot-test-arg"], { stdio: "ignore" });
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
  const child = spawn(process.execPath, ["-e", `const fd = require("fs").openSync(${JSON.stringify(device)}, "r"); process.stdout.write("open"); setTimeout(() => fd, 30000)`], { stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_code, signal) => r(signal)));
  assert.ok(child.pid);
  await new Promise((r) => child.stdout!.once("data", r));
  const stat = await readProcStat(child.pid);
  assert.ok(stat.startTicks !== undefined);
  const dev = { devicePrefix: device };
  const reused = await stopProcess(child.pid, { startTicks: stat.startTicks + 1 }, dev);
  assert.deepEqual(reused.ok ? "ok" : reused.reason, "reused");
  const unsure = await stopProcess(child.pid, {}, dev);
  assert.deepEqual(unsure.ok ? "ok" : [unsure.reason, unsure.message], ["unsure", `GPU Pilot cannot tell that pid ${child.pid} is still the process nvidia-smi listed (its start time was not read). Nothing was stopped.`]);
  // Same pid, same user, but no GPU device open: nvidia-smi's pid is another process here (a container's PID namespace).
  const noGpu = await stopProcess(child.pid, { startTicks: stat.startTicks });
  assert.deepEqual(noGpu.ok ? "ok" : noGpu.reason, "unsure");
  assert.match(noGpu.ok ? "" : noGpu.message, /holds no NVIDIA device open here: nvidia-smi may see another PID namespace \(a container\), where this pid is another process\. Nothing was stopped\./);
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
  const mine = await stopProcess(582, { startTicks: 777 }, { procRoot, ownUid: 1001 }, (pid, sig) => killed.push(pid, sig === "SIGTERM" ? 15 : 0));
  assert.deepEqual(mine, { ok: true });
  assert.deepEqual(killed, [582, 15]);
});
