/**
 * True utilisation: SM activity beside GPU-Util, from one long-lived
 * `nvidia-smi dmon -s u --gpm-metrics 2,3,5 -d <s>` per nvidia-smi (client/src/gpu/dmon.ts
 * parses it), and the "busy but idle" flag.
 *
 * GPU-Util (`utilization.gpu`, dmon's `sm`) is the share of time *any* kernel ran; SM activity
 * (GPM `smutil`, NVML_GPM_METRIC_SM_UTIL) is the share of SMs that were busy. A GPU can be 100 %
 * "utilised" with every SM but one idle: measured on an H200 (driver 580.159.04) with one spinning
 * thread block, dmon printed `sm` 100 and `smutil` 0 (test/fixtures/nvidia-smi/h200-gpm/dmon-spin.txt),
 * while bf16 matmuls gave `sm` 99, `smutil` 95 (dmon-full.txt).
 *
 * GPM exists on Hopper and newer GPUs only. Support is probed once per stream: a GPU whose first
 * {@link PROBE_SAMPLES} samples carry no GPM value (nvidia-smi prints `-`; the H200 printed values
 * from the third sample on, dmon-full.txt) is taken as unsupported; a dmon that exits before any
 * value, or cannot be started, means unsupported for every GPU. Unsupported is shown once, calmly
 * (a line in the tooltips), never as a failure.
 *
 * CPU cost: 460 ms of CPU per minute for one dmon at 1 s on 1 x H200, against 20 ms for the
 * query stream (BENCHMARKS.md; verify/gpm/capture.sh). So it runs only while the GPU view or the
 * dashboard is visible, and `gpuPilot.monitor.smActivity: "off"` turns it off.
 *
 * No `vscode` import (unit-tested against the fake nvidia-smi's dmon replay).
 */
import { StringDecoder } from "node:string_decoder";
import { type DmonActivity, dmonActivity, dmonArgs, DmonReader, type DmonSample, hasGpmValue } from "./dmon";
import { describeExitCode, loadExeca } from "../../../common/src/gpu/nvidiaSmi";
import { ChildReaper, emitTo, streamOptions, type StreamChild } from "./streamProcess";
import { formatPercent } from "../../../common/src/gpu/units";

/** Samples of a GPU without a GPM value after which its GPM support is taken as absent (the H200 printed values from the 3rd). */
export const PROBE_SAMPLES = 3;
/** Samples kept per GPU. */
export const RECENT_SAMPLES = 10;

/**
 * The "busy but idle" heuristic: over the last {@link BUSY_IDLE_SAMPLES} samples that carry both
 * numbers, every one has GPU-Util of at least {@link BUSY_UTIL_PERCENT} % and SM activity of at most
 * {@link IDLE_SM_PERCENT} %. A heuristic, not a measurement of waste: its evidence is the H200
 * capture (one spinning block: GPU-Util 100 %, SM activity 0 %; full matmuls: 99 % and 95 %; idle:
 * 0 % and 0 %). A real job waiting on a single tiny kernel (a spin-wait, a kernel launched with one
 * block, a stuck collective) reads this way; a healthy training step does not.
 */
export const BUSY_UTIL_PERCENT = 80;
/** See {@link BUSY_UTIL_PERCENT}. */
export const IDLE_SM_PERCENT = 5;
/** See {@link BUSY_UTIL_PERCENT}. */
export const BUSY_IDLE_SAMPLES = 3;

/** The calm line shown where SM activity is not available. */
export const NOT_AVAILABLE = "SM activity: not available on this GPU/driver";

/** Whether the recent samples (oldest first) read "busy but idle"; see {@link BUSY_UTIL_PERCENT}. */
export function isBusyButIdle(recent: readonly DmonActivity[]): boolean {
  const both = recent.filter((s) => s.gpuUtilPercent !== undefined && s.smActivityPercent !== undefined);
  if (both.length < BUSY_IDLE_SAMPLES) return false;
  return both
    .slice(-BUSY_IDLE_SAMPLES)
    .every(
      (s) => (s.gpuUtilPercent as number) >= BUSY_UTIL_PERCENT && (s.smActivityPercent as number) <= IDLE_SM_PERCENT,
    );
}

/** What dmon says about one GPU. */
export interface GpuActivity {
  /** nvidia-smi's GPU index (dmon's `gpu` column). */
  index: number;
  /** `probing` until a GPM value came or {@link PROBE_SAMPLES} samples passed without one. */
  support: "probing" | "supported" | "unsupported";
  /** The last samples, oldest first (at most {@link RECENT_SAMPLES}). */
  recent: DmonActivity[];
  /** The newest sample that carries SM activity; undefined before the first. */
  latest: DmonActivity | undefined;
  /** {@link isBusyButIdle} of {@link recent}. */
  busyButIdle: boolean;
}

/** Everything the GPU side shows about SM activity. */
export interface ActivitySnapshot {
  /**
   * `off` (the setting, or not streaming), `probing` (dmon started, no GPU decided yet), `on` (at
   * least one GPU reports SM activity), `unsupported` (no GPU does; {@link note} says so).
   */
  state: "off" | "probing" | "on" | "unsupported";
  /** {@link NOT_AVAILABLE} (with the reason when dmon failed) where SM activity is absent; "" otherwise. */
  note: string;
  /** By index. */
  gpus: GpuActivity[];
}

/** The snapshot while nothing runs. */
export const ACTIVITY_OFF: ActivitySnapshot = { state: "off", note: "", gpus: [] };

/** The "busy but idle" flag of a GPU in words, with its numbers; "" when it is not flagged. */
export function busyButIdleSentence(g: GpuActivity | undefined): string {
  if (!g?.busyButIdle) return "";
  return `Busy but idle: GPU-Util ${formatPercent(g.latest?.gpuUtilPercent)} while SM activity is ${formatPercent(g.latest?.smActivityPercent)} over the last ${BUSY_IDLE_SAMPLES} samples: a kernel runs, but almost no SMs work (a heuristic: GPU-Util ≥ ${BUSY_UTIL_PERCENT}%, SM activity ≤ ${IDLE_SM_PERCENT}%).`;
}

/**
 * SM activity of GPU `index` for its tree tooltip (Markdown): a small table (SM activity with
 * dmon's GPU-Util of the same sample, SM occupancy, tensor activity) and the busy-but-idle flag;
 * the calm {@link NOT_AVAILABLE} line where it is absent; "" when off.
 */
export function activityTooltipMarkdown(index: number, snapshot: ActivitySnapshot): string {
  if (snapshot.state === "off") return "";
  const g = snapshot.gpus.find((x) => x.index === index);
  if (snapshot.state === "unsupported" || g?.support === "unsupported") return snapshot.note || NOT_AVAILABLE;
  const a = g?.latest;
  if (!a) return "SM activity: waiting for the first values of nvidia-smi dmon";
  const lines = [
    "| | |",
    "|---|---|",
    `| SM activity | ${formatPercent(a.smActivityPercent)} (GPU-Util ${formatPercent(a.gpuUtilPercent)}, dmon) |`,
    `| SM occupancy | ${formatPercent(a.smOccupancyPercent)} |`,
    `| Tensor activity | ${formatPercent(a.tensorActivityPercent)} |`,
  ];
  const flag = busyButIdleSentence(g);
  if (flag) lines.push("", `$(warning) ${flag}`);
  return lines.join("\n");
}

/** Folds dmon samples into per-GPU {@link GpuActivity}. Pure. */
export class ActivityTracker {
  private readonly gpus = new Map<
    number,
    { seen: number; support: GpuActivity["support"]; recent: DmonActivity[]; latest: DmonActivity | undefined }
  >();

  /** Adds one sample; `gpmColumns` are the GPM columns of its header. */
  push(sample: DmonSample, gpmColumns: readonly string[]): void {
    let g = this.gpus.get(sample.index);
    if (!g) this.gpus.set(sample.index, (g = { seen: 0, support: "probing", recent: [], latest: undefined }));
    g.seen++;
    const a = dmonActivity(sample);
    if (hasGpmValue(sample, gpmColumns)) g.support = "supported";
    else if (g.support === "probing" && g.seen >= PROBE_SAMPLES) g.support = "unsupported";
    g.recent.push(a);
    if (g.recent.length > RECENT_SAMPLES) g.recent.shift();
    if (a.smActivityPercent !== undefined) g.latest = a;
  }

  /** Whether every GPU seen so far is decided unsupported (and at least one was seen). */
  get allUnsupported(): boolean {
    return this.gpus.size > 0 && [...this.gpus.values()].every((g) => g.support === "unsupported");
  }

  /** Whether any GPU printed a GPM value. */
  get anySupported(): boolean {
    return [...this.gpus.values()].some((g) => g.support === "supported");
  }

  /** The per-GPU state, by index. */
  gpuList(): GpuActivity[] {
    return [...this.gpus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, g]) => ({
        index,
        support: g.support,
        recent: [...g.recent],
        latest: g.latest,
        busyButIdle: isBusyButIdle(g.recent),
      }));
  }
}

/** Options of {@link ActivityStream}. */
export interface ActivityStreamOptions {
  /** nvidia-smi's path, or a bare name looked up on PATH. */
  path: string;
  /** Sampling period, ms; dmon takes whole seconds (`-d`), so it is rounded to seconds, at least 1 s. */
  intervalMs: number;
  /** A sample must come within `intervalMs + timeoutMs` (the first within twice that), else dmon is killed (a hang or a trickle). */
  timeoutMs: number;
  /** Extra environment for nvidia-smi (tests: FAKE_NVIDIA_SMI_*). */
  env?: Record<string, string>;
  /** First restart delay after a fault, ms (default 1000), doubled per consecutive fault. */
  backoffInitialMs?: number;
  /** Largest restart delay, ms (default 30000). */
  backoffMaxMs?: number;
}

/** Faults in a row before dmon ever printed a GPM value after which SM activity is given up as unavailable. */
export const GIVE_UP_AFTER_FAULTS = 3;

/** What an {@link ActivityStream} reports. */
export type ActivityEvent =
  | { kind: "update"; snapshot: ActivitySnapshot }
  /** A fault the stream recovers from (restart in `retryInMs`). */
  | { kind: "fault"; message: string; retryInMs: number };

/**
 * One streaming `nvidia-smi dmon` (see the module comment). Never throws; after {@link stop} it
 * emits nothing. Faults: dmon that exits, or prints no complete sample for `intervalMs + timeoutMs`
 * however many bytes came (killed), is restarted with back-off, unless it never printed a GPM
 * value: then (at once for an exit or a start failure, after {@link GIVE_UP_AFTER_FAULTS} hangs)
 * SM activity is unsupported and the stream stops for good (a new stream probes again).
 */
export class ActivityStream {
  private readonly listeners = new Set<(e: ActivityEvent) => void>();
  private running = false;
  private gen = 0;
  private child: StreamChild | undefined;
  private readonly reaper = new ChildReaper();
  private tracker = new ActivityTracker();
  private reader = new DmonReader();
  private decoder = new StringDecoder("utf8");
  private partial = "";
  private faults = 0;
  private everSupported = false;
  private _snapshot: ActivitySnapshot = ACTIVITY_OFF;
  private watchdog: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private lastUnreadable = "";

  constructor(private options: ActivityStreamOptions) {}

  /** Calls `listener` with every event until disposed. */
  on(listener: (e: ActivityEvent) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The last snapshot ({@link ACTIVITY_OFF} before the first sample). */
  get snapshot(): ActivitySnapshot {
    return this._snapshot;
  }

  /** Whether started and not stopped (also while waiting to restart). */
  get isRunning(): boolean {
    return this.running;
  }

  /** dmon's process id while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts dmon (no-op while running, and after support was found absent). */
  start(): void {
    if (this.running || this._snapshot.state === "unsupported") return;
    this.running = true;
    this.faults = 0;
    this._snapshot = { state: "probing", note: "", gpus: [] };
    void this.spawn();
  }

  /** Stops dmon (SIGTERM, SIGKILL after {@link FORCE_KILL_AFTER_MS}) and resolves when it has exited. The snapshot is kept. */
  async stop(): Promise<void> {
    this.running = false;
    this.gen++;
    clearTimeout(this.watchdog);
    clearTimeout(this.restartTimer);
    this.killChild();
    await Promise.allSettled(this.reaper.pending());
  }

  private emit(e: ActivityEvent): void {
    emitTo(this.listeners, e);
  }

  private killChild(): void {
    const child = this.child;
    this.child = undefined;
    if (child) this.reaper.kill(child);
  }

  private delayMs(): number {
    return Math.max(1, Math.round(this.options.intervalMs / 1000)) * 1000;
  }

  private async spawn(): Promise<void> {
    const gen = ++this.gen;
    this.tracker = new ActivityTracker();
    this.reader = new DmonReader();
    this.decoder = new StringDecoder("utf8");
    this.partial = "";
    const { execa } = await loadExeca();
    if (gen !== this.gen || !this.running) return;
    const { path, env, timeoutMs } = this.options;
    const child = execa(path, dmonArgs(this.delayMs() / 1000), streamOptions(env));
    this.child = child;
    let stderrTail = "";
    child.stdout?.on("data", (chunk: Buffer | string) => {
      if (gen === this.gen) this.onData(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer | string) => {
      stderrTail = (stderrTail + chunk.toString()).slice(-2000);
    });
    this.arm(gen, 2 * (this.delayMs() + timeoutMs));
    void child.then(
      (r) => this.onExit(gen, r, stderrTail),
      () => undefined,
    );
  }

  private arm(gen: number, ms: number): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (gen !== this.gen) return;
      this.gen++;
      this.killChild();
      this.fault(`nvidia-smi dmon printed no complete sample for ${ms} ms and was stopped`, false);
    }, ms);
  }

  private onData(chunk: Buffer | string): void {
    const text = this.partial + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    if (this.partial.length > 64 * 1024) this.partial = "";
    let changed = false;
    for (const raw of parts) {
      const r = this.reader.push(raw);
      if (r.kind === "sample") {
        this.tracker.push(r.sample, this.reader.gpmColumns);
        changed = true;
      } else if (r.kind === "problem") {
        this.lastUnreadable = r.problem.text.trim().slice(0, 200);
      }
    }
    if (!changed) return;
    // A sample re-arms the watchdog (bytes alone do not: a trickle must not keep a stuck dmon alive).
    this.arm(this.gen, this.delayMs() + this.options.timeoutMs);
    if (this.tracker.anySupported) {
      this.everSupported = true;
      this.faults = 0;
    }
    if (this.tracker.allUnsupported) {
      this.giveUp("");
      return;
    }
    this._snapshot = {
      state: this.tracker.anySupported ? "on" : "probing",
      note: this.tracker.gpuList().some((g) => g.support === "unsupported") ? NOT_AVAILABLE : "",
      gpus: this.tracker.gpuList(),
    };
    this.emit({ kind: "update", snapshot: this._snapshot });
  }

  private onExit(gen: number, r: Awaited<StreamChild>, stderrTail: string): void {
    if (gen !== this.gen) return;
    this.gen++;
    this.child = undefined;
    clearTimeout(this.watchdog);
    const own = [
      ...stderrTail
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean)
        .slice(-2),
      this.lastUnreadable,
    ]
      .filter(Boolean)
      .join(" ");
    const why =
      r.exitCode === undefined && !r.isTerminated
        ? `nvidia-smi could not be started (${r.code ?? "error"})`
        : r.exitCode === 0
          ? "nvidia-smi dmon stopped (exit 0)"
          : r.exitCode === undefined || r.exitCode === null
            ? `nvidia-smi dmon was killed by ${r.signal ?? "a signal"}`
            : `nvidia-smi dmon failed: ${describeExitCode(r.exitCode)}`;
    this.fault(own ? `${why}: ${own.slice(0, 300)}` : why, !this.everSupported);
  }

  /** A fault: restart with back-off, or give up when dmon never worked (`exited` before any value, or too many hangs). */
  private fault(message: string, exitedBeforeValues: boolean): void {
    this.faults++;
    if (!this.everSupported && (exitedBeforeValues || this.faults >= GIVE_UP_AFTER_FAULTS)) {
      this.giveUp(message);
      return;
    }
    if (!this.running) return;
    const retryInMs = Math.min(
      this.options.backoffMaxMs ?? 30_000,
      (this.options.backoffInitialMs ?? 1000) * 2 ** (this.faults - 1),
    );
    this.emit({ kind: "fault", message, retryInMs });
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.running) void this.spawn();
    }, retryInMs);
  }

  private giveUp(reason: string): void {
    this.gen++;
    clearTimeout(this.watchdog);
    this.killChild();
    this.running = false;
    this._snapshot = {
      state: "unsupported",
      note: reason ? `${NOT_AVAILABLE} (${reason})` : NOT_AVAILABLE,
      gpus: this.tracker.gpuList(),
    };
    this.emit({ kind: "update", snapshot: this._snapshot });
  }
}
