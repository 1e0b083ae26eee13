import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { JobScriptFacts } from "../manifests/jobscript";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { hasSbatchLine } from "../manifests/prefilter";

/** The ids a loop header gives its variable, and how the header says so (for messages). */
export interface LoopIds {
  ids: number[];
  /** `for gpu in 0 1 2 3`, `for ((i = 0; i < num_workers; i++)) (num_workers=8 on line 6)`. */
  text: string;
  /** Offsets of the header in the script. */
  start: number;
  end: number;
}

const MAX_IDS = 64;
const range = (a: number, b: number): number[] | null =>
  b >= a && b - a < MAX_IDS ? Array.from({ length: b - a + 1 }, (_, k) => a + k) : null;

/**
 * A `seq` operand as a whole number: a literal, a name assigned once to a literal (`$N`, `${N}`),
 * or that name less a literal in bash arithmetic (`$((N - 1))`, `$(($N-1))`); null otherwise.
 */
function seqOperand(t: string, literals: ReadonlyMap<string, string>): number | null {
  const num = (name: string) => {
    const v = literals.get(name)?.trim();
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
  };
  if (/^\d+$/.test(t)) return Number(t);
  const name = /^\$(?:\{(\w+)\}|(\w+))$/.exec(t);
  if (name) return num(name[1] ?? name[2]);
  const arith = /^\$\(\(\s*\$?\{?(\w+)\}?\s*-\s*(\d+)\s*\)\)$/.exec(t);
  const base = arith ? num(arith[1]) : null;
  return base === null ? null : base - Number(arith![2]);
}

/**
 * `0 1 2 3`, `{0..7}`, `$(seq 0 7)`, `$(seq 8)` (seq(1): FIRST defaults to 1), `` `seq 0 3` ``,
 * `$(seq 0 $((N - 1)))` with N assigned once to a literal: the integers; null otherwise.
 */
export function listIds(list: string, literals: ReadonlyMap<string, string> = new Map()): number[] | null {
  const t = list.trim();
  if (/^\d+(?:\s+\d+)*$/.test(t)) return t.split(/\s+/).map(Number);
  const brace = /^\{(\d+)\.\.(\d+)\}$/.exec(t);
  if (brace) return range(Number(brace[1]), Number(brace[2]));
  const seq = /^(?:\$\(|`)\s*seq\s+(\$\(\([^)]*\)\)|\S+)(?:\s+(\$\(\([^)]*\)\)|\S+))?\s*(?:\)|`)$/.exec(t);
  if (!seq) return null;
  const a = seqOperand(seq[1], literals);
  const b = seq[2] === undefined ? null : seqOperand(seq[2], literals);
  if (a === null || (seq[2] !== undefined && b === null)) return null;
  return b === null ? range(1, a) : range(a, b);
}

/** A name's literal whole number: the script's once-assigned literal. */
function literalNumber(facts: JobScriptFacts, name: string): number | null {
  const v = facts.literals.get(name);
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v.trim()) : null;
}

const escape = (s: string) => s.replace(/[$]/g, "\\$");

/**
 * The innermost loop header before `at` that binds `name` and whose body `at` is in (its `do` not
 * yet closed by a `done`): `for NAME in LIST; do` with a literal list, or
 * `for ((NAME = A; NAME < B; NAME++))` (`<=` too) with literal bounds or a bound held in a variable
 * assigned once to a literal. Null when none, or when its values are not literal.
 */
export function loopIds(text: string, at: number, name: string, facts: JobScriptFacts): LoopIds | null {
  const before = text.slice(0, at);
  const forIn = new RegExp(`\\bfor\\s+${escape(name)}\\s+in\\s+([^;\\n]*?)\\s*(?:;|\\n)\\s*do\\b`, "g");
  const cStyle = new RegExp(
    `\\bfor\\s*\\(\\(\\s*${escape(name)}\\s*=\\s*(\\d+)\\s*;\\s*${escape(name)}\\s*(<=?)\\s*\\$?\\{?(\\w+)\\}?\\s*;\\s*(?:${escape(name)}\\s*\\+\\+|\\+\\+\\s*${escape(name)}|${escape(name)}\\s*\\+=\\s*1)\\s*\\)\\)\\s*(?:;|\\n)?\\s*do\\b`,
    "g",
  );
  let best: { m: RegExpExecArray; c: boolean } | null = null;
  for (const [re, c] of [
    [forIn, false],
    [cStyle, true],
  ] as const)
    for (let m = re.exec(before); m; m = re.exec(before)) if (!best || m.index > best.m.index) best = { m, c };
  if (!best) return null;
  const { m, c } = best;
  const end = m.index + m[0].length;
  // Still inside its body: the `do`/`done` words after the header leave it open.
  const words = before.slice(end).match(/(?<![\w$-])(?:do|done)(?![\w-])/g) ?? [];
  if (words.reduce((d, w) => d + (w === "do" ? 1 : -1), 0) < 0) return null;
  const header = m[0].replace(/\s*(?:;|\n)?\s*do$/, "").replace(/\s+/g, " ");
  if (!c) {
    const ids = listIds(m[1], facts.literals);
    return ids ? { ids, text: header, start: m.index, end } : null;
  }
  const from = Number(m[1]);
  const bound = /^\d+$/.test(m[3]) ? Number(m[3]) : literalNumber(facts, m[3]);
  if (bound === null) return null;
  const ids = range(from, m[2] === "<=" ? bound : bound - 1);
  const where = /^\d+$/.test(m[3]) ? "" : ` with ${m[3]}=${bound}`;
  return ids ? { ids, text: `${header}${where}`, start: m.index, end } : null;
}

/** The loop variable a CUDA_VISIBLE_DEVICES value is exactly (`$i`, `${gpu_id}`), or null. */
const loopVariable = (value: string): string | null =>
  /^\$(?:\{(\w+)\}|(\w+))$/.exec(value)?.slice(1).find(Boolean) ?? null;

/** A loop's `CUDA_VISIBLE_DEVICES=$VAR cmd` prefix or `export CUDA_VISIBLE_DEVICES=$VAR`: its word and variable. */
function loopSetting(c: ShellCommand): { word: ShellWord; name: string } | null {
  if (!c.enclosing?.includes("loop")) return null;
  const a = c.assignments.find((x) => x.name === "CUDA_VISIBLE_DEVICES");
  if (a && c.words.length) {
    const name = loopVariable(a.value);
    return name ? { word: a.word, name } : null;
  }
  if (c.words[0]?.value !== "export") return null;
  for (const w of c.words.slice(1)) {
    const eq = /^CUDA_VISIBLE_DEVICES=(.*)$/s.exec(w.value);
    const name = eq ? loopVariable(eq[1]) : null;
    if (name) return { word: w, name };
  }
  return null;
}

/**
 * Whether the script reads or chooses CUDA_VISIBLE_DEVICES itself other than through the loop's
 * settings: any `$CUDA_VISIBLE_DEVICES`/`${CUDA_VISIBLE_DEVICES...}` in its commands (comments left
 * out), a bare assignment or an export of it that is not a loop counter, or an `unset` of it. A
 * prefix of another command (`CUDA_VISIBLE_DEVICES=0 python merge.py`) is that command's only.
 */
function handlesCallerValue(text: string, facts: JobScriptFacts, settings: ReadonlySet<ShellWord>): boolean {
  // Reads anywhere outside comments: words, redirection targets (`<<< "$CUDA_VISIBLE_DEVICES"`), here-documents.
  let code = text;
  for (const c of facts.comments) code = code.slice(0, c.start) + " ".repeat(c.end - c.start) + code.slice(c.end);
  if (/\$\{?CUDA_VISIBLE_DEVICES\b/.test(code)) return true;
  for (const c of facts.commands) {
    // Its own choice for the whole script: a bare assignment or an export (a prefix of another command is that command's).
    const own = c.words.length
      ? c.words[0].value === "export"
        ? c.words.slice(1)
        : []
      : c.assignments.map((a) => a.word);
    if (own.some((w) => !settings.has(w) && /^CUDA_VISIBLE_DEVICES=/.test(w.value))) return true;
    if (c.words[0]?.value === "unset" && c.words.some((w) => w.value === "CUDA_VISIBLE_DEVICES")) return true;
  }
  return false;
}

const idsText = (ids: number[]): string =>
  ids.every((v, k) => k === 0 || v === ids[k - 1] + 1) && ids.length > 2
    ? `${ids[0]}..${ids[ids.length - 1]}`
    : ids.join(", ");

/** GPU071: a shell loop gives each process a hard-coded GPU id as CUDA_VISIBLE_DEVICES and never reads the caller's. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU071",
    name: "loop-hard-coded-visible-devices",
    // Information: on 12 public scripts 3 findings mattered (general-purpose scripts), 9 were loops
    // written for the author's own machine; a warning only where the machine lacks one of the ids.
    severity: "information",
    fixable: false,
    preview: true,
    // Shell scripts only (never YAML).
    trigger: () => false,
    docs: {
      what: "In a shell script without `#SBATCH` lines, reports `CUDA_VISIBLE_DEVICES=$VAR` (a prefix of a command, or an `export`) inside a loop whose variable runs over hard-coded GPU ids (`for gpu in 0 1 2 3`, `{0..7}`, `$(seq 0 7)`, or `for ((i = 0; i < N; i++))` with a literal N or one assigned once to a literal), when the script never reads the CUDA_VISIBLE_DEVICES it was started with: it starts one process per hard-coded id whatever GPUs its caller chose, and on a machine with fewer GPUs than the ids the processes given a missing id see no GPU. With a known machine (`--gpus`, the inventory), the ids it lacks are named.",
      follows:
        "The loop headers of the script's text (`for NAME in LIST; do`, `for ((NAME = A; NAME < B; NAME++))`; nested loops by their `do`/`done` words), the script's once-assigned literals for a bound, and every command for a read of CUDA_VISIBLE_DEVICES. Not followed: `while` loops, counters computed in the body (`gpu=$((i % 4))`, `${GPUS[$i]}`: an id taken from a list the script may have built from the caller's value), arrays, sourced files and callers. Silent in Slurm job scripts (the job's GPUs are GPU021's and GPU063's business), when the script reads CUDA_VISIBLE_DEVICES anywhere, chooses it for the whole script (a bare assignment or an `export` other than the loop's) or unsets it (a prefix of another command, `CUDA_VISIBLE_DEVICES=0 python merge.py`, is that command's only and does not silence it), and for a loop over fewer than two ids.",
      why: "A child's CUDA_VISIBLE_DEVICES replaces the one its parent was given: a script that writes the loop counter into it discards the caller's choice (`CUDA_VISIBLE_DEVICES=2,3 ./launch.sh` still uses GPUs 0..7). The ids are the machine's, and CUDA stops parsing CUDA_VISIBLE_DEVICES at the first id that does not exist, so a process given a missing id sees no GPU at all (measured, ground-truth.md, 'How CUDA parses CUDA_VISIBLE_DEVICES'). deepseek-ai/DeepSpec#36 (2026-07-01): a launcher starting one SGLang server per GPU over a hard-coded eight ignored the caller's CUDA_VISIBLE_DEVICES=2,3.",
      example:
        "#!/bin/bash\nfor gpu in 0 1 2 3; do\n  CUDA_VISIBLE_DEVICES=$gpu python worker.py --shard $gpu &  # GPU071\ndone\nwait\n",
      fix: '#!/bin/bash\nIFS=, read -r -a gpus <<< "${CUDA_VISIBLE_DEVICES:-0,1,2,3}"\nfor shard in "${!gpus[@]}"; do\n  CUDA_VISIBLE_DEVICES=${gpus[$shard]} python worker.py --shard $shard &\ndone\nwait\n',
      whenNotToCare:
        "When the script is only ever run on one machine whose GPUs are all meant (a fixed eight-GPU server) and nobody starts it with CUDA_VISIBLE_DEVICES set. A preview rule: on public scripts most such loops run on the author's machine as intended; the finding is about the script's portability and its caller's choice.",
      references: [
        'ground-truth.md: rows "0,5,1" and "1,7,0" (parsing stops at the first id that does not exist)',
        "deepseek-ai/DeepSpec#36 (2026-07-01): hard-coded eight SGLang workers, CUDA_VISIBLE_DEVICES=$gpu_id; the fix (#37/#38) reads ${CUDA_VISIBLE_DEVICES:-0,...,7}",
        "bash(1), Looping Constructs (`for name in word`, `for (( expr1 ; expr2 ; expr3 ))`), Brace Expansion; seq(1): FIRST defaults to 1",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    const text = ctx.manifest.src.text;
    if (ctx.manifest.kind !== "jobscript" || !facts || !text.includes("CUDA_VISIBLE_DEVICES")) return;
    if (hasSbatchLine(text)) return;
    const found = facts.commands.flatMap((c) => {
      const s = loopSetting(c);
      return s ? [{ c, ...s }] : [];
    });
    if (!found.length || handlesCallerValue(text, facts, new Set(found.map((f) => f.word)))) return;
    for (const f of found) {
      const loop = loopIds(text, f.c.start, f.name, facts);
      if (loop && loop.ids.length >= 2) report(ctx, f.word, loop);
    }
  },
};

function report(ctx: ManifestRuleContext, word: ShellWord, loop: LoopIds): void {
  const src = ctx.manifest.src;
  const n = ctx.machine.gpuCount;
  const missing = n !== null ? loop.ids.filter((i) => i >= n) : [];
  const k = loop.ids.length;
  const here = missing.length
    ? `; this machine has ${n} GPU${n === 1 ? "" : "s"}, so the process${missing.length > 1 ? "es" : ""} given ${idsText(missing)} see${missing.length > 1 ? "" : "s"} no GPU (CUDA stops parsing at an id that does not exist)`
    : n === null
      ? "; on a machine with fewer GPUs, a process given an id it lacks sees no GPU (CUDA stops parsing at an id that does not exist)"
      : "";
  ctx.report({
    range: src.range(word.start, word.end),
    preview: true,
    ...(missing.length ? { severity: "warning" as const } : {}),
    message: `${word.value} gives each process of the loop \`${loop.text}\` (line ${src.lineOf(loop.start) + 1}) one of the hard-coded GPU ids ${idsText(loop.ids)}, and the script never reads the CUDA_VISIBLE_DEVICES it was started with: a caller that picks GPUs (${ctx.file ? `CUDA_VISIBLE_DEVICES=2,3 bash ${ctx.file.replace(/^.*\//, "")}` : "CUDA_VISIBLE_DEVICES=2,3 before the script"}) still gets ${k} processes on GPUs ${idsText(loop.ids)}${here}; take the ids from the caller's value, e.g. IFS=, read -r -a gpus <<< "\${CUDA_VISIBLE_DEVICES:-${loop.ids.join(",")}}"`,
    related: [{ range: src.range(loop.start, loop.end), message: "the hard-coded ids" }],
  });
}
