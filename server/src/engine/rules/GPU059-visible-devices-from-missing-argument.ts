import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { Fix } from "../types";
import { exportOperands, type ShellCommand, type ShellWord } from "../manifests/shell";
import { parseLaunchLine } from "../launch/commandLine";
import { startsPythonAs } from "./GPU054-startup-variable-not-exported";

const CVD = "CUDA_VISIBLE_DEVICES";

/** The number of a positional parameter written alone (`$1`, `${1}`, `${12}`, the quotes already removed), or null. */
function positional(value: string): number | null {
  const m = /^\$(?:([1-9])|\{([1-9][0-9]*)\})$/.exec(value);
  return m ? Number(m[1] ?? m[2]) : null;
}

/**
 * Whether a command is written where `$1` is the script's argument and runs whenever the script
 * does: not in a function (`$1` is the function's own), and not in an `if` or `case` branch (a
 * value chosen there is the script's choice). A loop, a `{ }` group or a subshell sees the
 * script's arguments.
 */
const atScriptLevel = (c: ShellCommand) => !c.enclosing?.some((k) => k === "function" || k === "if" || k === "case");

/** A shell variable that holds a positional parameter: assigned once in the script, outside functions and branches (`GPUS=$1`). */
interface Alias {
  name: string;
  n: number;
  word: ShellWord;
}

/** Where CUDA_VISIBLE_DEVICES takes argument `n` of the script: the `NAME=value` word, and the alias it goes through. */
interface FromArgument {
  n: number;
  word: ShellWord;
  via: Alias | null;
}

/** The words a command assigns (`X=...` before it or alone, and `export`/`declare`/`local`/`readonly X=...`), with names. */
function assignedWords(c: ShellCommand): Array<{ name: string; value: string; word: ShellWord }> {
  const out = c.assignments.map((a) => ({ name: a.name, value: a.value, word: a.word }));
  const head = c.words[0]?.value;
  const declares = exportOperands(c) ?? (head === "local" || head === "readonly" ? c.words.slice(1) : []);
  for (const w of declares) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.value);
    if (m) out.push({ name: m[1], value: w.value.slice(m[0].length), word: w });
  }
  // `read X`, `getopts spec X`: assigned at run time
  if (head === "read" || head === "getopts" || head === "mapfile")
    for (const w of c.words.slice(1))
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.value)) out.push({ name: w.value, value: "", word: w });
  return out;
}

/** Variables assigned exactly once in the script, outside functions and branches, to a positional parameter alone (`GPUS=$1`, `export GPUS=$1`). */
function aliasesOf(commands: readonly ShellCommand[]): Map<string, Alias> {
  const counts = new Map<string, number>();
  const found = new Map<string, Alias>();
  for (const c of commands)
    for (const a of assignedWords(c)) {
      counts.set(a.name, (counts.get(a.name) ?? 0) + 1);
      const own = c.words.length === 0 || exportOperands(c) !== null; // not a `GPUS=$1 cmd` prefix
      const n = a.word.expands && own && atScriptLevel(c) ? positional(a.value) : null;
      if (n !== null) found.set(a.name, { name: a.name, n, word: a.word });
    }
  return new Map([...found].filter(([name]) => counts.get(name) === 1 && name !== CVD));
}

/** The argument a CUDA_VISIBLE_DEVICES value takes: `$1` itself, or `$GPUS` / `${GPUS}` of an alias. */
function fromArgument(word: ShellWord, value: string, aliases: ReadonlyMap<string, Alias>): FromArgument | null {
  if (!word.expands) return null;
  const n = positional(value);
  if (n !== null) return { n, word, via: null };
  const name = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/.exec(value);
  const alias = name ? aliases.get(name[1] ?? name[2]) : undefined;
  return alias ? { n: alias.n, word, via: alias } : null;
}

/** Whether a word expands positional parameter `n` or variable `name` in any form (`$1`, `"${1:-x}"`, `${GPUS}`). */
function expandsOf(w: ShellWord, n: number, name: string | null): boolean {
  if (!w.expands) return false;
  const arg = n < 10 ? `(?:${n}(?![0-9])|\\{${n}[^0-9])` : `\\{${n}[^0-9]`;
  return (
    new RegExp(`\\$${arg}`).test(w.raw) || (name !== null && new RegExp(`\\$\\{?${name}(?![A-Za-z0-9_])`).test(w.raw))
  );
}

/**
 * Whether the script checks the argument before `before`, or cannot run on without it: a test
 * (`[`, `[[`, `test`) of that argument or of the alias (`[ -z "$1" ]`, `if [ -n "$GPUS" ]`), any
 * `$#`, a `${1?...}` / `${1:?...}` (also `: "${1:?}"`), `set -u` / `set -o nounset` (also on the
 * `#!` line), `set --` (new positional parameters), `shift` or `getopts` (an option parser: the
 * arguments are not where the script was called with them).
 */
function guarded(text: string, commands: readonly ShellCommand[], before: number, from: FromArgument): boolean {
  if (/^#!.*\s-[a-zA-Z]*u/.test(text)) return true;
  const n = from.n;
  const name = from.via?.name ?? null;
  const required = new RegExp(`\\$\\{(?:${n}${name ? `|${name}` : ""}):?\\?`);
  for (const c of commands) {
    if (c.start >= before) break;
    const head = c.words[0]?.value ?? "";
    const words = [...c.words, ...c.assignments.map((a) => a.word)];
    if (words.some((w) => w.expands && (/\$#|\$\{#\}/.test(w.raw) || required.test(w.raw)))) return true;
    if ((head === "[" || head === "[[" || head === "test") && c.words.some((w) => expandsOf(w, n, name))) return true;
    if (head === "shift" || head === "getopts") return true;
    if (head === "set") {
      const opts = c.words.slice(1).map((w) => w.value);
      if (
        opts.some((o, i) => o === "--" || /^-[a-zA-Z]*u[a-zA-Z]*$/.test(o) || (o === "-o" && opts[i + 1] === "nounset"))
      )
        return true;
    }
  }
  return false;
}

/** How a command starts Python (`python3`, `torchrun`, `accelerate launch`), for messages; null when it does not. */
function startsPython(c: ShellCommand, literals: ReadonlyMap<string, string>): string | null {
  const line = parseLaunchLine(c.words, c.assignments);
  if (line.underSrun) return null; // srun gives a GPU step its own CUDA_VISIBLE_DEVICES
  return startsPythonAs(line, literals) ?? null;
}

/** The fix: `${1?...}` where the argument is read, so a run without it stops with a message. */
function requireFix(ctx: ManifestRuleContext, from: FromArgument): Fix | undefined {
  const word = from.via?.word ?? from.word;
  const eq = word.raw.indexOf("=");
  const m = /\$(?:\{[0-9]+\}|[0-9])/.exec(word.raw.slice(eq + 1));
  if (eq < 0 || !m) return undefined;
  const at = word.start + eq + 1 + m.index;
  const n = from.n;
  return {
    title: `Fail with a message when argument ${n} is missing (\${${n}?...})`,
    // Only a run without the argument changes: it stops there instead of hiding every GPU, and an
    // argument that is given, even empty, expands as before (`?` without `:` tests unset only). Not
    // applied by fix-all all the same: a caller that leaves the argument out on purpose (a smoke
    // run on a machine without GPUs, which then runs on the CPU) would stop.
    safe: false,
    edits: [
      {
        range: ctx.manifest.src.range(at, at + m[0].length),
        newText: `\${${n}?argument ${n} missing: the GPU ids for ${CVD}}`,
      },
    ],
  };
}

function report(ctx: ManifestRuleContext, from: FromArgument, python: { c: ShellCommand; what: string }): void {
  const src = ctx.manifest.src;
  const n = from.n;
  const line = src.lineOf(python.c.start) + 1;
  const via = from.via ? ` through ${from.via.word.raw} (line ${src.lineOf(from.via.word.start) + 1})` : "";
  const fix = requireFix(ctx, from);
  ctx.report({
    range: src.range(from.word.start, from.word.end),
    message: `${from.word.raw} takes argument ${n} of the script${via}, and nothing checks that it was given: run without it, ${CVD} is set to an empty string, which hides every GPU from the ${python.what} on line ${line} (CUDA finds no device). Give a default (\${${n}:-0}) or stop when it is missing (\${${n}?...}, or a test of $#)`,
    ...(from.via
      ? { related: [{ range: src.range(from.via.word.start, from.via.word.end), message: `argument ${n}` }] }
      : {}),
    ...(fix ? { fix } : {}),
  });
}

/** GPU059: CUDA_VISIBLE_DEVICES set from a positional parameter that nothing checks (`export CUDA_VISIBLE_DEVICES=$1`). */
export const rule: ManifestRule = {
  meta: {
    code: "GPU059",
    name: "visible-devices-from-missing-argument",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Shell scripts only: never a YAML manifest.
    trigger: () => false,
    docs: {
      what: 'In a shell script (a Slurm job script too), finds CUDA_VISIBLE_DEVICES set from one of the script\'s arguments with no default and no check, before a command that starts Python: `export CUDA_VISIBLE_DEVICES=$1`, `CUDA_VISIBLE_DEVICES=${2} python train.py`, `"$1"`, or a variable that holds the argument (`GPUS=$1`, then `CUDA_VISIBLE_DEVICES=${GPUS} python ...`). Run without that argument, the variable is set to an empty string, and Python sees no GPU.',
      follows:
        'The commands of one shell script in order: `export`/`declare -x` of CUDA_VISIBLE_DEVICES, a bare assignment after the name was exported or followed by `export CUDA_VISIBLE_DEVICES`, and a `CUDA_VISIBLE_DEVICES=... cmd` prefix, outside functions and `if`/`case` branches (loops, `{ }` groups and subshells see the script\'s arguments), whose value is a positional parameter alone (`$1`, `${1}`, `"$1"`) or a variable assigned once, there, to one (`GPUS=$1`); then the next command that starts Python (an interpreter, `torchrun`, `accelerate launch`, `deepspeed`, a Python environment\'s runner, a GPU package\'s console script), at any depth, unless another value is set first. Silent where the script checks the argument or cannot go on without it before that command: a test of it (`[ -z "$1" ]`, `if [ -n "$GPUS" ]`, `[[ $1 ]]`), any `$#` (`[ $# -lt 1 ]`, `(( $# ))`), `${1?...}` or `${1:?...}` (also `: "${1:?}"`), `set -u` / `set -o nounset` (also `#!/bin/bash -eu`: bash then stops at the unset `$1`), `set --`, `shift` or `getopts` (an option parser). Silent too for a default (`${1:-0}`, `${1-}`), and for settings inside a function (`$1` is the function\'s argument) or an `if`/`case` branch, and for commands under `srun`; and in a Slurm job script that asks for GPUs (GPU021 reports any CUDA_VISIBLE_DEVICES it sets). Not followed: scripts that run or source this one, and what a caller always passes.',
      why: "A positional parameter that was not given expands to an empty string (bash(1), Positional Parameters; no error unless `set -u`), so `export CUDA_VISIBLE_DEVICES=$1` run without arguments exports `CUDA_VISIBLE_DEVICES=` (run here with GNU bash 5.2.15: Python's `os.environ` held `''`). CUDA reads an empty CUDA_VISIBLE_DEVICES as no device at all (ground-truth.md, 'How CUDA parses CUDA_VISIBLE_DEVICES', measured on 2 x H200: `\"\"` leaves no GPU visible and `is_available()` is False; docs/ground-truth.md, 1 x H200: `\"\"` gives `device_count()` 0 and the allocation fails). The program then fails with 'No CUDA GPUs are available' at its first `set_device` or `.cuda()` (jiaw-z/CoR-GS#23), or, if it falls back to the CPU, trains there without an error.",
      example:
        '#!/bin/bash\n# usage: bash run.sh <gpu_id> <scene>\nexport CUDA_VISIBLE_DEVICES=$1   # GPU059: empty when run without arguments\npython train.py --source_path "$2"\n',
      fix: '#!/bin/bash\n# usage: bash run.sh [gpu_id] <scene>   (gpu_id defaults to 0)\nexport CUDA_VISIBLE_DEVICES=${1:-0}\npython train.py --source_path "$2"\n',
      whenNotToCare:
        'When every caller passes the argument (a driver script, a scheduler\'s array job that always gives it): the finding is then about a run that never happens. It was a preview rule until its precision was measured on public scripts (2026-12-07): of 52 scripts found with the code search that set the variable from an argument, it reported 29 places in 26 scripts, all true (run without that argument, the variable is set empty before Python starts; the reporter of jiaw-z/CoR-GS#23 did just that), and was rightly silent on 22 (a check of `$#` or of the value, `set -u`, the argument read in a function, a default); the 37 code bases of the ecosystem check hold no such assignment, so it adds nothing there. A run that means to hide the GPUs passes an empty argument (`bash run.sh ""`), which the quick fix keeps: it writes `${1?...}`, which stops a run without the argument with a message and leaves every given value, empty or not, as it was (bash(1): `${parameter?word}` tests only for unset). The fix is not applied by fix-all (`--unsafe-fixes` applies it): a caller that leaves the argument out on purpose, such as a smoke run on a machine without GPUs that then runs on the CPU, would stop there.',
      references: [
        'ground-truth.md, "How CUDA parses CUDA_VISIBLE_DEVICES" (2 GPUs): `""`, `"-1"`: no GPU visible, `is_available()` is False',
        'docs/ground-truth.md, "CUDA_VISIBLE_DEVICES values" (1 x H200, torch 2.11): `""`: device_count() 0, allocation fails',
        'bash(1), Parameter Expansion: "${parameter:?word} Display Error if Null or Unset ... the shell, if it is not interactive, exits"; without the colon only an unset parameter is tested. Run with GNU bash 5.2.15 and dash: `export CUDA_VISIBLE_DEVICES=$1` without arguments gave Python `\'\'`; `export CUDA_VISIBLE_DEVICES=${1?msg}` stopped the script with the message (exit status 1 in bash, 2 in dash), and with `""` given exported the empty string as before',
        "jiaw-z/CoR-GS#23 (2024-08-01): run_360.sh's `export CUDA_VISIBLE_DEVICES=$1`, run without arguments, ended in 'No CUDA GPUs are available'",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    // A Slurm job that asks for GPUs: GPU021 reports any CUDA_VISIBLE_DEVICES it sets.
    if (ctx.manifest.kind !== "jobscript" || !facts || facts.request.asksForGpus) return;
    const text = ctx.manifest.src.text;
    if (!text.includes(CVD) || !text.includes("$")) return;
    const commands = facts.commands;
    const aliases = aliasesOf(commands);
    // The exported value from an argument in force, and a bare one that an `export NAME` may export.
    let pending: FromArgument | null = null;
    let bare: FromArgument | null = null;
    let exported = false;
    // A variable that holds the argument is reported once, at its first use (the fix goes on it).
    const seen = new Set<string>();
    const check = (from: FromArgument, python: { c: ShellCommand; what: string }) => {
      if (from.via && seen.has(from.via.name)) return;
      if (guarded(text, commands, python.c.start, from)) return;
      if (from.via) seen.add(from.via.name);
      report(ctx, from, python);
    };
    for (const c of commands) {
      const top = atScriptLevel(c);
      const python = c.words.length ? startsPython(c, facts.literals) : null;
      const inline = c.words.length ? c.assignments.find((a) => a.name === CVD) : undefined;
      if (python && inline) {
        const from = top ? fromArgument(inline.word, inline.value, aliases) : null;
        if (from) check(from, { c, what: python });
        continue;
      }
      if (python && pending) {
        if (!parseLaunchLine(c.words, c.assignments).clearsEnv) check(pending, { c, what: python });
        pending = null;
        continue;
      }
      if (c.words[0]?.value === "unset" && c.words.some((w) => w.value === CVD)) pending = bare = null;
      const operands = exportOperands(c) ?? [];
      if (c.words.length === 0 || operands.length)
        for (const a of assignedWords(c).filter((x) => x.name === CVD)) {
          const from = top ? fromArgument(a.word, a.value, aliases) : null;
          const isExport = c.words.length > 0 || exported;
          if (isExport) pending = from;
          else bare = from;
          if (c.words.length > 0) exported = true;
        }
      if (operands.some((w) => w.value === CVD)) {
        exported = true;
        if (bare) pending = bare;
        bare = null;
      }
    }
  },
};
