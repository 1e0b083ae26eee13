/**
 * The timeline walk (pass 2 of python/model.ts `buildModel`): the events of python/events.ts in
 * execution order at module level (including `if __name__ == "__main__":` blocks and the bodies of
 * module functions called at top level, two levels deep), then each module function the module never
 * calls as its own timeline, then the environment reads anywhere. With a model's kept facts
 * (python/cache.ts `Memo`) a top-level statement's walk is recorded, and replayed at the next lint
 * while what it looked up is bound as before. Also what the walk reads of one statement: its import
 * bindings, environment writes and reads, and the calls that initialise CUDA (ground truth).
 */
import type { SyntaxNode } from "./parser";
import type { ModuleTrees } from "./moduleTrees";
import { enclosingFunction, keyName, stringValue } from "./parser";
import {
  type Framework,
  type InitDepth,
  frameworkOfModule,
  isEagerInitModule,
  eagerLibraryOf,
  TORCH_CUDA_INIT,
  TORCH_ACCELERATOR_INIT,
  TORCH_OTHER_INIT,
  EAGER_INIT_DEPTH,
  EAGER_INIT_FRAMEWORK,
  INIT_CALLABLES,
  JAX_INIT_FUNCTIONS,
  JAX_INIT_SUBMODULES,
  TF_NON_INIT_PREFIXES,
  TF_CONFIG_INIT,
  TF_DEVICE_CONFIG,
} from "../frameworks";
import { applicableEntries, importInitNote, INIT_CATALOGUE, pinnedImportEntry } from "../initCatalogue";
import type { CatalogueEntry } from "../initCatalogue";

/** The depth of a pinned catalogue entry; for one with `through`, that of the library it imports (its pinned entry). */
function pinnedDepth(
  e: CatalogueEntry | null,
  pins: Readonly<Record<string, string>> | undefined,
): InitDepth | undefined {
  if (!e || !pins) return undefined;
  return e.through ? (pinnedImportEntry(e.through, pins)?.depth ?? e.depth) : e.depth;
}
import {
  magicEvents,
  nodeRange,
  type EnvReadEvent,
  type EnvWriteEvent,
  type FunctionTimeline,
  type InitEvent,
  type MagicLine,
  type TimelineCall,
  type TimelineEvent,
} from "./events";
import type { Memo, StatementFacts, WalkRecord } from "./cache";
import type { Bindings, Mentions, ModelOptions, NodeIndex, Queries } from "./model";

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
  /** python/cache.ts `namesMask` of each set, once the record the names belong to is complete (made on first use by `stale`). */
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
  // Asked twice per lint of a document (the model's key and the reads): found once, kept with the bindings.
  return (b.envWords ??= computeEnvWords(b));
}
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
    /**
     * The statements that write the environment, kept per top-level statement from one lint to
     * the next (model.ts statementWritesKept); absent: found in the text at the first ask.
     */
    private readonly keptWrites: (() => SyntaxNode[]) | null = null,
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
            this.index.inStatement(st, ["subscript"]),
            this.index.inStatement(st, ["call"]),
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
    const wanted = this.options.asImported ? null : this.functionsThatMatter();
    for (const [name, def] of this.b.functions) {
      if (this.everInlined.has(name) && this.options.asImported !== "functions") continue;
      if (wanted && !wanted.has(name)) continue;
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
   * The module functions whose own timeline can hold what the rules read of one: an environment
   * write (GPU001) or a `jax_platforms` update (GPU029). A function holds one itself, or names (as a
   * whole word) a function, class or method that does: the walk inlines callees by those names
   * (module functions, constructors, methods on `self` or on an instance), so the names are followed
   * to a fixed point. The other functions' timelines would hold neither, and walking each of them was
   * a quarter of a full lint of a 5,000-line file of 453 functions (BENCHMARKS.md).
   */
  private functionsThatMatter(): Set<string> {
    const starts = this.writeSpan().starts;
    const holds = (n: SyntaxNode) =>
      starts.some((x) => x >= n.startIndex && x < n.endIndex) ||
      this.mentions.within(n.startIndex, n.endIndex, JAX_PLATFORMS_WORD);
    // The names of project functions that write a startup variable (python/project.ts): a call of
    // one is a write on the caller's timeline.
    const words: string[] = this.projectWriters();
    const out = new Set<string>();
    const classesDone = new Set<string>();
    const named = (n: SyntaxNode) => words.length > 0 && this.mentions.within(n.startIndex, n.endIndex, words, true);
    for (let changed = true; changed;) {
      changed = false;
      for (const [name, def] of this.b.functions) {
        if (out.has(name) || !(holds(def) || named(def))) continue;
        out.add(name);
        words.push(name);
        changed = true;
      }
      for (const [cls, node] of this.b.classes) {
        if (classesDone.has(cls) || !(holds(node) || named(node))) continue;
        classesDone.add(cls);
        words.push(cls, ...this.methodsOf(cls).keys());
        changed = true;
      }
    }
    return out;
  }

  /**
   * The imported names bound to project functions that write a startup variable first (`from train
   * import train`). Where the index already holds the project's writers' names (ProjectLookup
   * `keptWriterNames`: the CLI, whose prefilter looks for them), only a path whose last name is one
   * of them is resolved: a package's re-export keeps the name, and resolving every imported name
   * read each imported package's `__init__.py` (on python3-torch's own modules, a fifth of a cold
   * CLI run: BENCHMARKS.md). The editor, which does not keep the scan, resolves each name.
   */
  private projectWriters(): string[] {
    const project = this.options.project;
    if (!project?.callableWrite || !project.isProjectFunction) return [];
    const writers = project.keptWriterNames?.();
    if (writers && !writers.size) return [];
    const out = new Set<string>();
    for (const [name, path] of this.b.symbols) {
      if (writers && !writers.has(path.slice(path.lastIndexOf(".") + 1))) continue;
      if (project.isProjectFunction(path) && project.callableWrite(path)) out.add(name);
    }
    return [...out];
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
        this.visitDefaults(stmt, depth);
        return;
      case "if_statement":
        if (this.options.asImported && depth === 0 && !inFunction && !nested && isMainGuard(stmt)) return;
        this.walkCompound(stmt, depth, inFunction);
        return;
      case "class_definition": {
        const body = stmt.childForFieldName("body");
        if (body)
          for (const s of body.namedChildren) {
            if (!s) continue;
            if (s.type === "function_definition") this.visitDefaults(s, depth);
            else if (s.type === "decorated_definition") this.visitDefaults(s.childForFieldName("definition"), depth);
            else this.walkStatement(s, depth, inFunction, true);
          }
        return;
      }
      case "decorated_definition":
        for (const d of stmt.namedChildren) if (d?.type === "decorator") this.visitCalls(d, depth);
        this.visitDefaults(stmt.childForFieldName("definition"), depth);
        return;
      default:
        if (COMPOUND.has(stmt.type)) this.walkCompound(stmt, depth, inFunction);
        else {
          this.visitCalls(stmt, depth);
          this.recordEnv(stmt, inFunction, nested);
        }
    }
  }

  /**
   * The calls in a function definition's default values, which Python evaluates when the `def`
   * statement runs (at import for a module's or a class body's functions), not when the function is
   * called: `def call(self, x, batch_size=tf.constant(1))` starts TensorFlow at import (Python
   * reference, "Function definitions": "Default parameter values are evaluated from left to right
   * when the function definition is executed"). Annotations are left out (deferred under PEP 563/649).
   */
  private visitDefaults(def: SyntaxNode | null, depth: number): void {
    if (def?.type !== "function_definition") return;
    for (const p of def.childForFieldName("parameters")?.namedChildren ?? []) {
      if (p?.type !== "default_parameter" && p?.type !== "typed_default_parameter") continue;
      const value = p.childForFieldName("value");
      // Most defaults are literals and names (`lr=1e-3`, `device=None`): only a value with a call
      // (an opening parenthesis in its text) is walked; its calls are looked up in its statement's.
      if (value && value.text.includes("(")) this.visitCalls(value, depth);
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
          what: importShown(stmt, path),
          note: `it runs ${own.what} at ${own.where}`,
          project: own,
        });
      } else if (eager) {
        // The unpinned entry, else (a project whose pin selects an older entry) the catalogue's entry that
        // initialises; a catalogued submodule (`magic_pdf.tools.common`) has its own entries.
        const lib = eagerLibraryOf(path, this.options.eagerInitModules);
        const pinned = this.options.libraryPins ? pinnedImportEntry(lib, this.options.libraryPins) : null;
        const note = pinned
          ? importInitNote(lib, applicableEntries(this.options.libraryPins))
          : (importInitNote(lib) ?? importInitNote(lib, INIT_CATALOGUE));
        this.events.push({
          kind: "init",
          node: stmt,
          framework: framework ?? EAGER_INIT_FRAMEWORK.get(lib) ?? "torch",
          depth: pinnedDepth(pinned, this.options.libraryPins) ?? EAGER_INIT_DEPTH.get(lib) ?? "context",
          what: importShown(stmt, path),
          ...(note ? { note } : {}),
        });
      } else if (framework === "torch" && this.kinetoDaemon && !this.torchLoaded)
        this.events.push({
          kind: "init",
          node: stmt,
          framework: "torch",
          depth: "nvml",
          what: `${importShown(stmt, path)} with KINETO_USE_DAEMON=1`,
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

  /** Whether an init event is on the walk so far (the module level's, and the function's own timeline). */
  private initialisedSoFar(): boolean {
    for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i].kind === "init") return true;
    return false;
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
    // In the editor the writing statements are kept with each top-level statement's facts: finding
    // them in the whole text at every lint was two thirds of a keystroke's lint in a 5,000-line file.
    const writing = this.keptWrites
      ? this.keptWritesAside(this.keptWrites)
      : this.mentions
          .nodesIn("expression_statement", this.writeWords, true)
          .filter((st) => envWritesOf(st, this.q.isEnviron, this.q.resolve).length > 0);
    // TensorFlow's device configuration fails after TensorFlow started (GPU012), as a write of a
    // startup variable has no effect after CUDA did: a project module whose import starts it matters
    // before such a call too. Their names are rare: the index finds them without a walk.
    const tfConfig = this.mentions.nodesIn("expression_statement", TF_DEVICE_CONFIG_WORDS, true);
    // A removal (`del os.environ[K]`, `os.environ.pop(K)`; GPU001) asks as a write does. Rare: found
    // without a walk, in the editor and the CLI alike.
    // A `del` statement names its keyword: looked up by it, not by the environment's words, which
    // every statement reading os.environ names (in the editor, without the node index, each such
    // top-level statement was walked whole at every keystroke: 14 ms of a 5,000-line file's lint).
    const removing = [
      ...this.mentions.nodesIn("delete_statement", DEL_WORD, true),
      ...this.mentions.nodesIn("expression_statement", REMOVE_WORDS, true),
    ].filter((st) => envDeletesOf(st, this.q.isEnviron).length > 0);
    const asking = tfConfig.length || removing.length ? [...writing, ...tfConfig, ...removing] : writing;
    let limit = -1;
    for (const st of asking) {
      let top: SyntaxNode = st,
        inDef = false;
      for (let p = st.parent; p && p.type !== "module"; p = p.parent) {
        top = p;
        if (p.type === "function_definition" || p.type === "class_definition" || p.type === "lambda") inDef = true;
      }
      limit = inDef ? Infinity : Math.max(limit, top.startIndex);
    }
    return (this.writeSpanKept = { limit, starts: asking.map((st) => st.startIndex) });
  }

  /**
   * `keptWrites()` with the statement being recorded left as it was: finding a statement's writes
   * tracks that statement's names in the memo's tracker, which the walk uses for its own statement.
   */
  private keptWritesAside(keptWrites: () => SyntaxNode[]): SyntaxNode[] {
    const saved = this.memo ? this.memo.track.deps : null;
    try {
      return keptWrites();
    } finally {
      if (this.memo) this.memo.track.deps = saved;
    }
  }

  /**
   * A call of a project function that initialises CUDA (python/project.ts), as an init event here;
   * else null. In the linted file, once something on the walk initialised, a project function that
   * writes a startup variable before it initialises anything itself is appended first as a
   * `projectWrite` event (GPU001 reports the call).
   */
  private projectCall(call: SyntaxNode, fn: SyntaxNode | null): InitEvent | null {
    const project = this.options.project;
    if (!project || !fn || (fn.type !== "identifier" && fn.type !== "attribute")) return null;
    const wanted = this.projectWanted();
    const late = !this.options.asImported && !!project.callableWrite && this.initialisedSoFar();
    if (!wanted && !late) return null;
    const path = this.q.resolve(fn);
    if (!path || path.includes("()")) return null;
    const write = late ? project.callableWrite!(path) : null;
    if (write)
      this.events.push({
        kind: "projectWrite",
        node: call,
        variable: write.variable,
        what: `${fn.text}()`,
        project: write,
      });
    if (!wanted) return null;
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
      (stmt.type !== "expression_statement" && stmt.type !== "delete_statement") ||
      !this.mentions.within(stmt.startIndex, stmt.endIndex, this.writeWords, true)
    )
      return;
    for (const d of envDeletesOf(stmt, this.q.isEnviron))
      this.events.push({ kind: "envDelete", variable: d.variable, node: stmt, nameNode: d.nameNode });
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

/**
 * An import of `path` (one of {@link importBindings}' paths of `stmt`) as the user wrote it, for a
 * message: `import torch.cuda`, or `from mmengine.runner import Runner` for a `from` import (whose
 * path is `mmengine.runner.Runner`, which no `import` statement could import).
 */
export function importShown(stmt: SyntaxNode, path: string): string {
  const mod = stmt.type === "import_from_statement" ? stmt.childForFieldName("module_name") : null;
  if (!mod) return `import ${path}`;
  const written = mod.type === "relative_import" ? mod.text.replace(/\s+/g, "") : mod.text;
  const prefix = written.endsWith(".") ? written : `${written}.`;
  return path.startsWith(prefix) ? `from ${written} import ${path.slice(prefix.length)}` : `import ${path}`;
}

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

/**
 * The last names of TensorFlow's device-configuration calls ({@link TF_DEVICE_CONFIG}), which raise
 * RuntimeError once the runtime initialised: a statement naming one asks the project's modules what
 * their imports start, as a startup-variable write does.
 */
const TF_DEVICE_CONFIG_WORDS: readonly string[] = [
  ...new Set([...TF_DEVICE_CONFIG].map((p) => p.slice(p.lastIndexOf(".") + 1))),
];

/** Node types whose calls run later (or never), not when the enclosing statement runs. */
export const DEFERRED = ["lambda", "function_definition", "class_definition"];
/** The JAX option GPU029 looks for in a function's timeline. */
const JAX_PLATFORMS_WORD: readonly string[] = ["jax_platforms"];

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
  // The positional arguments, read only for a call of the environment's methods or of os.putenv
  // (each child of the argument list is a call into the parser; most calls are neither).
  const positionalOf = (): SyntaxNode[] =>
    args?.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "keyword_argument" && c.type !== "comment") ??
    [];
  if (fn?.type === "attribute" && isEnviron(fn.childForFieldName("object"))) {
    const positional = positionalOf();
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
    const positional = positionalOf();
    const name = keyName(positional[0]);
    const value = positional[1] ?? null;
    if (name !== null)
      out.push({ variable: name, form: "putenv", value, literal: stringValue(value), nameNode: positional[0] });
  }
  return out;
}

/** The word a removal by `os.environ.pop(K)` names (walker.ts writeSpan). */
const REMOVE_WORDS: readonly string[] = ["pop"];
/** The keyword of every `del` statement (walker.ts writeSpan). */
const DEL_WORD: readonly string[] = ["del"];

/**
 * The environment variables with literal names that one statement removes: `del os.environ["K"]`
 * (each subscript of the environment among the deleted targets) and `os.environ.pop("K"[, d])` as a
 * statement of its own (events.ts `EnvDeleteEvent`).
 */
function envDeletesOf(
  stmt: SyntaxNode,
  isEnviron: (n: SyntaxNode | null) => boolean,
): Array<{ variable: string; nameNode: SyntaxNode }> {
  const out: Array<{ variable: string; nameNode: SyntaxNode }> = [];
  const add = (key: SyntaxNode | null | undefined) => {
    const name = keyName(key ?? null);
    if (name !== null && key) out.push({ variable: name, nameNode: key });
  };
  if (stmt.type === "delete_statement") {
    const target = stmt.namedChildren[0];
    const targets = target?.type === "expression_list" ? target.namedChildren : [target];
    for (const t of targets)
      if (t?.type === "subscript" && isEnviron(t.childForFieldName("value"))) add(t.childForFieldName("subscript"));
    return out;
  }
  const expr = stmt.namedChildren[0];
  const fn = expr?.type === "call" ? expr.childForFieldName("function") : null;
  if (
    fn?.type === "attribute" &&
    fn.childForFieldName("attribute")?.text === "pop" &&
    isEnviron(fn.childForFieldName("object"))
  )
    add(expr!.childForFieldName("arguments")?.namedChildren.find((c) => c?.type !== "comment"));
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
  const mentions = (n: SyntaxNode) => mentionsIn.within(n.startIndex, n.endIndex, words);
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
    if (!c || !mentions(c) || !readsEnvironment(c.childForFieldName("function"), isEnviron, resolve)) continue;
    const first = c.childForFieldName("arguments")?.namedChildren[0];
    const name = keyName(first);
    if (name !== null && first) viaCall.push({ kind: "envRead", variable: name, node: c, nameNode: first });
  }
  return [out, viaCall];
}

/**
 * Whether a call's function reads the environment by key: `os.environ.get` / `.pop` (on anything
 * `isEnviron` takes for os.environ), or `os.getenv` (any import form). The attribute's name is
 * looked at before anything is resolved: most calls of a file that names the environment are
 * neither, and resolving each one's callee was most of this walk on a 5,000-line file.
 */
function readsEnvironment(
  fn: SyntaxNode | null,
  isEnviron: (n: SyntaxNode | null) => boolean,
  resolve: (n: SyntaxNode | null) => string | null,
): boolean {
  if (fn?.type === "attribute") {
    const attr = fn.childForFieldName("attribute")?.text;
    if (attr === "get" || attr === "pop") return isEnviron(fn.childForFieldName("object"));
    return attr === "getenv" && resolve(fn) === "os.getenv";
  }
  return resolve(fn) === "os.getenv";
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
