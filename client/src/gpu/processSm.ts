/**
 * Per-process SM % for the dashboard's Processes tab: `nvidia-smi pmon -c 1 -s u -i <GPUs>` every
 * {@link PMON_INTERVAL_MS} (15 s) for the GPUs that hold a compute process, four GPUs a call (pmon
 * reports on at most four: pmon.ts PMON_MAX_GPUS), while the monitor holds it for that tab, and nothing otherwise
 * (pmon.ts parses it and says what it costs). Runs through nvidiaSmi.ts runNvidiaSmi (argument
 * array, `gpuPilot.nvidiaSmiTimeoutMs` deadline, output cap) on the {@link Poller}, so two calls
 * never overlap.
 *
 * A failure (pmon not supported by this nvidia-smi or GPU, refused, timed out, unreadable) is kept
 * as the snapshot's calm note and pmon is not asked again for {@link PMON_RETRY_AFTER_MS}; showing
 * the tab again inside that time does not ask either. Nor does it within {@link PMON_INTERVAL_MS}
 * of the previous call: flipping between the tabs costs no extra calls. One exception: a process
 * that appears on a GPU the last round did not ask about ({@link ProcessSmReader.gpusChanged}) brings
 * the next round forward, at most once per interval, so its SM % does not wait up to 15 s.
 *
 * No `vscode` import (unit-tested against the fake nvidia-smi).
 */
import { runNvidiaSmi } from "../../../common/src/gpu/nvidiaSmi";
import { Poller } from "./poller";
import {
  pmonCalls,
  PMON_INTERVAL_MS,
  PMON_RETRY_AFTER_MS,
  PROCESS_SM_OFF,
  type ProcessSmSnapshot,
  pmonSnapshot,
} from "./pmon";

/** Where nvidia-smi is and how long one call may take (read at every call: settings may change). */
export interface ProcessSmSettings {
  path: string;
  /** Limit of one call, ms. */
  timeoutMs: number;
  /** Extra environment (tests: FAKE_NVIDIA_SMI_*). */
  env?: Record<string, string>;
  /**
   * nvidia-smi indices of the GPUs that hold a compute process now: pmon is asked about these
   * only, four at a time (pmon.ts {@link pmonCalls}); none, no call.
   */
  gpus: readonly number[];
}

/** Options of {@link ProcessSmReader} (tests shorten the periods). */
export interface ProcessSmOptions {
  /** Between two calls, ms (default {@link PMON_INTERVAL_MS}). */
  intervalMs?: number;
  /** After a failure, ms (default {@link PMON_RETRY_AFTER_MS}). */
  retryAfterMs?: number;
  /** ms since the epoch (tests). */
  now?: () => number;
}

/** Reads per-process SM % with pmon while started; see the module's comment. */
export class ProcessSmReader {
  private readonly poller: Poller;
  private readonly intervalMs: number;
  private readonly retryAfterMs: number;
  private readonly now: () => number;
  private _snapshot: ProcessSmSnapshot = PROCESS_SM_OFF;
  /** No call before this time, ms since the epoch (the interval after a call, the back-off after a failure). */
  private nextAt = 0;
  private calls = 0;
  /** The GPUs the last answer asked about. */
  private asked = new Set<number>();
  /** When {@link gpusChanged} last brought a round forward, ms since the epoch. */
  private earlyAt = -Infinity;

  /**
   * @param settings nvidia-smi's path, limit and environment, read at each call.
   * @param onChange called after each answer (the snapshot changed).
   */
  constructor(
    private readonly settings: () => ProcessSmSettings,
    private readonly onChange: (snapshot: ProcessSmSnapshot) => void,
    options: ProcessSmOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? PMON_INTERVAL_MS;
    this.retryAfterMs = options.retryAfterMs ?? PMON_RETRY_AFTER_MS;
    this.now = options.now ?? Date.now;
    this.poller = new Poller(
      (signal) => this.read(signal),
      () => Math.max(0, this.nextAt - this.now()),
    );
  }

  /** The last answer (`waiting` before the first; kept while stopped). */
  get snapshot(): ProcessSmSnapshot {
    return this._snapshot;
  }

  /** Whether it reads (started and not stopped). */
  get isActive(): boolean {
    return this.poller.isActive;
  }

  /** pmon calls made so far (tests and the API). */
  get callCount(): number {
    return this.calls;
  }

  /** Starts reading: at once, unless the last call is younger than the interval or a failure's back-off runs. */
  start(): void {
    if (this._snapshot.state === "off") this._snapshot = { ...PROCESS_SM_OFF, state: "waiting" };
    this.poller.setActive(true);
  }

  /**
   * The GPUs that hold a compute process changed (the monitor's process sample; nvidia-smi
   * indices). When one of them was not asked about in the last round, the next round runs now
   * instead of at the end of the interval: at most once per interval (a round costs about 31 ms of
   * CPU a call, BENCHMARKS.md), not during a failure's back-off, not while stopped, and not while a
   * round runs (it read the GPUs when it started; the next one asks about the new GPU).
   */
  gpusChanged(gpus: readonly number[]): void {
    if (!this.poller.isActive || this.poller.isRunning || this._snapshot.state !== "ok") return;
    const now = this.now();
    if (now - this.earlyAt < this.intervalMs || !gpus.some((g) => !this.asked.has(g))) return;
    this.earlyAt = now;
    this.nextAt = now;
    void this.poller.refresh();
  }

  /** Stops reading (a call in flight, some 40 ms, finishes). The last answer is kept, and so is a failure's back-off. */
  stop(): void {
    this.poller.setActive(false);
  }

  /** Stops for good. */
  dispose(): void {
    this.poller.dispose();
  }

  private async read(signal: AbortSignal): Promise<void> {
    const started = this.now();
    if (started < this.nextAt) return; // too soon: the poller comes back at nextAt
    const s = this.settings();
    let answer: ProcessSmSnapshot = { state: "ok", sm: new Map(), at: started, note: "" };
    for (const args of pmonCalls(s.gpus)) {
      this.calls++;
      const r = await runNvidiaSmi(s.path, args, {
        timeoutMs: s.timeoutMs,
        signal,
        ...(s.env ? { env: s.env } : {}),
      });
      if (r.kind === "canceled" || signal.aborted) return;
      const part = pmonSnapshot(r, this.now());
      answer = part.state === "failed" ? part : { ...part, sm: new Map([...answer.sm, ...part.sm]) };
      if (part.state === "failed") break;
    }
    const failed = answer.state === "failed";
    this.nextAt = failed ? this.now() + this.retryAfterMs : started + this.intervalMs;
    this.asked = failed ? new Set() : new Set(s.gpus);
    const snapshot = failed ? { ...answer, retryAt: this.nextAt } : answer;
    this._snapshot = snapshot;
    this.onChange(snapshot);
  }
}
