/**
 * Rank value flow: where the value of an expression comes from, as a process rank. GPU039 asks it
 * whether the ordinal given to a CUDA device is the job's global rank (the process's number among
 * all nodes) rather than its local rank (its number on its own node).
 *
 * Sources (each cited in GPU039's references):
 * - environment reads (`os.environ["RANK"]`, `.get`, `os.getenv`): {@link RANK_VARIABLES};
 * - calls: `torch.distributed.get_rank()` with no group (global), `torch.distributed.get_node_local_rank()` (local),
 *   DeepSpeed's `deepspeed.comm.get_rank()` (global) and `get_local_rank()` (local);
 * - Hugging Face Accelerate: `.process_index` (global) and `.local_process_index` (local) of an
 *   object the file builds with `Accelerator(...)`, `PartialState(...)` or `AcceleratorState(...)`;
 * - `.rank` of vLLM's `parallel_config` (also a parameter annotated with vLLM's `ParallelConfig`) and of
 *   TensorRT-LLM's `mapping` (global).
 *
 * Followed, within this file: names to their latest assignment before the use in the same
 * function (or module; a name a nested function reads from outside: every assignment there must
 * agree), `int(...)`/`str(...)`, parentheses, tuple unpacking of a tuple of the same length,
 * `self.x` set in any method of the same class or in its body (a class attribute; a dataclass or
 * pydantic field's `default` or `default_factory`: {@link FIELD_CALLS}), `obj.x = ...` and `d["k"] = ...` in the same
 * scope, dict literals with literal keys, argparse defaults (`add_argument("--rank", default=...)`
 * read as `args.rank`), the return values of the file's own module-level functions and of a method
 * of the same class called on `self` or `cls` ({@link sameClassMethod}) (element by
 * element where a returned tuple is unpacked: `a, b = f()`), `a if c else b` and `a or b` (branches
 * that agree; integer literals do not count), and `rank % n` (no longer a global rank). Across
 * modules: the single values and the tuples that functions of the project's other modules return, through the
 * ProjectLookup given to the constructor (python/project.ts). Not followed: other modules' values
 * otherwise, function parameters (an
 * `mp.spawn`ed worker's first parameter is its local index), other arithmetic: these are
 * `unknown`, and a rule stays silent on them.
 */
import type { SyntaxNode } from "./parser";
import { enclosingFunction, parameterNames, stringValue } from "./parser";
import type { ModuleModel, ProjectLookup } from "./model";
import { branchesOf, contains } from "../rules/shared/py";

/**
 * The library whose parallel layout a global rank is read from ({@link RankFlow.libraryOf}): vLLM's
 * `ParallelConfig` in a file that names vLLM, TensorRT-LLM's `Mapping`, or a `parallel_config`
 * in a file that names neither.
 */
export type RankLibrary = "vllm" | "tensorrt_llm" | "other";

/** Where a rank comes from: all nodes (`global`), this node (`local`), the node's number (`node`), or not known. */
export type RankKind = "global" | "local" | "node" | "unknown";

/** The origin of a value as a rank. */
export interface RankOrigin {
  kind: RankKind;
  /** The expression the rank is read from (the environment read, the call, the attribute); null when unknown. */
  source: SyntaxNode | null;
  /** The environment variable read, when the source is an environment read. */
  variable: string | null;
  /**
   * Whether the value is the source's value itself, reached through names, `int(...)`, `str(...)`
   * and parentheses only (no `if`/`or`, attribute, argparse or function return on the way).
   */
  plain: boolean;
  /**
   * Set when the rank comes from another project module's function through its returned tuple:
   * where that module reads it, for messages (`envs.py:7`).
   */
  via?: string;
  /**
   * Set when every alternative of the value is a global rank modulo `torch.cuda.device_count()`
   * (`dist.get_rank() % torch.cuda.device_count()`, also through names): that `%` expression (the
   * first one). Such a value has kind `local` (a position within the node's GPUs).
   */
  modulo?: SyntaxNode;
  /** Set when some alternative of the value is a global rank modulo something (`rank % n`): a computed position, not a local rank read. */
  computed?: boolean;
}

/**
 * Rank environment variables by kind. RANK, LOCAL_RANK, GROUP_RANK: torchrun sets them ("RANK -
 * The global rank", "LOCAL_RANK - The local rank", GROUP_RANK "the rank of the node" with one
 * worker group per node: https://pytorch.org/docs/stable/elastic/run.html, Environment Variables).
 * SLURM_PROCID "The MPI rank (or relative process ID) of the current process", SLURM_LOCALID "Node
 * local task ID for the process within a job", SLURM_NODEID "The relative node ID of the current
 * node" (srun(1), OUTPUT ENVIRONMENT VARIABLES). OMPI_COMM_WORLD_RANK "the MPI rank of this process
 * in MPI_COMM_WORLD", OMPI_COMM_WORLD_LOCAL_RANK "the relative rank of this process on this node
 * within its job" (https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html).
 * NODE_RANK: the node's number as torch.distributed.launch's `--node-rank` and Lightning set it.
 */
export const RANK_VARIABLES: Readonly<Record<string, RankKind>> = {
  RANK: "global",
  SLURM_PROCID: "global",
  OMPI_COMM_WORLD_RANK: "global",
  LOCAL_RANK: "local",
  SLURM_LOCALID: "local",
  OMPI_COMM_WORLD_LOCAL_RANK: "local",
  GROUP_RANK: "node",
  NODE_RANK: "node",
  SLURM_NODEID: "node",
};

/**
 * Other launchers' rank variables: MPICH/Hydra's PMI_RANK, PMIx's PMIX_RANK, MVAPICH2's
 * MV2_COMM_WORLD_RANK and MV2_COMM_WORLD_LOCAL_RANK, Intel MPI's MPI_LOCALRANKID, HPE PALS's
 * PALS_RANKID and PALS_LOCAL_RANKID. Only for {@link mayReadRank}.
 */
const OTHER_RANK_VARIABLES = [
  "PMI_RANK",
  "PMIX_RANK",
  "MV2_COMM_WORLD_RANK",
  "MV2_COMM_WORLD_LOCAL_RANK",
  "MPI_LOCALRANKID",
  "PALS_RANKID",
  "PALS_LOCAL_RANKID",
];
/** Names of rank reads (`dist.get_rank()`, `hvd.local_rank()`, `state.process_index`, `args.local_rank`, a `rank` parameter). */
const RANK_NAMES = [
  "rank",
  "local_rank",
  "global_rank",
  "node_rank",
  "get_rank",
  "Get_rank",
  "get_local_rank",
  "get_node_local_rank",
  "process_index",
  "local_process_index",
  "is_main_process",
  "is_local_main_process",
  "is_global_zero",
];

/**
 * Whether the file may read its process's rank anywhere: a string naming a rank variable
 * ({@link RANK_VARIABLES}, {@link OTHER_RANK_VARIABLES}: `os.environ["SLURM_PROCID"]`) or an
 * identifier with a rank's name (`dist.get_rank()`, `args.local_rank`, `def main(rank)`). Such a
 * program may do its GPU work on some ranks only (`if rank == 0: evaluate()`). A superset on purpose.
 */
export function mayReadRank(model: Pick<ModuleModel, "nodesMentioning">): boolean {
  const variables = [...Object.keys(RANK_VARIABLES), ...OTHER_RANK_VARIABLES];
  if (model.nodesMentioning("string", variables).some((n) => variables.includes(stringValue(n) ?? ""))) return true;
  return model.nodesMentioning("identifier", RANK_NAMES, true).some((n) => RANK_NAMES.includes(n.text));
}

/** Calls returning a rank (dotted paths as the model resolves them); `get_rank` only without arguments (with a group it is the rank in that group). */
const RANK_CALLS: Readonly<Record<string, RankKind>> = {
  "torch.distributed.get_rank": "global",
  "torch.distributed.distributed_c10d.get_rank": "global",
  "torch.distributed.get_node_local_rank": "local",
  "torch.distributed.distributed_c10d.get_node_local_rank": "local",
  // DeepSpeed's communication module (deepspeed/comm/comm.py:553 `get_rank(group=None)`: "Returns the
  // rank of the current process in the provided group or the default group if none was provided";
  // :573 `get_local_rank()`: "local rank (= GPU device ID)"; deepspeedai/DeepSpeed at 38327e07f6).
  "deepspeed.comm.get_rank": "global",
  "deepspeed.comm.comm.get_rank": "global",
  "deepspeed.comm.get_local_rank": "local",
  "deepspeed.comm.comm.get_local_rank": "local",
};

/** Accelerate's state classes (https://huggingface.co/docs/accelerate/package_reference/state: "process_index (int) -- The index of the current process", "local_process_index (int) -- The index of the current process on the current server"). */
const ACCELERATE_STATES = new Set([
  "accelerate.Accelerator",
  "accelerate.accelerator.Accelerator",
  "accelerate.PartialState",
  "accelerate.state.PartialState",
  "accelerate.AcceleratorState",
  "accelerate.state.AcceleratorState",
]);
const ACCELERATE_ATTRIBUTES: Readonly<Record<string, RankKind>> = {
  process_index: "global",
  local_process_index: "local",
};

/**
 * Field declarations whose value is their default or their default factory's result:
 * dataclasses' `field(default=..., default_factory=...)` ("default_factory: If provided, it must be
 * a zero-argument callable that will be called when a default value is needed for this field",
 * https://docs.python.org/3/library/dataclasses.html#dataclasses.field), pydantic's
 * `Field(default=..., default_factory=...)` ("default_factory: A callable to generate the default
 * value", https://docs.pydantic.dev/latest/api/fields/#pydantic.fields.Field) and attrs' `field`/`ib`.
 */
const FIELD_CALLS = new Set([
  "dataclasses.field",
  "pydantic.Field",
  "pydantic.fields.Field",
  "attrs.field",
  "attr.ib",
  "attr.field",
]);

/** Internal value: a rank kind, or an integer literal (`0` in `rank if dist else 0`), which does not decide. */
type Flow = {
  kind: RankKind | "constant";
  source: SyntaxNode | null;
  variable: string | null;
  plain: boolean;
  via?: string;
  modulo?: SyntaxNode;
  computed?: boolean;
};

const UNKNOWN: Flow = { kind: "unknown", source: null, variable: null, plain: false };
const CONSTANT: Flow = { kind: "constant", source: null, variable: null, plain: false };

/** How a name (or `obj.attr`, `d["k"]`) is bound in a scope: the value assigned, or null when bound otherwise (loop, `with`, import, `+=`). */
interface Binding {
  end: number;
  value: SyntaxNode | null;
  /** Set when the target is one element of an unpacked call's result (`a, b = f()`): its position in the returned tuple. */
  index?: number;
}

/** The bindings of one function body or of the module (nested functions and classes excluded). */
interface Scope {
  names: Map<string, Binding[]>;
  /** `obj.attr = v` and `d["k"] = v` by `obj.attr` / `d["k"]` (the key's value). */
  members: Map<string, Binding[]>;
  params: Set<string>;
  /** Names declared `global` in the function. */
  globals: Set<string>;
}

const PATTERNS = new Set(["pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list"]);
const OWN_SCOPES = new Set([
  "function_definition",
  "class_definition",
  "lambda",
  "list_comprehension",
  "set_comprehension",
  "dictionary_comprehension",
  "generator_expression",
]);
const MAX_DEPTH = 24;

/**
 * The rank analysis of one module. Answers are cached per node; each query costs at most a walk
 * of the scopes it looks into (collected once each).
 */
export class RankFlow {
  private readonly envReads = new Map<number, string>();
  private readonly scopes = new Map<number, Scope>();
  private readonly memo = new Map<number, Flow>();
  private readonly busy = new Set<number>();
  private readonly selfNames = new Map<number, string | null>();
  /** Per class (keyed by its body's node id): its methods, and {@link classMember}'s answers by attribute. */
  private readonly members = new Map<number, { methods: SyntaxNode[]; byAttr: Map<string, Binding[]> }>();
  private depth = 0;

  /**
   * @param model the module
   * @param project the project's other modules (python/project.ts): a call of one of their functions
   *   whose returned tuple is unpacked (`local_rank, rank = get_envs()`) takes each element's rank kind
   *   from it. Absent: such calls are unknown.
   */
  constructor(
    private readonly model: ModuleModel,
    private readonly project?: ProjectLookup,
  ) {
    for (const e of model.events)
      if (e.kind === "envRead" && e.variable in RANK_VARIABLES) this.envReads.set(e.node.id, e.variable);
  }

  /** Where the value of `node` comes from as a rank (`unknown` when the analysis cannot see it). */
  origin(node: SyntaxNode | null | undefined): RankOrigin {
    return originOf(node ? this.flow(node) : UNKNOWN);
  }

  /**
   * For a name read at `use` that is a parameter of its function and that the function also
   * assigns before the use (`if local_rank == -1: local_rank = int(os.environ["LOCAL_RANK"])`): the
   * origins of those assignments that may reach the use; the parameter's own value, which the
   * caller gives, is not among them. Null for any other name, or where no assignment reaches it.
   */
  reassignedParam(use: SyntaxNode): RankOrigin[] | null {
    const fn = use.type === "identifier" ? enclosingFunction(use) : null;
    if (!fn) return null;
    // Read in the function's own scope, not in a lambda or a comprehension that may bind it.
    for (let p = use.parent; p && p.id !== fn.id; p = p.parent) if (OWN_SCOPES.has(p.type)) return null;
    const scope = this.scopeOf(fn);
    const list = scope.params.has(use.text) ? scope.names.get(use.text) : undefined;
    const found = list?.length ? reachingBefore(list, use) : null;
    return found ? found.map((b) => originOf(this.ofBinding(b))) : null;
  }

  /**
   * Whether `n` is `torch.cuda.device_count()` (as the file imports it; the number of GPUs the
   * process sees), or a name whose one binding reaching it is (`n_gpus = torch.cuda.device_count()`).
   */
  private isDeviceCount(n: SyntaxNode | null, depth = 0): boolean {
    if (!n || depth > 3) return false;
    if (n.type === "parenthesized_expression") return this.isDeviceCount(n.namedChildren[0] ?? null, depth + 1);
    if (n.type === "identifier") {
      const v = this.valueOfName(n);
      return !!v && this.isDeviceCount(v, depth + 1);
    }
    if (n.type !== "call" || n.childForFieldName("arguments")?.namedChildren.some((a) => a && a.type !== "comment"))
      return false;
    return this.model.resolve(n.childForFieldName("function"))?.replace(/\(\)/g, "") === "torch.cuda.device_count";
  }

  /**
   * What a function of this module returns as a tuple: per position, the rank origin its `return`
   * statements agree on; null when a return gives no tuple, or tuples of different lengths.
   * @param def a `function_definition` node of this module
   */
  returnedTuple(def: SyntaxNode): RankOrigin[] | null {
    const tuples: SyntaxNode[][] = [];
    let bad = false;
    walkScope(def.childForFieldName("body"), (c) => {
      if (c.type !== "return_statement") return;
      let v = c.namedChildren[0] ?? null;
      while (v?.type === "parenthesized_expression") v = v.namedChildren[0] ?? null;
      if (!v || (v.type !== "expression_list" && v.type !== "tuple")) {
        bad = true;
        return;
      }
      tuples.push(v.namedChildren.filter((x): x is SyntaxNode => !!x && x.type !== "comment"));
    });
    if (
      bad ||
      !tuples.length ||
      tuples.some((t) => t.length !== tuples[0].length || t.some((x) => x.type === "list_splat"))
    )
      return null;
    return tuples[0].map((_, i) => {
      const f = combine(
        tuples.map((t) => this.flow(t[i])),
        true,
      );
      return f.kind === "constant"
        ? { kind: "unknown", source: null, variable: null, plain: false }
        : { kind: f.kind, source: f.source, variable: f.variable, plain: false };
    });
  }

  /** The flow of one binding: its value, or, for an element of an unpacked call, that element of the call's returned tuple. */
  private ofBinding(b: Binding): Flow {
    if (!b.value) return UNKNOWN;
    return b.index === undefined ? this.flow(b.value) : this.tupleElement(b.value, b.index);
  }

  /**
   * Element `i` of the tuple a call returns: a function of this module called by name
   * ({@link returnedTuple}), or a function of another project module (ProjectLookup.callableReturns).
   */
  private tupleElement(call: SyntaxNode, i: number): Flow {
    if (call.type !== "call") return UNKNOWN;
    const fn = call.childForFieldName("function");
    if (fn?.type === "identifier" && !this.model.symbols.has(fn.text)) {
      const def = this.model.functions.get(fn.text);
      if (!def || this.lookup(fn.text, fn) !== "module-function") return UNKNOWN;
      const el = this.returnedTuple(def)?.[i];
      return el && el.kind !== "unknown"
        ? { kind: el.kind, source: el.source, variable: el.variable, plain: false }
        : UNKNOWN;
    }
    const path = this.model.resolve(fn)?.replace(/\(\)/g, "") ?? null;
    const el = path && this.project?.callableReturns ? this.project.callableReturns(path)?.[i] : undefined;
    return el && el.kind !== "unknown"
      ? { kind: el.kind, source: call, variable: el.variable, plain: false, via: el.where }
      : UNKNOWN;
  }

  private flow(node: SyntaxNode): Flow {
    const hit = this.memo.get(node.id);
    if (hit) return hit;
    if (this.busy.has(node.id) || this.depth > MAX_DEPTH) return UNKNOWN;
    this.busy.add(node.id);
    this.depth++;
    let f: Flow;
    try {
      f = this.compute(node);
    } finally {
      this.depth--;
      this.busy.delete(node.id);
    }
    this.memo.set(node.id, f);
    return f;
  }

  private compute(n: SyntaxNode): Flow {
    const variable = this.envReads.get(n.id);
    if (variable) return { kind: RANK_VARIABLES[variable], source: n, variable, plain: true };
    switch (n.type) {
      case "integer":
        return CONSTANT;
      case "string":
        // A literal (`rank if torch.cuda.is_available() else "cpu"`): no rank, so it decides nothing,
        // as an integer literal; an f-string's value is not known.
        return n.namedChildren.some((c) => c?.type === "interpolation") ? UNKNOWN : CONSTANT;
      case "parenthesized_expression":
        return n.namedChildren[0] ? this.flow(n.namedChildren[0]) : UNKNOWN;
      case "identifier":
        return this.ofName(n);
      case "call":
        return this.ofCall(n);
      case "attribute":
        return this.ofAttribute(n);
      case "subscript":
        return this.ofSubscript(n);
      case "conditional_expression":
        return combine(
          [n.namedChildren[0], n.namedChildren[2]].map((c) => (c ? this.flow(c) : UNKNOWN)),
          false,
        );
      case "boolean_operator":
        return combine(
          [n.childForFieldName("left"), n.childForFieldName("right")].map((c) => (c ? this.flow(c) : UNKNOWN)),
          false,
        );
      case "binary_operator": {
        // `rank % n`: a position within n, no longer the global rank (GPU039 does not judge n).
        if (n.children.some((c) => c?.type === "%")) {
          const left = n.childForFieldName("left");
          if (left?.type !== "string" && left && this.flow(left).kind === "global") {
            const count = this.isDeviceCount(n.childForFieldName("right"));
            return { ...UNKNOWN, kind: "local", computed: true, ...(count ? { modulo: n } : {}) };
          }
        }
        return UNKNOWN;
      }
      default:
        return UNKNOWN;
    }
  }

  /** `int(x)`, `str(x)`, rank calls, Accelerate constructors' attributes, the file's own functions. */
  private ofCall(n: SyntaxNode): Flow {
    const fn = n.childForFieldName("function");
    const args = (n.childForFieldName("arguments")?.namedChildren ?? []).filter(
      (a): a is SyntaxNode => !!a && a.type !== "comment",
    );
    if (fn?.type === "identifier" && (fn.text === "int" || fn.text === "str") && !this.model.symbols.has(fn.text)) {
      return args[0] && args[0].type !== "keyword_argument" && args[0].type !== "list_splat"
        ? this.flow(args[0])
        : UNKNOWN;
    }
    const path = this.model.resolve(fn)?.replace(/\(\)/g, "") ?? null;
    if (path && path in RANK_CALLS) {
      const kind = RANK_CALLS[path];
      if (kind === "global" && args.length) return UNKNOWN; // get_rank(group): the rank within the group
      return { kind, source: n, variable: null, plain: true };
    }
    // A dataclass or pydantic field: the value its default or default factory gives.
    if (path && FIELD_CALLS.has(path)) {
      const kw = (name: string) =>
        args
          .find((a) => a.type === "keyword_argument" && a.childForFieldName("name")?.text === name)
          ?.childForFieldName("value") ?? null;
      const factory = kw("default_factory");
      if (factory) return this.called(factory);
      const dflt = kw("default");
      return dflt ? notPlain(this.flow(dflt)) : UNKNOWN;
    }
    return fn ? this.called(fn, path) : UNKNOWN;
  }

  /**
   * What calling the function `ref` names returns: a module-level function of this file (its
   * returns agreeing), or a function of another project module that returns one value
   * (ProjectLookup.callableReturn, python/project.ts). `path`: `ref` resolved, when the caller has it.
   */
  private called(ref: SyntaxNode, path = this.model.resolve(ref)?.replace(/\(\)/g, "") ?? null): Flow {
    if (ref.type === "identifier" && !this.model.symbols.has(ref.text)) {
      const def = this.model.functions.get(ref.text);
      if (def && this.lookup(ref.text, ref) === "module-function") return this.ownReturns(def);
    }
    const method = ref.type === "attribute" ? sameClassMethod(ref) : null;
    if (method) return this.ownReturns(method);
    if (ref.type !== "identifier" && ref.type !== "attribute") return UNKNOWN;
    const r = path && path.includes(".") && this.project?.callableReturn ? this.project.callableReturn(path) : null;
    return r && r.kind !== "unknown"
      ? {
          kind: r.kind,
          source: ref.parent?.type === "call" ? ref.parent : ref,
          variable: r.variable,
          plain: false,
          via: r.where,
        }
      : UNKNOWN;
  }

  /** What a module-level function of this file returns: its `return` values' flows, where they agree. */
  private ownReturns(def: SyntaxNode): Flow {
    const returns: Flow[] = [];
    walkScope(def.childForFieldName("body"), (c) => {
      if (c.type === "return_statement") returns.push(c.namedChildren[0] ? this.flow(c.namedChildren[0]) : CONSTANT);
    });
    return returns.length ? notPlain(combine(returns, true)) : UNKNOWN;
  }

  /**
   * What a function of this module returns when it returns one value (not a tuple): the rank its
   * `return` statements agree on; null when one returns a tuple or nothing is known.
   * @param def a `function_definition` node of this module
   */
  returnedValue(def: SyntaxNode): RankOrigin | null {
    let tuple = false;
    walkScope(def.childForFieldName("body"), (c) => {
      let v = c.type === "return_statement" ? (c.namedChildren[0] ?? null) : null;
      while (v?.type === "parenthesized_expression") v = v.namedChildren[0] ?? null;
      if (v && (v.type === "expression_list" || v.type === "tuple")) tuple = true;
    });
    if (tuple) return null;
    const f = this.ownReturns(def);
    return f.kind === "constant" || f.kind === "unknown"
      ? null
      : { kind: f.kind, source: f.source, variable: f.variable, plain: false };
  }

  /** `accelerator.process_index`, `self.x`, `obj.x` assigned in the same scope, `args.x` from argparse. */
  private ofAttribute(n: SyntaxNode): Flow {
    const obj = n.childForFieldName("object");
    const attr = n.childForFieldName("attribute")?.text;
    if (!obj || !attr) return UNKNOWN;
    const accel = ACCELERATE_ATTRIBUTES[attr];
    if (accel && this.isAccelerateState(obj)) return { kind: accel, source: n, variable: null, plain: false };
    if (attr === "rank" && this.holdsLibraryRank(obj))
      return { kind: "global", source: n, variable: null, plain: false };
    if (obj.type !== "identifier") return UNKNOWN;
    const fn = enclosingFunction(n);
    // self.x in a method: the method's own assignment before the use, else every method's assignments.
    const self = fn ? this.selfName(fn) : null;
    if (fn && self === obj.text) {
      const own = latestBefore(this.scopeOf(fn).members.get(`${self}.${attr}`), n.startIndex);
      if (own) return notPlain(this.ofBinding(own));
      const values = this.classMember(fn, attr).map((b) => this.ofBinding(b));
      return values.length ? notPlain(combine(values, true)) : UNKNOWN;
    }
    const scope = fn ? this.scopeOf(fn) : this.scopeOf(null);
    const own = latestBefore(scope.members.get(`${obj.text}.${attr}`), n.startIndex);
    if (own) return notPlain(this.ofBinding(own));
    const value = this.valueOfName(obj);
    if (value && isParseArgs(value)) {
      const defaults = this.argparseDefaults().get(attr);
      if (!defaults?.length) return UNKNOWN;
      return notPlain(
        combine(
          defaults.map((d) => (d ? this.flow(d) : UNKNOWN)),
          true,
        ),
      );
    }
    return UNKNOWN;
  }

  /** `d["k"]`: an assignment `d["k"] = v` in the scope before the use, or the entry of a dict literal `d` is bound to. */
  private ofSubscript(n: SyntaxNode): Flow {
    const obj = n.childForFieldName("value");
    const key = stringValue(n.childForFieldName("subscript"));
    if (obj?.type !== "identifier" || key === null) return UNKNOWN;
    const fn = enclosingFunction(n);
    const own = latestBefore(this.scopeOf(fn).members.get(`${obj.text}[${JSON.stringify(key)}]`), n.startIndex);
    if (own) return notPlain(this.ofBinding(own));
    const value = this.valueOfName(obj);
    if (value?.type === "dictionary_comprehension" && key in RANK_VARIABLES && this.copiesEnvironment(value, key)) {
      return { kind: RANK_VARIABLES[key], source: n, variable: key, plain: false };
    }
    if (value?.type !== "dictionary") return UNKNOWN;
    let entry: SyntaxNode | null = null;
    for (const p of value.namedChildren) {
      if (p?.type === "pair" && stringValue(p.childForFieldName("key")) === key) entry = p.childForFieldName("value");
      else if (p?.type === "dictionary_splat") return UNKNOWN;
    }
    return entry ? notPlain(this.flow(entry)) : UNKNOWN;
  }

  /**
   * Whether a dict comprehension copies the environment variable `key`: `{k: os.environ[k] for k in
   * ("RANK", ...)}` (or `.get(k)`, `os.getenv(k)`) over a literal tuple or list that holds `key`.
   */
  private copiesEnvironment(comp: SyntaxNode, key: string): boolean {
    const pair = comp.childForFieldName("body");
    const clauses = comp.namedChildren.filter((c) => c?.type === "for_in_clause");
    if (pair?.type !== "pair" || clauses.length !== 1 || comp.namedChildren.some((c) => c?.type === "if_clause"))
      return false;
    const loopVar = clauses[0]!.childForFieldName("left");
    const names = clauses[0]!.childForFieldName("right");
    if (loopVar?.type !== "identifier" || pair.childForFieldName("key")?.text !== loopVar.text) return false;
    if (!names || !["tuple", "list"].includes(names.type) || !names.namedChildren.some((c) => stringValue(c) === key))
      return false;
    const read = pair.childForFieldName("value");
    if (read?.type === "subscript")
      return (
        this.model.isEnviron(read.childForFieldName("value")) &&
        read.childForFieldName("subscript")?.text === loopVar.text
      );
    if (read?.type !== "call") return false;
    const fn = read.childForFieldName("function");
    const isGet =
      fn?.type === "attribute" &&
      fn.childForFieldName("attribute")?.text === "get" &&
      this.model.isEnviron(fn.childForFieldName("object"));
    return (
      (isGet || this.model.resolve(fn) === "os.getenv") &&
      read.childForFieldName("arguments")?.namedChildren[0]?.text === loopVar.text
    );
  }

  /**
   * Whether `obj` (or the value of the name `obj`) is a library's parallel-layout object whose
   * `.rank` is the global rank: vLLM's `vllm_config.parallel_config` (vllm/config/parallel.py
   * ParallelConfig: "rank: Global rank in distributed setup"; the worker's node-local index is its
   * `local_rank`), also a parameter annotated with vLLM's `ParallelConfig`
   * (`def init_engine(parallel_config: ParallelConfig)`), and, in a file that names TensorRT-LLM, its
   * `model_config.mapping` (tensorrt_llm/mapping.py Mapping: `rank` in the whole layout, the
   * node-local index `local_rank`).
   */
  private holdsLibraryRank(obj: SyntaxNode): boolean {
    return this.libraryHolding(obj) !== null;
  }

  /** The library whose parallel-layout object `obj` is ({@link holdsLibraryRank}), or null. */
  private libraryHolding(obj: SyntaxNode): RankLibrary | null {
    if (obj.type === "identifier" && this.isVllmParallelConfigParam(obj)) return "vllm";
    const holder = obj.type === "identifier" ? this.valueOfName(obj) : obj;
    if (holder?.type !== "attribute") return null;
    const name = holder.childForFieldName("attribute")?.text;
    if (name === "parallel_config") return this.model.text.includes("vllm") ? "vllm" : "other";
    return name === "mapping" && this.model.text.includes("tensorrt_llm") ? "tensorrt_llm" : null;
  }

  /**
   * Which library's global rank `source` (an origin's source: `parallel_config.rank`,
   * `model_config.mapping.rank`) is: `vllm` for a `parallel_config` in a file that names vLLM (an
   * import, a `vllm_config`), `tensorrt_llm` for TensorRT-LLM's `mapping`, `other` for a
   * `parallel_config` elsewhere; null for any other source.
   */
  libraryOf(source: SyntaxNode | null): RankLibrary | null {
    if (source?.type !== "attribute" || source.childForFieldName("attribute")?.text !== "rank") return null;
    const obj = source.childForFieldName("object");
    return obj ? this.libraryHolding(obj) : null;
  }

  /**
   * Whether the name `use` is a parameter of its function annotated with vLLM's `ParallelConfig`
   * (`vllm.config.ParallelConfig` as the file imports it, also in a string annotation), which the
   * function does not assign.
   */
  private isVllmParallelConfigParam(use: SyntaxNode): boolean {
    const fn = enclosingFunction(use);
    if (!fn || !this.scopeOf(fn).params.has(use.text) || this.scopeOf(fn).names.get(use.text)?.length) return false;
    for (const p of fn.childForFieldName("parameters")?.namedChildren ?? []) {
      if (p?.type !== "typed_parameter" && p?.type !== "typed_default_parameter") continue;
      const name = p.childForFieldName("name") ?? p.namedChildren.find((c) => c?.type === "identifier");
      if (name?.text !== use.text) continue;
      const type = p.childForFieldName("type")?.namedChildren[0];
      const quoted = type?.type === "string" ? stringValue(type) : null;
      const path = quoted ? (this.model.symbols.get(quoted) ?? null) : this.model.resolve(type);
      return !!path && /^vllm\.(.+\.)?ParallelConfig$/.test(path);
    }
    return false;
  }

  /** Whether `obj` is an Accelerate state object built in this file (`Accelerator(...)`, through names and `self.x`). */
  private isAccelerateState(obj: SyntaxNode, depth = 0): boolean {
    if (depth > 4) return false;
    if (obj.type === "call") return ACCELERATE_STATES.has(this.model.resolve(obj.childForFieldName("function")) ?? "");
    if (obj.type === "identifier") {
      const v = this.valueOfName(obj);
      return !!v && this.isAccelerateState(v, depth + 1);
    }
    if (obj.type === "attribute" && obj.childForFieldName("object")?.type === "identifier") {
      const fn = enclosingFunction(obj);
      const self = fn ? this.selfName(fn) : null;
      const attr = obj.childForFieldName("attribute")?.text;
      if (!fn || !attr || self !== obj.childForFieldName("object")?.text) return false;
      const bindings = this.classMember(fn, attr);
      return (
        bindings.length > 0 && bindings.every((b) => b.value !== null && this.isAccelerateState(b.value, depth + 1))
      );
    }
    return false;
  }

  /** The flow of a name read at `use`. */
  private ofName(use: SyntaxNode): Flow {
    const found = this.lookup(use.text, use);
    if (found === "module-function" || found === null) return UNKNOWN;
    return notPlainIf(
      combine(
        found.map((b) => this.ofBinding(b)),
        true,
      ),
      found.length > 1 || found.some((b) => b.index !== undefined),
    );
  }

  /** The single value a name read at `use` is bound to (for objects: a dict literal, a parse_args call), or null. */
  private valueOfName(use: SyntaxNode): SyntaxNode | null {
    const found = this.lookup(use.text, use);
    return Array.isArray(found) && found.length === 1 && found[0].index === undefined ? found[0].value : null;
  }

  /**
   * The bindings that give `name` its value at `use`: in the innermost function that binds it, the
   * latest before the use; in an enclosing one (a closure) or the module seen from a function,
   * all of them. Null when a parameter, a comprehension or a `for` target binds it, or nothing
   * does; "module-function" for a module-level `def`.
   */
  private lookup(name: string, use: SyntaxNode): Binding[] | "module-function" | null {
    let fn: SyntaxNode | null = null;
    for (let p = use.parent; p; p = p.parent) {
      if (p.type === "lambda") {
        const params = p.childForFieldName("parameters");
        if (params && parameterNames(params).has(name)) return null;
      }
      if (p.type === "for_in_clause" || p.type === "for_statement") {
        const left = p.childForFieldName("left");
        if (left && identifiersIn(left).has(name) && p.type === "for_in_clause") return null;
      }
      if (
        p.type === "list_comprehension" ||
        p.type === "generator_expression" ||
        p.type === "set_comprehension" ||
        p.type === "dictionary_comprehension"
      ) {
        for (const c of p.namedChildren) {
          const left = c?.type === "for_in_clause" ? c.childForFieldName("left") : null;
          if (left && identifiersIn(left).has(name)) return null;
        }
      }
      if (p.type === "function_definition") {
        fn = p;
        break;
      }
    }
    let innermost = true;
    for (let f = fn; f; f = enclosingFunction(f)) {
      const scope = this.scopeOf(f);
      if (scope.params.has(name)) return null;
      if (scope.globals.has(name)) break;
      const list = scope.names.get(name);
      if (list?.length) {
        if (!innermost) return list;
        return reachingBefore(list, use);
      }
      innermost = false;
    }
    const module = this.scopeOf(null);
    const list = module.names.get(name);
    if (!list?.length) return null;
    if (list.every((b) => b.value?.type === "function_definition")) return "module-function";
    if (fn === null) return reachingBefore(list, use);
    return list;
  }

  /** {@link selfName}, kept per `def` (a class's methods are asked once each, not once per `self.x` read). */
  private selfName(def: SyntaxNode): string | null {
    let s = this.selfNames.get(def.id);
    if (s === undefined) this.selfNames.set(def.id, (s = selfName(def)));
    return s;
  }

  /**
   * The `self.<attr>` assignments of every method of the class whose method `fn` is (each method
   * under its own first parameter's name), kept per class and attribute. Only methods whose text
   * holds `attr` are walked: a large class is read once per attribute asked, not once per read.
   */
  private classMember(fn: SyntaxNode, attr: string): Binding[] {
    const holder = fn.parent?.type === "decorated_definition" ? fn.parent : fn;
    const key = holder.parent?.id ?? fn.id;
    let kept = this.members.get(key);
    if (!kept) this.members.set(key, (kept = { methods: methodsOf(fn), byAttr: new Map() }));
    let list = kept.byAttr.get(attr);
    if (list) return list;
    list = [];
    // A class-body assignment (`rank: int = Field(default_factory=get_rank)`, a dataclass or
    // pydantic field, or a plain class attribute): what `self.rank` reads until a method sets it.
    for (const st of holder.parent?.type === "block" ? holder.parent.namedChildren : []) {
      const a = st?.type === "expression_statement" ? st.namedChildren[0] : null;
      const right = a?.type === "assignment" ? a.childForFieldName("right") : null;
      if (right && a!.childForFieldName("left")?.type === "identifier" && a!.childForFieldName("left")!.text === attr)
        list.push({ end: st!.endIndex, value: right });
    }
    const text = this.model.text;
    for (const m of kept.methods) {
      const s = this.selfName(m);
      if (!s || !text.slice(m.startIndex, m.endIndex).includes(attr)) continue;
      list.push(...(this.scopeOf(m).members.get(`${s}.${attr}`) ?? []));
    }
    kept.byAttr.set(attr, list);
    return list;
  }

  /** The bindings of a function body (`def`), or of the module (null). */
  private scopeOf(def: SyntaxNode | null): Scope {
    const key = def ? def.id : -1;
    let s = this.scopes.get(key);
    if (s) return s;
    s = { names: new Map(), members: new Map(), params: new Set(), globals: new Set() };
    if (def) {
      const params = def.childForFieldName("parameters");
      if (params) s.params = parameterNames(params);
      collectBindings(def.childForFieldName("body"), s);
    } else {
      for (const st of this.model.tree.statements) {
        const def = st.type === "decorated_definition" ? st.childForFieldName("definition") : st;
        const name =
          def && (def.type === "function_definition" || def.type === "class_definition")
            ? def.childForFieldName("name")
            : null;
        if (def && name) {
          const list = s.names.get(name.text) ?? [];
          list.push({ end: def.startIndex, value: def.type === "function_definition" ? def : null });
          s.names.set(name.text, list);
        } else collectBindings(st, s);
      }
    }
    this.scopes.set(key, s);
    return s;
  }

  /** `dest` → the `default=` values of the file's `add_argument` calls (null for one without a default). */
  private argparseDefaults(): Map<string, Array<SyntaxNode | null>> {
    return (this.model.derived.argparseDefaults ??= argparseDefaultNodes(this.model));
  }
}

/** What {@link RankFlow.origin} gives for a flow: an integer literal is unknown. */
function originOf(f: Flow): RankOrigin {
  if (f.kind === "constant") return { kind: "unknown", source: null, variable: null, plain: false };
  return {
    kind: f.kind,
    source: f.source,
    variable: f.variable,
    plain: f.plain,
    ...(f.via ? { via: f.via } : {}),
    ...(f.modulo ? { modulo: f.modulo } : {}),
    ...(f.computed ? { computed: true } : {}),
  };
}

/** Merges alternatives: the kind they agree on (integer literals do not count), else unknown. `plain` survives only when `keepPlain` and one alternative decides. */
function combine(flows: Flow[], keepPlain: boolean): Flow {
  const deciding = flows.filter((f) => f.kind !== "constant");
  if (!deciding.length) return CONSTANT;
  const first = deciding[0];
  if (deciding.some((f) => f.kind !== first.kind)) return UNKNOWN;
  const out: Flow = { ...first, plain: keepPlain && flows.length === 1 && first.plain };
  // A `rank % device_count()` only where every alternative is one; computed where any is.
  if (out.modulo && deciding.some((f) => !f.modulo)) delete out.modulo;
  if (deciding.some((f) => f.computed)) out.computed = true;
  return out;
}

function notPlain(f: Flow): Flow {
  return f.plain ? { ...f, plain: false } : f;
}

function notPlainIf(f: Flow, cond: boolean): Flow {
  return cond ? notPlain(f) : f;
}

/** The latest binding that ends before `at`, or null. */
/**
 * The bindings that may give a name its value at `use`: the latest before it and, where that one
 * sits in one branch of an `if`/`elif`/`else` or of a `try`/`except` that ends before the use, the
 * latest binding in each other branch (`try: rank = dist.get_rank()` / `except: rank = 0`: either
 * may have run). Null when none.
 */
function reachingBefore(list: Binding[], use: SyntaxNode): Binding[] | null {
  const b = latestBefore(list, use.startIndex);
  if (!b) return null;
  const out = [b];
  let branch: SyntaxNode | null = null;
  for (let p = b.value?.parent ?? null; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "class_definition" || p.type === "module") break;
    if (p.startIndex <= use.startIndex && use.startIndex < p.endIndex) break; // the use is inside it
    if ((p.type === "if_statement" || p.type === "try_statement") && branch) {
      for (const other of branchesOf(p)) {
        if (other.id === branch.id) continue;
        const best = latestBefore(
          list.filter((c) => c.value && contains(other, c.value)),
          use.startIndex,
        );
        if (best) out.push(best);
      }
      break;
    }
    branch = p;
  }
  return out;
}

function latestBefore(list: Binding[] | undefined, at: number): Binding | null {
  let best: Binding | null = null;
  for (const b of list ?? []) if (b.end <= at && (!best || b.end > best.end)) best = b;
  return best;
}

/** The name of a method's first parameter (`self`) when `def` is directly in a class body and neither a staticmethod nor a classmethod, else null. */
function selfName(def: SyntaxNode): string | null {
  return receiverName(def, /\b(staticmethod|classmethod)\b/);
}

/**
 * The first parameter of `def` where it is a method of a class body, not decorated with a name
 * `skip` matches; null otherwise (a plain function, such a decorated method, no parameter).
 */
function receiverName(def: SyntaxNode, skip: RegExp): string | null {
  const holder = def.parent?.type === "decorated_definition" ? def.parent : def;
  if (holder.parent?.type !== "block" || holder.parent.parent?.type !== "class_definition") return null;
  if (
    holder.type === "decorated_definition" &&
    holder.namedChildren.some((d) => d?.type === "decorator" && skip.test(d.text))
  )
    return null;
  const first = def.childForFieldName("parameters")?.namedChildren.find((p) => p && p.type !== "comment");
  return first?.type === "identifier" ? first.text : null;
}

/**
 * The method of the same class that `recv.name` calls from inside a method, where `recv` is that
 * method's first parameter (`self` in a method, `cls` in a classmethod: `cls._get_current_device()`
 * in TRL's value-head wrapper, huggingface/trl#515); null otherwise (a static method, a nested
 * function, another object, a name the class does not define). A subclass's override is not seen.
 */
function sameClassMethod(ref: SyntaxNode): SyntaxNode | null {
  const recv = ref.childForFieldName("object");
  const name = ref.childForFieldName("attribute")?.text;
  const fn = enclosingFunction(ref);
  if (recv?.type !== "identifier" || !name || !fn || receiverName(fn, /\bstaticmethod\b/) !== recv.text) return null;
  return methodsOf(fn).find((m) => m.childForFieldName("name")?.text === name) ?? null;
}

/** The methods of the class whose method `def` is (itself included). */
function methodsOf(def: SyntaxNode): SyntaxNode[] {
  const holder = def.parent?.type === "decorated_definition" ? def.parent : def;
  const body = holder.parent;
  if (body?.type !== "block") return [def];
  const out: SyntaxNode[] = [];
  for (const c of body.namedChildren) {
    const d = c?.type === "decorated_definition" ? c.childForFieldName("definition") : c;
    if (d?.type === "function_definition") out.push(d);
  }
  return out;
}

/** The identifiers of an assignment target or `for` target (not inside attributes or subscripts). */
function identifiersIn(target: SyntaxNode): Set<string> {
  const out = new Set<string>();
  const stack = [target];
  while (stack.length) {
    const t = stack.pop()!;
    if (t.type === "identifier") out.add(t.text);
    else if (
      PATTERNS.has(t.type) ||
      t.type === "parenthesized_expression" ||
      t.type === "list_splat_pattern" ||
      t.type === "list_splat"
    ) {
      for (const c of t.namedChildren) if (c) stack.push(c);
    }
  }
  return out;
}

/**
 * The `default=` expressions of the module's `add_argument(...)` calls, by argparse destination
 * (`dest=`, else the first long option without its dashes, `-` turned into `_`, else the first
 * short one or the positional name: Python documentation, argparse, "dest"); null where a call
 * gives no default. A destination declared more than once has several entries.
 */
export function argparseDefaultNodes(model: Pick<ModuleModel, "nodesOfType">): Map<string, Array<SyntaxNode | null>> {
  const out = new Map<string, Array<SyntaxNode | null>>();
  for (const call of model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    let dest: string | null = null;
    let defaultValue: SyntaxNode | null = null;
    const flags: string[] = [];
    for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
      if (!a) continue;
      if (a.type === "keyword_argument") {
        const k = a.childForFieldName("name")?.text;
        if (k === "dest") dest = stringValue(a.childForFieldName("value"));
        if (k === "default") defaultValue = a.childForFieldName("value");
      } else {
        const v = stringValue(a);
        if (v !== null) flags.push(v);
      }
    }
    const long = flags.find((f) => f.startsWith("--"));
    dest ??= (long ?? flags[0] ?? "").replace(/^-+/, "").replace(/-/g, "_");
    if (!dest) continue;
    const list = out.get(dest) ?? [];
    list.push(defaultValue);
    out.set(dest, list);
  }
  return out;
}

/** Whether a value is `X.parse_args(...)` or `X.parse_known_args(...)[0]` (an argparse namespace). */
export function isParseArgs(v: SyntaxNode): boolean {
  const callName = (c: SyntaxNode | null) =>
    c?.type === "call" && c.childForFieldName("function")?.type === "attribute"
      ? c.childForFieldName("function")!.childForFieldName("attribute")?.text
      : undefined;
  if (callName(v) === "parse_args") return true;
  return (
    v.type === "subscript" &&
    callName(v.childForFieldName("value")) === "parse_known_args" &&
    v.childForFieldName("subscript")?.text === "0"
  );
}

/** Visits the nodes of a scope's body in document order, not entering nested functions, classes, lambdas or comprehensions. */
function walkScope(root: SyntaxNode | null, visit: (n: SyntaxNode) => void): void {
  if (!root) return;
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    visit(n);
    if (n !== root && OWN_SCOPES.has(n.type)) continue;
    const kids = n.namedChildren;
    for (let i = kids.length - 1; i >= 0; i--) {
      const c = kids[i];
      if (c) stack.push(c);
    }
  }
}

/** Adds a binding of `key` that takes effect at `end` (`index`: an element of what `value` returns). */
function addBinding(map: Map<string, Binding[]>, key: string, end: number, value: SyntaxNode | null, index?: number) {
  const list = map.get(key) ?? [];
  list.push(index === undefined ? { end, value } : { end, value, index });
  map.set(key, list);
}

/**
 * Binds the assignment target `target` (a name, `obj.attr`, `obj["key"]`, or a tuple or list pattern
 * of them) to `value` in `scope`.
 */
function bindTarget(scope: Scope, target: SyntaxNode, value: SyntaxNode | null, end: number, index?: number): void {
  switch (target.type) {
    case "identifier":
      addBinding(scope.names, target.text, end, value, index);
      return;
    case "parenthesized_expression":
      if (target.namedChildren[0]) bindTarget(scope, target.namedChildren[0], value, end, index);
      return;
    case "attribute": {
      const obj = target.childForFieldName("object");
      const attr = target.childForFieldName("attribute")?.text;
      if (obj?.type === "identifier" && attr) addBinding(scope.members, `${obj.text}.${attr}`, end, value, index);
      return;
    }
    case "subscript": {
      const obj = target.childForFieldName("value");
      const key = stringValue(target.childForFieldName("subscript"));
      if (obj?.type === "identifier" && key !== null)
        addBinding(scope.members, `${obj.text}[${JSON.stringify(key)}]`, end, value, index);
      return;
    }
    default:
      if (!PATTERNS.has(target.type) || index !== undefined) return;
  }
  const targets = target.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment");
  const values =
    value && PATTERNS.has(value.type)
      ? value.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment")
      : null;
  const paired =
    values &&
    values.length === targets.length &&
    !values.some((v) => v.type === "list_splat") &&
    !targets.some((t) => t.type === "list_splat_pattern");
  // `a, b = f()`: each target is that element of what f returns (no starred target: positions would shift).
  const unpacked = !values && value?.type === "call" && !targets.some((t) => t.type === "list_splat_pattern");
  targets.forEach((t, i) =>
    unpacked ? bindTarget(scope, t, value, end, i) : bindTarget(scope, t, paired ? values[i] : null, end),
  );
}

/** Records the bindings made in `root` (a function body or a top-level statement) into `scope`. */
function collectBindings(root: SyntaxNode | null, scope: Scope): void {
  walkScope(root, (n) => {
    switch (n.type) {
      case "assignment": {
        const left = n.childForFieldName("left");
        let right = n.childForFieldName("right");
        while (right?.type === "assignment") right = right.childForFieldName("right"); // a = b = v
        if (left) bindTarget(scope, left, right, n.endIndex);
        break;
      }
      case "augmented_assignment": {
        const left = n.childForFieldName("left");
        if (left) bindTarget(scope, left, null, n.endIndex);
        break;
      }
      case "named_expression": {
        const name = n.childForFieldName("name");
        if (name) bindTarget(scope, name, n.childForFieldName("value"), n.endIndex);
        break;
      }
      case "for_statement": {
        const left = n.childForFieldName("left");
        if (left) for (const id of identifiersIn(left)) addBinding(scope.names, id, n.startIndex, null);
        break;
      }
      case "as_pattern": {
        const alias = n.childForFieldName("alias");
        if (alias)
          for (const id of identifiersIn(alias.namedChildren[0] ?? alias))
            addBinding(scope.names, id, n.endIndex, null);
        break;
      }
      case "import_statement":
      case "import_from_statement":
        for (const c of n.namedChildren) {
          if (c?.type === "dotted_name" && c.id !== n.childForFieldName("module_name")?.id)
            addBinding(scope.names, c.text.split(".")[0], n.endIndex, null);
          if (c?.type === "aliased_import") {
            const a = c.childForFieldName("alias")?.text;
            if (a) addBinding(scope.names, a, n.endIndex, null);
          }
        }
        break;
      case "global_statement":
        for (const c of n.namedChildren) if (c?.type === "identifier") scope.globals.add(c.text);
        break;
      case "function_definition":
      case "class_definition": {
        const name = n.childForFieldName("name");
        if (name && n !== root)
          addBinding(scope.names, name.text, n.startIndex, n.type === "function_definition" ? n : null);
        break;
      }
    }
  });
}

/** How a device string names its ordinal: `f"cuda:{x}"`, `"cuda:" + str(x)`, `"cuda:{}".format(x)`, `"cuda:%d" % x`; the expression `x`, or null. */
export function cudaStringOrdinal(n: SyntaxNode): SyntaxNode | null {
  if (n.type === "string") {
    const parts = n.namedChildren.filter(
      (c): c is SyntaxNode => !!c && c.type !== "string_start" && c.type !== "string_end",
    );
    if (
      parts.length === 2 &&
      parts[0].type === "string_content" &&
      parts[0].text === "cuda:" &&
      parts[1].type === "interpolation"
    ) {
      const expr = parts[1].namedChildren[0];
      // f"cuda:{x}" only: no conversion or format spec.
      return parts[1].namedChildren.length === 1 && expr ? expr : null;
    }
    return null;
  }
  if (n.type === "binary_operator") {
    const left = n.childForFieldName("left");
    const right = n.childForFieldName("right");
    const op = n.childForFieldName("operator")?.type;
    if (op === "+" && stringValue(left) === "cuda:") return right;
    if (op === "%" && /^cuda:%[di]$/.test(stringValue(left) ?? ""))
      return right?.type === "tuple" && right.namedChildren.length === 1 ? right.namedChildren[0] : right;
    return null;
  }
  if (n.type === "call") {
    const fn = n.childForFieldName("function");
    if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "format") return null;
    if (!/^cuda:\{0?\}$/.test(stringValue(fn.childForFieldName("object")) ?? "")) return null;
    const args = (n.childForFieldName("arguments")?.namedChildren ?? []).filter((a) => a && a.type !== "comment");
    return args.length === 1 && args[0]?.type !== "keyword_argument" ? args[0] : null;
  }
  return null;
}
