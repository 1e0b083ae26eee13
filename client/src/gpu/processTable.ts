/**
 * The dashboard's process table (issue 45 item 2) as plain data: per compute process its GPU, pid,
 * user, GPU memory, SM %, CPU %, host memory, running time and full command line; sorting by any
 * column, filtering by user, and the words for what /proc could not say. Pure (no `vscode`, no
 * file access): the numbers come from nvidia-smi (`--query-compute-apps`: pid, used_memory MiB;
 * `pmon -c 1 -s u`: SM %, pmon.ts) and from /proc as procinfo.ts read them (CPU ticks, VmRSS KiB,
 * start time), written by units.ts.
 */
import type { ComputeApp, ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import { formatMiB, formatPercent } from "../../../common/src/gpu/units";
import { runningSeconds } from "../../../common/src/gpu/procTicks";
import { PMON_INTERVAL_MS, PMON_RETRY_AFTER_MS, processKey, type ProcessSmSnapshot } from "./pmon";

/** A column the process tables sort by (every column of the table). */
export type ProcessSortKey = "gpu" | "pid" | "user" | "memory" | "sm" | "cpu" | "host" | "time" | "command";

/** Every {@link ProcessSortKey}, in the table's order. */
export const PROCESS_SORT_KEYS: readonly ProcessSortKey[] = [
  "gpu",
  "pid",
  "user",
  "memory",
  "sm",
  "cpu",
  "host",
  "time",
  "command",
];

/**
 * Each column's names: `short`, what a header shows (at most 4 characters, so that the Processes
 * tab's header is one line at the 300 px side bar with the sort arrow: "GPU mem ▾" was clipped), and
 * `full`, the name in tooltips and in the Sort list.
 */
export const PROCESS_COLUMNS: Readonly<Record<ProcessSortKey, { short: string; full: string }>> = {
  gpu: { short: "GPU", full: "GPU index" },
  pid: { short: "PID", full: "process id" },
  user: { short: "User", full: "user" },
  memory: { short: "Mem", full: "GPU memory (nvidia-smi used_memory)" },
  // NVML's smUtil ("SM (3D/Compute) Util Value", nvmlProcessUtilizationSample_t), which pmon prints as
  // `sm`: GPU-Util's measure for one process (a spinning kernel reads 100), not the GPUs tab's SM activity.
  sm: {
    short: "SM",
    full: "SM util of the process (nvidia-smi pmon's sm: the share of time its kernels ran, as GPU-Util counts it; not the GPUs tab's SM activity, the share of SMs busy)",
  },
  cpu: { short: "CPU", full: "CPU % of one core (/proc/<pid>/stat)" },
  host: { short: "Host", full: "host memory (resident, VmRSS)" },
  time: { short: "Time", full: "running time" },
  command: { short: "Cmd", full: "command line" },
};

/** How the process tables are sorted: by `key`, descending or not. */
export interface ProcessSort {
  key: ProcessSortKey;
  descending: boolean;
}

/** The default: most GPU memory first (as nvitop). */
export const DEFAULT_SORT: ProcessSort = { key: "memory", descending: true };

/** What the table shows for a number it has no source for: SM % of a process pmon had no sample of, a CPU % of a process in another PID namespace. */
export const NO_VALUE = "–";

const EVERY = `every ${PMON_INTERVAL_MS / 1000} s while the Processes tab is shown`;

/**
 * The SM column's tooltip over a number: what it is and where it comes from (`nvidia-smi pmon -c 1
 * -s u`, pmon.ts, read every {@link PMON_INTERVAL_MS} ms while the Processes tab is shown).
 */
export const SM_NOTE = `SM % of this process: its share of the GPU's SM utilisation in nvidia-smi pmon's last sample, read ${EVERY}.`;

/** The SM tooltip over {@link NO_VALUE} where pmon printed `-`: no sample in its interval. */
export const SM_NO_SAMPLE =
  "No sample: nvidia-smi pmon recorded no SM use by this process in its interval, so it did no GPU work then.";

/** The SM tooltip over {@link NO_VALUE} before pmon's first answer, or for a process its last answer did not list. */
export const SM_NOT_READ = `Not read yet: nvidia-smi pmon is read ${EVERY}.`;

/** A process row (of a GPU's card and of the process table). */
export interface DashboardProcess {
  pid: number;
  /** nvidia-smi index of the GPU the process holds memory on. */
  gpuIndex: number;
  /** That GPU's UUID. */
  gpuUuid: string;
  /** A name, `unknown` (present.ts UNKNOWN_USER) or `…` (not read yet). */
  user: string;
  /** When the user is unknown: `User unknown: <why>` (another PID namespace, ...); the tree's tooltip says the same. */
  userNote?: string;
  /** `used_memory`, MiB; null when nvidia-smi did not say (MIG). */
  memoryMiB: number | null;
  /** {@link formatMiB} of it: `3.3 GiB`, `812 MiB`. */
  memory: string;
  /** SM %, 0..100 (nvidia-smi pmon's `sm`, pmon.ts); null: no sample, not read yet, or pmon failed ({@link smNote}). */
  smPercent: number | null;
  /** `–` ({@link NO_VALUE}) or `37%`. */
  sm: string;
  /** The SM cell's tooltip: what the number is, or why there is none ({@link smFields}); absent: {@link SM_NOT_READ}. */
  smNote?: string;
  /** CPU use, % of one core (procinfo.ts cpuPercent); null when /proc did not say. */
  cpuPercent: number | null;
  /** {@link formatCpu} of it: `98%`, `0.4%`, `–`. */
  cpu: string;
  /** Resident host memory, MiB (VmRSS); null when /proc did not say. */
  hostMemoryMiB: number | null;
  /** {@link formatMiB} of it, or `–`. */
  hostMemory: string;
  /** How long it has run, s; null when unknown. */
  runningS: number | null;
  /** {@link formatDuration} of it: `45 s`, `12 min`, `3 h 04 min`, `2 d 05 h`, or `–`. */
  time: string;
  /** The full command line (or nvidia-smi's process name), control characters escaped. */
  command: string;
  /** The command without its program's directory (what a narrow table shows; `command` is its tooltip). */
  program: string;
  /** Why the command line, CPU, host memory and time are missing, calmly (`in another PID namespace`, ...); absent when /proc said. */
  hostNote?: string;
  /** Runs as VS Code's user. */
  own: boolean;
  /** Is (or descends from) this workspace's run. */
  workspaceRun: boolean;
  /** One of the user's own processes on a GPU flagged busy but idle. */
  busyButIdle: boolean;
  /** Whether Stop/Kill are offered: /proc showed this pid with its start time (any user: the kernel decides, EPERM). */
  canSignal: boolean;
}

/**
 * A duration in seconds, short: `45 s` under a minute, `12 min` under an hour, `3 h 04 min` under a
 * day, `2 d 05 h` from a day; `–` when unknown.
 */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return NO_VALUE;
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  return `${Math.floor(s / 86_400)} d ${pad(Math.floor((s % 86_400) / 3600))} h`;
}

/** CPU % of one core: whole numbers from 10 % (`98%`, `190%`), one decimal below (`0.4%`), `–` when unknown. */
export function formatCpu(percent: number | null | undefined): string {
  if (percent === null || percent === undefined || !Number.isFinite(percent)) return NO_VALUE;
  return percent >= 10 ? `${Math.round(percent)}%` : `${(Math.round(percent * 10) / 10).toFixed(1)}%`;
}

/**
 * The SM fields of the row of process `pid` on GPU `gpuIndex`, joined by (GPU index, pid) to
 * pmon's last answer: its SM % (`37%`, tooltip {@link SM_NOTE}), or {@link NO_VALUE} with why: no
 * sample in pmon's interval ({@link SM_NO_SAMPLE}), not read yet ({@link SM_NOT_READ}: before the
 * first answer, a process the last one did not list, or nothing asked: `off`), or pmon failed
 * (its reason, and that GPU Pilot asks again in {@link PMON_RETRY_AFTER_MS} where it will).
 */
export function smFields(
  snapshot: ProcessSmSnapshot | undefined,
  gpuIndex: number,
  pid: number,
): Pick<DashboardProcess, "smPercent" | "sm" | "smNote"> {
  const none = (smNote: string) => ({ smPercent: null, sm: NO_VALUE, smNote });
  if (!snapshot || snapshot.state === "off" || snapshot.state === "waiting") return none(SM_NOT_READ);
  if (snapshot.state === "failed")
    return none(
      `Per-process SM % is not available here: ${snapshot.note}.${snapshot.retryAt === undefined ? "" : ` GPU Pilot asks again in ${PMON_RETRY_AFTER_MS / 60_000} minutes.`}`,
    );
  const v = snapshot.sm.get(processKey(gpuIndex, pid));
  if (v === undefined) return none(SM_NOT_READ);
  if (v === null || !Number.isFinite(v)) return none(SM_NO_SAMPLE);
  return { smPercent: v, sm: formatPercent(v), smNote: SM_NOTE };
}

/** The /proc fields of a row from `details` (undefined: not read yet). */
export function hostFields(
  details: ProcessDetails | undefined,
): Pick<
  DashboardProcess,
  "cpuPercent" | "cpu" | "hostMemoryMiB" | "hostMemory" | "runningS" | "time" | "hostNote" | "canSignal"
> {
  const cpuPercent = details?.cpuPercent ?? null;
  const hostMemoryMiB = details?.rssKiB !== undefined ? Math.round((details.rssKiB / 1024) * 10) / 10 : null;
  const running = details ? (runningSeconds(details) ?? null) : null;
  const visible = details !== undefined && details.uid !== null && details.startTicks !== undefined;
  const hostNote = !details
    ? "not read yet"
    : details.uid === null && details.user === "unknown"
      ? hostNoteOf(details.note)
      : undefined;
  return {
    cpuPercent,
    cpu: formatCpu(cpuPercent),
    hostMemoryMiB,
    hostMemory: hostMemoryMiB === null ? NO_VALUE : formatMiB(hostMemoryMiB),
    runningS: running,
    time: formatDuration(running),
    ...(hostNote ? { hostNote } : {}),
    canSignal: visible,
  };
}

/**
 * The command cell of the Processes tab: the command line, or, where /proc did not show the
 * process (`hostNote`), nvidia-smi's process name with the short reason after it
 * (`/opt/conda/bin/python (in another PID namespace)`): whether that name is a bare program or a
 * path, it is not the command line.
 */
export function commandCell(p: Pick<DashboardProcess, "command" | "hostNote">): string {
  return p.hostNote ? `${p.command} (${p.hostNote.split(":")[0]})` : p.command;
}

/** A calm phrase for why /proc did not show a process: `in another PID namespace (…)` or the note itself. */
function hostNoteOf(note: string | undefined): string {
  if (!note) return "not visible in /proc here";
  return /PID namespace/.test(note) ? `in another PID namespace: ${note}` : note;
}

// Made at the first sort, not at the bundle's load: a Collator costs about 3 ms (ICU's data), which
// the extension host would pay during activation (a CPU profile of dist/client.js's top level).
let madeCollator: Intl.Collator | undefined;
const collator = (): Intl.Collator =>
  (madeCollator ??= new Intl.Collator("en", { numeric: true, sensitivity: "base" }));

/** Compares two numbers that may be unknown: unknown below every known value. */
const num = (a: number | null, b: number | null): number => (a ?? -1) - (b ?? -1);

/** Rows without a number after those with one, whichever the direction. */
const nullsLast = (a: number | null, b: number | null): number =>
  a === null ? (b === null ? 0 : 1) : b === null ? -1 : 0;

/**
 * Sorts process rows by `sort` (a copy); ties by GPU index, then pid, ascending. Unknown numbers
 * sort below every known one (last when descending, first when ascending), except SM %: its `–`
 * rows (no sample, not read yet) come last both ways, so that ascending starts at the least busy
 * process pmon measured.
 */
export function sortProcesses<T extends DashboardProcess>(rows: readonly T[], sort: ProcessSort): T[] {
  const dir = sort.descending ? -1 : 1;
  const cmp = (a: T, b: T): number => {
    switch (sort.key) {
      case "gpu":
        return a.gpuIndex - b.gpuIndex;
      case "pid":
        return a.pid - b.pid;
      case "user":
        return collator().compare(a.user, b.user);
      case "command":
        return collator().compare(a.command, b.command);
      case "memory":
        return num(a.memoryMiB, b.memoryMiB);
      case "sm":
        return num(a.smPercent, b.smPercent);
      case "cpu":
        return num(a.cpuPercent, b.cpuPercent);
      case "host":
        return num(a.hostMemoryMiB, b.hostMemoryMiB);
      case "time":
        return num(a.runningS, b.runningS);
    }
  };
  const first = (a: T, b: T): number => (sort.key === "sm" ? nullsLast(a.smPercent, b.smPercent) : 0);
  return [...rows].sort((a, b) => first(a, b) || dir * cmp(a, b) || a.gpuIndex - b.gpuIndex || a.pid - b.pid);
}

/** The sort after a click on column `key`: the same column flips direction; another starts descending for amounts (memory, SM, CPU, host memory, time), ascending otherwise. */
export function nextSort(current: ProcessSort, key: ProcessSortKey): ProcessSort {
  if (current.key === key) return { key, descending: !current.descending };
  return { key, descending: ["memory", "sm", "cpu", "host", "time"].includes(key) };
}

/** The rows of user `user` ("" = everyone), compared as written (`unknown` is a user name here too). */
export function filterByUser<T extends DashboardProcess>(rows: readonly T[], user: string): T[] {
  return user === "" ? [...rows] : rows.filter((r) => r.user === user);
}

/** The distinct users of `rows`, sorted (numeric-aware, case-insensitive), for the filter. */
export function usersOf(rows: readonly DashboardProcess[]): string[] {
  return [...new Set(rows.map((r) => r.user))].sort(collator().compare);
}

/**
 * A short summary of a GPU's processes for the compact row: `2 procs · alice, bob`, `1 proc · me`,
 * `3 procs · alice +2` when the users do not fit `maxChars`; "" without processes.
 */
export function processSummary(rows: readonly Pick<DashboardProcess, "user">[], maxChars = 24): string {
  if (rows.length === 0) return "";
  const users = [...new Set(rows.map((r) => r.user))];
  const head = `${rows.length} proc${rows.length === 1 ? "" : "s"}`;
  let names = users.join(", ");
  for (let k = users.length - 1; k >= 1 && names.length > maxChars; k--)
    names = `${users.slice(0, k).join(", ")} +${users.length - k}`;
  return `${head} · ${names}`;
}

/** The text of the Stop/Kill confirmation: names the process by pid, user and command line. */
export function signalQuestion(
  signal: "SIGTERM" | "SIGKILL",
  row: Pick<DashboardProcess, "pid" | "user" | "command" | "gpuIndex">,
): string {
  const what = row.command.length > 200 ? `${row.command.slice(0, 199)}…` : row.command;
  return `${signal === "SIGKILL" ? "Kill" : "Stop"} process ${row.pid} of ${row.user} on GPU ${row.gpuIndex} (${what})? GPU Pilot sends it ${signal}${signal === "SIGKILL" ? ": it ends at once, unsaved work is lost" : ": a program may take a moment to exit"}.`;
}

/** Whether `apps` lists `pid` on the GPU `gpuUuid` (a signal request must name a listed process). */
export function isListed(apps: readonly ComputeApp[], pid: number): boolean {
  return apps.some((a) => a.pid === pid);
}
