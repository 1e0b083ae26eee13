import type { ManifestRule, ManifestRuleContext } from "../rule";
import {
  expandsVariable,
  exportOperands,
  type ShellAssignment,
  type ShellCommand,
  type ShellWord,
} from "../manifests/shell";
import { isPython, LAUNCHER_NAME, parseLaunchLine, pythonProgram, type LaunchLine } from "../launch/commandLine";
import { STARTUP_VARIABLES } from "../frameworks";
import { childShellScript, SCHEDULER_DIRECTIVE, workingDirectory } from "../launch/child";

/**
 * Whether `c` sources a file (`source FILE`, `. FILE`) that may export anything: it runs in this
 * shell. A Python environment's activation (`source .venv/bin/activate`, conda's `source activate
 * env`) sets only its own variables (PATH, VIRTUAL_ENV, CONDA_*), and does not count.
 */
function sourcesOther(c: ShellCommand): boolean {
  const head = c.words[0]?.value;
  if (head !== "source" && head !== ".") return false;
  const file = c.words[1]?.value ?? "";
  return file !== "activate" && !file.endsWith("/activate");
}

/** `set -a` (any cluster of one-letter options holding `a`) or `set -o allexport`: every assignment is exported. */
function exportsAll(c: ShellCommand): boolean {
  if (c.words[0]?.value !== "set") return false;
  const rest = c.words.slice(1).map((w) => w.value);
  return rest.some((w, i) => /^-[a-zA-Z]*a[a-zA-Z]*$/.test(w) || (w === "-o" && rest[i + 1] === "allexport"));
}

/** The names a command exports (`export X`, `export X=1`, `declare -x X`, `typeset -gx X=1`). */
function exportedNames(c: ShellCommand): string[] {
  return (exportOperands(c) ?? []).flatMap((w) => (w.value.startsWith("-") ? [] : [w.value.split("=")[0]]));
}

/**
 * The first command after `after` that starts Python, with the launcher's word for messages; null
 * when there is none, or when that command gives `name` its own value (`NAME=... python ...`, or
 * `env -i`): the script then sets the variable per command, and the bare assignment is not meant
 * for it. Python is started by an interpreter's name (`python3.11`, `.venv/bin/python`), a
 * variable the script assigns one to (`PY=python3` then `$PY train.py`), a launcher (`torchrun`,
 * `accelerate launch`, `deepspeed`, `colossalai run`), a Python environment's runner (`uv run`,
 * `poetry run`, `pipenv run`, `conda run`: what they run is the environment's), or a GPU package's
 * console script (`llamafactory-cli`, `vllm serve`: launch/commandLine.ts PYTHON_PROGRAMS).
 */
function nextPython(
  commands: readonly ShellCommand[],
  after: number,
  name: string,
  literals: ReadonlyMap<string, string>,
  child: (words: readonly ShellWord[], at: ShellCommand) => ChildScript | null,
): { c: ShellCommand; what: string } | null {
  for (const c of commands) {
    if (c.start <= after || c.words.length === 0) continue;
    const line = parseLaunchLine(c.words, c.assignments);
    let what = startsPythonAs(line, literals);
    if (!what) {
      const run = child(line.words, c);
      if (!run) continue;
      // The script it runs sets or reads the name itself: what it gets from here is not judged.
      if (run.mentions(name)) return null;
      what = `${run.command} (which starts ${run.starts})`;
    }
    return line.inlineEnv.has(name) || line.clearsEnv ? null : { c, what };
  }
  return null;
}

/** A project shell script that a command runs as a new shell, and the first Python it starts. */
interface ChildScript {
  /** The command as messages name it: `bash scripts/train.sh`, `./run.sh`. */
  command: string;
  /** How the child starts Python (`torchrun`, `python3`), as {@link pythonStarter} names it. */
  starts: string;
  /** Whether the child sets, exports or reads the variable itself. */
  mentions(name: string): boolean;
}

/**
 * The project shell script `words` run as a child process (launch/child.ts {@link childShellScript}:
 * a literal `.sh` path, after the script's literal `cd` commands, beside this script or up to three
 * folders above it), when that script starts Python (a command {@link pythonStarter} or a launcher
 * reads as one) and is no batch job; null otherwise. A child process gets the exported environment
 * only (bash(1), ENVIRONMENT).
 */
function childScript(
  words: readonly ShellWord[],
  file: string | null,
  read: ManifestRuleContext["read"],
  cwd: string,
): ChildScript | null {
  const found = childShellScript(words, file, read, cwd);
  if (!found) return null;
  const facts = found.facts;
  for (const c of facts.commands) {
    const line = parseLaunchLine(c.words, c.assignments);
    const starts = startsPythonAs(line, facts.literals);
    if (!starts) continue;
    return {
      command: found.command,
      starts,
      mentions: (name) =>
        facts.commands.some(
          (o) =>
            o.assignments.some((a) => a.name === name) || exportedNames(o).includes(name) || expandsVariable(o, name),
        ),
    };
  }
  return null;
}

/** Runners that start a command in a Python environment (`uv run train.py`, `conda run -n env python x.py`). */
const RUNNERS: ReadonlySet<string> = new Set(["uv", "poetry", "pipenv", "conda", "micromamba", "mamba"]);

/**
 * How a launch line starts Python, for messages: its words ({@link pythonStarter}) or its launcher
 * (`torchrun`, `accelerate launch`: launch/commandLine.ts LAUNCHER_NAME); undefined when it does not.
 * GPU054 and GPU059 ask this of every command they follow to Python.
 */
export function startsPythonAs(line: LaunchLine, literals: ReadonlyMap<string, string>): string | undefined {
  return pythonStarter(line.words, literals) ?? (LAUNCHER_NAME[line.launcher] || undefined);
}

/** How a command's words start Python (`python3`, `$PY`, `uv run`), for messages; undefined when they do not. */
function pythonStarter(words: readonly ShellWord[], literals: ReadonlyMap<string, string>): string | undefined {
  const head = words[0];
  if (!head) return undefined;
  if (isPython(head.value)) return head.value.replace(/^.*\//, "");
  const variable = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(head.value)?.[1];
  const held = variable ? literals.get(variable) : undefined;
  if (held && isPython(held)) return held.replace(/^.*\//, "");
  if (RUNNERS.has(head.value) && words[1]?.value === "run") return `${head.value} run`;
  return pythonProgram(words);
}

/** Reports one bare assignment that never reaches the Python started after it. */
function reportAssignment(
  ctx: ManifestRuleContext,
  a: ShellAssignment,
  python: { c: ShellCommand; what: string },
): void {
  const src = ctx.manifest.src;
  const line = src.lineOf(python.c.start) + 1;
  const shown = a.word.raw.length > 60 ? `${a.name}=...` : a.word.raw;
  const otherwise =
    a.name === "CUDA_VISIBLE_DEVICES"
      ? "otherwise it runs on every GPU the caller's environment leaves visible"
      : "otherwise it runs without it";
  const sameLine = src.lineOf(python.c.start) === src.lineOf(a.word.start);
  ctx.report({
    range: src.range(a.word.start, a.word.end),
    message: `${shown} is assigned without export, so it is a variable of this shell: the ${python.what} on line ${line} gets it only if the caller had already exported ${a.name}; ${otherwise}. Write \`export ${a.word.raw}\`, or ${sameLine ? "drop the `&&`/`;` after it so that it prefixes the command" : "put it before the command, on the command's line"}`,
    fix: {
      title: `Export ${a.name}`,
      // Not applied by fix-all: the program then gets the value, which changes what it runs on
      // (and another rule may then judge that value: GPU045, GPU052).
      safe: false,
      edits: [{ range: src.range(a.word.start, a.word.start), newText: "export " }],
    },
  });
}

/** GPU054: a startup variable assigned in a shell script without `export`, before commands that start Python. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU054",
    name: "startup-variable-not-exported",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Shell scripts only: never a YAML manifest.
    trigger: () => false,
    docs: {
      what: "In a shell script, finds a startup variable (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `PYTORCH_CUDA_ALLOC_CONF`, `XLA_PYTHON_CLIENT_PREALLOCATE`, ...) assigned on a command of its own (`CUDA_VISIBLE_DEVICES=3` on its line, or before `&&`/`;`) without `export`, when the next command that starts Python (`python`, `torchrun`, `accelerate launch`, `deepspeed`, `colossalai run`) has no value of its own for it. The assignment makes a shell variable that programs started afterwards receive only if the caller had already exported that name; otherwise the program runs without it (for CUDA_VISIBLE_DEVICES: on every GPU).",
      follows:
        "The commands of one shell script in order: bare assignments; an `export`, `declare -x` or `typeset -x` of the name, or `set -a` / `set -o allexport`, written before the command that starts Python (then the variable is exported: silent; one written after it comes too late for that command); a later `$NAME`/`${NAME}` (the script uses the value itself, as in `CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES python ...`: silent); and an inline `NAME=... python ...` prefix on the next command that starts Python (the script sets the variable per command: silent). Python is started by an interpreter's name (`python3.11`, `.venv/bin/python`), a variable the script assigns one to (`PY=python3`, then `$PY train.py`), `torchrun`, `accelerate launch`, `deepspeed`, `colossalai run`, a Python environment's runner (`uv run`, `poetry run`, `pipenv run`, `conda run`), or a GPU package's console script that runs Python (`llamafactory-cli`, `nnUNetv2_train`, `nnUNet_train`, `vllm serve`, `lm_eval`, `yolo`, `swift sft`, `fairseq-train`, `jupyter lab`; each read in the package's setup.py or pyproject.toml); also a project shell script run as a new shell (`bash scripts/train.sh`, `sh x.sh`, `./run.sh`: a literal `.sh` path, after the script's literal `cd` commands (`cd \"$(dirname \"$0\")\"` is the script's folder; a `cd` to another expansion leaves the child unread), beside the script or up to three folders above it) that starts Python in one of those ways, unless it sets, exports or reads the name itself or is a batch job. Not followed: scripts that source this one or that it sources (a `source` or `.` between the assignment and the command keeps it silent: the sourced file may export the name), functions' local scopes, other programs (console scripts outside that list, compiled programs), and scripts run by a batch scheduler: those with its directives (`#SBATCH`, `#PBS`, `#BSUB`, `#FLUX:`, `#$`), and for CUDA_VISIBLE_DEVICES those that expand a scheduler's variable (`$SLURM_STEP_GPUS`, `$PBS_JOBID`, ...), whose jobs inherit CUDA_VISIBLE_DEVICES from the scheduler already exported. Notebooks' `!` lines are not read by this rule: each runs in a shell of its own, where a bare assignment reaches nothing (GPU014 covers `!export`).",
      why: 'Bash reference manual, "Environment": "Executed commands inherit the environment. The export and declare -x commands allow parameters and functions to be added to and deleted from the environment"; a variable the shell found in its own environment at start is "automatically marked for export", a new one is not. And "set -a: Each variable or function that is created or modified is given the export attribute". So `CUDA_VISIBLE_DEVICES=3` on its own line, in a shell whose caller had not exported the variable, changes nothing for `accelerate launch` on the next line, which then sees every GPU (ground-truth.md: with the variable unset, both GPUs were visible). A line break where a `\\` was meant (`CUDA_VISIBLE_DEVICES=0` then `python train.py ...` on the next line) has the same effect.',
      example:
        "#!/bin/bash\nCUDA_VISIBLE_DEVICES=3   # GPU054: not exported\naccelerate launch --num_processes 1 train.py\n",
      fix: "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=3\naccelerate launch --num_processes 1 train.py\n",
      whenNotToCare:
        "When the script is always run by a caller that exports the variable first (then the assignment changes the exported value), or sourced by a script that exports it: write `export` anyway, it costs nothing. The fix (not applied by fix-all) writes `export ` before the assignment: the program then gets the value, for every later command of the script, which changes the GPUs it runs on (a command line that names a device outside the new list, `--gpus 1,` after `export CUDA_VISIBLE_DEVICES=0`, then fails).",
      references: [
        'Bash Reference Manual, 3.7.4 Environment: "On invocation, the shell scans its own environment and creates a parameter for each name found, automatically marking it for export to child processes. Executed commands inherit the environment. The export and declare -x commands allow parameters and functions to be added to and deleted from the environment."',
        'Bash Reference Manual, 4.3.1 The Set Builtin: "-a Each variable or function that is created or modified is given the export attribute and marked for export to the environment of subsequent commands."',
        "ground-truth.md: each case started with CUDA_VISIBLE_DEVICES unset, and both GPUs were visible",
        "Run with GNU bash 5.2.15 (2026-12-06): `CUDA_VISIBLE_DEVICES=3` on its own line, then `python3 -c 'import os; print(os.environ.get(\"CUDA_VISIBLE_DEVICES\"))'` printed `None` from a caller without the variable, `3` from a caller that had exported it, and `3` after `set -a`",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    if (ctx.manifest.kind !== "jobscript" || !facts || SCHEDULER_DIRECTIVE.test(ctx.manifest.src.text)) return;
    const commands = facts.commands;
    const inJob = commands.some(expandsSchedulerVariable);
    const children = new Map<string, ChildScript | null>();
    const child = (words: readonly ShellWord[], at: ShellCommand): ChildScript | null => {
      if (!words.some((w) => w.value.endsWith(".sh"))) return null;
      const cwd = workingDirectory(commands, at.start, ctx.file);
      if (cwd === null) return null;
      const key = `${cwd}\n${words.map((w) => w.raw).join(" ")}`;
      if (!children.has(key)) children.set(key, childScript(words, ctx.file, ctx.read, cwd));
      return children.get(key)!;
    };
    for (const c of commands) {
      if (c.words.length > 0) continue;
      for (const a of c.assignments) {
        if (!STARTUP_VARIABLES.includes(a.name)) continue;
        // A job step's CUDA_VISIBLE_DEVICES is the scheduler's, already exported (`srun` helpers).
        if (inJob && a.name === "CUDA_VISIBLE_DEVICES") continue;
        if (commands.some((other) => other.start > c.start && expandsVariable(other, a.name))) continue;
        const python = nextPython(commands, c.start, a.name, facts.literals, child);
        if (!python) continue;
        // Exported before the command runs (an `export` or `set -a` earlier in the text than it),
        // or a sourced file between them that may export it (not followed).
        const before = commands.filter((o) => o.start < python.c.start);
        if (before.some(exportsAll) || before.some((o) => exportedNames(o).includes(a.name))) continue;
        if (before.some((o) => o.start > c.start && sourcesOther(o))) continue;
        reportAssignment(ctx, a, python);
      }
    }
  },
};

/**
 * Whether `c` expands a batch scheduler's variable (`$SLURM_STEP_GPUS`, `${PBS_JOBID}`,
 * `$LSB_JOBID`, `$FLUX_JOB_ID`, `$SGE_TASK_ID`): the script runs inside a job, whose
 * CUDA_VISIBLE_DEVICES the scheduler set and exported.
 */
function expandsSchedulerVariable(c: ShellCommand): boolean {
  const job = (raw: string) => /\$\{?(?:SLURM|PBS|LSB|FLUX|SGE)_/.test(raw);
  return c.words.some((w) => w.expands && job(w.raw)) || c.assignments.some((a) => a.word.expands && job(a.word.raw));
}
