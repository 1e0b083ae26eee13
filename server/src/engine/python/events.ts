/**
 * The events of the CUDA timeline (python/model.ts `ModuleModel.events`, ../shared/spec/rules.md):
 * framework imports, CUDA-initialising calls, environment writes and reads, and a notebook's shell
 * exports, in execution order; the calls the walk visited (python/walker.ts makes both); the events
 * of a notebook's IPython lines; and the records a top-level statement's events are kept as from one
 * lint to the next (python/cache.ts).
 */
import type { SyntaxNode } from "./parser";
import type { Framework, InitDepth } from "../frameworks";
import type { Range } from "../types";
import type { ProjectInit, ProjectWrite } from "./model";
import type { Memo, StatementFacts } from "./cache";

/** How an environment variable was written. `%env` is IPython's magic (it sets os.environ). */
export type EnvWriteForm = "subscript" | "setdefault" | "update" | "putenv" | "magic-env";

/** A framework import (or an import of a module that initialises CUDA on import). */
export interface ImportEvent {
  kind: "import";
  /** The import statement. */
  node: SyntaxNode;
  /** Dotted module path as written, e.g. `torch.distributed`. */
  module: string;
  framework: Framework | null;
  /** The module initialises CUDA when imported (eagerInitModules). */
  eagerInit: boolean;
}

/** A call that initialises CUDA (ground-truth rows marked "no"). */
export interface InitEvent {
  kind: "init";
  /** The call node (or the import statement for an eager-init module). */
  node: SyntaxNode;
  framework: Framework;
  depth: InitDepth;
  /** Short description for messages, e.g. `torch.cuda.is_available()`. */
  what: string;
  /** For an import or call of the project's own code (python/project.ts): what it runs, and where. */
  project?: ProjectInit;
  /**
   * For the import of a catalogued library: what the catalogue says and where it comes from
   * (initCatalogue.ts `importInitNote`: `kornia >=0.7,<0.8 initialises CUDA when imported (read in ...)`).
   */
  note?: string;
}

/** A write of an environment variable with a literal name. */
export interface EnvWriteEvent {
  kind: "envWrite";
  variable: string;
  form: EnvWriteForm;
  /** Where to report: the whole statement (or magic line). */
  range: Range;
  /** The statement node; null for a `%env` magic line. */
  statement: SyntaxNode | null;
  /** The value expression; null for magics and `update(K=...)` without one. */
  value: SyntaxNode | null;
  /** The value's literal text when it is a plain string (or the `%env` value). */
  literal: string | null;
  /** The write sits in a function body that the walk inlined. */
  inFunction: boolean;
  /** The write sits inside a block (if/with/try/...) rather than directly at module level. */
  nested: boolean;
  /**
   * The node naming the variable: the key string (`"K"` in `os.environ["K"]`, `setdefault`, `update({...})`,
   * `putenv`) or the keyword name of `update(K=...)`; absent for `%env` magics.
   */
  nameNode?: SyntaxNode | null;
}

/** A read of an environment variable with a literal name. */
export interface EnvReadEvent {
  kind: "envRead";
  variable: string;
  /** The read expression (`os.environ["K"]`, `os.environ.get("K")`, `os.getenv("K")`). */
  node: SyntaxNode;
  /** The node of the variable name string. */
  nameNode: SyntaxNode;
}

/** A shell line in a notebook (`!export K=v`, `!K=v cmd`) that sets a variable only for its subshell. */
export interface ShellExportEvent {
  kind: "shellExport";
  variable: string;
  value: string;
  range: Range;
  /** The whole shell line as written. */
  text: string;
}

/**
 * A call of a project function (python/project.ts) whose body writes a startup variable before it
 * initialises anything itself (`train(cfg)`, whose first statement sets PYTORCH_CUDA_ALLOC_CONF):
 * the write runs here, in this process, when the call does. Only on the linted file's timelines.
 */
export interface ProjectWriteEvent {
  kind: "projectWrite";
  /** The call node. */
  node: SyntaxNode;
  variable: string;
  /** The call as it reads here, e.g. `train()`. */
  what: string;
  /** The write in the other module. */
  project: ProjectWrite;
}

/**
 * A removal of an environment variable with a literal name, as a statement of its own:
 * `del os.environ["K"]` or `os.environ.pop("K"[, default])`. Only GPU001 reads it (a removal after
 * CUDA initialised is as late as a write); it is no write for the other rules, and it does not
 * widen the walk (python/walker.ts `writeSpan` lists writes only).
 */
export interface EnvDeleteEvent {
  kind: "envDelete";
  variable: string;
  /** The statement. */
  node: SyntaxNode;
  /** The node of the variable name string. */
  nameNode: SyntaxNode;
}

export type TimelineEvent =
  ImportEvent | InitEvent | EnvWriteEvent | EnvReadEvent | ShellExportEvent | ProjectWriteEvent | EnvDeleteEvent;

/** An IPython line (magic or shell escape) that was blanked before parsing. */
export interface MagicLine {
  /** 0-based line in the linted text. */
  line: number;
  /** Column of the `%` or `!`. */
  column: number;
  /** The line from the `%`/`!` on. */
  text: string;
  /**
   * The lines that continue it, as written (whole lines), when it ends with `\`: IPython joins a
   * `!`/`%` line ending in a backslash with the lines after it, each of those that also ends in
   * one and the line after the last (IPython 8, core/inputtransformer2.py
   * `find_end_of_continued_line` and `assemble_continued_line`: "Used to allow ``%magic`` and
   * ``!system`` commands to be continued over multiple lines"). They are blanked with it.
   */
  continuation?: string[];
}

/** A call that the timeline walk visited, in execution order. */
export interface TimelineCall {
  /** The call node. */
  node: SyntaxNode;
  /** The callee's dotted path with `()` markers removed (`torch.cuda.set_device`), or null when unresolved. */
  path: string | null;
  /** How many timeline events ran before this call: `events.slice(0, at)` happened before it. */
  at: number;
}

/**
 * A module-level function the module never calls, and its events in execution order within it; or
 * a method of a module-level class the module never calls, with the events of the object's life
 * before it: the constructor (`__init__`, then a dataclass's `__post_init__`), then the method
 * (`self.other()` calls inlined). `owner` names the class for a method.
 */
export interface FunctionTimeline {
  def: SyntaxNode;
  events: TimelineEvent[];
  owner?: string;
}

/** Range of a node. */
export function nodeRange(n: SyntaxNode): Range {
  return {
    start: { line: n.startPosition.row, character: n.startPosition.column },
    end: { line: n.endPosition.row, character: n.endPosition.column },
  };
}

/**
 * A node of a top-level statement by its offsets relative to the statement's start and its type:
 * found again in a later tree whose statement has the same subtree (tree-sitter reused it).
 */
export interface NodeRef {
  owner: StatementFacts;
  start: number;
  end: number;
  type: string;
}

/** A timeline event with its nodes as {@link NodeRef}s (the `range` of a write is its statement's). */
export type EventRecord = {
  kind: TimelineEvent["kind"];
  refs: Record<string, NodeRef | null>;
  plain: Record<string, unknown>;
  /** The event object made from this record (Memo.event), reused by every later lint that keeps the record: its nodes are looked up in `memo`, the lint's own. */
  live?: { memo: Memo; event: TimelineEvent; range?: Range; rangeMemo?: Memo };
};

/** Fields of timeline events that hold nodes. */
export const NODE_FIELDS = ["node", "statement", "value", "nameNode"] as const;

/**
 * The variables IPython lines write (each line's {@link magicEvents}: `%env`/`%set_env` writes and
 * shell exports), in line order; the prefilter counts them as writes (prefilter.ts `TextProbe`).
 */
export function magicVariables(magics: readonly MagicLine[]): string[] {
  const out: string[] = [];
  for (const m of magics)
    for (const e of magicEvents(m)) if (e.kind === "envWrite" || e.kind === "shellExport") out.push(e.variable);
  return out;
}

/** Events of one IPython line: `%env K=V` / `%env K V` / `%set_env K V` writes; `!export K=V` / `!K=V cmd` shell exports. */
export function magicEvents(m: MagicLine): TimelineEvent[] {
  const range: Range = {
    start: { line: m.line, character: m.column },
    end: { line: m.line, character: m.column + m.text.length },
  };
  const words = m.text.slice(1).trim().split(/\s+/).filter(Boolean);
  if (m.text.startsWith("%")) {
    const [magic, ...rest] = words;
    if ((magic !== "env" && magic !== "set_env") || rest.length === 0) return [];
    const joined = rest.join(" ");
    const eq = joined.indexOf("=");
    let variable: string;
    let value: string;
    if (eq > 0 && !/\s/.test(joined.slice(0, eq))) {
      variable = joined.slice(0, eq);
      value = joined.slice(eq + 1).trim();
    } else if (rest.length >= 2) {
      variable = rest[0];
      value = rest.slice(1).join(" ");
    } else return [];
    return [
      {
        kind: "envWrite",
        variable,
        form: "magic-env",
        range,
        statement: null,
        value: null,
        literal: unquote(value),
        inFunction: false,
        nested: false,
      },
    ];
  }
  // Shell escape: `!export A=1 B=2`, `!A=1 python x.py`.
  const out: TimelineEvent[] = [];
  let rest = words;
  if (rest[0] === "export") rest = rest.slice(1);
  for (const w of rest) {
    const eq = w.indexOf("=");
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(w.slice(0, eq))) break;
    out.push({ kind: "shellExport", variable: w.slice(0, eq), value: unquote(w.slice(eq + 1)), range, text: m.text });
  }
  return out;
}

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t[t.length - 1] === t[0]) return t.slice(1, -1);
  return t;
}
