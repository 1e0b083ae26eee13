/**
 * One short external command with a deadline and an output cap: nvidia-smi's
 * queries and the Slurm commands. The program leads its own process group (processGroup.ts), so
 * the deadline, a cancel or too much output stops the children a wrapper started as well; at most
 * `maxBytes` of stdout and {@link STDERR_KEEP_BYTES} of stderr are kept. Argument arrays only,
 * never a shell string. No `vscode` import.
 */
import { StringDecoder } from "node:string_decoder";
import { loadExeca } from "../gpu/nvidiaSmi";
import { OWN_GROUP, signalGroup, trackGroup } from "./processGroup";

/** Options of {@link runBounded}. */
export interface BoundedOptions {
  /** Deadline, ms (> 0): then SIGTERM to the group, SIGKILL `killAfterMs` later. */
  timeoutMs: number;
  /** Most stdout bytes kept; more stops the program (SIGKILL to the group): `overflow`. */
  maxBytes: number;
  /** SIGTERM → SIGKILL delay, ms (default 1000). */
  killAfterMs?: number;
  /** Aborting stops the program (SIGTERM, then SIGKILL): `canceled`. */
  signal?: AbortSignal;
  /** The environment: added to this process's (`extendEnv`, default) or the whole of it. */
  env?: NodeJS.ProcessEnv;
  /** false: `env` is the whole environment. Default true. */
  extendEnv?: boolean;
  /** Working folder. */
  cwd?: string;
}

/** What {@link runBounded} came to. Text is UTF-8 decoded; at most the caps are kept. */
export interface BoundedResult {
  stdout: string;
  stderr: string;
  /** The exit code; null when killed by a signal; undefined when it never started or never ended. */
  exitCode: number | null | undefined;
  /** The signal that ended it, if one did. */
  signal?: string;
  /** Node's error code when it could not be started (ENOENT, EACCES, ...). */
  startError?: string;
  /** It ran past `timeoutMs` and was stopped. */
  timedOut: boolean;
  /** The caller's AbortSignal stopped it. */
  canceled: boolean;
  /** It printed more than `maxBytes` on stdout and was stopped. */
  overflow: boolean;
  /** Bytes seen on stdout (kept or not). */
  stdoutBytes: number;
}

/** Most stderr bytes kept (the first ones: a command's error line comes first). */
export const STDERR_KEEP_BYTES = 64 * 1024;
/** After the SIGKILL, how long to wait for the pipes before giving up on them, ms. */
const PIPE_GRACE_MS = 1000;

/**
 * Collects a stream's first `cap` bytes as text (decoded chunk by chunk, so the bytes are not held
 * twice); counts all; calls `onOver` once more than `cap` came.
 */
function collector(cap: number, onOver?: () => void) {
  const parts: string[] = [];
  const decoder = new StringDecoder("utf8");
  let seen = 0;
  return {
    add(chunk: Buffer | string) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (seen < cap) parts.push(decoder.write(b.subarray(0, cap - seen)));
      seen += b.length;
      if (seen > cap) onOver?.();
    },
    text: () => parts.join("") + decoder.end(),
    get seen() {
      return seen;
    },
  };
}

/**
 * Runs `program args` (no shell) under a deadline and an output cap, in a process group of its own.
 * The last resort: `timeoutMs + killAfterMs + 1000` ms after the start it returns whatever happens
 * (a process that left the group may hold the pipes).
 * @returns a {@link BoundedResult}; never rejects for a process problem.
 */
export async function runBounded(program: string, args: readonly string[], o: BoundedOptions): Promise<BoundedResult> {
  const timeoutMs = Math.max(1, Math.floor(o.timeoutMs));
  const killAfterMs = o.killAfterMs ?? 1000;
  const { execa } = await loadExeca();
  const child = execa(program, [...args], {
    detached: OWN_GROUP,
    buffer: false,
    reject: false,
    stdin: "ignore",
    windowsHide: true,
    ...(o.env ? { env: o.env } : {}),
    extendEnv: o.extendEnv ?? true,
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  const forget = trackGroup(OWN_GROUP ? child.pid : undefined);
  const state = { timedOut: false, canceled: false, overflow: false };
  let forceTimer: NodeJS.Timeout | undefined;
  const stop = (hard: boolean) => {
    const signal = hard ? "SIGKILL" : "SIGTERM";
    if (OWN_GROUP) signalGroup(child.pid, signal);
    else if (child.pid !== undefined) child.kill(signal);
    if (!hard) forceTimer ??= setTimeout(() => stop(true), killAfterMs);
  };
  const out = collector(o.maxBytes, () => {
    if (!state.overflow) {
      state.overflow = true;
      stop(true);
    }
  });
  const err = collector(STDERR_KEEP_BYTES);
  child.stdout?.on("data", out.add);
  child.stderr?.on("data", err.add);
  const onAbort = () => {
    state.canceled = true;
    stop(false);
  };
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  const deadline = setTimeout(() => {
    state.timedOut = true;
    stop(false);
  }, timeoutMs);
  let lastResort: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<"gave-up">((done) => {
    lastResort = setTimeout(() => done("gave-up"), timeoutMs + killAfterMs + PIPE_GRACE_MS);
  });
  const r = await Promise.race([child, gaveUp]);
  for (const t of [deadline, forceTimer, lastResort]) clearTimeout(t);
  o.signal?.removeEventListener("abort", onAbort);
  if (r === "gave-up") stop(true);
  forget();
  const ended = r === "gave-up" ? { exitCode: undefined } : endOf(r);
  return { stdout: out.text(), stderr: err.text(), ...ended, ...state, stdoutBytes: out.seen };
}

/** Exit code, signal and start error of execa's result. */
function endOf(r: {
  exitCode?: number;
  signal?: string;
  code?: string;
  failed: boolean;
  isTerminated?: boolean;
}): Pick<BoundedResult, "exitCode" | "signal" | "startError"> {
  if (r.exitCode === undefined && !r.signal && r.failed) return { exitCode: undefined, startError: r.code ?? "ERROR" };
  return { exitCode: r.exitCode ?? null, ...(r.signal ? { signal: r.signal } : {}) };
}
