/**
 * The compute-process list streamed: one long-lived
 * `nvidia-smi --query-compute-apps=timestamp,<QUERY_APPS_FIELDS> --format=csv,nounits -lms <periodMs>`
 * instead of a fresh nvidia-smi every fifth tick, which was about 90% of the GPU view's CPU.
 *
 * nvidia-smi's man page: "-l SEC, --loop=SEC Continuously report query data at the specified
 * interval, rather than the default of just once" and "-lms ms, --loop-ms=ms" the same in ms.
 * What driver 580.159.04 prints for the looping process query (H100, measured 2026-12-05:
 * test/fixtures/nvidia-smi/h100-stream/compute-apps-timestamp-*.csv): the CSV header ONCE, then
 * per sample one row per process, and NOTHING for a sample with no process. So the header cannot
 * delimit samples (an earlier version of this module relied on it repeating, and gave up on that
 * driver). `--help-query-compute-apps` offers `timestamp`, "the timestamp of when the query was
 * made" (`2026/12/05 15:11:03.166`): asked as the first field, every row carries its sample's time
 * and the rows of one sample share it. {@link AppsAssembler} groups rows by it:
 * - a row with the open sample's timestamp joins it; one with another timestamp closes it (emitted)
 *   and opens the next; a line with no timestamp continues the open record (nvidia-smi prints a
 *   process name with a newline as it is) or, after a closed sample, opens one of its own (what it
 *   cannot read is reported as a problem, not dropped). The stream also lets a row join whose
 *   time is within half a period of the open sample's: the rows of one sample shared their time
 *   on the measured driver (one GPU), and should a driver stamp each GPU's rows apart (not
 *   measured: no machine of several GPUs was at hand), they still make one sample, while the next
 *   sample's rows, a period later, never join;
 * - a sample also closes after a quiet gap of `settleMs` (50 ms) after its rows, as rows come in one
 *   burst; should more rows with its timestamp follow, it is emitted again, whole.
 *
 * An empty sample prints nothing, so silence is the only sign of "no processes now": when no row
 * comes within one period plus `marginMs` (default period / 5, between 250 ms and 1 s) after the
 * last row, the sample is empty ({@link AppsSampler}), and so is each further period with no row.
 * Right after the start the first sample follows the header at once: no row within `marginMs` of
 * the header is an empty first sample. At the GPU view's period of 5 s, a process that exits
 * leaves the list 6 s after its last row (plus the check below, about 30 ms).
 *
 * A hung nvidia-smi (alive, silent) looks exactly like "no processes", so silence is cross-checked
 * with the one-shot query (QUERY_APPS_ARGS, about 23 ms of CPU on an H100): at the first silence
 * after rows (the processes seem to have gone), at the first silence after the start, and then
 * once every `checkEveryMs` (default 30 s) of continued silence. If the check lists no process,
 * the empty sample stands; if it lists processes, its list is emitted and the stream gets one more
 * period plus the margin to print a row; if it does not, it is hung: killed and restarted
 * (a fault, with back-off). If the check itself fails, the empty sample carries the failure as a
 * problem. The stream may thus claim "no processes" for at most `checkEveryMs` plus a period while
 * a hung nvidia-smi misses processes that started after it hung; processes it listed before are
 * checked for at once. Cost while idle: one check per 30 s (about 47 ms of CPU per minute).
 *
 * Faults never throw: a process that prints nothing at all (not even the header) within a period
 * plus `timeoutMs`, exits, or is found hung is restarted after an exponential back-off (1 s, 2 s,
 * ... at most 30 s); exit code 2 (arguments rejected, e.g. an nvidia-smi without the `timestamp`
 * field) is `unsupported`: the stream stops and the caller goes back to one query every fifth
 * tick (stream.ts).
 * No `vscode` import.
 */
import { StringDecoder } from "node:string_decoder";
import { ChildReaper, emitTo, streamOptions, type StreamChild } from "./streamProcess";
import {
  type ComputeApp,
  loadExeca,
  parseComputeApps,
  QUERY_APPS_ARGS,
  QUERY_APPS_FIELDS,
  runNvidiaSmi,
} from "../../../common/src/gpu/nvidiaSmi";

/** The fields of the streamed process query: the sample's time, then the one-shot query's fields. */
export const STREAM_APPS_FIELDS = ["timestamp", ...QUERY_APPS_FIELDS] as const;

/** Arguments of the streamed process query: timestamped rows (the sample delimiter), the header, no units, every `periodMs`. */
export function streamAppsArgs(periodMs: number): string[] {
  return [
    `--query-compute-apps=${STREAM_APPS_FIELDS.join(",")}`,
    "--format=csv,nounits",
    "-lms",
    String(Math.max(1, Math.round(periodMs))),
  ];
}

/** One sample of the process list. */
export interface AppsSample {
  apps: ComputeApp[];
  /** Unreadable lines, in words. */
  problems: string[];
}

/** True for the CSV header of the process query (its first field is `timestamp`, or `gpu_uuid` without it). */
export function isAppsHeader(line: string): boolean {
  return /^(?:timestamp|gpu_uuid)\s*,/.test(line.trim());
}

/** The `timestamp` field that starts a streamed row (`2026/12/05 15:11:03.166, `): the time and the whole prefix. */
const ROW_TIMESTAMP = /^\s*(\d{4}\/\d{1,2}\/\d{1,2} \d{1,2}:\d{2}:\d{2}(?:\.\d+)?)\s*, ?/;

/** The timestamp a streamed row starts with, or undefined for a line without one. */
export function rowTimestamp(line: string): string | undefined {
  return ROW_TIMESTAMP.exec(line)?.[1];
}

/** A row timestamp as a number of ms (its fields read as UTC: only differences matter), NaN when unreadable. */
function stampMs(stamp: string): number {
  const m = /^(\d+)\/(\d+)\/(\d+) (\d+):(\d+):(\d+)(?:\.(\d+))?$/.exec(stamp);
  if (!m) return NaN;
  const ms = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) + ms;
}

/**
 * Groups the streamed lines into samples by the timestamp each row starts with (see the module
 * comment). Pure: the caller feeds lines ({@link push}) and, after a quiet gap, calls {@link settle}.
 * - A row with the open sample's timestamp (or one at most `joinWithinMs` from it) joins it (also
 *   after {@link settle} returned it: then the next {@link settle} returns it again, whole).
 * - A row with another timestamp closes the open sample (returned unless {@link settle} returned it
 *   already) and opens the next.
 * - A line without a timestamp joins the open sample while it was not returned (the rest of a
 *   process name with a newline); otherwise it opens a sample of its own, to be reported.
 * - Header lines (however often they come) and blank lines are skipped.
 * Silence (an empty sample) is not its business: see {@link AppsSampler}.
 */
export class AppsAssembler {
  private open: { stamp: string | undefined; ms: number; lines: string[] } | undefined;
  private returned = false;
  /** Headers seen so far. */
  headers = 0;
  /** Other non-blank lines seen so far (rows, their continuation lines, unreadable lines). */
  rows = 0;

  /** @param joinWithinMs a row whose time is less than this from the open sample's joins it (default 0: the same timestamp only). */
  constructor(private readonly joinWithinMs = 0) {}

  /** Adds a line (without its newline). @returns the finished sample when this line closed one that was not returned yet. */
  push(line: string): AppsSample | undefined {
    if (line.trim() === "") return undefined;
    if (isAppsHeader(line)) {
      this.headers++;
      return undefined;
    }
    this.rows++;
    const m = ROW_TIMESTAMP.exec(line);
    const stamp = m?.[1];
    const rest = m ? line.slice(m[0].length) : line;
    const ms = stamp !== undefined ? stampMs(stamp) : NaN;
    const open = this.open;
    const joins =
      open !== undefined &&
      (stamp === undefined ? !this.returned : open.stamp === stamp || Math.abs(ms - open.ms) < this.joinWithinMs);
    if (joins && open) {
      open.lines.push(rest);
      this.returned = false;
      return undefined;
    }
    const done = open && !this.returned ? this.take() : undefined;
    this.open = { stamp, ms, lines: [rest] };
    this.returned = false;
    return done;
  }

  /** At a quiet moment: the open sample when it was not returned yet. */
  settle(): AppsSample | undefined {
    if (!this.open || this.returned) return undefined;
    this.returned = true;
    return this.take();
  }

  private take(): AppsSample {
    const parsed = parseComputeApps((this.open?.lines ?? []).join("\n"));
    return { apps: parsed.rows, problems: parsed.problems.map((p) => `Process query line ${p.line}: ${p.reason}`) };
  }
}

/** What the one-shot check query answered: its list, a failure in words, or nothing (stopped meanwhile). */
export type AppsCheck = { kind: "ok"; sample: AppsSample } | { kind: "failed"; message: string } | { kind: "canceled" };

/** Options of {@link AppsSampler}. */
export interface AppsSamplerOptions {
  /** Sampling period (`-lms`), ms. */
  periodMs: number;
  /** How long past the period a sample may come before the period counts as empty, ms (default {@link defaultMarginMs}). */
  marginMs?: number;
  /** Quiet gap that closes a burst of rows (one sample), ms (default 50). */
  settleMs?: number;
  /** While the stream prints no row, how often silence is cross-checked, ms (default 30 000). */
  checkEveryMs?: number;
  /** Runs the one-shot process query (see the module comment). */
  check(): Promise<AppsCheck>;
  /** A sample: `stream` (the stream's rows or its confirmed silence) or `check` (the check's list, which the stream failed to print). */
  sample(sample: AppsSample, from: "stream" | "check"): void;
  /** The stream stays silent although the check lists processes: it is hung. */
  hung(message: string): void;
}

/** The default margin past a period: period / 5, between 250 ms and 1 s. */
export function defaultMarginMs(periodMs: number): number {
  return Math.min(1000, Math.max(250, periodMs / 5));
}

/**
 * The timing half of the process stream, for one nvidia-smi run: turns its lines ({@link lines})
 * into samples, the empty ones from silence, and cross-checks silence with the one-shot query (see
 * the module comment). Uses `setTimeout` and `Date.now` only; {@link dispose} when the run ends.
 */
export class AppsSampler {
  private readonly assembler: AppsAssembler;
  private readonly periodMs: number;
  private readonly marginMs: number;
  private settleTimer: NodeJS.Timeout | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  private suspectTimer: NodeJS.Timeout | undefined;
  /** Whether the last sample from the stream listed processes (undefined: none yet in this run). */
  private lastHadApps: boolean | undefined;
  private lastCheckAt = 0;
  private disposed = false;
  /** Checks run so far (tests, the log). */
  checks = 0;

  constructor(private readonly o: AppsSamplerOptions) {
    this.periodMs = Math.max(1, o.periodMs);
    this.marginMs = o.marginMs ?? defaultMarginMs(this.periodMs);
    this.assembler = new AppsAssembler(this.periodMs / 2);
  }

  /** Lines seen so far other than headers and blank ones. */
  get rows(): number {
    return this.assembler.rows;
  }

  /** Headers seen so far. */
  get headers(): number {
    return this.assembler.headers;
  }

  /** Feeds the complete lines of one chunk of output (without their newlines). */
  lines(lines: readonly string[]): void {
    if (this.disposed) return;
    const rowsBefore = this.assembler.rows;
    const headersBefore = this.assembler.headers;
    for (const line of lines) {
      const done = this.assembler.push(line);
      if (done) this.fromStream(done);
    }
    if (this.assembler.rows > rowsBefore) {
      // The stream speaks: no longer suspect; the next sample is due within a period.
      clearTimeout(this.suspectTimer);
      this.suspectTimer = undefined;
      this.armQuiet(this.periodMs + this.marginMs);
    } else if (this.assembler.headers > headersBefore && this.assembler.rows === 0 && this.lastHadApps === undefined) {
      // The header starts the run; the first sample follows it at once.
      this.armQuiet(this.marginMs);
    }
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      if (this.disposed) return;
      const s = this.assembler.settle();
      if (s) this.fromStream(s);
    }, this.o.settleMs ?? 50);
  }

  /** Stops every timer; a check in flight is ignored when it answers. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.settleTimer);
    clearTimeout(this.quietTimer);
    clearTimeout(this.suspectTimer);
    this.settleTimer = this.quietTimer = this.suspectTimer = undefined;
  }

  private fromStream(sample: AppsSample): void {
    this.lastHadApps = sample.apps.length > 0;
    this.o.sample(sample, "stream");
  }

  private armQuiet(ms: number): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.onQuiet(), ms);
  }

  /** No row for a period plus the margin (or the margin after the header): an empty sample, checked where due. */
  private onQuiet(): void {
    this.quietTimer = undefined;
    if (this.disposed) return;
    const open = this.assembler.settle();
    if (open) this.fromStream(open);
    const due = this.lastHadApps !== false || Date.now() - this.lastCheckAt >= (this.o.checkEveryMs ?? 30_000);
    if (!due) {
      this.fromStream({ apps: [], problems: [] });
      this.armQuiet(this.periodMs);
      return;
    }
    void this.verify();
  }

  private async verify(): Promise<void> {
    const rows = this.assembler.rows;
    this.lastCheckAt = Date.now();
    this.checks++;
    const r = await this.o.check();
    // Stopped, or the stream printed meanwhile (its rows decide, and they armed the quiet timer).
    if (this.disposed || this.assembler.rows !== rows || r.kind === "canceled") return;
    if (r.kind === "failed") {
      this.fromStream({ apps: [], problems: [`Process list unavailable: ${r.message}`] });
      this.armQuiet(this.periodMs);
      return;
    }
    if (r.sample.apps.length === 0) {
      this.fromStream(r.sample);
      this.armQuiet(this.periodMs);
      return;
    }
    this.o.sample(r.sample, "check");
    const ms = this.periodMs + this.marginMs;
    const pids = r.sample.apps.map((a) => a.pid);
    clearTimeout(this.suspectTimer);
    this.suspectTimer = setTimeout(() => {
      this.suspectTimer = undefined;
      if (this.disposed) return;
      this.o.hung(
        `nvidia-smi's process stream printed no row for ${ms} ms after the one-shot query listed ${pids.length} process${pids.length === 1 ? "" : "es"} (pid ${pids.slice(0, 5).join(", ")}${pids.length > 5 ? ", ..." : ""}) and was stopped`,
      );
    }, ms);
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
  /** How long past its start nvidia-smi may print nothing at all beyond the period, ms; also the limit of each check query. */
  timeoutMs: number;
  env?: Record<string, string>;
  /** First restart delay, ms (default 1000), doubled per consecutive fault up to `backoffMaxMs` (default 30000). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** See {@link AppsSamplerOptions.marginMs}. */
  marginMs?: number;
  /** See {@link AppsSamplerOptions.checkEveryMs}. */
  checkEveryMs?: number;
}

/** Streams the process list from one long-lived nvidia-smi while started; see the module comment. */
export class AppsStream {
  private readonly listeners = new Set<(e: AppsEvent) => void>();
  private readonly reaper = new ChildReaper();
  private child: StreamChild | undefined;
  private gen = 0;
  private running = false;
  private faults = 0;
  private sampler: AppsSampler | undefined;
  private decoder = new StringDecoder("utf8");
  private partial = "";
  private watchdog: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private checkController: AbortController | undefined;
  private checkRun: Promise<unknown> | undefined;
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

  /** Stops: kills nvidia-smi (and a check query in flight) and resolves when they have exited. */
  async stop(): Promise<void> {
    this.running = false;
    this.gen++;
    this.endRun();
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.killChild();
    await Promise.allSettled([...this.reaper.pending(), ...(this.checkRun ? [this.checkRun] : [])]);
  }

  /** Ends the timers of the current run (its sampler, the start watchdog) and its check. */
  private endRun(): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.sampler?.dispose();
    this.sampler = undefined;
    this.checkController?.abort();
    this.checkController = undefined;
  }

  private killChild(): void {
    const child = this.child;
    this.child = undefined;
    if (child) this.reaper.kill(child);
  }

  private async spawn(): Promise<void> {
    this.endRun();
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const gen = ++this.gen;
    this.decoder = new StringDecoder("utf8");
    this.partial = "";
    const { execa } = await loadExeca();
    if (gen !== this.gen || !this.running) return;
    this.sampler = new AppsSampler({
      periodMs: this.o.periodMs,
      ...(this.o.marginMs !== undefined ? { marginMs: this.o.marginMs } : {}),
      ...(this.o.checkEveryMs !== undefined ? { checkEveryMs: this.o.checkEveryMs } : {}),
      check: () => this.check(gen),
      sample: (s, from) => {
        if (gen === this.gen) this.sample(s, from);
      },
      hung: (message) => {
        if (gen !== this.gen) return;
        this.gen++;
        this.endRun();
        this.killChild();
        this.fault(message);
      },
    });
    const child = execa(this.o.path, streamAppsArgs(this.o.periodMs), streamOptions(this.o.env));
    this.child = child;
    child.stdout?.on("data", (chunk: Buffer | string) => {
      if (gen === this.gen) this.onData(chunk);
    });
    // Until its first line: nvidia-smi prints the header (and the first sample) at once.
    const ms = this.o.periodMs + this.o.timeoutMs;
    this.watchdog = setTimeout(() => {
      if (gen !== this.gen) return;
      this.gen++;
      this.endRun();
      this.killChild();
      this.fault(`nvidia-smi's process stream printed nothing for ${ms} ms and was stopped`);
    }, ms);
    void child.then(
      (r) => {
        if (gen !== this.gen) return;
        this.gen++;
        this.endRun();
        this.child = undefined;
        if (r.exitCode === 2) this.giveUp(`nvidia-smi refused the looping process query (exit 2)`);
        else
          this.fault(
            `nvidia-smi's process stream ended (${r.exitCode === undefined ? (r.code ?? "not started") : r.exitCode === null ? (r.signal ?? "killed") : `exit ${r.exitCode}`})`,
          );
      },
      () => undefined,
    );
  }

  /** The one-shot process query that cross-checks the stream's silence. */
  private check(gen: number): Promise<AppsCheck> {
    const controller = new AbortController();
    this.checkController = controller;
    const run = (async (): Promise<AppsCheck> => {
      const r = await runNvidiaSmi(this.o.path, QUERY_APPS_ARGS, {
        timeoutMs: this.o.timeoutMs,
        signal: controller.signal,
        ...(this.o.env ? { env: this.o.env } : {}),
      });
      if (r.kind === "canceled" || controller.signal.aborted || gen !== this.gen) return { kind: "canceled" };
      if (r.kind !== "ok") return { kind: "failed", message: r.message };
      const parsed = parseComputeApps(r.stdout);
      return {
        kind: "ok",
        sample: {
          apps: parsed.rows,
          problems: parsed.problems.map((p) => `Process query line ${p.line}: ${p.reason}`),
        },
      };
    })();
    this.checkRun = run;
    void run.finally(() => {
      if (this.checkRun === run) this.checkRun = undefined;
      if (this.checkController === controller) this.checkController = undefined;
    });
    return run;
  }

  private onData(chunk: Buffer | string): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const text = this.partial + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    if (this.partial.length > 64 * 1024) this.partial = "";
    this.sampler?.lines(parts.map((raw) => raw.replace(/\r$/, "")));
  }

  private sample(sample: AppsSample, from: "stream" | "check"): void {
    this.lastSampleAt = Date.now();
    // The check's list means the stream failed to print it: no proof of health.
    if (from === "stream") this.faults = 0;
    emitTo(this.listeners, { kind: "sample", sample, at: this.lastSampleAt });
  }

  private giveUp(message: string): void {
    this.unsupported = message;
    void this.stop();
    emitTo(this.listeners, { kind: "unsupported", message });
  }

  private fault(message: string): void {
    this.faults++;
    const retryInMs = Math.min(
      this.o.backoffMaxMs ?? 30_000,
      (this.o.backoffInitialMs ?? 1000) * 2 ** (this.faults - 1),
    );
    emitTo(this.listeners, { kind: "fault", message, restarts: this.faults, retryInMs });
    if (!this.running) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.running) void this.spawn();
    }, retryInMs);
  }
}
