/**
 * Facts about a Slurm batch script (`.sbatch`, `.slurm`, or a `.sh` with `#SBATCH` lines) for the
 * job-script rules (GPU021-GPU025): its `#SBATCH` directives, those Slurm ignores, the GPUs and tasks
 * it asks for, its simple commands (shell.ts), and the launches in them (`srun`, `torchrun`,
 * `python -m torch.distributed.run`, `python`).
 *
 * Sources: sbatch(1) and srun(1) of Slurm 22.05 (Debian 12 `slurm-client`), "DESCRIPTION": "The
 * batch script may contain options preceded with "#SBATCH" before any executable commands in the
 * script. sbatch will stop processing further #SBATCH directives once the first non-comment
 * non-whitespace line has been reached in the script."
 */
import type { Range } from "../types";
import type { SourceText } from "./source";
import { arrayWords, parseShell, type ShellCommand, type ShellComment, type ShellWord } from "./shell";

/** One option of an `#SBATCH` line. */
export interface SbatchOption {
  /** Long name without dashes (`gpus-per-node`); short options are mapped to their long names where known (`N` → `nodes`). */
  name: string;
  /** The value (`=value` or the next token); null for a switch. */
  value: string | null;
  /** The option as written on the line. */
  range: Range;
}

/** An `#SBATCH` line. */
export interface SbatchDirective {
  line: number;
  /** The whole line. */
  range: Range;
  options: SbatchOption[];
}

/** The GPUs and tasks a job asks for, as far as the directives say with literal numbers. */
export interface JobRequest {
  /** The script asks for GPUs at all (`--gres=gpu...`, `--gpus*`, `-G`). */
  asksForGpus: boolean;
  /** GPUs per node; null when unknown (not asked for, or not derivable without the node count). */
  gpusPerNode: number | null;
  /** `--gpus-per-task` when given: each task's GPUs (Slurm binds them to the task). */
  gpusPerTask: number | null;
  /**
   * Tasks srun starts on each node ({@link tasksOnEachNode}): `--ntasks` spread over the job's nodes
   * when it is given (`--ntasks-per-node` is then only a maximum), else `--ntasks-per-node`; null
   * when unknown or not the same on every node.
   */
  tasksPerNode: number | null;
  /** `--nodes`, the least count of a range (`2-4` is 2). */
  nodes: number | null;
  /**
   * The job's node count where the directives fix it ({@link jobNodeCount}); null when Slurm
   * chooses (a range, `--ntasks` without `--nodes`, a GPU total that may span nodes).
   */
  nodeCount: number | null;
  /** `--ntasks`/`-n` as a literal number. */
  ntasks: number | null;
  /**
   * The job names a task count (`--ntasks`/`-n`, `--ntasks-per-node`), so its steps inherit
   * SLURM_NTASKS (test/fixtures/slurm/batch-ntasks/measured.md) and srun takes it as its `--ntasks`.
   */
  namesTasks: boolean;
  /** The `--gpus-per-node` option when given: its type (`a100` of `a100:4`, or null for a bare count). */
  gpusPerNodeOption: { type: string | null; option: SbatchOption } | null;
  /** Where the request is written, for related information. */
  where: SbatchOption | null;
}

/** Everything the job-script rules read. */
export interface JobScriptFacts {
  /** Directives Slurm reads: before the first command. */
  directives: SbatchDirective[];
  /** `#SBATCH` lines after the first command (comments at the start of a line): Slurm ignores them. */
  ignoredDirectives: SbatchDirective[];
  /** 0-based line of the first command (the first line that is neither blank nor a comment), or null when the script has none. */
  firstCommandLine: number | null;
  request: JobRequest;
  commands: ShellCommand[];
  comments: ShellComment[];
  /**
   * Variables assigned exactly once in the script with a literal string (no expansion but of names
   * known at that point), by name. An array assignment (`X=(...)`) is none.
   */
  literals: Map<string, string>;
  /**
   * Arrays assigned exactly once in the script (`X=(a b c)`, also after `declare -a`/`local`) whose
   * elements are literal as the assignment makes them (an unquoted `$GPUS` of a known name split
   * into its words, as bash does), by name; no `X+=(...)` after it.
   */
  arrays: Map<string, string[]>;
  /** Every variable the script assigns (`X=...`, `export X=...`), literal or not, once or more. */
  assigned: ReadonlySet<string>;
}

const SHORT: Record<string, string> = {
  N: "nodes",
  n: "ntasks",
  G: "gpus",
  c: "cpus-per-task",
  p: "partition",
  t: "time",
  J: "job-name",
  o: "output",
  e: "error",
  A: "account",
  q: "qos",
  w: "nodelist",
  x: "exclude",
  C: "constraint",
  D: "chdir",
  a: "array",
  d: "dependency",
  M: "clusters",
  L: "licenses",
};
/** Short options that take no value (sbatch(1)). */
const SHORT_SWITCHES = new Set(["h", "H", "I", "k", "O", "Q", "s", "v", "V", "W"]);

/** Splits the text after `#SBATCH` into tokens (with quotes), up to a `#` that starts a comment. */
function directiveTokens(text: string, offset: number): Array<{ text: string; start: number; end: number }> {
  const out: Array<{ text: string; start: number; end: number }> = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\r")) i++;
    if (i >= text.length || text[i] === "#") break;
    const start = i;
    let value = "";
    while (i < text.length && text[i] !== " " && text[i] !== "\t" && text[i] !== "\r") {
      const q = text[i];
      if (q === '"' || q === "'") {
        const e = text.indexOf(q, i + 1);
        const end = e < 0 ? text.length : e;
        value += text.slice(i + 1, end);
        i = Math.min(end + 1, text.length);
      } else {
        value += q;
        i++;
      }
    }
    out.push({ text: value, start: offset + start, end: offset + i });
  }
  return out;
}

/** Parses the `#SBATCH` line at `start` (offset of the `#`). */
function parseDirective(src: SourceText, start: number, end: number): SbatchDirective {
  const line = src.lineOf(start);
  const toks = directiveTokens(src.text.slice(start + 7, end), start + 7);
  const options: SbatchOption[] = [];
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    let name: string;
    let value: string | null = null;
    let last = t;
    if (t.text.startsWith("--")) {
      const eq = t.text.indexOf("=");
      name = eq < 0 ? t.text.slice(2) : t.text.slice(2, eq);
      if (eq >= 0) value = t.text.slice(eq + 1);
      else if (toks[k + 1] && !toks[k + 1].text.startsWith("-") && VALUE_OPTIONS.has(name)) {
        value = toks[++k].text;
        last = toks[k];
      }
    } else if (t.text.startsWith("-") && t.text.length >= 2) {
      const letter = t.text[1];
      name = SHORT[letter] ?? letter;
      if (t.text.length > 2) value = t.text.slice(2).replace(/^=/, "");
      else if (!SHORT_SWITCHES.has(letter) && toks[k + 1] && !toks[k + 1].text.startsWith("-")) {
        value = toks[++k].text;
        last = toks[k];
      }
    } else {
      continue; // a stray word; sbatch would reject the line
    }
    options.push({ name, value, range: src.range(t.start, last.end) });
  }
  return { line, range: src.range(start, end), options };
}

/** Long options whose value may follow as the next token (`--nodes 2`). */
const VALUE_OPTIONS = new Set([
  "nodes",
  "ntasks",
  "ntasks-per-node",
  "tasks-per-node",
  "gpus",
  "gpus-per-node",
  "gpus-per-task",
  "gres",
  "cpus-per-task",
  "partition",
  "time",
  "job-name",
  "output",
  "error",
  "account",
  "qos",
  "mem",
  "constraint",
  "nodelist",
  "exclude",
  "chdir",
  "array",
  "dependency",
  "mem-per-cpu",
  "mem-per-gpu",
  "cpus-per-gpu",
  "gpu-bind",
  "reservation",
]);

const int = (s: string | null | undefined): number | null =>
  s !== null && s !== undefined && /^[0-9]+$/.test(s) ? Number(s) : null;

/** `[type:]count` of `--gpus*` (count defaults to none): `a100:4` → {type: a100, count: 4}. */
function typedCount(v: string): { type: string | null; count: number | null } {
  const parts = v.split(":");
  if (parts.length === 1) return { type: null, count: int(parts[0]) };
  return { type: parts.slice(0, -1).join(":"), count: int(parts[parts.length - 1]) };
}

/** GPUs per node of a `--gres` list (`gpu`, `gpu:4`, `gpu:a100:4`, `gpu:a100:4,nvme:1`); null when it names no GPU. */
function gresGpus(v: string): number | null | undefined {
  for (const item of v.split(",")) {
    const parts = item.split(":");
    if (parts[0] !== "gpu") continue;
    if (parts.length === 1) return 1;
    const last = parts[parts.length - 1].replace(/\(.*\)$/, "");
    if (parts.length === 2) return int(last) ?? 1; // `gpu:a100` is one GPU of that type
    return int(last);
  }
  return undefined;
}

/** Options that always ask for GPUs (sbatch(1), srun(1), salloc(1)); `-G` is read as `gpus`. */
const GPU_OPTIONS = new Set(["gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket", "G"]);
/** Options that ask for GPUs when their value names them (`--gres=gpu:a100:1`, `--tres-per-task=gres/gpu:1`). */
const GRES_OPTIONS = new Set(["gres", "tres-per-task", "tres-per-node", "tres-per-job", "tres-per-socket"]);

/**
 * Whether an `#SBATCH`/`srun`/`salloc` option (long name without dashes, or a short letter) asks for
 * GPUs, or may: a value that expands a variable counts (callers that need a certain request test
 * the value for `$` first). `--gpus=0` (also `--gpus=a100:0`) asks for none.
 */
export function optionAsksForGpus(name: string, value: string | null): boolean {
  if (GPU_OPTIONS.has(name)) return value === null || !/^(?:[a-z0-9_-]+:)?0$/i.test(value);
  return GRES_OPTIONS.has(name) && (value === null || /gpu|\$/i.test(value));
}

/** The last `#SBATCH` option named `name` (the one sbatch applies, as on a command line), or undefined. */
export function lastDirectiveOption(directives: readonly SbatchDirective[], name: string): SbatchOption | undefined {
  let found: SbatchOption | undefined;
  for (const d of directives) for (const o of d.options) if (o.name === name) found = o;
  return found;
}

/** Where Slurm's task layout was measured (Slurm 22.05.8, two nodes). */
export const NTASKS_MEASURED = "test/fixtures/slurm/ntasks-per-node/measured.md";

/**
 * The tasks srun starts on each of `nodes` nodes for `ntasks` tasks at most `perNode` a node: with
 * both counts, sbatch(1) and srun(1) say `--ntasks` "will take precedence and the
 * --ntasks-per-node will be treated as a maximum count of tasks per node", and srun spreads the
 * tasks over all the nodes, evenly where they divide (measured, {@link NTASKS_MEASURED}:
 * `--nodes=1 --ntasks=1 --ntasks-per-node=2` starts one task; `--nodes=2 --ntasks=2
 * --ntasks-per-node=2` one on each node; `--ntasks=3 --ntasks-per-node=2` two nodes, two tasks and
 * one). `nodes` null: the fewest nodes `perNode` allows, which Slurm gave there. Null when unknown,
 * when the nodes do not get the same count, or where Slurm refuses the job (more tasks than
 * `nodes` x `perNode`, or fewer tasks than nodes).
 */
export function tasksOnEachNode(ntasks: number | null, perNode: number | null, nodes: number | null): number | null {
  if (ntasks === null) return perNode;
  if (ntasks < 1 || perNode === 0) return null;
  const n = nodes ?? (perNode !== null ? Math.ceil(ntasks / perNode) : null);
  if (n === null || n < 1 || ntasks < n || (perNode !== null && ntasks > perNode * n)) return null;
  return ntasks % n === 0 ? ntasks / n : null;
}

/**
 * The job's node count where the directives fix it: `--nodes=N`; with `--ntasks` and
 * `--ntasks-per-node` but no `--nodes`, the fewest nodes that hold the tasks (what Slurm gave on
 * the measured cluster, {@link NTASKS_MEASURED}); one node when neither `--nodes` nor `--ntasks`
 * nor a GPU total (`--gpus`, which may span nodes) is given. Null otherwise: a range (`--nodes=1-2`
 * got two nodes there), or `--ntasks` alone.
 */
function jobNodeCount(v: (n: string) => string | null, ntasks: number | null, perNode: number | null): number | null {
  const nodes = v("nodes");
  if (nodes !== null) return int(nodes);
  if (ntasks !== null) return perNode !== null && perNode > 0 ? Math.ceil(ntasks / perNode) : null;
  return v("gpus") === null ? 1 : null;
}

/**
 * Tasks an srun step starts on each node (measured, {@link NTASKS_MEASURED}): its own `--ntasks`
 * spread over its `--nodes`, else over the job's nodes (one node for a one-task step: "can't run 1
 * processes on 2 nodes, setting nnodes to 1"), whatever its `--ntasks-per-node` says. Without its own `--ntasks`, a step of a job that
 * names a task count inherits SLURM_NTASKS as its `--ntasks`, so srun's `--ntasks-per-node` counts
 * only where it matches that count ("can't honor --ntasks-per-node set to 1 which doesn't match the
 * requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node."): null where
 * it does not (Slurm versions differ on whether srun's own `--nodes` changes that). In a job without
 * a task count srun's `--ntasks-per-node` is the count. Null when unknown.
 */
export function stepTasksPerNode(srun: ReadonlyMap<string, { value: string | null }>, job: JobRequest): number | null {
  const perNode = int(srun.get("ntasks-per-node")?.value);
  const ntasks = int(srun.get("ntasks")?.value);
  const nodesValue = srun.get("nodes")?.value;
  if (ntasks !== null) {
    if (ntasks === 1) return 1;
    const nodes = nodesValue !== undefined ? int(nodesValue) : job.nodeCount;
    // srun's --ntasks-per-node beside its --ntasks: ignored where it does not match (measured).
    return nodes === null ? null : tasksOnEachNode(ntasks, null, Math.min(nodes, ntasks));
  }
  if (perNode !== null) {
    if (!job.namesTasks) return perNode;
    return perNode === job.tasksPerNode ? perNode : null;
  }
  if (nodesValue !== undefined) return null;
  return job.tasksPerNode;
}

/** What the directives ask for (the last of repeated options wins, as on a command line). */
export function jobRequest(directives: SbatchDirective[]): JobRequest {
  const opts = new Map<string, SbatchOption>();
  for (const d of directives)
    for (const o of d.options) opts.set(o.name === "tasks-per-node" ? "ntasks-per-node" : o.name, o);
  const v = (n: string) => opts.get(n)?.value ?? null;
  const nodes = int(v("nodes")?.split("-")[0]);
  const ntasks = int(v("ntasks"));
  const perNode = int(v("ntasks-per-node"));
  const nodeCount = jobNodeCount(v, ntasks, perNode);
  // `--nodes` given but not a count (a range, a variable): the nodes the tasks spread over are unknown.
  const tasksPerNode =
    ntasks !== null && nodeCount === null && opts.has("nodes") ? null : tasksOnEachNode(ntasks, perNode, nodeCount);
  const namesTasks = opts.has("ntasks") || opts.has("ntasks-per-node");
  // The GPUs `--gpus-per-task` gives a node follow the tasks the allocation makes room for there,
  // `--ntasks-per-node` when given (measured: `--nodes=2 --ntasks=2 --ntasks-per-node=2
  // --gpus-per-task=1` gave the batch step two GPUs), not the tasks srun starts.
  const allocatedTasks = perNode ?? tasksPerNode;
  const gpusPerTask = opts.has("gpus-per-task") ? typedCount(v("gpus-per-task") ?? "").count : null;
  let gpusPerNode: number | null = null;
  let where: SbatchOption | null = null;
  let asksForGpus = false;
  let gpusPerNodeOption: JobRequest["gpusPerNodeOption"] = null;
  const gpn = opts.get("gpus-per-node");
  const gres = opts.get("gres");
  const gpus = opts.get("gpus");
  if (gpn?.value) {
    const tc = typedCount(gpn.value);
    asksForGpus = true;
    gpusPerNode = tc.count;
    where = gpn;
    gpusPerNodeOption = { type: tc.type, option: gpn };
  } else if (gres?.value && gresGpus(gres.value) !== undefined) {
    asksForGpus = true;
    gpusPerNode = gresGpus(gres.value) ?? null;
    where = gres;
  } else if (opts.has("gpus-per-task")) {
    asksForGpus = true;
    where = opts.get("gpus-per-task")!;
    gpusPerNode = gpusPerTask !== null && allocatedTasks !== null ? gpusPerTask * allocatedTasks : null;
  } else if (gpus?.value) {
    asksForGpus = true;
    where = gpus;
    const total = typedCount(gpus.value).count;
    gpusPerNode =
      total !== null && (nodes === 1 || (nodes !== null && total % nodes === 0)) ? total / (nodes ?? 1) : null;
  }
  if (asksForGpus && gpusPerNode === 0) asksForGpus = false;
  return {
    asksForGpus,
    gpusPerNode,
    gpusPerTask,
    tasksPerNode,
    nodes,
    nodeCount,
    ntasks,
    namesTasks,
    gpusPerNodeOption,
    where,
  };
}

/** Builds the facts of a job script. Never throws. */
export function jobScriptFacts(src: SourceText): JobScriptFacts {
  const { commands, comments, firstToken } = parseShell(src);
  // sbatch stops at the first line that is neither blank nor a comment: the first token's line
  // (a `for` or `if` line counts, though it is no simple command).
  const firstCommand = firstToken;
  const firstCommandLine = firstCommand === null ? null : src.lineOf(firstCommand);
  const directives: SbatchDirective[] = [];
  const ignoredDirectives: SbatchDirective[] = [];
  for (const c of comments) {
    // Only a line that starts with `#SBATCH` is a directive (not `# SBATCH`, `##SBATCH`, or one indented).
    if (!c.text.startsWith("#SBATCH") || src.lineStart(src.lineOf(c.start)) !== c.start) continue;
    const after = c.text[7];
    if (after !== undefined && after !== " " && after !== "\t") continue;
    const d = parseDirective(src, c.start, c.end);
    (firstCommand === null || c.start < firstCommand ? directives : ignoredDirectives).push(d);
  }
  const counts = new Map<string, number>();
  const literal = new Map<string, string>();
  const array = new Map<string, string[]>();
  // Each name's value at this point of the script, in order; null once it is not literal.
  const current = new Map<string, string | null>();
  for (const c of commands) {
    // `X+=...` / `X+=(...)` (bash appends): another assignment of X, whose value is not followed.
    const append = c.assignments.length === 0 ? /^([A-Za-z_][A-Za-z0-9_]*)\+=/.exec(c.words[0]?.raw ?? "") : null;
    if (append) {
      counts.set(append[1], (counts.get(append[1]) ?? 0) + 1);
      current.set(append[1], null);
    }
    const assigns =
      c.words.length === 0
        ? c.assignments.map((a) => ({ name: a.name, value: a.value, word: a.word }))
        : c.words[0].value === "export" ||
            c.words[0].value === "declare" ||
            c.words[0].value === "readonly" ||
            c.words[0].value === "local"
          ? c.words
              .slice(1)
              .filter((w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.value))
              .map((w) => ({
                name: w.value.slice(0, w.value.indexOf("=")),
                value: w.value.slice(w.value.indexOf("=") + 1),
                word: w,
              }))
          : [];
    for (const a of assigns) {
      counts.set(a.name, (counts.get(a.name) ?? 0) + 1);
      if (a.value === "" && src.text[a.word.end] === "(") {
        // `X=(...)`: an array (bash(1), Arrays), whose `$X` is its first element: no literal string.
        current.set(a.name, null);
        const elements = arrayElements(src.text, a.word.end, current);
        if (elements) array.set(a.name, elements);
        continue;
      }
      // A single-quoted part keeps its `$` (the unquoted value no longer shows which part was quoted).
      const value = !a.word.expands ? a.value : a.word.raw.includes("'") ? null : substituted(a.value, current);
      current.set(a.name, value);
      if (value !== null) literal.set(a.name, value);
    }
  }
  const literals = new Map([...literal].filter(([k]) => counts.get(k) === 1));
  const arrays = new Map([...array].filter(([k]) => counts.get(k) === 1));
  return {
    directives,
    ignoredDirectives,
    firstCommandLine,
    request: jobRequest(directives),
    commands,
    comments,
    literals,
    arrays,
    assigned: new Set(counts.keys()),
  };
}

/** Characters of an unquoted word that bash's pathname expansion reads (bash(1), Pathname Expansion). */
const GLOB = /[*?[]/;
/** bash's word splitting with the default IFS (space, tab, newline). */
const splitWords = (s: string): string[] => s.split(/[ \t\n]+/).filter(Boolean);

/**
 * The elements an array assignment's list at `open` (its `(`) gives, with the values known at that
 * point of the script (`current`): each word, its expansions put in ({@link substituted}) and, when
 * unquoted, split into words as bash does; null when any element is not known (an expansion of an
 * unknown name, a command substitution, a pattern bash would match against file names).
 */
function arrayElements(text: string, open: number, current: ReadonlyMap<string, string | null>): string[] | null {
  const words = arrayWords(text, open);
  if (!words) return null;
  const out: string[] = [];
  for (const w of words) {
    const quoted = /["']/.test(w.raw);
    if (!quoted && GLOB.test(w.raw)) return null;
    if (!w.expands) {
      out.push(w.value);
      continue;
    }
    const value = w.raw.includes("'") ? null : substituted(w.value, current);
    if (value === null || (!quoted && GLOB.test(value))) return null;
    out.push(...(quoted ? [value] : splitWords(value)));
  }
  return out;
}

/** A launch found in a command: what runs, under `srun` or not, and the srun options. */
export interface Launch {
  command: ShellCommand;
  /** The srun word and its options when the program is started by srun. */
  srun: { word: ShellWord; options: Map<string, { value: string | null; word: ShellWord }> } | null;
  /** `torchrun` (also `python -m torch.distributed.run|launch`, `tune run`), `python`, or another program. */
  program: "torchrun" | "python" | "other";
  /** The words after srun and its options (the program and its arguments). */
  words: ShellWord[];
  /**
   * An expansion among the launcher's own options (between `torchrun` or `python` and the script)
   * whose words are not known ({@link launcherWords}): what options the launcher gets is not known.
   * Set by {@link expandedLaunch}; absent: false.
   */
  unknownOptions?: boolean;
  /**
   * The launch inside `srun ... bash -c "..."` (slurmLaunch.ts `shellStringLaunch`) where a file the
   * string sources sets LOCAL_RANK (`export LOCAL_RANK=$SLURM_LOCALID`). Absent: false.
   */
  sourcedLocalRank?: boolean;
}

/** srun options that take no value (srun(1)); any other option without `=` takes the next word. */
const SRUN_SWITCHES = new Set([
  "exclusive",
  "overcommit",
  "label",
  "unbuffered",
  "pty",
  "no-kill",
  "quit-on-interrupt",
  "verbose",
  "quiet",
  "disable-status",
  "x11",
  "overlap",
  "multi-prog",
  "test-only",
  "wait-all-nodes",
  "help",
  "usage",
  "version",
  "spread-job",
  "use-min-nodes",
  "whole",
  "exact",
  "contiguous",
  "hold",
  "immediate",
  "oversubscribe",
  "reboot",
  "no-allocate",
  "preserve-env",
  "kill-on-bad-exit",
]);
const SRUN_SHORT_SWITCHES = new Set(["l", "u", "v", "Q", "K", "X", "Z", "s", "O", "E", "H", "k", "h", "V", "I"]);

/** Whether a word names a Python interpreter (`python`, `python3`, `python3.11`, `/usr/bin/python3`). */
const isPython = (w: string) => /^(?:.*\/)?python(?:[0-9.]*)$/.test(w);

/** Classifies the program at `words[0]`. */
function programOf(words: ShellWord[]): Launch["program"] {
  const first = words[0]?.value ?? "";
  const base = first.replace(/^.*\//, "");
  if (base === "torchrun") return "torchrun";
  if (base === "tune" && words[1]?.value === "run") return "torchrun";
  if (isPython(first)) {
    const m = words.findIndex((w) => w.value === "-m");
    if (m > 0 && /^torch\.distributed\.(?:run|launch)$/.test(words[m + 1]?.value ?? "")) return "torchrun";
    return "python";
  }
  return "other";
}

/** The launch a command makes (`srun [opts] prog args` or `prog args`). */
export function launchOf(c: ShellCommand): Launch {
  const words = c.words;
  if (words[0]?.value.replace(/^.*\//, "") !== "srun")
    return { command: c, srun: null, program: programOf(words), words };
  const options = new Map<string, { value: string | null; word: ShellWord }>();
  let k = 1;
  for (; k < words.length; k++) {
    const w = words[k].value;
    if (w === "--") {
      k++;
      break;
    }
    // `srun $SRUN_ARGS --jobid ... prog`: a bare expansion among the options holds more options.
    if (/^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$/.test(w) && words[k + 1]?.value.startsWith("-"))
      continue;
    if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      let value: string | null = eq < 0 ? null : w.slice(eq + 1);
      if (eq < 0 && !SRUN_SWITCHES.has(name) && k + 1 < words.length) value = words[++k].value;
      options.set(name === "tasks-per-node" ? "ntasks-per-node" : name, { value, word: words[k] });
    } else if (w.startsWith("-") && w.length >= 2) {
      const letter = w[1];
      let value: string | null = w.length > 2 ? w.slice(2).replace(/^=/, "") : null;
      if (w.length === 2 && !SRUN_SHORT_SWITCHES.has(letter) && k + 1 < words.length) value = words[++k].value;
      options.set(SHORT[letter] ?? letter, { value, word: words[k] });
    } else break;
  }
  const rest = words.slice(k);
  return { command: c, srun: { word: words[0], options }, program: programOf(rest), words: rest };
}

/** What a launch's words are expanded with: a script's {@link JobScriptFacts} or the like. */
export interface ShellVariables {
  /** Once-assigned literal strings ({@link JobScriptFacts.literals}). */
  literals: ReadonlyMap<string, string>;
  /** Once-assigned arrays of literal elements ({@link JobScriptFacts.arrays}). */
  arrays?: ReadonlyMap<string, readonly string[]>;
}

/** A whole word that is one expansion of a variable: `$X`, `${X}`, `${X[@]}`, `${X[*]}`, each also in double quotes. */
const BARE_EXPANSION = /^(")?\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(\[[@*]\])?\}|([A-Za-z_][A-Za-z0-9_]*))(")?$/;

/** The variable a word expands when the word is that expansion alone ({@link BARE_EXPANSION}); null otherwise. */
export function bareExpansion(w: ShellWord): { name: string; subscript: "@" | "*" | null; quoted: boolean } | null {
  const m = BARE_EXPANSION.exec(w.raw);
  if (!m || (m[1] === undefined) !== (m[5] === undefined)) return null;
  return { name: m[2] ?? m[4], subscript: m[3] ? (m[3][1] as "@" | "*") : null, quoted: m[1] !== undefined };
}

/**
 * The words bash makes of a word that is one expansion ({@link bareExpansion}) of a variable that
 * `vars` knows, each with the expansion's offsets (bash(1), EXPANSION: "Word Splitting", "Arrays"):
 * unquoted, the value split at blanks and newlines; `"$X"`, one word; `"${A[@]}"`, one word per
 * element; `"${A[*]}"`, the elements joined by a space; `${A[@]}` unquoted, each element split.
 * Null when the word is no such expansion, the variable is not known (assigned more than once,
 * computed, set by the caller), `$A` of an array (its first element), a value with quotes,
 * backslashes or expansions in it (bash does not remove or expand those again), a quoted value
 * with blanks (one word that no launcher reads as its options), or an unquoted one with a pattern
 * bash would match against file names.
 */
export function expandedWords(w: ShellWord, vars: ShellVariables | undefined): ShellWord[] | null {
  const e = bareExpansion(w);
  if (!e || !vars) return null;
  const array = vars.arrays?.get(e.name);
  const scalar = vars.literals.get(e.name);
  let parts: string[];
  if (array) {
    if (!e.subscript) return null;
    parts = !e.quoted ? array.flatMap(splitWords) : e.subscript === "@" ? [...array] : [array.join(" ")];
  } else if (scalar !== undefined) {
    if (e.quoted && /\s/.test(scalar)) return null;
    parts = e.quoted ? [scalar] : splitWords(scalar);
  } else return null;
  if (parts.some((p) => /["'$`\\]/.test(p) || (!e.quoted && GLOB.test(p)))) return null;
  return parts.map((p) => ({ raw: p, value: p, start: w.start, end: w.end, expands: false }));
}

/**
 * Options of the launchers (torchrun and `python -m torch.distributed.run|launch`, accelerate,
 * deepspeed, colossalai run) that take no value: an option outside this list and written without
 * `=` takes the next word as its value. torchrun's (torch/distributed/run.py `get_args_parser`,
 * read in Debian's python3-torch 1.13: `action=check_env` takes none): `--standalone`, `--module`
 * (`-m`), `--no_python`, `--run_path`, and `--virtual-local-rank` of later versions;
 * torch/distributed/launch.py adds `--use_env`.
 */
export const LAUNCHER_SWITCHES: ReadonlySet<string> = new Set([
  "--standalone",
  "--no_python",
  "--no-python",
  "--module",
  "-m",
  "--run_path",
  "--run-path",
  "--use_env",
  "--use-env",
  "--virtual-local-rank",
  "--virtual_local_rank",
  "--multi_gpu",
  "--multi-gpu",
  "--cpu",
  "--tpu",
  "--use_deepspeed",
  "--use-deepspeed",
  "--use_fsdp",
  "--use-fsdp",
  "--use_megatron_lm",
  "--use-megatron-lm",
  "--same_network",
  "--same-network",
  "--debug",
  "-q",
  "--quiet",
  "--no_local_rank",
  "--no-local-rank",
  "--no_ssh_check",
  "--no-ssh-check",
  "--no_ssh",
  "--no-ssh",
  "--force_multi",
  "--force-multi",
  "--save_pid",
  "--save-pid",
  "--enable_each_rank_log",
  "--elastic_training",
  "--bind_cores_to_rank",
  "--autotuning",
  "--dynamo_use_fullgraph",
  "--dynamo_use_dynamic",
  "--enable_cpu_affinity",
  "--rdzv_conf",
]);

/** The interpreter's options that take the next word as their value (python(1): `-W arg`, `-X opt`). */
export const PYTHON_VALUE_OPTIONS: ReadonlySet<string> = new Set(["-W", "-X", "--check-hash-based-pycs"]);

/** The words python's options end at: `-m`, `-c`, `-` (the program follows, or none), and `--`. */
const ENDS_PYTHON_OPTIONS = new Set(["--", "-m", "-c", "-"]);

/**
 * A launcher's words with the variables among its own options put in, as bash expands them
 * ({@link expandedWords}: `torchrun $DISTRIBUTED_ARGS train.py` with `DISTRIBUTED_ARGS="--nnodes 2"`
 * gives `torchrun --nnodes 2 train.py`); only an expansion in an option's place is put in (not an
 * option's value, `--nnodes $N`, which the rules resolve themselves), and only when its words are
 * options (the first starts with `-`) or there are none (an empty value).
 * An expansion there that is not known is passed over as options of unknown content (`unknown`)
 * when it is an array's (`${ARGS[@]}`) or a `.py` file follows it; otherwise it is taken for the
 * program (`torchrun $SCRIPT --lr 1`), as before.
 * @param words the program and its arguments
 * @param from index of the first word after the launcher's name (its first option)
 * @param python the options are python's own ({@link PYTHON_VALUE_OPTIONS} take a value; `-m`, `-c`,
 *   `-` end them), else a launcher's (all but {@link LAUNCHER_SWITCHES} take a value)
 * @returns the words, and the index in them of the program the launcher starts (the first word after
 *   its options; a `--`, or python's `-m`/`-c`; `words.length` when none)
 */
export function launcherWords(
  words: readonly ShellWord[],
  from: number,
  vars: ShellVariables | undefined,
  python = false,
): { words: ShellWord[]; program: number; unknown: boolean } {
  const out = [...words];
  const takesValue = (o: string) => (python ? PYTHON_VALUE_OPTIONS.has(o) : !LAUNCHER_SWITCHES.has(o));
  let unknown = false;
  let k = from;
  while (k < out.length) {
    const w = out[k];
    if (w.value === "--" || (python && ENDS_PYTHON_OPTIONS.has(w.value))) break;
    const e = bareExpansion(w);
    if (e) {
      const put = expandedWords(w, vars);
      if (put && (put.length === 0 || put[0].value.startsWith("-"))) {
        out.splice(k, 1, ...put);
        continue;
      }
      if (put || !(e.subscript || /\.py$/.test(out[k + 1]?.value ?? ""))) break;
      unknown = true;
      k++;
      continue;
    }
    if (!w.value.startsWith("-")) break;
    const next = out[k + 1]?.value;
    if (
      !w.value.includes("=") &&
      takesValue(w.value) &&
      next !== undefined &&
      !next.startsWith("-") &&
      !/\.py$/.test(next)
    )
      k++;
    k++;
  }
  return { words: out, program: k, unknown };
}

/**
 * A launch with the variables among its program's own options put in ({@link launcherWords}):
 * python's options before its script or `-m` (which may name torch's launcher, whose options are
 * then read too), torchrun's (`torchrun`, `python -m torch.distributed.run|launch`, `tune run`)
 * before its script. The program is classified again on the words so made;
 * {@link Launch.unknownOptions} says whether an expansion there is not known.
 */
export function expandedLaunch(l: Launch, vars: ShellVariables | undefined): Launch {
  if (l.program === "other" || !l.words.some((w) => w.expands)) return l;
  let words = l.words;
  let unknown = false;
  const first = words[0]?.value ?? "";
  if (isPython(first)) {
    const py = launcherWords(words, 1, vars, true);
    words = py.words;
    unknown = py.unknown;
    const m = py.program;
    if (words[m]?.value === "-m" && /^torch\.distributed\.(?:run|launch)$/.test(words[m + 1]?.value ?? "")) {
      const t = launcherWords(words, m + 2, vars);
      words = t.words;
      unknown ||= t.unknown;
    }
  } else {
    const t = launcherWords(words, first.replace(/^.*\//, "") === "tune" ? 2 : 1, vars);
    words = t.words;
    unknown = t.unknown;
  }
  if (words === l.words && !unknown) return l;
  return { ...l, words, program: programOf(words), ...(unknown ? { unknownOptions: true } : {}) };
}

/**
 * The value of `--name=v` / `--name v` among `words` (any of the spellings in `names`), with the
 * word(s) holding it. The last one wins, as with Python's argparse (torchrun's parser).
 */
export function optionValue(
  words: ShellWord[],
  names: readonly string[],
): { value: string; start: ShellWord; end: ShellWord } | null {
  let found: { value: string; start: ShellWord; end: ShellWord } | null = null;
  for (let k = 0; k < words.length; k++) {
    const w = words[k].value;
    for (const n of names) {
      if (w === n && k + 1 < words.length) found = { value: words[k + 1].value, start: words[k], end: words[k + 1] };
      else if (w.startsWith(`${n}=`)) found = { value: w.slice(n.length + 1), start: words[k], end: words[k] };
    }
  }
  return found;
}

/**
 * An assigned value whose only expansions are `$NAME` / `${NAME}` of names whose value at that point
 * of the script is known (`current`), with those values put in: bash expands a variable in an
 * assignment's value when the assignment runs (bash(1), PARAMETERS: "All values undergo ...
 * parameter and variable expansion"), so `ARGS="--nproc_per_node $GPUS"` after `GPUS=8` holds
 * `--nproc_per_node 8`. Null for anything else (`$1`, `$(cmd)`, backquotes, `${X:-d}`, an unknown name).
 */
function substituted(value: string, current: ReadonlyMap<string, string | null>): string | null {
  if (value.includes("`") || value.includes("\\")) return null;
  let unknown = false;
  const out = value.replace(/\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(.?))/g, (_m, braced, bare, other) => {
    const name: string | undefined = braced ?? bare;
    const known = name !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? current.get(name) : undefined;
    if (other !== undefined || known === undefined || known === null) unknown = true;
    return known ?? "";
  });
  return unknown ? null : out;
}

/** `$NAME` / `${NAME}` resolved through the script's literal assignments; the word itself when literal; null otherwise. */
export function resolveLiteral(value: string, literals: Map<string, string>): string | null {
  const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/.exec(value);
  if (m) return literals.get(m[1] ?? m[2]) ?? null;
  return value.includes("$") || value.includes("`") ? null : value;
}
