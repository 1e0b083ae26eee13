/**
 * What the GPU dashboard (dashboard.ts, its webview client/webview/dashboard.ts) shows, as plain
 * data: one card per GPU with its labelled utilisation and memory bars (fractions 0..1 and the
 * threshold level that colours them), temperature, power and cap, free memory, a sparkline of the
 * recent minutes from the history ring (history.ts), its MIG devices and its compute processes
 * (sortable by any column: processTable.ts), the process table of every GPU (filtered by user), and
 * whether it is ticked in the selection.
 *
 * Where `nvidia-smi dmon --gpm-metrics` works (activity.ts), a card also shows SM activity beside
 * GPU-Util and flags "busy but idle" on the GPU and on the user's own processes on it.
 *
 * Pure (no `vscode`): every number is written by units.ts, so the dashboard reads as the tree, the
 * status bar and the quick pick do. Built from the monitor's inventory, the selection entries and
 * a history snapshot.
 */
import { type ActivitySnapshot, busyButIdleSentence, NOT_AVAILABLE } from "./activity";
import type { HistorySnapshot } from "./history";
import type { ComputeApp, Gpu, Inventory, MigDevice, ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import { appsOf, gpuWarnings, printableName, processUser, programCommand, unknownUserNote } from "./present";
import { isMigSelected, isSelected } from "../../../common/src/gpu/selection";
import {
  formatFree,
  formatMemoryPair,
  formatMiB,
  formatPercent,
  formatPower,
  formatTemperature,
  fraction,
  type Level,
  levelOf,
  memoryBreakdown,
  shortGpuName,
} from "../../../common/src/gpu/units";
import {
  DEFAULT_SORT,
  type DashboardProcess,
  filterByUser,
  hostFields,
  processSummary,
  type ProcessSort,
  smFields,
  sortProcesses,
  usersOf,
} from "./processTable";
import type { ProcessSmSnapshot } from "./pmon";

export {
  DEFAULT_SORT,
  type DashboardProcess,
  nextSort,
  type ProcessSort,
  type ProcessSortKey,
  sortProcesses,
} from "./processTable";

/** A MIG device row of a card. */
export interface DashboardMig {
  uuid: string;
  profile: string;
  device: number;
  selected: boolean;
}

/** A bar: the fraction filled (0..1, null when unknown), its colour level and its text. */
export interface DashboardBar {
  fraction: number | null;
  level: Level;
  text: string;
}

/** One GPU's card. */
export interface DashboardGpu {
  uuid: string;
  index: number;
  /** nvidia-smi's `name`, e.g. `NVIDIA H200`. */
  name: string;
  /** The name without the vendor prefix (units.ts shortGpuName), e.g. `H200`: the compact row's. */
  shortName: string;
  /** The compact row's process summary (processTable.ts processSummary): `2 procs · alice, bob`, "" without. */
  summary: string;
  selected: boolean;
  lost: boolean;
  /** `utilization.gpu`: text `12%`. */
  utilization: DashboardBar;
  /**
   * SM activity (dmon's GPM `smutil`, percentage of SMs busy): text `95%`, `…` while dmon has not
   * printed a value yet; absent when not shown (`gpuPilot.monitor.smActivity` off, or not
   * available on this GPU: see {@link activityNote}).
   */
  smActivity?: DashboardBar;
  /** Why SM activity is not shown, once and calmly (the Util row's tooltip): {@link NOT_AVAILABLE}; absent otherwise. */
  activityNote?: string;
  /** GPU-Util high while SM activity is near zero over the last samples (activity.ts, BUSY_UTIL_PERCENT); the sentence in {@link busyButIdleText}. */
  busyButIdle: boolean;
  /** The flag in words (with the numbers), "" when not flagged. */
  busyButIdleText: string;
  /** `memory.used` of `memory.total`: text `3.3/140.4 GiB`. */
  memory: DashboardBar;
  /** `35°C`. */
  temperature: string;
  /** `109/700 W` (draw/cap). */
  power: string;
  /** `139.8 GiB free` (nvidia-smi's memory.free). */
  free: string;
  /**
   * Why used + free is not the total (units.ts memoryBreakdown): `3.3 GiB used + 136.5 GiB free +
   * 615 MiB reserved by the NVIDIA driver and firmware (nvidia-smi memory.reserved) = 140.4 GiB
   * total`: the memory bar's and the free memory's tooltip.
   */
  memoryNote: string;
  /** Recent utilisation (0..100) and memory use (0..1 of the total), oldest first, null where unknown: the sparkline. */
  /** `seconds`: the span the points cover, s: the window, or what the history holds while it is shorter. */
  spark: { utilization: (number | null)[]; memory: (number | null)[]; seconds: number };
  processes: DashboardProcess[];
  mig: DashboardMig[];
  warnings: string[];
}

/** The whole dashboard. */
export interface DashboardModel {
  /** The monitor's state: `ok` shows cards; otherwise `message` says why there are none. */
  state: "unknown" | "ok" | "missing" | "failed";
  message: string;
  gpus: DashboardGpu[];
  /** The selection entries (CUDA_VISIBLE_DEVICES). */
  selection: string[];
  sort: ProcessSort;
  /** Every GPU's processes for the process table: filtered by {@link userFilter}, sorted by {@link sort}. */
  processes: DashboardProcess[];
  /** All processes before the filter. */
  processCount: number;
  /** The users of all processes, sorted (the filter's choices). */
  users: string[];
  /** The user the table is filtered to; "" for everyone (a user no longer listed falls back to ""). */
  userFilter: string;
  /**
   * When the shown sample was taken, ms since the epoch (the inventory's `takenAt`; 0 without one):
   * the tree and the dashboard render the same monitor sample, so this is the tree's too.
   */
  takenAt: number;
}

/** Points in a sparkline at most: equal slices of its span, each the average of the samples in it ({@link sparkPoints}). */
export const SPARK_POINTS = 60;
/** The sparkline's window when {@link DashboardInput.sparkSeconds} is not given, s. */
export const SPARK_SECONDS = 300;

/**
 * Averages timed samples into `points` equal slices of the window `[from, to]` (ms since the epoch),
 * oldest first, so that a point's x position is its time: a slice without a known sample is null
 * (drawn as a gap, like the History panel's break where the stream stopped). `at` is ascending and
 * as long as `values`; samples outside the window are ignored.
 */
export function bucketByTime(
  at: readonly number[],
  values: readonly (number | null)[],
  from: number,
  to: number,
  points = SPARK_POINTS,
): (number | null)[] {
  const sums = new Array<number>(points).fill(0);
  const counts = new Array<number>(points).fill(0);
  const span = Math.max(1, to - from);
  for (let i = 0; i < at.length; i++) {
    const v = values[i];
    if (at[i] < from || at[i] > to || v === null || v === undefined) continue;
    const b = Math.min(points - 1, Math.floor(((at[i] - from) / span) * points));
    sums[b] += v;
    counts[b]++;
  }
  return sums.map((s, b) => (counts[b] === 0 ? null : s / counts[b]));
}

/**
 * How many slices a sparkline of `span` ms gets when its samples come every `spacing` ms: at most
 * {@link SPARK_POINTS}, and no slice narrower than 1.25 sample spacings, so that every slice holds a
 * sample while the stream ran (a slice without one is drawn as a gap: 60 one-second slices over 25 s
 * of samples broke the line; the 60 s minimum this replaced left most of the box empty). One point
 * for a single sample (`spacing` NaN) or no span.
 */
export function sparkPoints(span: number, spacing: number): number {
  if (!(span > 0) || !(spacing > 0)) return 1;
  return Math.max(2, Math.min(SPARK_POINTS, Math.floor(span / (spacing * 1.25))));
}

/** The median gap between successive times of `at` (ascending), ms; NaN with fewer than two. */
function medianSpacing(at: readonly number[]): number {
  const gaps = at
    .slice(1)
    .map((t, i) => t - at[i])
    .sort((a, b) => a - b);
  return gaps.length === 0 ? NaN : gaps[Math.floor(gaps.length / 2)];
}

function sparkOf(
  gpu: Gpu,
  history: HistorySnapshot | undefined,
  now: number,
  seconds = SPARK_SECONDS,
): DashboardGpu["spark"] {
  const series = history?.gpus.find((g) => g.uuid.toLowerCase() === gpu.uuid.toLowerCase());
  const windowStart = now - seconds * 1000;
  const times = series?.at.filter((t) => t >= windowStart && t <= now) ?? [];
  if (!series || times.length === 0) return { utilization: [], memory: [], seconds };
  // Until the history fills the window, the line spans what there is (from the oldest sample in
  // it) and the legend says that span: a fresh start fills the box, not a stub at its right end.
  const from = times[0];
  const points = sparkPoints(now - from, medianSpacing(times));
  const total = series.memoryTotalMiB ?? gpu.memoryTotalMiB;
  return {
    utilization: bucketByTime(series.at, series.utilizationPercent, from, now, points),
    memory: bucketByTime(
      series.at,
      series.memoryUsedMiB.map((m) => fraction(m, total)),
      from,
      now,
      points,
    ),
    seconds: Math.round((now - from) / 1000),
  };
}

function processOf(
  gpu: Gpu,
  app: ComputeApp,
  details: ProcessDetails | undefined,
  gpuBusyButIdle: boolean,
  processSm: ProcessSmSnapshot | undefined,
): DashboardProcess {
  return {
    pid: app.pid,
    gpuIndex: gpu.index,
    gpuUuid: gpu.uuid,
    user: processUser(details),
    ...(details?.note ? { userNote: unknownUserNote(details) } : {}),
    memoryMiB: app.usedMemoryMiB,
    memory: formatMiB(app.usedMemoryMiB),
    ...smFields(processSm, gpu.index, app.pid),
    ...hostFields(details),
    command: printableName(details?.commandLine || app.processName),
    program: programCommand(details?.commandLine || app.processName),
    own: details?.own ?? false,
    workspaceRun: details?.workspaceRun ?? false,
    busyButIdle: gpuBusyButIdle && (details?.own ?? false),
  };
}

/** What {@link buildDashboardModel} reads. */
export interface DashboardInput {
  state: DashboardModel["state"];
  /** The monitor's problem text ("" when none). */
  problem: string;
  inventory: Inventory | undefined;
  selection: readonly string[];
  history?: HistorySnapshot;
  sort?: ProcessSort;
  /** ms since the epoch (the sparkline's right end); default Date.now(). */
  now?: number;
  /** The sparkline's window, s (the dashboard: gpuPilot.history.minutes, the History panel's window); default {@link SPARK_SECONDS}. */
  sparkSeconds?: number;
  /** SM activity from the monitor ({@link GpuMonitor.activity}); absent or `off`: not shown. */
  activity?: ActivitySnapshot;
  /** The process table's user filter; "" or absent: everyone. */
  userFilter?: string;
  /** Per-process SM % from nvidia-smi pmon ({@link GpuMonitor.processSm}), joined by (GPU index, pid); absent: not read. */
  processSm?: ProcessSmSnapshot;
}

/** The SM activity fields of a card for GPU `index`. */
function activityOf(
  index: number,
  activity: ActivitySnapshot | undefined,
): Pick<DashboardGpu, "smActivity" | "activityNote" | "busyButIdle" | "busyButIdleText"> {
  const none = { busyButIdle: false, busyButIdleText: "" };
  if (!activity || activity.state === "off") return none;
  const g = activity.gpus.find((x) => x.index === index);
  if (activity.state === "unsupported" || g?.support === "unsupported")
    return { ...none, activityNote: activity.note || NOT_AVAILABLE };
  const sm = g?.latest?.smActivityPercent;
  const bar: DashboardBar =
    sm === undefined
      ? { fraction: null, level: "unknown", text: "…" }
      : { fraction: Math.min(1, Math.max(0, sm / 100)), level: levelOf(sm), text: formatPercent(sm) };
  if (!g?.busyButIdle) return { ...none, smActivity: bar };
  return { smActivity: bar, busyButIdle: true, busyButIdleText: busyButIdleSentence(g) };
}

/** The card of `gpu` in `inv` (its short name and summary are filled in by {@link buildDashboardModel}). */
function cardOf(gpu: Gpu, inv: Inventory, input: DashboardInput, sort: ProcessSort, now: number): DashboardGpu {
  const migs: MigDevice[] = (inv.mig ?? [])
    .filter((m) => m.gpuUuid.toLowerCase() === gpu.uuid.toLowerCase())
    .sort((a, b) => a.device - b.device);
  const used = fraction(gpu.memoryUsedMiB, gpu.memoryTotalMiB);
  const util = gpu.utilizationGpuPercent;
  const activity = activityOf(gpu.index, input.activity);
  const processes = appsOf(gpu, inv.apps).map((a) =>
    processOf(
      gpu,
      a,
      inv.processes?.find((p) => p.pid === a.pid),
      activity.busyButIdle,
      input.processSm,
    ),
  );
  return {
    uuid: gpu.uuid,
    index: gpu.index,
    name: gpu.name,
    shortName: "",
    summary: "",
    selected: isSelected(gpu, input.selection),
    lost: gpu.lost === true,
    utilization: {
      fraction: util === null ? null : Math.min(1, Math.max(0, util / 100)),
      level: levelOf(util),
      text: formatPercent(util),
    },
    ...activity,
    memory: {
      fraction: used,
      level: levelOf(used === null ? null : used * 100),
      text: formatMemoryPair(gpu.memoryUsedMiB, gpu.memoryTotalMiB),
    },
    temperature: formatTemperature(gpu.temperatureC),
    power: formatPower(gpu.powerDrawW, gpu.powerLimitW),
    free: formatFree(gpu),
    memoryNote: memoryBreakdown(gpu),
    spark: sparkOf(gpu, input.history, now, input.sparkSeconds),
    processes: sortProcesses(processes, sort),
    mig: migs.map((m) => ({
      uuid: m.uuid,
      profile: m.profile,
      device: m.device,
      selected: isMigSelected(m, input.selection),
    })),
    warnings: gpuWarnings(gpu, inv.apps, migs.length),
  };
}

/** Builds the {@link DashboardModel}; GPUs in index order, MIG devices under their GPU by device number. */
export function buildDashboardModel(input: DashboardInput): DashboardModel {
  const sort = input.sort ?? DEFAULT_SORT;
  const inv = input.inventory;
  const now = input.now ?? Date.now();
  const message =
    input.state === "unknown"
      ? "Reading nvidia-smi..."
      : input.state === "missing"
        ? `nvidia-smi could not be run here, so no GPUs can be shown. ${input.problem}`.trim()
        : input.state === "failed"
          ? input.problem || "nvidia-smi failed"
          : inv && inv.gpus.length === 0
            ? "nvidia-smi lists no GPUs"
            : "";
  const gpus =
    input.state !== "ok" || !inv
      ? []
      : [...inv.gpus].sort((a, b) => a.index - b.index).map((gpu) => cardOf(gpu, inv, input, sort, now));
  const all = gpus.flatMap((g) => g.processes);
  const users = usersOf(all);
  const userFilter = input.userFilter && users.includes(input.userFilter) ? input.userFilter : "";
  for (const g of gpus) {
    g.shortName = shortGpuName(g.name);
    g.summary = processSummary(g.processes);
  }
  return {
    state: input.state,
    message,
    gpus,
    selection: [...input.selection],
    sort,
    processes: sortProcesses(filterByUser(all, userFilter), sort),
    processCount: all.length,
    users,
    userFilter,
    takenAt: input.state === "ok" && inv ? inv.takenAt : 0,
  };
}

export { chooseLayout, COMPACT_FROM_GPUS, type DashboardLayout, FULL_CARD_PX } from "./dashboardLayout";
