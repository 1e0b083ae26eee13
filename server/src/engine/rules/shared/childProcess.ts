/**
 * Whether a statement is followed, in its block, by a call that starts a child process (which
 * inherits os.environ): an environment write there may be meant for the child, not for this
 * process. Shared by the rules that report a write as having no effect (GPU001, GPU041).
 */
import type { RuleContext } from "../../rule";
import type { SyntaxNode } from "../../python/parser";
import { isWordCode } from "../../../../../common/src/python/lineStructure";
import { calleePath } from "./py";

const EXEC_SUFFIXES = ["l", "le", "lp", "lpe", "v", "ve", "vp", "vpe"];
/** The subprocess functions that start a child with the parent's environment unless `env=` is given (Python's subprocess documentation). */
export const SUBPROCESS_STARTS: ReadonlySet<string> = new Set(
  ["Popen", "run", "call", "check_call", "check_output"].map((f) => `subprocess.${f}`),
);
/** Calls that start a child process, which inherits os.environ (Python's subprocess, os, asyncio and multiprocessing documentation; torch.multiprocessing). */
const CHILD_PROCESS: ReadonlySet<string> = new Set([
  ...SUBPROCESS_STARTS,
  "os.system",
  "os.popen",
  ...EXEC_SUFFIXES.flatMap((s) => [`os.exec${s}`, `os.spawn${s}`]),
  "os.posix_spawn",
  "os.posix_spawnp",
  "asyncio.create_subprocess_exec",
  "asyncio.create_subprocess_shell",
  "multiprocessing.Process",
  "multiprocessing.context.Process",
  "multiprocessing.get_context",
  "torch.multiprocessing.spawn",
  "torch.multiprocessing.start_processes",
  "torch.multiprocessing.Process",
]);
/** The last name of each {@link CHILD_PROCESS} path (`Popen`, `run`, `system`, ...). */
const CHILD_PROCESS_NAMES: readonly string[] = [
  ...new Set([...CHILD_PROCESS].map((p) => p.slice(p.lastIndexOf(".") + 1))),
];

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
      if ((at === 0 || !isWordCode(text.charCodeAt(at - 1))) && !isWordCode(text.charCodeAt(at + w.length))) {
        last = at;
        break;
      }
    }
  }
  return last;
}

/**
 * The start offsets of the module's calls that start a child process, in order: the calls of the
 * top-level statements that mention one of `words`, resolved.
 */
function childProcessStarts(ctx: RuleContext, words: readonly string[]): number[] {
  return ctx.model
    .nodesMentioning("call", words, true)
    .filter((c) => CHILD_PROCESS.has(calleePath(ctx.model, c) ?? ""))
    .map((c) => c.startIndex)
    .sort((x, y) => x - y);
}

/**
 * What {@link startsChildAfter} finds once per lint: the words, the module's child-process starts,
 * and per block (its node id; -1 for the module) the offset of its last child-process word.
 */
export interface ChildProcessFacts {
  words?: string[];
  starts?: number[];
  lastWord: Map<number, number>;
}

/**
 * Whether a statement after `stmt` in its block starts a child process: a call of
 * {@link CHILD_PROCESS} after `stmt` and inside its block (the whole module for a top-level
 * statement, whose parent is its chunk's root: python/moduleTrees.ts). First a text test: such a
 * call's text holds one of {@link childProcessWords}, so the block's last such word (found once per
 * block and lint) must come after `stmt`; where it does, the module's starts, found once per lint
 * ({@link childProcessStarts}), by binary search: searching the rest of the block
 * for every write made a file with many writes quadratic (800 writes 4.7 s); a flat 5,000-line
 * script spent 40 ms of each keystroke's lint resolving every call after a late write.
 */
export function startsChildAfter(ctx: RuleContext, stmt: SyntaxNode, facts: ChildProcessFacts): boolean {
  const block = stmt.parent;
  if (!block) return false;
  const text = ctx.model.text;
  const from = stmt.endIndex,
    end = block.type === "module" ? text.length : block.endIndex;
  // Only the words the text holds (the probe answers from the last version in the editor).
  const words = (facts.words ??= childProcessWords(ctx).filter((w) => ctx.hasWord?.(w) ?? true));
  if (!words.length) return false;
  const key = block.type === "module" ? -1 : block.id;
  let last = facts.lastWord.get(key);
  if (last === undefined) {
    last = lastWordIn(text, key === -1 ? 0 : block.startIndex, end, words);
    facts.lastWord.set(key, last);
  }
  if (last < from) return false;
  const starts = (facts.starts ??= childProcessStarts(ctx, words));
  let lo = 0,
    hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < starts.length && starts[lo] < end;
}

/** Whether `node` holds a call that starts a child process ({@link CHILD_PROCESS}), nested functions included. */
export function startsChildWithin(ctx: Pick<RuleContext, "model">, node: SyntaxNode): boolean {
  return node.descendantsOfType("call").some((c) => !!c && CHILD_PROCESS.has(calleePath(ctx.model, c) ?? ""));
}
