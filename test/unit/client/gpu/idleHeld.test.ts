// Idle-held detection (client/src/gpu/idleHeld.ts, issue 45 item 4) on sample sequences: a process
// holding memory while its GPU does nothing for the threshold is flagged; activity, a gap in the
// samples, the process leaving or freeing its memory start the count again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gpuIdle, idleHeldLabel, IdleHeldTracker, type IdleSample } from "../../../../client/src/gpu/idleHeld";

const G0 = "GPU-AAAAAAAA-0000-0000-0000-000000000000";
const G1 = "GPU-BBBBBBBB-1111-1111-1111-111111111111";
const MIN = 60_000;

/** A sample every `stepMs` from `t0` with GPU 0's utilisation `util0[i]` (GPU 1 busy at 50 %), pid 100 on GPU 0 and pid 200 on GPU 1. */
function samples(util0: (number | null)[], t0 = 0, stepMs = 5000, sm0?: (number | undefined)[]): IdleSample[] {
  return util0.map((u, i) => ({
    at: t0 + i * stepMs,
    gpus: [
      { uuid: G0, utilizationGpuPercent: u, smActivityPercent: sm0?.[i] },
      { uuid: G1, utilizationGpuPercent: 50 },
    ],
    apps: [
      { pid: 100, gpuUuid: G0, usedMemoryMiB: 3380 },
      { pid: 200, gpuUuid: G1, usedMemoryMiB: 1024 },
    ],
  }));
}
const idleFor = (minutes: number, stepMs = 5000) => Array<number>(Math.floor((minutes * MIN) / stepMs) + 1).fill(0);

test("gpuIdle: 0 % and no SM activity is idle; any utilisation, unknown utilisation or SM above 1 % is not", () => {
  assert.equal(gpuIdle({ uuid: G0, utilizationGpuPercent: 0 }), true);
  assert.equal(gpuIdle({ uuid: G0, utilizationGpuPercent: 0, smActivityPercent: 0.5 }), true);
  assert.equal(gpuIdle({ uuid: G0, utilizationGpuPercent: 0, smActivityPercent: 3 }), false);
  assert.equal(gpuIdle({ uuid: G0, utilizationGpuPercent: 1 }), false);
  assert.equal(gpuIdle({ uuid: G0, utilizationGpuPercent: null }), false);
});

test("10 minutes at 0 % with memory held: flagged at 10 min, not at 9:55; the busy GPU's process never", () => {
  const t = new IdleHeldTracker(10 * MIN);
  const seq = samples(idleFor(10));
  for (const s of seq.slice(0, -1)) t.observe(s);
  assert.equal(t.flagged(100, G0, seq.at(-2)!.at), undefined, "9 min 55 s");
  t.observe(seq.at(-1)!);
  const h = t.flagged(100, G0.toLowerCase(), seq.at(-1)!.at);
  assert.deepEqual(h, { pid: 100, gpuUuid: G0.toLowerCase(), idleSince: 0, usedMemoryMiB: 3380 });
  assert.equal(idleHeldLabel(h!, 10 * MIN), "idle 10 min");
  assert.equal(t.flagged(200, G1, seq.at(-1)!.at), undefined);
  assert.deepEqual(
    t.all(seq.at(-1)!.at).map((x) => x.pid),
    [100],
  );
});

test("one busy sample in the middle starts the count again", () => {
  const t = new IdleHeldTracker(10 * MIN);
  const util = idleFor(12);
  util[60] = 7; // at 5 min
  const seq = samples(util);
  for (const s of seq) t.observe(s);
  assert.equal(t.flagged(100, G0, seq.at(-1)!.at), undefined, "idle only 7 min since the busy sample");
  assert.equal(t.all(seq.at(-1)!.at).length, 0);
});

test("SM activity above 1 % keeps a 0 % GPU from counting as idle (dmon sees work nvidia-smi's utilisation missed)", () => {
  const t = new IdleHeldTracker(1 * MIN);
  const util = idleFor(2);
  const seq = samples(
    util,
    0,
    5000,
    util.map(() => 4),
  );
  for (const s of seq) t.observe(s);
  assert.equal(t.flagged(100, G0, seq.at(-1)!.at), undefined);
});

test("a gap over 60 s (view hidden) resets: nothing is known about that time", () => {
  const t = new IdleHeldTracker(10 * MIN);
  for (const s of samples(idleFor(6))) t.observe(s);
  const later = samples(idleFor(5), 6 * MIN + 2 * MIN);
  for (const s of later) t.observe(s);
  assert.equal(t.flagged(100, G0, later.at(-1)!.at), undefined, "6 + 5 min idle, but 2 unseen minutes between");
});

test("a process that leaves, or frees its memory, is forgotten; threshold 0 flags nothing", () => {
  const t = new IdleHeldTracker(1 * MIN);
  const seq = samples(idleFor(2));
  for (const s of seq) t.observe(s);
  assert.ok(t.flagged(100, G0, seq.at(-1)!.at));
  const gone = { ...seq.at(-1)!, at: seq.at(-1)!.at + 5000, apps: [] };
  t.observe(gone);
  assert.equal(t.flagged(100, G0, gone.at), undefined);
  for (const s of samples(idleFor(2), gone.at + 5000))
    t.observe({ ...s, apps: [{ pid: 100, gpuUuid: G0, usedMemoryMiB: 0 }] });
  assert.equal(t.all(gone.at + 3 * MIN).length, 0, "0 MiB held is not holding");
  t.setThreshold(0);
  assert.equal(t.flagged(100, G0, Number.MAX_SAFE_INTEGER), undefined);
});
