/**
 * The compute-process list streamed: one long-lived
 * `nvidia-smi --query-compute-apps=<QUERY_APPS_FIELDS> --format=csv,nounits -lms <periodMs>`
 * instead of a fresh nvidia-smi every fifth tick, which was about 90% of the GPU view's CPU.
 *
 * nvidia-smi's man page: "-l SEC, --loop=SEC Continuously report query data at the specified
 * interval, rather than the default of just once" and "-lms ms, --loop-ms=ms" the same in ms; the
 * loop applies to the `--query-*` options. A sample with no process prints no row, so rows alone
 * cannot tell "no processes now" from "nothing yet": the stream is asked WITH the CSV header
 * (no `noheader`), and the header line that starts every sample is the delimiter. Where nvidia-smi
 * prints the header only once, the second header does not come within a period plus the timeout:
 * the stream reports `unsupported` and stops, and the caller goes back to one query every fifth
 * tick (stream.ts). Driver 580.159.04 (H100, measured 2026-12-05: test/fixtures/nvidia-smi/h100-stream)
 * prints it only once, so there the polled query is what runs (23 ms of CPU per query).
 *
 * Faults never throw: a process that exits or stops printing is restarted after an exponential
 * back-off (1 s, 2 s, ... at most 30 s); exit code 2 (arguments rejected) is `unsupported`.
 * No `vscode` import.
 */
import { StringDecoder } from "node:string_decoder";
import { ChildReaper, emitTo, streamOptions, type StreamChild } from "./streamProcess";
import { type ComputeApp, loadExeca, parseComputeApps, QUERY_APPS_FIELDS } from "../../../common/src/gpu/nvidiaSmi";

/** Arguments of the streamed process query: with the header (the sample delimiter), without units, every `periodMs`. */
export function streamAppsArgs(periodMs: number): string[] {
  return [`--query-compute-apps=${QUERY_APPS_FIELDS.join(",")}`, "--format=csv,nounits", "-lms", String(Math.max(1, Math.round(periodMs)))];
}

/** One sample of the process list. */
export interface AppsSample {
  apps: ComputeApp[];
  /** Unreadable lines, in words. */
  problems: string[];
}

/** True for the CSV header of the process query (its first field is `gpu_uuid`). */
export function isAppsHeader(line: string): boolean {
  return /^gpu_uuid\s*,/.test(line.trim());
}

/**
 * Groups the streamed lines into samples by the header line that starts each. Pure: the caller
 * feeds lines ({@link push}) and, after a quiet gap, calls {@link settle}.
 * - A header closes the open sample (returned unless {@link settle} returned it already) and opens an empty one.
 * - {@link settle} returns the open sample once (a sample with no rows is the empty list: no processes).
 * - Lines before the first header are ignored (there is no sample to put them in).
 */
export class AppsAssembler {
  private lines: string[] | undefined;
  private returned = false;
  /** Headers seen so far. */
  headers = 0;

  /** Adds a line (without its newline). @returns the finished sample when this line is a header and one was open. */
  push(line: string): AppsSample | undefined {
    if (isAppsHeader(line)) {
      this.headers++;
      const done = this.lines && !this.returned ? this.take() : undefined;
      this.lines = [];
      this.returned = false;
      return done;
    }
    if (!this.lines || line.trim() === "") return undefined;
    this.lines.push(line);
    this.returned = false;
    return undefined;
  }

  /** At a quiet moment: the open sample when it was not returned yet. */
  settle(): AppsSample | undefined {
    if (!this.lines || this.returned) return undefined;
    this.returned = true;
    return this.take();
  }

  private take(): AppsSample {
    const parsed = parseComputeApps((this.lines ?? []).join("\n"));
    return { apps: parsed.rows, problems: parsed.problems.map((p) => `Process query line ${p.line}: ${p.reason}`) };
  }
}

/** What an {@link AppsStream} reports. */
export type AppsEvent =
  | { kind: "sample"; sample: AppsSample; at: number }
  | { kind: "fault"; message: string; restarts: number; retryInMs: number }
  | { kind: "unsupported"; message: string };

/** Options of {@link AppsStream}. */
export interface AppsStreamOptions {
  path: string;
  /** Sampling period (`-lms`), ms. */
  periodMs: number;
  /** How late a sample may be beyond the period before the process counts as hung, ms. */
  timeoutMs: number;
  env?: Record<string, string>;
  /** First restart delay, ms (default 1000), doubled per consecutive fault up to `backoffMaxMs` (default 30000). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

/** Streams the process list from one long-lived nvidia-smi while started; see the module comment. */
export class AppsStream {
  private readonly listeners = new Set<(e: AppsEvent) => void>();
  private readonly reaper = new ChildReaper();
  private child: StreamChild | undefined;
  private gen = 0;
  private running = false;
  private faults = 0;
  private assembler = new AppsAssembler();
  private decoder = new StringDecoder("utf8");
  private partial = "";
  private watchdog: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** When the last sample came, ms since the epoch (0: none yet). */
  lastSampleAt = 0;
  /** Set once nvidia-smi showed it cannot stream this query; the stream stays stopped. */
  unsupported: string | undefined;

  constructor(private readonly o: AppsStreamOptions) {}

  /** Calls `listener` with every event until disposed. */
  on(listener: (e: AppsEvent) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Whether it streams (or waits to restart): started, not stopped, not unsupported. */
  get isRunning(): boolean {
    return this.running;
  }

  /** The nvidia-smi process id while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts streaming (no-op while running or once unsupported). */
  start(): void {
    if (this.running || this.unsupported) return;
    this.running = true;
    this.faults = 0;
    void this.spawn();
  }

  /** Stops: kills nvidia-smi and resolves when it has exited. */
  async stop(): Promise<void> {
    this.running = false;
    this.gen++;
    this.clearTimers();
    this.killChild();
    await Promise.allSettled(this.reaper.pending());
  }

  private clearTimers(): void {
    clearTimeout(this.watchdog);
    clearTimeout(this.settleTimer);
    clearTimeout(this.restartTimer);
    this.watchdog = this.settleTimer = this.restartTimer = undefined;
  }

  private killChild(): void {
    const child = this.child;
    this.child = undefined;
    if (child) this.reaper.kill(child);
  }

  private async spawn(): Promise<void> {
    this.clearTimers();
    const gen = ++this.gen;
    this.assembler = new AppsAssembler();
    this.decoder = new StringDecoder("utf8");
    this.partial = "";
    const { execa } = await loadExeca();
    if (gen !== this.gen || !this.running) return;
    const child = execa(this.o.path, streamAppsArgs(this.o.periodMs), streamOptions(this.o.env));
    this.child = child;
    child.stdout?.on("data", (chunk: Buffer | string) => {
      if (gen === this.gen) this.onData(gen, chunk);
    });
    this.armWatchdog(gen);
    void child.then((r) => {
      if (gen !== this.gen) return;
      this.gen++;
      this.child = undefined;
      if (r.exitCode === 2) this.giveUp(`nvidia-smi refused the looping process query (exit 2)`);
      else this.fault(`nvidia-smi's process stream ended (${r.exitCode === undefined ? r.code ?? "not started" : r.exitCode === null ? r.signal ?? "killed" : `exit ${r.exitCode}`})`);
    }, () => undefined);
  }

  /** Until the second header: the stream must show it repeats headers; after: each sample within period + timeout. */
  private armWatchdog(gen: number): void {
    clearTimeout(this.watchdog);
    const ms = this.o.periodMs + this.o.timeoutMs;
    this.watchdog = setTimeout(() => {
      if (gen !== this.gen) return;
      if (this.assembler.headers === 1) return this.giveUp(`nvidia-smi printed the process query's header only once in ${ms} ms: the samples cannot be told apart`);
      this.gen++;
      this.killChild();
      this.fault(`nvidia-smi printed no process sample for ${ms} ms and was stopped`);
    }, ms);
  }

  private onData(gen: number, chunk: Buffer | string): void {
    const text = this.partial + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    if (this.partial.length > 64 * 1024) this.partial = "";
    for (const raw of parts) {
      const line = raw.replace(/\r$/, "");
      if (isAppsHeader(line)) this.armWatchdog(gen);
      const done = this.assembler.push(line);
      if (done) this.sample(done);
    }
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      if (gen !== this.gen) return;
      const s = this.assembler.settle();
      if (s) this.sample(s);
    }, 50);
  }

  private sample(sample: AppsSample): void {
    this.lastSampleAt = Date.now();
    this.faults = 0;
    emitTo(this.listeners, { kind: "sample", sample, at: this.lastSampleAt });
  }

  private giveUp(message: string): void {
    this.unsupported = message;
    void this.stop();
    emitTo(this.listeners, { kind: "unsupported", message });
  }

  private fault(message: string): void {
    this.faults++;
    const retryInMs = Math.min(this.o.backoffMaxMs ?? 30_000, (this.o.backoffInitialMs ?? 1000) * 2 ** (this.faults - 1));
    emitTo(this.listeners, { kind: "fault", message, restarts: this.faults, retryInMs });
    if (!this.running) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.running) void this.spawn();
    }, retryInMs);
  }
}
