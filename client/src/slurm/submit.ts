/**
 * "GPU Pilot: Submit Active File to Slurm" (`gpuPilot.slurm.submit`).
 *
 * On a Python file: asks (quick pick, pre-filled from the `gpuPilot.slurm.*` settings) for partition
 * (the Slurm view's partition rows: free GPUs, the default marked), nodes, GPUs per node, launcher
 * and time. The launcher is torchrun, with the reason shown, when the user has not set
 * `gpuPilot.slurm.launcher` and the language server's `gpuPilot/runFacts` says the file reads
 * LOCAL_RANK/RANK/WORLD_SIZE without a default or calls an env:// `init_process_group`. Then writes
 * a job script (jobScript.ts) beside the file, or in `gpuPilot.slurm.scriptFolder`, or in a scratch folder (the extension's global storage) when the
 * file is untitled or its folder cannot be written; opens it for editing with a "Submit" button
 * (and the "Submit to Slurm" CodeLens on its first line). An existing script with other content is
 * never overwritten: the next free name (`train-2.sbatch`) is used.
 *
 * On a job script (`.sbatch`, `.slurm`, or a file with `#SBATCH` lines): saves it and submits it with
 * `sbatch --parsable <script>` (execa, argument array, in the script's folder), shows the job id and
 * follows the job's output file live in an output channel `Slurm job <id>` (the path from `scontrol
 * show job`, followed also before it exists), until the job ends.
 *
 * Nothing is submitted in Restricted Mode.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { log } from "../log";
import { fileKind, readWorkspaceFile } from "../../../common/src/fs/workspaceFile";
import { requireTrust } from "../run/runActiveFile";
import { resolveInterpreter } from "../run/interpreter";
import * as runSettings from "../run/settings";
import { jobDetails, queryPartitions, submitScript, type SlurmCliOptions } from "./cli";
import { followFile, TextTail, type Follow } from "./follow";
import type { RunFacts } from "../../../common/src/run/runFacts";
import type { RunFactsResult } from "../../../common/src/lsp/protocol";
import { isActive, partitionRow } from "./present";
import {
  isSlurmTime,
  jobNameFor,
  jobScript,
  JobScriptError,
  outputPathFor,
  SLURM_LAUNCHERS,
  type GpuOption,
  type JobScriptSpec,
  type SlurmLauncher,
} from "./jobScript";

/** Characters of a followed job's output kept in memory (its end). */
export const JOB_TAIL_CHARS = 1024 * 1024;

/** The `gpuPilot.slurm.*` values for one submission. */
export interface SlurmSubmitSettings {
  partition: string;
  nodes: number;
  gpusPerNode: number;
  gpuOption: GpuOption;
  time: string;
  launcher: SlurmLauncher;
  /** Why the launcher is not the setting's value (`torchrun: the file reads LOCAL_RANK (line 3)`); absent when it is. */
  launcherReason?: string;
  scriptFolder: string;
}

/** Whether the user set `gpuPilot.slurm.launcher` themselves (a global, workspace or folder value), for `resource`. */
export function launcherSetByUser(resource?: vscode.Uri): boolean {
  const i = vscode.workspace.getConfiguration("gpuPilot.slurm", resource).inspect<unknown>("launcher");
  return (
    i !== undefined &&
    (i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined)
  );
}

/**
 * Why `facts` (the language server's `gpuPilot/runFacts` for a file) call for torchrun, in words
 * (`the file reads LOCAL_RANK (line 3)`, 1-based line), or null when they do not: a read of
 * LOCAL_RANK / RANK / WORLD_SIZE without a default (it fails under a plain `srun python`), or an
 * `init_process_group` that takes rank and world size from the environment (env://).
 */
export function torchrunReason(facts: RunFacts): string | null {
  const read = facts.distributedReads.find((r) => !r.withDefault);
  if (read) return `the file reads ${read.variable} (line ${read.line + 1})`;
  const init = facts.envInitProcessGroup[0];
  if (init)
    return `the file calls init_process_group with rank and world size from the environment (env://), line ${init.line + 1}`;
  return null;
}

/** Reads the `gpuPilot.slurm.*` submit settings for `resource`; wrong types fall back to the defaults. */
export function submitSettings(resource?: vscode.Uri): SlurmSubmitSettings {
  const c = vscode.workspace.getConfiguration("gpuPilot.slurm", resource);
  const str = (k: string, d: string) => {
    const v = c.get<unknown>(k);
    return typeof v === "string" ? v.trim() : d;
  };
  const int = (k: string, d: number) => {
    const v = c.get<unknown>(k);
    return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : d;
  };
  const launcher = c.get<unknown>("launcher");
  const time = str("time", "01:00:00");
  return {
    partition: str("partition", ""),
    nodes: int("nodes", 1),
    gpusPerNode: int("gpusPerNode", 1),
    gpuOption: c.get<unknown>("gpuOption") === "gres" ? "gres" : "gpus-per-node",
    time: time === "" || isSlurmTime(time) ? time : "01:00:00",
    launcher: launcher === "torchrun" ? "torchrun" : "python",
    scriptFolder: str("scriptFolder", ""),
  };
}

/** A job submitted from this window. */
export interface SubmittedJob {
  jobId: string;
  script: string;
  /** The output file Slurm writes (from scontrol), null until known. */
  output: string | null;
  /** The end of what the output channel has shown of the job's output ({@link JOB_TAIL_CHARS} at most). */
  tail: TextTail;
  /** The last state seen; null before the first look. */
  state: string | null;
  /** True once the job ended and the output was read to its end. */
  done: boolean;
}

/** What the command needs from the extension. */
export interface SlurmHost {
  /** Folder for scripts of untitled or read-only files (the extension's global storage). */
  readonly scratchFolder: string;
  /** Called after a submit or cancel: the Slurm view queries again. */
  refreshView(): void;
  /** Environment of the Slurm commands (default: the extension host's). */
  cliOptions(): SlurmCliOptions;
  /**
   * `gpuPilot/runFacts` from the language server (Ctx.runFacts): whether the file expects a
   * distributed launcher. Should never reject (a rejection counts as `ok: false`). Absent: not asked.
   */
  runFacts?(uri: vscode.Uri, text: string): Promise<RunFactsResult>;
}

/** Options of {@link submitCommand}: `ask: false` takes the settings as they are (API, tests); `submit: true` submits the written script at once. */
export interface SubmitOptions {
  ask?: boolean;
  submit?: boolean;
}

/** Whether `doc` is a job script: `.sbatch`/`.slurm`, or any file with a line starting `#SBATCH`. */
export function isJobScript(fileName: string, text: string): boolean {
  return /\.(sbatch|slurm)$/i.test(fileName) || /^#SBATCH[ \t]/m.test(text);
}

/** Follows job outputs and remembers the jobs submitted here. */
export class SlurmJobs implements vscode.Disposable {
  private readonly jobs = new Map<string, SubmittedJob>();
  private readonly channels = new Map<string, vscode.OutputChannel>();
  private readonly follows = new Map<
    string,
    {
      follow: Follow | null;
      timer: NodeJS.Timeout;
      checks: number;
      busy: boolean;
      soon: boolean;
      tick: () => Promise<void>;
    }
  >();
  private disposed = false;

  constructor(private readonly host: SlurmHost) {}

  /** The jobs submitted from this window, oldest first (copies). */
  list(): SubmittedJob[] {
    return [...this.jobs.values()].map((j) => ({ ...j }));
  }

  /** The output channel of a job, created on first use; at most 5 are kept (the oldest go). */
  channel(jobId: string): vscode.OutputChannel {
    let ch = this.channels.get(jobId);
    if (!ch) {
      ch = vscode.window.createOutputChannel(`Slurm job ${jobId}`);
      this.channels.set(jobId, ch);
      while (this.channels.size > 5) {
        const [oldest, c] = this.channels.entries().next().value as [string, vscode.OutputChannel];
        this.stopFollow(oldest);
        c.dispose();
        this.channels.delete(oldest);
      }
    }
    return ch;
  }

  /**
   * Starts following job `jobId`'s output (its path from `scontrol show job`; the file itself is
   * read every 500 ms, which costs Slurm nothing) and checks the job's state with `scontrol show
   * job` after 2, 4, 8, 16 s and then every 30 s (the view's own limit), until it ends.
   */
  follow(jobId: string, script: string): SubmittedJob {
    const job: SubmittedJob = this.jobs.get(jobId) ?? {
      jobId,
      script,
      output: null,
      tail: new TextTail(JOB_TAIL_CHARS),
      state: null,
      done: false,
    };
    this.jobs.set(jobId, job);
    if (this.follows.has(jobId)) return job;
    const ch = this.channel(jobId);
    ch.show(true);
    const entry: {
      follow: Follow | null;
      timer: NodeJS.Timeout;
      checks: number;
      busy: boolean;
      soon: boolean;
      tick: () => Promise<void>;
    } = {
      follow: null,
      timer: setTimeout(() => undefined, 0),
      checks: 0,
      busy: false,
      soon: false,
      tick: () => Promise.resolve(),
    };
    this.follows.set(jobId, entry);
    const tick = async () => {
      if (this.disposed || !this.follows.has(jobId)) return;
      entry.busy = true;
      try {
        const d = await jobDetails(jobId, { ...this.host.cliOptions(), timeoutMs: 15_000 });
        job.state = d.state;
        if (!entry.follow && d.stdout) {
          job.output = d.stdout;
          ch.appendLine(`[GPU Pilot] Job ${jobId}: following ${d.stdout}`);
          entry.follow = followFile(d.stdout, {
            intervalMs: 500,
            onData: (t) => {
              job.tail.append(t);
              ch.append(t);
            },
            onSkip: (n) =>
              ch.appendLine(
                `\n[GPU Pilot] Job ${jobId}: ${(n / 1024 / 1024).toFixed(1)} MiB of output skipped (written faster than shown); the whole output is in ${d.stdout}`,
              ),
          });
        }
        if (d.state && !isActive(d.state)) {
          await entry.follow?.stop();
          ch.appendLine(`[GPU Pilot] Job ${jobId} ended: ${d.state}.`);
          job.done = true;
          this.follows.delete(jobId);
          this.host.refreshView();
          return;
        }
      } catch (e) {
        // The job left the controller (MinJobAge): stop, keeping the output read so far. Any other failure (scontrol slow, controller down) is logged and tried again.
        if (/Invalid job id/i.test((e as Error).message)) {
          await entry.follow?.stop();
          ch.appendLine(`[GPU Pilot] Job ${jobId} is no longer known to Slurm; stopped following.`);
          job.done = true;
          this.follows.delete(jobId);
          return;
        }
        log.warn(`Slurm job ${jobId}: ${(e as Error).message}`);
      }
      entry.busy = false;
      const delay = entry.soon ? 0 : entry.follow ? Math.min(30_000, 2000 * 2 ** entry.checks++) : 1000;
      entry.soon = false;
      entry.timer = setTimeout(() => void tick(), delay);
    };
    entry.tick = tick;
    void tick();
    return job;
  }

  /** Checks a followed job's state now (after a cancel), instead of at its next check. */
  checkNow(jobId: string): void {
    const f = this.follows.get(jobId);
    if (!f) return;
    if (f.busy) {
      f.soon = true;
      return;
    }
    clearTimeout(f.timer);
    void f.tick();
  }

  private stopFollow(jobId: string): void {
    const f = this.follows.get(jobId);
    if (!f) return;
    clearTimeout(f.timer);
    void f.follow?.stop();
    this.follows.delete(jobId);
  }

  dispose(): void {
    this.disposed = true;
    for (const id of [...this.follows.keys()]) this.stopFollow(id);
    for (const c of this.channels.values()) c.dispose();
    this.channels.clear();
  }
}

/** The document to submit: `uri`'s, else the active editor's. */
async function targetDocument(uri: vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
  if (uri instanceof vscode.Uri)
    return (
      vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) ??
      vscode.workspace.openTextDocument(uri)
    );
  return vscode.window.activeTextEditor?.document;
}

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** The largest existing job script read to compare with a new one (bytes): job scripts are a few KB. */
const SCRIPT_MAX_BYTES = 1024 * 1024;
/** How many names (`<stem>.sbatch` ... `<stem>-N.sbatch`) are tried before giving up. */
const SCRIPT_NAMES = 1000;

/**
 * The first `<stem>.sbatch`, `<stem>-2.sbatch`, ... in `dir` that is free or is a regular file that
 * already holds exactly `text` (`exists`: then nothing need be written). A name taken by anything
 * else (a symbolic link, dangling or not, a FIFO, a device, a folder, a file over 1 MiB) is passed
 * over, never read through or written through (a committed `train.sbatch ->
 * /dev/zero` took the extension host to 3.4 GB, a FIFO blocked it, a dangling link was written
 * through, outside the workspace). Existing files are read by workspaceFile.ts's safe reader.
 * @throws Error when the first 1,000 names are all taken.
 */
export function scriptPathFor(dir: string, stem: string, text: string): { path: string; exists: boolean } {
  for (let n = 1; n <= SCRIPT_NAMES; n++) {
    const p = path.join(dir, `${stem}${n === 1 ? "" : `-${n}`}.sbatch`);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { path: p, exists: false }; // free
      continue;
    }
    if (!st.isFile()) {
      log.info(`Slurm job script: ${p} is passed over: it is ${fileKind(st)}`);
      continue;
    }
    const read = readWorkspaceFile(p, { maxBytes: SCRIPT_MAX_BYTES });
    if (read.ok && read.bytes.equals(Buffer.from(text, "utf8"))) return { path: p, exists: true };
  }
  throw new Error(
    `no free name for the job script: ${stem}.sbatch to ${stem}-${SCRIPT_NAMES}.sbatch in ${dir} are all taken`,
  );
}

/**
 * Writes a new job script at `p`, which must not exist: created exclusively (O_EXCL, so a link or
 * FIFO put there meanwhile is never followed), 0644 before the umask.
 * @returns null, or why it was not written (a phrase).
 */
export function writeNewScript(p: string, text: string): string | null {
  try {
    const fd = fs.openSync(
      p,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0),
      0o644,
    );
    try {
      fs.writeFileSync(fd, text);
    } finally {
      fs.closeSync(fd);
    }
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EEXIST" ? `${p} appeared meanwhile` : `${p}: ${(e as Error).message}`;
  }
}

/** Asks for the submission's values, pre-filled from the settings; undefined when cancelled. */
async function askValues(s: SlurmSubmitSettings, cli: SlurmCliOptions): Promise<SlurmSubmitSettings | undefined> {
  // Asked in the background: the quick pick shows at once, even when slurmctld is slow to answer.
  const partitionsP = queryPartitions({ ...cli, timeoutMs: 10_000 }).catch((e: unknown) => {
    log.warn(`Submit: sinfo could not list the partitions (${(e as Error).message}); type one instead.`);
    return [];
  });
  const v = { ...s };
  for (;;) {
    const summary = `${v.partition || "default partition"} · ${v.nodes} node${v.nodes === 1 ? "" : "s"} · ${v.gpusPerNode} GPU${v.gpusPerNode === 1 ? "" : "s"}/node (--${v.gpuOption === "gres" ? "gres=gpu:N" : "gpus-per-node"}) · ${v.launcher} · ${v.time || "partition's time limit"}`;
    type Item = vscode.QuickPickItem & { key: string };
    const items: Item[] = [
      { key: "go", label: "$(check) Write the job script", description: summary },
      { key: "partition", label: "Partition", description: v.partition || "(default)" },
      { key: "nodes", label: "Nodes", description: String(v.nodes) },
      { key: "gpus", label: "GPUs per node", description: String(v.gpusPerNode) },
      {
        key: "gpuOption",
        label: "Ask for GPUs with",
        description: v.gpuOption === "gres" ? "--gres=gpu:N" : "--gpus-per-node=N",
      },
      {
        key: "launcher",
        label: "Launcher",
        description: `${v.launcher === "torchrun" ? "torchrun (one task per node)" : "python (one task per GPU)"}${v.launcherReason ? ` — ${v.launcherReason}` : ""}`,
      },
      { key: "time", label: "Time limit", description: v.time || "(the partition's)" },
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: "GPU Pilot: Submit to Slurm",
      placeHolder: "Change a value, or write the job script",
    });
    if (!pick) return undefined;
    if (pick.key === "go") return v;
    if (pick.key === "partition") {
      const partitions = await partitionsP;
      if (partitions.length) {
        // The rows of the Slurm view (present.ts): free GPUs, nodes, GPU types, the default marked.
        const rows = [
          { partition: "", label: "(cluster's default)", description: "no --partition line: Slurm chooses" },
          ...partitions.map((p) => {
            const row = partitionRow(p);
            return { partition: p.partition, label: row.label, description: row.description };
          }),
        ];
        const choice = await vscode.window.showQuickPick(rows, {
          title: "Partition",
          placeHolder: v.partition ? `Now: ${v.partition}` : "Now: the cluster's default",
        });
        if (choice) v.partition = choice.partition;
      } else {
        const choice = await vscode.window.showInputBox({
          title: "Partition",
          value: v.partition,
          prompt: "Empty: the cluster's default partition",
        });
        if (choice !== undefined) v.partition = choice.trim();
      }
    } else if (pick.key === "nodes" || pick.key === "gpus") {
      const t = await vscode.window.showInputBox({
        title: pick.label,
        value: String(pick.key === "nodes" ? v.nodes : v.gpusPerNode),
        validateInput: (x) => (/^[1-9]\d{0,3}$/.test(x.trim()) ? undefined : "A whole number from 1"),
      });
      if (t !== undefined) {
        if (pick.key === "nodes") v.nodes = Number(t);
        else v.gpusPerNode = Number(t);
      }
    } else if (pick.key === "gpuOption") {
      const t = await vscode.window.showQuickPick(["--gpus-per-node=N", "--gres=gpu:N"], {
        title: "Ask Slurm for GPUs with",
      });
      if (t) v.gpuOption = t.startsWith("--gres") ? "gres" : "gpus-per-node";
    } else if (pick.key === "launcher") {
      const t = await vscode.window.showQuickPick(
        SLURM_LAUNCHERS.map((l) => l),
        { title: "Launcher inside the job step" },
      );
      if (t) {
        v.launcher = t as SlurmLauncher;
        delete v.launcherReason;
      }
    } else if (pick.key === "time") {
      const t = await vscode.window.showInputBox({
        title: "Time limit",
        value: v.time,
        prompt: "minutes, H:M:S or D-H:M:S; empty: the partition's",
        validateInput: (x) =>
          x.trim() === "" || isSlurmTime(x) ? undefined : "minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S",
      });
      if (t !== undefined) v.time = t.trim();
    }
  }
}

/** Where the Python file to run lies on disk: its own path, or a copy in the scratch folder for an untitled one. */
function programFile(doc: vscode.TextDocument, scratch: string): string {
  if (doc.uri.scheme === "file" && !doc.isUntitled) return doc.uri.fsPath;
  fs.mkdirSync(scratch, { recursive: true });
  const name = `${
    path
      .basename(doc.uri.path)
      .replace(/[^A-Za-z0-9_.-]/g, "_")
      .replace(/\.py$/i, "") || "untitled"
  }.py`;
  const p = path.join(scratch, name);
  fs.writeFileSync(p, doc.getText());
  return p;
}

/**
 * The settings with the launcher the file calls for: when the user has not set
 * `gpuPilot.slurm.launcher` and the language server's facts say the file expects torchrun
 * ({@link torchrunReason}), torchrun with the reason. When the server cannot answer, `s` as it is
 * (one log line, no message).
 */
async function withLauncherDefault(
  host: SlurmHost,
  doc: vscode.TextDocument,
  s: SlurmSubmitSettings,
): Promise<SlurmSubmitSettings> {
  if (s.launcher === "torchrun" || !host.runFacts || launcherSetByUser(doc.uri)) return s;
  const r: RunFactsResult = await host
    .runFacts(doc.uri, doc.getText())
    .catch((e: unknown) => ({ ok: false as const, error: (e as Error)?.message ?? String(e) }));
  if (!r.ok) {
    log.info(
      `Submit: could not tell whether ${doc.uri.fsPath} needs torchrun (${r.error}); the launcher setting's default (${s.launcher}) is used.`,
    );
    return s;
  }
  const why = torchrunReason(r.facts);
  if (!why) return s;
  log.info(`Submit: launcher torchrun for ${doc.uri.fsPath}: ${why}.`);
  return { ...s, launcher: "torchrun", launcherReason: `torchrun: ${why}` };
}

/**
 * The command. Returns the job id when it submitted one, the written script's path when it wrote
 * one, undefined when refused or cancelled.
 */
export async function submitCommand(
  host: SlurmHost,
  jobs: SlurmJobs,
  uri?: vscode.Uri,
  opts: SubmitOptions = {},
): Promise<{ jobId?: string; script?: string } | undefined> {
  if (!requireTrust()) return undefined;
  const doc = await targetDocument(uri);
  if (!doc) {
    void vscode.window.showInformationMessage("GPU Pilot: open a Python file or a job script to submit to Slurm.");
    return undefined;
  }
  if (isJobScript(doc.uri.fsPath, doc.getText())) {
    const jobId = await submitJobScript(host, jobs, doc);
    return jobId ? { jobId, script: doc.uri.fsPath } : undefined;
  }
  if (doc.languageId !== "python") {
    void vscode.window.showInformationMessage(
      `GPU Pilot submits Python files and job scripts; ${path.basename(doc.uri.fsPath)} is neither.`,
    );
    return undefined;
  }
  if (doc.isDirty && !doc.isUntitled) await doc.save();
  let values: SlurmSubmitSettings | undefined = await withLauncherDefault(host, doc, submitSettings(doc.uri));
  if (opts.ask !== false) values = await askValues(values, host.cliOptions());
  if (!values) return undefined;
  const file = programFile(doc, host.scratchFolder);
  const own = values.scriptFolder
    ? path.isAbsolute(values.scriptFolder)
      ? values.scriptFolder
      : path.join(path.dirname(file), values.scriptFolder)
    : path.dirname(file);
  if (values.scriptFolder) fs.mkdirSync(own, { recursive: true });
  const dir = writable(own) ? own : host.scratchFolder;
  fs.mkdirSync(dir, { recursive: true });
  const python = (await resolveInterpreter(doc.uri)).path;
  const spec: JobScriptSpec = {
    file,
    args: runSettings.scriptArgs(doc.uri),
    python,
    partition: values.partition,
    nodes: values.nodes,
    gpusPerNode: values.gpusPerNode,
    gpuOption: values.gpuOption,
    time: values.time,
    output: outputPathFor(dir),
    launcher: values.launcher,
    chdir: path.dirname(file),
  };
  let text: string;
  try {
    text = jobScript(spec);
  } catch (e) {
    if (e instanceof JobScriptError) {
      void vscode.window.showErrorMessage(`GPU Pilot: cannot write the job script: ${e.message}`);
      return undefined;
    }
    throw e;
  }
  let script: string;
  try {
    const free = scriptPathFor(dir, jobNameFor(file), text);
    script = free.path;
    const why = free.exists ? null : writeNewScript(script, text);
    if (why) throw new Error(why);
  } catch (e) {
    void vscode.window.showErrorMessage(`GPU Pilot: the job script was not written: ${(e as Error).message}`);
    return undefined;
  }
  log.info(`Slurm job script written: ${script}${dir !== own ? ` (${own} cannot be written)` : ""}`);
  const scriptDoc = await vscode.workspace.openTextDocument(vscode.Uri.file(script));
  await vscode.window.showTextDocument(scriptDoc, { preview: false });
  if (opts.submit) {
    const jobId = await submitJobScript(host, jobs, scriptDoc);
    return { script, ...(jobId ? { jobId } : {}) };
  }
  void vscode.window
    .showInformationMessage(`Job script written: ${path.basename(script)}. Review it, then submit.`, "Submit")
    .then(async (c) => {
      if (c === "Submit") await submitJobScript(host, jobs, scriptDoc);
    });
  return { script };
}

/** Saves and submits a job script; shows the job id and follows its output. @returns the job id, or undefined (refused or failed: reported). */
export async function submitJobScript(
  host: SlurmHost,
  jobs: SlurmJobs,
  doc: vscode.TextDocument,
): Promise<string | undefined> {
  if (!requireTrust()) return undefined;
  if (doc.isUntitled || doc.uri.scheme !== "file") {
    void vscode.window.showWarningMessage("Save the job script to a file first: sbatch submits files.");
    return undefined;
  }
  if (doc.isDirty && !(await doc.save())) {
    void vscode.window.showWarningMessage(`Could not save ${path.basename(doc.uri.fsPath)}; it was not submitted.`);
    return undefined;
  }
  const script = doc.uri.fsPath;
  try {
    const { jobId } = await submitScript(script, { ...host.cliOptions(), cwd: path.dirname(script) });
    log.info(`Submitted ${script}: Slurm job ${jobId}.`);
    jobs.follow(jobId, script);
    host.refreshView();
    void vscode.window.showInformationMessage(
      `Submitted Slurm job ${jobId} (${path.basename(script)}); its output follows in "Slurm job ${jobId}".`,
    );
    return jobId;
  } catch (e) {
    log.warn(`sbatch refused ${script}: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`GPU Pilot: Slurm did not take the job: ${(e as Error).message}`);
    return undefined;
  }
}

/** The "Submit to Slurm" CodeLens on the first line of a job script (trusted workspaces only). */
export class SubmitCodeLensProvider implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (!vscode.workspace.isTrusted || !isJobScript(doc.uri.fsPath, doc.getText())) return [];
    return [
      new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: "$(cloud-upload) Submit to Slurm",
        command: "gpuPilot.slurm.submit",
        arguments: [doc.uri],
        tooltip: "sbatch --parsable this script, then follow its output (GPU Pilot)",
      }),
    ];
  }
}
