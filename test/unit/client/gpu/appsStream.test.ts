// The streamed process list (client/src/gpu/appsStream.ts, issue 45): samples delimited by the
// `timestamp` field that starts every row, silence read as "no processes now" and cross-checked
// with the one-shot query. The real driver's output (test/fixtures/nvidia-smi/h100-stream, driver
// 580.159.04 on an H100: the header once, timestamped rows, nothing at all for an empty sample) is
// replayed line by line under mock timers; the fake nvidia-smi prints the same way for the process
// tests (restart with back-off, hang, an nvidia-smi without the field falls back to the per-tick query).
//
// Before, samples were delimited by a CSV header expected at the start of every sample; the real
// driver prints it once, so the stream gave up there. The tests that encoded that assumption
// (a header closes a sample; "header printed once" is unsupported) are replaced by the ones below.
import { type TestContext, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AppsCheck,
  AppsAssembler,
  type AppsEvent,
  type AppsSample,
  AppsSampler,
  type AppsSamplerOptions,
  AppsStream,
  isAppsHeader,
  rowTimestamp,
  streamAppsArgs,
} from "../../../../client/src/gpu/appsStream";
import { GpuStream, type StreamEvent } from "../../../../client/src/gpu/stream";
import { QUERY_APPS_FIELDS } from "../../../../common/src/gpu/nvidiaSmi";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const H100 = join(ROOT, "test", "fixtures", "nvidia-smi", "h100-stream");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-apps-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * The capture's lines as the stream gets them. The capture asked for
 * `timestamp,gpu_uuid,pid,process_name,used_gpu_memory`; the stream also asks for `gpu_bus_id`
 * (the one-shot query's third field), so a bus id is put in as the third field of every row.
 * Everything else (header once, timestamps, no line for an empty sample) is the driver's.
 */
const BUS_ID = "00000000:00:06.0";
function capture(name: string): string[] {
  return readFileSync(join(H100, name), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (rowTimestamp(l) === undefined ? l : l.replace(/^([^,]+, [^,]+, )/, `$1${BUS_ID}, `)));
}
const pidsMiB = (s: AppsSample | undefined) => s?.apps.map((a) => [a.pid, a.processName, a.usedMemoryMiB]);

test("the stream asks for the timestamp first, with the header, looping with -lms; the real driver's header and rows are recognised", () => {
  assert.deepEqual(streamAppsArgs(5000), [
    `--query-compute-apps=timestamp,${QUERY_APPS_FIELDS.join(",")}`,
    "--format=csv,nounits",
    "-lms",
    "5000",
  ]);
  const [header, row] = readFileSync(join(H100, "compute-apps-timestamp-lms1000.csv"), "utf8").split("\n");
  assert.equal(header, "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]");
  assert.equal(isAppsHeader(header), true);
  assert.equal(
    isAppsHeader("gpu_uuid, gpu_bus_id, pid, process_name, used_gpu_memory [MiB]"),
    true,
    "the header without the timestamp",
  );
  assert.equal(isAppsHeader(row), false);
  assert.equal(rowTimestamp(row), "2026/12/05 15:11:03.166");
  assert.equal(rowTimestamp("GPU-bf4236fb-07af-c243-ea22-582053ab2aec, 582, python3, 1542"), undefined);
  // the field is documented by the driver's own help
  assert.match(
    readFileSync(join(H100, "help-query-compute-apps.txt"), "utf8"),
    /^"timestamp"\nThe timestamp of when the query was made in format "YYYY\/MM\/DD HH:MM:SS\.msec"\./m,
  );
});

test("AppsAssembler on the real capture: a row with a new timestamp closes the previous sample", () => {
  const lines = capture("compute-apps-timestamp-lms1000.csv");
  assert.equal(lines.length, 3, "the header once, then one row per sample (one process holding 1542 MiB)");
  const a = new AppsAssembler();
  assert.equal(a.push(lines[0]), undefined, "the header");
  assert.equal(a.push(lines[1]), undefined, "the first row opens a sample");
  const first = a.push(lines[2]);
  assert.deepEqual(pidsMiB(first), [[582, "python3", 1542]], "the second sample's row closes the first");
  assert.deepEqual(first?.apps[0].gpuUuid, "GPU-bf4236fb-07af-c243-ea22-582053ab2aec");
  assert.deepEqual(pidsMiB(a.settle()), [[582, "python3", 1542]], "the second, at the quiet moment");
  assert.equal(a.settle(), undefined, "returned once");
  assert.deepEqual([a.headers, a.rows], [1, 2]);
  // The capture with no process: the header and nothing else. No sample comes from lines alone.
  const none = new AppsAssembler();
  assert.deepEqual(
    capture("compute-apps-timestamp-none.csv").map((l) => none.push(l)),
    [undefined],
  );
  assert.equal(none.settle(), undefined, "silence is the sampler's business");
});

test("AppsAssembler: two processes in one sample; a late row of a returned sample returns it again, whole; odd names; what it cannot read is reported", () => {
  const [, row] = capture("compute-apps-timestamp-lms1000.csv");
  const second = row.replace(", 582, python3, 1542", ", 583, torchrun, 2048"); // constructed: a second process in the same sample
  const next = row.replace("15:11:03.166", "15:11:04.167");
  const a = new AppsAssembler();
  assert.equal(a.push(row), undefined);
  assert.equal(a.push(second), undefined, "same timestamp: the same sample");
  assert.deepEqual(
    pidsMiB(a.push(next)),
    [
      [582, "python3", 1542],
      [583, "torchrun", 2048],
    ],
    "both, closed by the next timestamp",
  );

  const b = new AppsAssembler();
  b.push(row);
  assert.deepEqual(pidsMiB(b.settle()), [[582, "python3", 1542]]);
  b.push(second);
  assert.deepEqual(
    pidsMiB(b.settle()),
    [
      [582, "python3", 1542],
      [583, "torchrun", 2048],
    ],
    "a row of the same sample after the settle: the whole sample again",
  );
  assert.equal(b.push(next), undefined, "the returned sample is not returned again by the next timestamp");

  // Rows stamped apart by less than joinWithinMs (the stream passes half its period) are one
  // sample: constructed, in case a driver stamps each GPU's rows apart (not measured).
  const e = new AppsAssembler(500);
  e.push(row);
  e.push(second.replace("15:11:03.166", "15:11:03.171"));
  assert.deepEqual(
    pidsMiB(e.push(next)),
    [
      [582, "python3", 1542],
      [583, "torchrun", 2048],
    ],
    "5 ms apart: one sample; the next period's row closes it",
  );
  const exact = new AppsAssembler();
  exact.push(row);
  assert.deepEqual(
    pidsMiB(exact.push(second.replace("15:11:03.166", "15:11:03.171"))),
    [[582, "python3", 1542]],
    "by default only the same timestamp joins",
  );

  // A header repeated before every sample (an nvidia-smi that prints it so) changes nothing.
  const c = new AppsAssembler();
  const header = capture("compute-apps-timestamp-lms1000.csv")[0];
  assert.deepEqual(
    [header, row, header, next].map((l) => pidsMiB(c.push(l))),
    [undefined, undefined, undefined, [[582, "python3", 1542]]],
  );
  assert.equal(c.headers, 2);

  // A process name with a newline, as nvidia-smi prints it: the rest of the record has no timestamp.
  const d = new AppsAssembler();
  d.push("2026/12/05 15:11:03.166, GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, 4242, /opt/evil");
  d.push("::warning::x|tool, 1024");
  assert.deepEqual(pidsMiB(d.settle()), [[4242, "/opt/evil\n::warning::x|tool", 1024]]);
  // A line with no timestamp after a closed sample opens one of its own: reported, not dropped.
  d.push("not, a, row");
  assert.match(d.settle()?.problems[0] ?? "", /^Process query line 1: expected 5 fields, found 3/);
});

// ---- AppsSampler under mock timers: the timing of samples, silence and the check.

/** Mock `setTimeout` and `Date` for this test (restored after it), the clock at 0; returns how to advance it. */
function clock(t: TestContext): (ms: number) => Promise<void> {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  // 10 ms steps, letting promises (the check) settle at each
  return async (ms) => {
    for (let done = 0; done < ms; done += 10) {
      t.mock.timers.tick(Math.min(10, ms - done));
      for (let i = 0; i < 4; i++) await new Promise<void>((r) => setImmediate(r));
    }
  };
}

function sampler(check: () => AppsCheck | Promise<AppsCheck>, o: Partial<AppsSamplerOptions> = {}) {
  const got: { sample: AppsSample; from: "stream" | "check"; at: number }[] = [];
  const hung: string[] = [];
  const s = new AppsSampler({
    periodMs: 1000, // the capture's -lms 1000; margin 250 ms by default
    check: async () => check(),
    sample: (sample, from) => got.push({ sample, from, at: Date.now() }),
    hung: (m) => hung.push(m),
    ...o,
  });
  return { s, got, hung, shape: () => got.map((g) => [g.at, g.from, pidsMiB(g.sample)]) };
}
const EMPTY: AppsCheck = { kind: "ok", sample: { apps: [], problems: [] } };

test("AppsSampler, the real capture fed a line a second: two samples of pid 582 (1542 MiB); then a period with no row is an empty sample, checked once", async (t) => {
  const advance = clock(t);
  const [header, row1, row2] = capture("compute-apps-timestamp-lms1000.csv");
  const r = sampler(() => EMPTY);
  r.s.lines([header, row1]);
  await advance(1000);
  r.s.lines([row2]);
  await advance(1000);
  assert.deepEqual(
    r.shape(),
    [
      [50, "stream", [[582, "python3", 1542]]],
      [1050, "stream", [[582, "python3", 1542]]],
    ],
    "each sample 50 ms after its burst",
  );
  assert.equal(r.s.checks, 0, "no check while rows come");
  // No row for a period plus the margin after the last one (1000 + 1000 + 250): the process has
  // gone, which the one-shot query confirms; then one empty sample per period, not checked again.
  await advance(3000);
  assert.deepEqual(r.shape().slice(2), [
    [2250, "stream", []],
    [3250, "stream", []],
    [4250, "stream", []],
  ]);
  assert.equal(r.s.checks, 1, "checked where the processes seemed to go");
  assert.deepEqual(r.hung, []);
  r.s.dispose();
});

test("AppsSampler, the real capture with no process (the header alone): an empty first sample after the margin, one per period, a check every 30 s", async (t) => {
  const advance = clock(t);
  const r = sampler(() => EMPTY);
  r.s.lines(capture("compute-apps-timestamp-none.csv"));
  await advance(2300);
  assert.deepEqual(
    r.shape(),
    [
      [250, "stream", []],
      [1250, "stream", []],
      [2250, "stream", []],
    ],
    "the first sample follows the header at once: none within the margin is empty",
  );
  assert.equal(r.s.checks, 1, "the first silence is checked");
  await advance(30_000);
  assert.equal(r.got.length, 33);
  assert.ok(r.got.every((g) => g.from === "stream" && g.sample.apps.length === 0));
  assert.equal(r.s.checks, 2, "silence checked again after 30 s (at 30 250 ms)");
  // A process starts: its row ends the silence at once.
  const [, row] = capture("compute-apps-timestamp-lms1000.csv");
  r.s.lines([row]);
  await advance(60);
  assert.deepEqual(pidsMiB(r.got.at(-1)?.sample), [[582, "python3", 1542]]);
  r.s.dispose();
  const n = r.got.length;
  await advance(5000);
  assert.equal(r.got.length, n, "nothing after dispose");
});

test("AppsSampler: silent while the check lists processes: the check's list, then hung after a period plus the margin; a row in time clears it", async (t) => {
  const advance = clock(t);
  const [header, row] = capture("compute-apps-timestamp-lms1000.csv");
  const listed: AppsCheck = {
    kind: "ok",
    sample: {
      apps: [
        {
          gpuUuid: "GPU-bf4236fb-07af-c243-ea22-582053ab2aec",
          gpuBusId: BUS_ID,
          pid: 582,
          processName: "python3",
          usedMemoryMiB: 1542,
        },
      ],
      problems: [],
    },
  };
  const r = sampler(() => listed);
  r.s.lines([header, row]);
  await advance(1300); // the row's sample at 50; silence from 1250: checked, and the check lists pid 582
  assert.deepEqual(r.shape(), [
    [50, "stream", [[582, "python3", 1542]]],
    [1250, "check", [[582, "python3", 1542]]],
  ]);
  assert.deepEqual(r.hung, []);
  await advance(1250);
  assert.equal(r.hung.length, 1);
  assert.match(r.hung[0], /printed no row for 1250 ms after the one-shot query listed 1 process \(pid 582\)/);
  r.s.dispose();

  const ok = sampler(() => listed);
  ok.s.lines([header, row]);
  await advance(1300);
  for (const stamp of ["15:11:05.300", "15:11:06.301", "15:11:07.302"]) {
    ok.s.lines([row.replace("15:11:03.166", stamp)]); // the first late, but within the period plus the margin of the check
    await advance(1000);
  }
  assert.deepEqual(ok.hung, []);
  assert.deepEqual(
    ok.got.map((g) => g.from),
    ["stream", "check", "stream", "stream", "stream"],
  );
  ok.s.dispose();
});

test("AppsSampler: a failed check leaves the empty sample with the failure as a problem; a row during the check wins over its answer", async (t) => {
  const advance = clock(t);
  const failed = sampler(() => ({ kind: "failed", message: "nvidia-smi timed out after 5000 ms" }));
  failed.s.lines(capture("compute-apps-timestamp-none.csv"));
  await advance(300);
  assert.deepEqual(
    failed.got.map((g) => g.sample),
    [{ apps: [], problems: ["Process list unavailable: nvidia-smi timed out after 5000 ms"] }],
  );
  failed.s.dispose();

  const [header, row] = capture("compute-apps-timestamp-lms1000.csv");
  let answer: (c: AppsCheck) => void = () => undefined;
  const slow = sampler(() => new Promise<AppsCheck>((res) => (answer = res)));
  slow.s.lines([header]);
  await advance(260); // the check is asked at 250 ms
  assert.equal(slow.s.checks, 1);
  slow.s.lines([row]);
  answer(EMPTY);
  await advance(100);
  assert.deepEqual(
    slow.got.map((g) => [g.from, pidsMiB(g.sample)]),
    [["stream", [[582, "python3", 1542]]]],
    "the row's sample only: the check's 'none' is ignored",
  );
  slow.s.dispose();
});

// ---- AppsStream against the fake nvidia-smi (real time): it prints like the real driver.

test("fake nvidia-smi, busy and idle: samples from one long-lived nvidia-smi; idle samples are empty lists", async () => {
  for (const [mode, want] of [
    ["busy", [[582, "python3"]]],
    ["idle", []],
  ] as const) {
    const { s, samples } = apps({ FAKE_NVIDIA_SMI_MODE: mode });
    s.start();
    await until(() => samples().length >= 3, `3 ${mode} samples`);
    const pid = s.pid;
    assert.ok(pid);
    for (const x of samples())
      assert.deepEqual(
        x.apps.map((a) => [a.pid, a.processName]),
        want,
      );
    await s.stop();
    assert.throws(() => process.kill(pid, 0), /ESRCH/, "nvidia-smi has exited");
  }
});

test("fake nvidia-smi, die-after-2: the process stream is restarted with a growing back-off", async () => {
  const { s, events, samples } = apps({ FAKE_NVIDIA_SMI_MODE: "die-after-2" });
  s.start();
  await until(() => events.filter((e) => e.kind === "fault").length >= 3, "3 faults");
  await s.stop();
  const faults = events.flatMap((e) => (e.kind === "fault" ? [e] : []));
  assert.match(faults[0].message, /process stream ended \(exit 255\)/);
  assert.ok(samples().length >= 2, "samples before each death");
  assert.deepEqual(
    faults.slice(0, 3).map((f) => f.retryInMs),
    [50, 50, 50],
    "a stream that delivered resets the back-off",
  );
});

test("fake nvidia-smi, hang (prints nothing at all): killed after period + timeout, retried with back-off 50, 100, 200 ms", async () => {
  const s = new AppsStream({
    path: FAKE,
    periodMs: 100,
    timeoutMs: 200,
    env: { FAKE_NVIDIA_SMI_MODE: "hang" },
    backoffInitialMs: 50,
    backoffMaxMs: 400,
  });
  const faults: string[] = [];
  const retries: number[] = [];
  s.on((e) => {
    if (e.kind === "fault") {
      faults.push(e.message);
      retries.push(e.retryInMs);
    }
  });
  s.start();
  await until(() => faults.length >= 3, "3 faults", 20_000);
  await s.stop();
  assert.deepEqual(retries.slice(0, 3), [50, 100, 200]);
  assert.match(faults[0], /printed nothing for 300 ms/);
});

test("a stream that prints its header and then nothing while the one-shot query lists a process: the check's list, then hung, restarted", async () => {
  const silent = join(tmp, "silent-smi");
  writeFileSync(
    silent,
    `#!/bin/sh\ncase " $* " in *" -lms "*) echo "timestamp, gpu_uuid, gpu_bus_id, pid, process_name, used_gpu_memory [MiB]"; exec sleep 30;; esac\nexec ${JSON.stringify(FAKE)} "$@"\n`,
  );
  chmodSync(silent, 0o755);
  const s = new AppsStream({
    path: silent,
    periodMs: 100,
    timeoutMs: 3000,
    env: { FAKE_NVIDIA_SMI_MODE: "busy" },
    backoffInitialMs: 50,
    backoffMaxMs: 400,
  });
  const events: AppsEvent[] = [];
  s.on((e) => events.push(e));
  s.start();
  await until(() => events.some((e) => e.kind === "fault"), "a fault", 20_000);
  const first = events.findIndex((e) => e.kind === "fault");
  const before = events.slice(0, first);
  assert.deepEqual(
    before.map((e) => (e.kind === "sample" ? e.sample.apps.map((a) => a.pid) : e.kind)),
    [[582]],
    "the check's list, once",
  );
  const fault = events[first];
  assert.ok(fault.kind === "fault");
  assert.match(
    fault.message,
    /printed no row for 350 ms after the one-shot query listed 1 process \(pid 582\) and was stopped/,
  );
  await until(
    () => events.filter((e) => e.kind === "fault").length >= 2,
    "the restarted stream found hung too",
    20_000,
  );
  assert.equal(s.isRunning, true);
  await s.stop();
});

test("an nvidia-smi without the timestamp field (exit 2): unsupported, the stream stops; GpuStream falls back to the per-tick query", async () => {
  const env = { FAKE_NVIDIA_SMI_MODE: "busy,notimestamp" };
  const { s, events } = apps(env);
  s.start();
  await until(() => events.some((e) => e.kind === "unsupported"), "unsupported", 20_000);
  assert.equal(s.isRunning, false);
  assert.equal(s.pid, undefined);
  const g = new GpuStream({ path: FAKE, intervalMs: 100, timeoutMs: 300, processesEvery: 3, env });
  const ge: StreamEvent[] = [];
  g.on((e) => ge.push(e));
  g.start();
  await until(() => ge.filter((e) => e.kind === "processes").length >= 3, "3 process lists by query", 20_000);
  assert.deepEqual(
    ge.flatMap((e) => (e.kind === "processes" ? [e.processes.apps.map((a) => a.pid)] : [])).at(-1),
    [582],
  );
  assert.equal(g.appsPid, undefined, "no process stream after it proved unsupported");
  await g.stop();
});

test("GpuStream with the process stream: process lists arrive with no per-tick query; stop ends both processes", async () => {
  const g = new GpuStream({
    path: FAKE,
    intervalMs: 100,
    timeoutMs: 2000,
    processesEvery: 3,
    env: { FAKE_NVIDIA_SMI_MODE: "busy" },
  });
  const ge: StreamEvent[] = [];
  g.on((e) => ge.push(e));
  let queries = 0;
  const original = g.refreshProcesses.bind(g);
  g.refreshProcesses = () => {
    queries++;
    return original();
  };
  g.start();
  await until(
    () => ge.filter((e) => e.kind === "processes").length >= 4 && g.appsPid !== undefined,
    "4 streamed process lists",
  );
  const appsPid = g.appsPid as number;
  const lists = ge.flatMap((e) => (e.kind === "processes" ? [e.processes] : []));
  assert.deepEqual(
    lists[0].apps.map((a) => [a.pid, a.processName, a.usedMemoryMiB]),
    [[582, "python3", 3380]],
  );
  assert.equal(queries, 0, "no fresh nvidia-smi for the process list");
  await g.stop();
  assert.throws(() => process.kill(appsPid, 0), /ESRCH/, "the process stream's nvidia-smi has exited");
});

test("the earlier capture without the timestamp field (stream-apps-lms1000.txt): the header once, then bare rows, which is why the rows carry the timestamp now", () => {
  const lines = readFileSync(join(H100, "stream-apps-lms1000.txt"), "utf8").split("\n").filter(Boolean);
  assert.equal(lines.length, 32, "30 s of -lms 1000 with one process holding memory: a header and 31 rows");
  assert.equal(lines.filter(isAppsHeader).length, 1);
  assert.equal(lines.filter((l) => rowTimestamp(l) !== undefined).length, 0);
});

function apps(env: Record<string, string>, periodMs = 100) {
  const s = new AppsStream({ path: FAKE, periodMs, timeoutMs: 1500, env, backoffInitialMs: 50, backoffMaxMs: 400 });
  const events: AppsEvent[] = [];
  s.on((e) => events.push(e));
  return { s, events, samples: () => events.flatMap((e) => (e.kind === "sample" ? [e.sample] : [])) };
}
