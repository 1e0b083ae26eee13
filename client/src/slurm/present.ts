/**
 * What the Slurm view shows, as plain data (no `vscode` import; unit-tested): one row per partition
 * with total/free GPUs, one per job of the user with state, GPUs, nodes, elapsed/limit and reason,
 * and the calm status line of a slow or failing query.
 */
import type { PartitionGpus, SlurmJob } from "../../../common/src/slurm/parse";

/** Job states in which a job may still run (scancel makes sense). Others are final (squeue(1), JOB STATE CODES). */
export const ACTIVE_STATES: ReadonlySet<string> = new Set([
  "PENDING",
  "RUNNING",
  "CONFIGURING",
  "COMPLETING",
  "SUSPENDED",
  "REQUEUED",
  "REQUEUE_HOLD",
  "REQUEUE_FED",
  "RESIZING",
  "SIGNALING",
  "STAGE_OUT",
  "STOPPED",
  "RESV_DEL_HOLD",
]);

/** Whether the job can still be cancelled: any active state (a state list such as `PENDING,REQUEUED` counts by its first). */
export function isActive(state: string): boolean {
  return ACTIVE_STATES.has(state.split(",")[0]);
}

/** `H:MM:SS`, or `D-HH:MM:SS` from one day on (squeue's own form); seconds ≥ 0. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const two = (n: number) => String(n).padStart(2, "0");
  return d > 0 ? `${d}-${two(h)}:${two(m)}:${two(s % 60)}` : `${h}:${two(m)}:${two(s % 60)}`;
}

/**
 * Seconds the job has run at `nowSec` (Unix seconds): squeue's own run time when it printed one, else
 * from its start to its end (finished) or to now (running); null before it started.
 */
export function elapsedSeconds(job: SlurmJob, nowSec: number): number | null {
  if (job.runTimeSeconds !== undefined) return job.runTimeSeconds;
  if (job.startTime === null) return null;
  const end = isActive(job.state) ? nowSec : (job.endTime ?? nowSec);
  return Math.max(0, Math.min(end, nowSec) - job.startTime);
}

/** The GPUs a job asked for, as words: `2 GPUs/node`, `4 GPUs`, `1 GPU/task`; `no GPU` when none. */
export function jobGpus(job: SlurmJob): string {
  const plural = (n: number) => `${n} GPU${n === 1 ? "" : "s"}`;
  if (job.gpusPerNode) return `${plural(job.gpusPerNode)}/node`;
  if (job.gpusPerJob) return plural(job.gpusPerJob);
  if (job.gpusPerTask) return `${plural(job.gpusPerTask)}/task`;
  return "no GPU";
}

/** A row of the view. */
export interface SlurmRow {
  label: string;
  description: string;
  tooltip: string;
}

/** A detail row under a job: `GPUs` · `2/node`. */
export interface SlurmDetailRow {
  label: "GPUs" | "Time" | "Nodes";
  description: string;
}

/** The row of a partition: `gpu (default)` · `1 of 2 GPUs free · 1 node · a100`. */
export function partitionRow(p: PartitionGpus): SlurmRow {
  const nodes = `${p.nodes} node${p.nodes === 1 ? "" : "s"}`;
  const gpus = p.gpus === 0 ? "no GPUs" : `${p.gpusFree} of ${p.gpus} GPU${p.gpus === 1 ? "" : "s"} free`;
  const types = p.types.length ? ` · ${p.types.join(", ")}` : "";
  return {
    label: p.isDefault ? `${p.partition} (default)` : p.partition,
    description: `${gpus} · ${nodes}${types}`,
    tooltip: `Partition ${p.partition}: ${p.gpus} GPUs on ${nodes}, ${p.gpusUsed} in use, ${p.gpusFree} free on nodes that take jobs (sinfo Gres/GresUsed)`,
  };
}

/** Elapsed / limit and where a job runs, as the job's rows and tooltip write them. */
function jobFacts(
  job: SlurmJob,
  nowSec: number,
): { time: string; where: string; elapsed: number | null; limit: string } {
  const elapsed = elapsedSeconds(job, nowSec);
  const limit = job.timeLimitMinutes === null ? "no limit" : formatDuration(job.timeLimitMinutes * 60);
  const where = job.nodes || (job.nodeCount ? `${job.nodeCount} node${job.nodeCount === 1 ? "" : "s"}` : "");
  return { time: `${elapsed === null ? "-" : formatDuration(elapsed)} / ${limit}`, where, elapsed, limit };
}

/**
 * The row of a job: `12 train` · `RUNNING`, `PENDING (Resources)`. Only the state (and Slurm's
 * reason) is on the row, so that it is not cut at the default 300 px side bar; GPUs, elapsed/limit
 * and nodes are the job's {@link jobDetailRows} and its tooltip.
 */
export function jobRow(job: SlurmJob, nowSec: number): SlurmRow {
  const f = jobFacts(job, nowSec);
  return {
    label: `${job.id} ${job.name}`,
    description: job.reason ? `${job.state} (${job.reason})` : job.state,
    tooltip: [
      `Job ${job.id} (${job.name}) of ${job.user || "you"} on partition ${job.partition || "?"}`,
      `State: ${job.state}${job.reason ? ` (${job.reason})` : ""}`,
      `GPUs: ${jobGpus(job)}${job.gresDetail.length ? ` — ${job.gresDetail.join(", ")}` : ""}`,
      `Nodes: ${f.where || "not yet allocated"}`,
      `Elapsed / limit: ${f.elapsed === null ? "not started" : formatDuration(f.elapsed)} / ${f.limit}`,
    ].join("\n"),
  };
}

/** The rows under a job: `GPUs` · `2 GPUs/node`, `Time` · `0:00:05 / 1:00:00` (elapsed / limit, `-` before it starts), `Nodes` · `gpunode1` (`not yet allocated` while pending). */
export function jobDetailRows(job: SlurmJob, nowSec: number): SlurmDetailRow[] {
  const f = jobFacts(job, nowSec);
  return [
    { label: "GPUs", description: jobGpus(job) },
    { label: "Time", description: f.time },
    { label: "Nodes", description: f.where || "not yet allocated" },
  ];
}

/**
 * The status line of a failing query, shown as a tree row (never a pop-up): what failed, Slurm's
 * words, and when the next try comes; where Slurm has no configuration at all, a row that says so.
 */
export function failureRow(what: string, message: string, retryInSeconds: number | null): SlurmRow {
  const retry = retryInSeconds === null ? "" : ` — next try in ${retryInSeconds} s`;
  const reason = failureReason(what, message);
  const none = reason === NO_CONFIGURATION;
  // No configuration is a state, not an error: a short row that fits the default side bar width
  // (300 px), the retry and Slurm's own words in the tooltip.
  return {
    label: none ? "Slurm not configured" : `${what} failed`,
    description: none ? NO_CONFIGURATION_HINT : `${reason}${retry}`,
    tooltip: `${message}${retry}\nThe view keeps polling, less often after each failure (GPU Pilot: Refresh Slurm tries now).`,
  };
}

/** Whether `message`, from `what` failing, says that this machine has no Slurm configuration ({@link NO_CONFIGURATION}). */
export function isNotConfigured(what: string, message: string): boolean {
  return failureReason(what, message) === NO_CONFIGURATION;
}

/**
 * The view's one row where neither sinfo nor squeue finds a configuration: `Slurm not configured` ·
 * `no slurm.conf`, said once for the view instead of under Partitions and again under My jobs
 * ({@link failureRow}'s row, sinfo's words in the tooltip); undefined where either query says
 * anything else.
 */
export function notConfiguredRow(
  partitionsError: string | null,
  jobsError: string | null,
  retryInSeconds: number | null,
): SlurmRow | undefined {
  if (partitionsError === null || jobsError === null) return undefined;
  if (!isNotConfigured("sinfo", partitionsError) || !isNotConfigured("squeue", jobsError)) return undefined;
  return failureRow("sinfo", partitionsError, retryInSeconds);
}

/**
 * What a row at the default side-bar width should show first of a failure message: Slurm's words,
 * not the command line before them (`sinfo -N -h -O ...: sinfo: error: Unknown host` → `Unknown
 * host`: the command and the program's `sinfo: error:` prefix are dropped; the tooltip keeps the
 * whole message). A message of another form is kept as it is.
 */
function failureReason(what: string, message: string): string {
  const colon = message.indexOf(": ");
  if (!message.startsWith(`${what} `) || colon < 0) return message;
  let rest = message.slice(colon + 2);
  for (const prefix of [`${what}: `, "error: ", "fatal: "])
    if (rest.startsWith(prefix)) rest = rest.slice(prefix.length);
  return rest || message;
}

/**
 * What Slurm's commands say last where the machine has Slurm's programs but no configuration: no
 * slurm.conf, and no DNS SRV record naming a slurmctld to fetch one from (Slurm's configless
 * lookup, https://slurm.schedmd.com/configless_slurm.html). Seen from Debian's slurm-wlm 22.05's
 * `sinfo` on a machine with neither: three `error:` lines (`resolve_ctls_from_dns_srv:
 * res_nsearch error: Unknown host`, `fetch_config: DNS SRV lookup failed`,
 * `_establish_config_source: failed to fetch config`), then `sinfo: fatal: Could not establish a
 * configuration source`.
 */
const NO_CONFIGURATION = "Could not establish a configuration source";
/** The row's description then (its label says "Slurm not configured"; Slurm's own words, the DNS SRV lookup and the next try stay in the tooltip). */
const NO_CONFIGURATION_HINT = "no slurm.conf";

/**
 * The poll period after `failures` failures in a row: `baseSeconds` (the setting, at least 30),
 * doubled after each failure up to 10 minutes (or the setting, when it is longer).
 */
export function backoffSeconds(baseSeconds: number, failures: number): number {
  const base = Math.max(30, baseSeconds);
  return Math.min(Math.max(600, base), base * 2 ** Math.max(0, Math.min(failures, 10)));
}
