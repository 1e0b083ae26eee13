// The language server's idle heap trim (server/src/heapTrim.ts): one memory-reducing collection
// after a burst of lints, never while work keeps coming, nothing without V8's `gc`; with the real
// `gc`, the collection is made. What it gives back is the bench's figure (bench/heap-trim.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { IdleHeapTrim, IDLE_TRIM_MS, type GcFunction, type TrimReport } from "../../../server/src/heapTrim";

/** Timers driven by hand: `fire()` runs the pending callback. */
function manualTimers() {
  let next = 1;
  const pending = new Map<number, { f: () => void; ms: number }>();
  return {
    pending,
    setTimeout(f: () => void, ms: number) {
      const id = next++;
      pending.set(id, { f, ms });
      return {
        id,
        unref() {
          return this;
        },
      };
    },
    clearTimeout(t: unknown) {
      pending.delete((t as { id: number }).id);
    },
    fire() {
      const [[id, { f }]] = [...pending];
      pending.delete(id);
      f();
    },
  };
}

test("one last-resort collection after the idle time, re-armed by every burst of work", () => {
  const calls: unknown[] = [];
  const reports: TrimReport[] = [];
  const timers = manualTimers();
  let rss = 300 * 2 ** 20;
  const gc: GcFunction = (o) => {
    calls.push(o);
    rss = 150 * 2 ** 20;
  };
  const trim = new IdleHeapTrim(
    gc,
    (r) => reports.push(r),
    IDLE_TRIM_MS,
    timers,
    () => rss,
  );
  assert.equal(trim.enabled, true);
  trim.afterWork();
  trim.afterWork();
  trim.afterWork();
  assert.equal(timers.pending.size, 1, "each call replaces the pending trim: one timer, not three");
  assert.equal([...timers.pending.values()][0].ms, 2000);
  assert.equal(calls.length, 0, "nothing runs before the server is idle");
  timers.fire();
  assert.deepEqual(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  assert.equal(trim.trims, 1);
  assert.equal(reports.length, 1);
  assert.equal(reports[0].rssBeforeMiB, 300);
  assert.equal(reports[0].rssAfterMiB, 150);
  assert.equal(timers.pending.size, 0, "no further trim without further work");
  trim.afterWork();
  timers.fire();
  assert.equal(calls.length, 2, "the next burst gets its own trim");
});

test("without V8's gc (no --expose-gc) nothing is scheduled", () => {
  const timers = manualTimers();
  const trim = new IdleHeapTrim(
    undefined,
    () => {},
    10,
    timers,
    () => 0,
  );
  assert.equal(trim.enabled, false);
  trim.afterWork();
  assert.equal(timers.pending.size, 0);
});

test("with V8's real gc, the idle trim calls a last-resort collection and reports the RSS", async () => {
  // The behaviour only: how much RSS the collection gives back depends on the allocator and the
  // kernel, so that figure is measured by the bench (bench/heap-trim.mjs, in `npm run bench`'s
  // memory part), not asserted here (issue 46 item 10: the assertion failed now and then).
  v8.setFlagsFromString("--expose-gc");
  const realGc = runInNewContext("gc") as GcFunction;
  const calls: unknown[] = [];
  const report = await new Promise<TrimReport>((resolve) => {
    const trim = new IdleHeapTrim(
      (o) => {
        calls.push(o);
        return realGc(o);
      },
      resolve,
      1,
    );
    assert.equal(trim.enabled, true);
    trim.afterWork();
  });
  assert.deepEqual(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  assert.ok(report.rssBeforeMiB > 0 && report.rssAfterMiB > 0 && report.ms >= 0, JSON.stringify(report));
});
