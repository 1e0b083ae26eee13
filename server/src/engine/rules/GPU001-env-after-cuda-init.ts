import type { Rule } from "../rule";
import { envWrites } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { stateBefore, statesInFunction } from "../python/timeline";
import { nodeRange, type EnvWriteEvent, type InitEvent } from "../python/model";
import { moveWriteFix } from "./shared/moveWrite";
import { calleePath } from "./shared/py";
import type { RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { isWordCode } from "../python/lineStructure";

const EXEC_SUFFIXES = ["l", "le", "lp", "lpe", "v", "ve", "vp", "vpe"];
/** Calls that start a child process, which inherits os.environ (Python's subprocess, os, asyncio and multiprocessing documentation; torch.multiprocessing). */
const CHILD_PROCESS: ReadonlySet<string> = new Set([
  ...["Popen", "run", "call", "check_call", "check_output"].map((f) => `subprocess.${f}`),
  "os.system", "os.popen", ...EXEC_SUFFIXES.flatMap((s) => [`os.exec${s}`, `os.spawn${s}`]), "os.posix_spawn", "os.posix_spawnp",
  "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
  "multiprocessing.Process", "multiprocessing.context.Process", "multiprocessing.get_context",
  "torch.multiprocessing.spawn", "torch.multiprocessing.start_processes", "torch.multiprocessing.Process",
]);
/** The last name of each {@link CHILD_PROCESS} path (`Popen`, `run`, `system`, ...). */
const CHILD_PROCESS_NAMES: readonly string[] = [...new Set([...CHILD_PROCESS].map((p) => p.slice(p.lastIndexOf(".") + 1)))];

/**
 * The words one of which the text of every call that starts a child process ({@link CHILD_PROCESS})
 * contains, as a whole identifier: its callee resolves to one of those paths, so it is written with
 * the path's last name or with a local name resolving to the whole path (`from subprocess import
 * Popen as P`, `launch = subprocess.Popen`).
 */
function childProcessWords(ctx: RuleContext): string[] {
  return [...CHILD_PROCESS_NAMES, ...ctx.model.namesResolvingTo((p) => CHILD_PROCESS.has(p))];
}

/**
 * The offset of the last whole-identifier occurrence of one of `words` in `text[start, end)`, or
 * -1. Only that range is searched (a block's own text: the writes of many small blocks would
 * otherwise each search the rest of the file).
 */
function lastWordIn(text: string, start: number, end: number, words: readonly string[]): number {
  const part = start === 0 && end === text.length ? text : text.slice(start, end);
  let last = -1;
  for (const w of words) {
    for (let i = part.lastIndexOf(w); i >= 0 && start + i > last; i = i > 0 ? part.lastIndexOf(w, i - 1) : -1) {
      const at = start + i;
      if ((at === 0 || !isWordCode(text.charCodeAt(at - 1))) && !isWordCode(text.charCodeAt(at + w.length))) { last = at; break; }
    }
  }
  return last;
}

/**
 * The start offsets of the module's calls that start a child process, in order: the calls of the
 * top-level statements that mention one of `words`, resolved.
 */
function childProcessStarts(ctx: RuleContext, words: readonly string[]): number[] {
  return ctx.model.nodesMentioning("call", words, true).filter((c) => CHILD_PROCESS.has(calleePath(ctx.model, c) ?? "")).map((c) => c.startIndex).sort((x, y) => x - y);
}

/**
 * What {@link startsChildAfter} finds once per lint: the words, the module's child-process starts,
 * and per block (its node id; -1 for the module) the offset of its last child-process word.
 */
interface ChildProcessFacts { words?: string[]; starts?: number[]; lastWord: Map<number, number> }

/**
 * Whether a statement after `stmt` in its block starts a child process: a call of
 * {@link CHILD_PROCESS} after `stmt` and inside its block (the whole module for a top-level
 * statement, whose parent is its chunk's root: python/moduleTrees.ts). First a text test: such a
 * call's text holds one of {@link childProcessWords}, so the block's last such word (found once per
 * block and lint) must come after `stmt`; where it does, the module's starts, found once per lint
 * ({@link childProcessStarts}), by binary search. Issue 18 item 3: searching the rest of the block
 * for every write made a file with many writes quadratic (800 writes 4.7 s); a flat 5,000-line
 * script spent 40 ms of each keystroke's lint resolving every call after a late write.
 */
function startsChildAfter(ctx: RuleContext, stmt: SyntaxNode, facts: ChildProcessFacts): boolean {
  const block = stmt.parent;
  if (!block) return false;
  const text = ctx.model.text;
  const from = stmt.endIndex, end = block.type === "module" ? text.length : block.endIndex;
  // Only the words the text holds (the probe answers from the last version in the editor).
  const words = (facts.words ??= childProcessWords(ctx).filter((w) => ctx.hasWord?.(w) ?? true));
  if (!words.length) return false;
  const key = block.type === "module" ? -1 : block.id;
  let last = facts.lastWord.get(key);
  if (last === undefined) { last = lastWordIn(text, key === -1 ? 0 : block.startIndex, end, words); facts.lastWord.set(key, last); }
  if (last < from) return false;
  const starts = (facts.starts ??= childProcessStarts(ctx, words));
  let lo = 0, hi = starts.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (starts[mid] < from) lo = mid + 1; else hi = mid; }
  return lo < starts.length && starts[lo] < end;
}

/** GPU001: a startup variable written after a CUDA-initialising call of a framework that reads it. */
export const rule: Rule = {
  meta: {
    code: "GPU001",
    name: "env-after-cuda-init",
    severity: "error",
    fixable: true,
    docs: {
      what: "Finds a CUDA startup variable (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `PYTORCH_CUDA_ALLOC_CONF`, `XLA_PYTHON_CLIENT_PREALLOCATE`, ...) written after a call that already initialised CUDA in a framework that reads it: `torch.cuda.is_available()`, a tensor on CUDA, `jax.devices()`, `accelerate.Accelerator()`, a TensorFlow op, or the import of a module that initialises CUDA on import.",
      why: "These variables are read once, when the CUDA driver or the framework initialises. Measured on 2 x H200 with torch 2.11 (ground-truth.md): after `torch.cuda.is_available()`, setting `CUDA_VISIBLE_DEVICES=\"1\"` has no effect — the program still runs on physical GPU 0, while `device_count()` now reports 1: a silent mismatch. After `jax.devices()`, `XLA_PYTHON_CLIENT_PREALLOCATE=false` is ignored and JAX preallocates 75% of the GPU (107,918 MiB of 143,771 MiB). Each variable freezes at its own moment: `PYTORCH_CUDA_ALLOC_CONF` survives `is_available()` but not the first allocation.",
      example: "import os\nimport torch\n\nif torch.cuda.is_available():\n    print(\"cuda ok\")\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"  # GPU001: too late, still GPU 0\n",
      fix: "import os\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\nimport torch\n\nif torch.cuda.is_available():\n    print(\"cuda ok\")\n",
      whenNotToCare: "Never in a long-running process. In a notebook, the fix also needs a kernel restart: the kernel keeps its initialised CUDA state.",
      references: [
        "ground-truth.md: 'When does setting os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\" still take effect?' rows `torch.cuda.is_available()`, `accelerate.Accelerator()`, `jax.devices()`",
        "ground-truth.md: 'Each variable freezes at its own moment'",
        "docs/init-catalogue.md: the libraries that initialise CUDA when imported, each measured or read at a named commit and line; the message quotes the entry",
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES is read at CUDA initialisation",
      ],
    },
  },
  check(ctx) {
    const childFacts: ChildProcessFacts = { lastWord: new Map() };
    const report = (w: EnvWriteEvent, frozenBy: InitEvent, where: string, severity?: "warning") => {
      if (w.statement && startsChildAfter(ctx, w.statement, childFacts)) return;
      const line = ctx.where(frozenBy.node.startPosition.row);
      ctx.report({
        range: w.range,
        ...(severity ? { severity } : {}),
        message: `${w.variable} is set after CUDA was initialised by ${frozenBy.what} (${line}${frozenBy.note ? `: ${frozenBy.note}` : ""})${where}: it has no effect in this process${w.variable === "CUDA_VISIBLE_DEVICES" ? " (the program stays on the GPUs it already saw)" : ""}`,
        related: [{ range: nodeRange(frozenBy.node), message: `CUDA initialised here by ${frozenBy.what}` }],
        fix: moveWriteFix(ctx, w) ?? undefined,
      });
    };
    for (const w of envWrites(ctx.model)) {
      if (!STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv") continue;
      const { frozenBy } = stateBefore(ctx.model, w);
      if (frozenBy) report(w, frozenBy, "");
    }
    // Functions the module never calls (tests, hooks, callbacks) run after the module's own code:
    // a write there is checked against the module's timeline and the function's own events.
    // A method of a class the module never calls runs after the object's constructor (its timeline
    // starts with `__init__`): "whenever `Trainer.fit()` runs". A write reached from two timelines
    // (a helper method called by another) is reported once, from the first.
    const reported = new Set<string>();
    for (const fn of ctx.model.functionTimelines) {
      const stateOf = statesInFunction(ctx.model, fn);
      for (const w of fn.events) {
        if (w.kind !== "envWrite" || !STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv") continue;
        const own = fn.def.childForFieldName("name")?.text ?? "";
        const name = fn.owner ? `${fn.owner}.${own}` : own;
        const { frozenBy } = stateOf(w);
        if (!frozenBy) continue;
        const key = `${w.range.start.line}:${w.range.start.character}:${w.variable}`;
        if (reported.has(key)) continue;
        const inside = fn.events.includes(frozenBy);
        // Only a real initialising call: a library merely imported at module level (eager-init
        // modules, a default list) does not make a helper's write certainly late. On the ecosystem
        // corpus, DeepSpeed's and gpt-neox's test helpers set CUDA_VISIBLE_DEVICES after
        // `import deepspeed` for the worker processes they start next.
        if (!inside && /import/.test(frozenBy.node.type)) continue;
        // Initialised in the function itself, then written: certain (error). Initialised by the
        // module above: the write is late whenever the function runs in this process, but a helper
        // may run it only to prepare a child's environment (warning).
        reported.add(key);
        report(w, frozenBy, ` whenever \`${name}()\` runs`, inside ? undefined : "warning");
      }
    }
  },
};
