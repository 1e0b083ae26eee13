/**
 * Gives the language server's freed heap pages back to the system once it is idle.
 *
 * Why (measured 2026-12-04, BENCHMARKS.md "Memory on Node.js 22 and 24"): since V8 12 (Node.js 22,
 * 24) a garbage collection keeps the V8 heap pages it frees in a pool for reuse (`node --trace-gc`
 * prints it: "pooled: 272 MB") instead of unmapping them as V8 11 (Node.js 20) did, and only a
 * memory-reducing collection empties the pool. V8's memory reducer, which should run one when a
 * process goes idle, did not in the server: with 20 open 5,000-line documents the server's RSS was
 * 316 MiB after 1,000 edits on Node.js 24 (140 MiB on Node.js 20, same build), ~140 MiB of it
 * 559 pooled 256 KiB pages beside a 35 MiB heap, and 30 s without a message changed nothing.
 * V8's `--memory-saver-mode` (Node.js 24 only; Node.js 20 and 22 refuse to start with it) and
 * `--optimize-for-size` keep the pool empty but made every edit slower (p50 +25 %, p95 +50 %).
 *
 * So the server asks for one memory-reducing ("last-resort") collection when it has been idle for
 * {@link IDLE_TRIM_MS} after linting: the `gc` function that `--expose-gc` (common/src/lsp/nodeFlags.ts)
 * defines, with V8's options object `{ type: "major", execution: "sync", flavor: "last-resort" }`
 * (V8 src/extensions/gc-extension.cc; an older V8 ignores the flavor and runs a plain full
 * collection). Without `--expose-gc` (a server started by another editor without the flags) it does
 * nothing.
 */

/** V8's `gc` function as `--expose-gc` defines it (the options object is V8's, gc-extension.cc). */
export type GcFunction = (options?: {
  type?: "major" | "minor";
  execution?: "sync" | "async";
  flavor?: "regular" | "last-resort";
}) => unknown;

/** Milliseconds without a lint after which the server trims its heap (a pause in typing, not a keystroke gap). */
export const IDLE_TRIM_MS = 2000;

/** What one trim did: RSS before and after (MiB) and the collection's duration (ms). */
export interface TrimReport {
  rssBeforeMiB: number;
  rssAfterMiB: number;
  ms: number;
}

/** Timer functions, replaceable in tests. */
export interface TrimTimers {
  setTimeout(f: () => void, ms: number): { unref?(): unknown };
  clearTimeout(t: unknown): void;
}

/**
 * Runs a memory-reducing collection once the server has been idle `idleMs` after its last work.
 * Call {@link afterWork} when a burst of lints ends; each call re-arms the timer, so a user who keeps
 * typing never waits for a collection, and one pause after a burst gets exactly one.
 */
export class IdleHeapTrim {
  private timer: unknown = null;
  /** Trims done so far. */
  trims = 0;
  /**
   * @param gc V8's `gc` (globalThis.gc under `--expose-gc`), or undefined: then {@link afterWork} does nothing.
   * @param onTrim called after each trim with what it did (the server logs it to its trace).
   */
  constructor(
    private readonly gc: GcFunction | undefined,
    private readonly onTrim: (r: TrimReport) => void = () => {},
    private readonly idleMs = IDLE_TRIM_MS,
    private readonly timers: TrimTimers = {
      setTimeout: (f, ms) => setTimeout(f, ms),
      clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
    },
    private readonly rssBytes: () => number = () => process.memoryUsage.rss(),
  ) {}

  /** Whether a trim can happen at all (the process has V8's `gc`). */
  get enabled(): boolean {
    return this.gc !== undefined;
  }

  /** Work just ended: trim after `idleMs` more without work (re-armed by the next call). */
  afterWork(): void {
    if (!this.gc) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    const t = this.timers.setTimeout(() => {
      this.timer = null;
      this.trim();
    }, this.idleMs);
    t.unref?.(); // never keeps the process alive on its own
    this.timer = t;
  }

  private trim(): void {
    const mib = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
    const before = this.rssBytes();
    const t0 = performance.now();
    this.gc!({ type: "major", execution: "sync", flavor: "last-resort" });
    const ms = Math.round((performance.now() - t0) * 10) / 10;
    this.trims++;
    this.onTrim({ rssBeforeMiB: mib(before), rssAfterMiB: mib(this.rssBytes()), ms });
  }
}
