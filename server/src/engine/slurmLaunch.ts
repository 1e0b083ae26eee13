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
 * `pkg/mod.py` the same way.
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
import { dirname, join, resolve, sep } from "node:path";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";
import { SourceText } from "./manifests/source";
import { jobScriptFacts, launchOf, resolveLiteral, type JobScriptFacts } from "./manifests/jobscript";
import type { ShellWord } from "./manifests/shell";

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
}

/** Job-script file names. */
const SCRIPT = /\.(sbatch|slurm|sh|bash)$/i;
/** Caps: job scripts read per lookup, bytes per script, folder levels above the file's folder. */
const MAX_SCRIPTS = 300;
const MAX_SCRIPT_BYTES = 256 * 1024;
const LEVELS_UP = 3;
/** How long a folder listing is reused (ms): the editor lints on every keystroke. */
const LISTING_TTL_MS = 5000;

const listings = new Map<string, { at: number; entries: Array<{ name: string; dir: boolean }> }>();
const parsed = new Map<string, { mtimeMs: number; size: number; facts: JobScriptFacts | null; text: string }>();

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

/** The parsed job script at `path` (cached by mtime and size); null when unreadable. */
function scriptFacts(path: string): { facts: JobScriptFacts; text: string } | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size > MAX_SCRIPT_BYTES) return null;
  const hit = parsed.get(path);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size)
    return hit.facts ? { facts: hit.facts, text: hit.text } : null;
  const read = readWorkspaceText(path, MAX_SCRIPT_BYTES);
  let facts: JobScriptFacts | null = null;
  let text = "";
  if ("text" in read) {
    text = read.text;
    try {
      facts = jobScriptFacts(new SourceText(text));
    } catch {
      facts = null;
    }
  }
  parsed.set(path, { mtimeMs: st.mtimeMs, size: st.size, facts, text });
  return facts ? { facts, text } : null;
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

/** A whole number written in an option, or null. */
const int = (v: string | null | undefined): number | null => (v && /^[0-9]+$/.test(v) ? Number(v) : null);

const within = (dir: string, top: string) => dir === top || dir.startsWith(top.endsWith(sep) ? top : top + sep);

/** `$ROOT/src/train.py` → `src/train.py`; `./train.py` → `train.py`; null when the path is not literal after that. */
function literalPath(word: string, literals: Map<string, string>): string | null {
  // The variable usually names the project's folder on the cluster (`ROOT=/home/me/proj`), not
  // this checkout: the rest of the path is matched from the job script's folder upwards.
  const m = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\/(.*)$/.exec(word);
  const lit = resolveLiteral(m ? m[1] : word, literals);
  return lit === null ? null : lit.replace(/^(\.\/)+/, "");
}

/** The script path (or `-m` module as a path) that the program words run, or null. */
function targetOf(words: readonly ShellWord[]): { path: string; module: boolean } | null {
  // python [-u -O -B -X opt -W arg ...] file.py | -m module; torchrun [--opt[=v] ...] file.py | -m module
  for (let k = 1; k < words.length; k++) {
    const w = words[k].value;
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
 * Whether a launch's words run `python -m torch.distributed.launch` without `--use-env`/`--use_env`
 * before the script: torch/distributed/run.py `get_use_env` ("``use_env`` is only used by the
 * ``torch.distributed.launch``"; torchrun has no such option and never passes the argument).
 */
function passesLocalRank(words: readonly ShellWord[]): boolean {
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
  // depends on the node's topology (one NUMA node's GPUs, or all of them). Not followed.
  if (
    opts?.has("gpu-bind") ||
    /g/.test(opts?.get("accel-bind")?.value ?? "") ||
    facts.directives.some((d) => d.options.some((o) => o.name === "gpu-bind"))
  )
    return { n: null, from: null };
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
  top: string;
}

/** The job-script paths in folder `d` and in its direct subfolders, in listing order. */
function scriptsIn(d: string): string[] {
  const out: string[] = [];
  for (const e of list(d)) {
    if (!e.dir) {
      if (SCRIPT.test(e.name)) out.push(join(d, e.name));
      continue;
    }
    for (const f of list(join(d, e.name))) if (!f.dir && SCRIPT.test(f.name)) out.push(join(d, e.name, f.name));
  }
  return out;
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
      if (!seen.has(p) && paths.length < MAX_SCRIPTS) {
        seen.add(p);
        paths.push(p);
      }
  }
  const scripts: JobScriptsAround["scripts"] = [];
  for (const script of paths) {
    const s = scriptFacts(script);
    if (s && (s.text.includes(".py") || s.text.includes("-m "))) scripts.push({ script, ...s });
  }
  return { scripts, top };
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

/**
 * The launches of `file` by `around`'s job scripts ({@link jobScriptsAround} of the file's folder).
 * @param file absolute path of the Python file.
 */
export function launchesIn(file: string, around: JobScriptsAround): SlurmLaunch[] {
  const target = resolve(file);
  const { top } = around;
  const out: SlurmLaunch[] = [];
  for (const { script, facts, text } of around.scripts) {
    const setsLocalRank = facts.literals.has("LOCAL_RANK") || /(^|[\s;])(export\s+)?LOCAL_RANK=/m.test(text);
    const bases: string[] = [];
    for (let d = dirname(script); within(d, top); d = dirname(d)) {
      bases.push(d);
      if (d === top || dirname(d) === d) break;
    }
    const src = new SourceText(text);
    for (const c of facts.commands) {
      const l = launchOf(c);
      if (l.program !== "python" && l.program !== "torchrun") continue;
      const t = targetOf(l.words);
      if (!t) continue;
      const rel = literalPath(t.path, facts.literals);
      if (rel === null) continue;
      const hits = rel.startsWith("/") ? resolve(rel) === target : bases.some((b) => resolve(b, rel) === target);
      if (!hits) continue;
      const launcher: SlurmLaunch["launcher"] = l.program === "torchrun" ? "torchrun" : l.srun ? "srun" : "batch";
      if (launcher === "batch" && facts.directives.length === 0) continue; // a plain shell script, not a job
      const g = gpusOf(facts, l.srun, launcher);
      const srunTasks = l.srun?.options.get("ntasks-per-node")?.value ?? null;
      const srunN = l.srun?.options.get("ntasks")?.value ?? null;
      const processesPerNode =
        launcher === "batch"
          ? 1
          : launcher === "srun"
            ? (int(srunTasks) ??
              (int(srunN) !== null && (facts.request.nodes ?? 1) === 1 ? int(srunN) : null) ??
              facts.request.tasksPerNode)
            : null;
      const exportsLocalRank = /LOCAL_RANK/.test(l.srun?.options.get("export")?.value ?? "");
      out.push({
        script,
        line: src.lineOf(c.start),
        launcher,
        gpusPerProcess: g.n,
        gpusFrom: g.from,
        processesPerNode,
        setsLocalRank: setsLocalRank || exportsLocalRank,
        ...(passesLocalRank(l.words) ? { passesLocalRankArg: true } : {}),
      });
    }
  }
  return out;
}

/** Forgets the cached folder listings and parsed scripts (tests). */
export function clearSlurmLaunchCache(): void {
  listings.clear();
  parsed.clear();
}
