/**
 * What the model keeps of one document from one lint to the next: the facts of each top-level
 * statement ({@link ModelCache}: what it binds, and the records of what the walk, the environment
 * reads and the writes found in it), and the per-lint side that matches a new tree's statements
 * with them and finds their nodes again ({@link Memo}). A record is reused while the names it
 * looked up are bound as before (python/model.ts `buildModel` with a cache; engine/analysis.ts
 * `DocumentAnalysis` holds a document's cache).
 */
import type { SyntaxNode } from "./parser";
import { frameworkOfModule } from "../frameworks";
import type { TextChange } from "./keptText";
import {
  nodeRange,
  NODE_FIELDS,
  type EventRecord,
  type NodeRef,
  type TimelineCall,
  type TimelineEvent,
} from "./events";
import { importBindings, type Deps, type Tracker } from "./walker";
import type { Bindings } from "./model";

/** What walking one statement did: its events and calls, the state it left, what it looked up. */
export interface WalkRecord {
  /** The walk state the statement was walked in (python/walker.ts `TimelineWalker.stateKey`). */
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
 * The per-statement facts of one document, kept from one lint to the next (in the document's
 * analysis, engine/analysis.ts `DocumentAnalysis.facts`: `lintPython(..., { previous, incremental: true })`).
 * Opaque to callers.
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

/** The nodes of some types in a top-level statement, pre-order ({@link Memo}'s `nodesIn`). */
type NodesIn = (st: SyntaxNode, types: readonly string[]) => SyntaxNode[];

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
   * @param nodesIn the nodes of some types in a top-level statement, pre-order (model.ts NodeIndex.inStatement: one traversal per statement for all who ask); by default the statement's own descendantsOfType.
   *   Used while matching only, and not kept: what the document keeps reaches this Memo (a record's
   *   `live`, the bindings' `node()`), and a kept `nodesIn` held the lint's NodeIndex, every node of
   *   its types in every statement, until the next lint (~3.8 MiB of V8 heap per open 5,000-line
   *   file, BENCHMARKS.md).
   */
  constructor(
    readonly cache: ModelCache,
    statements: SyntaxNode[],
    text: string,
    change?: TextChange,
    treeHasError = true,
    shapes?: { ends: number[]; types: string[] },
    nodesIn: NodesIn = (st, types) => st.descendantsOfType([...types]).filter((n): n is SyntaxNode => !!n),
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
      } else f = this.fresh(st, bodies[i], epoch, ends[i], types[i], nodesIn);
      this.facts.push(f);
      this.starts.push(st.startIndex);
    });
  }

  /** Facts of a statement seen for the first time: what it binds. */
  private fresh(
    st: SyntaxNode,
    body: string,
    epoch: number,
    end: number,
    type: string,
    nodesIn: NodesIn,
  ): StatementFacts {
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
    for (const n of nodesIn(st, ["import_statement", "import_from_statement", "assignment"])) {
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
  const b = emptyBindings();
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

/** Bindings with nothing bound yet (pass 1 of the model fills them: model.ts collectBindings, {@link bindingsOf}). */
export function emptyBindings(): Bindings {
  return {
    symbols: new Map(),
    functions: new Map(),
    classes: new Map(),
    assignments: new Map(),
    frameworks: new Set(),
  };
}
