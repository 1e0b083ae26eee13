// The poller behind the GPU view: polls only while active, never overlaps, refresh joins a run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Poller, type Timers } from "../../../../client/src/gpu/poller";

/** Manual timers: nothing fires until the test says so. */
function manualTimers() {
  let next = 1;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const id = next++;
      pending.set(id, { fn, ms });
      return id;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  return {
    timers,
    pending,
    /** Fires every pending timer once. */
    fire() {
      const due = [...pending.entries()];
      pending.clear();
      for (const [, t] of due) t.fn();
    },
  };
}

/** A job the test finishes by hand; counts calls and concurrent runs. */
function manualJob() {
  const s = { calls: 0, concurrent: 0, maxConcurrent: 0, finish: [] as (() => void)[], signals: [] as AbortSignal[] };
  const job = (signal: AbortSignal) => {
    s.calls++;
    s.concurrent++;
    s.maxConcurrent = Math.max(s.maxConcurrent, s.concurrent);
    s.signals.push(signal);
    return new Promise<void>((resolve) =>
      s.finish.push(() => {
        s.concurrent--;
        resolve();
      }),
    );
  };
  return { s, job };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

test("inactive: no polling; refresh() still runs once", async () => {
  const t = manualTimers();
  const { s, job } = manualJob();
  const p = new Poller(job, () => 2000, undefined, t.timers);
  await tick();
  assert.equal(s.calls, 0);
  const done = p.refresh();
  assert.equal(s.calls, 1);
  s.finish.shift()!();
  await done;
  assert.equal(t.pending.size, 0, "nothing scheduled while inactive");
});

test("active: runs at once, then every interval after each run ends", async () => {
  const t = manualTimers();
  const { s, job } = manualJob();
  const p = new Poller(job, () => 2000, undefined, t.timers);
  p.setActive(true);
  assert.equal(s.calls, 1);
  assert.equal(t.pending.size, 0, "no timer while running");
  s.finish.shift()!();
  await tick();
  assert.deepEqual(
    [...t.pending.values()].map((x) => x.ms),
    [2000],
  );
  t.fire();
  assert.equal(s.calls, 2);
  s.finish.shift()!();
  await tick();
  assert.equal(t.pending.size, 1);
  p.setActive(false);
  assert.equal(t.pending.size, 0, "hidden: timer cleared");
  p.dispose();
});

test("never overlapping: refresh() during a run joins it", async () => {
  const t = manualTimers();
  const { s, job } = manualJob();
  const p = new Poller(job, () => 1000, undefined, t.timers);
  p.setActive(true);
  const a = p.refresh();
  const b = p.refresh();
  assert.equal(s.calls, 1);
  assert.equal(p.isRunning, true);
  s.finish.shift()!();
  await Promise.all([a, b]);
  assert.equal(s.maxConcurrent, 1);
  // a refresh while a timer is pending replaces the timer
  assert.equal(t.pending.size, 1);
  const c = p.refresh();
  assert.equal(t.pending.size, 0);
  s.finish.shift()!();
  await c;
  assert.equal(t.pending.size, 1);
  assert.equal(s.maxConcurrent, 1);
  p.dispose();
});

test("re-activating while a run is in progress does not start a second one", async () => {
  const t = manualTimers();
  const { s, job } = manualJob();
  const p = new Poller(job, () => 1000, undefined, t.timers);
  p.setActive(true);
  p.setActive(false);
  p.setActive(true);
  assert.equal(s.calls, 1);
  s.finish.shift()!();
  await tick();
  assert.equal(t.pending.size, 1);
  p.dispose();
});

test("a rejecting job is reported and polling continues", async () => {
  const t = manualTimers();
  const errors: unknown[] = [];
  const p = new Poller(
    () => Promise.reject(new Error("boom")),
    () => 500,
    (e) => errors.push(e),
    t.timers,
  );
  p.setActive(true);
  await tick();
  assert.equal(errors.length, 1);
  assert.equal(t.pending.size, 1);
  p.dispose();
  assert.equal(t.pending.size, 0);
});

test("dispose aborts the running job and stops for good", async () => {
  const t = manualTimers();
  const { s, job } = manualJob();
  const p = new Poller(job, () => 500, undefined, t.timers);
  p.setActive(true);
  p.dispose();
  assert.equal(s.signals[0].aborted, true);
  s.finish.shift()!();
  await tick();
  assert.equal(t.pending.size, 0);
  await p.refresh();
  p.setActive(true);
  assert.equal(s.calls, 1);
});

test("with real timers: polls repeatedly while active, stops when inactive", async () => {
  let calls = 0;
  const p = new Poller(
    async () => void calls++,
    () => 5,
  );
  p.setActive(true);
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  };
  await until(() => calls >= 3);
  assert.ok(calls >= 3);
  p.setActive(false);
  await until(() => !p.isRunning);
  const stopped = calls;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(calls, stopped);
  p.dispose();
});
