/**
 * Keeps the GPU inventory fresh and publishes it (context keys, the log, `onDidChange`), never in
 * pop-ups:
 *
 * - while the GPU view is visible (or a quick pick holds it, {@link GpuMonitor.hold}) one long-lived
 *   `nvidia-smi ... -lms <gpuPilot.refreshIntervalMs>` streams the GPU fields ({@link GpuStream}),
 *   a second one streams the compute processes every 5th interval (appsStream.ts; else they are
 *   queried on every 5th tick), and their users and command lines are read
 *   from /proc; everything stops when the view is hidden;
 * - while the GPU view or the dashboard is visible (not for a quick pick or the history panel), and
 *   `gpuPilot.monitor.smActivity` is `auto`, one `nvidia-smi dmon --gpm-metrics` streams SM
 *   activity ({@link ActivityStream}); support is probed once per nvidia-smi (until a settings change);
 * - while the dashboard's Processes tab is shown (and only then: {@link GpuMonitor.hold} with
 *   `processSm`), one round of `nvidia-smi pmon -c 1 -s u -i <GPUs>` every 15 s reads per-process SM %
 *   (sooner, once per interval, when a process appears on a GPU the last round did not ask about)
 *   ({@link ProcessSmReader}; a failure is said once and not retried for 5 minutes);
 * - {@link GpuMonitor.refresh} queries once (at start, for the language server; the Refresh button;
 *   a settings change, which supersedes a query in flight instead of joining it); a query that
 *   timed out is retried with back-off and a longer limit.
 */
import * as vscode from "vscode";
import * as config from "../config";
import { log } from "../log";
import {
  type ComputeApp,
  describeProblem,
  type Gpu,
  type Inventory,
  type MigDevice,
  type ProcessDetails,
  queryInventory,
  type SmiFailure,
} from "../../../common/src/gpu/nvidiaSmi";
import { Poller } from "./poller";
import { describeProcesses, type ProcOptions } from "../../../common/src/gpu/procinfo";
import { GpuHistory, historyCapacity } from "./history";
import { GpuStream, type StreamEvent } from "./stream";
import { type AmdTool, queryAmdInventory } from "../../../common/src/gpu/amdSmi";
import { detectVendor } from "../../../common/src/gpu/vendor";
import { findProgram } from "../../../common/src/run/which";
import { ACTIVITY_OFF, type ActivityEvent, type ActivitySnapshot, ActivityStream } from "./activity";
import { type IdleHeld, IdleHeldTracker } from "./idleHeld";
import { ProcessSmReader } from "./processSm";
import { PMON_RETRY_AFTER_MS, PROCESS_SM_OFF, type ProcessSmSnapshot } from "./pmon";

/**
 * Value of the `gpuPilot.nvidiaSmiState` context key:
 * `unknown` before the first answer, `ok`, `missing` (not installed / not executable: the view shows
 * its welcome content), `failed` (it ran but failed, timed out or printed garbage).
 */
export type SmiState = "unknown" | "ok" | "missing" | "failed";

/** Context key holding {@link SmiState}. */
export const STATE_KEY = "gpuPilot.nvidiaSmiState";
/** Context key holding the last problem, in words ("" when none). */
export const PROBLEM_KEY = "gpuPilot.nvidiaSmiProblem";

/** Settings whose change restarts the stream and re-queries (path, limit, interval). */
const MONITOR_KEYS: readonly string[] = [...config.NVIDIA_SMI_KEYS, `${config.SECTION}.refreshIntervalMs`];
/** Settings whose change starts SM activity afresh (and probes its support again). */
const ACTIVITY_KEYS: readonly string[] = [...MONITOR_KEYS, `${config.SECTION}.monitor.smActivity`];

/** A calm warning shown as a row of the view (not a failure of nvidia-smi as a whole). */
export interface MonitorNotice {
  /** Stable id (tree item id). */
  id: string;
  /** One line. */
  message: string;
  /** More words for the tooltip. */
  detail: string;
}

/** Options of {@link GpuMonitor}; all optional (tests shorten the back-off and point /proc elsewhere). */
export interface MonitorOptions {
  /** pid of this workspace's run while it runs (`ctx.lastRun.pid`), to mark its processes. */
  runPid?: () => number | undefined;
  /** Where /proc and /etc/passwd are (tests). */
  proc?: ProcOptions;
  /** First retry delay after a fault, ms (default 1000; doubled per consecutive fault, at most {@link backoffMaxMs}). */
  backoffInitialMs?: number;
  /** Largest retry delay, ms (default 30000). */
  backoffMaxMs?: number;
  /** Compute-process query on every N-th streamed tick (default 5). */
  processesEvery?: number;
  /** Extra environment for nvidia-smi (tests: FAKE_NVIDIA_SMI_*). */
  env?: Record<string, string>;
}

/** Retries of a one-shot query that timed out (each with a doubled limit, at most 4x). */
const ONE_SHOT_RETRIES = 4;

/** What the status bar and the terminal environment read of the monitor. */
export interface InventorySource {
  /** The last inventory; undefined before the first answer. */
  readonly inventory: Inventory | undefined;
  /** Fires after every update. */
  readonly onDidChange: vscode.Event<void>;
}

/** Owns the inventory; fires {@link onDidChange} after every update (tick, process list, query). */
export class GpuMonitor implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires after each update (the numbers change even when the state does not). */
  readonly onDidChange = this.emitter.event;
  private readonly poller: Poller;
  private readonly disposables: vscode.Disposable[] = [];
  private _state: SmiState = "unknown";
  private _inventory: Inventory | undefined;
  /** Processes holding memory on idle GPUs (idleHeld.ts), fed every sample. */
  private readonly idleTracker = new IdleHeldTracker(config.idleHeldMinutes() * 60_000);
  private _failure: SmiFailure | undefined;
  private _retryAt: number | undefined;
  private lastLogged = "";
  private contextState: string | undefined;
  private contextProblem: string | undefined;
  private disposed = false;

  private stream: GpuStream | undefined;
  private streamSub: { dispose(): void } | undefined;
  private viewVisible = false;
  private holds = 0;
  private lastTickAt = 0;
  private streamNotice: MonitorNotice | undefined;
  private lastFaultLogged = "";

  private activityStream: ActivityStream | undefined;
  private activitySub: { dispose(): void } | undefined;
  private activityHolds = 0;
  private activityLogged = "";

  private processSmReader: ProcessSmReader | undefined;
  private processSmHolds = 0;
  private processSmLogged = "";

  private apps: ComputeApp[] = [];
  private mig: MigDevice[] = [];
  private processes: ProcessDetails[] = [];
  private processProblems: string[] = [];
  private detailsSeq = 0;

  /**
   * Utilisation and memory of each GPU over the last `gpuPilot.history.minutes`, from the streamed
   * ticks (the GPU History panel); a fixed-size ring per GPU.
   */
  readonly history = new GpuHistory(historyCapacity(config.historyMinutes(), config.refreshIntervalMs()));

  /** Every GPU seen since the last reset (by UUID), to notice GPUs that disappear. */
  private readonly known = new Map<string, Gpu>();
  private vanished: MonitorNotice[] = [];

  private retryTimer: NodeJS.Timeout | undefined;
  private retryAttempt = 0;

  /**
   * Set when nvidia-smi (by its default bare name) is not installed and amd-smi or rocm-smi is
   * (common/src/gpu/vendor.ts): the GPUs are then read from that tool by polling (no stream: AMD's tools have
   * no sampling loop GPU Pilot reads).
   */
  private amdTool: AmdTool | undefined;

  constructor(private readonly options: MonitorOptions = {}) {
    this.poller = new Poller(
      (signal) => this.query(signal),
      () => config.refreshIntervalMs(),
      (e) => log.error("GPU query failed unexpectedly", e),
    );
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (config.affects(e, [`${config.SECTION}.history.minutes`, `${config.SECTION}.refreshIntervalMs`])) {
          this.history.resize(historyCapacity(config.historyMinutes(), config.refreshIntervalMs()));
        }
        if (config.affects(e, ACTIVITY_KEYS)) this.resetActivity();
        if (!config.affects(e, MONITOR_KEYS)) return;
        this.resetProcessSm();
        this.known.clear();
        this.vanished = [];
        this.stream?.configure(this.streamSettings());
        void this.refresh(true);
      }),
    );
    void this.setContext();
  }

  /** {@link SmiState} of the last answer. */
  get state(): SmiState {
    return this._state;
  }

  /** The last inventory; undefined unless {@link state} is `ok`. */
  get inventory(): Inventory | undefined {
    return this._inventory;
  }

  /** Why nvidia-smi failed; undefined when {@link state} is `ok` or `unknown`. */
  get failure(): SmiFailure | undefined {
    return this._failure;
  }

  /** When the next automatic retry after a failure happens, ms since the epoch; undefined when none is planned. */
  get retryAt(): number | undefined {
    return this._retryAt;
  }

  /** The last problem in words ("" when none): the failure, else the inventory's parse problems. */
  get problem(): string {
    if (this._failure) return this._failure.message;
    return this._inventory?.problems.join("; ") ?? "";
  }

  /** Warnings to show as rows while the numbers keep coming: a restarting stream, GPUs that disappeared. */
  get notices(): MonitorNotice[] {
    return [...(this.streamNotice ? [this.streamNotice] : []), ...this.vanished];
  }

  /** Whether the nvidia-smi stream runs (or waits to restart). */
  get isStreaming(): boolean {
    return this.stream?.isRunning ?? false;
  }

  /** The stream's nvidia-smi process id while one runs. */
  get streamPid(): number | undefined {
    return this.stream?.pid;
  }

  /**
   * SM activity per GPU index from `nvidia-smi dmon --gpm-metrics` ({@link ActivityStream}):
   * {@link ACTIVITY_OFF} when `gpuPilot.monitor.smActivity` is `off` or dmon never ran; the last
   * snapshot otherwise (kept while the view is hidden; `unsupported` once probed absent).
   */
  get activity(): ActivitySnapshot {
    if (config.smActivity() === "off") return ACTIVITY_OFF;
    return this.activityStream?.snapshot ?? ACTIVITY_OFF;
  }

  /**
   * Per-process SM % from `nvidia-smi pmon` ({@link ProcessSmReader}) while a holder asks for it
   * (the Processes tab); {@link PROCESS_SM_OFF} otherwise, and `failed` with its reason for AMD GPUs.
   */
  get processSm(): ProcessSmSnapshot {
    if (this.processSmHolds === 0) return PROCESS_SM_OFF;
    if (this.amdTool)
      return {
        ...PROCESS_SM_OFF,
        state: "failed",
        note: "it comes from nvidia-smi pmon, which AMD GPUs do not have",
      };
    return this.processSmReader?.snapshot ?? PROCESS_SM_OFF;
  }

  /** Whether per-process SM % is being read now (the Processes tab is shown), and pmon calls made so far. */
  get processSmReading(): { active: boolean; calls: number } {
    return { active: this.processSmReader?.isActive ?? false, calls: this.processSmReader?.callCount ?? 0 };
  }

  /** The dmon process id while one runs. */
  get activityPid(): number | undefined {
    return this.activityStream?.pid;
  }

  /**
   * The process `pid` on GPU `gpuUuid` when it has held memory while the GPU did nothing for
   * `gpuPilot.monitor.idleHeldMinutes` (idleHeld.ts); undefined otherwise or when that is 0.
   */
  idleHeld(pid: number, gpuUuid: string, now = Date.now()): IdleHeld | undefined {
    return this.idleTracker.flagged(pid, gpuUuid, now);
  }

  /** Feeds the idle-held tracker one sample: utilisation, SM activity (dmon) by GPU, the processes. */
  private observeIdle(inv: Inventory): void {
    this.idleTracker.setThreshold(config.idleHeldMinutes() * 60_000);
    const sm = new Map(this.activity.gpus.map((g) => [g.index, g.latest?.smActivityPercent]));
    this.idleTracker.observe({
      at: Date.now(),
      gpus: inv.gpus.map((g) => ({
        uuid: g.uuid,
        utilizationGpuPercent: g.utilizationGpuPercent,
        smActivityPercent: sm.get(g.index),
      })),
      apps: inv.apps,
    });
  }

  /** User and command line of a compute process, once read from /proc. */
  processOf(pid: number): ProcessDetails | undefined {
    return this.processes.find((p) => p.pid === pid);
  }

  /**
   * Streams while the view is visible (TreeView.onDidChangeVisibility).
   * @returns the listener registration (also disposed with the monitor).
   */
  followVisibility(view: vscode.TreeView<unknown>): vscode.Disposable {
    this.viewVisible = view.visible;
    this.updateStreaming();
    const sub = view.onDidChangeVisibility((e) => {
      this.viewVisible = e.visible;
      this.updateStreaming();
    });
    this.disposables.push(sub);
    return sub;
  }

  /**
   * Keeps the stream running until the returned object is disposed (a quick pick with live
   * numbers). `activity: true` (the dashboard) also streams SM activity; `processSm: true` (the
   * dashboard's Processes tab, while shown) also reads per-process SM % with pmon every 15 s.
   */
  hold(options: { activity?: boolean; processSm?: boolean } = {}): vscode.Disposable {
    const activity = options.activity === true;
    const processSm = options.processSm === true;
    this.holds++;
    if (activity) this.activityHolds++;
    if (processSm) this.processSmHolds++;
    this.updateStreaming();
    let released = false;
    return {
      dispose: () => {
        if (released) return;
        released = true;
        this.holds--;
        if (activity) this.activityHolds--;
        if (processSm) this.processSmHolds--;
        this.updateStreaming();
      },
    };
  }

  /**
   * Queries now and resolves when the inventory (or failure) is updated; never rejects. Joins a
   * query in flight, unless `supersede` (inputs changed): then that query is aborted and a new one
   * runs. A stream waiting to restart after a fault restarts now.
   */
  refresh(supersede = false): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.retryAttempt = 0;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.stream?.isRunning && (supersede || this.stream.faultCount > 0)) this.stream.restart(this.streamSettings());
    return supersede ? this.poller.restart() : this.poller.refresh();
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.retryTimer);
    this.poller.dispose();
    this.streamSub?.dispose();
    void this.stream?.stop();
    this.activitySub?.dispose();
    void this.activityStream?.stop();
    this.processSmReader?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** Stops the stream and waits for nvidia-smi to exit (tests). */
  async stopStreaming(): Promise<void> {
    await Promise.all([this.stream?.stop(), this.activityStream?.stop()]);
  }

  // ---------------------------------------------------------------------------------------------

  private streamSettings() {
    return {
      path: config.nvidiaSmiPath(),
      intervalMs: config.refreshIntervalMs(),
      timeoutMs: config.nvidiaSmiTimeoutMs(),
      ...(this.options.env ? { env: this.options.env } : {}),
      ...(this.options.processesEvery !== undefined ? { processesEvery: this.options.processesEvery } : {}),
      ...(this.options.backoffInitialMs !== undefined ? { backoffInitialMs: this.options.backoffInitialMs } : {}),
      ...(this.options.backoffMaxMs !== undefined ? { backoffMaxMs: this.options.backoffMaxMs } : {}),
    };
  }

  private updateStreaming(): void {
    const want = !this.disposed && (this.viewVisible || this.holds > 0);
    if (this.amdTool) {
      // AMD: poll every gpuPilot.refreshIntervalMs while the view is visible instead of streaming.
      if (this.stream?.isRunning) void this.stream.stop();
      this.poller.setActive(want);
      this.updateProcessSm();
      return;
    }
    if (want) {
      if (!this.stream) {
        this.stream = new GpuStream(this.streamSettings());
        this.streamSub = this.stream.on((e) => this.onStream(e));
      }
      if (!this.stream.isRunning) {
        this.stream.configure(this.streamSettings());
        this.stream.start();
        log.debug(`Streaming GPU numbers every ${config.refreshIntervalMs()} ms (view visible).`);
      }
    } else if (this.stream?.isRunning) {
      void this.stream.stop();
      this.streamNotice = undefined;
      log.debug("GPU view hidden: nvidia-smi stream stopped.");
    }
    this.updateActivity();
    this.updateProcessSm();
  }

  /** pmon every 15 s while the Processes tab holds it (never for AMD's tools). */
  private updateProcessSm(): void {
    const want = !this.disposed && !this.amdTool && this.processSmHolds > 0;
    if (want) {
      this.processSmReader ??= new ProcessSmReader(
        () => ({
          path: config.nvidiaSmiPath(),
          timeoutMs: config.nvidiaSmiTimeoutMs(),
          ...(this.options.env ? { env: this.options.env } : {}),
          gpus: this.gpusWithApps(),
        }),
        (snapshot) => this.onProcessSm(snapshot),
      );
      this.processSmReader.start();
    } else {
      this.processSmReader?.stop();
    }
  }

  /** nvidia-smi indices of the GPUs that hold a compute process in the last process sample (what pmon is asked about). */
  private gpusWithApps(): number[] {
    const uuids = new Set(this.apps.map((a) => a.gpuUuid.toLowerCase()));
    return (this._inventory?.gpus ?? []).filter((g) => uuids.has(g.uuid.toLowerCase())).map((g) => g.index);
  }

  /** A settings change (another nvidia-smi, another limit): the next read asks afresh, failure or not. */
  private resetProcessSm(): void {
    this.processSmReader?.dispose();
    this.processSmReader = undefined;
    this.processSmLogged = "";
    this.updateProcessSm();
  }

  private onProcessSm(snapshot: ProcessSmSnapshot): void {
    if (this.disposed) return;
    if (snapshot.note && snapshot.note !== this.processSmLogged) {
      this.processSmLogged = snapshot.note;
      log.info(
        `Per-process SM % is not available: ${snapshot.note}. The Processes tab shows – and asks again in ${PMON_RETRY_AFTER_MS / 60_000} minutes.`,
      );
    } else if (!snapshot.note) {
      this.processSmLogged = "";
    }
    this.emitter.fire();
  }

  /** One dmon while the tree or the dashboard is visible and the setting is `auto`. */
  private updateActivity(): void {
    const want = !this.disposed && config.smActivity() === "auto" && (this.viewVisible || this.activityHolds > 0);
    if (want) {
      if (!this.activityStream) {
        this.activityStream = new ActivityStream({
          path: config.nvidiaSmiPath(),
          intervalMs: config.refreshIntervalMs(),
          timeoutMs: config.nvidiaSmiTimeoutMs(),
          ...(this.options.env ? { env: this.options.env } : {}),
          ...(this.options.backoffInitialMs !== undefined ? { backoffInitialMs: this.options.backoffInitialMs } : {}),
          ...(this.options.backoffMaxMs !== undefined ? { backoffMaxMs: this.options.backoffMaxMs } : {}),
        });
        this.activitySub = this.activityStream.on((e) => this.onActivity(e));
      }
      if (!this.activityStream.isRunning && this.activityStream.snapshot.state !== "unsupported")
        this.activityStream.start();
    } else if (this.activityStream?.isRunning) {
      void this.activityStream.stop();
    }
  }

  /** A settings change: the next dmon probes support again. */
  private resetActivity(): void {
    this.activitySub?.dispose();
    void this.activityStream?.stop();
    this.activityStream = undefined;
    this.activitySub = undefined;
    this.activityLogged = "";
    this.updateActivity();
    this.emitter.fire();
  }

  private onActivity(e: ActivityEvent): void {
    if (this.disposed) return;
    if (e.kind === "fault") {
      log.debug(`nvidia-smi dmon: ${e.message}. Restarting in ${Math.round(e.retryInMs / 100) / 10} s.`);
      return;
    }
    const note = e.snapshot.note;
    if (note && note !== this.activityLogged) {
      this.activityLogged = note;
      log.info(`${note}. GPU-Util is shown alone; gpuPilot.monitor.smActivity: "off" stops probing.`);
    }
    this.emitter.fire();
  }

  private onStream(e: StreamEvent): void {
    if (this.disposed || this.amdTool) return;
    switch (e.kind) {
      case "started":
        log.debug(
          `nvidia-smi stream started (pid ${e.pid ?? "?"}${e.restarts ? `, after ${e.restarts} fault(s)` : ""}).`,
        );
        return;
      case "tick": {
        const { tick } = e;
        if (tick.gpus.length === 0) {
          const p = tick.problems[0];
          this.setFailure(
            {
              kind: "garbage",
              message: `nvidia-smi's GPU list could not be read: ${p ? describeProblem("Streamed", p) : "no GPU lines"}`,
              sample: p?.text ?? "",
            },
            undefined,
          );
          return;
        }
        this.lastTickAt = Date.now();
        this.streamNotice = undefined;
        this.history.push(tick);
        const uuids = new Set(tick.gpus.map((g) => g.uuid.toLowerCase()));
        const problems = [...tick.problems.map((p) => describeProblem("Streamed", p)), ...this.processProblems];
        this.setInventory({
          gpus: tick.gpus,
          apps: this.apps.filter((a) => uuids.has(a.gpuUuid.toLowerCase())),
          problems,
          takenAt: tick.at,
          mig: this.mig.filter((m) => uuids.has(m.gpuUuid.toLowerCase())),
          processes: this.processes,
        });
        return;
      }
      case "processes":
        this.apps = e.processes.apps;
        this.mig = e.processes.mig;
        this.processProblems = e.processes.problems;
        this.processSmReader?.gpusChanged(this.gpusWithApps());
        void this.readDetails();
        return;
      case "fault": {
        const retry = e.retryInMs !== undefined ? ` Restarting in ${Math.round(e.retryInMs / 100) / 10} s.` : "";
        const key = `${e.failure.kind}:${e.failure.message}`;
        if (key !== this.lastFaultLogged) {
          this.lastFaultLogged = key;
          log.warn(
            `nvidia-smi stream: ${e.failure.message}${e.failure.kind === "failed" ? ` (${e.failure.explanation})` : ""}.${retry}`,
          );
        }
        if (e.afterTicks > 0 && this._state === "ok" && e.failure.kind !== "missing") {
          // It worked and stopped: keep the last numbers, say so, restart.
          this.streamNotice = {
            id: "notice/stream",
            message: `nvidia-smi stopped streaming: ${e.failure.message}.${retry}`,
            detail: e.failure.kind === "failed" ? e.failure.explanation : "",
          };
          this.publish();
        } else {
          this.setFailure(e.failure, e.retryInMs === undefined ? undefined : Date.now() + e.retryInMs);
        }
        return;
      }
    }
  }

  /** Reads user and command line of the current processes from /proc, then publishes. */
  private async readDetails(): Promise<void> {
    const seq = ++this.detailsSeq;
    const runPid = this.options.runPid?.();
    const details = await describeProcesses(this.apps, runPid, this.options.proc, this.processes);
    if (seq !== this.detailsSeq || this.disposed) return;
    this.processes = details;
    if (this._inventory) {
      const uuids = new Set(this._inventory.gpus.map((g) => g.uuid.toLowerCase()));
      const fromStream = this.lastTickAt > 0 && this.isStreaming;
      this.setInventory({
        ...this._inventory,
        apps: this.apps.filter((a) => uuids.has(a.gpuUuid.toLowerCase())),
        mig: this.mig.filter((m) => uuids.has(m.gpuUuid.toLowerCase())),
        processes: details,
        problems: fromStream
          ? [...this._inventory.problems.filter((p) => !this.isProcessProblem(p)), ...this.processProblems]
          : this._inventory.problems,
      });
    }
  }

  private isProcessProblem(p: string): boolean {
    return /^(Process list unavailable|Process query line|MIG device list unavailable|nvidia-smi -L line)/.test(p);
  }

  private async query(signal: AbortSignal): Promise<void> {
    const path = config.nvidiaSmiPath();
    const base = config.nvidiaSmiTimeoutMs();
    const timeoutMs = base * Math.min(4, 2 ** this.retryAttempt);
    const env = this.options.env ? { env: this.options.env } : {};
    let r = this.amdTool ? undefined : await queryInventory({ path, timeoutMs, signal, ...env });
    if (!r || (r.kind === "missing" && !/[\\/]/.test(path))) {
      // nvidia-smi is not installed: an AMD ROCm machine has amd-smi or rocm-smi instead.
      const amd = detectVendor((n) => findProgram(n, { pathEnv: process.env.PATH })).amdTool;
      if (amd && amd.path !== this.amdTool?.path) log.info(`nvidia-smi not found; reading AMD GPUs with ${amd.path}.`);
      const was = this.amdTool;
      this.amdTool = amd;
      if (amd) r = await queryAmdInventory(amd, { timeoutMs, signal, ...env });
      else r ??= await queryInventory({ path, timeoutMs, signal, ...env });
      if (!was !== !amd) this.updateStreaming();
    }
    if (r.kind === "canceled" || signal.aborted || this.disposed) return;
    if (r.kind === "ok") {
      this.retryAttempt = 0;
      this.apps = r.inventory.apps;
      this.mig = r.inventory.mig ?? [];
      this.processProblems = [];
      this.setInventory({ ...r.inventory, processes: this.processes });
      this.processSmReader?.gpusChanged(this.gpusWithApps());
      await this.readDetails();
      return;
    }
    if (this.isStreaming && Date.now() - this.lastTickAt < 3 * config.refreshIntervalMs()) {
      log.warn(`${path}: a one-off query failed while the stream works (${r.message}); keeping the streamed numbers.`);
      return;
    }
    let retryAt: number | undefined;
    if (r.kind === "timeout" && this.retryAttempt < ONE_SHOT_RETRIES) {
      const delay = Math.min(
        this.options.backoffMaxMs ?? 30_000,
        (this.options.backoffInitialMs ?? 1000) * 2 ** this.retryAttempt,
      );
      this.retryAttempt++;
      retryAt = Date.now() + delay;
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (!this.disposed) void this.poller.refresh();
      }, delay);
    }
    this.setFailure(r, retryAt);
  }

  private setInventory(inv: Inventory): void {
    this.trackGpus(inv.gpus);
    this.observeIdle(inv);
    this._state = "ok";
    this._inventory = inv;
    this._failure = undefined;
    this._retryAt = undefined;
    this.publish();
  }

  private setFailure(f: SmiFailure, retryAt: number | undefined): void {
    this._state = f.kind === "missing" ? "missing" : "failed";
    this._inventory = undefined;
    this._failure = f;
    this._retryAt = retryAt;
    this.publish();
  }

  private publish(): void {
    this.logChange();
    void this.setContext();
    this.emitter.fire();
  }

  /** Notices GPUs that appeared or disappeared since the last answer (logged; a row while one is gone). */
  private trackGpus(gpus: readonly Gpu[]): void {
    const now = new Map(gpus.map((g) => [g.uuid.toLowerCase(), g]));
    for (const [uuid, g] of now) {
      if (!this.known.has(uuid) && this.known.size > 0) log.info(`GPU ${g.index} (${g.name}, ${g.uuid}) appeared.`);
      this.known.set(uuid, g);
    }
    const vanished: MonitorNotice[] = [];
    for (const [uuid, g] of this.known) {
      if (now.has(uuid)) continue;
      const taker = gpus.find((x) => x.index === g.index);
      const detail = taker
        ? `Index ${g.index} now names ${taker.uuid}: a selection by index points at another GPU now. Select by UUID (gpuPilot.selectBy) to be safe.`
        : "It may have fallen off the bus or been reset; runs that ask for it will not find it.";
      vanished.push({
        id: `notice/vanished/${uuid}`,
        message: `GPU ${g.index} (${g.name}, ${g.pciBusId}) is no longer listed by nvidia-smi`,
        detail,
      });
    }
    const before = new Set(this.vanished.map((v) => v.id));
    for (const v of vanished) if (!before.has(v.id)) log.warn(`${v.message}. ${v.detail}`);
    for (const v of this.vanished)
      if (!vanished.some((x) => x.id === v.id))
        log.info(`${v.message.replace(" is no longer listed by nvidia-smi", "")} is back.`);
    this.vanished = vanished;
  }

  /** Logs when the outcome changes (not on every tick). */
  private logChange(): void {
    const path = config.nvidiaSmiPath();
    const inv = this._inventory;
    const f = this._failure;
    const summary = inv
      ? `ok: ${inv.gpus.map((g) => `${g.index}:${g.uuid}`).join(" ")} | ${inv.problems.join(" | ")}`
      : `${f?.kind}: ${f?.message}`;
    if (summary === this.lastLogged) return;
    this.lastLogged = summary;
    if (inv) {
      log.info(
        `${path}: ${inv.gpus.length} GPU(s): ${inv.gpus.map((g) => `GPU ${g.index} ${g.name} (${g.uuid}, ${g.pciBusId})`).join("; ") || "none"}`,
      );
      for (const p of inv.problems) log.warn(`${path}: ${p}`);
    } else if (f) {
      switch (f.kind) {
        case "missing":
          log.warn(
            `${path} could not be started (${f.code}): ${f.message}. Set gpuPilot.nvidiaSmiPath if nvidia-smi is installed elsewhere.`,
          );
          break;
        case "failed":
          log.warn(`${path} failed: ${f.explanation}. Its message: ${f.message}`);
          break;
        case "timeout":
          log.warn(
            `${path} timed out after ${f.ms} ms (gpuPilot.nvidiaSmiTimeoutMs) and was stopped.${this._retryAt ? ` Retrying in ${Math.round((this._retryAt - Date.now()) / 1000)} s.` : ""}`,
          );
          break;
        case "garbage":
          log.warn(`${path} printed output GPU Pilot cannot read: ${f.message}. Sample: ${JSON.stringify(f.sample)}`);
          break;
        case "canceled":
          break;
      }
    }
  }

  private async setContext(): Promise<void> {
    const problem = this.problem;
    if (this.contextState !== this._state) {
      this.contextState = this._state;
      await vscode.commands.executeCommand("setContext", STATE_KEY, this._state);
    }
    if (this.contextProblem !== problem) {
      this.contextProblem = problem;
      await vscode.commands.executeCommand("setContext", PROBLEM_KEY, problem);
    }
  }
}
