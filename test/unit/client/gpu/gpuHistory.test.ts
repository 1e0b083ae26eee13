// The GPU history ring (client/src/gpu/history.ts, pure): bounded per GPU whatever runs through it,
// oldest dropped, snapshots in time order, and the shape the History panel is sent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GpuHistory, historyCapacity, Ring, timeAxis } from "../../../../client/src/gpu/history";
import type { Gpu } from "../../../../common/src/gpu/nvidiaSmi";

const UUID0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const UUID1 = "GPU-11111111-2222-3333-4444-555555555555";

function gpu(index: number, uuid: string, util: number, used: number): Gpu {
  return {
    index,
    uuid,
    name: "NVIDIA H200",
    memoryTotalMiB: 143771,
    memoryUsedMiB: used,
    utilizationGpuPercent: util,
  } as Gpu;
}

test("historyCapacity: minutes * 60 / interval samples, clamped", () => {
  assert.equal(historyCapacity(10, 1000), 600);
  assert.equal(historyCapacity(10, 250), 2400);
  assert.equal(historyCapacity(1, 7000), 9);
  assert.equal(historyCapacity(Number.NaN, 1000), 600);
  assert.equal(historyCapacity(1440, 250), 100_000);
});

test("Ring keeps the newest `capacity` entries, oldest first", () => {
  const r = new Ring<number>(5);
  for (let i = 0; i < 1003; i++) r.push(i);
  assert.equal(r.length, 5);
  assert.deepEqual(r.toArray(), [998, 999, 1000, 1001, 1002]);
  assert.equal(r.first(), 998);
  assert.equal(r.last(), 1002);
  assert.throws(() => new Ring(0), RangeError);
});

test("GpuHistory: far more ticks than capacity stay at capacity per GPU, oldest dropped, time order", () => {
  const capacity = historyCapacity(10, 1000);
  const h = new GpuHistory(capacity);
  const t0 = 1_700_000_000_000;
  const ticks = 24 * 3600; // a day at 1 s
  for (let i = 0; i < ticks; i++)
    h.push({ at: t0 + i * 1000, gpus: [gpu(0, UUID0, i % 101, i), gpu(1, UUID1, 100 - (i % 101), 2 * i)] });
  assert.equal(h.pushes, ticks);
  assert.equal(h.length, capacity);
  const snap = h.snapshot();
  assert.equal(snap.capacity, 600);
  assert.deepEqual(
    snap.gpus.map((g) => [g.index, g.uuid, g.at.length, g.utilizationPercent.length, g.memoryUsedMiB.length]),
    [
      [0, UUID0, 600, 600, 600],
      [1, UUID1, 600, 600, 600],
    ],
  );
  const g0 = snap.gpus[0];
  // The oldest kept is tick `ticks - capacity`; everything before was dropped.
  assert.equal(g0.at[0], t0 + (ticks - capacity) * 1000);
  assert.equal(g0.at[capacity - 1], t0 + (ticks - 1) * 1000);
  for (let i = 1; i < g0.at.length; i++) assert.ok(g0.at[i] > g0.at[i - 1], "ascending time");
  assert.deepEqual(g0.memoryUsedMiB.slice(0, 3), [ticks - capacity, ticks - capacity + 1, ticks - capacity + 2]);
  assert.equal(snap.gpus[1].memoryUsedMiB[capacity - 1], 2 * (ticks - 1));
});

test("GpuHistory snapshot shape: plain JSON (what the panel is posted), copies, GPUs in index order", () => {
  const h = new GpuHistory(3);
  h.push({ at: 1000, gpus: [gpu(1, UUID1, 5, 50), gpu(0, UUID0, 7, 70)] });
  h.push({
    at: 2000,
    gpus: [gpu(0, UUID0, 8, 80), { ...gpu(1, UUID1, 0, 0), utilizationGpuPercent: null, memoryUsedMiB: null }],
  });
  h.push({ at: 2500, gpus: [] }); // a tick without GPUs is ignored
  const snap = h.snapshot();
  assert.deepEqual(JSON.parse(JSON.stringify(snap)), {
    capacity: 3,
    gpus: [
      {
        uuid: UUID0,
        index: 0,
        name: "NVIDIA H200",
        memoryTotalMiB: 143771,
        at: [1000, 2000],
        utilizationPercent: [7, 8],
        memoryUsedMiB: [70, 80],
      },
      {
        uuid: UUID1,
        index: 1,
        name: "NVIDIA H200",
        memoryTotalMiB: 143771,
        at: [1000, 2000],
        utilizationPercent: [5, null],
        memoryUsedMiB: [50, null],
      },
    ],
  });
  snap.gpus[0].at.push(9); // a copy: the history is untouched
  assert.equal(h.snapshot().gpus[0].at.length, 2);
});

test("GpuHistory: resize keeps the newest samples; a GPU gone for a whole window is dropped", () => {
  const h = new GpuHistory(4);
  for (let i = 0; i < 4; i++) h.push({ at: i, gpus: [gpu(0, UUID0, i, i), gpu(1, UUID1, i, i)] });
  h.resize(2);
  assert.deepEqual(
    h.snapshot().gpus.map((g) => g.at),
    [
      [2, 3],
      [2, 3],
    ],
  );
  // GPU 1 disappears: kept while its samples are within the window, dropped after.
  h.push({ at: 4, gpus: [gpu(0, UUID0, 4, 4)] });
  assert.equal(h.snapshot().gpus.length, 2);
  for (let i = 5; i < 10; i++) h.push({ at: i, gpus: [gpu(0, UUID0, i, i)] });
  assert.deepEqual(
    h.snapshot().gpus.map((g) => g.uuid),
    [UUID0],
  );
  h.clear();
  assert.deepEqual(h.snapshot().gpus, []);
});

test("GpuHistory.latest: each GPU's newest sample in index order, a copy, without copying the rings (issue 18 item 4)", () => {
  const h = new GpuHistory(1000);
  for (let i = 0; i < 1000; i++) h.push({ at: i, gpus: [gpu(1, UUID1, i % 100, i), gpu(0, UUID0, 1, 2)] });
  h.push({ at: 5000, gpus: [gpu(0, UUID0, 9, 99)] }); // GPU 1 missing from this tick: its newest is older
  const latest = h.latest();
  assert.deepEqual(latest, [
    { uuid: UUID0, index: 0, sample: { at: 5000, utilizationPercent: 9, memoryUsedMiB: 99 } },
    { uuid: UUID1, index: 1, sample: { at: 999, utilizationPercent: 99, memoryUsedMiB: 999 } },
  ]);
  latest[0].sample.at = 1;
  assert.equal(h.latest()[0].sample.at, 5000, "a copy");
  assert.deepEqual(new GpuHistory(3).latest(), []);
  // What the panel appends is what the snapshot's newest column says.
  const snap = h.snapshot();
  assert.deepEqual(
    h.latest().map((g) => g.sample.at),
    snap.gpus.map((g) => g.at[g.at.length - 1]),
  );
});

test("timeAxis: the whole configured window ending now, ticks in whole minutes/seconds back from now", () => {
  const now = 1_764_620_421_500; // ms; a half second, as the streamed ticks have
  const ten = timeAxis(10, now);
  assert.equal(ten.max, now / 1000);
  assert.equal(ten.max - ten.min, 600, "10 min, not the span of the samples");
  assert.deepEqual(ten.labels, ["-10 min", "-8 min", "-6 min", "-4 min", "-2 min", "now"]);
  assert.deepEqual(
    ten.ticks.map((t) => now / 1000 - t),
    [600, 480, 360, 240, 120, 0],
  );
  assert.deepEqual(timeAxis(1, now).labels, ["-1 min", "-50 s", "-40 s", "-30 s", "-20 s", "-10 s", "now"]);
  assert.deepEqual(timeAxis(5, now).labels, ["-5 min", "-4 min", "-3 min", "-2 min", "-1 min", "now"]);
  assert.deepEqual(timeAxis(1440, now).labels, ["-24 h", "-18 h", "-12 h", "-6 h", "now"]);
  assert.equal(
    timeAxis(Number.NaN, now).max - timeAxis(Number.NaN, now).min,
    600,
    "a bad setting reads as the default 10 min",
  );
});
