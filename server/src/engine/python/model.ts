/**
 * The module model every rule reads: the import aliases, the module-level functions, the name
 * resolution queries, and the CUDA timeline of ../shared/spec/rules.md: framework imports,
 * CUDA-initialising calls and environment writes, in execution order at module level (including
 * `if __name__ == "__main__":` blocks and the bodies of module functions called at top level, two
 * levels deep). The events are python/events.ts's, the walk that finds them python/walker.ts's, and
 * what a document's model keeps from one lint to the next python/cache.ts's.
 */
import type { OptionList } from "../launch/script";
import type { SyntaxNode } from "./parser";
import type { ModuleTrees } from "./moduleTrees";
import { stringValue } from "./parser";
import { type Framework, type InitDepth, frameworkOfModule, cudaDeviceOrdinal } from "../frameworks";
import { textChange, type TextChange } from "./keptText";
import { isWordCode } from "../../../../common/src/python/lineStructure";
import type { EnvWriteEvent, FunctionTimeline, MagicLine, TimelineCall, TimelineEvent } from "./events";
import type { Firsts } from "./timeline";
import type { RemoteDefinition } from "./ray";
import type { IndexWrite } from "./visibleIndex";
import type { LaunchNodes } from "../slurmLaunch";
import type { Range } from "../types";
import {
  DEFERRED,
  envWordsOf,
  importBindings,
  newDeps,
  statementWrites,
  TimelineWalker,
  type Timeline,
  type Tracker,
} from "./walker";
import {
  bindingsOf,
  changedNames,
  dropStale,
  emptyBindings,
  Memo,
  type ModelCache,
  type StatementFacts,
} from "./cache";

/** Options of the model builder. */
export interface ModelOptions {
  eagerInitModules: readonly string[];
  /** The project pins torch < 2.4: `device_count()` initialises CUDA (ground truth). */
  torchBelow24: boolean;
  /**
   * The project's pins of the init catalogue's packages (LintOptions.libraryPins): which entry an
   * eager import's note and depth come from (`bitsandbytes ==0.38.1`: the `>=0.36.0,<0.41.0` entry).
   * Absent: the entries of an unpinned project.
   */
  libraryPins?: Readonly<Record<string, string>>;
  /**
   * The project's own modules (python/project.ts): an import of one that initialises CUDA when
   * imported, and a call of one of their functions that initialises CUDA, are init events here.
   * Absent: imports and calls of other modules are opaque (no event).
   */
  project?: ProjectLookup;
  /**
   * Walk the module as an import runs it (python/project.ts): `if __name__ == "__main__":` blocks
   * are skipped, and no reads are collected. `"module"`: the module level only (no function
   * timelines); `"functions"`: also every module function as its own timeline, including those the
   * module calls (methods are not walked).
   */
  asImported?: "module" | "functions";
}

/** What a project module or function does to CUDA, as python/project.ts found it in its source. */
export interface ProjectInit {
  framework: Framework;
  depth: InitDepth;
  /** The initialising call or import as it reads in the other module, e.g. `torch.cuda.is_available()`. */
  what: string;
  /**
   * Where, for messages, relative to the importing file's folder: each import or call on the way,
   * then the initialising line (`modules/img2img.py:3 → modules/shared.py:6 → modules/devices.py:5`).
   */
  where: string;
  /** The same places as absolute paths and 1-based lines, outermost first. */
  chain: ReadonlyArray<readonly [file: string, line: number]>;
}

/** A startup-variable write in a project function (python/project.ts), as a caller's timeline sees it. */
export interface ProjectWrite {
  /** The variable written, e.g. `PYTORCH_CUDA_ALLOC_CONF`. */
  variable: string;
  /** Where, for messages, relative to the importing file's folder (`train.py:9`). */
  where: string;
  /** The same place as an absolute path and 1-based line. */
  chain: ReadonlyArray<readonly [file: string, line: number]>;
}

/**
 * The project's modules as seen from one file (python/project.ts `ProjectIndex.lookupFor`). Paths
 * are dotted as the file's imports bind them; a relative import's path starts with its dots
 * (`from .utils import f`: `.utils.f`).
 */
/** {@link ProjectLookup.callableKeyedDeviceParams}' answer: where `name[key]` (or `name.key`) becomes a device ordinal. */
export interface KeyedDeviceUse {
  index: number;
  name: string;
  key: string;
  subscript: boolean;
  /** The use converts the value or builds a device string around it. */
  converts: boolean;
  /** The entry is a list of ids (`DataParallel(device_ids=cfg.gpu_ids)`). */
  list: boolean;
  form: string;
  /** `rnn_trainer.py:15`, relative to the asking file's folder. */
  where: string;
  /**
   * The use is in this method of the class (its constructor keeps the parameter: `self.cfg = cfg`),
   * not in the constructor: it happens where the instance's method is called.
   */
  method?: string;
}

/** {@link ProjectLookup.callableOrdinalParams}' answer: a parameter that reaches a CUDA device use unchanged (python/passedOrdinals.ts). */
export interface PassedOrdinalUse {
  /** The position a call fills (after `self` for a class); -1 for a keyword-only parameter. */
  index: number;
  name: string;
  /** The signature's literal non-negative integer default, or null. */
  default: number | null;
  form: string;
  /** The callee's module names CUDA_VISIBLE_DEVICES in its code (a string, comments aside). */
  visible: boolean;
  /** The use: its file (absolute), 0-based start and end, and `pose.py:19` relative to the asking file's folder. */
  file: string;
  start: [number, number];
  end: [number, number];
  where: string;
}

export interface ProjectLookup {
  /** The first CUDA initialisation that importing the module at `path` runs (its parent packages' `__init__` included), or null. */
  moduleInit(path: string): ProjectInit | null;
  /** The first CUDA initialisation that calling the project function at `path` runs, or null (not a project function, or none). */
  callableInit(path: string): ProjectInit | null;
  /**
   * What the project function at `path` returns as a tuple, per position: the rank it holds (the
   * function's own environment reads and rank calls, python/rankFlow.ts), with where it is read for
   * messages (`envs.py:7`, relative to the importing file's folder); null when not a project function
   * or it returns no tuple of one length. Optional: lookups made before it existed answer nothing.
   */
  callableReturns?(path: string): ReadonlyArray<ProjectRank> | null;
  /**
   * What the project function at `path` returns when it returns one value rather than a tuple (every
   * `return` agreeing: `return int(os.environ.get("RANK", 0))`), as a rank, with where it is read;
   * null when not a project function, it returns tuples, or its returns disagree. Optional, as
   * {@link callableReturns}.
   */
  callableReturn?(path: string): ProjectRank | null;
  /**
   * The parameters the project function at `path` passes on as a CUDA device ordinal as they are
   * (python/devices.ts `deviceParams`), with where (`torch_utils.py:11`); null when none or not a
   * project function. Optional, as {@link callableReturns}.
   */
  callableDeviceParams?(
    path: string,
  ): ReadonlyArray<{ index: number; name: string; form: string; where: string }> | null;
  /**
   * The parameters of the project function (or class: its constructor's, by call position) at
   * `path` one of whose entries it passes on as a CUDA device ordinal (`f"cuda:{args['gpu']}"`,
   * python/devices.ts `keyedDeviceParams`), with where; null when none or not a project function.
   * Optional, as {@link callableReturns}.
   */
  callableKeyedDeviceParams?(path: string): ReadonlyArray<KeyedDeviceUse> | null;
  /**
   * The parameters of the project function (or class: its constructor's, by call position) at
   * `path` that it passes on unchanged as a CUDA device ordinal in a use that names a CUDA device
   * for certain (`torch.cuda.set_device(gpu_id)`, also through `self.gpu_id = gpu_id` in the
   * constructor: python/passedOrdinals.ts `ordinalParams`), with the signature's literal default
   * and where; null when none or not a project function. Optional, as {@link callableReturns}.
   */
  callableOrdinalParams?(path: string): ReadonlyArray<PassedOrdinalUse> | null;
  /**
   * The parameters of the project function at `path` that become DataParallel's list of ids there
   * or in a function of its module it passes them to (python/project.ts `chainLists`), with where;
   * null when none or not a project function. Optional, as {@link callableReturns}.
   */
  callableListParams?(path: string): ReadonlyArray<{ index: number; name: string; form: string; where: string }> | null;
  /**
   * The lists of device ids that the argparse namespace returned by the project function (or method,
   * `options.TrainOptions.parse`) at `path` holds for a run without the option (launch/script.ts
   * `returnedOptionLists`), with where the option is declared; null when none. Optional, as
   * {@link callableReturns}.
   */
  callableOptionLists?(path: string): ReadonlyArray<OptionList & { where: string }> | null;
  /**
   * The text of the project file at `relative` (to this file's folder; inside the project's root
   * only), read as modules are (size-limited), or null; the file becomes a dependency. Optional, as
   * {@link callableReturns}.
   */
  projectText?(relative: string): string | null;
  /**
   * The startup variable (frameworks.ts STARTUP_VARIABLES, not by `os.putenv`) the project function
   * at `path` writes first, when it writes it before it initialises anything itself; null when it
   * writes none first, or is not a project function. Only modules whose text names such a variable
   * are parsed for it. Optional, as {@link callableReturns}.
   */
  callableWrite?(path: string): ProjectWrite | null;
  /**
   * Where the project function at `path` writes to CUDA_VISIBLE_DEVICES the index of a device string
   * it is given, its parameter or an attribute of it (`cfg.device.split(":")[1]`;
   * python/visibleIndex.ts `indexWriters`), with where (`utils.py:16`) and the module's absolute path; null when it writes none so,
   * or is not a project function. Only modules whose text names CUDA_VISIBLE_DEVICES are parsed for
   * it. Optional, as {@link callableReturns}.
   */
  callableIndexWrite?(path: string): (IndexWrite & { where: string; file: string }) | null;
  /**
   * The names of the project's module-level functions that {@link callableWrite} answers for (a
   * startup variable written before anything initialises), in the whole project: what the
   * prefilter looks for in a file's text before GPU001 may skip it. Optional, as {@link callableReturns}.
   */
  writerNames?(): ReadonlySet<string>;
  /**
   * {@link writerNames}' answer when the index already holds it (the CLI's prefilter and result
   * cache ask for it before a file is linted), else null: never runs the scan, which in the editor
   * is thrown away at every edit of a module that names a startup variable.
   */
  keptWriterNames?(): ReadonlySet<string> | null;
  /**
   * Whether `path` names a function of one of the project's modules (its module resolves to a
   * project file), without reading that file: a cheap test before asking {@link callableDeviceParams}.
   * Optional, as {@link callableReturns}.
   */
  isProjectFunction?(path: string): boolean;
  /**
   * Whether importing the dotted `path` from this file runs a module of the project (its top
   * package or module resolves to a project file, as {@link moduleInit} looks it up), without
   * reading it. Optional, as {@link callableReturns}.
   */
  isProjectModule?(path: string): boolean;
  /**
   * The first of the project's other `.py` files (ProjectIndex.modulesUnder: the files the
   * writers' scan lists) whose text holds one of `words` (plain substrings), as a path relative to
   * this file's folder; null when none does. Every file read becomes a dependency. Optional, as
   * {@link callableReturns}.
   */
  projectMentions?(words: readonly string[]): string | null;
  /**
   * Whether the source of the project module that defines the function at `path` holds `word` (a
   * plain substring: a variable's name in a list of names counts); false when `path` is no project
   * function. The module becomes a dependency. Optional, as {@link callableReturns}.
   */
  callableModuleMentions?(path: string, word: string): boolean;
  /**
   * The TensorFlow device configuration (`tf.config.set_visible_devices`, ...) that every call of the
   * project function at `path` runs, a statement of its own body with no `return`/`raise` before it
   * (python/tfConfigHelpers.ts), with where (`device_setup.py:7`, and the file and 1-based line);
   * null when none or not a project function. The module becomes a dependency. Optional, as
   * {@link callableReturns}.
   */
  callableTfConfig?(path: string): { call: string; where: string; file: string; line: number } | null;
  /**
   * The launches of this file (or of the project file `of`, an absolute path: GPU039 asks of a file
   * that uses this one) that the Markdown documents around it write down, with how many nodes each
   * runs it on (slurmLaunch.ts `documentedLaunchNodes`); the documents read become the lint's
   * dependencies. Optional, as {@link callableReturns}.
   */
  documentedLaunches?(of?: string): ReadonlyArray<LaunchNodes>;
  /**
   * As {@link documentedLaunches}, with the documents that name `python` read too (a plain
   * `python train.py` line), each launch with whether it sets CUDA_VISIBLE_DEVICES
   * (LaunchNodes.setsVisibleDevices; GPU051). Optional, as {@link callableReturns}.
   */
  documentedPythonLaunches?(): ReadonlyArray<LaunchNodes>;
  /**
   * How the project file `launched` (absolute path: a file a launcher starts) reaches this file's
   * argparse parser through calls it can resolve into the project's modules (python/project.ts
   * `reach`; GPU044): `targets` are this file's scopes whose call runs the parse, or needs its
   * caller to (python/argparseReach.ts `parseTargets`). The calls on the way, outermost first; null
   * when no chain reaches one. The files read become dependencies. Optional, as {@link callableReturns}.
   */
  launchReach?(launched: string, targets: ReadonlyMap<string, "parses" | "caller">): ProjectReach | null;
  /**
   * The calls that the project file `launched` (absolute path: a file a job script starts) makes when
   * run as a program, in execution order: its module level, `__main__` block and the functions and
   * constructors of its own that they call ({@link ModuleModel.calls}; calls into other modules are
   * not followed inside), whether it writes a `*_VISIBLE_DEVICES` variable anywhere, and whether it
   * may read its rank anywhere (rankFlow.ts `mayReadRank`). Null when
   * it cannot be read or is over MAX_MODULE_BYTES. The file becomes a dependency. GPU074. Optional,
   * as {@link callableReturns}.
   */
  launchedCalls?(
    launched: string,
  ): { calls: ReadonlyArray<LaunchedCall>; writesVisible: boolean; readsRank: boolean } | null;
  /**
   * What the project file `target` does with its CUDA device (python/childDevice.ts; GPU075):
   * `module`, a dotted module as `python -m` starts it from this file's project (looked up as an
   * import from this file; its own `.py` file, not a package), or `file`, an absolute path. Its
   * first use of the default CUDA device where it chooses none itself and imports no project module
   * (`defaultUse`), and its first `torch.cuda.set_device` of the local rank (`rankDevice`), each
   * with where (`kernels/tune_worker.py:9`, relative to this file's folder or the project root);
   * null when it is no readable project file. The file becomes a dependency. Optional, as
   * {@link callableReturns}.
   */
  processDevice?(target: { module: string } | { file: string }): ProcessDevice | null;
  /**
   * A call of the project file `launched` (absolute path) that runs after it sets its device by the
   * local rank, in the same function and outside a rank test (python/childDevice.ts
   * `callsAfterRankDevice`), and that calls into this file: one of its module-level `functions`, or
   * one of the `methods` of its class `cls` on an instance made from it (`TUNER = Autotuner(...)`
   * then `TUNER.best_config(...)`). With where (`train.py:17`, relative to the project root); null
   * when none. The launched file (and the modules its import goes through) become dependencies.
   * Optional, as {@link callableReturns}.
   */
  rankCaller?(
    launched: string,
    callee: { functions: readonly string[] } | { cls: string; methods: readonly string[] },
  ): { line: number; text: string; where: string } | null;
  /** Changes whenever anything the lookup could answer changes (kept facts are dropped then). */
  readonly version: string;
}

/** One call of a launched program (ProjectLookup.launchedCalls). */
export interface LaunchedCall {
  /** The callee's dotted path as the launched file resolves it, or null (a method of an object, a parameter). */
  path: string | null;
  /** The callee's last name: `KNNEdgeBuilder`, or the method's name for `builder.update_graph(...)`. */
  name: string | null;
  /** The callee at {@link path} is a function or class of the linted file. */
  here: boolean;
  /** Where, for messages: `train.py:39` (relative to the linted file's folder or the project root). */
  where: string;
}

/** What a project file does with its CUDA device (ProjectLookup.processDevice). */
export interface ProcessDevice {
  /** The file (absolute path) and its name for messages (`kernels/tune_worker.py`). */
  file: string;
  label: string;
  defaultUse: { line: number; form: string; where: string } | null;
  rankDevice: { line: number; form: string; where: string } | null;
}

/** How a launched file reaches a parser of the linted file (ProjectLookup.launchReach). */
export interface ProjectReach {
  /** The launched file for messages, relative to the project root: `pretrain_gpt.py`. */
  launched: string;
  /** The calls for messages, relative to the project root: `pretrain_gpt.py:15 → megatron/initialize.py:14`. */
  where: string;
  /** The same calls: absolute path and the call's range, outermost (in the launched file) first. */
  chain: ReadonlyArray<{ file: string; range: Range }>;
}

/** One element of a project function's returned tuple, as a rank (ProjectLookup.callableReturns). */
export interface ProjectRank {
  kind: "global" | "local" | "node" | "unknown";
  /** The environment variable read there (`RANK`), or null (a rank call, or unknown). */
  variable: string | null;
  /** Where it is read: `envs.py:7`; empty when unknown. */
  where: string;
}

/** The analysed module. */
export interface ModuleModel {
  /** The module's syntax trees (python/moduleTrees.ts: one per chunk of top-level statements). */
  tree: ModuleTrees;
  text: string;
  /** Local name → dotted path it is bound to by an import or a module-level alias. */
  symbols: Map<string, string>;
  /** Module-level function definitions by name. */
  functions: Map<string, SyntaxNode>;
  /** Module-level class definitions by name (the `class_definition` node, also under decorators). */
  classes: Map<string, SyntaxNode>;
  /** Events in execution order. */
  events: TimelineEvent[];
  /** Every call the timeline walk visited, in execution order (a call in an inlined function appears where it runs). */
  calls: TimelineCall[];
  /**
   * The events of each module-level function the module never calls (tests, hooks, callbacks,
   * entry points started by a framework), by the function's node id, in execution order within
   * it. Such a function runs after the module's own code (imported first), so its state starts
   * from the end of {@link events}; these events are kept apart so that rules reading `events`
   * see only what the module itself runs.
   */
  functionTimelines: FunctionTimeline[];
  /** Every node of the given type(s) in the module, in document order (collected once per type). */
  nodesOfType(types: string | string[]): SyntaxNode[];
  /**
   * The nodes of the given type(s) inside the top-level statements whose text contains one of
   * `words` (plain substrings), in document order: a superset of the nodes whose own text contains
   * one. For a rule whose nodes must mention a word (a sound text test, as in prefilter.ts), without
   * a traversal of the whole file. `whole`: the words count only as whole identifiers.
   */
  nodesMentioning(types: string | string[], words: readonly string[], whole?: boolean): SyntaxNode[];
  /**
   * Every expression statement that writes the environment (a literal name), in document order,
   * with its writes as envWritesAnywhere reports a write off the timeline (`inFunction` and
   * `nested` from its position).
   */
  statementWrites(): Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }>;
  /** Frameworks imported anywhere in the file. */
  frameworks: Set<Framework>;
  /** Resolves an expression to the dotted path it names (`th.cuda.is_available` → `torch.cuda.is_available`), or null. */
  resolve(node: SyntaxNode | null | undefined): string | null;
  /** Whether an expression denotes a CUDA device (`"cuda:0"`, `torch.device("cuda")`, a variable bound to one). */
  isCudaDevice(node: SyntaxNode | null | undefined): boolean;
  /** The latest module-level assignment `name = value` before `before` (a byte offset), or null. */
  valueOf(name: string, before: number): SyntaxNode | null;
  /** Words one of which the text of every statement that writes the environment contains (see namesResolvingIn). */
  writeWords: readonly string[];
  /**
   * The local names that {@link resolve} turns into a path passing `test` when one stands alone:
   * import bindings (`from subprocess import Popen as P`: `P`) and module-level aliases as resolve
   * follows them (`launch = subprocess.Popen`). With the last attribute names of the paths, the
   * words one of which the text of every expression resolving to such a path contains.
   */
  namesResolvingTo(test: (path: string) => boolean): string[];
  /** The literal string names of `os.environ`-like reads and writes are resolved through this. */
  isEnviron(node: SyntaxNode | null | undefined): boolean;
  /**
   * {@link resolve} with a cache of its own, which starts empty: for a caller that keeps a model's
   * name resolution after the lint (the server's machine hovers, machineHelp.ts `machineModel`)
   * without the cache the lint filled (an entry per resolved node: MiBs on a large file).
   */
  freshResolve(): ModuleModel["resolve"];
  /** What the rules' helpers work out from this model, kept with it (empty when the model is built). */
  readonly derived: ModelDerived;
}

/**
 * What the rules' helpers work out from one model on first use (each fills its own field): kept
 * with the model, so for as long as the model is held (a lint; lint.ts `LintResult.model`), and
 * dropped with it. Nothing here is kept from one lint to the next (engine/analysis.ts
 * `DocumentAnalysis` holds what is).
 */
export interface ModelDerived {
  /** python/timeline.ts `stateBefore`: per variable, the first freezing init and reading import; each event's index. */
  firsts?: Firsts;
  /** fixes.ts `moveAboveEdits`: the names module-level statements bind before an offset, by offset. */
  boundBefore?: Map<number, Set<string>>;
  /** python/ray.ts `remoteDefinitions`: the `@ray.remote` tasks and actors. */
  remotes?: RemoteDefinition[];
  /** {@link envWritesAnywhere}: every environment write with a literal name, in source order. */
  writesAnywhere?: EnvWriteEvent[];
  /** python/rankFlow.ts `argparseDefaultNodes`: the `default=` expressions of `add_argument` calls, by destination. */
  argparseDefaults?: Map<string, Array<SyntaxNode | null>>;
  /** rules/shared/py.ts `calleePath`: each call's callee path (null: none), by the call's node id. */
  calleePaths?: Map<number, string | null>;
}

/**
 * Node types collected in ONE traversal of the tree per model (each traversal of a large file costs
 * as much as the next; the walk, the model's queries and the rules ask for these again and again).
 */
const CORE_TYPES: readonly string[] = [
  "call",
  "lambda",
  "function_definition",
  "class_definition",
  "import_statement",
  "import_from_statement",
  "assignment",
  "expression_statement",
  "subscript",
  // Rare, and asked by the walk for a removal of a startup variable (walker.ts writeSpan).
  "delete_statement",
];
const CORE_TYPE_LIST = [...CORE_TYPES];
/** Types collected together in a second traversal, when a rule first asks for one of them. */
const EXTRA_TYPES: readonly string[] = ["string", "comment"];

/** Dotted paths deeper than this name nothing GPU Pilot knows; the cap keeps a 50,000-part attribute chain from overflowing the stack. */
const MAX_PATH_DEPTH = 64;

/** The file-wide name bindings every query resolves through (pass 1 of {@link buildModel}). */
export interface Bindings {
  /** Local name → dotted path, from imports anywhere in the file. */
  symbols: Map<string, string>;
  /** Module-level function definitions by name. */
  functions: Map<string, SyntaxNode>;
  /** Module-level class definitions by name (the `class_definition` node, also under decorators). */
  classes: Map<string, SyntaxNode>;
  /** `name = value` assignments anywhere, by name: the values in document order. */
  assignments: Map<string, ValueRef[]>;
  /** Frameworks imported anywhere. */
  frameworks: Set<Framework>;
  /** python/walker.ts `envWordsOf` of these bindings, once asked. */
  envWords?: string[];
}

/**
 * Node lists by type for one tree, each type collected once (rules ask for "call", "string", ...
 * repeatedly): {@link CORE_TYPES} in one traversal, {@link EXTRA_TYPES} in another on first use,
 * other types each in its own.
 */
export class NodeIndex {
  private readonly byType = new Map<string, SyntaxNode[]>();
  /** The nodes of CORE_TYPES in document order (pre-order: an enclosing node before the nodes inside it). */
  private coreNodes: SyntaxNode[] | undefined;
  /** The calls and deferred scopes (lambda, def, class) of coreNodes, in pre-order, with their end offsets (a getter into the parser each time). */
  private callsAndScopes: Array<{ n: SyntaxNode; start: number; end: number; i: number }> = [];
  private extraDone = false;
  private topLevel: SyntaxNode[] | undefined;
  private readonly ofStatement = new Map<number, Array<{ n: SyntaxNode; start: number; end: number; i: number }>>();
  /**
   * @param perStatement answer {@link callsAndScopesIn} from one traversal of the scope's top-level
   *   statement (where most statements' facts are reused, a traversal of the whole tree is the cost to avoid).
   */
  constructor(
    private readonly module: ModuleTrees,
    private readonly perStatement = false,
    statements?: SyntaxNode[],
  ) {
    this.topLevel = statements;
  }

  /** Whether the one traversal of the whole tree was done. */
  hasCore(): boolean {
    return !!this.coreNodes;
  }

  /** The top-level statement that contains offset `at` (binary search), or null. */
  statementAt(at: number): SyntaxNode | null {
    const list = this.statements();
    let lo = 0,
      hi = list.length - 1,
      best: SyntaxNode | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].startIndex <= at) {
        best = list[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }

  private callsAndScopesOfStatement(
    scope: SyntaxNode,
  ): Array<{ n: SyntaxNode; start: number; end: number; i: number }> {
    const owner = this.statementAt(scope.startIndex);
    let list = this.ofStatement.get(owner ? owner.id : -1);
    if (!list) {
      const types = ["call", ...DEFERRED];
      list = (owner ? this.inStatement(owner, types) : this.module.descendantsOfType(types))
        .filter((n): n is SyntaxNode => !!n)
        .map((n, i) => ({ n, start: n.startIndex, end: n.endIndex, i }));
      this.ofStatement.set(owner ? owner.id : -1, list);
    }
    return list;
  }

  /** Each top-level statement's nodes of {@link CORE_TYPES} (pre-order), all and by type, by the statement's node id. */
  private readonly statementNodes = new Map<number, { all: SyntaxNode[]; byType: Map<string, SyntaxNode[]> }>();

  /**
   * The nodes of `types` (each one of {@link CORE_TYPES}) in the top-level statement `st`, the
   * statement itself included when it is one, in pre-order: what `st.descendantsOfType(types)`
   * gives, from one traversal of the statement for every such question. A statement analysed
   * afresh is asked for its imports and assignments (cache.ts Memo), its writes and reads of the
   * environment and its calls (walker.ts): five traversals of the same subtree in the parser's
   * WebAssembly were a quarter of a full lint of a 5,000-line file (BENCHMARKS.md).
   */
  inStatement(st: SyntaxNode, types: readonly string[]): SyntaxNode[] {
    let kept = this.statementNodes.get(st.id);
    if (!kept) {
      const all: SyntaxNode[] = [];
      const byType = new Map<string, SyntaxNode[]>();
      for (const n of st.descendantsOfType(CORE_TYPE_LIST)) {
        if (!n) continue;
        all.push(n);
        const type = n.type; // a getter that asks the parser
        const list = byType.get(type);
        if (list) list.push(n);
        else byType.set(type, [n]);
      }
      kept = { all, byType };
      this.statementNodes.set(st.id, kept);
    }
    if (types.length === 1) return kept.byType.get(types[0]) ?? [];
    const wanted = new Set(types);
    return kept.all.filter((n) => wanted.has(n.type));
  }

  /** The top-level statements (named children of the module, comments included), in order. */
  statements(): SyntaxNode[] {
    return (this.topLevel ??= this.module.statements);
  }

  private collect(types: readonly string[]): SyntaxNode[] {
    for (const t of types) this.byType.set(t, []);
    const all = this.module.descendantsOfType([...types]);
    for (const n of all) this.byType.get(n.type)?.push(n);
    return all;
  }

  /** The nodes of CORE_TYPES, in pre-order (one traversal, on first use). */
  core(): SyntaxNode[] {
    if (!this.coreNodes) {
      this.coreNodes = this.collect(CORE_TYPES);
      this.callsAndScopes = this.coreNodes
        .filter((n) => n.type === "call" || DEFERRED.includes(n.type))
        .map((n, i) => ({ n, start: n.startIndex, end: n.endIndex, i }));
    }
    return this.coreNodes;
  }

  /** {@link ModuleModel.nodesOfType}. */
  ofType(types: string | string[]): SyntaxNode[] {
    this.core();
    const key = Array.isArray(types) ? types.join(",") : types;
    let hit = this.byType.get(key);
    if (hit) return hit;
    const list = Array.isArray(types) ? types : [types];
    if (!this.extraDone && list.some((t) => EXTRA_TYPES.includes(t))) {
      this.extraDone = true;
      this.collect(EXTRA_TYPES);
      hit = this.byType.get(key);
      if (hit) return hit;
    }
    if (Array.isArray(types) && types.every((t) => CORE_TYPES.includes(t) || EXTRA_TYPES.includes(t))) {
      hit = types
        .flatMap((t) => this.byType.get(t)!)
        .sort((a, b) => a.startIndex - b.startIndex || b.endIndex - a.endIndex);
    } else {
      hit = this.module.descendantsOfType(types);
    }
    this.byType.set(key, hit);
    return hit;
  }

  /**
   * The calls and deferred scopes inside `scope` (itself included when it is one), in pre-order:
   * what `scope.descendantsOfType(["call", ...DEFERRED])` gives, from the one traversal.
   */
  callsAndScopesIn(scope: SyntaxNode): Array<{ n: SyntaxNode; start: number; end: number; i: number }> {
    const list =
      this.coreNodes || !this.perStatement ? (this.core(), this.callsAndScopes) : this.callsAndScopesOfStatement(scope);
    const start = scope.startIndex,
      end = scope.endIndex;
    let lo = 0,
      hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].start < start) lo = mid + 1;
      else hi = mid;
    }
    const out: Array<{ n: SyntaxNode; start: number; end: number; i: number }> = [];
    for (let k = lo; k < list.length && list[k].start <= end; k++) if (list[k].end <= end) out.push(list[k]);
    return out;
  }
}

/**
 * The value of a `name = value` assignment: its node type, text and start offset, and the node
 * itself, found on first use where the model reuses a statement's facts from an earlier tree.
 */
export interface ValueRef {
  type: string;
  text: string;
  start: number;
  node(): SyntaxNode;
}

/** Pass 1: imports anywhere (aliases are file-wide), module-level defs and `name = value` assignments. */
function collectBindings(index: NodeIndex): Bindings {
  const b = emptyBindings();
  for (const imp of index.ofType(["import_statement", "import_from_statement"])) {
    if (!imp) continue;
    for (const [local, path] of importBindings(imp)) {
      b.symbols.set(local, path);
      const f = frameworkOfModule(path);
      if (f) b.frameworks.add(f);
    }
  }
  for (const stmt of index.statements()) {
    const def = stmt.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    if (def?.type === "function_definition") {
      const name = def.childForFieldName("name")?.text;
      if (name) b.functions.set(name, def);
    } else if (def?.type === "class_definition") {
      const name = def.childForFieldName("name")?.text;
      if (name) b.classes.set(name, def);
    }
  }
  for (const a of index.ofType("assignment")) {
    if (!a) continue;
    const left = a.childForFieldName("left");
    const right = a.childForFieldName("right");
    if (left?.type !== "identifier" || !right) continue;
    const list = b.assignments.get(left.text) ?? [];
    list.push({ type: right.type, text: right.text, start: right.startIndex, node: () => right });
    b.assignments.set(left.text, list);
  }
  return b;
}

/** The queries of a model over its bindings: resolve, valueOf, isCudaDevice, isEnviron. */
export type Queries = Pick<ModuleModel, "resolve" | "valueOf" | "isCudaDevice" | "isEnviron" | "namesResolvingTo">;

/** `resolve` of {@link ModuleModel}, cached per node id (several rules resolve the same calls). */
function makeResolve(
  { symbols, assignments }: Bindings,
  track: Tracker,
): { resolve: ModuleModel["resolve"]; resolveNoAlias: (node: SyntaxNode | null) => string | null } {
  // The names the resolution of the node being resolved looked up (kept with its cached result).
  let names: string[] = [];
  const resolveNoAlias = (node: SyntaxNode | null, depth = 0): string | null => {
    if (!node || depth > MAX_PATH_DEPTH) return null;
    if (node.type === "identifier") {
      names.push(node.text);
      return symbols.get(node.text) ?? null;
    }
    if (node.type === "attribute") {
      const base = resolveNoAlias(node.childForFieldName("object"), depth + 1);
      const attr = node.childForFieldName("attribute")?.text;
      return base && attr ? `${base}.${attr}` : null;
    }
    return null;
  };
  const resolveAt = (node: SyntaxNode | null | undefined, depth: number): string | null => {
    if (!node || depth > MAX_PATH_DEPTH) return null;
    switch (node.type) {
      case "identifier": {
        names.push(node.text);
        const s = symbols.get(node.text);
        if (s) return s;
        // `env = os.environ` style module-level aliases.
        const vals = assignments.get(node.text);
        if (
          vals &&
          vals.length === 1 &&
          (vals[0].type === "attribute" || vals[0].type === "identifier") &&
          vals[0].text !== node.text
        ) {
          return resolveNoAlias(vals[0].node());
        }
        return null;
      }
      case "attribute": {
        const base = resolveAt(node.childForFieldName("object"), depth + 1);
        const attr = node.childForFieldName("attribute")?.text;
        return base && attr ? `${base}.${attr}` : null;
      }
      case "call": {
        const base = resolveAt(node.childForFieldName("function"), depth + 1);
        return base ? `${base}()` : null;
      }
      case "parenthesized_expression":
        return resolveAt(node.namedChildren[0], depth + 1);
      default:
        return null;
    }
  };
  const resolveCache = new Map<number, { v: string | null; names: string[] }>();
  const resolve = (node: SyntaxNode | null | undefined): string | null => {
    if (!node) return null;
    let hit = resolveCache.get(node.id);
    if (hit === undefined) {
      names = [];
      hit = { v: resolveAt(node, 0), names };
      resolveCache.set(node.id, hit);
    }
    if (track.deps) for (const n of hit.names) track.deps.resolved.add(n);
    return hit.v;
  };
  const resolveNoAliasTracked = (node: SyntaxNode | null): string | null => {
    names = [];
    const v = resolveNoAlias(node);
    if (track.deps) for (const n of names) track.deps.resolved.add(n);
    return v;
  };
  return { resolve, resolveNoAlias: resolveNoAliasTracked };
}

/** The model's queries over `b`. */
function makeQueries(b: Bindings, track: Tracker = { deps: null }): Queries & { writeWords: string[] } {
  const { resolve, resolveNoAlias } = makeResolve(b, track);
  const valueOf = (name: string, before: number): SyntaxNode | null => {
    track.deps?.values.add(name);
    const list = b.assignments.get(name);
    if (!list) return null;
    let best: ValueRef | null = null;
    for (const v of list) if (v.start < before) best = v;
    return best ? best.node() : null;
  };
  const isCudaDevice = (node: SyntaxNode | null | undefined, depth = 0): boolean => {
    if (!node || depth > 4) return false;
    switch (node.type) {
      case "string":
        return isCudaDeviceString(node);
      case "call": {
        const q = resolve(node.childForFieldName("function"));
        if (q === "torch.device") {
          const arg = node.childForFieldName("arguments")?.namedChildren[0];
          return isCudaDevice(arg, depth + 1);
        }
        return false;
      }
      case "conditional_expression":
        return node.namedChildren.some((c, i) => i !== 1 && isCudaDevice(c, depth + 1));
      case "identifier": {
        const v = valueOf(node.text, node.startIndex);
        return v ? isCudaDevice(v, depth + 1) : false;
      }
      case "parenthesized_expression":
        return isCudaDevice(node.namedChildren[0], depth + 1);
      default:
        return false;
    }
  };
  const isEnviron = (node: SyntaxNode | null | undefined): boolean => resolve(node) === "os.environ";
  const namesResolvingTo = (test: (path: string) => boolean) => namesResolvingIn(b, resolveNoAlias, test);
  return {
    resolve,
    valueOf,
    isCudaDevice,
    isEnviron,
    namesResolvingTo,
    writeWords: ["environ", "putenv", ...namesResolvingTo((p) => WRITE_PATHS.has(p))],
  };
}

/** The paths through which a statement writes the environment (envWritesOf). */
const WRITE_PATHS = new Set(["os", "os.environ", "os.putenv"]);

/**
 * {@link ModuleModel.namesResolvingTo} over `b`. The words one of which the text of every statement
 * that writes the environment (envWritesOf) contains are `environ`, `putenv` and the names resolving
 * to `os`, `os.environ` or `os.putenv` ({@link ModuleModel.writeWords}): a write needs `resolve` to
 * give `os.environ` or `os.putenv`, and a resolved path is made of one such name followed by
 * attribute names written in the text.
 */
function namesResolvingIn(
  { symbols, assignments }: Bindings,
  resolveNoAlias: (node: SyntaxNode | null) => string | null,
  test: (path: string) => boolean,
): string[] {
  const names: string[] = [];
  for (const [name, path] of symbols) if (test(path)) names.push(name);
  for (const [name, vals] of assignments) {
    if (
      symbols.has(name) ||
      vals.length !== 1 ||
      (vals[0].type !== "attribute" && vals[0].type !== "identifier") ||
      vals[0].text === name
    )
      continue;
    const path = resolveNoAlias(vals[0].node());
    if (path && test(path)) names.push(name);
  }
  return names;
}

/**
 * Which top-level statements of a module mention which words: each word's offsets are found once
 * in the text (String.indexOf), each statement located by binary search over their start offsets.
 */
export class Mentions {
  private readonly byWords = new Map<string, Array<{ start: number; end: number }>>();
  /**
   * @param local answer {@link within} by searching the range itself unless the word list's
   *   occurrences in the whole text were listed already: where most statements' facts are kept,
   *   only the few analysed again ask, and listing every occurrence is the cost to avoid.
   */
  constructor(
    private readonly index: NodeIndex,
    private readonly text: string,
    private readonly local = false,
  ) {}

  /** The word occurrences of `words` as sorted [start, end) offsets (cached per word list). */
  private keyOf(words: readonly string[], whole: boolean): string {
    return `${whole ? "w" : "s"}\u0000${words.join("\u0000")}`;
  }

  /** {@link within} by searching `text[start, end)` alone (a slice: a word absent there is not looked for beyond `end`). */
  private searchIn(start: number, end: number, words: readonly string[], whole: boolean): boolean {
    const t = this.text;
    const part = t.slice(start, end);
    for (const w of words) {
      if (!w) continue;
      for (let i = part.indexOf(w); i >= 0; i = part.indexOf(w, i + 1)) {
        const at = start + i;
        if (!whole || ((at === 0 || !isWordCode(t.charCodeAt(at - 1))) && !isWordCode(t.charCodeAt(at + w.length))))
          return true;
      }
    }
    return false;
  }

  private occurrences(words: readonly string[], whole: boolean): Array<{ start: number; end: number }> {
    const key = this.keyOf(words, whole);
    let occ = this.byWords.get(key);
    if (!occ) {
      // A list that extends the last one listed (the same words first, more after them: the walk's
      // functionsThatMatter adds each name it finds to its list and asks again) keeps the last
      // list's occurrences and searches the text for the added words only, not for all of them
      // again (python3-torch's distributed_test.py: one search of the whole file per word and name).
      const last = this.lastListed;
      const from =
        last && last.whole === whole && last.words.length <= words.length && last.words.every((w, i) => w === words[i])
          ? last.words.length
          : 0;
      occ = from > 0 ? [...last!.occ] : [];
      const t = this.text;
      for (let k = from; k < words.length; k++) {
        const w = words[k];
        if (!w) continue;
        for (let i = t.indexOf(w); i >= 0; i = t.indexOf(w, i + 1)) {
          if (!whole || ((i === 0 || !isWordCode(t.charCodeAt(i - 1))) && !isWordCode(t.charCodeAt(i + w.length))))
            occ.push({ start: i, end: i + w.length });
        }
      }
      occ.sort((a, b) => a.start - b.start || a.end - b.end);
      this.byWords.set(key, occ);
      this.lastListed = { words: [...words], whole, occ };
    }
    return occ;
  }
  /** The word list {@link occurrences} listed last (a copy: the caller's list may grow), and what it found. */
  private lastListed:
    { words: readonly string[]; whole: boolean; occ: Array<{ start: number; end: number }> } | undefined;

  /** Whether `text[start, end)` contains one of `words` (as a whole identifier when `whole`). */
  within(start: number, end: number, words: readonly string[], whole = false): boolean {
    if (this.local && !this.byWords.has(this.keyOf(words, whole))) return this.searchIn(start, end, words, whole);
    const occ = this.occurrences(words, whole);
    let lo = 0,
      hi = occ.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (occ[mid].start < start) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < occ.length && occ[k].start < end; k++) if (occ[k].end <= end) return true;
    return false;
  }

  /**
   * The top-level statements (named children of the module) whose text contains one of `words`:
   * from the occurrences, each located by binary search over the statements' starts (the statements
   * are disjoint and in order, so an occurrence can only lie in the last one starting at or before it).
   */
  statementsWith(words: readonly string[], whole = false): SyntaxNode[] {
    const occ = this.occurrences(words, whole);
    const out: SyntaxNode[] = [];
    if (occ.length === 0) return out;
    let last: SyntaxNode | null = null;
    for (const o of occ) {
      const st = this.index.statementAt(o.start);
      if (!st || st === last || o.end > st.endIndex) continue;
      out.push(st);
      last = st;
    }
    return out;
  }

  /** {@link ModuleModel.nodesMentioning}: from the index's lists, or one traversal per statement for other types. */
  nodesIn(types: string | string[], words: readonly string[], whole = false): SyntaxNode[] {
    const list = Array.isArray(types) ? types : [types];
    const statements = this.statementsWith(words, whole);
    if (!this.index.hasCore() || !list.every((t) => CORE_TYPES.includes(t) || EXTRA_TYPES.includes(t))) {
      const out: SyntaxNode[] = [];
      for (const st of statements) for (const n of st.descendantsOfType(types)) if (n) out.push(n);
      return out;
    }
    // Nodes of the lists (document order) that lie in one of the statements (document order too).
    // A node's end is asked of the parser only for a node that starts in a statement (startIndex is
    // kept on the node, endIndex is a call into the parser); the statements' ends are asked once.
    const out: SyntaxNode[] = [];
    const starts = statements.map((st) => st.startIndex);
    const ends = statements.map((st) => st.endIndex);
    let k = 0;
    for (const n of this.index.ofType(types)) {
      const at = n.startIndex;
      while (k < statements.length && ends[k] < at) k++;
      if (k === statements.length) break;
      if (at >= starts[k] && n.endIndex <= ends[k]) out.push(n);
    }
    return out;
  }
}

/**
 * Whether the module's code names CUDA_VISIBLE_DEVICES in a string (`os.environ["CUDA_VISIBLE_DEVICES"]`,
 * `env={"CUDA_VISIBLE_DEVICES": ...}`, `getenv("CUDA_VISIBLE_DEVICES")`): its device ordinals may
 * then be relative to a selection it makes. A comment or a docstring's mention in passing does not
 * count; a docstring that quotes the name does (a string node holding it).
 */
export function namesVisibleDevices(model: ModuleModel): boolean {
  return (
    model.text.includes("CUDA_VISIBLE_DEVICES") &&
    model.nodesOfType("string").some((n) => !!n?.text.includes("CUDA_VISIBLE_DEVICES"))
  );
}

/**
 * Whether a string node is a CUDA device: a literal `"cuda"`/`"cuda:N"` (frameworks.ts
 * `cudaDeviceOrdinal`) or an f-string whose text starts with `cuda` (`f"cuda:{rank}"`).
 */
export function isCudaDeviceString(node: SyntaxNode): boolean {
  const v = stringValue(node);
  if (v !== null) return cudaDeviceOrdinal(v) !== null;
  const first = node.namedChildren.find((c) => c?.type === "string_content");
  return !!first && first.startIndex === node.firstChild!.endIndex && first.text.startsWith("cuda");
}

/**
 * Builds the model of a parsed module. Never throws on broken code: ERROR nodes are skipped.
 * @param cache the facts kept from the lint of an earlier version of the same document (a new
 *   ModelCache for the first): statements whose subtree tree-sitter reused are not analysed again
 *   unless a name they looked up is bound differently now; the cache is updated to this tree.
 *   A notebook's IPython lines (`magics`) are not kept: their events are read from the lines at
 *   each lint and placed between the statements' kept ones. The model is the same as without a cache.
 */
export function buildModel(
  tree: ModuleTrees,
  text: string,
  options: ModelOptions,
  magics: MagicLine[] = [],
  cache?: ModelCache,
  edit?: KnownChange,
): ModuleModel {
  if (cache) return buildKeptModel(tree, text, options, cache, magics, edit);
  const index = new NodeIndex(tree);
  const nodesOfType = (types: string | string[]) => index.ofType(types);
  const bindings = collectBindings(index);
  const { writeWords, ...queries } = makeQueries(bindings);
  const mentions = new Mentions(index, text);
  // Pass 2, the timeline walk, runs on first use of `events`, `calls` or `functionTimelines`: a
  // file whose candidate rules (prefilter.ts) need none of them skips it.
  let timeline: Timeline | undefined;
  const walk = () =>
    (timeline ??= new TimelineWalker(tree, bindings, queries, options, magics, mentions, writeWords, index).run());
  return {
    tree,
    text,
    symbols: bindings.symbols,
    functions: bindings.functions,
    classes: bindings.classes,
    frameworks: bindings.frameworks,
    nodesOfType,
    ...queries,
    nodesMentioning: (types, words, whole) => mentions.nodesIn(types, words, whole),
    writeWords,
    statementWrites: () => statementWrites(mentions.nodesIn("expression_statement", writeWords, true), queries),
    get events() {
      return walk().events;
    },
    get calls() {
      return walk().calls;
    },
    get functionTimelines() {
      return walk().functionTimelines;
    },
    freshResolve: () => makeResolve(bindings, { deps: null }).resolve,
    derived: {},
  };
}

/** Where a text differs from an earlier one (`from`), when the caller has found it already. */
export interface KnownChange {
  from: string;
  change: TextChange;
}

/** {@link buildModel} with kept facts. */
function buildKeptModel(
  tree: ModuleTrees,
  text: string,
  options: ModelOptions,
  cache: ModelCache,
  magics: readonly MagicLine[],
  edit?: KnownChange,
): ModuleModel {
  const statements = tree.statements;
  const last = cache.text;
  const change = last === undefined ? undefined : edit && edit.from === last ? edit.change : textChange(last, text);
  const index = new NodeIndex(tree, true, statements);
  const memo = new Memo(cache, statements, text, change, tree.hasError, tree.statementShapes(), (st, types) =>
    index.inStatement(st, types),
  );
  cache.text = text;
  const { b: bindings, functionDefs, classDefs } = bindingsOf(memo);
  const { writeWords, ...queries } = makeQueries(bindings, memo.track);
  const key = [
    options.eagerInitModules.join(","),
    options.torchBelow24,
    JSON.stringify(options.libraryPins ?? {}),
    options.project?.version ?? "",
    [...bindings.frameworks].sort().join(","),
    writeWords.join(","),
    envWordsOf(bindings).join(","),
  ].join("\u0002");
  dropStale(memo, key, changedNames(memo, cache, bindings, functionDefs, classDefs));
  Object.assign(cache, { statements: memo.facts, key, bindings, functionDefs, classDefs });
  const mentions = new Mentions(index, text, true);
  let timeline: Timeline | undefined;
  const walk = () =>
    (timeline ??= new TimelineWalker(tree, bindings, queries, options, magics, mentions, writeWords, index, memo, () =>
      statementWritesKept(memo, index, mentions, writeWords, queries).map((w) => w.statement),
    ).run());
  return {
    tree,
    text,
    symbols: bindings.symbols,
    functions: bindings.functions,
    classes: bindings.classes,
    frameworks: bindings.frameworks,
    ...queries,
    nodesOfType: (types) => index.ofType(types),
    nodesMentioning: (types, words, whole) => mentions.nodesIn(types, words, whole),
    writeWords,
    statementWrites: () => statementWritesKept(memo, index, mentions, writeWords, queries),
    get events() {
      return walk().events;
    },
    get calls() {
      return walk().calls;
    },
    get functionTimelines() {
      return walk().functionTimelines;
    },
    freshResolve: () => makeResolve(bindings, { deps: null }).resolve,
    derived: {},
  };
}

/** {@link statementWrites} per top-level statement: kept, or found and kept. */
function statementWritesKept(
  memo: Memo,
  index: NodeIndex,
  mentions: Mentions,
  writeWords: readonly string[],
  q: Queries,
): Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }> {
  const out: Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }> = [];
  const none = new Set<StatementFacts>();
  for (const f of memo.facts) {
    if (f.writes) {
      for (const w of f.writes.list)
        out.push({ statement: memo.node(w.statement), writes: w.writes.map((r) => memo.event(r) as EnvWriteEvent) });
      continue;
    }
    const deps = newDeps();
    memo.track.deps = deps;
    let found: Array<{ statement: SyntaxNode; writes: EnvWriteEvent[] }> = [];
    try {
      const st = f.node;
      if (mentions.within(st.startIndex, st.endIndex, writeWords, true))
        // Only the expression statements that name a write word can write (walker.ts recordEnv asks the same).
        found = statementWrites(
          index
            .inStatement(st, ["expression_statement"])
            .filter((e) => mentions.within(e.startIndex, e.endIndex, writeWords, true)),
          q,
        );
    } finally {
      memo.track.deps = null;
    }
    f.writes = {
      deps,
      list: found.map((x) => ({
        statement: memo.ref(x.statement),
        inFunction: x.writes[0].inFunction,
        nested: x.writes[0].nested,
        writes: x.writes.map((w) => memo.record(w, none)),
      })),
    };
    out.push(...found);
  }
  return out;
}

/**
 * Every environment write with a literal name in the file, wherever it sits (also in functions the
 * module never calls), plus the `%env` magics, in source order. A write that is on the timeline is
 * returned as its timeline event (once, even when its function is called twice); the others get
 * `inFunction` / `nested` from their position. For rules about the write itself (a misspelled or
 * unknown name, `os.putenv`), where the moment it runs does not matter.
 */
export function envWritesAnywhere(model: ModuleModel): EnvWriteEvent[] {
  return (model.derived.writesAnywhere ??= computeEnvWritesAnywhere(model));
}

function computeEnvWritesAnywhere(model: ModuleModel): EnvWriteEvent[] {
  const onTimeline = new Map<number, EnvWriteEvent[]>();
  const out: EnvWriteEvent[] = [];
  for (const e of model.events) {
    if (e.kind !== "envWrite") continue;
    if (!e.statement) {
      out.push(e);
      continue;
    }
    const list = onTimeline.get(e.statement.id) ?? [];
    if (!list.some((x) => x.variable === e.variable && x.nameNode?.id === e.nameNode?.id)) list.push(e);
    onTimeline.set(e.statement.id, list);
  }
  for (const { statement, writes } of model.statementWrites()) out.push(...(onTimeline.get(statement.id) ?? writes));
  return out.sort(
    (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
  );
}
