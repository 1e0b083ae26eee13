/**
 * Who runs a GPU process: user and command line from /proc, read as files (no `ps`, no shell).
 * No `vscode` import; unit-tested against a fake /proc tree (`procRoot`).
 *
 * - user: the real uid from `/proc/<pid>/status` (`Uid:` line), named through `/etc/passwd`, or
 *   `os.userInfo()` for VS Code's own uid;
 * - command line: `/proc/<pid>/cmdline` (NUL-separated arguments), else the `Name:` of status;
 * - identity: field 22 of `/proc/<pid>/stat` (start time in clock ticks) tells a reused pid apart.
 *
 * nvidia-smi reports pids of its own PID namespace: inside a container /proc may not have the pid
 * at all, or have another program under it. Both read as `unknown` with a note, never as an error.
 */
import { promises as fsp } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { ComputeApp, ProcessDetails } from "./nvidiaSmi";
import { readWorkspaceFile } from "../fs/workspaceFile";

import { CLOCK_TICKS_PER_S, type CpuSample } from "./procTicks";

export { CLOCK_TICKS_PER_S, runningSeconds, type CpuSample } from "./procTicks";

/** Cap for one /proc file (a command line is at most ARG_MAX, 2 MiB by default): 4 MiB. */
const PROC_MAX_BYTES = 4 * 1024 * 1024;

/** Where to read from; tests point these at a fake tree. */
export interface ProcOptions {
  /** The proc file system, default `/proc`. */
  procRoot?: string;
  /** The passwd file, default `/etc/passwd`. */
  passwdFile?: string;
  /** VS Code's own uid, default `process.getuid()` (undefined on Windows: nothing is `own` then). */
  ownUid?: number;
  /** VS Code's own user name, default `os.userInfo().username`. */
  ownUser?: string;
}

/** What /proc says about one pid (undefined fields: not readable). */
export interface ProcStat {
  pid: number;
  /** Real uid (`Uid:` first number of /proc/<pid>/status). */
  uid?: number;
  /** `Name:` of status: the executable's name, at most 15 characters. */
  name?: string;
  /** The arguments of /proc/<pid>/cmdline; empty for kernel threads and zombies. */
  argv?: string[];
  /** Parent pid (field 4 of /proc/<pid>/stat). */
  ppid?: number;
  /** Start time after boot in clock ticks (field 22 of /proc/<pid>/stat): identifies the process across pid reuse. */
  startTicks?: number;
  /** Target of /proc/<pid>/exe (readable for own processes only). */
  exe?: string;
  /** CPU time used so far, user + system, clock ticks ({@link CLOCK_TICKS_PER_S}; fields 14 and 15 of /proc/<pid>/stat). */
  cpuTicks?: number;
  /** Resident host memory, KiB (`VmRSS:` of /proc/<pid>/status; absent for kernel threads and zombies). */
  rssKiB?: number;
}

function own(options: ProcOptions): { uid: number | undefined; user: string } {
  let user = options.ownUser;
  if (user === undefined) {
    try {
      user = os.userInfo().username;
    } catch {
      user = "";
    }
  }
  return { uid: options.ownUid ?? (typeof process.getuid === "function" ? process.getuid() : undefined), user };
}

/**
 * A /proc (or /etc/passwd) file as text through the repository's one safe reader
 * (common/src/fs/workspaceFile.ts: regular files only, size-capped, never blocks); undefined when
 * it cannot be read (gone, another user's, another PID namespace).
 */
function readText(file: string): string | undefined {
  const r = readWorkspaceFile(file, { maxBytes: PROC_MAX_BYTES });
  return r.ok ? r.bytes.toString("utf8") : undefined;
}

/** Seconds since boot (the first number of /proc/uptime), undefined when unreadable. */
export function readUptime(procRoot = "/proc"): number | undefined {
  const text = readText(path.join(procRoot, "uptime"));
  const v = text === undefined ? NaN : Number(text.trim().split(/\s+/)[0]);
  return Number.isFinite(v) ? v : undefined;
}

/** Parses `/proc/<pid>/stat`: the command is in parentheses and may itself contain `) `. */
export function parseStat(text: string): { ppid?: number; startTicks?: number; cpuTicks?: number } {
  const close = text.lastIndexOf(")");
  if (close < 0) return {};
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/); // field 3 (state) onwards
  const ppid = Number(rest[1]);
  const start = Number(rest[19]);
  const utime = Number(rest[11]); // field 14
  const stime = Number(rest[12]); // field 15
  return {
    ...(Number.isInteger(ppid) ? { ppid } : {}),
    ...(rest[12] !== undefined && Number.isFinite(utime) && Number.isFinite(stime) ? { cpuTicks: utime + stime } : {}),
    ...(Number.isFinite(start) && rest[19] !== undefined ? { startTicks: start } : {}),
  };
}

/** Splits `/proc/<pid>/cmdline` (NUL-separated, usually NUL-terminated) into arguments. */
export function parseCmdline(raw: string): string[] {
  const parts = raw.split("\u0000");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}

/** Reads status, cmdline and stat of `pid`; missing or unreadable files leave their fields undefined. Never throws. */
export async function readProcStat(pid: number, options: ProcOptions = {}): Promise<ProcStat> {
  const dir = path.join(options.procRoot ?? "/proc", String(pid));
  const status = readText(path.join(dir, "status"));
  const cmdline = readText(path.join(dir, "cmdline"));
  const stat = readText(path.join(dir, "stat"));
  const exe = await fsp.readlink(path.join(dir, "exe")).catch(() => undefined);
  const out: ProcStat = { pid };
  if (status !== undefined) {
    const uid = /^Uid:\s+(\d+)/m.exec(status);
    if (uid) out.uid = Number(uid[1]);
    const name = /^Name:\s*(.*)$/m.exec(status);
    if (name) out.name = name[1].trim();
    const rss = /^VmRSS:\s+(\d+)\s*kB/m.exec(status);
    if (rss) out.rssKiB = Number(rss[1]);
  }
  if (cmdline !== undefined) out.argv = parseCmdline(cmdline);
  if (stat !== undefined) Object.assign(out, parseStat(stat));
  if (exe !== undefined) out.exe = exe.replace(/ \(deleted\)$/, "");
  return out;
}

let passwdCache: { file: string; at: number; users: Map<number, string> } | undefined;

/** uid → name from a passwd file (re-read at most every 60 s). Missing file: an empty map. */
export async function readPasswd(file = "/etc/passwd"): Promise<Map<number, string>> {
  if (passwdCache && passwdCache.file === file && Date.now() - passwdCache.at < 60_000) return passwdCache.users;
  const users = new Map<number, string>();
  const text = readText(file);
  for (const line of text?.split("\n") ?? []) {
    const f = line.split(":");
    if (f.length >= 3 && /^\d+$/.test(f[2]) && !users.has(Number(f[2]))) users.set(Number(f[2]), f[0]);
  }
  passwdCache = { file, at: Date.now(), users };
  return users;
}

/**
 * True when nvidia-smi's process name plausibly names the program /proc has under that pid:
 * the base names of nvidia-smi's name and of argv[0] agree, or the status Name (15 characters at
 * most) is a prefix of nvidia-smi's base name. False means another PID namespace (a different
 * program has that pid here).
 */
export function sameProgram(processName: string, stat: ProcStat): boolean {
  const base = (s: string) => path.posix.basename(s.trim());
  const reported = base(processName.split(" ")[0] ?? processName);
  if (reported === "" || reported === "[Not Found]") return true; // nvidia-smi could not tell either
  const arg0 = stat.argv?.[0];
  if (arg0 && (base(arg0) === reported || base(arg0.split(" ")[0]) === reported)) return true;
  if (stat.exe && base(stat.exe) === reported) return true;
  if (stat.name && (reported.startsWith(stat.name) || stat.name.startsWith(reported))) return true;
  return false;
}

/** Whether `pid` is `ancestor` or one of its descendants (following /proc ppid links, at most 16 steps). */
export async function descendsFrom(
  pid: number,
  ancestor: number,
  options: ProcOptions = {},
  first?: ProcStat,
): Promise<boolean> {
  let current: number | undefined = pid;
  let stat = first;
  for (let i = 0; i < 16 && current !== undefined && current > 1; i++) {
    if (current === ancestor) return true;
    stat = stat && stat.pid === current ? stat : await readProcStat(current, options);
    current = stat.ppid;
    stat = undefined;
  }
  return current === ancestor;
}

/**
 * CPU use in % of one core (as top and nvitop: 200 = two cores busy), rounded to 0.1: the CPU time
 * used between `prev` and `now` over the time between them when `prev` is the same process (same
 * start time) read earlier, else the average since the process started. Undefined when a number is
 * missing or no time passed.
 */
export function cpuPercent(now: CpuSample, prev?: CpuSample): number | undefined {
  if (now.cpuTicks === undefined || now.readAtS === undefined || now.startTicks === undefined) return undefined;
  const same =
    prev &&
    prev.startTicks === now.startTicks &&
    prev.cpuTicks !== undefined &&
    prev.readAtS !== undefined &&
    now.readAtS - prev.readAtS > 0.2;
  const ticks = same ? now.cpuTicks - prev.cpuTicks! : now.cpuTicks;
  const seconds = same ? now.readAtS - prev.readAtS! : now.readAtS - now.startTicks / CLOCK_TICKS_PER_S;
  if (!(seconds > 0) || ticks < 0) return undefined;
  return Math.round((1000 * ticks) / CLOCK_TICKS_PER_S / seconds) / 10;
}

/** What {@link processDetails} may reuse: seconds since boot read once for all processes, and their previous details (CPU %). */
export interface DetailsContext {
  uptimeS?: number;
  previous?: ProcessDetails;
}

/**
 * The details of one compute process.
 * @param app the process as nvidia-smi lists it.
 * @param runPid pid of this workspace's last run (`ctx.lastRun.pid`) while it runs, else undefined.
 * @param context seconds since boot (default: read now) and the previous details of this pid (for CPU %).
 */
export async function processDetails(
  app: ComputeApp,
  runPid: number | undefined,
  options: ProcOptions = {},
  context: DetailsContext = {},
): Promise<ProcessDetails> {
  const stat = await readProcStat(app.pid, options);
  const me = own(options);
  const unknown = (note: string): ProcessDetails => ({
    pid: app.pid,
    uid: null,
    user: "unknown",
    commandLine: app.processName,
    argv: [],
    own: false,
    workspaceRun: false,
    note,
  });
  if (stat.uid === undefined && stat.argv === undefined) {
    return unknown(
      `pid ${app.pid} is not visible in ${options.procRoot ?? "/proc"} (another PID namespace, e.g. a container, or it has ended)`,
    );
  }
  if (!sameProgram(app.processName, stat)) {
    return unknown(
      `pid ${app.pid} here is ${stat.argv?.[0] ?? stat.name ?? "another program"}, not ${app.processName}: nvidia-smi sees another PID namespace`,
    );
  }
  let user = "unknown";
  if (stat.uid !== undefined) {
    if (stat.uid === me.uid && me.user) user = me.user;
    else user = (await readPasswd(options.passwdFile)).get(stat.uid) ?? `uid ${stat.uid}`;
  }
  const argv = stat.argv ?? [];
  const commandLine = argv.length > 0 ? argv.join(" ") : (stat.name ?? app.processName);
  const workspaceRun = runPid !== undefined && (await descendsFrom(app.pid, runPid, options, stat));
  return {
    pid: app.pid,
    uid: stat.uid ?? null,
    user,
    commandLine,
    argv,
    own: stat.uid !== undefined && stat.uid === me.uid,
    workspaceRun,
    ...(stat.startTicks !== undefined ? { startTicks: stat.startTicks } : {}),
    ...(stat.uid === undefined ? { note: "the owner could not be read from /proc" } : {}),
    ...host(stat, context.uptimeS ?? readUptime(options.procRoot), context.previous),
  };
}

/** The host fields of {@link ProcessDetails} (CPU ticks and %, resident memory, when read) that /proc gave. */
function host(
  stat: ProcStat,
  readAtS: number | undefined,
  previous: ProcessDetails | undefined,
): Partial<ProcessDetails> {
  const now = { cpuTicks: stat.cpuTicks, startTicks: stat.startTicks, readAtS };
  const cpu = cpuPercent(now, previous);
  return {
    ...(stat.cpuTicks !== undefined ? { cpuTicks: stat.cpuTicks } : {}),
    ...(stat.rssKiB !== undefined ? { rssKiB: stat.rssKiB } : {}),
    ...(readAtS !== undefined ? { readAtS } : {}),
    ...(cpu !== undefined ? { cpuPercent: cpu } : {}),
  };
}

/**
 * {@link processDetails} for each app (each pid once). Never rejects.
 * @param previous the details of the last call (the monitor's), for CPU % since then.
 */
export async function describeProcesses(
  apps: readonly ComputeApp[],
  runPid: number | undefined,
  options: ProcOptions = {},
  previous: readonly ProcessDetails[] = [],
): Promise<ProcessDetails[]> {
  const seen = new Map<number, ComputeApp>();
  for (const a of apps) if (!seen.has(a.pid)) seen.set(a.pid, a);
  const uptimeS = readUptime(options.procRoot);
  return Promise.all(
    [...seen.values()].map((a) => {
      const prev = previous.find((p) => p.pid === a.pid);
      return processDetails(a, runPid, options, {
        ...(uptimeS !== undefined ? { uptimeS } : {}),
        ...(prev ? { previous: prev } : {}),
      });
    }),
  );
}

/** Why a stop request was refused, or undefined when it may go ahead. */
export type StopRefusal = "not-own" | "gone" | "reused" | "unsure" | "unknown";

/** Options of {@link stopProcess}: {@link ProcOptions} plus where GPU device files live. */
export interface StopOptions extends ProcOptions {
  /** An open file whose path starts with this is a GPU device; default `/dev/nvidia` (nvidiactl, nvidia0, nvidia-uvm, ...). */
  devicePrefix?: string;
}

/**
 * Whether `pid` holds a file under `prefix` open (its `/proc/<pid>/fd` links); undefined when the
 * links cannot be read.
 */
async function holdsDevice(pid: number, prefix: string, procRoot: string): Promise<boolean | undefined> {
  const dir = path.join(procRoot, String(pid), "fd");
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return undefined;
  }
  for (const n of names) {
    const target = await fsp.readlink(path.join(dir, n)).catch(() => "");
    if (target.startsWith(prefix)) return true;
  }
  return false;
}

/**
 * Sends SIGTERM to `pid` (`process.kill`, never a shell) after checking, right before, that it is
 * still the process nvidia-smi listed: the same start time as `expected` (required: without one
 * nothing is sent), VS Code's user, and a GPU device open here. The last check matters across PID
 * namespaces: nvidia-smi inside or outside a container can report a pid that is another process in
 * VS Code's /proc. When unsure, it refuses with a message that says why.
 * @returns `ok`, or why nothing was sent.
 */
export async function stopProcess(
  pid: number,
  expected: { startTicks?: number },
  options: StopOptions = {},
  kill: (pid: number, signal: NodeJS.Signals) => void = process.kill.bind(process),
): Promise<{ ok: true } | { ok: false; reason: StopRefusal; message: string }> {
  const stat = await readProcStat(pid, options);
  const me = own(options);
  if (stat.uid === undefined)
    return { ok: false, reason: "gone", message: `Process ${pid} has already ended (or is not visible here).` };
  if (expected.startTicks !== undefined && stat.startTicks !== undefined && stat.startTicks !== expected.startTicks) {
    return {
      ok: false,
      reason: "reused",
      message: `Process ${pid} has ended; the pid now belongs to another program. Nothing was stopped.`,
    };
  }
  if (me.uid === undefined || stat.uid !== me.uid)
    return {
      ok: false,
      reason: "not-own",
      message: `Process ${pid} belongs to another user; GPU Pilot stops only your own processes.`,
    };
  if (expected.startTicks === undefined || stat.startTicks === undefined) {
    return {
      ok: false,
      reason: "unsure",
      message: `GPU Pilot cannot tell that pid ${pid} is still the process nvidia-smi listed (its start time was not read). Nothing was stopped.`,
    };
  }
  const device = await holdsDevice(pid, options.devicePrefix ?? "/dev/nvidia", options.procRoot ?? "/proc");
  if (device !== true) {
    const why = device === undefined ? "has open files that cannot be read here" : "holds no NVIDIA device open here";
    return {
      ok: false,
      reason: "unsure",
      message: `Process ${pid} ${why}: nvidia-smi may see another PID namespace (a container), where this pid is another process. Nothing was stopped.`,
    };
  }
  try {
    kill(pid, "SIGTERM");
    return { ok: true };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return { ok: false, reason: "gone", message: `Process ${pid} has already ended.` };
    if (code === "EPERM") return { ok: false, reason: "not-own", message: `No permission to stop process ${pid}.` };
    return { ok: false, reason: "unknown", message: `Could not stop process ${pid}: ${(e as Error).message}` };
  }
}

/** What the process table sends: Stop (`SIGTERM`: the program may clean up and exit) or Kill (`SIGKILL`: ends it at once). */
export type ProcessSignal = "SIGTERM" | "SIGKILL";

/** Why a signal was not sent: `gone`, `reused` (another process has the pid now), `other-namespace`, `unsure`, `permission` (EPERM), `unknown`. */
export type SignalRefusal = "gone" | "reused" | "other-namespace" | "unsure" | "permission" | "unknown";

/** The outcome of {@link checkSignalTarget} and {@link signalProcess}. */
export type SignalOutcome =
  { ok: true; user: string; warning?: string } | { ok: false; reason: SignalRefusal; message: string };

/** Who the process belongs to, named as the table names it (the own user, a passwd name, `uid N`). */
async function ownerName(uid: number, options: ProcOptions): Promise<string> {
  const me = own(options);
  if (uid === me.uid && me.user) return me.user;
  return (await readPasswd(options.passwdFile)).get(uid) ?? `uid ${uid}`;
}

/**
 * Checks, right before a signal, that `pid` is still the process nvidia-smi listed: visible in this
 * /proc (else it ended or lives in another PID namespace), with the start time read when it was
 * listed (`expected.startTicks`: required, so a reused pid is never signalled) and running the
 * program nvidia-smi named ({@link sameProgram}). Any user's process passes: whether this user may
 * signal it is the kernel's answer (EPERM), given by {@link signalProcess}. `warning` says when the
 * process holds no NVIDIA device open here (its open files are readable and none is under
 * `devicePrefix`): the confirmation shows it, as nvidia-smi may see another PID namespace.
 */
export async function checkSignalTarget(
  pid: number,
  expected: { startTicks?: number; processName: string },
  options: StopOptions = {},
): Promise<SignalOutcome> {
  const stat = await readProcStat(pid, options);
  if (stat.uid === undefined && stat.argv === undefined) {
    return {
      ok: false,
      reason: "gone",
      message: `Process ${pid} is not visible here: it has ended, or it runs in another PID namespace (a container) that VS Code cannot see. Nothing was sent.`,
    };
  }
  if (expected.startTicks === undefined || stat.startTicks === undefined) {
    return {
      ok: false,
      reason: "unsure",
      message: `GPU Pilot cannot tell that pid ${pid} is still the process nvidia-smi listed (its start time was not read, as in another PID namespace). Nothing was sent.`,
    };
  }
  if (stat.startTicks !== expected.startTicks) {
    return {
      ok: false,
      reason: "reused",
      message: `Process ${pid} has ended; the pid now belongs to another program. Nothing was sent.`,
    };
  }
  if (!sameProgram(expected.processName, stat)) {
    return {
      ok: false,
      reason: "other-namespace",
      message: `pid ${pid} here is ${stat.argv?.[0] ?? stat.name ?? "another program"}, not ${expected.processName}: nvidia-smi sees another PID namespace. Nothing was sent.`,
    };
  }
  const user = stat.uid === undefined ? "unknown" : await ownerName(stat.uid, options);
  const device = await holdsDevice(pid, options.devicePrefix ?? "/dev/nvidia", options.procRoot ?? "/proc");
  return device === false
    ? {
        ok: true,
        user,
        warning: `It holds no NVIDIA device open here: nvidia-smi may see another PID namespace, where pid ${pid} is another process.`,
      }
    : { ok: true, user };
}

/**
 * Sends `signal` to `pid` with `process.kill` (never a shell) after {@link checkSignalTarget}
 * passes. EPERM (another user's process, and VS Code is not root) is said plainly with the owner.
 * @param kill stands in for process.kill in tests.
 */
export async function signalProcess(
  pid: number,
  signal: ProcessSignal,
  expected: { startTicks?: number; processName: string },
  options: StopOptions = {},
  kill: (pid: number, signal: NodeJS.Signals) => void = process.kill.bind(process),
): Promise<SignalOutcome> {
  const check = await checkSignalTarget(pid, expected, options);
  if (!check.ok) return check;
  try {
    kill(pid, signal);
    return check;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return { ok: false, reason: "gone", message: `Process ${pid} has already ended.` };
    if (code === "EPERM") {
      return {
        ok: false,
        reason: "permission",
        message: `Not permitted (EPERM): process ${pid} belongs to ${check.user}; only ${check.user} or root can send it ${signal}. Nothing was sent.`,
      };
    }
    return {
      ok: false,
      reason: "unknown",
      message: `Could not send ${signal} to process ${pid}: ${(e as Error).message}`,
    };
  }
}
