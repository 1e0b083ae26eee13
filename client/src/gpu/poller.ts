/**
 * Runs a job every N ms while active, and on demand, never two at a time. No `vscode` import.
 */

/** Timer functions, replaceable in tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Polls `job` while active.
 *
 * - {@link setActive}(true) runs the job at once, then again `intervalMs()` ms after each run ends
 *   (a chain of timeouts, so runs never overlap however slow the job is).
 * - {@link setActive}(false) stops scheduling; a run in progress finishes.
 * - {@link refresh} runs the job now, or, while one is running, returns that run's promise.
 * - {@link restart} aborts a run in progress and runs the job again (its inputs changed).
 * - {@link dispose} stops everything and aborts the running job's AbortSignal.
 *
 * `job` should not reject; if it does, the error goes to `onError` and polling continues.
 */
export class Poller {
  private active = false;
  private disposed = false;
  private timer: unknown;
  private running: Promise<void> | undefined;
  private controller: AbortController | undefined;
  /** Identifies the latest run: an aborted, superseded run must not clear the newer one's state. */
  private runId = 0;

  constructor(
    private readonly job: (signal: AbortSignal) => Promise<void>,
    private readonly intervalMs: () => number,
    private readonly onError: (e: unknown) => void = () => undefined,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Whether polling is on. */
  get isActive(): boolean {
    return this.active;
  }

  /** Whether a run is in progress. */
  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Turns polling on (runs now unless a run is in progress or scheduled) or off. */
  setActive(active: boolean): void {
    if (this.disposed || active === this.active) return;
    this.active = active;
    if (active) {
      if (!this.running && this.timer === undefined) void this.refresh();
    } else {
      this.clearTimer();
    }
  }

  /** Runs the job now, or joins the run in progress. Resolves when that run has ended. */
  refresh(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (this.running) return this.running;
    return this.begin();
  }

  /**
   * Runs the job now with fresh inputs: a run in progress is aborted (its AbortSignal fires; the
   * job must then not publish its result) instead of joined. For a change of what the job reads
   * (a setting) while it runs. Resolves when the new run has ended.
   */
  restart(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.controller?.abort();
    return this.begin();
  }

  private begin(): Promise<void> {
    this.clearTimer();
    const id = ++this.runId;
    const controller = new AbortController();
    this.controller = controller;
    const run = (async () => {
      try {
        await this.job(controller.signal);
      } catch (e) {
        this.onError(e);
      } finally {
        if (this.runId === id) {
          this.running = undefined;
          this.controller = undefined;
          this.schedule();
        }
      }
    })();
    this.running = run;
    return run;
  }

  /** Stops polling for good and aborts a run in progress. */
  dispose(): void {
    this.disposed = true;
    this.active = false;
    this.clearTimer();
    this.controller?.abort();
  }

  private schedule(): void {
    if (!this.active || this.disposed || this.timer !== undefined) return;
    const ms = Math.max(0, this.intervalMs());
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
