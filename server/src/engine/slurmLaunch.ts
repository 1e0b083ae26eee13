/**
 * How the project's own Slurm job scripts start a Python file: the Python rules
 * GPU036-GPU037 need to know whether a file runs under `srun python` (no LOCAL_RANK), as the batch
 * step, or under torchrun, and how many GPUs each of its processes sees.
 *
 * The job scripts looked at are the shell files (`.sbatch`, `.slurm`, `.sh`, `.bash`) in the Python
 * file's folder and its ancestors, and in the direct subfolders of those (a `slurm/` or `scripts/`
 * folder beside the code), up to a workspace root, a folder holding `.git`, or three levels above
 * the file's folder. A launch names the file when its script argument, joined to the job script's
 * folder or one of its ancestors within that search (sbatch runs the script in the submit folder),
 * is the file; a leading `$VAR/` (`$ROOT/src/train.py`) is dropped first. `python -m pkg.mod` names
 * `pkg/mod.py` the same way. A variable among torchrun's options (`torchrun $DISTRIBUTED_ARGS
 * pretrain.py`) is read as the words it holds when the script assigns it once to a literal string
 * or array (manifests/jobscript.ts `expandedLaunch`); otherwise the launch still starts the `.py`
 * file after it, with its options not known ({@link SlurmLaunch.unknownOptions}).
 *
 * Facts (measured on Slurm 22.05.8, test/fixtures/slurm/python-launch/measured.md): srun sets
 * SLURM_LOCALID and SLURM_PROCID but no LOCAL_RANK; with `--gpus-per-task=k` each task sees k GPUs
 * (`CUDA_VISIBLE_DEVICES` lists k ids); with `--gpus=N` or `--gres=gpu:N` and no per-task option
 * every task sees all N; the batch step sees the job's GPUs on its node. torchrun sets LOCAL_RANK
 * (torchrun documentation, "Environment Variables").
 *
 * Node's fs only (through workspaceFile.ts: regular files, capped); no `vscode`. Never throws.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";
import { SourceText } from "./manifests/source";
import { lexer, walkTokens, type Tokens } from "marked";
import {
  bareExpansion,
  expandedLaunch,
  jobScriptFacts,
  lastDirectiveOption,
  launchOf,
  optionAsksForGpus,
  optionValue,
  resolveLiteral,
  stepTasksPerNode,
  type JobScriptFacts,
  type Launch,
} from "./manifests/jobscript";
import { parseShell, type ShellWord } from "./manifests/shell";
import { SCRIPT_DIR } from "./launch/script";
import { scriptVisible } from "./launch/sources";
import { workingDirectory } from "./launch/child";

/** One command of a job script that starts the Python file. */
export interface SlurmLaunch {
  /** Absolute path of the job script. */
  script: string;
  /** 0-based line of the command in the job script. */
  line: number;
  /**
   * How the file's processes start: `srun` (`srun python file.py`: one process per task, no
   * LOCAL_RANK), `batch` (`python file.py` in a script with `#SBATCH` lines: one process, the batch
   * step, no LOCAL_RANK), `torchrun` (torchrun or `python -m torch.distributed.run`, with or without
   * srun: LOCAL_RANK is set).
   */
  launcher: "srun" | "batch" | "torchrun";
  /** GPUs each process sees (the ids in its CUDA_VISIBLE_DEVICES); null when the script does not say with literal numbers. */
  gpusPerProcess: number | null;
  /** Where {@link gpusPerProcess} comes from, for messages: `--gpus-per-task=1`, `--gres=gpu:4`. */
  gpusFrom: string | null;
  /** Processes per node that run the file: srun tasks per node, 1 for the batch step; null when unknown. */
  processesPerNode: number | null;
  /**
   * `python -m torch.distributed.launch` without `--use-env`/`--use_env`: the launcher passes the
   * local rank to the script as an argument (`--local-rank=N` since torch 2.0, `--local_rank=N`
   * before; torch/distributed/launch.py). torchrun and `torch.distributed.run` never do. Absent: false.
   */
  passesLocalRankArg?: boolean;
  /** The job script sets LOCAL_RANK itself (an assignment or export anywhere in it, or srun `--export=...LOCAL_RANK`). */
  setsLocalRank: boolean;
  /**
   * The launcher's options are not all known: a variable among them (`torchrun $DISTRIBUTED_ARGS
   * train.py`) that the script does not assign once to a literal (manifests/jobscript.ts
   * `expandedLaunch`). Nothing is read from the launcher's options then ({@link passesLocalRankArg}
   * is false). Absent: false.
   */
  unknownOptions?: boolean;
  /**
   * The job certainly asks Slurm for GPUs: an `#SBATCH` request (`--gres=gpu...`, `--gpus`,
   * `--gpus-per-node`, `--gpus-per-task`; jobscript.ts `jobRequest`) or one among the `srun` step's
   * own options with a literal value (`srun --gres=gpu:1 python x.py`); an option that expands a
   * variable is no certain request. Absent: false.
   */
  asksForGpus?: boolean;
  /**
   * The job script decides CUDA_VISIBLE_DEVICES for the command itself, so a value the program
   * writes replaces the script's choice rather than Slurm's: the script assigns or exports the
   * variable (anywhere in it), the command is prefixed with it (`CUDA_VISIBLE_DEVICES=0 python x.py`),
   * srun's `--export` names it, or the command passes a value read from it or from Slurm's GPU
   * list (`--gpu $CUDA_VISIBLE_DEVICES`, `$SLURM_JOB_GPUS`, `$SLURM_STEP_GPUS`, or a variable the
   * script assigned from one: `gpu=$CUDA_VISIBLE_DEVICES` then `--gpu $gpu`) to the program.
   * GPU021 reports the script's own write. Absent: false.
   */
  setsVisibleDevices?: boolean;
  /**
   * The script may bind GPUs to tasks, or change the step's GPUs, in a way {@link gpusPerProcess}
   * does not follow ({@link bindsOtherwise}): a job or step option that binds per task
   * (`--tres-bind`, `--ntasks-per-gpu`, `--tres-per-task`: srun(1) "This option will implicitly set
   * --tres-bind=gres/gpu:..."), a heterogeneous job (`#SBATCH hetjob`, `--het-group`), `--multi-prog`,
   * a step `--gres` whose GPU count is not read (`--gres=none`), or an assignment of a Slurm input
   * variable for GPUs or GRES (`export SLURM_GPU_BIND=closest`, `SLURM_TRES_BIND`, `SLURM_STEP_GRES`).
   * GPU074 then does not take the tasks to share the node's GPUs. Absent: none of these.
   */
  tasksMayBind?: true;
}

/** A launch's script by its file name, for messages (`train.sbatch`). */
export const scriptNameOf = (l: { script: string }): string => l.script.replace(/^.*[\\/]/, "");

/**
 * How a launch starts the Python file, for messages: `` `srun python` ``, `` `python` as the batch
 * step ``, `torchrun`.
 */
export function startedWith(l: Pick<SlurmLaunch, "launcher">): string {
  return l.launcher === "srun" ? "`srun python`" : l.launcher === "batch" ? "`python` as the batch step" : "torchrun";
}

/** Job-script file names. */
const SCRIPT = /\.(sbatch|slurm|sh|bash)$/i;
/** Markdown documents, whose fenced shell blocks document how a file is launched ({@link launchNodesIn}). */
const DOC = /\.(md|markdown)$/i;
/** Caps for Markdown documents: documents read per lookup, bytes per document. */
const MAX_DOCS = 100;
const MAX_DOC_BYTES = 512 * 1024;
/** Caps: job scripts read per lookup, bytes per script, folder levels above the file's folder. */
const MAX_SCRIPTS = 300;
const MAX_SCRIPT_BYTES = 256 * 1024;
const LEVELS_UP = 3;
/** How long a folder listing is reused (ms): the editor lints on every keystroke. */
const LISTING_TTL_MS = 5000;
/**
 * Subfolders of one folder whose files are listed (the first ones, in listing order): a file in a
 * folder with thousands of subfolders (a home folder, /tmp, Downloads) is not made to wait for a
 * listing of each of them (on a loaded 2-core machine, /tmp's 8,300 subfolders held a first lint
 * for seconds).
 */
const MAX_SUBFOLDERS = 256;

const listings = new Map<string, { at: number; entries: Array<{ name: string; dir: boolean }> }>();
const parsed = new Map<
  string,
  { mtimeMs: number; size: number; value: { facts: JobScriptFacts; text: string } | null }
>();

function list(dir: string): Array<{ name: string; dir: boolean }> {
  const now = Date.now();
  const hit = listings.get(dir);
  if (hit && now - hit.at < LISTING_TTL_MS) return hit.entries;
  let entries: Array<{ name: string; dir: boolean }> = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith(".") && e.name !== "node_modules")
      .map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    /* unreadable: no scripts there */
  }
  listings.set(dir, { at: now, entries });
  return entries;
}

/**
 * The value `make` builds from the text of the file at `path` (null: the file could not be read),
 * kept in `cache` while the file's mtime and size stay the same; null when the file is gone, is no
 * regular file or is larger than `max` bytes. Read through workspaceFile.ts (capped, no FIFO).
 */
function keptByStat<T>(
  cache: Map<string, { mtimeMs: number; size: number; value: T }>,
  path: string,
  max: number,
  make: (text: string | null) => T,
): T | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size > max) return null;
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.value;
  const read = readWorkspaceText(path, max);
  const value = make("text" in read ? read.text : null);
  cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, value });
  return value;
}

/** The parsed job script at `path` (cached by mtime and size); null when unreadable. */
function scriptFacts(path: string): { facts: JobScriptFacts; text: string } | null {
  return keptByStat(parsed, path, MAX_SCRIPT_BYTES, (text) => {
    if (text === null) return null;
    try {
      return { facts: jobScriptFacts(new SourceText(text)), text };
    } catch {
      return null;
    }
  });
}

/**
 * What one run (the CLI's optionsResolver) keeps between the folders it looks up: per folder, the
 * job-script paths in it and its direct subfolders, and whether it holds `.git`. For files that do
 * not change during the run.
 */
export interface JobScriptSearchMemo {
  scriptsIn: Map<string, string[]>;
  isRepo: Map<string, boolean>;
}

/** A memo for {@link jobScriptsAround}, empty. */
export const jobScriptSearchMemo = (): JobScriptSearchMemo => ({ scriptsIn: new Map(), isRepo: new Map() });

/** The folders searched for the files of folder `dir`, nearest first, and the top one (no folder above it is used). */
function searchFolders(
  dir: string,
  roots: readonly string[],
  memo?: JobScriptSearchMemo,
): { folders: string[]; top: string } {
  const stops = new Set(roots.map((r) => resolve(r)));
  const folders: string[] = [];
  let d = resolve(dir);
  for (let level = 0; ; level++) {
    folders.push(d);
    const up = dirname(d);
    let isRepo = memo?.isRepo.get(d);
    if (isRepo === undefined) {
      try {
        isRepo = statSync(join(d, ".git"), { throwIfNoEntry: false }) !== undefined;
      } catch {
        isRepo = false;
      }
      memo?.isRepo.set(d, isRepo);
    }
    if (stops.has(d) || isRepo || level >= LEVELS_UP || up === d) return { folders, top: d };
    d = up;
  }
}

/** Whether `path` is a regular file (links followed); false when it is gone or cannot be stat'ed. */
function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A whole number written in an option, or null. */
const int = (v: string | null | undefined): number | null => (v && /^[0-9]+$/.test(v) ? Number(v) : null);

const within = (dir: string, top: string) => dir === top || dir.startsWith(top.endsWith(sep) ? top : top + sep);

/**
 * `$ROOT/src/train.py` → `src/train.py`; `./train.py` → `train.py`; `$(dirname "$0")/train.py` in
 * tools/dist.sh → the absolute path of tools/train.py; null when the path is not literal after that.
 */
function literalPath(word: string, literals: Map<string, string>, script: string): string | null {
  // `$(dirname "$0")/train.py` (also `${BASH_SOURCE[0]}`, backquotes): the script's own folder,
  // wherever it is started from (bash(1), Special Parameters: "0 Expands to the name of the shell or
  // shell script"), as mmdetection's and mmocr's tools/dist_train.sh write it.
  const own = SCRIPT_DIR.exec(word);
  if (own) {
    const rest = resolveLiteral(own[1], literals);
    return rest === null ? null : resolve(dirname(resolve(script)), rest);
  }
  // The variable usually names the project's folder on the cluster (`ROOT=/home/me/proj`), not
  // this checkout: the rest of the path is matched from the job script's folder upwards.
  const m = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\/(.*)$/.exec(word);
  const lit = resolveLiteral(m ? m[1] : word, literals);
  return lit === null ? null : lit.replace(/^(\.\/)+/, "");
}

/**
 * The script path (or `-m` module as a path) that a launch runs, or null. Its words have the
 * variables among the launcher's options put in (manifests/jobscript.ts `expandedLaunch`); one not
 * known is passed over under torch's launcher when it is an array's or a `.py` file follows it
 * (`torchrun $DISTRIBUTED_ARGS pretrain.py`: the launch's options are then not known), and under
 * python it ends the search (it may hold `-m torch.distributed.run`).
 */
function targetOf(l: Launch): { path: string; module: boolean } | null {
  // python [-u -O -B -X opt -W arg ...] file.py | -m module; torchrun [--opt[=v] ...] file.py | -m module
  const words = l.words;
  for (let k = 1; k < words.length; k++) {
    const w = words[k].value;
    const e = l.unknownOptions && l.program === "torchrun" ? bareExpansion(words[k]) : null;
    if (e && (e.subscript || /\.py$/.test(words[k + 1]?.value ?? ""))) continue; // options not known
    if (w === "-m") {
      const mod = words[k + 1]?.value;
      if (!mod) return null;
      if (/^torch\.distributed\.(run|launch)$/.test(mod)) {
        k++;
        continue;
      } // the launcher; its script follows
      return /^[A-Za-z_][\w.]*$/.test(mod) ? { path: `${mod.replace(/\./g, "/")}.py`, module: true } : null;
    }
    if (/\.py$/.test(w)) return { path: w, module: false };
    if (!w.startsWith("-")) {
      // torchrun `--nproc_per_node 4`: the value of an option; python: an argument of -X / -W.
      const prev = words[k - 1].value;
      if (prev.startsWith("-") && !prev.includes("=")) continue;
      return null; // a program that is not a .py file (a console script, a binary)
    }
  }
  return null;
}

/**
 * Whether a launch runs `python -m torch.distributed.launch` without `--use-env`/`--use_env`
 * before the script: torch/distributed/run.py `get_use_env` ("``use_env`` is only used by the
 * ``torch.distributed.launch``"; torchrun has no such option and never passes the argument). False
 * when its options are not all known (a variable among them may hold `--use_env`).
 */
function passesLocalRank(l: Launch): boolean {
  if (l.unknownOptions) return false;
  const words = l.words;
  const m = words.findIndex((w) => w.value === "-m");
  if (m < 0 || words[m + 1]?.value !== "torch.distributed.launch") return false;
  for (let k = m + 2; k < words.length; k++) {
    const w = words[k].value;
    if (w === "--use-env" || w === "--use_env") return false;
    if (/\.py$/.test(w) || w === "--") break;
  }
  return true;
}

/** GPUs per process and their source for one launch. */
function gpusOf(
  facts: JobScriptFacts,
  srun: ReturnType<typeof launchOf>["srun"],
  launcher: SlurmLaunch["launcher"],
): { n: number | null; from: string | null } {
  const req = facts.request;
  const opts = srun?.options;
  const typed = (v: string | null | undefined) => int(v?.split(":").pop());
  // --gpu-bind (job or step) rebinds the GPUs per task, and so does srun --accel-bind=g ("Bind each
  // task to GPUs which are closest to the allocated CPUs", srun(1)): how many each task keeps
  // depends on the node's topology (one NUMA node's GPUs, or all of them). Not followed, except
  // `--gpu-bind=none` ("Do not bind tasks to GPUs (turns off binding if --gpus-per-task is
  // requested)", srun(1)): every task then sees what the step has, as without the option.
  const binds = (v: string | null | undefined) => !/^(?:verbose,)?none$/.test(v ?? "");
  if (
    (opts?.has("gpu-bind") && binds(opts.get("gpu-bind")?.value)) ||
    /g/.test(opts?.get("accel-bind")?.value ?? "") ||
    facts.directives.some((d) => d.options.some((o) => o.name === "gpu-bind" && binds(o.value)))
  )
    return { n: null, from: null };
  // `none` with a per-task request turns its binding off: each task sees the step's GPUs (not followed).
  const unbound = opts?.has("gpu-bind") || facts.directives.some((d) => d.options.some((o) => o.name === "gpu-bind"));
  if (unbound && (opts?.has("gpus-per-task") || req.gpusPerTask !== null)) return { n: null, from: null };
  if (launcher === "srun") {
    const perTask = opts?.get("gpus-per-task");
    if (perTask) return { n: typed(perTask.value), from: `srun --gpus-per-task=${perTask.value}` };
    if (req.gpusPerTask !== null) return { n: req.gpusPerTask, from: `#SBATCH --gpus-per-task=${req.gpusPerTask}` };
    const stepGres = opts?.get("gres")?.value;
    const gresN = stepGres ? /(?:^|,)gpu(?::[^:,]+)?:([0-9]+)/.exec(stepGres)?.[1] : undefined;
    if (gresN) return { n: Number(gresN), from: `srun --gres=${stepGres}` };
    const stepGpn = opts?.get("gpus-per-node")?.value;
    if (stepGpn) return { n: typed(stepGpn), from: `srun --gpus-per-node=${stepGpn}` };
    if (opts?.has("gpus")) return { n: null, from: null }; // split over the step's nodes
  }
  if (launcher === "torchrun" && srun) return { n: null, from: null };
  if (req.gpusPerNode === null || !req.asksForGpus || !req.where) return { n: null, from: null };
  return { n: req.gpusPerNode, from: `#SBATCH --${req.where.name}=${req.where.value}` };
}

/**
 * The job scripts around one folder that may start a Python file (they mention `.py` or `-m `),
 * parsed, and the top folder of the search: what {@link launchesIn} matches files against. The same
 * for every file of the folder; the CLI computes it once per folder (options.ts `optionsResolver`).
 */
export interface JobScriptsAround {
  scripts: Array<{ script: string; facts: JobScriptFacts; text: string }>;
  /** The Markdown documents in the same folders (not read here: {@link documentedLaunchNodes} reads them when asked). */
  docs: string[];
  top: string;
}

/**
 * The paths of the files in folder `d` and in its direct subfolders (the first {@link MAX_SUBFOLDERS})
 * whose base names pass `wanted`, in listing order.
 */
function filesIn(d: string, wanted: (name: string) => boolean): string[] {
  const out: string[] = [];
  let subfolders = 0;
  for (const e of list(d)) {
    if (!e.dir) {
      if (wanted(e.name)) out.push(join(d, e.name));
      continue;
    }
    if (++subfolders > MAX_SUBFOLDERS) continue;
    for (const f of list(join(d, e.name))) if (!f.dir && wanted(f.name)) out.push(join(d, e.name, f.name));
  }
  return out;
}

/** The job-script and Markdown paths in folder `d` and in its direct subfolders ({@link filesIn}). */
const scriptsIn = (d: string): string[] => filesIn(d, (name) => SCRIPT.test(name) || DOC.test(name));

/**
 * The files whose base names pass `wanted` in the folders searched for the files of folder `dir`
 * (the job scripts' search, module comment: `dir` and its ancestors up to a folder holding `.git`
 * or three levels up, and the direct subfolders of each), at most `max`: first those of the
 * folders `first` (nearest ones the caller knows), then the rest, nearest folder first. The reverse
 * lookup of a file that another file names by a path relative to itself (GPU062: the Python files
 * whose `@hydra.main(config_path=...)` names a config folder). Folder listings are the job-script
 * search's (kept a few seconds).
 */
export function filesAround(
  dir: string,
  wanted: (name: string) => boolean,
  max: number,
  first: readonly string[] = [],
): string[] {
  const out = new Set<string>();
  for (const d of first)
    for (const e of list(d)) if (!e.dir && out.size < max && wanted(e.name)) out.add(join(d, e.name));
  for (const d of searchFolders(resolve(dir), []).folders)
    for (const path of filesIn(d, wanted)) if (out.size < max) out.add(path);
  return [...out];
}

/**
 * The job scripts looked at for the Python files of folder `dir` (see the module comment).
 * @param dir absolute path of the folder holding the Python file.
 * @param roots workspace folders: the search does not go above one.
 * @param memo what one run keeps between folders ({@link jobScriptSearchMemo}); none: everything looked up again.
 */
export function jobScriptsAround(
  dir: string,
  roots: readonly string[] = [],
  memo?: JobScriptSearchMemo,
): JobScriptsAround {
  const { paths, top } = pathsAround(dir, roots, memo);
  const scripts: JobScriptsAround["scripts"] = [];
  for (const path of paths) {
    if (DOC.test(path) || scripts.length >= MAX_SCRIPTS) continue;
    const s = scriptFacts(path);
    if (s && (s.text.includes(".py") || s.text.includes("-m "))) scripts.push({ script: path, ...s });
  }
  return { scripts, docs: docsOf(paths), top };
}

/**
 * The Markdown documents around folder `dir` (the folders {@link jobScriptsAround} searches), without
 * reading any job script: what {@link documentedLaunchNodes} needs.
 */
export function documentsAround(dir: string, roots: readonly string[] = []): Pick<JobScriptsAround, "docs" | "top"> {
  const { paths, top } = pathsAround(dir, roots);
  return { docs: docsOf(paths), top };
}

/** The first {@link MAX_DOCS} Markdown documents of `paths`. */
const docsOf = (paths: readonly string[]): string[] => paths.filter((p) => DOC.test(p)).slice(0, MAX_DOCS);

/** The job-script and document paths in the folders searched for the files of folder `dir`, nearest first, and the top folder. */
function pathsAround(
  dir: string,
  roots: readonly string[],
  memo?: JobScriptSearchMemo,
): { paths: string[]; top: string } {
  const { folders, top } = searchFolders(resolve(dir), roots, memo);
  const paths: string[] = [];
  const seen = new Set<string>();
  for (const d of folders) {
    let found = memo?.scriptsIn.get(d);
    if (!found) {
      found = scriptsIn(d);
      memo?.scriptsIn.set(d, found);
    }
    for (const p of found)
      if (!seen.has(p) && paths.length < MAX_SCRIPTS + MAX_DOCS) {
        seen.add(p);
        paths.push(p);
      }
  }
  return { paths, top };
}

/**
 * The launches of `file` by the job scripts around it (see the module comment for where they are
 * looked for and how a launch is matched to the file).
 * @param file absolute path of the Python file.
 * @param roots workspace folders: the search does not go above one.
 * @returns the launches found, in no particular order; empty when none (or on any read error).
 */
export function slurmLaunchesOf(file: string, roots: readonly string[] = []): SlurmLaunch[] {
  return launchesIn(file, jobScriptsAround(dirname(resolve(file)), roots));
}

/** A command of a script or of a document's shell block that starts `file`, with what it was read from. */
interface MatchedCommand {
  /** The script or document (absolute path). */
  script: string;
  facts: JobScriptFacts;
  text: string;
  /** The command's 0-based line in {@link script}. */
  line: number;
  launch: ReturnType<typeof launchOf>;
  documented: boolean;
}

/** A script, or a shell block of a document, whose commands may start a Python file. */
interface CommandSource {
  script: string;
  facts: JobScriptFacts;
  text: string;
  /** The 0-based line of `text`'s first line in `script`. */
  offset: number;
  documented: boolean;
}

/** shifter's options that take the next word as their value (shifter --help, NERSC shifter 18+: --image, --volume/-V, --env/-e, --env-file, --workdir/-w, --module/-m, --entrypoint). */
const SHIFTER_VALUED = new Set([
  "--image",
  "--volume",
  "-V",
  "--env",
  "-e",
  "--env-file",
  "--workdir",
  "-w",
  "--module",
  "-m",
  "--entrypoint",
]);
/** A shell that `-c` gives a command string to. */
const SHELL = /^(?:\/(?:usr\/)?bin\/)?(?:ba)?sh$/;

/**
 * `srun [opts] [shifter [opts]] bash -c "...; python train.py ..."`: the launch made by the string's
 * last command that starts python or torchrun, with srun's options (its words' offsets are the
 * string's word's in the job script, or inside it when the word is the string in plain quotes).
 * Null unless every other command of the string is one that leaves the launch's GPUs alone: the
 * string names no *_VISIBLE_DEVICES variable and has no `cd`, `eval` or `exec`, and each file it
 * sources is a literal path beside the job script that can be read and names no such variable
 * either (one that sets LOCAL_RANK is recorded: {@link Launch.sourcedLocalRank}). Not followed: other container runners (singularity, apptainer, podman-hpc), and the
 * string of a launch without srun.
 */
function shellStringLaunch(l: Launch, script: string): Launch | null {
  if (!l.srun || l.program !== "other") return null;
  const w = l.words;
  let k = 0;
  if (w[0]?.value === "shifter")
    for (k = 1; k < w.length && w[k].value.startsWith("-"); k++) if (SHIFTER_VALUED.has(w[k].value)) k++;
  if (!SHELL.test(w[k]?.value ?? "")) return null;
  let j = k + 1;
  while (j < w.length && /^-[a-bd-z]+$/.test(w[j].value)) j++; // -l, -e, -x, -lc is not read
  const str = w[j + 1];
  if (w[j]?.value !== "-c" || !str || /_VISIBLE_DEVICES/.test(str.value)) return null;
  const inner = parseShell(new SourceText(str.value)).commands;
  let at = inner.length - 1;
  while (at >= 0 && launchOf(inner[at]).program === "other") at--;
  if (at < 0 || inner[at].assignments.length || inner[at].enclosing?.length) return null;
  let sourcedLocalRank = false;
  for (const c of inner.slice(0, at)) {
    const head = c.words[0]?.value ?? "";
    if (["cd", "pushd", "eval", "exec"].includes(head)) return null;
    if (head !== "source" && head !== ".") continue;
    const path = c.words[1]?.value ?? "$";
    if (path.includes("$") || path.startsWith("~") || c.words.length > 2) return null;
    const r = readWorkspaceText(resolve(dirname(script), path), 64 * 1024);
    if (!("text" in r) || /_VISIBLE_DEVICES/.test(r.text)) return null;
    if (/(^|[\s;])(export\s+)?LOCAL_RANK=/m.test(r.text)) sourcedLocalRank = true;
  }
  const shift = str.raw === `"${str.value}"` || str.raw === `'${str.value}'` ? str.start + 1 : null;
  const words = launchOf(inner[at]).words.map((x) =>
    shift === null ? { ...x, start: str.start, end: str.end } : { ...x, start: x.start + shift, end: x.end + shift },
  );
  const program = launchOf(inner[at]).program;
  return { command: l.command, srun: l.srun, program, words, ...(sourcedLocalRank ? { sourcedLocalRank } : {}) };
}

/**
 * The python and torchrun commands of `source` that name a script, each with that script's path
 * as written (`rel`, literals substituted: {@link literalPath}), and `bases`: the source's folder and
 * its ancestors up to `top`, against which a relative `rel` is taken.
 */
function* launchCommands(
  source: CommandSource,
  top: string,
): Generator<{ command: MatchedCommand; rel: string; bases: string[] }> {
  const { script, facts, text, offset, documented } = source;
  const bases: string[] = [];
  for (let d = dirname(script); within(d, top); d = dirname(d)) {
    bases.push(d);
    if (d === top || dirname(d) === d) break;
  }
  const src = new SourceText(text);
  for (const c of facts.commands) {
    const outer = launchOf(c);
    const l = expandedLaunch(shellStringLaunch(outer, script) ?? outer, facts);
    if (l.program !== "python" && l.program !== "torchrun") continue;
    if (l.unknownOptions && l.program === "python") continue; // `python $ARGS x.py`: $ARGS may start torch's launcher
    const t = targetOf(l);
    if (!t) continue;
    const rel = literalPath(t.path, facts.literals, script);
    if (rel === null) continue;
    yield { command: { script, facts, text, line: offset + src.lineOf(c.start), launch: l, documented }, rel, bases };
  }
}

/**
 * The commands of the shell blocks of the documents `docs` that run `file` with python or
 * torchrun. A command names the file when its script argument, joined to the document's folder or
 * one of its ancestors up to `top`, is the file, or when the document's folder holds the file (at
 * any depth) and the file's path ends with the path written (documentation writes paths from
 * wherever its reader stands: `torchrun --standalone demo.py` under a `cd code/`); a document in
 * another branch of the tree names another file of that name. (A script's commands:
 * {@link commandsByTarget}.)
 */
function* documentedCommandsStarting(
  file: string,
  docs: readonly string[],
  top: string,
  words: readonly string[],
): Generator<MatchedCommand> {
  const target = resolve(file);
  // A document is lexed only when its text names the file (`demo.py`, or `demo` of `-m pkg.demo`)
  // and a launcher ({@link docText}).
  const stem = basename(target).replace(/\.py$/i, "");
  for (const doc of docs) {
    const text = docText(doc, words);
    if (!text?.includes(stem)) continue;
    for (const b of docBlocks(doc, text)) {
      const source = { script: doc, facts: b.facts, text: b.text, offset: b.line, documented: true };
      for (const { command, rel, bases } of launchCommands(source, top)) {
        const hits = rel.startsWith("/")
          ? resolve(rel) === target
          : bases.some((b) => resolve(b, rel) === target) ||
            (within(dirname(target), dirname(doc)) &&
              !rel.split("/").includes("..") &&
              target.endsWith(sep + rel.split("/").join(sep)));
        if (hits) yield command;
      }
    }
  }
}

/**
 * The commands of `around`'s scripts that run a Python file with python or torchrun, by that file's
 * absolute path, each list in the scripts' order and each script's command order. A script's
 * command names the file when its script argument, joined to the script's folder or one of its
 * ancestors up to `around.top`, is the file. Made once per `around` (kept in {@link byTarget}):
 * options.ts asks for every Python file of the folder, and deriving every command's target again
 * for each file cost ~0.15 s of a check of 1,141 files with ~700 scripts around them.
 */
function commandsByTarget(around: JobScriptsAround): ReadonlyMap<string, readonly MatchedCommand[]> {
  let map = byTarget.get(around);
  if (map) return map;
  map = new Map();
  for (const s of around.scripts) {
    for (const { command, paths } of scriptTargets(s, around.top)) {
      for (const p of paths) {
        const list = map.get(p);
        if (list) list.push(command);
        else map.set(p, [command]);
      }
    }
  }
  byTarget.set(around, map);
  return map;
}
/** {@link commandsByTarget}'s answers, by the scripts they were made from. */
const byTarget = new WeakMap<JobScriptsAround, Map<string, MatchedCommand[]>>();

/**
 * The python and torchrun commands of the script `s` with the absolute paths of the files each may
 * start (its script argument joined to each of `bases`: {@link launchCommands}). Kept per parsed
 * script (its facts, which {@link scriptFacts} keeps while the file is unchanged) and `top`: the
 * folders of one tree share most of their scripts.
 */
function scriptTargets(
  s: JobScriptsAround["scripts"][number],
  top: string,
): Array<{ command: MatchedCommand; paths: Set<string> }> {
  let byTop = targetsOfScript.get(s.facts);
  if (!byTop) targetsOfScript.set(s.facts, (byTop = new Map()));
  const key = `${s.script}\u0000${top}`;
  let out = byTop.get(key);
  if (out) return out;
  out = [];
  for (const { command, rel, bases } of launchCommands({ ...s, offset: 0, documented: false }, top))
    // A Set: two ancestors can resolve a `../..` path to the same file, which the command starts once.
    out.push({ command, paths: new Set(rel.startsWith("/") ? [resolve(rel)] : bases.map((b) => resolve(b, rel))) });
  byTop.set(key, out);
  return out;
}
const targetsOfScript = new WeakMap<
  JobScriptFacts,
  Map<string, Array<{ command: MatchedCommand; paths: Set<string> }>>
>();

/** The Slurm launch a matched script command makes ({@link SlurmLaunch}); null for a plain shell script's `python file.py`. */
function slurmLaunchOf(m: MatchedCommand): SlurmLaunch | null {
  const { script, facts, text, line, launch: l } = m;
  const setsLocalRank = facts.literals.has("LOCAL_RANK") || /(^|[\s;])(export\s+)?LOCAL_RANK=/m.test(text);
  const launcher: SlurmLaunch["launcher"] = l.program === "torchrun" ? "torchrun" : l.srun ? "srun" : "batch";
  if (launcher === "batch" && facts.directives.length === 0) return null; // a plain shell script, not a job
  const g = gpusOf(facts, l.srun, launcher);
  const processesPerNode =
    launcher === "batch" ? 1 : launcher === "srun" ? stepTasksPerNode(l.srun!.options, facts.request) : null;
  const exportsLocalRank = /LOCAL_RANK/.test(l.srun?.options.get("export")?.value ?? "");
  const setsVisibleDevices = scriptSetsVisibleDevices(facts, l);
  const stepAsks = [...(l.srun?.options ?? [])].some(
    ([name, o]) => o.value !== null && !o.value.includes("$") && optionAsksForGpus(name, o.value),
  );
  return {
    script,
    line,
    launcher,
    gpusPerProcess: g.n,
    gpusFrom: g.from,
    processesPerNode,
    setsLocalRank: setsLocalRank || exportsLocalRank || !!l.sourcedLocalRank,
    ...(passesLocalRank(l) ? { passesLocalRankArg: true } : {}),
    ...(l.unknownOptions ? { unknownOptions: true } : {}),
    ...(facts.request.asksForGpus || stepAsks ? { asksForGpus: true } : {}),
    ...(setsVisibleDevices ? { setsVisibleDevices: true } : {}),
    ...(bindsOtherwise(facts, text, l) ? { tasksMayBind: true as const } : {}),
  };
}

/** Job and step options that bind GPUs to tasks or split the job, which {@link gpusOf} does not follow. */
const BINDING_OPTIONS = ["tres-bind", "ntasks-per-gpu", "tres-per-task", "het-group", "pack-group", "multi-prog"];
/** Slurm's input variables for GPUs and GRES (srun(1), INPUT ENVIRONMENT VARIABLES: `SLURM_GPU_BIND` "Same as --gpu-bind"). */
const GPU_INPUT_VARIABLE = /^(?:SLURM|SRUN|SBATCH|SALLOC)_(?:GPU|GRES|TRES|STEP_GRES|NTASKS_PER_GPU)/;

/** {@link SlurmLaunch.tasksMayBind} for one launch `l` of the script with facts `facts` and text `text`. */
function bindsOtherwise(facts: JobScriptFacts, text: string, l: ReturnType<typeof launchOf>): boolean {
  const opts = l.srun?.options;
  if (BINDING_OPTIONS.some((o) => opts?.has(o) || facts.directives.some((d) => d.options.some((x) => x.name === o))))
    return true;
  // `#SBATCH hetjob` (`packjob` before Slurm 20.02) starts another component of the job: the
  // directives after it are that component's, not the first one's.
  if (/^#SBATCH[ \t]+(?:hetjob|packjob)\b/m.test(text)) return true;
  const stepGres = opts?.get("gres");
  if (stepGres && !/(?:^|,)gpu(?::[^:,]+)?:[1-9][0-9]*/.test(stepGres.value ?? "")) return true;
  return [...facts.assigned].some((name) => GPU_INPUT_VARIABLE.test(name));
}

/** A word that expands CUDA_VISIBLE_DEVICES or Slurm's list of the job's or step's GPUs. */
const VISIBLE_FROM_SLURM = /\$\{?(?:CUDA_VISIBLE_DEVICES|SLURM_JOB_GPUS|SLURM_STEP_GPUS)\b/;

/**
 * The names the script assigns (`gpu=$CUDA_VISIBLE_DEVICES`, `export GPUS=${SLURM_JOB_GPUS}`) from
 * a value that expands CUDA_VISIBLE_DEVICES or Slurm's GPU list.
 */
function namesFromSlurmGpus(facts: JobScriptFacts): Set<string> {
  const names = new Set<string>();
  for (const c of facts.commands) {
    const words =
      c.words.length === 0 ? c.assignments.map((a) => a.word) : c.words[0].value === "export" ? c.words.slice(1) : [];
    for (const w of words) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.value);
      if (m && w.expands && VISIBLE_FROM_SLURM.test(w.raw)) names.add(m[1]);
    }
  }
  return names;
}

/** {@link SlurmLaunch.setsVisibleDevices} for one launch `l` of the script with facts `facts`. */
function scriptSetsVisibleDevices(facts: JobScriptFacts, l: ReturnType<typeof launchOf>): boolean {
  if (facts.assigned.has("CUDA_VISIBLE_DEVICES")) return true;
  if (l.command.assignments.some((a) => a.name === "CUDA_VISIBLE_DEVICES")) return true;
  if (/CUDA_VISIBLE_DEVICES/.test(l.srun?.options.get("export")?.value ?? "")) return true;
  const names = [...namesFromSlurmGpus(facts)];
  const passes = (raw: string) =>
    VISIBLE_FROM_SLURM.test(raw) || names.some((n) => new RegExp(`\\$\\{?${n}\\b`).test(raw));
  return l.words.some((w) => w.expands && passes(w.raw));
}

/**
 * The CUDA_VISIBLE_DEVICES the command `m` starts its program with: the command's own assignment
 * (`CUDA_VISIBLE_DEVICES=0 python train.py`), or an export of it by an earlier command of the same
 * script or shell block (`export CUDA_VISIBLE_DEVICES=0,1`, or `CUDA_VISIBLE_DEVICES=0` then
 * `export CUDA_VISIBLE_DEVICES`) that no `unset` undoes before the command (launch/sources.ts
 * `scriptVisible`); `value` null where it is not a literal. Null when none reaches the program (a
 * bare assignment without an export does not). Read once per command for GPU051
 * ({@link LaunchNodes.setsVisibleDevices}) and GPU064 ({@link visibleOf}).
 */
function visibleSetting(m: MatchedCommand): { value: string | null; from: string } | null {
  if (!m.text.includes("CUDA_VISIBLE_DEVICES")) return null;
  const inline = m.launch.command.assignments.find((a) => a.name === "CUDA_VISIBLE_DEVICES");
  if (inline) return { value: inline.word.expands ? null : inline.value, from: "on the command" };
  const { visible, unknown } = scriptVisible(new SourceText(m.text), m.facts.commands, m.launch.command.start);
  return visible ? { value: unknown ? null : visible.value, from: visible.from } : null;
}

/**
 * The launches of `file` by `around`'s job scripts ({@link jobScriptsAround} of the file's folder).
 * @param file absolute path of the Python file.
 */
export function launchesIn(file: string, around: JobScriptsAround): SlurmLaunch[] {
  return scriptLaunchesIn(file, around).slurm;
}

/**
 * In one pass over `around`'s job and shell scripts: the Slurm launches of `file` ({@link launchesIn})
 * and how many nodes each command that starts it runs it on ({@link launchNodesIn}). What options.ts
 * asks for every Python file.
 * @param file absolute path of the Python file.
 */
export function scriptLaunchesIn(
  file: string,
  around: JobScriptsAround,
): { slurm: SlurmLaunch[]; nodes: LaunchNodes[]; visible: VisibleLaunch[] } {
  const slurm: SlurmLaunch[] = [];
  const nodes: LaunchNodes[] = [];
  const visible: VisibleLaunch[] = [];
  for (const m of commandsByTarget(around).get(resolve(file)) ?? []) {
    const launch = slurmLaunchOf(m);
    if (launch) slurm.push(launch);
    const setting = visibleSetting(m);
    const args = scriptArgs(m);
    nodes.push({
      script: m.script,
      line: m.line,
      ...nodesOf(m),
      documented: false,
      ...(args ? { args } : {}),
      ...(setting ? { setsVisibleDevices: true as const } : {}),
    });
    const v = visibleOf(m, setting, file, around.top);
    if (v) visible.push(v);
  }
  return { slurm, nodes, visible };
}

/** The words a matched command passes after the script's path, where it names a `.py` file and none of them expands; null otherwise. */
function scriptArgs(m: MatchedCommand): string[] | null {
  const words = m.launch.words;
  const at = m.launch.program === "other" ? -1 : words.findIndex((w) => /\.py$/.test(w.value));
  const rest = at >= 0 ? words.slice(at + 1) : null;
  return rest && !rest.some((w) => w.expands) ? rest.map((w) => w.value) : null;
}

/** A command of the project's shell or job scripts that starts the file with CUDA_VISIBLE_DEVICES set for it (GPU064). */
export interface VisibleLaunch {
  /** The script (absolute path) and the command's 0-based line there. */
  script: string;
  line: number;
  /** The literal value the command gets (`1`, `0,1`). */
  value: string;
  /** Where it is set, for messages: `on the command`, `exported on line 3`. */
  from: string;
}

/**
 * Whether the Python file a matched script command starts is `file` and no other file: its path,
 * taken from the folder the script's `cd` (or `pushd`) commands before it move to (launch/child.ts
 * `workingDirectory`) under the script's folder or one of its ancestors up to `top`, names `file` and
 * no other existing file. False when such a `cd` cannot be followed, and when the path names another
 * file too (exp/run.sh's `python main.py` with both exp/main.py and main.py in the project: which one
 * runs depends on the folder the script is started from). {@link commandsByTarget} matches a command
 * to every file its path may name, without the `cd`s.
 */
function startsOnly(m: MatchedCommand, file: string, top: string): boolean {
  const t = targetOf(m.launch);
  const rel = t ? literalPath(t.path, m.facts.literals, m.script) : null;
  const cwd = workingDirectory(m.facts.commands, m.launch.command.start, m.script);
  if (rel === null || cwd === null) return false;
  const named = new Set<string>();
  for (let d = dirname(m.script); within(d, top); d = dirname(d)) {
    const p = resolve(d, cwd, rel);
    if (isRegularFile(p)) named.add(p);
    if (d === top || dirname(d) === d) break;
  }
  return named.size === 1 && named.has(resolve(file));
}

/**
 * The literal CUDA_VISIBLE_DEVICES a matched command starts its program with, from its
 * {@link visibleSetting}; null for a document's command, a value that is not a literal, none, and
 * where the command may start another file than `file` ({@link startsOnly}).
 */
function visibleOf(
  m: MatchedCommand,
  setting: ReturnType<typeof visibleSetting>,
  file: string,
  top: string,
): VisibleLaunch | null {
  if (m.documented || setting?.value == null || !startsOnly(m, file, top)) return null;
  return { script: m.script, line: m.line, value: setting.value, from: setting.from };
}

/** A command of a job or shell script that starts a Python file with the local rank as an argument (GPU044). */
export interface RankArgLaunch {
  /** The Python file it starts (absolute path). */
  file: string;
  /** The script (absolute path) and the command's 0-based line there. */
  script: string;
  line: number;
}

/** At most this many files started with the local rank as an argument are taken per folder ({@link rankArgLaunchesIn}). */
const MAX_RANK_ARG_FILES = 32;

/**
 * The commands of `around`'s job and shell scripts that start a Python file with
 * `python -m torch.distributed.launch` without `--use-env` ({@link SlurmLaunch.passesLocalRankArg}),
 * one per started file (the first in the scripts' order), for files that exist; at most
 * {@link MAX_RANK_ARG_FILES} files. Made once per `around`. GPU044 follows each started file's
 * calls to the parser of the module being linted (python/project.ts `reach`).
 */
export function rankArgLaunchesIn(around: JobScriptsAround): readonly RankArgLaunch[] {
  return firstStarts(around, rankArgByAround, (m, file) =>
    passesLocalRank(m.launch) ? { file, script: m.script, line: m.line } : null,
  );
}
/** {@link rankArgLaunchesIn}'s launches by the scripts they were read from. */
const rankArgByAround = new WeakMap<JobScriptsAround, RankArgLaunch[]>();

/**
 * The Python files (that exist) which `around`'s scripts start, each with the entry `pick` makes of
 * the first command starting it that it accepts; at most {@link MAX_RANK_ARG_FILES}, in the
 * scripts' order, kept per `around` in `memo` ({@link rankArgLaunchesIn}, {@link severalNodeLaunchesIn}).
 */
function firstStarts<T>(
  around: JobScriptsAround,
  memo: WeakMap<JobScriptsAround, T[]>,
  pick: (m: MatchedCommand, file: string) => T | null,
): T[] {
  let all = memo.get(around);
  if (!all) {
    all = [];
    for (const [target, commands] of commandsByTarget(around)) {
      if (all.length >= MAX_RANK_ARG_FILES) break;
      if (!/\.py$/i.test(target)) continue;
      for (const m of commands) {
        const entry = pick(m, target);
        if (!entry) continue;
        if (isRegularFile(target)) all.push(entry);
        break;
      }
    }
    memo.set(around, all);
  }
  return all;
}

/** A launch of another Python file of the project on several nodes ({@link severalNodeLaunchesIn}). */
export interface SeveralNodeLaunch extends LaunchNodes {
  /** The launched file (absolute path). */
  file: string;
  /**
   * For {@link startedFilesIn}: the first Slurm launch of the file whose tasks on a node all see the
   * same GPUs ({@link tasksShareGpus}; GPU074). Absent: none does.
   */
  shared?: SlurmLaunch;
  /**
   * The most worker processes per node that a torchrun launch of the file asks for with a literal
   * `--nproc_per_node`/`--nproc-per-node` (also through a once-assigned variable), when more than
   * one ({@link startedFilesIn} only; GPU075). Absent: none says more than one.
   */
  workersPerNode?: number;
}

/**
 * Whether the tasks an srun launch starts on one node all see the same GPUs: more than one task per
 * node, each seeing more than one GPU (`--gres=gpu:N` or `--gpus-per-node=N` without a per-task
 * option: measured, every task sees all N), no `--gpu-bind` (which leaves {@link
 * SlurmLaunch.gpusPerProcess} unknown), no CUDA_VISIBLE_DEVICES of the script's own, and nothing
 * else in the script that may bind GPUs per task ({@link SlurmLaunch.tasksMayBind}).
 */
export function tasksShareGpus(l: SlurmLaunch): boolean {
  return (
    l.launcher === "srun" &&
    (l.processesPerNode ?? 0) > 1 &&
    (l.gpusPerProcess ?? 0) > 1 &&
    !l.setsVisibleDevices &&
    !l.unknownOptions &&
    !l.tasksMayBind
  );
}

/**
 * The Python files that `around`'s job and shell scripts start on several nodes (`torchrun
 * --nnodes=2`, `#SBATCH --nodes=2` with srun), each with the first such launch; at most
 * {@link MAX_RANK_ARG_FILES}. GPU039: a module such a file imports runs on several nodes too.
 */
export function severalNodeLaunchesIn(around: JobScriptsAround): readonly SeveralNodeLaunch[] {
  return firstStarts(around, severalByAround, (m, file) => {
    const n = nodesOf(m);
    return n.nodes === "several" ? { file, script: m.script, line: m.line, ...n, documented: false } : null;
  });
}
/** {@link severalNodeLaunchesIn}'s launches by the scripts they were read from. */
const severalByAround = new WeakMap<JobScriptsAround, SeveralNodeLaunch[]>();

/**
 * The Python files (that exist) which `around`'s job and shell scripts start, each with the first
 * of its launches that does not say one node, else its first (`nodes` is then `one`: every script
 * launch of the file runs it on one node); null when the scripts start more than
 * {@link MAX_RANK_ARG_FILES} files (then some would be left out). GPU039: a module whose every
 * started user runs on one node only runs there too. Made once per `around`.
 */
export function startedFilesIn(around: JobScriptsAround): readonly SeveralNodeLaunch[] | null {
  const kept = startedByAround.get(around);
  if (kept !== undefined) return kept;
  let all: SeveralNodeLaunch[] | null = [];
  for (const [target, commands] of commandsByTarget(around)) {
    if (!/\.py$/i.test(target) || !commands.length || !isRegularFile(target)) continue;
    if (all.length >= MAX_RANK_ARG_FILES) {
      all = null;
      break;
    }
    const launches = commands.map((m) => ({ m, n: nodesOf(m) }));
    const { m, n } = launches.find((l) => l.n.nodes !== "one") ?? launches[0];
    const shared = commands.map(slurmLaunchOf).find((l) => !!l && tasksShareGpus(l));
    const workers = Math.max(0, ...commands.map((c) => workersOf(c) ?? 0));
    all.push({
      file: target,
      script: m.script,
      line: m.line,
      ...n,
      documented: false,
      ...(shared ? { shared } : {}),
      ...(workers > 1 ? { workersPerNode: workers } : {}),
    });
  }
  startedByAround.set(around, all);
  return all;
}
/**
 * The worker processes per node a torchrun launch asks for: its literal `--nproc_per_node` (or
 * `--nproc-per-node`, torchrun's documentation), also a `$VAR` the script assigns once to a
 * literal; null for another launcher, options not known, or a value that is not a number (`gpu`, `auto`).
 */
function workersOf(m: MatchedCommand): number | null {
  const { launch: l, facts } = m;
  if (l.program !== "torchrun" || l.unknownOptions) return null;
  const script = l.words.findIndex((w) => /\.py$/.test(w.value));
  const own = script < 0 ? l.words : l.words.slice(0, script);
  const n = optionValue(own, ["--nproc_per_node", "--nproc-per-node"]);
  const lit = n ? resolveLiteral(n.value, facts.literals) : null;
  return lit !== null && /^[0-9]{1,4}$/.test(lit.trim()) ? Number(lit.trim()) : null;
}
/** {@link startedFilesIn}'s answers by the scripts they were read from. */
const startedByAround = new WeakMap<JobScriptsAround, SeveralNodeLaunch[] | null>();

/** How many nodes one launch of a Python file runs it on, as far as its command and its job script say. */
export interface LaunchNodes {
  /** The script or Markdown document that holds the command (absolute path). */
  script: string;
  /** 0-based line of the command there. */
  line: number;
  /** `one`: every process runs on one node; `several`: the launch spans nodes; null: the command does not say with literal numbers. */
  nodes: "one" | "several" | null;
  /** What says so, for messages: `--nnodes=2`, `--standalone`, `#SBATCH --nodes=2`, `srun --nodes=2`; `no --nnodes` where nothing does. */
  from: string;
  /** The command is in a Markdown document's shell block (documented), not in a script. */
  documented: boolean;
  /**
   * The words the command passes to the script after its path (`--dataroot ./data`), where none
   * expands (`$ARGS`, `"$@"`); absent where not known (a `-m` module, a document's block).
   */
  args?: string[];
  /**
   * The program starts with CUDA_VISIBLE_DEVICES set: the command assigns it (`CUDA_VISIBLE_DEVICES=0
   * python train.py`), or the script (the document's shell block) exports it before the command and
   * no `unset` follows ({@link visibleSetting}). Absent: not known to.
   */
  setsVisibleDevices?: true;
}

/**
 * `--nnodes=2` as a launch writes it, or `--nnodes=2 (in $DISTRIBUTED_ARGS)` when the option's
 * words came from a variable (manifests/jobscript.ts `expandedLaunch`: they keep its offsets).
 */
function optionText(text: string, l: Launch, at: ShellWord): string {
  const written = l.command.words.find((w) => w.start === at.start && w.end === at.end);
  return written && written.raw !== at.raw && bareExpansion(written) ? `${text} (in ${written.raw})` : text;
}

/** A node count as written (`2`, `1:4` torchrun's min:max, `2-4` Slurm's min-max) → one / several / null (not literal). */
function scaleOf(value: string | null, literals: Map<string, string>): "one" | "several" | null {
  const lit = value === null ? null : resolveLiteral(value, literals);
  const m = lit === null ? null : /^([0-9]{1,5})(?:[:-]([0-9]{1,5}))?$/.exec(lit.trim());
  if (!m) return null;
  const least = Number(m[1]);
  const most = m[2] === undefined ? least : Number(m[2]);
  if (least === 1 && most === 1) return "one";
  return most > 1 ? "several" : null;
}

/**
 * The node count one launch states. torchrun (torch/distributed/run.py, read in Debian's
 * python3-torch 1.13, and the torchrun documentation): `--nnodes` "Number of nodes, or the range of
 * nodes in form <minimum_nodes>:<maximum_nodes>"; `--standalone` is "Useful when launching
 * single-node, multi-worker job" (a local rendezvous on this node). srun (srun(1)): `-N`/`--nodes`,
 * else the job's `#SBATCH --nodes`; a command outside srun in a job of one node (`#SBATCH --nodes=1`)
 * runs on that node (sbatch(1): the batch script runs on the first node of the allocation). Otherwise only what the command writes counts: torchrun's own default
 * (`--nnodes` "1:1") and a plain `python file.py` say nothing of the other ways the program is
 * started (a README's one-node example is not a promise that it never runs on two), so they are null.
 */
function nodesOf(m: MatchedCommand): { nodes: LaunchNodes["nodes"]; from: string } {
  const { launch: l, facts } = m;
  const job = lastDirectiveOption(facts.directives, "nodes");
  const srunNodes = (): { nodes: LaunchNodes["nodes"]; from: string } => {
    const step = l.srun?.options.get("nodes")?.value ?? null;
    if (step !== null) return { nodes: scaleOf(step, facts.literals), from: `srun --nodes=${step}` };
    if (job?.value) return { nodes: scaleOf(job.value, facts.literals), from: `#SBATCH --nodes=${job.value}` };
    return { nodes: null, from: "srun without a node count" };
  };
  // Outside srun a batch script's command runs on the job's first node (sbatch(1)); in a job of
  // one node that is the only node, whatever the command says of its own.
  const oneNodeJob = (): { nodes: LaunchNodes["nodes"]; from: string } | null =>
    job?.value && scaleOf(job.value, facts.literals) === "one"
      ? { nodes: "one", from: `#SBATCH --nodes=${job.value}` }
      : null;
  if (l.program === "torchrun") {
    // A variable among its options may hold `--nnodes` or `--standalone`: nothing said.
    if (l.unknownOptions) return { nodes: null, from: "options not known" };
    const script = l.words.findIndex((w) => /\.py$/.test(w.value));
    const own = script < 0 ? l.words : l.words.slice(0, script);
    const standalone = own.find((w) => w.value === "--standalone");
    if (standalone) return { nodes: "one", from: optionText("--standalone", l, standalone) };
    const n = optionValue(own, ["--nnodes"]);
    if (n) return { nodes: scaleOf(n.value, facts.literals), from: optionText(`--nnodes=${n.value}`, l, n.start) };
    if (l.srun) return srunNodes();
    return oneNodeJob() ?? { nodes: null, from: "no --nnodes" };
  }
  if (l.srun) return srunNodes();
  return oneNodeJob() ?? { nodes: null, from: "no node count" };
}

/**
 * How many nodes each launch of `file` by `around`'s job and shell scripts runs it on (as
 * {@link launchesIn} matches them, plain `python file.py` lines of shell scripts included). For
 * GPU039: a file that the project starts on several nodes, or only ever on one.
 * @param file absolute path of the Python file.
 */
export function launchNodesIn(file: string, around: JobScriptsAround): LaunchNodes[] {
  return scriptLaunchesIn(file, around).nodes;
}

/**
 * The launches of `file` documented in the fenced shell blocks (```bash, ```sh, ```shell,
 * ```console, ```zsh or no language) of the Markdown documents around it (the folders
 * {@link jobScriptsAround} searches), matched by the end of the file's path, with how many nodes
 * each runs it on. Asked lazily (GPU039, through the project index, which records `read` as the
 * finding's dependencies): lexing a documentation-heavy project's documents for every file cost
 * more than linting its Python (stas00/ml-engineering: 59 documents, 0.31 s).
 * @param file absolute path of the Python file.
 * @param around the documents around the file's folder ({@link documentsAround}); looked up when not given.
 * @returns the launches, and the documents the answer depends on (every document around the file:
 *   one edited to name a launcher would change it).
 */
export function documentedLaunchNodes(
  file: string,
  around: Pick<JobScriptsAround, "docs" | "top"> = documentsAround(dirname(resolve(file))),
  words: readonly string[] = DOC_LAUNCH_WORDS,
): { launches: LaunchNodes[]; read: string[] } {
  const launches: LaunchNodes[] = [];
  for (const m of documentedCommandsStarting(file, around.docs, around.top, words))
    launches.push({
      script: m.script,
      line: m.line,
      ...nodesOf(m),
      documented: true,
      ...(visibleSetting(m) ? { setsVisibleDevices: true as const } : {}),
    });
  // Every regular document around counts as read: an edit that makes one name a launcher changes
  // the answer (a FIFO or a link to a device is never read, so it is no dependency either).
  return { launches, read: around.docs.filter(isRegularFile) };
}

/** A fenced shell block of a Markdown document, parsed as a script. */
interface DocBlock {
  facts: JobScriptFacts;
  text: string;
  /** 0-based line of the block's first line in the document. */
  line: number;
}

/** Info strings of fenced blocks read as shell. */
const SHELL_FENCES = new Set([
  "",
  "bash",
  "sh",
  "shell",
  "zsh",
  "console",
  "shell-session",
  "shellsession",
  "terminal",
]);
/** A launcher's name in a document's text: only such documents are parsed. */
const DOC_LAUNCH_WORDS = ["torchrun", "torch.distributed.run", "torch.distributed.launch", "srun"];
const readDocs = new Map<
  string,
  { mtimeMs: number; size: number; value: { text: string | null; blocks?: DocBlock[] } }
>();

/**
 * The text of the Markdown document at `path` when it names one of `words` (a launcher:
 * {@link DOC_LAUNCH_WORDS}); null when it names none, is not a regular file, is larger than
 * {@link MAX_DOC_BYTES} or cannot be read. Cached by mtime and size.
 */
function docText(path: string, words: readonly string[] = DOC_LAUNCH_WORDS): string | null {
  const text = keptByStat(readDocs, path, MAX_DOC_BYTES, (t) => ({ text: t }))?.text ?? null;
  return text !== null && words.some((w) => text.includes(w)) ? text : null;
}

/** What a document's text must name for its `python file.py` commands to be read ({@link documentedLaunchNodes}). */
export const DOC_PYTHON_WORDS: readonly string[] = ["python", ...DOC_LAUNCH_WORDS];

/**
 * The fenced shell blocks of the Markdown document at `path` whose text is `text` ({@link docText}),
 * read with marked's CommonMark/GFM lexer (lists and block quotes included), each parsed as a shell
 * script; a prompt (`$ `, `% `) is dropped, and in a `console` block only prompted lines are
 * commands (the rest is output). Kept with the text ({@link docText}'s cache): a document is lexed
 * at most once per version.
 */
function docBlocks(path: string, text: string): readonly DocBlock[] {
  const kept = readDocs.get(path)?.value;
  if (kept?.text === text && kept.blocks) return kept.blocks;
  const blocks: DocBlock[] = [];
  try {
    const lines = text.split(/\r?\n/);
    let cursor = 0; // fences come in document order: each is looked for below the last
    walkTokens(lexer(text), (t) => {
      if (t.type !== "code" || (t as Tokens.Code).codeBlockStyle === "indented") return;
      const code = t as Tokens.Code;
      // The token's own raw text is dedented inside lists: its opening fence is found by its trimmed text.
      const fence = code.raw.split("\n", 1)[0].trim();
      let open = cursor;
      while (open < lines.length && !lines[open].trimEnd().endsWith(fence)) open++;
      if (open >= lines.length) return;
      cursor = open + 1;
      const lang = (code.lang ?? "").trim().split(/\s+/)[0].toLowerCase();
      if (!SHELL_FENCES.has(lang)) return;
      const output = lang === "console" || lang === "shell-session" || lang === "shellsession" || lang === "terminal";
      const script = code.text
        .split("\n")
        .map((line) => {
          const prompt = /^\s*[$%] /.exec(line);
          return prompt ? line.slice(prompt[0].length) : output ? "" : line;
        })
        .join("\n");
      blocks.push({ facts: jobScriptFacts(new SourceText(script)), text: script, line: open + 1 });
    });
  } catch {
    blocks.length = 0; // a document the lexer cannot take: no launches from it
  }
  if (kept?.text === text) kept.blocks = blocks;
  return blocks;
}

/** Forgets the cached folder listings and parsed scripts (tests). */
export function clearSlurmLaunchCache(): void {
  listings.clear();
  parsed.clear();
  readDocs.clear();
}
