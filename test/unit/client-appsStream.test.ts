// The streamed process list (client/src/gpu/appsStream.ts, issue 45 item 6): samples delimited by
// the CSV header, against the fake nvidia-smi's looping process query; restart with back-off; an
// nvidia-smi that prints the header once falls back to the per-tick query (stream.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AppsAssembler, type AppsEvent, AppsStream, isAppsHeader, streamAppsArgs } from "../../client/src/gpu/appsStream";
import { GpuStream, type StreamEvent } from "../../client/src/gpu/stream";
import { QUERY_APPS_FIELDS } from "../../common/src/gpu/nvidiaSmi";

const ROOT = join(__dirname, "..", "..");
const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const HEADER = readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_apps_units.csv"), "utf8").split("\n")[0];
const ROW = readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_apps_nounits.csv"), "utf8").trim();

async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const apps = (env: Record<string, string>, periodMs = 100) => {
  const s = new AppsStream({ path: FAKE, periodMs, timeoutMs: 1500, env, backoffInitialMs: 50, backoffMaxMs: 400 });
  const events: AppsEvent[] = [];
  s.on((e) => events.push(e));
  return { s, events, samples: () => events.flatMap((e) => (e.kind === "sample" ? [e.sample] : [])) };
};

test("the process stream keeps the CSV header (the sample delimiter) and loops with -lms", () => {
  assert.deepEqual(streamAppsArgs(5000), [`--query-compute-apps=${QUERY_APPS_FIELDS.join(",")}`, "--format=csv,nounits", "-lms", "5000"]);
  assert.equal(isAppsHeader(HEADER), true);
  assert.equal(isAppsHeader(ROW), false);
});

test("AppsAssembler: a header closes the sample; an empty sample is 'no processes'; lines before the first header are dropped", () => {
  const a = new AppsAssembler();
  assert.equal(a.push(ROW), undefined, "before any header");
  assert.equal(a.settle(), undefined);
  assert.equal(a.push(HEADER), undefined);
  assert.equal(a.push(ROW), undefined);
  const first = a.push(HEADER);
  assert.deepEqual(first?.apps.map((x) => [x.pid, x.processName, x.usedMemoryMiB]), [[582, "python3", 3380]]);
  assert.deepEqual(a.settle(), { apps: [], problems: [] }, "header, then quiet: no processes now");
  assert.equal(a.settle(), undefined, "returned once");
  assert.deepEqual(a.push(HEADER), undefined, "the returned empty sample is not returned again");
  a.push("GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, 4242, /opt/evil");
  a.push("::warning::x|tool, 1024");
  const odd = a.settle();
  assert.deepEqual(odd?.apps.map((x) => [x.pid, x.processName, x.usedMemoryMiB]), [[4242, "/opt/evil\n::warning::x|tool", 1024]], "a process name with a newline spans lines");
  a.push(HEADER);
  a.push("not, a, row");
  assert.match(a.settle()?.problems[0] ?? "", /^Process query line 1: expected 5 fields, found 3/);
  assert.equal(a.headers, 4);
});

test("busy and idle: samples from one long-lived nvidia-smi; idle samples are empty lists", async () => {
  for (const [mode, want] of [["busy", [[582, "python3"]]], ["idle", []]] as const) {
    const { s, samples } = apps({ FAKE_NVIDIA_SMI_MODE: mode });
    s.start();
    await until(() => samples().length >= 3, `3 ${mode} samples`);
    const pid = s.pid;
    assert.ok(pid);
    for (const x of samples()) assert.deepEqual(x.apps.map((a) => [a.pid, a.processName]), want);
    await s.stop();
    assert.throws(() => process.kill(pid, 0), /ESRCH/, "nvidia-smi has exited");
  }
});

test("die-after-2: the process stream is restarted with a growing back-off", async () => {
  const { s, events, samples } = apps({ FAKE_NVIDIA_SMI_MODE: "die-after-2" });
  s.start();
  await until(() => events.filter((e) => e.kind === "fault").length >= 3, "3 faults");
  await s.stop();
  const faults = events.flatMap((e) => (e.kind === "fault" ? [e] : []));
  assert.match(faults[0].message, /process stream ended \(exit 255\)/);
  assert.ok(samples().length >= 2, "samples before each death");
  assert.deepEqual(faults.slice(0, 3).map((f) => f.retryInMs), [50, 50, 50], "a stream that delivered resets the back-off");
});

test("hang: no sample within period + timeout: killed, retried with back-off 50, 100, 200 ms", async () => {
  const s = new AppsStream({ path: FAKE, periodMs: 100, timeoutMs: 200, env: { FAKE_NVIDIA_SMI_MODE: "hang" }, backoffInitialMs: 50, backoffMaxMs: 400 });
  const faults: number[] = [];
  s.on((e) => { if (e.kind === "fault") faults.push(e.retryInMs); });
  s.start();
  await until(() => faults.length >= 3, "3 faults", 20_000);
  await s.stop();
  assert.deepEqual(faults.slice(0, 3), [50, 100, 200]);
});

test("header printed once: unsupported, the stream stops; GpuStream falls back to the per-tick query", async () => {
  const { s, events } = apps({ FAKE_NVIDIA_SMI_MODE: "busy", FAKE_NVIDIA_SMI_APPS_HEADER_ONCE: "1" });
  s.start();
  await until(() => events.some((e) => e.kind === "unsupported"), "unsupported", 20_000);
  assert.equal(s.isRunning, false);
  assert.equal(s.pid, undefined);
  const g = new GpuStream({ path: FAKE, intervalMs: 100, timeoutMs: 300, processesEvery: 3, env: { FAKE_NVIDIA_SMI_MODE: "busy", FAKE_NVIDIA_SMI_APPS_HEADER_ONCE: "1" } });
  const ge: StreamEvent[] = [];
  g.on((e) => ge.push(e));
  g.start();
  await until(() => ge.filter((e) => e.kind === "processes").length >= 3, "3 process lists by query", 20_000);
  assert.equal(g.appsPid, undefined, "no process stream after it proved unsupported");
  await g.stop();
});

test("GpuStream with the process stream: process lists arrive with no per-tick query; stop ends both processes", async () => {
  const g = new GpuStream({ path: FAKE, intervalMs: 100, timeoutMs: 2000, processesEvery: 3, env: { FAKE_NVIDIA_SMI_MODE: "busy" } });
  const ge: StreamEvent[] = [];
  g.on((e) => ge.push(e));
  let queries = 0;
  const original = g.refreshProcesses.bind(g);
  g.refreshProcesses = () => { queries++; return original(); };
  g.start();
  await until(() => ge.filter((e) => e.kind === "processes").length >= 4 && g.appsPid !== undefined, "4 streamed process lists");
  const appsPid = g.appsPid as number;
  const lists = ge.flatMap((e) => (e.kind === "processes" ? [e.processes] : []));
  assert.deepEqual(lists[0].apps.map((a) => [a.pid, a.processName, a.usedMemoryMiB]), [[582, "python3", 3380]]);
  assert.equal(queries, 0, "no fresh nvidia-smi for the process list");
  await g.stop();
  assert.throws(() => process.kill(appsPid, 0), /ESRCH/, "the process stream's nvidia-smi has exited");
});

test("real driver 580.159.04 (H100, test/fixtures/nvidia-smi/h100-stream): -lms prints the process query's header once, then bare rows, so samples cannot be delimited and the stream gives up to the polled query", () => {
  const lines = readFileSync(join(__dirname, "..", "fixtures", "nvidia-smi", "h100-stream", "stream-apps-lms1000.txt"), "utf8").split("\n").filter(Boolean);
  assert.equal(lines.length, 32, "30 s of -lms 1000 with one process holding memory: a header and 31 rows");
  assert.equal(lines.filter(isAppsHeader).length, 1);
  const a = new AppsAssembler();
  const finished = lines.map((l) => a.push(l)).filter(Boolean);
  assert.deepEqual([a.headers, finished.length], [1, 0], "one header: no sample ever closes, which AppsStream reads as 'header printed only once' (unsupported)");
  // The -l 1 form is the same; every row names the holder process.
  const l1 = readFileSync(join(__dirname, "..", "fixtures", "nvidia-smi", "h100-stream", "stream-apps-l1.txt"), "utf8").split("\n").filter(Boolean);
  assert.deepEqual([l1.filter(isAppsHeader).length, l1.length], [0, 32], "-l 1 with noheader: 32 bare rows");
});
