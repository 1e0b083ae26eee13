/**
 * The Slurm commands GPU Pilot runs: `sinfo`, `squeue`, `sbatch --parsable`, `scancel`,
 * `scontrol show job`. Each is started with execa and an argument array (never a shell string),
 * with a time limit (Slurm clients retry for about 9 s when slurmctld is down, see
 * ../shared/slurm-host.md "Pitfalls"), and its failure becomes a {@link SlurmError} whose message is
 * Slurm's own first error line. No `vscode` import: tested against a real Slurm
 * (test/unit/client/slurm/slurmCluster.test.ts).
 */
import { runBounded } from "../../../common/src/run/boundedRun";
import * as os from "node:os";
import {
  parseSinfoNodes,
  parseSqueueFormat,
  parseSqueueJson,
  partitionGpus,
  SINFO_NODE_FORMAT,
  SQUEUE_FORMAT,
  type PartitionGpus,
  type SlurmJob,
} from "../../../common/src/slurm/parse";

/** Where and how the commands run. */
export interface SlurmCliOptions {
  /** Extra environment (for example SLURM_CONF), over the extension host's. */
  env?: NodeJS.ProcessEnv;
  /** Limit of one command, ms (default 15000). */
  timeoutMs?: number;
  /** Aborts the command (the view's poll was superseded). */
  signal?: AbortSignal;
  /** Working folder of the command (sbatch: the script's folder). */
  cwd?: string;
}

/** A Slurm command that failed, timed out or could not be started. */
export class SlurmError extends Error {
  constructor(
    /** The command as typed by a person (`squeue --me --json`), for messages. */
    readonly command: string,
    message: string,
    /** True when it ran past its time limit. */
    readonly timedOut = false,
    /** True when the program is not installed (ENOENT). */
    readonly notFound = false,
    /** Slurm's own error line (stderr), without the command; empty when there was none. */
    readonly detail = "",
    /** True when it printed more than {@link MAX_OUTPUT_BYTES} and was stopped. */
    readonly tooLarge = false,
  ) {
    super(message);
    this.name = "SlurmError";
  }
}

/** Default limit of one Slurm command, ms. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/**
 * Most stdout one Slurm command may print, bytes: more stops it (an error). 22.05's `squeue --json`
 * lists every user's jobs (3-5 KB each); past this {@link queryJobs} asks for the user's own jobs
 * in the short format instead.
 */
export const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/**
 * Runs `program args` (no shell) in a process group of its own, under a deadline and an output cap
 * (common/src/run/boundedRun.ts, as nvidia-smi's queries): at the limit the whole group is stopped,
 * so a wrapper script's children (`ssh login squeue`) end too, within about 2 s of it.
 * @returns its stdout.
 * @throws SlurmError: not found, timed out (after `timeoutMs`), cancelled, more than
 *   {@link MAX_OUTPUT_BYTES} of output, or a non-zero exit (message: the `fatal:` line of stderr,
 *   else its first line that says `error`, else its first line, else the exit code).
 */
export async function runSlurm(program: string, args: readonly string[], opts: SlurmCliOptions = {}): Promise<string> {
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const shown = [program, ...args].join(" ");
  const r = await runBounded(program, args, {
    timeoutMs: timeout,
    maxBytes: MAX_OUTPUT_BYTES,
    env: opts.env ? { ...process.env, ...opts.env } : process.env,
    extendEnv: false,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  if (r.startError === "ENOENT") throw new SlurmError(shown, `${program} is not installed or not on PATH`, false, true);
  if (r.canceled) throw new SlurmError(shown, `${shown} was cancelled`);
  if (r.timedOut)
    throw new SlurmError(
      shown,
      `${shown} did not answer within ${Math.round(timeout / 1000)} s (is slurmctld reachable?)`,
      true,
    );
  if (r.overflow)
    throw new SlurmError(
      shown,
      `${shown} printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MiB: stopped`,
      false,
      false,
      "",
      true,
    );
  if (r.startError) throw new SlurmError(shown, `${program} could not be started (${r.startError})`);
  if (r.exitCode !== 0) {
    const lines = r.stderr
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    // Slurm ends with its `fatal:` line where there is one (after the `error:` lines that led to it:
    // "sinfo: fatal: Could not establish a configuration source" after three DNS lookup errors).
    const line =
      lines.find((l) => /\bfatal:/.test(l)) ??
      lines.find((l) => /error/i.test(l)) ??
      lines[0] ??
      `exit code ${String(r.exitCode ?? r.signal)}`;
    throw new SlurmError(shown, `${shown}: ${line}`, false, false, lines.length ? line : "");
  }
  return r.stdout;
}

/** GPUs of each partition: `sinfo -N -h -O <Gres, GresUsed, ...>`, summed per partition. @throws SlurmError, or Error for output it cannot read. */
export async function queryPartitions(opts: SlurmCliOptions = {}): Promise<PartitionGpus[]> {
  return partitionGpus(parseSinfoNodes(await runSlurm("sinfo", ["-N", "-h", "-O", SINFO_NODE_FORMAT], opts)));
}

/** Whether `squeue --json` works here (21.08 and later): learnt on the first call, per process. */
let squeueJson: boolean | undefined;

/** Forgets what {@link queryJobs} learnt about `--json` (tests; a changed PATH). */
export function resetSqueueProbe(): void {
  squeueJson = undefined;
}

/** The current user's name, as squeue's `user_name` gives it. */
export function currentUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? "";
  }
}

/**
 * The user's jobs, newest first: `squeue --me --json` where it works, else
 * `squeue --me -t all -h -o <format>`. In 22.05 `--json` ignores every filter (it lists all users'
 * jobs, finished ones too, for MinJobAge: ../shared/slurm-host.md), so the list is filtered on
 * `user_name` here. Finished jobs that squeue still holds are kept (the view shows how they ended).
 * @throws SlurmError, or Error for output it cannot read.
 */
export async function queryJobs(
  opts: SlurmCliOptions & { user?: string } = {},
): Promise<{ jobs: SlurmJob[]; source: "json" | "format" }> {
  const user = opts.user ?? currentUser();
  let jobs: SlurmJob[] | undefined;
  let source: "json" | "format" = "json";
  if (squeueJson !== false) {
    try {
      jobs = parseSqueueJson(await runSlurm("squeue", ["--me", "--json"], opts)).filter(
        (j) => !user || j.user === user,
      );
      squeueJson = true;
    } catch (e) {
      // A squeue before 21.08 says "unrecognized option '--json'", one built without the JSON
      // plugins names the plugin; anything else (timeout, controller down) is a real failure, and
      // --json is tried again next time.
      // So is a JSON list too large to read (22.05 lists every user's jobs there).
      if (
        !(e instanceof SlurmError) ||
        e.timedOut ||
        e.notFound ||
        !(e.tooLarge || /unrecognized option|invalid option|plugin/i.test(e.detail))
      )
        throw e;
      squeueJson = false;
    }
  }
  if (!jobs) {
    source = "format";
    jobs = parseSqueueFormat(await runSlurm("squeue", ["--me", "-t", "all", "-h", "-o", SQUEUE_FORMAT], opts));
  }
  return { jobs: jobs.sort((a, b) => b.id - a.id), source };
}

/**
 * Submits a job script: `sbatch --parsable <script>`, in the script's folder unless `cwd` is given.
 * @returns the job id (sbatch --parsable prints `id` or `id;cluster`).
 * @throws SlurmError (Slurm's reason: a bad partition, too many GPUs, ...), or when the output holds no id.
 */
export async function submitScript(
  script: string,
  opts: SlurmCliOptions = {},
): Promise<{ jobId: string; cluster: string | null }> {
  const out = (await runSlurm("sbatch", ["--parsable", script], opts)).trim().split("\n").pop() ?? "";
  const m = /^(\d+(?:_\d+)?)(?:;(\S+))?$/.exec(out.trim());
  if (!m) throw new SlurmError(`sbatch --parsable ${script}`, `sbatch printed no job id: ${JSON.stringify(out)}`);
  return { jobId: m[1], cluster: m[2] ?? null };
}

/** Cancels job `id` (`scancel <id>`). Slurm itself refuses another user's job (`Access/permission denied`). @throws SlurmError; Error for a malformed id. */
export async function cancelJob(id: string, opts: SlurmCliOptions = {}): Promise<void> {
  if (!/^\d+(?:_\d+)?$/.test(id)) throw new Error(`not a Slurm job id: ${JSON.stringify(id)}`);
  await runSlurm("scancel", [id], opts);
}

/** What `scontrol show job <id>` says about a job's files and state. */
export interface JobDetails {
  state: string | null;
  user: string | null;
  /** The expanded output file (StdOut=), null when Slurm reports none. */
  stdout: string | null;
  workDir: string | null;
}

/**
 * Reads `scontrol show job <id>` (the multi-line form: each of StdOut=, WorkDir= on a line of its
 * own, so paths with spaces survive). 22.05 prints a `%%` of the output pattern unexpanded while the
 * file gets one `%` (measured, test/fixtures/slurm/measured.md): `%%` is turned into `%` here.
 * @throws SlurmError (for example `Invalid job id specified` once the job left the controller).
 */
export async function jobDetails(id: string, opts: SlurmCliOptions = {}): Promise<JobDetails> {
  return parseScontrolJob(await runSlurm("scontrol", ["show", "job", id], opts));
}

/** Parses the multi-line `scontrol show job` output (see {@link jobDetails}). */
export function parseScontrolJob(text: string): JobDetails {
  const field = (name: string): string | null => {
    const m = new RegExp(`^\\s*${name}=(.*)$`, "m").exec(text);
    return m ? m[1].trimEnd() : null;
  };
  const inline = (name: string): string | null => new RegExp(`(?:^|\\s)${name}=(\\S*)`).exec(text)?.[1] ?? null;
  const out = field("StdOut");
  return {
    state: inline("JobState"),
    user: inline("UserId")?.replace(/\(.*$/, "") ?? null,
    stdout: out ? out.replace(/%%/g, "%") : null,
    workDir: field("WorkDir"),
  };
}
