/**
 * The Slurm job script that "GPU Pilot: Submit Active File to Slurm" writes. Pure: no
 * `vscode` import, no file system; unit-tested, and its output is linted by the project's own
 * job-script rules (GPU021-GPU025) in the tests.
 *
 * Shape of the script:
 * - `#SBATCH` lines only, at the top, before the first command (Slurm ignores later ones, GPU023):
 *   job name, partition, nodes, tasks per node, GPUs per node (`--gpus-per-node=N` or
 *   `--gres=gpu:N`), time limit, output file, working folder;
 * - `export CUDA_DEVICE_ORDER=PCI_BUS_ID`, and never a `CUDA_VISIBLE_DEVICES` write: Slurm sets it for
 *   the job and again for each srun step, renumbered from 0 (GPU021; test/fixtures/slurm/measured.md);
 * - the step, one `srun` line:
 *   - launcher `python`: `--ntasks-per-node=<GPUs>`, so that each GPU gets one process (each reads
 *     SLURM_LOCALID/SLURM_PROCID to choose its GPU) — `srun <python> <file> <args>`;
 *   - launcher `torchrun`: `--ntasks-per-node=1`, torchrun itself starts `--nproc_per_node=<GPUs>`
 *     workers per node; the rendezvous is on the first node of the allocation, taken from
 *     `scontrol show hostnames "$SLURM_JOB_NODELIST"`, and `--nnodes "$SLURM_NNODES"`,
 *     `--rdzv_id "$SLURM_JOB_ID"` come from Slurm's own variables (sbatch(1), "OUTPUT ENVIRONMENT
 *     VARIABLES"). torchrun is started as `<python> -m torch.distributed.run`, the module the
 *     `torchrun` console script runs, so that the chosen interpreter's torch is the one used.
 *
 * Quoting: words of the bash part are single-quoted (`'` becomes `'\''`); values of `#SBATCH` lines,
 * which sbatch reads itself (not bash), are double-quoted with `\` and `"` backslash-escaped, and `%`
 * in the output path doubled (`%%`, sbatch(1) "filename pattern") so that only the `%j`/`%x` this
 * module writes are expanded. A newline or NUL in any value is refused.
 */

/** How the job asks for GPUs: `--gpus-per-node=N` or `--gres=gpu:N` (both are GPUs per node, sbatch(1)). */
export type GpuOption = "gpus-per-node" | "gres";

/** What runs inside the job step. */
export type SlurmLauncher = "python" | "torchrun";

/** The launchers, in quick-pick order. */
export const SLURM_LAUNCHERS: readonly SlurmLauncher[] = ["python", "torchrun"];

/** The default output file pattern beside the script: `%x` is the job name, `%j` the job id (sbatch(1) filename pattern). */
export const DEFAULT_OUTPUT_PATTERN = "slurm-%x-%j.out";

/** The port of torchrun's c10d rendezvous on the first node (torchrun's own default port is 29400). */
export const RDZV_PORT = 29400;

/** Input of {@link jobScript}. */
export interface JobScriptSpec {
  /** The program to run: an absolute path of the Python file. */
  file: string;
  /** Its arguments, one word each (never split again). */
  args?: readonly string[];
  /** The Python interpreter on the compute nodes: a path or a bare name (`python3`). */
  python: string;
  /** Job name (`--job-name`); letters, digits, `._-`; other characters become `_`. Empty: none. */
  jobName?: string;
  /** Partition (`--partition`), or a comma-separated list; empty/undefined: the cluster's default. */
  partition?: string;
  /** Nodes (`--nodes`), a whole number ≥ 1. */
  nodes: number;
  /** GPUs per node, a whole number ≥ 1. */
  gpusPerNode: number;
  /** How the GPUs are asked for. Default `gpus-per-node`. */
  gpuOption?: GpuOption;
  /**
   * Time limit (`--time`) in one of sbatch's forms: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`.
   * Empty/undefined: the partition's default.
   */
  time?: string;
  /**
   * The output file (`--output`): an absolute path; `%j` (job id) and `%x` (job name) in its file
   * name are expanded by Slurm, every other `%` is written literally. Use {@link outputPathFor}.
   */
  output: string;
  /** The job's working folder (`--chdir`), absolute; default: the file's folder. */
  chdir?: string;
  /** The launcher of the step. */
  launcher: SlurmLauncher;
}

/** A value {@link jobScript} refuses, with the field named. */
export class JobScriptError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "JobScriptError";
  }
}

/** Single-quotes one word for bash (`it's` → `'it'\''s'`); plain words (`[A-Za-z0-9_./=:@+-]`) stay bare. */
export function bashQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_./=:@+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Quotes an `#SBATCH` option value as sbatch reads it (double quotes, `\` and `"` escaped); plain values stay bare. */
export function sbatchQuote(value: string): string {
  if (/^[A-Za-z0-9_./=:@+%,-]+$/.test(value)) return value;
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** `--time` forms of sbatch(1): minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds. */
const TIME_RE = /^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|\d+-\d{1,2}:\d{1,2}:\d{1,2})$/;

/** Whether `t` is one of sbatch's `--time` forms (see {@link JobScriptSpec.time}). */
export function isSlurmTime(t: string): boolean {
  return TIME_RE.test(t.trim());
}

/** A partition name or comma-separated list as Slurm accepts it on the command line. */
const PARTITION_RE = /^[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*$/;

/** The job name derived from a file path: its base name without `.py`, unsafe characters as `_`. */
export function jobNameFor(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? "job";
  const stem = base.replace(/\.py$/i, "");
  return stem.replace(/[^A-Za-z0-9_.-]/g, "_") || "job";
}

/**
 * The output path for a job script in `folder`: `<folder>/slurm-%x-%j.out` (or `pattern`). The
 * folder's own `%` characters are doubled, so Slurm expands only the pattern's `%x`/`%j`.
 */
export function outputPathFor(folder: string, pattern: string = DEFAULT_OUTPUT_PATTERN): string {
  const sep = folder.endsWith("/") ? "" : "/";
  return `${folder.replace(/%/g, "%%")}${sep}${pattern}`;
}

function noControl(field: string, v: string): void {
  if (/[\n\r\0]/.test(v))
    throw new JobScriptError(
      field,
      `${field} contains a line break or NUL, which cannot be written into a job script: ${JSON.stringify(v)}`,
    );
}

function wholeAtLeastOne(field: string, n: number): void {
  if (!Number.isInteger(n) || n < 1)
    throw new JobScriptError(field, `${field} must be a whole number of at least 1, got ${String(n)}`);
}

const dirname = (p: string): string => {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
};

/**
 * The job script text (LF line ends, a final newline).
 * @throws JobScriptError naming the field for a value it cannot write: a relative file, output or
 *   chdir path, nodes/GPUs not a whole number ≥ 1, a time not in sbatch's forms, a partition with
 *   characters Slurm does not take, a line break or NUL anywhere.
 */
export function jobScript(spec: JobScriptSpec): string {
  const args = spec.args ?? [];
  for (const [field, v] of [
    ["file", spec.file],
    ["python", spec.python],
    ["output", spec.output],
    ["chdir", spec.chdir ?? ""],
    ["partition", spec.partition ?? ""],
    ["time", spec.time ?? ""],
    ["jobName", spec.jobName ?? ""],
  ] as const)
    noControl(field, v);
  args.forEach((a, i) => noControl(`args[${i}]`, a));
  if (!spec.file.startsWith("/"))
    throw new JobScriptError("file", `the file must be an absolute path, got ${JSON.stringify(spec.file)}`);
  if (!spec.output.startsWith("/"))
    throw new JobScriptError("output", `the output file must be an absolute path, got ${JSON.stringify(spec.output)}`);
  if (spec.chdir !== undefined && !spec.chdir.startsWith("/"))
    throw new JobScriptError("chdir", `the working folder must be an absolute path, got ${JSON.stringify(spec.chdir)}`);
  if (!spec.python.trim()) throw new JobScriptError("python", "no Python interpreter given");
  wholeAtLeastOne("nodes", spec.nodes);
  wholeAtLeastOne("gpusPerNode", spec.gpusPerNode);
  const partition = spec.partition?.trim() ?? "";
  if (partition && !PARTITION_RE.test(partition))
    throw new JobScriptError(
      "partition",
      `partition ${JSON.stringify(partition)} is not a Slurm partition name (letters, digits, '_', '.', '-'; several separated by commas)`,
    );
  const time = spec.time?.trim() ?? "";
  if (time && !TIME_RE.test(time))
    throw new JobScriptError(
      "time",
      `time limit ${JSON.stringify(time)} is not one of sbatch's forms: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S (for example 30, 2:00:00 or 1-12:00:00)`,
    );
  if (spec.launcher !== "python" && spec.launcher !== "torchrun")
    throw new JobScriptError("launcher", `unknown launcher ${JSON.stringify(spec.launcher)} (python or torchrun)`);

  const gpus = spec.gpusPerNode;
  const tasksPerNode = spec.launcher === "torchrun" ? 1 : gpus;
  const jobName = spec.jobName === undefined ? jobNameFor(spec.file) : spec.jobName.replace(/[^A-Za-z0-9_.-]/g, "_");
  const lines = [
    "#!/bin/bash",
    `# Written by GPU Pilot for ${spec.file.split("/").pop() ?? spec.file}. Edit freely, then submit (sbatch).`,
  ];
  const sb = (opt: string, value?: string) =>
    lines.push(value === undefined ? `#SBATCH --${opt}` : `#SBATCH --${opt}=${sbatchQuote(value)}`);
  if (jobName) sb("job-name", jobName);
  if (partition) sb("partition", partition);
  sb("nodes", String(spec.nodes));
  sb("ntasks-per-node", String(tasksPerNode));
  if ((spec.gpuOption ?? "gpus-per-node") === "gres") sb("gres", `gpu:${gpus}`);
  else sb("gpus-per-node", String(gpus));
  if (time) sb("time", time);
  sb("output", spec.output);
  sb("chdir", spec.chdir ?? dirname(spec.file));
  lines.push("");
  lines.push(
    "# Slurm sets CUDA_VISIBLE_DEVICES for the job and for each srun step, numbered from 0: do not set it here.",
  );
  lines.push("export CUDA_DEVICE_ORDER=PCI_BUS_ID");
  lines.push("");
  const program = [bashQuote(spec.file), ...args.map(bashQuote)].join(" ");
  if (spec.launcher === "python") {
    lines.push(
      `# One task per GPU (${tasksPerNode} per node); each task reads SLURM_LOCALID / SLURM_PROCID to pick its GPU.`,
    );
    lines.push(`srun ${bashQuote(spec.python)} ${program}`);
  } else {
    lines.push(
      "# One torchrun per node; it starts one worker per GPU. The rendezvous is on the first node of the job.",
    );
    lines.push(`head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)`);
    lines.push(
      `srun ${bashQuote(spec.python)} -m torch.distributed.run --nnodes "$SLURM_NNODES" --nproc_per_node ${gpus} ` +
        `--rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$head_node:${RDZV_PORT}" ${program}`,
    );
  }
  return lines.join("\n") + "\n";
}
