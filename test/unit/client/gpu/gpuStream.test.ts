// The streaming monitor (client/src/gpu/stream.ts) without VS Code: tick assembly on the captured
// loop.txt lines, and GpuStream against the fake nvidia-smi's -lms mode and its fault modes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QUERY_GPU_FIELDS, streamGpuArgs } from "../../../../common/src/gpu/nvidiaSmi";
import { GpuStream, type StreamEvent, TickAssembler } from "../../../../client/src/gpu/stream";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const FIXTURES = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-stream-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

/** The captured GPU lines with memory.used / utilization.gpu of `sample` (index, util, used). */
function gpuLine(index: number, util = 0, used = 0): string {
  const base = fixture("query_gpu_nounits.csv").trim().split("\n")[index].split(", ");
  base[8] = String(util);
  base[6] = String(used);
  return base.join(", ");
}

function record(stream: GpuStream) {
  const events: StreamEvent[] = [];
  stream.on((e) => events.push(e));
  return {
    events,
    ticks: () => events.flatMap((e) => (e.kind === "tick" ? [e.tick] : [])),
    faults: () => events.flatMap((e) => (e.kind === "fault" ? [e] : [])),
    processes: () => events.flatMap((e) => (e.kind === "processes" ? [e.processes] : [])),
  };
}

const fast = (mode: string, extra: Partial<ConstructorParameters<typeof GpuStream>[0]> = {}) =>
  new GpuStream({
    path: FAKE,
    intervalMs: 100,
    timeoutMs: 2000,
    env: { FAKE_NVIDIA_SMI_MODE: mode },
    backoffInitialMs: 50,
    backoffMaxMs: 400,
    processesEvery: 3,
    ...extra,
  });

test("the stream asks nvidia-smi for the GPU fields with -lms <interval>", () => {
  assert.deepEqual(streamGpuArgs(1000), [
    `--query-gpu=${QUERY_GPU_FIELDS.join(",")}`,
    "--format=csv,noheader,nounits",
    "-lms",
    "1000",
  ]);
  assert.deepEqual(streamGpuArgs(249.6).slice(-2), ["-lms", "250"]);
});

test("TickAssembler groups the captured loop.txt by index sequence: one tick per sample", () => {
  // loop.txt holds index, utilization.gpu, memory.used per line (3 fields): rebuild full lines from it
  const samples = fixture("loop.txt")
    .trim()
    .split("\n")
    .map((l) => l.split(", ").map(Number));
  const a = new TickAssembler();
  const ticks = [];
  for (const [index, util, used] of samples) {
    const done = a.push(gpuLine(index, util, used));
    if (done) ticks.push(done);
  }
  const last = a.end();
  if (last) ticks.push(last);
  assert.equal(ticks.length, samples.length / 2, "2 GPUs per sample");
  for (const t of ticks) {
    assert.deepEqual(
      t.gpus.map((g) => [g.index, g.memoryUsedMiB]),
      [
        [0, 3389],
        [1, 4],
      ],
    );
    assert.deepEqual(t.problems, []);
  }
});

test("TickAssembler: settle returns the open tick once; a late line of the same sample re-opens it", () => {
  const a = new TickAssembler();
  assert.equal(a.push(gpuLine(0)), undefined);
  const first = a.settle();
  assert.deepEqual(
    first?.gpus.map((g) => g.index),
    [0],
  );
  assert.equal(a.settle(), undefined, "nothing new");
  assert.equal(a.push(gpuLine(1)), undefined, "index 1 continues the sample");
  assert.deepEqual(
    a.settle()?.gpus.map((g) => g.index),
    [0, 1],
    "the sample grew: returned again",
  );
  assert.equal(a.push(gpuLine(0, 50)), undefined, "the next sample starts; the previous one was returned already");
  assert.equal(a.push(gpuLine(1, 60)), undefined);
  assert.deepEqual(
    a.settle()?.gpus.map((g) => g.utilizationGpuPercent),
    [50, 60],
  );
});

test("TickAssembler: a sample with fewer GPUs is held until the next one starts (no false 'GPU gone' from a split sample)", () => {
  const a = new TickAssembler();
  a.push(gpuLine(0));
  a.push(gpuLine(1));
  assert.equal(a.settle()?.gpus.length, 2);
  a.push(gpuLine(0, 7)); // next sample: GPU 0 only so far
  assert.equal(a.settle(), undefined, "held: 1 < 2 GPUs");
  a.push(gpuLine(1, 8)); // it was only slow
  assert.deepEqual(
    a.settle()?.gpus.map((g) => g.utilizationGpuPercent),
    [7, 8],
  );
  a.push(gpuLine(0, 9)); // GPU 1 really gone this time
  assert.equal(a.settle(), undefined);
  const gone = a.push(gpuLine(0, 10)); // the following sample starts: the short one is final
  assert.deepEqual(
    gone?.gpus.map((g) => g.utilizationGpuPercent),
    [9],
  );
});

test("TickAssembler: garbage and device errors are problems of their tick; a burst of garbage alone is a tick without GPUs", () => {
  const a = new TickAssembler();
  a.push(gpuLine(0));
  a.push(
    "Unable to determine the device handle for GPU 00000000:00:07.0: GPU is lost.  Reboot the system to recover this GPU",
  );
  const t = a.settle();
  assert.deepEqual(
    t?.gpus.map((g) => g.index),
    [0],
  );
  assert.deepEqual(
    t?.problems.map((p) => p.device),
    [{ busId: "00000000:00:07.0", message: "GPU is lost. Reboot the system to recover this GPU" }],
  );
  const g = new TickAssembler();
  g.push("%%% not csv %%%");
  g.push("\u0000\u0001binary");
  const only = g.settle();
  assert.deepEqual(only?.gpus, []);
  assert.equal(only?.problems.length, 2);
  assert.ok(!only?.problems[1].text.includes("\u0000"), "control characters are not passed on");
  assert.equal(g.settle(), undefined, "reported once");
});

test("busy: ticks carry loop.txt's live numbers; processes on the 1st tick and every 3rd; stop ends nvidia-smi", async () => {
  const stream = fast("busy");
  const r = record(stream);
  stream.start();
  await until(() => r.ticks().length >= 5 && r.processes().length >= 2, "5 ticks and 2 process lists");
  const pid = stream.pid;
  assert.ok(pid, "a long-lived process");
  assert.equal(r.events.filter((e) => e.kind === "started").length, 1, "one process for all ticks");
  const t = r.ticks()[0];
  assert.deepEqual(
    t.gpus.map((g) => [g.index, g.memoryUsedMiB, g.memoryFreeMiB]),
    [
      [0, 3389, 139767],
      [1, 4, 143152],
    ],
  );
  assert.deepEqual(
    r
      .ticks()
      .map((x) => x.seq)
      .slice(0, 5),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(
    r.processes()[0].apps.map((a) => [a.pid, a.processName, a.usedMemoryMiB]),
    [[582, "python3", 3380]],
  );
  assert.deepEqual(r.processes()[0].mig, []);
  assert.deepEqual(r.faults(), []);
  await stream.stop();
  assert.equal(stream.isRunning, false);
  assert.throws(() => process.kill(pid, 0), /ESRCH/, "nvidia-smi has exited");
  const count = r.events.length;
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(r.events.length, count, "nothing after stop");
});

test("die-after-2: the stream dies, is restarted with a growing back-off, and says why", async () => {
  const stream = fast("die-after-2");
  const r = record(stream);
  stream.start();
  await until(() => r.faults().length >= 3, "three faults");
  await stream.stop();
  const faults = r.faults();
  assert.deepEqual(
    faults.slice(0, 3).map((f) => f.retryInMs),
    [50, 100, 200],
    "1x, 2x, 4x the initial back-off",
  );
  for (const f of faults.slice(0, 3)) {
    assert.equal(f.failure.kind, "failed");
    assert.equal(f.afterTicks, 2);
    if (f.failure.kind === "failed") {
      assert.equal(f.failure.exitCode, 255);
      assert.equal(f.failure.message, "Failed to initialize NVML: Unknown Error");
    }
  }
  assert.ok(r.events.filter((e) => e.kind === "started").length >= 3, "restarted");
  assert.ok(r.ticks().length >= 6, "ticks after each restart");
});

test("hang: no output within timeout + interval: killed, reported as a timeout, retried", async () => {
  const stream = fast("hang", { timeoutMs: 300 });
  const r = record(stream);
  const started = Date.now();
  stream.start();
  await until(() => r.faults().length >= 1, "a timeout fault");
  const f = r.faults()[0];
  assert.equal(f.failure.kind, "timeout");
  assert.match(f.failure.message, /printed nothing for 400 ms and was stopped/);
  assert.equal(f.retryInMs, 50);
  assert.ok(Date.now() - started < 5000);
  await until(() => r.events.filter((e) => e.kind === "started").length >= 2, "a restart");
  await stream.stop();
});

test("missing program and exit 2 are not retried; exit 9 is, with nvidia-smi's own message", async () => {
  const missing = new GpuStream({
    path: join(tmp, "no-such-smi"),
    intervalMs: 100,
    timeoutMs: 1000,
    backoffInitialMs: 50,
  });
  const rm = record(missing);
  missing.start();
  await until(() => rm.faults().length === 1, "missing fault");
  assert.equal(rm.faults()[0].failure.kind, "missing");
  assert.equal(rm.faults()[0].retryInMs, undefined);
  await missing.stop();

  const fail2 = fast("fail2");
  const r2 = record(fail2);
  fail2.start();
  await until(() => r2.faults().length === 1, "exit 2 fault");
  assert.equal(r2.faults()[0].retryInMs, undefined, "rejected arguments: retrying cannot help");
  await fail2.stop();

  const fail9 = fast("fail9");
  const r9 = record(fail9);
  fail9.start();
  await until(() => r9.faults().length >= 2, "two exit 9 faults");
  await fail9.stop();
  const f = r9.faults()[0];
  assert.equal(f.afterTicks, 0);
  assert.equal(f.retryInMs, 50);
  assert.equal(f.failure.kind, "failed");
  if (f.failure.kind === "failed") {
    assert.equal(f.failure.exitCode, 9);
    assert.match(f.failure.message, /^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
    assert.match(f.failure.explanation, /driver is not loaded \(exit 9\)/);
  }
  assert.equal(r9.ticks().length, 0, "the driver message is the fault, not a garbage tick");
});

test("garbage: ticks without GPUs that carry the unreadable lines", async () => {
  const stream = fast("garbage");
  const r = record(stream);
  stream.start();
  await until(() => r.ticks().length >= 1, "a garbage tick");
  await stream.stop();
  const t = r.ticks()[0];
  assert.deepEqual(t.gpus, []);
  assert.equal(t.problems[0].text, "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>");
  assert.match(t.problems[0].reason, /expected 20 fields/);
});

test("flap: GPU 1 is missing from every second sample (reported, not hidden)", async () => {
  const stream = fast("flap");
  const r = record(stream);
  stream.start();
  await until(() => r.ticks().length >= 4, "four ticks");
  await stream.stop();
  const counts = r.ticks().map((t) => t.gpus.length);
  assert.ok(counts.includes(1) && counts.includes(2), `GPU counts per tick: ${counts.join(",")}`);
});

test("lost and MIG: device errors are tick problems; under MIG the process query also lists MIG devices", async () => {
  const lost = fast("lost");
  const rl = record(lost);
  lost.start();
  await until(() => rl.ticks().length >= 2, "ticks");
  await lost.stop();
  assert.deepEqual(
    rl.ticks()[1].gpus.map((g) => g.index),
    [0],
  );
  assert.equal(rl.ticks()[1].problems[0].device?.busId, "00000000:00:07.0");

  const mig = fast("mig");
  const rm = record(mig);
  mig.start();
  await until(() => rm.processes().some((p) => p.mig.length > 0), "MIG devices");
  await mig.stop();
  const p = rm.processes().find((x) => x.mig.length > 0)!;
  assert.deepEqual(
    p.mig.map((m) => [m.gpuIndex, m.profile, m.device]),
    [
      [0, "3g.71gb", 0],
      [0, "2g.35gb", 1],
      [0, "1g.18gb", 2],
    ],
  );
  assert.equal(p.apps[0].usedMemoryMiB, null, "[N/A] under MIG");
});

test("restart with new options replaces the process; a partial line is completed across chunks", async () => {
  const stream = fast("busy");
  const r = record(stream);
  stream.start();
  await until(() => r.ticks().length >= 1, "a tick");
  const first = stream.pid;
  stream.restart({ env: { FAKE_NVIDIA_SMI_MODE: "idle" } });
  await until(
    () => stream.pid !== undefined && stream.pid !== first && r.processes().some((p) => p.apps.length === 0),
    "an idle process list from the new process",
  );
  await stream.stop();

  // a program that writes one line in two chunks, 50 ms apart
  const slow = join(tmp, "chunked-smi");
  const line = gpuLine(0);
  writeFileSync(
    slow,
    `#!/usr/bin/env node\nconst l = ${JSON.stringify(line + "\n")};\nsetInterval(() => { process.stdout.write(l.slice(0, 30)); setTimeout(() => process.stdout.write(l.slice(30)), 50); }, 200);\n`,
  );
  chmodSync(slow, 0o755);
  const chunked = new GpuStream({ path: slow, intervalMs: 200, timeoutMs: 2000, processesEvery: 0, settleMs: 20 });
  const rc = record(chunked);
  chunked.start();
  await until(() => rc.ticks().length >= 2, "ticks from split lines");
  await chunked.stop();
  assert.deepEqual(rc.ticks()[0].problems, []);
  assert.deepEqual(
    rc.ticks()[0].gpus.map((g) => g.uuid),
    ["GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f"],
  );
});

test("trickle: bytes that never make a sample do not keep nvidia-smi alive (issue 18 item 4)", async () => {
  // One byte every 40 ms, forever: a valid line, but 3 s per line, never a sample within the limit.
  const trickle = join(tmp, "trickle-smi");
  writeFileSync(
    trickle,
    `#!/usr/bin/env node\nconst l = ${JSON.stringify(gpuLine(0) + "\n")};\nlet i = 0;\nsetInterval(() => { process.stdout.write(l[i % l.length]); i++; }, 40);\n`,
  );
  chmodSync(trickle, 0o755);
  const stream = new GpuStream({
    path: trickle,
    intervalMs: 100,
    timeoutMs: 300,
    processesEvery: 0,
    backoffInitialMs: 50,
    backoffMaxMs: 400,
  });
  const r = record(stream);
  const started = Date.now();
  stream.start();
  try {
    await until(() => r.faults().length >= 1, "a timeout fault", 5000);
  } finally {
    await stream.stop();
  }
  const f = r.faults()[0];
  assert.equal(f.failure.kind, "timeout");
  assert.match(f.failure.message, /^nvidia-smi printed no complete sample for 400 ms \(\d+ bytes\) and was stopped$/);
  assert.ok(Date.now() - started < 3000, "stopped well before the first line was complete");
  assert.equal(r.ticks().filter((t) => t.gpus.length > 0).length, 0);
});

test("trickle: a sample that keeps coming in time keeps the stream alive, however it is split", async () => {
  // A whole line 400 ms after the last one ended, written in 7-byte chunks 1 ms apart (each split
  // inside a field): samples in time, no fault. One line at a time: a writer that started the next
  // line every 400 ms interleaved two lines' bytes once its timer was starved (a loaded 2-core
  // machine fired a 1 ms timer 89 times a second), and the stream rightly saw no sample.
  const split = join(tmp, "bytewise-smi");
  writeFileSync(
    split,
    `#!/usr/bin/env node\nconst l = ${JSON.stringify(gpuLine(0) + "\n")};\nconst line = () => { let i = 0; const t = setInterval(() => { process.stdout.write(l.slice(i, i + 7)); i += 7; if (i >= l.length) { clearInterval(t); setTimeout(line, 400); } }, 1); };\nline();\n`,
  );
  chmodSync(split, 0o755);
  // timeoutMs leaves room for a starved writer (the 600 ms limit this test once had failed there).
  const stream = new GpuStream({ path: split, intervalMs: 400, timeoutMs: 2600, processesEvery: 0, settleMs: 20 });
  const r = record(stream);
  stream.start();
  try {
    await until(() => r.ticks().filter((t) => t.gpus.length > 0).length >= 4, "four samples");
  } finally {
    await stream.stop();
  }
  assert.deepEqual(r.faults(), []);
});
