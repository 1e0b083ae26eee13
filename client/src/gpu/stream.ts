/**
 * The streaming GPU monitor: one long-lived
 * `nvidia-smi --query-gpu=<QUERY_GPU_FIELDS> --format=csv,noheader,nounits -lms <intervalMs>`
 * instead of one process per refresh (a spawn of nvidia-smi costs about 0.04 s of wall time, measured),
 * plus the compute-process query (and `nvidia-smi -L` under MIG)
 * at a slower rate.
 *
 * No `vscode` import: a benchmark or a script can drive it —
 *
 * ```ts
 * const stream = new GpuStream({ path: "nvidia-smi", intervalMs: 1000, timeoutMs: 5000 });
 * stream.on((e) => { if (e.kind === "tick") console.log(e.tick.gpus.map((g) => g.utilizationGpuPercent)); });
 * stream.start();
 * // ...
 * await stream.stop();
 * ```
 *
 * nvidia-smi prints one line per GPU per sample (fixtures/nvidia-smi/h200x2/loop.txt) and nothing
 * marks where a sample ends. {@link TickAssembler} groups lines into ticks by the index sequence (an
 * index not above the previous one starts a new tick) and by a short quiet gap after a burst.
 *
 * Faults never throw: a missing program, a non-zero exit, a process that dies mid-stream, a hang (no
 * complete sample for `intervalMs + timeoutMs`, however many bytes came: killed, so output that
 * trickles in never keeps a stuck nvidia-smi alive), garbage output. Each is reported as a `fault` event
 * and, except where retrying cannot help (not installed, exit 2: arguments rejected), the stream is
 * restarted after an exponential back-off (1 s, 2 s, 4 s, ... at most 30 s by default).
 */
import { StringDecoder } from "node:string_decoder";
import { ChildReaper, emitTo, streamOptions, type StreamChild } from "./streamProcess";
import { AppsStream } from "./appsStream";
import {
  anyMigEnabled,
  type ComputeApp,
  describeExitCode,
  type Gpu,
  loadExeca,
  type MigDevice,
  parseComputeApps,
  parseQueryGpu,
  type ParseProblem,
  QUERY_APPS_ARGS,
  queryMigDevices,
  runNvidiaSmi,
  type SmiFailure,
  startFailure,
  streamGpuArgs,
} from "../../../common/src/gpu/nvidiaSmi";

/** Options of {@link GpuStream}. */
export interface GpuStreamOptions {
  /** nvidia-smi's path, or a bare name looked up on PATH. */
  path: string;
  /** Sampling period passed as `-lms`, ms. */
  intervalMs: number;
  /**
   * Limit for nvidia-smi to deliver, ms: the first sample (a tick with at least one GPU) must come
   * within `timeoutMs + intervalMs` of the start, and each later one within `intervalMs +
   * timeoutMs` of the previous sample, however many bytes arrive in between; otherwise the process
   * is killed (a hang). Also the limit of each process query.
   */
  timeoutMs: number;
  /** Run the compute-process query on every N-th tick (1st, N+1-th, ...); default 5. 0 turns it off. */
  processesEvery?: number;
  /**
   * Stream the process list (appsStream.ts: one `--query-compute-apps ... -lms <intervalMs x
   * processesEvery>`) instead of a query every N-th tick; default true. The per-tick query still
   * runs while that stream is not delivering (starting up, restarting, unsupported) and under MIG
   * (which needs `nvidia-smi -L` too).
   */
  streamProcesses?: boolean;
  /** Extra environment variables for nvidia-smi (tests use FAKE_NVIDIA_SMI_*). */
  env?: Record<string, string>;
  /** First restart delay after a fault, ms (default 1000); doubled per consecutive fault. */
  backoffInitialMs?: number;
  /** Largest restart delay, ms (default 30000). */
  backoffMaxMs?: number;
  /** Quiet gap that ends a burst of lines (one sample), ms; default `intervalMs / 4`, between 10 and 100. */
  settleMs?: number;
}

/** One sample: every GPU nvidia-smi printed, and the lines it could not use. */
export interface StreamTick {
  /** 1 for the first tick after {@link GpuStream.start}, counting across restarts. */
  seq: number;
  /** In index order. */
  gpus: Gpu[];
  /** Unusable lines of this sample (garbage, `Unable to determine the device handle for GPU ...`). */
  problems: ParseProblem[];
  /** When the tick was assembled, ms since the epoch. */
  at: number;
}

/** Result of the slower process query (and of `nvidia-smi -L` when a GPU has MIG enabled). */
export interface StreamProcesses {
  /** Processes holding a CUDA context; empty when the query failed (see `problems`). */
  apps: ComputeApp[];
  /** MIG devices; empty unless a GPU of the last tick has MIG enabled. */
  mig: MigDevice[];
  /** A failed query or unreadable lines, in words. */
  problems: string[];
  /** ms since the epoch. */
  at: number;
}

/** What a {@link GpuStream} reports to its listeners. */
export type StreamEvent =
  | { kind: "started"; pid: number | undefined; restarts: number }
  | { kind: "tick"; tick: StreamTick }
  | { kind: "processes"; processes: StreamProcesses }
  | {
      kind: "fault";
      failure: SmiFailure;
      /** Ticks the failed process delivered before it failed (0: it never worked). */
      afterTicks: number;
      /** Consecutive faults so far (1 for the first). */
      restarts: number;
      /** When the stream restarts by itself, ms from now; undefined when it will not (not installed, exit 2). */
      retryInMs: number | undefined;
    };

/** A listener registration. */
export interface StreamSubscription {
  dispose(): void;
}

/** Longest partial line kept while waiting for its newline (bytes of text); longer is garbage. */
export const MAX_LINE_CHARS = 64 * 1024;
/** Unusable lines kept per tick. */
const MAX_PROBLEMS_PER_TICK = 20;

function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "\uFFFD");
  return clean.length > 200 ? `${clean.slice(0, 197)}...` : clean;
}

/**
 * Groups nvidia-smi's streamed lines into ticks. Pure (no timers): the caller feeds lines with
 * {@link push} and calls {@link settle} after a quiet gap and {@link end} when the stream ends.
 *
 * - A GPU line whose index is not above the previous GPU line's index starts a new tick; the
 *   finished one is returned by {@link push} unless {@link settle} already returned it.
 * - {@link settle} returns the open tick (it stays open: a late line of the same sample is added and
 *   the tick is returned again at the next settle). A tick with fewer GPUs than the last one is held
 *   back until the next tick starts, so that a sample split by a slow GPU does not look like a GPU
 *   that disappeared.
 * - Lines that are not GPU lines (garbage, per-device errors) go into the tick's `problems`; a burst
 *   of only such lines is returned by {@link settle} as a tick without GPUs.
 */
export class TickAssembler {
  private gpus: Gpu[] = [];
  private problems: ParseProblem[] = [];
  private lastIndex = -1;
  private returned = false;
  private lastCount: number | undefined;
  private lineNo = 0;

  /** Adds one line (without its newline). @returns the previous tick when this line starts a new one and it was not returned yet. */
  push(line: string): { gpus: Gpu[]; problems: ParseProblem[] } | undefined {
    this.lineNo++;
    if (line.trim() === "") return undefined;
    const parsed = parseQueryGpu(line);
    const gpu = parsed.rows[0];
    if (!gpu) {
      const p = parsed.problems[0] ?? { line: 1, text: line, reason: "unreadable line" };
      if (this.problems.length < MAX_PROBLEMS_PER_TICK)
        this.problems.push({ ...p, line: this.lineNo, text: printable(p.text) });
      this.returned = false;
      return undefined;
    }
    let done: { gpus: Gpu[]; problems: ParseProblem[] } | undefined;
    if (this.gpus.length > 0 && gpu.index <= this.lastIndex) {
      done = this.returned ? undefined : this.take();
      this.gpus = [];
      this.problems = [];
    }
    this.gpus.push(gpu);
    this.lastIndex = gpu.index;
    this.returned = false;
    return done;
  }

  /** At a quiet moment: the open tick when there is something new to show, else undefined. */
  settle(): { gpus: Gpu[]; problems: ParseProblem[] } | undefined {
    if (this.returned) return undefined;
    if (this.gpus.length === 0) {
      if (this.problems.length === 0) return undefined;
      const t = { gpus: [], problems: this.problems };
      this.problems = [];
      return t;
    }
    if (this.lastCount !== undefined && this.gpus.length < this.lastCount) return undefined;
    this.returned = true;
    return this.take();
  }

  /** The stream ended: the open tick if it was not returned yet. Resets the assembler. */
  end(): { gpus: Gpu[]; problems: ParseProblem[] } | undefined {
    const t = !this.returned && (this.gpus.length > 0 || this.problems.length > 0) ? this.take() : undefined;
    this.gpus = [];
    this.problems = [];
    this.lastIndex = -1;
    this.returned = false;
    this.lineNo = 0;
    return t;
  }

  /** Number of GPU lines of the open tick (for the caller's timers). */
  get openGpuCount(): number {
    return this.gpus.length;
  }

  private take(): { gpus: Gpu[]; problems: ParseProblem[] } {
    if (this.gpus.length > 0) this.lastCount = this.gpus.length;
    return { gpus: [...this.gpus].sort((a, b) => a.index - b.index), problems: [...this.problems] };
  }
}

/**
 * Streams GPU samples from one long-lived nvidia-smi while started; see the module comment.
 * Events go to the listeners of {@link on}; nothing is emitted after {@link stop}.
 */
export class GpuStream {
  private readonly listeners = new Set<(e: StreamEvent) => void>();
  private options: GpuStreamOptions;
  private running = false;
  /** Bumped by every spawn and stop: callbacks of an older generation are ignored. */
  private gen = 0;
  private child: StreamChild | undefined;
  private readonly reaper = new ChildReaper();
  private assembler = new TickAssembler();
  private decoder = new StringDecoder("utf8");
  private partial = "";
  private seq = 0;
  private faults = 0;
  private ticksThisRun = 0;
  private runStartedAt = 0;
  /** Bytes read since the last sample with a GPU (for the watchdog's message). */
  private bytesSinceSample = 0;
  private recentUnparsed: string[] = [];
  private lastGpus: Gpu[] = [];
  private processController: AbortController | undefined;
  private processRun: Promise<StreamProcesses | undefined> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  /** The process-list stream (while streaming and {@link GpuStreamOptions.streamProcesses}). */
  private apps: AppsStream | undefined;
  /** Why this nvidia-smi cannot stream the process list (then it is not tried again). */
  private appsUnsupported: string | undefined;

  constructor(options: GpuStreamOptions) {
    this.options = { ...options };
  }

  /** Calls `listener` with every event until disposed. */
  on(listener: (e: StreamEvent) => void): StreamSubscription {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Whether {@link start} was called and {@link stop} was not (also while waiting to restart). */
  get isRunning(): boolean {
    return this.running;
  }

  /** The nvidia-smi process id while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Consecutive faults since the stream last worked (0 while healthy). */
  get faultCount(): number {
    return this.faults;
  }

  /** The options in force (a copy). */
  get currentOptions(): GpuStreamOptions {
    return { ...this.options };
  }

  /** Starts streaming (no-op while running). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.faults = 0;
    void this.spawn();
  }

  /**
   * Restarts now with fresh back-off (the Refresh button; a settings change), optionally with new
   * options. Starts the stream when it was not running.
   */
  restart(options?: Partial<GpuStreamOptions>): void {
    if (options) this.options = { ...this.options, ...options };
    this.running = true;
    this.faults = 0;
    this.killChild();
    const apps = this.apps;
    this.apps = undefined;
    void apps?.stop();
    void this.spawn();
  }

  /** Replaces options; a running stream restarts only when path, interval, timeout or env changed. */
  configure(options: Partial<GpuStreamOptions>): void {
    const before = JSON.stringify([
      this.options.path,
      this.options.intervalMs,
      this.options.timeoutMs,
      this.options.env,
    ]);
    this.options = { ...this.options, ...options };
    const after = JSON.stringify([
      this.options.path,
      this.options.intervalMs,
      this.options.timeoutMs,
      this.options.env,
    ]);
    if (this.running && before !== after) this.restart();
  }

  /**
   * Runs the process query (and `-L` under MIG) now, or joins the one in flight.
   * @returns its result (also emitted as a `processes` event), or undefined when stopped meanwhile.
   */
  refreshProcesses(): Promise<StreamProcesses | undefined> {
    if (this.processRun) return this.processRun;
    const controller = new AbortController();
    this.processController = controller;
    const { path, timeoutMs, env } = this.options;
    const opts = { path, timeoutMs, signal: controller.signal, ...(env ? { env } : {}) };
    const run = (async (): Promise<StreamProcesses | undefined> => {
      const r = await runNvidiaSmi(path, QUERY_APPS_ARGS, opts);
      if (r.kind === "canceled" || controller.signal.aborted) return undefined;
      const problems: string[] = [];
      let apps: ComputeApp[] = [];
      if (r.kind === "ok") {
        const parsed = parseComputeApps(r.stdout);
        apps = parsed.rows;
        problems.push(...parsed.problems.map((p) => `Process query line ${p.line}: ${p.reason}`));
      } else {
        problems.push(`Process list unavailable: ${r.message}`);
      }
      let mig: MigDevice[] = [];
      if (anyMigEnabled(this.lastGpus)) {
        const listed = await queryMigDevices(opts);
        if (listed.canceled || controller.signal.aborted) return undefined;
        mig = listed.mig;
        problems.push(...listed.problems);
      }
      const result: StreamProcesses = { apps, mig, problems, at: Date.now() };
      this.emit({ kind: "processes", processes: result });
      return result;
    })().finally(() => {
      if (this.processRun === run) {
        this.processRun = undefined;
        this.processController = undefined;
      }
    });
    this.processRun = run;
    return run;
  }

  /** Stops streaming: kills nvidia-smi (SIGTERM, SIGKILL after {@link FORCE_KILL_AFTER_MS}) and resolves when it has exited. */
  async stop(): Promise<void> {
    this.running = false;
    this.gen++;
    this.clearTimers();
    this.processController?.abort();
    this.killChild();
    const apps = this.apps;
    this.apps = undefined;
    const pending = [
      ...this.reaper.pending(),
      ...(this.processRun ? [this.processRun] : []),
      ...(apps ? [apps.stop()] : []),
    ];
    await Promise.allSettled(pending);
  }

  private emit(e: StreamEvent): void {
    emitTo(this.listeners, e);
  }

  private clearTimers(): void {
    clearTimeout(this.restartTimer);
    clearTimeout(this.watchdog);
    clearTimeout(this.settleTimer);
    this.restartTimer = this.watchdog = this.settleTimer = undefined;
  }

  private killChild(): void {
    const child = this.child;
    this.child = undefined;
    if (child) this.reaper.kill(child);
  }

  private async spawn(): Promise<void> {
    this.clearTimers();
    const gen = ++this.gen;
    this.assembler = new TickAssembler();
    this.decoder = new StringDecoder("utf8");
    this.partial = "";
    this.ticksThisRun = 0;
    this.bytesSinceSample = 0;
    this.recentUnparsed = [];
    const { execa } = await loadExeca();
    if (gen !== this.gen || !this.running) return;
    const { path, intervalMs, timeoutMs, env } = this.options;
    const child = execa(path, streamGpuArgs(intervalMs), streamOptions(env));
    this.child = child;
    this.runStartedAt = Date.now();
    let stderrTail = "";
    child.stdout?.on("data", (chunk: Buffer | string) => {
      if (gen === this.gen) this.onData(gen, chunk);
    });
    child.stderr?.on("data", (chunk: Buffer | string) => {
      stderrTail = (stderrTail + chunk.toString()).slice(-2000);
    });
    this.armWatchdog(gen, timeoutMs + intervalMs);
    void child.then(
      (r) => this.onExit(gen, r, stderrTail),
      () => undefined,
    );
    this.emit({ kind: "started", pid: child.pid, restarts: this.faults });
    this.startApps();
  }

  /** Starts the process-list stream once per {@link start} (it restarts by itself after faults). */
  private startApps(): void {
    const every = this.options.processesEvery ?? 5;
    if (this.apps || every <= 0 || this.options.streamProcesses === false || this.appsUnsupported) return;
    const { path, intervalMs, timeoutMs, env } = this.options;
    const apps = new AppsStream({ path, periodMs: intervalMs * every, timeoutMs, ...(env ? { env } : {}) });
    this.apps = apps;
    apps.on((e) => {
      if (e.kind === "unsupported") this.appsUnsupported = e.message;
      if (this.apps !== apps || e.kind !== "sample" || anyMigEnabled(this.lastGpus) || this.processRun) return;
      this.emit({
        kind: "processes",
        processes: { apps: e.sample.apps, mig: [], problems: e.sample.problems, at: e.at },
      });
    });
    apps.start();
  }

  /**
   * True while the process-list stream delivers: a sample within its period plus the timeout
   * (and plus that again right after its start), not under MIG.
   */
  private appsDelivering(): boolean {
    const a = this.apps;
    if (!a?.isRunning || anyMigEnabled(this.lastGpus)) return false;
    const { intervalMs, timeoutMs, processesEvery } = this.options;
    const window = intervalMs * (processesEvery ?? 5) + timeoutMs;
    return a.lastSampleAt > 0 ? Date.now() - a.lastSampleAt <= window : Date.now() - this.runStartedAt <= timeoutMs;
  }

  /** The process-list stream's nvidia-smi pid while it runs (tests, the API). */
  get appsPid(): number | undefined {
    return this.apps?.pid;
  }

  private armWatchdog(gen: number, ms: number): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (gen !== this.gen) return;
      this.gen++; // the killed process's exit is not a second fault
      this.killChild();
      this.finishOutput();
      const bytes = this.bytesSinceSample;
      this.fault({
        kind: "timeout",
        ms,
        message: bytes
          ? `nvidia-smi printed no complete sample for ${ms} ms (${bytes} bytes) and was stopped`
          : `nvidia-smi printed nothing for ${ms} ms and was stopped`,
      });
    }, ms);
  }

  private onData(gen: number, chunk: Buffer | string): void {
    const { intervalMs } = this.options;
    // The watchdog is re-armed by each sample (tick), not by each chunk: a byte now and then must
    // not keep a stuck process alive.
    this.bytesSinceSample += chunk.length;
    const text = this.partial + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    if (this.partial.length > MAX_LINE_CHARS) {
      parts.push(this.partial.slice(0, 200));
      this.partial = "";
    }
    for (const raw of parts) this.line(raw.replace(/\r$/, ""));
    clearTimeout(this.settleTimer);
    const settleMs = this.options.settleMs ?? Math.min(100, Math.max(10, intervalMs / 4));
    // A burst of only unusable lines waits longer: nvidia-smi's error text is usually followed by
    // its exit, which is the better report.
    const wait = this.assembler.openGpuCount > 0 ? settleMs : Math.max(settleMs, Math.min(intervalMs, 500));
    this.settleTimer = setTimeout(() => {
      if (gen !== this.gen) return;
      const t = this.assembler.settle();
      if (t) this.tick(t);
    }, wait);
  }

  private line(text: string): void {
    if (text.trim() !== "" && parseQueryGpu(text).rows.length === 0) {
      this.recentUnparsed.push(printable(text.trim()));
      if (this.recentUnparsed.length > 5) this.recentUnparsed.shift();
    }
    const done = this.assembler.push(text);
    if (done) this.tick(done);
  }

  /** Flushes what is left of the output of the process that ended (last partial line, open tick). */
  private finishOutput(): { gpus: Gpu[]; problems: ParseProblem[] } | undefined {
    const rest = this.partial + this.decoder.end();
    this.partial = "";
    if (rest.trim() !== "") this.line(rest);
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    return this.assembler.end();
  }

  private tick(t: { gpus: Gpu[]; problems: ParseProblem[] }): void {
    const tick: StreamTick = { seq: ++this.seq, gpus: t.gpus, problems: t.problems, at: Date.now() };
    if (t.gpus.length > 0) {
      if (this.child) {
        // A sample from the running process: it has until the next interval plus the timeout for the next one.
        this.bytesSinceSample = 0;
        this.armWatchdog(this.gen, this.options.intervalMs + this.options.timeoutMs);
      }
      this.ticksThisRun++;
      const migBefore = anyMigEnabled(this.lastGpus);
      this.lastGpus = t.gpus;
      const every = this.options.processesEvery ?? 5;
      const healthyFor = Date.now() - this.runStartedAt;
      if (this.faults > 0 && healthyFor >= Math.max(10 * this.options.intervalMs, 10_000)) this.faults = 0;
      this.emit({ kind: "tick", tick });
      const due = this.ticksThisRun === 1 || (this.seq - 1) % every === 0 || migBefore !== anyMigEnabled(t.gpus);
      if (every > 0 && due && !this.appsDelivering()) {
        void this.refreshProcesses();
      }
    } else {
      this.emit({ kind: "tick", tick });
    }
  }

  private onExit(gen: number, r: Awaited<StreamChild>, stderrTail: string): void {
    if (gen !== this.gen) return;
    this.gen++;
    this.child = undefined;
    clearTimeout(this.watchdog);
    const left = this.finishOutput();
    if (left && left.gpus.length > 0) this.tick(left);
    const { path } = this.options;
    let failure: SmiFailure;
    if (r.exitCode === undefined && !r.isTerminated) {
      failure = startFailure(path, r.code);
    } else {
      const exitCode = r.exitCode ?? null;
      const explanation =
        exitCode === null
          ? `nvidia-smi was killed by ${r.signal ?? "a signal"}`
          : exitCode === 0
            ? "nvidia-smi stopped streaming (exit 0)"
            : describeExitCode(exitCode);
      const own = [
        ...stderrTail
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter(Boolean)
          .slice(-3),
        ...this.recentUnparsed.slice(-3),
      ].join(" ");
      failure = {
        kind: "failed",
        exitCode,
        ...(r.signal ? { signal: r.signal } : {}),
        message: (own.length > 500 ? `${own.slice(0, 497)}...` : own) || explanation,
        explanation,
      };
    }
    this.fault(failure);
  }

  private fault(failure: SmiFailure): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.faults++;
    const noRetry = failure.kind === "missing" || (failure.kind === "failed" && failure.exitCode === 2);
    const initial = this.options.backoffInitialMs ?? 1000;
    const max = this.options.backoffMaxMs ?? 30_000;
    const retryInMs = noRetry || !this.running ? undefined : Math.min(max, initial * 2 ** (this.faults - 1));
    this.emit({ kind: "fault", failure, afterTicks: this.ticksThisRun, restarts: this.faults, retryInMs });
    if (retryInMs !== undefined) {
      clearTimeout(this.restartTimer);
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.running) void this.spawn();
      }, retryInMs);
    }
  }
}
