/**
 * The dashboard's process table (issue 45 item 2) as plain data: per compute process its GPU, pid,
 * user, GPU memory, SM %, CPU %, host memory, running time and full command line; sorting by any
 * column, filtering by user, and the words for what /proc could not say. Pure (no `vscode`, no
 * file access): the numbers come from nvidia-smi (`--query-compute-apps`: pid, used_memory MiB)
 * and from /proc as procinfo.ts read them (CPU ticks, VmRSS KiB, start time), written by units.ts.
 */
import type { ComputeApp, ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import { formatMiB } from "../../../common/src/gpu/units";
import { runningSeconds } from "../../../common/src/gpu/procTicks";

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
  sm: { short: "SM", full: "SM % of the process" },
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

/** What the table shows for a number it has no source for: SM % per process, a CPU % of a process in another PID namespace. */
export const NO_VALUE = "–";

/** Why the SM column reads {@link NO_VALUE}: nvidia-smi's per-process SM share comes from `nvidia-smi pmon`, which GPU Pilot does not run. */
export const SM_NOTE =
  "Per-process SM % is not read: it needs nvidia-smi pmon, which GPU Pilot does not run. The GPU's SM activity is on its card.";

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
  /** SM %, 0..100; null: not read (always, for now: {@link SM_NOTE}). */
  smPercent: number | null;
  /** `–` ({@link NO_VALUE}) or `37%`. */
  sm: string;
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

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

/** Compares two numbers that may be unknown: unknown below every known value. */
const num = (a: number | null, b: number | null): number => (a ?? -1) - (b ?? -1);

/**
 * Sorts process rows by `sort` (a copy); ties by GPU index, then pid, ascending. Unknown numbers
 * sort below every known one (last when descending, first when ascending).
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
        return collator.compare(a.user, b.user);
      case "command":
        return collator.compare(a.command, b.command);
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
  return [...rows].sort((a, b) => dir * cmp(a, b) || a.gpuIndex - b.gpuIndex || a.pid - b.pid);
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
  return [...new Set(rows.map((r) => r.user))].sort(collator.compare);
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
