/**
 * nvidia-smi: run it safely and query the inventory. The parsers of its output (and the Gpu,
 * ComputeApp, MigDevice records) live in common/src/nvidiaSmi/parse.ts, shared with the CLI's
 * `--inventory`, and are re-exported here.
 *
 * No `vscode` import: everything here is unit-tested against real captured output
 * (test/fixtures/nvidia-smi/h200x2) and the fake executable test/fixtures/bin/nvidia-smi.
 *
 * Sources for field names, units and exit codes: `nvidia-smi --help-query-gpu`,
 * `nvidia-smi --help-query-compute-apps` and the RETURN VALUE section of `nvidia-smi -h` / `man nvidia-smi`.
 */

/** What the client takes from execa: `execa(file, args)` only (no command strings: eslint.config.mjs). */
type ExecaModule = Pick<typeof import("execa", { with: { "resolution-mode": "import" } }), "execa">;
let execaModule: Promise<ExecaModule> | undefined;
/**
 * execa is ESM-only and this project compiles to CommonJS: a dynamic import keeps it loadable
 * (tsx and Node load it as ESM in unit tests). In the bundles esbuild keeps it lazy: execa's code
 * runs at the first process started (the first nvidia-smi query, a run, a Slurm command), not
 * while `activate()` runs (esbuild.mjs deferredImports fails the build on a static import).
 */
export function loadExeca(): Promise<ExecaModule> {
  execaModule ??= import("execa");
  return execaModule;
}

export * from "../nvidiaSmi/parse";
import { runBounded } from "../run/boundedRun";
import {
  type ComputeApp,
  type Gpu,
  type MigDevice,
  type ParseProblem,
  parseComputeApps,
  parseListGpus,
  parseQueryGpu,
  LIST_GPUS_ARGS,
  QUERY_APPS_ARGS,
  QUERY_GPU_ARGS,
} from "../nvidiaSmi/parse";
import type { GpuVendor } from "../run/launch";

// ---------------------------------------------------------------------------------------------
// Running nvidia-smi
// ---------------------------------------------------------------------------------------------

/**
 * What a call to nvidia-smi came to.
 * - `ok`: exit code 0; `stdout` is its standard output as text.
 * - `missing`: the program could not be started: not found (ENOENT), not executable (EACCES), ...
 * - `failed`: it ran and exited non-zero (or was killed by a signal: `exitCode` null);
 *   `message` is nvidia-smi's own message where it printed one, else `explanation`;
 *   `explanation` is the documented meaning of the exit code.
 * - `timeout`: it ran longer than `ms` milliseconds and was killed.
 * - `canceled`: the caller's AbortSignal fired; it was killed.
 * - `garbage`: output that is not text (NUL bytes), too large, or (from {@link queryInventory})
 *   CSV with no usable line.
 */
export type SmiResult = { kind: "ok"; stdout: string } | SmiFailure;

/** The non-`ok` cases of {@link SmiResult}; see there. */
export type SmiFailure =
  | { kind: "missing"; message: string; code: string }
  | { kind: "failed"; exitCode: number | null; signal?: string; message: string; explanation: string; stdout?: string }
  | { kind: "timeout"; ms: number; message: string }
  | { kind: "canceled"; message: string }
  | { kind: "garbage"; message: string; sample: string };

/** Options of {@link runNvidiaSmi}. */
export interface RunOptions {
  /** Kill the process after this many ms (SIGTERM, then SIGKILL after {@link FORCE_KILL_AFTER_MS}). Must be > 0. */
  timeoutMs: number;
  /** Aborting kills the process; the result is then `canceled`. */
  signal?: AbortSignal;
  /** Extra environment variables on top of this process's environment (tests use FAKE_NVIDIA_SMI_*). */
  env?: Record<string, string>;
}

/** After a timeout's SIGTERM, SIGKILL follows after this many ms. */
export const FORCE_KILL_AFTER_MS = 1000;
/** Output larger than this (bytes) is not nvidia-smi query output: reported as `garbage`. */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * The documented meaning of an nvidia-smi exit code (RETURN VALUE in `nvidia-smi -h` / `man nvidia-smi`).
 * Unknown codes get a generic sentence that names the code.
 */
export function describeExitCode(code: number): string {
  switch (code) {
    case 0:
      return "nvidia-smi succeeded";
    case 2:
      return "nvidia-smi rejected an argument or field (exit 2: invalid argument or flag)";
    case 3:
      return "the requested operation is not available on this GPU (exit 3)";
    case 4:
      return "no permission to access this GPU or perform this operation (exit 4)";
    case 6:
      return "nvidia-smi found no matching GPU (exit 6: no devices were found)";
    case 8:
      return "a GPU's external power cables are not properly attached (exit 8)";
    case 9:
      return "the NVIDIA driver is not loaded (exit 9)";
    case 10:
      return "the NVIDIA kernel driver detected an interrupt issue with a GPU (exit 10)";
    case 12:
      return "the NVML shared library could not be found or loaded (exit 12)";
    case 13:
      return "the installed NVML does not implement this function (exit 13)";
    case 14:
      return "a GPU's infoROM is corrupted (exit 14)";
    case 15:
      return "a GPU has fallen off the bus or is otherwise inaccessible (exit 15)";
    case 255:
      return "nvidia-smi hit an internal or driver error (exit 255)";
    default:
      return `nvidia-smi failed with exit code ${code}`;
  }
}

/** nvidia-smi's own message: the non-empty lines of stdout and stderr, at most 5 lines / 500 characters. */
function ownMessage(stdout: string, stderr: string): string {
  const all = `${stderr}\n${stdout}`
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const msg = all.slice(0, 5).join(" ");
  return msg.length > 500 ? `${msg.slice(0, 497)}...` : msg;
}

/**
 * The failure of a program that could not be started at all: ENOENT (not found), EACCES (not
 * executable or a directory), ENOEXEC, ... (`code` is execa's / Node's error code).
 */
export function startFailure(path: string, code: string | undefined): Extract<SmiFailure, { kind: "missing" }> {
  const c = code ?? "ERROR";
  const why =
    c === "ENOENT"
      ? "was not found"
      : c === "EACCES"
        ? "is not executable"
        : c === "ENOEXEC"
          ? "is not a program this system can run"
          : `could not be started (${c})`;
  return { kind: "missing", code: c, message: `${path} ${why}` };
}

/**
 * Kills `child` with `signal` only when it has a pid (it started). A child whose spawn failed has
 * none, yet its kill() would signal pid 0 (the caller's process group: in VS Code the extension
 * host's) or a stale pid (seen with strace). Never throws.
 * @returns whether a signal was sent.
 */
export function killIfStarted(
  child: { pid?: number; kill(signal?: NodeJS.Signals): boolean },
  signal: NodeJS.Signals = "SIGTERM",
): boolean {
  if (child.pid === undefined) return false;
  try {
    return child.kill(signal);
  } catch {
    return false; // already gone
  }
}

/**
 * Runs `path args...` directly (argument array, no shell) and classifies the outcome.
 *
 * @param path nvidia-smi's path, or a bare name looked up on PATH.
 * @param args arguments, passed as they are (never through a shell).
 * @param options `timeoutMs` (> 0): SIGTERM after that, SIGKILL {@link FORCE_KILL_AFTER_MS} later;
 *   `signal`: abort to kill it; `env`: extra variables.
 * @returns a {@link SmiResult}; never rejects, never throws for a process problem.
 */
export async function runNvidiaSmi(path: string, args: readonly string[], options: RunOptions): Promise<SmiResult> {
  const timeoutMs = Math.max(1, Math.floor(options.timeoutMs));
  if (options.signal?.aborted) return { kind: "canceled", message: "nvidia-smi call was canceled" };
  // In a process group of its own (a wrapper's children are stopped too), output capped; the
  // runner never signals a pid-less child (after ENOENT its kill() would reach our own group).
  const r = await runBounded(path, args, {
    timeoutMs,
    maxBytes: MAX_OUTPUT_BYTES,
    killAfterMs: FORCE_KILL_AFTER_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  if (r.canceled) return { kind: "canceled", message: "nvidia-smi call was canceled" };
  if (r.timedOut) {
    return {
      kind: "timeout",
      ms: timeoutMs,
      message: `nvidia-smi did not answer within ${timeoutMs} ms and was stopped`,
    };
  }
  const { stdout, stderr } = r;
  if (r.overflow) {
    return {
      kind: "garbage",
      message: `nvidia-smi printed more than ${MAX_OUTPUT_BYTES} bytes`,
      sample: stdout.slice(0, 200),
    };
  }
  if (r.startError !== undefined) return startFailure(path, r.startError);
  if (r.exitCode !== 0) {
    const exitCode = r.exitCode ?? null;
    const explanation =
      exitCode === null ? `nvidia-smi was killed by ${r.signal ?? "a signal"}` : describeExitCode(exitCode);
    const own = ownMessage(stdout, stderr);
    return {
      kind: "failed",
      exitCode,
      ...(r.signal ? { signal: r.signal } : {}),
      message: own || explanation,
      explanation,
      ...(stdout.trim() !== "" ? { stdout } : {}),
    };
  }
  if (stdout.includes("\u0000")) {
    return {
      kind: "garbage",
      message: "nvidia-smi printed binary data",
      sample: stdout.split("\u0000").join("\\0").slice(0, 200),
    };
  }
  return { kind: "ok", stdout };
}

/**
 * Who runs a compute process, read from /proc (see procinfo.ts); `user` is `unknown` when /proc
 * could not tell (another PID namespace, no permission).
 */
export interface ProcessDetails {
  /** The process id, as nvidia-smi reports it. */
  pid: number;
  /** Real user id from /proc/<pid>/status, or null when unknown. */
  uid: number | null;
  /** The user name (from /etc/passwd or the own account), or `unknown`. */
  user: string;
  /** The full command line (arguments joined with spaces), or nvidia-smi's process name when /proc was not readable. */
  commandLine: string;
  /** The arguments as /proc/<pid>/cmdline lists them; empty when unknown. */
  argv: string[];
  /** True when the process runs as the same user as VS Code (it can be stopped from the view). */
  own: boolean;
  /** True when it is (or descends from) the last run of `gpuPilot.runActiveFile` in this workspace. */
  workspaceRun: boolean;
  /** Start time after boot in clock ticks (/proc/<pid>/stat field 22): tells a reused pid apart before stopping it. */
  startTicks?: number;
  /** Why the details are incomplete, in words (e.g. not readable from this PID namespace); absent when complete. */
  note?: string;
  /** CPU time used so far, user + system, clock ticks (/proc/<pid>/stat fields 14 and 15; procinfo.ts CLOCK_TICKS_PER_S). */
  cpuTicks?: number;
  /** Resident host memory, KiB (`VmRSS:` of /proc/<pid>/status). */
  rssKiB?: number;
  /** Seconds since boot when these details were read (/proc/uptime): with {@link startTicks}, how long the process has run. */
  readAtS?: number;
  /** CPU use, % of one core (100 = one core busy): since the previous read of the same process, or since it started (procinfo.ts cpuPercent). */
  cpuPercent?: number;
}

/** The GPUs and compute processes at one moment. */
export interface Inventory {
  /** In nvidia-smi index order. */
  gpus: Gpu[];
  /** Every process holding a CUDA context, on any GPU. */
  apps: ComputeApp[];
  /** Lines that could not be parsed, and a failed compute-apps query: shown as a warning, never fatal. */
  problems: string[];
  /** When the query finished, ms since the epoch. */
  takenAt: number;
  /** MIG devices of the GPUs with MIG enabled (from `nvidia-smi -L`); absent or empty without MIG. */
  mig?: MigDevice[];
  /** User and command line of each process of {@link apps} (by pid), once read from /proc. */
  processes?: ProcessDetails[];
  /** `amd` when amd-smi or rocm-smi read the GPUs (amdSmi.ts); absent: nvidia-smi did. Runs follow it (common/src/run/plan.ts). */
  vendor?: GpuVendor;
}

/** Result of {@link queryInventory}. */
export type InventoryResult = { kind: "ok"; inventory: Inventory } | SmiFailure;

/** Options of {@link queryInventory}: where nvidia-smi is and how long one call may take. */
export interface QueryOptions extends RunOptions {
  /** nvidia-smi's path or bare name. */
  path: string;
}

/** A parse problem in words: device errors as nvidia-smi says them, other lines with their number. */
export function describeProblem(what: string, p: ParseProblem): string {
  if (p.device) return `GPU ${p.device.busId}: ${p.device.message}`;
  return `${what} line ${p.line}: ${p.reason}`;
}

/** True when at least one GPU has `mig.mode.current` Enabled (then `nvidia-smi -L` lists its MIG devices). */
export function anyMigEnabled(gpus: readonly Gpu[]): boolean {
  return gpus.some((g) => g.migMode?.toLowerCase() === "enabled");
}

/**
 * Runs `nvidia-smi -L` and returns the MIG devices; a failure or unreadable line becomes a problem
 * line (never fatal). Never rejects.
 */
export async function queryMigDevices(
  options: QueryOptions,
): Promise<{ mig: MigDevice[]; problems: string[]; canceled?: true }> {
  const r = await runNvidiaSmi(options.path, LIST_GPUS_ARGS, options);
  if (r.kind === "canceled") return { mig: [], problems: [], canceled: true };
  if (r.kind !== "ok") return { mig: [], problems: [`MIG device list unavailable: ${r.message}`] };
  const parsed = parseListGpus(r.stdout);
  return { mig: parsed.mig, problems: parsed.problems.map((p) => describeProblem("nvidia-smi -L", p)) };
}

/**
 * Runs the GPU query, then the compute-apps query (and `nvidia-smi -L` when a GPU has MIG
 * enabled), and combines them.
 *
 * - A failure of the GPU query is the result (`missing`, `failed`, `timeout`, `canceled`, `garbage`),
 *   except that a non-zero exit whose output still has GPU lines next to per-device errors
 *   (`Unable to determine the device handle for GPU ...: GPU is lost`) keeps those GPUs and lists
 *   the errors in `problems`.
 * - GPU query output with no usable line at all is `garbage`; with some usable lines, the bad ones
 *   are listed in `inventory.problems`.
 * - A failure of the compute-apps or MIG query only adds a line to `inventory.problems`.
 *
 * Each call is limited by `options.timeoutMs` separately. Never rejects.
 */
export async function queryInventory(options: QueryOptions): Promise<InventoryResult> {
  const gpuRun = await runNvidiaSmi(options.path, QUERY_GPU_ARGS, options);
  let stdout: string;
  if (gpuRun.kind === "ok") {
    stdout = gpuRun.stdout;
  } else if (gpuRun.kind === "failed" && gpuRun.stdout !== undefined && salvageable(gpuRun.stdout)) {
    stdout = gpuRun.stdout;
  } else {
    return gpuRun;
  }
  const gpus = parseQueryGpu(stdout);
  if (gpus.rows.length === 0 && gpus.problems.length > 0) {
    return {
      kind: "garbage",
      message: `nvidia-smi's GPU list could not be read: ${gpus.problems[0].reason}`,
      sample: gpus.problems[0].text.slice(0, 200),
    };
  }
  const problems = gpus.problems.map((p) => describeProblem("GPU query", p));
  gpus.rows.sort((a, b) => a.index - b.index);

  let apps: ComputeApp[] = [];
  const appRun = await runNvidiaSmi(options.path, QUERY_APPS_ARGS, options);
  if (appRun.kind === "ok") {
    const parsed = parseComputeApps(appRun.stdout);
    apps = parsed.rows;
    problems.push(...parsed.problems.map((p) => describeProblem("Process query", p)));
  } else if (appRun.kind === "canceled") {
    return appRun;
  } else {
    problems.push(`Process list unavailable: ${appRun.message}`);
  }
  let mig: MigDevice[] = [];
  if (anyMigEnabled(gpus.rows)) {
    const listed = await queryMigDevices(options);
    if (listed.canceled) return { kind: "canceled", message: "nvidia-smi call was canceled" };
    mig = listed.mig;
    problems.push(...listed.problems);
  }
  return { kind: "ok", inventory: { gpus: gpus.rows, apps, problems, takenAt: Date.now(), mig } };
}

/** A failed GPU query's output worth keeping: some GPU lines plus per-device error lines. */
function salvageable(stdout: string): boolean {
  const parsed = parseQueryGpu(stdout);
  return parsed.rows.length > 0 && parsed.problems.some((p) => p.device);
}
