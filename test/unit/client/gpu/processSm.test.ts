// Per-process SM % (client/src/gpu/processSm.ts): one `nvidia-smi pmon -c 1 -s u` per interval
// while started, against the fake nvidia-smi's replay of the H100 capture with its own pids and
// GPUs (2 x H200, 8 x H200, `full`), its `nopmon` mode, and scripts that hang or print garbage; a
// failure is kept and not retried before the back-off; stopping asks nothing more.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessSmReader } from "../../../../client/src/gpu/processSm";
import type { ProcessSmSnapshot } from "../../../../client/src/gpu/pmon";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-pmon-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

function readerFor(
  mode: string,
  options: { path?: string; intervalMs?: number; retryAfterMs?: number; timeoutMs?: number; gpus?: number[] } = {},
) {
  const seen: ProcessSmSnapshot[] = [];
  const reader = new ProcessSmReader(
    () => ({
      path: options.path ?? FAKE,
      timeoutMs: options.timeoutMs ?? 5000,
      env: { FAKE_NVIDIA_SMI_MODE: mode },
      gpus: options.gpus ?? [0, 1],
    }),
    (s) => seen.push(s),
    { intervalMs: options.intervalMs ?? 60_000, retryAfterMs: options.retryAfterMs ?? 60_000 },
  );
  return { reader, seen };
}

function script(name: string, body: string): string {
  const p = join(tmp, name);
  writeFileSync(p, `#!/usr/bin/env node\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

test("2 x H200 (busy): the captured process on GPU 0 had no sample (GPU-Util 0 %); one call, then nothing until the interval", async () => {
  const { reader, seen } = readerFor("busy");
  assert.equal(reader.snapshot.state, "off");
  reader.start();
  assert.equal(reader.snapshot.state, "waiting");
  await until(() => seen.length === 1, "the first answer");
  assert.equal(reader.snapshot.state, "ok");
  assert.deepEqual([...reader.snapshot.sm], [["0:582", null]]);
  assert.equal(reader.callCount, 1);
  reader.stop();
  reader.start(); // the tab shown again at once: the answer is fresh, no second call
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(reader.callCount, 1);
  assert.equal(reader.snapshot.state, "ok", "the last answer is kept");
  reader.dispose();
});

test("8 x H200: the busy GPUs' last process reads the GPU's utilisation, the others no sample, joined by (GPU, pid); pmon reports on 4 GPUs a call, so the 6 GPUs with processes take 2 calls", async () => {
  const { reader, seen } = readerFor("x8", { gpus: [6, 0, 1, 2, 4, 5] });
  reader.start();
  await until(() => seen.length === 1, "the first answer");
  assert.equal(reader.callCount, 2);
  assert.deepEqual(Object.fromEntries(reader.snapshot.sm), {
    "0:3101": null,
    "0:3102": 97,
    "1:4410": 88,
    "2:582": 12,
    "4:5120": null,
    "4:5121": 54,
    "5:6001": 100,
    "6:7007": null,
  });
  reader.dispose();
});

test("full: GPU 0's matmuls read 99 %, as the capture's busy process; every interval one call while started, none once stopped", async () => {
  const { reader, seen } = readerFor("full", { intervalMs: 150 });
  reader.start();
  await until(() => seen.length >= 3, "three answers");
  assert.deepEqual([...reader.snapshot.sm], [["0:582", 99]]);
  reader.stop();
  await new Promise((r) => setTimeout(r, 100)); // a call in flight ends
  const calls = reader.callCount;
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(reader.callCount, calls, "stopped: no more calls");
  reader.dispose();
});

test("nopmon: failed once with nvidia-smi's words; not asked again within the back-off, even when started again", async () => {
  const { reader, seen } = readerFor("nopmon");
  reader.start();
  await until(() => seen.length === 1, "the failure");
  assert.equal(reader.snapshot.state, "failed");
  assert.match(reader.snapshot.note, /^nvidia-smi pmon failed: Invalid combination of input arguments\. .*exit 2/);
  assert.ok(
    reader.snapshot.retryAt !== undefined && reader.snapshot.retryAt - reader.snapshot.at >= 59_000,
    "asked again after the back-off",
  );
  reader.stop();
  reader.start();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(reader.callCount, 1, "no retry before the back-off");
  assert.equal(reader.snapshot.state, "failed", "the failure is kept");
  reader.dispose();
});

test("after the back-off it asks again; a hang is stopped at the limit; garbage is a failure, not an exception", async () => {
  const hang = script("hang", "setTimeout(() => {}, 60000);");
  const h = readerFor("busy", { path: hang, timeoutMs: 300, retryAfterMs: 200 });
  h.reader.start();
  await until(() => h.seen.length >= 2, "two timed-out answers");
  assert.equal(h.reader.snapshot.state, "failed");
  assert.match(h.reader.snapshot.note, /did not answer within 300 ms/);
  h.reader.dispose();
  const garbage = script("garbage", 'process.stdout.write("\\u0007\\u0008 nonsense\\n# what\\n");');
  const g = readerFor("busy", { path: garbage });
  g.reader.start();
  await until(() => g.seen.length === 1, "the garbage answer");
  assert.equal(g.reader.snapshot.state, "failed");
  assert.match(g.reader.snapshot.note, /^nvidia-smi pmon printed no process table/);
  g.reader.dispose();
});

test("no GPU holds a compute process: no pmon call, an empty answer", async () => {
  const { reader, seen } = readerFor("x8", { gpus: [] });
  reader.start();
  await until(() => seen.length === 1, "the answer");
  assert.equal(reader.callCount, 0);
  assert.equal(reader.snapshot.state, "ok");
  assert.equal(reader.snapshot.sm.size, 0);
  reader.dispose();
});

test("without -i the fake, as pmon -h says of the real one, reports only the first four GPUs: GPU 5's and 6's processes are missing", async () => {
  const { runNvidiaSmi } = await import("../../../../common/src/gpu/nvidiaSmi");
  const { pmonSnapshot, PMON_ARGS } = await import("../../../../client/src/gpu/pmon");
  const r = await runNvidiaSmi(FAKE, PMON_ARGS, { timeoutMs: 5000, env: { FAKE_NVIDIA_SMI_MODE: "x8" } });
  const gpus = [...pmonSnapshot(r, 0).sm.keys()].map((k) => Number(k.split(":")[0]));
  assert.ok(gpus.length > 0 && gpus.every((g) => g < 4), JSON.stringify(gpus));
});

test("a process on a GPU the last round did not ask about brings the next round forward, once per interval; not while stopped or after a failure", async () => {
  let gpus = [0];
  const seen: ProcessSmSnapshot[] = [];
  const reader = new ProcessSmReader(
    () => ({ path: FAKE, timeoutMs: 5000, env: { FAKE_NVIDIA_SMI_MODE: "busy" }, gpus }),
    (s) => seen.push(s),
    { intervalMs: 60_000, retryAfterMs: 60_000 },
  );
  reader.start();
  await until(() => seen.length === 1, "the first answer");
  assert.equal(reader.callCount, 1);
  reader.gpusChanged([0]); // nothing new: the round at the end of the interval will do
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(reader.callCount, 1);
  gpus = [0, 1];
  reader.gpusChanged(gpus); // GPU 1 gained a process: asked now, not in 60 s
  await until(() => seen.length === 2, "the early round");
  assert.equal(reader.callCount, 2);
  gpus = [0, 1, 2];
  reader.gpusChanged(gpus); // another new GPU within the same interval: it waits for the interval
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(reader.callCount, 2);
  reader.stop();
  reader.dispose();
  // Stopped (the tab hidden): never asked.
  const stopped = readerFor("busy", { gpus: [0] });
  stopped.reader.start();
  await until(() => stopped.seen.length === 1, "the first answer");
  stopped.reader.stop();
  stopped.reader.gpusChanged([0, 1]);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(stopped.reader.callCount, 1);
  stopped.reader.dispose();
  // pmon failed (its back-off runs): a new GPU does not ask again.
  const failing = readerFor("nopmon", { gpus: [0] });
  failing.reader.start();
  await until(() => failing.seen.length === 1, "the failure");
  assert.equal(failing.reader.snapshot.state, "failed");
  failing.reader.gpusChanged([0, 1]);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(failing.reader.callCount, 1);
  failing.reader.dispose();
});
