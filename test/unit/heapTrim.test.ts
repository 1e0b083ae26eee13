// The language server's idle heap trim (server/src/heapTrim.ts): one memory-reducing collection
// after a burst of lints, never while work keeps coming, nothing without V8's `gc`; and, in a real
// Node.js process, that such a collection gives pooled heap pages back (what the trim is for).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { IdleHeapTrim, IDLE_TRIM_MS, type GcFunction, type TrimReport } from "../../server/src/heapTrim";

/** Timers driven by hand: `fire()` runs the pending callback. */
function manualTimers() {
  let next = 1;
  const pending = new Map<number, { f: () => void; ms: number }>();
  return {
    pending,
    setTimeout(f: () => void, ms: number) { const id = next++; pending.set(id, { f, ms }); return { id, unref() { return this; } }; },
    clearTimeout(t: unknown) { pending.delete((t as { id: number }).id); },
    fire() { const [[id, { f }]] = [...pending]; pending.delete(id); f(); },
  };
}

test("one last-resort collection after the idle time, re-armed by every burst of work", () => {
  const calls: unknown[] = [];
  const reports: TrimReport[] = [];
  const timers = manualTimers();
  let rss = 300 * 2 ** 20;
  const gc: GcFunction = (o) => { calls.push(o); rss = 150 * 2 ** 20; };
  const trim = new IdleHeapTrim(gc, (r) => reports.push(r), IDLE_TRIM_MS, timers, () => rss);
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
  const trim = new IdleHeapTrim(undefined, () => {}, 10, timers, () => 0);
  assert.equal(trim.enabled, false);
  trim.afterWork();
  assert.equal(timers.pending.size, 0);
});

test("in a real Node.js process a last-resort collection gives the pooled heap pages back", () => {
  // Rounds of 80 MiB of objects, each dropped before the next: V8's own full collections free their
  // pages while the process runs, and since V8 12 (Node.js 22, 24) it keeps them pooled (Node.js 20
  // unmaps them). Then a plain full collection, then a last-resort one: after it, little beyond the
  // heap stays resident, whatever the version.
  const script = `
    const beyondHeap = () => process.memoryUsage.rss() - process.memoryUsage().heapTotal;
    for (let round = 0; round < 4; round++) {
      let keep = [];
      for (let i = 0; i < 10; i++) keep.push(Array.from({ length: 100000 }, (_, j) => ({ j, s: "x" + j })));
      keep = null;
    }
    gc();
    const plain = beyondHeap();
    gc({ type: "major", execution: "sync", flavor: "last-resort" });
    const last = beyondHeap();
    process.stdout.write(JSON.stringify({ plain, last }));`;
  const r = spawnSync(process.execPath, ["--max-semi-space-size=1", "--expose-gc", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const { plain, last } = JSON.parse(r.stdout) as { plain: number; last: number };
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  // What stays is the node binary's pages (~40-47 MiB), libraries and malloc: measured 51-63 MiB.
  assert.ok(last < 100 * 2 ** 20, `RSS beyond the heap after a last-resort gc: ${mib(last)} MiB (after a plain gc ${mib(plain)} MiB)`);
  if (Number(process.versions.v8.split(".")[0]) >= 12) {
    assert.ok(plain - last > 60 * 2 ** 20, `pooled pages given back by the last-resort gc: ${mib(plain)} -> ${mib(last)} MiB`);
  }
});
