/**
 * The timeline walk (pass 2 of python/model.ts `buildModel`): the events of the CUDA timeline in
 * execution order at module level (including `if __name__ == "__main__":` blocks and the bodies of
 * module functions called at top level, two levels deep), then each module function the module never
 * calls as its own timeline, then the environment reads anywhere; what the walk reads of one
 * statement (its import bindings, environment writes and reads, the calls that initialise CUDA); and
 * what a document's model keeps from one lint to the next (ModelCache, Memo), with which a top-level
 * statement's walk is recorded and replayed at the next lint while what it looked up is bound as before.
 */
import type { SyntaxNode } from "./parser";
import type { ModuleTrees } from "./moduleTrees";
import { enclosingFunction, keyName, stringValue } from "./parser";
import {
  type Framework,
  type InitDepth,
  frameworkOfModule,
  isEagerInitModule,
  TORCH_CUDA_INIT,
  TORCH_ACCELERATOR_INIT,
  TORCH_OTHER_INIT,
  EAGER_INIT_DEPTH,
  INIT_CALLABLES,
  JAX_INIT_FUNCTIONS,
  JAX_INIT_SUBMODULES,
  TF_NON_INIT_PREFIXES,
  TF_CONFIG_INIT,
} from "../frameworks";
import type { Range } from "../types";
import type { TextChange } from "./keptText";
import { importInitNote, INIT_CATALOGUE } from "../initCatalogue";
import type { Bindings, Mentions, ModelOptions, NodeIndex, ProjectInit, Queries } from "./model";

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

export type TimelineEvent = ImportEvent | InitEvent | EnvWriteEvent | EnvReadEvent | ShellExportEvent;

/** An IPython line (magic or shell escape) that was blanked before parsing. */
export interface MagicLine {
  /** 0-based line in the linted text. */
  line: number;
  /** Column of the `%` or `!`. */
  column: number;
  /** The line from the `%`/`!` on. */
  text: string;
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

const COMPOUND = new Set([
  "if_statement",
  "for_statement",
  "while_statement",
  "try_statement",
  "with_statement",
  "match_statement",
]);
const CLAUSES = new Set([
  "elif_clause",
  "else_clause",
  "except_clause",
  "finally_clause",
  "case_clause",
  "except_group_clause",
]);

/**
 * The names a statement's analysis looked up, so that its facts can be reused in a later version
 * of the file while none of these names is bound differently: `resolved` (symbols and aliases),
 * `values` (valueOf), `callees` (module functions a call might inline).
 */
export interface Deps {
  resolved: Set<string>;
  values: Set<string>;
  callees: Set<string>;
  /** {@link namesMask} of each set, once the record the names belong to is complete (made on first use by `stale`). */
  masks?: [number, number, number];
}

/** Where the queries record the names they look up (the analysis of one top-level statement); null: nowhere. */
export interface Tracker {
  deps: Deps | null;
}

export const newDeps = (): Deps => ({ resolved: new Set(), values: new Set(), callees: new Set() });

/**
 * Words one of which the text of any expression that reads the environment contains: `environ`,
 * `getenv`, and the local names bound to `os`, `os.environ` or `os.getenv` by an import or a
 * module-level alias. A cheap text test that spares resolving every call of a large file.
 */
export function envWordsOf(b: Bindings): string[] {
  let words = envWordsKept.get(b);
  if (!words) {
    words = computeEnvWords(b);
    envWordsKept.set(b, words);
  }
  return words;
}
/** {@link envWordsOf} per bindings: asked twice per lint of a document (the model's key and the reads), found once. */
const envWordsKept = new WeakMap<Bindings, string[]>();
function computeEnvWords({ symbols, assignments }: Bindings): string[] {
  const words = ["environ", "getenv"];
  for (const [name, path] of symbols)
    if (path === "os" || path === "os.environ" || path === "os.getenv") words.push(name);
  for (const [name, values] of assignments)
    if (values.some((v) => v.text.includes("environ") || v.text.includes("getenv"))) words.push(name);
  return words;
}

/** The environment writes of each of `statements` that has one (ModuleModel.statementWrites). */
export function statementWrites(
  statements: readonly SyntaxNode[],
  q: Queries,
): Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }> {
  const out: Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }> = [];
  for (const stmt of statements) {
    const writes = envWritesOf(stmt, q.isEnviron, q.resolve);
    if (writes.length === 0) continue;
    let inFunction = false;
    for (let p = stmt.parent; p; p = p.parent)
      if (p.type === "function_definition" || p.type === "lambda") {
        inFunction = true;
        break;
      }
    const nested = stmt.parent?.type !== "module";
    out.push({
      statement: stmt,
      writes: writes.map((w) => ({
        ...w,
        kind: "envWrite",
        statement: stmt,
        range: nodeRange(stmt),
        inFunction,
        nested,
      })),
    });
  }
  return out;
}

/** What the timeline walk produces. */
export interface Timeline {
  events: TimelineEvent[];
  calls: TimelineCall[];
  functionTimelines: FunctionTimeline[];
}

/**
 * Pass 2 of python/model.ts `buildModel`: the timeline walk, one statement at a time in execution order
 * (module level, `if __name__ == "__main__":` blocks, bodies of module functions called at top
 * level two levels deep), then each module function the module never calls as its own timeline.
 */
export class TimelineWalker {
  private readonly events: TimelineEvent[] = [];
  private readonly calls: TimelineCall[] = [];
  /** PYTORCH_NVML_BASED_CUDA_CHECK=1 was written: `torch.cuda.is_available()` does not initialise CUDA. */
  private nvmlCheck = false;
  /**
   * KINETO_USE_DAEMON=1 before torch loads makes `import torch` itself initialise CUDA (measured on
   * torch 2.11 like is_available(): the CUDA variables freeze, the lazy init has not run; pytorch#171804).
   */
  private kinetoDaemon = false;
  private torchLoaded = false;
  private readonly magicQueue: MagicLine[];
  /** Functions being inlined now (no recursion). */
  private readonly inlined = new Set<string>();
  /** Functions the module-level walk inlined at least once (a method as `Class.method`). */
  private readonly everInlined = new Set<string>();
  /** The class whose method the walk is in (for `self.method()` calls), or null. */
  private classCtx: string | null = null;
  /** Each class's methods by name (found once per class and walk). */
  private readonly methodCache = new Map<string, Map<string, SyntaxNode>>();

  constructor(
    private readonly module: ModuleTrees,
    private readonly b: Bindings,
    private readonly q: Queries,
    private readonly options: ModelOptions,
    magics: readonly MagicLine[],
    private readonly mentions: Mentions,
    private readonly writeWords: readonly string[],
    private readonly index: NodeIndex,
    private readonly memo: Memo | null = null,
  ) {
    this.magicQueue = [...magics].sort((a, c) => a.line - c.line);
  }

  /** Functions inlined while the current statement is recorded (see {@link record}). */
  private inlinedLog: string[] | null = null;

  /** The whole walk: module level, then the uncalled functions, then the reads anywhere. */
  run(): Timeline {
    if (this.memo) this.walkKept(this.memo);
    else this.walkStatements(this.module.statements, 0, false);
    this.flushMagics(Number.MAX_SAFE_INTEGER);
    const functionTimelines = this.options.asImported === "module" ? [] : this.uncalledFunctions();
    if (this.options.asImported) return { events: this.events, calls: this.calls, functionTimelines };
    // Reads anywhere in the file (for GPU005 and GPU007).
    const words = envWordsOf(this.b);
    const reads = this.memo
      ? this.readsKept(this.memo, words)
      : envReadsOf(this.mentions, this.q.isEnviron, this.q.resolve, words);
    for (const r of reads) this.events.push(r);
    return { events: this.events, calls: this.calls, functionTimelines };
  }

  /** The walk state a statement's events depend on besides the names it looks up. */
  private stateKey(): string {
    const flags = +this.nvmlCheck | (+this.kinetoDaemon << 1) | (+this.torchLoaded << 2) | (+this.projectWanted() << 3);
    const k = this.keyKept;
    if (k && k.flags === flags && k.inlined === this.inlinedVersion) return k.key;
    const key = `${+this.nvmlCheck}${+this.kinetoDaemon}${+this.torchLoaded}${flags >> 3}|${[...this.inlined].join(",")}`;
    this.keyKept = { flags, inlined: this.inlinedVersion, key };
    return key;
  }
  /** The last {@link stateKey} and what it was made of (asked once per top-level statement and module function). */
  private keyKept: { flags: number; inlined: number; key: string } | undefined;
  /** Counts changes of `inlined`. */
  private inlinedVersion = 0;
  private setInlined(name: string, on: boolean): void {
    if (on) this.inlined.add(name);
    else this.inlined.delete(name);
    this.inlinedVersion++;
  }

  /**
   * The module-level walk with kept facts: each top-level statement's record replayed, or walked
   * and recorded. A notebook's IPython lines before a statement come first, as in
   * {@link walkStatements} (their events are in no record: they change no walk state).
   */
  private walkKept(memo: Memo): void {
    for (const f of memo.facts) {
      if (f.type === "comment") continue;
      this.topStart = f.node.startIndex;
      if (this.magicQueue.length) this.flushMagics(f.node.startPosition.row);
      const entry = this.stateKey();
      if (f.main?.entry === entry) this.replay(memo, f.main);
      else f.main = this.record(memo, entry, true, () => this.walkStatement(f.node, 0, false, false));
    }
  }

  /** Runs `walk` and records what it appended and looked up. */
  private record(memo: Memo, entry: string, keepCalls: boolean, walk: () => void): WalkRecord {
    const deps = newDeps();
    const log: string[] = [];
    memo.track.deps = deps;
    this.inlinedLog = log;
    const e0 = this.events.length,
      c0 = this.calls.length;
    try {
      walk();
    } finally {
      memo.track.deps = null;
      this.inlinedLog = null;
    }
    const owners = new Set<StatementFacts>();
    const events = this.events.slice(e0).map((e) => memo.record(e, owners));
    const calls = keepCalls
      ? this.calls.slice(c0).map((c) => {
          const ref = memo.ref(c.node);
          owners.add(ref.owner);
          return { ref, path: c.path, at: c.at - e0 };
        })
      : [];
    return {
      entry,
      function: undefined,
      exit: { nvmlCheck: this.nvmlCheck, kinetoDaemon: this.kinetoDaemon, torchLoaded: this.torchLoaded },
      events,
      calls,
      inlined: log,
      deps,
      owners,
    };
  }

  /** Appends a record's events and calls, and leaves the state it left. */
  private replay(memo: Memo, r: WalkRecord): void {
    const e0 = this.events.length;
    for (const e of r.events) this.events.push(memo.event(e));
    for (const c of r.calls) this.calls.push(memo.call(c, e0));
    ({ nvmlCheck: this.nvmlCheck, kinetoDaemon: this.kinetoDaemon, torchLoaded: this.torchLoaded } = r.exit);
    for (const n of r.inlined) this.everInlined.add(n);
  }

  /** The reads anywhere, per top-level statement: kept, or found and kept. */
  private readsKept(memo: Memo, words: readonly string[]): EnvReadEvent[] {
    const subs: EnvReadEvent[] = [],
      calls: EnvReadEvent[] = [];
    for (const f of memo.facts) {
      if (f.reads) {
        for (const r of f.reads.subs) subs.push(memo.event(r) as EnvReadEvent);
        for (const r of f.reads.calls) calls.push(memo.event(r) as EnvReadEvent);
        continue;
      }
      const deps = newDeps();
      memo.track.deps = deps;
      let found: [EnvReadEvent[], EnvReadEvent[]] = [[], []];
      try {
        const st = f.node;
        if (this.mentions.within(st.startIndex, st.endIndex, words)) {
          found = readsAmong(
            st.descendantsOfType("subscript"),
            st.descendantsOfType("call"),
            this.mentions,
            this.q.isEnviron,
            this.q.resolve,
            words,
          );
        }
      } finally {
        memo.track.deps = null;
      }
      const none = new Set<StatementFacts>();
      f.reads = {
        subs: found[0].map((e) => memo.record(e, none)),
        calls: found[1].map((e) => memo.record(e, none)),
        deps,
      };
      subs.push(...found[0]);
      calls.push(...found[1]);
    }
    return [...subs, ...calls];
  }

  /** Functions the module never calls, each walked as its own timeline (kept out of `events`). */
  private uncalledFunctions(): FunctionTimeline[] {
    const out: FunctionTimeline[] = [];
    for (const [name, def] of this.b.functions) {
      if (this.everInlined.has(name) && this.options.asImported !== "functions") continue;
      const at = this.events.length,
        callsAt = this.calls.length;
      this.timelineStart = at;
      this.ownRange = [def.startIndex, def.endIndex];
      // A kept record was made from this subtree (same text), which had a body: no need to ask.
      // The record is keyed by the walk state, the name and where the definition sits in its
      // statement, compared field by field (a key string per function and keystroke was ~60 bytes
      // for each of the 453 functions of the 5,000-line file).
      const f = this.memo?.ownerOf(def);
      const entry = f ? this.stateKey() : "";
      const offset = f ? def.startIndex - f.start : 0;
      if (f?.fn && f.fn.entry === entry && f.fn.function?.name === name && f.fn.function.offset === offset)
        this.replay(this.memo!, f.fn);
      else {
        const body = def.childForFieldName("body");
        if (!body) continue;
        const walk = () => {
          this.setInlined(name, true);
          this.walkBlock(body, 1, true, true);
          this.setInlined(name, false);
        };
        if (f) {
          f.fn = this.record(this.memo!, entry, false, walk);
          f.fn.function = { name, offset };
        } else walk();
      }
      out.push({ def, events: this.events.splice(at) });
      this.calls.length = callsAt;
    }
    if (!this.options.asImported) out.push(...this.objectLives());
    this.ownRange = null;
    return out;
  }

  /**
   * The methods of each module-level class the module never calls, each as the object's life up to
   * it: the constructor, then the method. Only classes whose text holds a word of an environment
   * write are walked (a timeline matters to the rules for the writes in it), and they are walked
   * afresh at each lint (no kept records: such classes are few). Test classes are left out
   * ({@link isTestClass}): a test sets a variable to see how the code under test reads it (on the
   * ecosystem corpus, jax's cache-key test writes XLA_FLAGS after `jax.local_devices()` for a
   * function that reads it at each call), not to configure the process it runs in.
   */
  private objectLives(): FunctionTimeline[] {
    const out: FunctionTimeline[] = [];
    for (const [cls, node] of this.b.classes) {
      if (
        this.b.symbols.has(cls) ||
        isTestClass(node) ||
        !this.mentions.within(node.startIndex, node.endIndex, this.writeWords, true)
      )
        continue;
      const methods = this.methodsOf(cls);
      for (const [name, def] of methods) {
        if (name === "__post_init__" || this.everInlined.has(`${cls}.${name}`) || isStaticOrClassMethod(def)) continue;
        this.ownRange = [node.startIndex, node.endIndex];
        const at = this.events.length,
          callsAt = this.calls.length;
        if (name !== "__init__") this.construct(cls, 0);
        this.inlineMethod(cls, name, 0);
        out.push({ def, events: this.events.splice(at), owner: cls });
        this.calls.length = callsAt;
      }
    }
    return out;
  }

  /** The methods defined in a module-level class's body, by name (decorated ones included). */
  private methodsOf(cls: string): Map<string, SyntaxNode> {
    let m = this.methodCache.get(cls);
    if (m) return m;
    m = new Map();
    const body = this.b.classes.get(cls)?.childForFieldName("body");
    for (const s of body?.namedChildren ?? []) {
      const def = s?.type === "decorated_definition" ? s.childForFieldName("definition") : s;
      const name = def?.type === "function_definition" ? def.childForFieldName("name")?.text : undefined;
      if (def && name) m.set(name, def);
    }
    this.methodCache.set(cls, m);
    return m;
  }

  /** Walks a method's body where it is called (`depth` of the call), in its class's context; once per call chain. */
  private inlineMethod(cls: string, name: string, depth: number): void {
    const key = `${cls}.${name}`;
    const body = this.methodsOf(cls).get(name)?.childForFieldName("body");
    if (!body || this.inlined.has(key)) return;
    this.memo?.track.deps?.callees.add(cls);
    const outer = this.classCtx;
    this.classCtx = cls;
    this.setInlined(key, true);
    this.everInlined.add(key);
    this.inlinedLog?.push(key);
    try {
      this.walkBlock(body, depth + 1, true);
    } finally {
      this.setInlined(key, false);
      this.classCtx = outer;
    }
  }

  /** A class instantiated: its `__init__`, then a dataclass's `__post_init__` (Python's data model and dataclasses documentation). */
  private construct(cls: string, depth: number): void {
    this.inlineMethod(cls, "__init__", depth);
    this.inlineMethod(cls, "__post_init__", depth);
  }

  /**
   * The class a call's receiver is an instance of: `self` in a method, or a name whose latest
   * assignment before the call, in the same function (or both at module level), is `Class(...)`
   * of a module-level class; null otherwise.
   */
  private receiverClass(receiver: SyntaxNode, call: SyntaxNode): string | null {
    if (receiver.type !== "identifier") return null;
    if (receiver.text === "self") return this.classCtx;
    const v = this.q.valueOf(receiver.text, call.startIndex);
    if (v?.type !== "call") return null;
    const c = v.childForFieldName("function");
    if (
      c?.type !== "identifier" ||
      !this.b.classes.has(c.text) ||
      this.b.symbols.has(c.text) ||
      this.b.functions.has(c.text)
    )
      return null;
    return enclosingFunction(v)?.id === enclosingFunction(call)?.id ? c.text : null;
  }

  private flushMagics(beforeLine: number): void {
    while (this.magicQueue.length && this.magicQueue[0].line < beforeLine)
      this.events.push(...magicEvents(this.magicQueue.shift()!));
  }

  private walkBlock(block: SyntaxNode, depth: number, inFunction: boolean, nested = false): void {
    this.walkStatements(block.namedChildren, depth, inFunction, nested);
  }

  /** The statements of a block or of the module, in order (comments skipped). */
  private walkStatements(
    statements: ReadonlyArray<SyntaxNode | null>,
    depth: number,
    inFunction: boolean,
    nested = false,
  ): void {
    for (const s of statements) {
      if (!s || s.type === "comment") continue;
      if (depth === 0 && !nested) {
        this.flushMagics(s.startPosition.row);
        this.topStart = s.startIndex;
      }
      this.walkStatement(s, depth, inFunction, nested);
    }
  }

  /** One statement's events and calls, appended in execution order. */
  private walkStatement(stmt: SyntaxNode, depth: number, inFunction: boolean, nested: boolean): void {
    switch (stmt.type) {
      case "import_statement":
      case "import_from_statement":
        this.walkImport(stmt);
        return;
      case "function_definition":
        return;
      case "if_statement":
        if (this.options.asImported && depth === 0 && !inFunction && !nested && isMainGuard(stmt)) return;
        this.walkCompound(stmt, depth, inFunction);
        return;
      case "class_definition": {
        const body = stmt.childForFieldName("body");
        if (body)
          for (const s of body.namedChildren)
            if (s && s.type !== "function_definition" && s.type !== "decorated_definition")
              this.walkStatement(s, depth, inFunction, true);
        return;
      }
      case "decorated_definition":
        for (const d of stmt.namedChildren) if (d?.type === "decorator") this.visitCalls(d, depth);
        return;
      default:
        if (COMPOUND.has(stmt.type)) this.walkCompound(stmt, depth, inFunction);
        else {
          this.visitCalls(stmt, depth);
          this.recordEnv(stmt, inFunction, nested);
        }
    }
  }

  /** if/for/while/try/with/match: the header expressions' calls, then each block, in source order. */
  private walkCompound(stmt: SyntaxNode, depth: number, inFunction: boolean): void {
    for (const child of stmt.namedChildren) {
      if (!child) continue;
      if (child.type === "block") this.walkBlock(child, depth, inFunction, true);
      else if (CLAUSES.has(child.type)) {
        for (const c of child.namedChildren) {
          if (!c) continue;
          if (c.type === "block") this.walkBlock(c, depth, inFunction, true);
          else this.visitCalls(c, depth);
        }
      } else if (child.type !== "comment") {
        // A `for` target's calls run too (`for x[f()] in xs` calls f on each iteration).
        this.visitCalls(child, depth);
      }
    }
  }

  private walkImport(stmt: SyntaxNode): void {
    let ownInit = false; // one init event per statement for the project's modules
    for (const [, path] of importBindings(stmt)) {
      const framework = frameworkOfModule(path);
      const eager = isEagerInitModule(path, this.options.eagerInitModules);
      const own =
        !framework && !eager && !ownInit && this.projectWanted() ? this.options.project!.moduleInit(path) : null;
      if (framework || eager || own)
        this.events.push({ kind: "import", node: stmt, module: path, framework, eagerInit: eager || !!own });
      if (own) {
        ownInit = true;
        this.events.push({
          kind: "init",
          node: stmt,
          framework: own.framework,
          depth: own.depth,
          what: `import ${path}`,
          note: `it runs ${own.what} at ${own.where}`,
          project: own,
        });
      } else if (eager) {
        // The unpinned entry, else (a project whose pin selects an older entry) the catalogue's entry that initialises.
        const note = importInitNote(path.split(".")[0]) ?? importInitNote(path.split(".")[0], INIT_CATALOGUE);
        this.events.push({
          kind: "init",
          node: stmt,
          framework: framework ?? "torch",
          depth: EAGER_INIT_DEPTH.get(path.split(".")[0]) ?? "context",
          what: `import ${path}`,
          ...(note ? { note } : {}),
        });
      } else if (framework === "torch" && this.kinetoDaemon && !this.torchLoaded)
        this.events.push({
          kind: "init",
          node: stmt,
          framework: "torch",
          depth: "nvml",
          what: `import ${path} with KINETO_USE_DAEMON=1`,
        });
      if (framework === "torch") this.torchLoaded = true;
    }
  }

  /** The calls of `scope` in evaluation order; a call of a module function is inlined (two levels deep). */
  private visitCalls(scope: SyntaxNode, depth: number): void {
    const { functions, symbols } = this.b;
    for (const call of callsInOrder(this.index.callsAndScopesIn(scope))) {
      const fn = call.childForFieldName("function");
      this.calls.push({ node: call, path: this.q.resolve(fn)?.replace(/\(\)/g, "") ?? null, at: this.events.length });
      const init =
        classifyCall(call, fn, this.q, this.b.frameworks, this.options, this.nvmlCheck) ?? this.projectCall(call, fn);
      if (init) this.events.push(init);
      if (fn?.type === "identifier" && depth < 2) this.memo?.track.deps?.callees.add(fn.text);
      if (
        fn?.type === "identifier" &&
        depth < 2 &&
        functions.has(fn.text) &&
        !symbols.has(fn.text) &&
        !this.inlined.has(fn.text)
      ) {
        const body = functions.get(fn.text)!.childForFieldName("body");
        if (body) {
          this.setInlined(fn.text, true);
          this.everInlined.add(fn.text);
          this.inlinedLog?.push(fn.text);
          this.walkBlock(body, depth + 1, true);
          this.setInlined(fn.text, false);
        }
      } else if (
        fn?.type === "identifier" &&
        depth < 2 &&
        this.b.classes.has(fn.text) &&
        !symbols.has(fn.text) &&
        !functions.has(fn.text)
      ) {
        this.construct(fn.text, depth);
      } else if (fn?.type === "attribute" && depth < 2) {
        const receiver = fn.childForFieldName("object"),
          name = fn.childForFieldName("attribute")?.text;
        const cls = receiver && name ? this.receiverClass(receiver, call) : null;
        if (cls && name && this.methodsOf(cls).has(name)) this.inlineMethod(cls, name, depth);
      }
    }
  }

  /** Where the timeline being walked starts in `events` (0: the module level; a function's own timeline: where it began). */
  private timelineStart = 0;
  /**
   * Whether the project's modules are worth asking about now: not when walking a module as an
   * import runs it (python/project.ts) and its timeline already has an init (only the first counts there).
   */
  private projectWanted(): boolean {
    if (!this.options.project) return false;
    if (!this.options.asImported) {
      // The linted file: an init matters before an environment write. The module level asks up to
      // its last top-level statement that writes (every statement when a write sits in a function
      // or class, which may be called from anywhere); a function's own timeline asks only when the
      // function (or the class of a method) holds a write.
      const w = this.writeSpan();
      return this.ownRange
        ? w.starts.some((x) => x >= this.ownRange![0] && x < this.ownRange![1])
        : this.topStart <= w.limit;
    }
    for (let i = this.events.length - 1; i >= this.timelineStart; i--) if (this.events[i].kind === "init") return false;
    return true;
  }
  /** Start offset of the top-level statement the module-level walk is in. */
  private topStart = 0;
  /** The function (or class, for a method's timeline) whose own timeline is walked; null at module level. */
  private ownRange: [number, number] | null = null;
  private writeSpanKept?: { limit: number; starts: number[] };
  /** Where the file writes the environment: the starts of the writing statements, and the last top-level one's start (Infinity when one is in a def or class). */
  private writeSpan(): { limit: number; starts: number[] } {
    if (this.writeSpanKept) return this.writeSpanKept;
    const writing = this.mentions
      .nodesIn("expression_statement", this.writeWords, true)
      .filter((st) => envWritesOf(st, this.q.isEnviron, this.q.resolve).length > 0);
    let limit = -1;
    for (const st of writing) {
      let top: SyntaxNode = st,
        inDef = false;
      for (let p = st.parent; p && p.type !== "module"; p = p.parent) {
        top = p;
        if (p.type === "function_definition" || p.type === "class_definition" || p.type === "lambda") inDef = true;
      }
      limit = inDef ? Infinity : Math.max(limit, top.startIndex);
    }
    return (this.writeSpanKept = { limit, starts: writing.map((st) => st.startIndex) });
  }

  /** A call of a project function that initialises CUDA (python/project.ts), as an init event here; else null. */
  private projectCall(call: SyntaxNode, fn: SyntaxNode | null): InitEvent | null {
    const project = this.options.project;
    if (!project || !fn || (fn.type !== "identifier" && fn.type !== "attribute") || !this.projectWanted()) return null;
    const path = this.q.resolve(fn);
    if (!path || path.includes("()")) return null;
    const own = project.callableInit(path);
    return own
      ? {
          kind: "init",
          node: call,
          framework: own.framework,
          depth: own.depth,
          what: `${fn.text}()`,
          note: `it runs ${own.what} at ${own.where}`,
          project: own,
        }
      : null;
  }

  private recordEnv(stmt: SyntaxNode, inFunction: boolean, nested: boolean): void {
    if (
      stmt.type !== "expression_statement" ||
      !this.mentions.within(stmt.startIndex, stmt.endIndex, this.writeWords, true)
    )
      return;
    for (const w of envWritesOf(stmt, this.q.isEnviron, this.q.resolve)) {
      const ev: EnvWriteEvent = { ...w, kind: "envWrite", statement: stmt, range: nodeRange(stmt), inFunction, nested };
      this.events.push(ev);
      if (w.variable === "PYTORCH_NVML_BASED_CUDA_CHECK" && w.literal === "1") this.nvmlCheck = true;
      if (w.variable === "KINETO_USE_DAEMON" && w.literal === "1") this.kinetoDaemon = true;
    }
  }
}

/**
 * The CUDA-initialising event of one call (ground truth, ../shared/spec/rules.md), or null.
 * @param fn the call's function node; nvmlCheck: PYTORCH_NVML_BASED_CUDA_CHECK=1 was written before.
 */
function classifyCall(
  call: SyntaxNode,
  fn: SyntaxNode | null,
  q: Queries,
  frameworks: ReadonlySet<Framework>,
  options: ModelOptions,
  nvmlCheck: boolean,
): InitEvent | null {
  const args = call.childForFieldName("arguments");
  const path = q.resolve(fn);
  const ev = (framework: Framework, depth: InitDepth, what: string): InitEvent => ({
    kind: "init",
    node: call,
    framework,
    depth,
    what,
  });
  if (path) {
    const bare = path.replace(/\(\)/g, "");
    const hit = bare.startsWith("torch")
      ? classifyTorchPath(bare, args, q, options, nvmlCheck)
      : classifyOtherPath(bare);
    if (hit !== undefined) return hit ? ev(hit[0], hit[1], hit[2]) : null;
  }
  // Method calls on torch objects: `.cuda()`, `.to("cuda")`, `device="cuda"`.
  if (fn?.type === "attribute" && frameworks.has("torch")) {
    const attr = fn.childForFieldName("attribute")?.text;
    const objQ = q.resolve(fn.childForFieldName("object"));
    if (objQ === "torch" || objQ === "torch.cuda") return null;
    if (attr === "cuda") return ev("torch", "alloc", ".cuda()");
    if (
      attr === "to" &&
      args &&
      args.namedChildren.some(
        (a) =>
          a &&
          (q.isCudaDevice(a) ||
            (a.type === "keyword_argument" &&
              a.childForFieldName("name")?.text === "device" &&
              q.isCudaDevice(a.childForFieldName("value")))),
      )
    ) {
      return ev("torch", "alloc", `.to(${args.namedChildren[0]?.text ?? ""})`);
    }
    const dev = keyword(args, "device");
    if (dev && q.isCudaDevice(dev)) return ev("torch", "alloc", `${attr}(device=${dev.text})`);
  }
  return null;
}

/** An init's framework, depth and description; null: the path names no init; undefined: look at the method call too. */
type PathVerdict = [Framework, InitDepth, string] | null | undefined;

/** Whether a backend argument is a string literal naming NCCL (`"nccl"`, `"cuda:nccl,cpu:gloo"`). */
function isNcclBackend(node: SyntaxNode | null | undefined): boolean {
  const v = node ? stringValue(node) : null;
  return v !== null && /\bnccl\b/i.test(v);
}

/** {@link classifyCall} for a resolved path under `torch`. */
function classifyTorchPath(
  bare: string,
  args: SyntaxNode | null,
  q: Queries,
  options: ModelOptions,
  nvmlCheck: boolean,
): PathVerdict {
  if (bare.startsWith("torch.cuda.")) {
    const member = bare.slice("torch.cuda.".length);
    if (member === "is_available" && nvmlCheck) return null;
    const depth = TORCH_CUDA_INIT.get(member);
    if (depth) return ["torch", depth, `${bare}()`];
    if (member === "device_count" && options.torchBelow24) return ["torch", "driver", `${bare}() (torch < 2.4)`];
    if (member === "amp.GradScaler" || member === "amp.autocast") return ["torch", "context", `${bare}()`];
    return null;
  }
  if (bare.startsWith("torch.accelerator.")) {
    const depth = TORCH_ACCELERATOR_INIT.get(bare.slice("torch.accelerator.".length));
    return depth ? ["torch", depth, `${bare}()`] : null;
  }
  const otherDepth = TORCH_OTHER_INIT.get(bare);
  if (otherDepth) return ["torch", otherDepth, `${bare}()`];
  // An NCCL process group freezes CUDA_VISIBLE_DEVICES without configuring the allocator (measured,
  // torch 2.11: verify/results-frameworks-h100-imports.json rows init_process_group('nccl'), also with
  // device_id); gloo does not. Only a literal backend naming nccl counts.
  if (bare === "torch.distributed.init_process_group" && isNcclBackend(firstArgOrKeyword(args, "backend")))
    return ["torch", "nvml", `${bare}("nccl")`];
  if (bare === "torch.autocast" || bare === "torch.amp.autocast") {
    const dev = firstArgOrKeyword(args, "device_type");
    return dev && stringValue(dev) === "cuda" ? ["torch", "context", `${bare}("cuda")`] : null;
  }
  if (bare === "torch.amp.GradScaler") {
    const dev = firstArgOrKeyword(args, "device");
    return !dev || stringValue(dev) === "cuda" ? ["torch", "context", `${bare}("cuda")`] : null;
  }
  if (/^torch\.nn\.(parallel\.)?(data_parallel\.)?DataParallel$/.test(bare))
    return ["torch", "context", "DataParallel(...)"];
  if (bare.startsWith("torch.")) {
    const dev = keyword(args, "device");
    // A factory with device=cuda allocates (depth `alloc`); a generator on cuda only makes a context.
    if (dev && q.isCudaDevice(dev))
      return ["torch", bare === "torch.Generator" ? "context" : "alloc", `${bare}(device=${dev.text})`];
  }
  return undefined;
}

/** {@link classifyCall} for a resolved path outside `torch` (accelerate, JAX, Keras, TensorFlow, CuPy, Numba). */
function classifyOtherPath(bare: string): PathVerdict {
  // Catalogued callables (initCatalogue.json: accelerate.Accelerator, ...).
  const callable = INIT_CALLABLES.get(bare);
  if (callable) return [callable.framework, callable.depth, `${bare}()`];
  if (bare.startsWith("jax.")) {
    const member = bare.slice(4);
    return JAX_INIT_FUNCTIONS.has(member) || JAX_INIT_SUBMODULES.some((m) => bare.startsWith(m + "."))
      ? ["jax", "context", `${bare}()`]
      : null;
  }
  // Keras 3 is multi-backend: a call into `keras` starts TensorFlow only where it builds tensors
  // (ops, layers, models...); `keras.src.*` internals and decorators such as `keras_export`
  // run no backend code (a false positive on real code otherwise).
  if (
    bare.startsWith("keras.") &&
    !KERAS_TENSOR_NAMESPACES.some((p) => bare === `keras.${p}` || bare.startsWith(`keras.${p}.`))
  )
    return null;
  if (bare.startsWith("tensorflow.") || bare.startsWith("keras.")) {
    const tfq = bare.startsWith("keras.") ? `tensorflow.${bare}` : bare;
    if (TF_CONFIG_INIT.includes(tfq) || tfq === "tensorflow.test.is_gpu_available")
      return ["tensorflow", "context", `${bare}()`];
    if (TF_NON_INIT_PREFIXES.some((p) => tfq.startsWith(p))) return null;
    return ["tensorflow", "context", `${bare}()`];
  }
  if (bare.startsWith("cupy.") || bare.startsWith("cupyx.")) return ["cupy", "context", `${bare}()`];
  if (bare.startsWith("numba.cuda.") && bare !== "numba.cuda.jit") return ["numba", "context", `${bare}()`];
  return undefined;
}

/** Keras namespaces whose calls build tensors (and so start the TensorFlow backend under TF). */
const KERAS_TENSOR_NAMESPACES: readonly string[] = [
  "ops",
  "layers",
  "models",
  "Model",
  "Sequential",
  "Input",
  "random",
  "applications",
  "activations",
  "losses",
  "metrics",
  "optimizers",
  "backend",
  "initializers",
  "callbacks",
  "preprocessing",
  "datasets",
];

/** Local name → dotted path bindings of one import statement. */
export function importBindings(imp: SyntaxNode): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (imp.type === "import_statement") {
    for (const n of imp.namedChildren) {
      if (!n) continue;
      if (n.type === "dotted_name") out.push([n.text.split(".")[0], n.text.split(".")[0]]);
      else if (n.type === "aliased_import") {
        const name = n.childForFieldName("name")?.text;
        const alias = n.childForFieldName("alias")?.text;
        if (name && alias) out.push([alias, name]);
      }
    }
    // `import torch.distributed` binds `torch` but imports the submodule: record the full path too.
    for (const n of imp.namedChildren)
      if (n?.type === "dotted_name" && n.text.includes(".")) out.push([`\u0000${n.text}`, n.text]);
  } else if (imp.type === "import_from_statement") {
    // A relative import's path keeps its dots (`from .utils import f`: `.utils.f`; `from . import x`:
    // `.x`): only python/project.ts resolves such a path, against the importing file's folder.
    const modNode = imp.childForFieldName("module_name");
    const mod = modNode?.type === "relative_import" ? modNode.text.replace(/\s+/g, "") : modNode?.text;
    if (!mod) return out;
    const join = (name: string) => (mod.endsWith(".") ? `${mod}${name}` : `${mod}.${name}`);
    for (const n of imp.childrenForFieldName("name")) {
      if (!n) continue;
      if (n.type === "dotted_name") out.push([n.text, join(n.text)]);
      else if (n.type === "aliased_import") {
        const name = n.childForFieldName("name")?.text;
        const alias = n.childForFieldName("alias")?.text;
        if (name && alias) out.push([alias, join(name)]);
      }
    }
    if (imp.namedChildren.some((c) => c?.type === "wildcard_import")) out.push([`\u0000${mod}.*`, mod]);
  }
  return out;
}

/** Node types whose calls run later (or never), not when the enclosing statement runs. */
export const DEFERRED = ["lambda", "function_definition", "class_definition"];

/**
 * The calls of a scope in evaluation order (arguments before the call that receives them), skipping
 * lambdas and nested defs, from its calls and deferred scopes in pre-order (NodeIndex.callsAndScopesIn:
 * no walk over every node from JavaScript). A call's arguments end before it, so evaluation order
 * (post-order) is the order of end offsets, an enclosing call after the calls it encloses.
 */
function callsInOrder(found: ReadonlyArray<{ n: SyntaxNode; start: number; end: number; i: number }>): SyntaxNode[] {
  const out: Array<{ n: SyntaxNode; start: number; end: number; i: number }> = [];
  // Deferred subtrees in pre-order: a call lies in one when it comes after it and inside its range.
  let skipUntil = -1;
  for (const x of found) {
    if (x.start < skipUntil || (x.start === skipUntil && x.end === skipUntil)) continue;
    if (x.n.type === "call") out.push(x);
    else if (x.n.isNamed) skipUntil = x.start === x.end ? -1 : x.end;
  }
  out.sort((a, b) => a.end - b.end || b.start - a.start || b.i - a.i);
  return out.map((x) => x.n);
}

function keyword(args: SyntaxNode | null, name: string): SyntaxNode | null {
  if (!args) return null;
  for (const a of args.namedChildren) {
    if (a?.type === "keyword_argument" && a.childForFieldName("name")?.text === name)
      return a.childForFieldName("value");
  }
  return null;
}

function firstArgOrKeyword(args: SyntaxNode | null, name: string): SyntaxNode | null {
  if (!args) return null;
  const first = args.namedChildren[0];
  if (first && first.type !== "keyword_argument") return first;
  return keyword(args, name);
}

type WriteInfo = Pick<EnvWriteEvent, "variable" | "form" | "value" | "literal" | "nameNode">;

/** Environment writes with literal names performed by one simple statement. */
function envWritesOf(
  stmt: SyntaxNode,
  isEnviron: (n: SyntaxNode | null) => boolean,
  resolve: (n: SyntaxNode | null) => string | null,
): WriteInfo[] {
  const out: WriteInfo[] = [];
  const expr = stmt.type === "expression_statement" ? stmt.namedChildren[0] : null;
  if (!expr) return out;
  if (expr.type === "assignment") {
    // `os.environ["K"] = v`, also chained `a = os.environ["K"] = v`.
    let a: SyntaxNode | null = expr;
    while (a?.type === "assignment") {
      const left = a.childForFieldName("left");
      const right = a.childForFieldName("right");
      if (left?.type === "subscript" && isEnviron(left.childForFieldName("value"))) {
        const key = left.childForFieldName("subscript");
        const name = keyName(key);
        const value = right?.type === "assignment" ? right.childForFieldName("right") : right;
        if (name !== null && value)
          out.push({ variable: name, form: "subscript", value, literal: stringValue(value), nameNode: key });
      }
      a = right?.type === "assignment" ? right : null;
    }
    return out;
  }
  if (expr.type !== "call") return out;
  const fn = expr.childForFieldName("function");
  const args = expr.childForFieldName("arguments");
  const positional =
    args?.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "keyword_argument" && c.type !== "comment") ??
    [];
  if (fn?.type === "attribute" && isEnviron(fn.childForFieldName("object"))) {
    const method = fn.childForFieldName("attribute")?.text;
    if (method === "setdefault" || method === "__setitem__") {
      const name = keyName(positional[0]);
      const value = positional[1] ?? null;
      if (name !== null)
        out.push({
          variable: name,
          form: method === "setdefault" ? "setdefault" : "subscript",
          value,
          literal: stringValue(value),
          nameNode: positional[0],
        });
    } else if (method === "update") {
      for (const p of positional) {
        if (p.type !== "dictionary") continue;
        for (const pair of p.namedChildren) {
          if (pair?.type !== "pair") continue;
          const key = pair.childForFieldName("key");
          const name = keyName(key);
          const value = pair.childForFieldName("value");
          if (name !== null)
            out.push({ variable: name, form: "update", value, literal: stringValue(value), nameNode: key });
        }
      }
      for (const k of args?.namedChildren ?? []) {
        if (k?.type !== "keyword_argument") continue;
        const nameNode = k.childForFieldName("name");
        const name = nameNode?.text;
        const value = k.childForFieldName("value");
        if (name) out.push({ variable: name, form: "update", value, literal: stringValue(value), nameNode });
      }
    }
    return out;
  }
  if (resolve(fn) === "os.putenv") {
    const name = keyName(positional[0]);
    const value = positional[1] ?? null;
    if (name !== null)
      out.push({ variable: name, form: "putenv", value, literal: stringValue(value), nameNode: positional[0] });
  }
  return out;
}

/** Environment reads with literal names anywhere in the tree. */
function envReadsOf(
  mentionsIn: Mentions,
  isEnviron: (n: SyntaxNode | null) => boolean,
  resolve: (n: SyntaxNode | null) => string | null,
  words: readonly string[],
): EnvReadEvent[] {
  const [subs, calls] = readsAmong(
    mentionsIn.nodesIn("subscript", words),
    mentionsIn.nodesIn("call", words),
    mentionsIn,
    isEnviron,
    resolve,
    words,
  );
  return [...subs, ...calls];
}

/** The reads among candidate subscripts and calls: [subscript reads, call reads], each in the candidates' order. */
function readsAmong(
  subscripts: ReadonlyArray<SyntaxNode | null>,
  callNodes: ReadonlyArray<SyntaxNode | null>,
  mentionsIn: Mentions,
  isEnviron: (n: SyntaxNode | null) => boolean,
  resolve: (n: SyntaxNode | null) => string | null,
  words: readonly string[],
): [EnvReadEvent[], EnvReadEvent[]] {
  const out: EnvReadEvent[] = [];
  const viaCall: EnvReadEvent[] = [];
  const mentions = (n: SyntaxNode) => words.some((w) => mentionsIn.within(n.startIndex, n.endIndex, [w]));
  for (const s of subscripts) {
    if (!s || !mentions(s) || !isEnviron(s.childForFieldName("value"))) continue;
    const parent = s.parent;
    if (parent?.type === "assignment" && parent.childForFieldName("left")?.id === s.id) continue;
    if (parent?.type === "delete_statement") continue;
    const key = s.childForFieldName("subscript");
    const name = keyName(key);
    if (name !== null && key) out.push({ kind: "envRead", variable: name, node: s, nameNode: key });
  }
  for (const c of callNodes) {
    if (!c || !mentions(c)) continue;
    const fn = c.childForFieldName("function");
    const q = resolve(fn);
    const isGet =
      fn?.type === "attribute" &&
      isEnviron(fn.childForFieldName("object")) &&
      ["get", "pop"].includes(fn.childForFieldName("attribute")?.text ?? "");
    if (!isGet && q !== "os.getenv") continue;
    const first = c.childForFieldName("arguments")?.namedChildren[0];
    const name = keyName(first);
    if (name !== null && first) viaCall.push({ kind: "envRead", variable: name, node: c, nameNode: first });
  }
  return [out, viaCall];
}

/** Whether a method is decorated `@staticmethod` or `@classmethod` (no instance: the constructor has not run). */
function isStaticOrClassMethod(def: SyntaxNode): boolean {
  const dec = def.parent?.type === "decorated_definition" ? def.parent : null;
  return (
    !!dec &&
    dec.namedChildren.some((d) => {
      const e = d?.type === "decorator" ? d.namedChildren[0] : null;
      return e?.type === "identifier" && (e.text === "staticmethod" || e.text === "classmethod");
    })
  );
}

/**
 * Whether a class is a test case: a base class named `TestCase` or `…TestCase` (unittest, absltest,
 * parameterized, jax's `JaxTestCase`), or a name starting with `Test` (pytest's default
 * `python_classes = Test*`).
 */
function isTestClass(cls: SyntaxNode): boolean {
  if (cls.childForFieldName("name")?.text.startsWith("Test")) return true;
  const bases = cls.childForFieldName("superclasses")?.namedChildren ?? [];
  return bases.some((b) => {
    const last =
      b?.type === "attribute" ? b.childForFieldName("attribute")?.text : b?.type === "identifier" ? b.text : undefined;
    return !!last && last.endsWith("TestCase");
  });
}

/** Whether an `if` statement is the script guard `if __name__ == "__main__":` (either operand order, either quote). */
export function isMainGuard(stmt: SyntaxNode): boolean {
  const cond = stmt.childForFieldName("condition");
  if (cond?.type !== "comparison_operator" || cond.namedChildCount !== 2 || cond.children[1]?.type !== "==")
    return false;
  const [a, b] = [cond.namedChildren[0], cond.namedChildren[1]];
  const isName = (n: SyntaxNode | null) => n?.type === "identifier" && n.text === "__name__";
  const isMain = (n: SyntaxNode | null) => n?.type === "string" && stringValue(n) === "__main__";
  return (isName(a) && isMain(b)) || (isMain(a) && isName(b));
}

/** What walking one statement did: its events and calls, the state it left, what it looked up. */
export interface WalkRecord {
  /** The walk state the statement was walked in ({@link TimelineWalker.stateKey}). */
  entry: string;
  /** For an uncalled function's record: its name and the offset of its definition in its top-level statement. */
  function: { name: string; offset: number } | undefined;
  exit: { nvmlCheck: boolean; kinetoDaemon: boolean; torchLoaded: boolean };
  events: EventRecord[];
  /**
   * `at` counts the events before the call from the statement's first event. `live`: the call as
   * last handed out ({@link Memo.call}), with the count of events before the statement then.
   */
  calls: Array<{
    ref: NodeRef;
    path: string | null;
    at: number;
    live?: { memo: Memo; base: number; call: TimelineCall };
  }>;
  /** Functions the walk inlined (everInlined). */
  inlined: string[];
  deps: Deps;
  /** The statements whose nodes the record names. */
  owners: Set<StatementFacts>;
}

/** The environment writes of one expression statement (for envWritesAnywhere). */
interface WritesRecord {
  statement: NodeRef;
  inFunction: boolean;
  nested: boolean;
  writes: EventRecord[];
}

/**
 * The facts of one top-level statement, kept across edits while tree-sitter reuses its subtree:
 * what it binds (context-free), and what the walk, the reads and the writes found in it (reused
 * while the names they looked up are bound as before).
 */
export interface StatementFacts {
  /** The statement's subtree in the parser (tree-sitter reuses a subtree across an incremental parse). */
  id: number;
  text: string;
  /** The statement node in the tree of the lint that last matched these facts (`epoch`). */
  node: SyntaxNode;
  /** The node's offsets and type (read from the parser once per lint). */
  start: number;
  end: number;
  type: string;
  epoch: number;
  /** The epoch of the lint that made these facts (Memo.fresh). */
  born: number;
  imports: Array<[string, string]>;
  def: { name: string; ref: NodeRef } | null;
  /** The module-level class the statement defines. */
  cls: { name: string; ref: NodeRef } | null;
  assignments: Array<{ name: string; type: string; text: string; ref: NodeRef }>;
  main?: WalkRecord;
  fn?: WalkRecord;
  reads?: { subs: EventRecord[]; calls: EventRecord[]; deps: Deps };
  writes?: { list: WritesRecord[]; deps: Deps };
}

/**
 * The per-statement facts of one document, kept from one lint to the next (lint.ts keeps one per
 * tree: `lintPython(..., { previousTree, incremental: true })`). Opaque to callers.
 */
export class ModelCache {
  /** @internal Facts of the statements of the last tree, in document order. */
  statements: StatementFacts[] = [];
  /** @internal Options, frameworks and word lists the records were made under. */
  key = "";
  /** @internal The bindings of the last model (to find the names bound differently now). */
  bindings: Bindings | null = null;
  /**
   * @internal Function name → the facts of the statement defining it, of the last model. Compared
   * by identity: kept facts mean the same subtree at the same place in the statement order, while
   * the same text elsewhere (a second `def f` written like the first) is another definition.
   */
  functionDefs = new Map<string, StatementFacts>();
  /** @internal Class name → the facts of the statement defining it, of the last model (as functionDefs). */
  classDefs = new Map<string, StatementFacts>();
  /** @internal */
  epoch = 0;
  /** @internal The text of the last model (the facts' offsets are in it). */
  text: string | undefined;
}

/** The per-lint side of a {@link ModelCache}: matching statements, references to nodes and back. */
export class Memo {
  readonly facts: StatementFacts[] = [];
  private readonly starts: number[] = [];
  private readonly materialized = new Map<NodeRef, SyntaxNode>();
  readonly track: Tracker = { deps: null };

  /**
   * Matches this tree's top-level statements with the kept facts. A statement without syntax
   * errors whose text is a kept statement's text parses to the same subtree (a complete top-level
   * statement's parse depends only on its tokens), so its facts hold, found again by offsets.
   * (tree-sitter does not keep the subtree of a statement that holds INDENT/DEDENT tokens across
   * an incremental parse, so node ids cannot be the key.) Two ways to know the texts are equal:
   * - by place (with `change`, where this text differs from the last one): a statement inside the
   *   unchanged prefix, or inside the unchanged tail, with the extent and type of the kept statement
   *   at the same (shifted) offset; no statement text is read or hashed;
   * - by text, for the statements left: one whose text occurs once among them and once among the
   *   kept statements left (facts name the statement they came from, so a text that repeats is
   *   analysed afresh).
   * @param change where `text` differs from the text of the last lint (keptText.ts textChange);
   *   absent: every statement is matched by text.
   * @param treeHasError whether the tree has any syntax error (when not, no statement is asked).
   * @param shapes each statement's end offset and type, aligned with `statements` (ModuleTrees.statementShapes: kept per chunk); absent: asked of each node.
   */
  constructor(
    readonly cache: ModelCache,
    statements: SyntaxNode[],
    text: string,
    change?: TextChange,
    treeHasError = true,
    shapes?: { ends: number[]; types: string[] },
  ) {
    const epoch = ++cache.epoch;
    const olds = cache.statements;
    const ends = shapes?.ends ?? statements.map((st) => st.endIndex);
    const types = shapes?.types ?? statements.map((st) => st.type);
    const reusable = (prev: StatementFacts | null | undefined, i: number): prev is StatementFacts =>
      !!prev && prev.epoch === epoch - 1 && prev.type === types[i] && !(treeHasError && statements[i].hasError);
    const matched: Array<StatementFacts | undefined> = new Array(statements.length);
    if (change) {
      const delta = change.newEnd - change.oldEnd;
      let j = 0;
      statements.forEach((st, i) => {
        const s = st.startIndex,
          e = ends[i];
        const shift = e <= change.start ? 0 : s >= change.newEnd ? delta : null;
        if (shift === null) return;
        while (j < olds.length && olds[j].start < s - shift) j++;
        const prev = olds[j];
        // Marked as this lint's at once (no set of the matched: each keystroke matches nearly all).
        if (prev && prev.start === s - shift && prev.end === e - shift && reusable(prev, i)) {
          matched[i] = prev;
          prev.epoch = epoch;
        }
      });
    }
    const left = olds.filter((f) => f.epoch !== epoch);
    const old = new Map<string, StatementFacts | null>();
    for (const f of left) old.set(f.text, old.has(f.text) ? null : f);
    const bodies = statements.map((st, i) => (matched[i] ? "" : text.slice(st.startIndex, ends[i])));
    const count = new Map<string, number>();
    bodies.forEach((b, i) => {
      if (!matched[i]) count.set(b, (count.get(b) ?? 0) + 1);
    });
    statements.forEach((st, i) => {
      let f = matched[i];
      if (!f) {
        const prev = count.get(bodies[i]) === 1 ? old.get(bodies[i]) : null;
        f = reusable(prev, i) ? prev : undefined;
      }
      if (f) {
        f.node = st;
        f.id = st.id;
        f.epoch = epoch;
        f.start = st.startIndex;
        f.end = ends[i];
      } else f = this.fresh(st, bodies[i], epoch, ends[i], types[i]);
      this.facts.push(f);
      this.starts.push(st.startIndex);
    });
  }

  /** Facts of a statement seen for the first time: what it binds. */
  private fresh(st: SyntaxNode, body: string, epoch: number, end: number, type: string): StatementFacts {
    const f: StatementFacts = {
      id: st.id,
      text: body,
      node: st,
      start: st.startIndex,
      end,
      type,
      epoch,
      born: epoch,
      imports: [],
      def: null,
      cls: null,
      assignments: [],
    };
    for (const n of st.descendantsOfType(["import_statement", "import_from_statement", "assignment"])) {
      if (!n) continue;
      if (n.type !== "assignment") {
        f.imports.push(...importBindings(n));
        continue;
      }
      const left = n.childForFieldName("left");
      const right = n.childForFieldName("right");
      if (left?.type === "identifier" && right)
        f.assignments.push({ name: left.text, type: right.type, text: right.text, ref: this.refIn(f, right) });
    }
    const def = type === "decorated_definition" ? st.childForFieldName("definition") : st;
    const name = def?.type === "function_definition" ? def.childForFieldName("name")?.text : undefined;
    if (def && name) f.def = { name, ref: this.refIn(f, def) };
    const clsName = def?.type === "class_definition" ? def.childForFieldName("name")?.text : undefined;
    if (def && clsName) f.cls = { name: clsName, ref: this.refIn(f, def) };
    return f;
  }

  private refIn(owner: StatementFacts, n: SyntaxNode): NodeRef {
    const ref = {
      owner,
      start: n.startIndex - owner.node.startIndex,
      end: n.endIndex - owner.node.startIndex,
      type: n.type,
    };
    this.materialized.set(ref, n);
    return ref;
  }

  /** The facts of the top-level statement containing `n`. */
  ownerOf(n: SyntaxNode): StatementFacts {
    const at = n.startIndex;
    let lo = 0,
      hi = this.starts.length - 1,
      best = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] <= at) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return this.facts[best];
  }

  ref(n: SyntaxNode): NodeRef {
    return this.refIn(this.ownerOf(n), n);
  }

  /**
   * The node of `ref` in this lint's tree. The owner's subtree is the one the reference was taken
   * in (same parser subtree, same text), so the node is there: found by offsets, checked by type.
   * @throws Error when it is not (a bug: the caller reuses facts it should have dropped).
   */
  node(ref: NodeRef): SyntaxNode {
    let n = this.materialized.get(ref);
    if (n) return n;
    const owner = ref.owner.node;
    const start = owner.startIndex + ref.start,
      end = owner.startIndex + ref.end;
    let m: SyntaxNode | null = owner.descendantForIndex(start, end);
    while (m && !(m.startIndex === start && m.endIndex === end && m.type === ref.type))
      m = m.startIndex >= owner.startIndex && m.id !== owner.id ? m.parent : null;
    if (!m || ref.owner.epoch !== this.cache.epoch)
      throw new Error(`stale statement facts: no ${ref.type} at ${start}-${end}`);
    n = m;
    this.materialized.set(ref, n);
    return n;
  }

  /** An event as a record. */
  record(e: TimelineEvent, owners: Set<StatementFacts>): EventRecord {
    const refs: Record<string, NodeRef | null> = {};
    const plain: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (k === "kind" || k === "range") continue;
      if ((NODE_FIELDS as readonly string[]).includes(k)) {
        const r = v ? this.ref(v as SyntaxNode) : null;
        if (r) owners.add(r.owner);
        refs[k] = r;
      } else plain[k] = v;
    }
    return { kind: e.kind, refs, plain };
  }

  /**
   * A record as an event of this lint's tree. Its nodes (and a write's `range`) are found when read
   * (in this lint's tree, once per lint): most replayed events are only counted or compared by
   * kind and variable (a 5,000-line file has ~900 of them, and finding each node again is a call
   * into the parser). The object is made once per record and handed out again by later lints that
   * keep the record (no allocation per event and keystroke); nothing writes to events.
   */
  event(r: EventRecord): TimelineEvent {
    if (r.live) {
      r.live.memo = this;
      return r.live.event;
    }
    const e: Record<string, unknown> = { kind: r.kind, ...r.plain };
    const live: NonNullable<EventRecord["live"]> = { memo: this, event: e as unknown as TimelineEvent };
    for (const k in r.refs) {
      const ref = r.refs[k];
      if (ref) Object.defineProperty(e, k, { enumerable: true, get: () => live.memo.node(ref) });
      else e[k] = ref;
    }
    if (r.kind === "envWrite") {
      Object.defineProperty(e, "range", {
        enumerable: true,
        get: () => {
          if (live.rangeMemo !== live.memo || !live.range) {
            live.range = nodeRange(e.statement as SyntaxNode);
            live.rangeMemo = live.memo;
          }
          return live.range;
        },
      });
    }
    r.live = live;
    return live.event;
  }

  /**
   * A timeline call whose node is found on first use (once per lint). As with {@link event}, the
   * object is made once and handed out again while the events before the statement are as many as
   * then (a flat script has thousands of calls at module level: a new object for each at every
   * keystroke was ~5 ms of a 5,000-line one's lint); nothing writes to calls.
   */
  call(c: WalkRecord["calls"][number], base: number): TimelineCall {
    if (c.live && c.live.base === base) {
      c.live.memo = this;
      return c.live.call;
    }
    const live: { memo: Memo; base: number; call: TimelineCall } = {
      memo: this,
      base,
      call: undefined as unknown as TimelineCall,
    };
    let node: SyntaxNode | undefined, nodeMemo: Memo | undefined;
    live.call = {
      path: c.path,
      at: c.at + base,
      get node() {
        if (nodeMemo !== live.memo || !node) {
          node = live.memo.node(c.ref);
          nodeMemo = live.memo;
        }
        return node;
      },
    };
    c.live = live;
    return live.call;
  }
}

/** Whether a record looked up a name bound differently now, or names a statement that changed. */
function stale(
  r: { deps: Deps; owners?: Set<StatementFacts> },
  changed: ChangedNames,
  epoch: number,
  gone: readonly StatementFacts[] | null,
): boolean {
  if (r.owners && r.owners.size > 0) {
    if (gone) {
      for (const g of gone) if (r.owners.has(g)) return true;
    } else for (const o of r.owners) if (o.epoch !== epoch) return true;
  }
  const d = r.deps;
  const m = (d.masks ??= masksOf(d));
  return (
    ((m[0] & changed.masks[0]) !== 0 && meets(d.resolved, changed.resolved)) ||
    ((m[1] & changed.masks[1]) !== 0 && meets(d.values, changed.values)) ||
    ((m[2] & changed.masks[2]) !== 0 && meets(d.callees, changed.callees))
  );
}

/**
 * A 32-bit summary of a set of names, one bit per name (its FNV-1a hash mod 32): two sets whose
 * summaries share no bit share no name, so most of the ~1,800 records of a 5,000-line file are
 * found fresh at a keystroke without a lookup.
 */
function namesMask(names: ReadonlySet<string>): number {
  let m = 0;
  for (const n of names) {
    let h = 0x811c9dc5;
    for (let i = 0; i < n.length; i++) h = Math.imul(h ^ n.charCodeAt(i), 0x01000193);
    m |= 1 << (h & 31);
  }
  return m;
}

/** {@link namesMask} of a record's names or of the changed names, per kind. */
const masksOf = (d: Pick<Deps, "resolved" | "values" | "callees">): [number, number, number] => [
  namesMask(d.resolved),
  namesMask(d.values),
  namesMask(d.callees),
];

/** Whether the two sets share a name (run for every kept record at each keystroke: no allocation). */
function meets(mine: ReadonlySet<string>, theirs: ReadonlySet<string>): boolean {
  if (mine.size === 0 || theirs.size === 0) return false;
  // The names bound differently are few: look each up among a record's (not the other way round).
  if (theirs.size <= mine.size) {
    for (const n of theirs) if (mine.has(n)) return true;
  } else for (const n of mine) if (theirs.has(n)) return true;
  return false;
}

/** The bindings of a model whose statements' facts are kept: from the facts, nodes found on use. */
export function bindingsOf(memo: Memo): {
  b: Bindings;
  functionDefs: Map<string, StatementFacts>;
  classDefs: Map<string, StatementFacts>;
} {
  const b: Bindings = {
    symbols: new Map(),
    functions: new Map(),
    classes: new Map(),
    assignments: new Map(),
    frameworks: new Set(),
  };
  const functionDefs = new Map<string, StatementFacts>();
  const classDefs = new Map<string, StatementFacts>();
  for (const f of memo.facts) {
    for (const [local, path] of f.imports) {
      b.symbols.set(local, path);
      const fw = frameworkOfModule(path);
      if (fw) b.frameworks.add(fw);
    }
  }
  for (const f of memo.facts) {
    if (f.cls) {
      b.classes.set(f.cls.name, f.cls.ref.start === 0 && f.cls.ref.type === f.type ? f.node : memo.node(f.cls.ref));
      classDefs.set(f.cls.name, f);
    }
    if (!f.def) continue;
    b.functions.set(f.def.name, f.def.ref.start === 0 && f.def.ref.type === f.type ? f.node : memo.node(f.def.ref));
    functionDefs.set(f.def.name, f);
  }
  for (const f of memo.facts) {
    for (const a of f.assignments) {
      const list = b.assignments.get(a.name) ?? [];
      const ref = a.ref;
      list.push({ type: a.type, text: a.text, start: f.start + ref.start, node: () => memo.node(ref) });
      b.assignments.set(a.name, list);
    }
  }
  return { b, functionDefs, classDefs };
}

/** The names bound differently than at the last lint, by what a record looked up about them, with each set's {@link namesMask}. */
interface ChangedNames {
  resolved: Set<string>;
  values: Set<string>;
  callees: Set<string>;
  masks: [number, number, number];
}

/**
 * The names bound differently in `now` than in `before`, among those bound by statements that
 * changed: for resolve (the import binding or alias), for valueOf (the values), for inlining (the
 * function definition or an import of the name).
 */
export function changedNames(
  memo: Memo,
  cache: ModelCache,
  now: Bindings,
  nowDefs: Map<string, StatementFacts>,
  nowClassDefs: Map<string, StatementFacts>,
): ChangedNames {
  const out: ChangedNames = {
    resolved: new Set<string>(),
    values: new Set<string>(),
    callees: new Set<string>(),
    masks: [0, 0, 0],
  };
  const before = cache.bindings;
  if (!before) return out;
  const names = new Set<string>();
  const touched = (f: StatementFacts) => {
    for (const [l] of f.imports) names.add(l);
    if (f.def) names.add(f.def.name);
    if (f.cls) names.add(f.cls.name);
    for (const a of f.assignments) names.add(a.name);
  };
  // The facts this lint made, and those of the last lint it did not match (no sets of all facts:
  // every fact of this lint has its epoch, a new one was born in it).
  const epoch = memo.cache.epoch;
  for (const f of memo.facts) if (f.born === epoch) touched(f);
  for (const f of cache.statements) if (f.epoch !== epoch) touched(f);
  const aliasOf = (b: Bindings, n: string) => {
    const s = b.symbols.get(n);
    if (s) return `=${s}`;
    const v = b.assignments.get(n);
    return v && v.length === 1 && (v[0].type === "attribute" || v[0].type === "identifier") && v[0].text !== n
      ? `~${v[0].text}`
      : "";
  };
  const valuesOf = (b: Bindings, n: string) =>
    (b.assignments.get(n) ?? []).map((v) => `${v.type}:${v.text}`).join("\u0001");
  // The definition by its statement's facts (ModelCache.functionDefs), not its text: a second
  // `def f` with the first one's text is another subtree, which a kept inlining did not walk.
  // A class by its statement's facts the same way (inlined constructors and methods).
  const fnChanged = (n: string) =>
    before.symbols.has(n) !== now.symbols.has(n) ||
    cache.functionDefs.get(n) !== nowDefs.get(n) ||
    cache.classDefs.get(n) !== nowClassDefs.get(n);
  for (const n of names) {
    if (aliasOf(before, n) !== aliasOf(now, n)) out.resolved.add(n);
    if (valuesOf(before, n) !== valuesOf(now, n)) out.values.add(n);
    if (fnChanged(n)) out.callees.add(n);
  }
  out.masks = masksOf(out);
  return out;
}

/** Drops the records of `memo`'s statements that may not hold in this version of the file. */
export function dropStale(memo: Memo, key: string, changed: ChangedNames): void {
  const epoch = memo.cache.epoch;
  const all = key !== memo.cache.key;
  // A record is stale when one of its owners was not matched by this lint. Its owners were all
  // facts of the last lint (a record made then names facts of then; one kept since then names
  // facts each lint matched, or it was dropped), so the facts of the last lint that this one did
  // not match are the owners to look for: after a keystroke one or two, asked of each record,
  // instead of each record's owners asked for their epoch. (Called before the cache's statements
  // become this lint's.)
  const unmatched = memo.cache.statements.filter((f) => f.epoch !== epoch);
  const gone = unmatched.length <= 8 ? unmatched : null;
  for (const f of memo.facts) {
    if (f.main && (all || stale(f.main, changed, epoch, gone))) delete f.main;
    if (f.fn && (all || stale(f.fn, changed, epoch, gone))) delete f.fn;
    if (f.reads && (all || stale(f.reads, changed, epoch, gone))) delete f.reads;
    if (f.writes && (all || stale(f.writes, changed, epoch, gone))) delete f.writes;
  }
}
