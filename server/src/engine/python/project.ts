// The project's own modules, as the files that import them see them: which ones initialise CUDA
// when imported, and which of their functions initialise CUDA when called. A file's lint asks this
// through ModelOptions.project (python/model.ts), so that
//
//     import modules.img2img            # modules/shared.py, imported by it, calls torch.cuda.is_available()
//     os.environ["CUDA_VISIBLE_DEVICES"] = "1"
//
// is GPU001 (the write comes after CUDA initialised), as the same code written in one file is.
//
// How a module is found (Python's import system, docs.python.org/3/reference/import.html, "The
// module search path"): `python script.py` puts the script's folder first on sys.path and
// `python -m pkg.mod` the working folder, usually the project root. So an absolute import is looked
// up in the importing file's folder, then each folder above it up to the project root (the nearest
// folder holding pyproject.toml, setup.py, setup.cfg or .git), then the root's `src/` (the src
// layout). Without a project root above, in the file's folder and, while that is a regular package,
// the folders above it up to the one that holds the top package. `a.b.c` is `a/b/c.py` or `a/b/c/__init__.py`; importing it first runs `a/__init__.py` and
// `a/b/__init__.py` (docs.python.org/3/reference/import.html#regular-packages). A relative import
// (`from .utils import f`) is looked up from the importing file's folder, one folder up per extra dot.
//
// What the analysis cannot see it does not guess: a module that is not found, not a regular file,
// over MAX_MODULE_BYTES or part of an import cycle counts as initialising nothing; names of the
// frameworks and of the catalogued libraries are never looked up in the project (a vendored copy
// of torch is not the torch the program imports).
import { readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  DEFAULT_EAGER_INIT_MODULES,
  frameworkOfModule,
  isEagerInitModule,
  STARTUP_PREFIXES,
  STARTUP_VARIABLES,
} from "../frameworks";
import { readWorkspaceFile, readWorkspaceText } from "../../../../common/src/fs/workspaceFile";
import type { EnvWriteEvent, FunctionTimeline, InitEvent, TimelineEvent } from "./events";
import {
  buildModel,
  envWritesAnywhere,
  namesVisibleDevices,
  type ModelOptions,
  type ModuleModel,
  type KeyedDeviceUse,
  type LaunchedCall,
  type PassedOrdinalUse,
  type ProjectInit,
  type ProjectWrite,
  type ProjectLookup,
  type ProjectRank,
  type ProjectReach,
  type ProcessDevice,
} from "./model";
import { RankFlow, mayReadRank } from "./rankFlow";
import { indexWriters, type IndexWrite } from "./visibleIndex";
import {
  constructorOf,
  deviceIdLists,
  deviceParams,
  deviceSlots,
  keyedDeviceParams,
  namesBoundIn,
  positionalParams,
  splatParams,
  type DeviceParam,
  type KeyedDeviceParam,
  type SplatParam,
} from "./devices";
import { ordinalParams, type OrdinalParam } from "./passedOrdinals";
import { returnedOptionLists, type OptionList } from "../launch/script";
import { ModuleTrees, topLevelStatements, type StatementRange } from "./moduleTrees";
import { enclosingFunction, pythonInput, type SyntaxNode } from "./parser";
import { callArgs } from "../rules/shared/py";
import { tfConfigHelpers, TF_CONFIG_WORDS } from "./tfConfigHelpers";
import { isWordCode } from "../../../../common/src/python/lineStructure";
import { documentedLaunchNodes, DOC_PYTHON_WORDS, documentsAround } from "../slurmLaunch";
import { closureOf, moduleCalls, MODULE_SCOPE, type ModuleCalls } from "./argparseReach";
import { callsAfterRankDevice, defaultDeviceUse, type DeviceSite, type RankCall } from "./childDevice";

/** Reads a module's source; null when it cannot be read (missing, not a regular file, too large). */
export type SourceReader = (file: string) => string | null;

/** Modules over this many bytes (UTF-8) are not analysed (they count as initialising nothing). */
export const MAX_MODULE_BYTES = 2 * 1024 * 1024;
/** At most this many modules are analysed per index (a monorepo's import graph): the rest count as initialising nothing. */
export const MAX_MODULES = 4000;
/**
 * How many imports or calls deep a chain from the linted file is followed (the linted file's own
 * import is 1): `import a` → a imports b → b calls c.f() → f calls torch is 3. Deeper chains count
 * as initialising nothing: the cost of following a whole import graph (every module of a
 * framework-sized project) is paid for a finding that is rarely there.
 */
export const MAX_DEPTH = 4;
/**
 * How many modules deep {@link ProjectIndex}'s `reach` follows a launched file's calls (GPU044): the
 * launched file's call into a module is 1; `pretrain_gpt.py` → `initialize.py` → `arguments.py` is
 * 2. Deeper chains, and searches that would analyse more than {@link MAX_REACH_SCOPES} functions,
 * count as reaching nothing.
 */
export const MAX_REACH_HOPS = 3;
const MAX_REACH_SCOPES = 64;
/** STARTUP_VARIABLES as bytes, for the scan of modules read from disk. */
const STARTUP_BYTES: readonly Buffer[] = STARTUP_VARIABLES.map((v) => Buffer.from(v, "ascii"));
/**
 * frameworks.ts STARTUP_PREFIXES as bytes: a module holds a variable's name only if it holds its
 * prefix, and the few prefixes are searched first (python3-torch's 1,245 modules: 9 ms against
 * 48 ms for the 15 names).
 */
const STARTUP_PREFIX_BYTES: readonly Buffer[] = STARTUP_PREFIXES.map((p) => Buffer.from(p, "ascii"));
/** Folders {@link ProjectIndex.writerNames} does not list: environments, caches and build output, not the project's modules. */
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([
  "node_modules",
  "__pycache__",
  "site-packages",
  "venv",
  "env",
  "build",
  "dist",
]);
/** Folders that mark a project root (the search for one stops there). */
const ROOT_MARKERS = ["pyproject.toml", "setup.py", "setup.cfg", ".git"];
/** How many folders above a file the search for a project root climbs at most. */
const MAX_LEVELS_UP = 8;

/** The default reader: a regular file through the safe reader (common/src/fs/workspaceFile.ts), at most MAX_MODULE_BYTES. */
export const diskReader: SourceReader = (file) => {
  const r = readWorkspaceText(file, MAX_MODULE_BYTES);
  return "text" in r ? r.text : null;
};

/** What one module does when imported and what each of its module-level functions does when called. */
interface Summary {
  importInit: Found | null;
  /**
   * By module-level function name: what calling it runs first (calls into other project modules
   * left opaque). Made on the first call ({@link functionInits}): most imported modules are asked
   * only what their import runs.
   */
  functions: Map<string, Found | null> | null;
  /** Every project file this summary read (the module itself and, transitively, those it imports). */
  deps: Set<string>;
  /** The import depth it was made with, and whether that depth cut anything off (then a deeper request makes it again). */
  depth: number;
  truncated: boolean;
}

/** By module-level function name: the ranks of its returned tuple (python/rankFlow.ts `returnedTuple`), with 1-based lines; absent when it returns no tuple. */
type ReturnedRanks = Map<string, Array<{ kind: ProjectRank["kind"]; variable: string | null; line: number }>>;

/** What a module's functions hand on: rank tuples they return, parameters they use as device ordinals (by function name). */
interface ModuleValues {
  returns: ReturnedRanks;
  /** By module-level function name: the rank its single returned value holds (python/rankFlow.ts `returnedValue`), with its 1-based line. */
  value: Map<string, { kind: ProjectRank["kind"]; variable: string | null; line: number }>;
  params: Map<string, DeviceParam[]>;
  /** By module-level function or class name (its constructor, positions after `self`): python/devices.ts `keyedDeviceParams`. */
  keyed: Map<string, KeyedDeviceParam[]>;
  /** By module-level function or class name (its constructor): python/passedOrdinals.ts `ordinalParams`. */
  ordinals: Map<string, OrdinalParam[]>;
  /** By module-level function or class name (its constructor): the parameters it hands to DataParallel as the list of ids (python/devices.ts `deviceParams` over `deviceIdLists`). */
  lists: Map<string, DeviceParam[]>;
  /** By module-level function or class name (its constructor): the parameters it unpacks with `**` into a call (python/devices.ts `splatParams`). */
  splats: Map<string, SplatParam[]>;
  /** By function name or `Class.method`: the lists of ids its returned argparse namespace holds (launch/script.ts `returnedOptionLists`). */
  optionLists: Map<string, OptionList[]>;
  /** The module's code names CUDA_VISIBLE_DEVICES (python/model.ts `namesVisibleDevices`). */
  visible: boolean;
}

/** What one file does with its CUDA device (python/childDevice.ts; GPU075's ProjectLookup.processDevice and rankCaller). */
interface DeviceSites {
  defaultUse: DeviceSite | null;
  rankDevice: DeviceSite | null;
  rankCalls: readonly RankCall[];
}

/** A {@link ProjectInit} before its places are put relative to an importer. */
type Found = Omit<ProjectInit, "where">;

/** The model options a summary depends on besides the project. */
type BaseOptions = Pick<ModelOptions, "eagerInitModules" | "torchBelow24">;

/** What the writers' scan found in one module ({@link ProjectIndex} `writersIn`): by function name, the variable and its 1-based line. */
/**
 * The `variable` of a writers' scan entry for a function that writes the index of a device string it
 * is given to CUDA_VISIBLE_DEVICES somewhere in its body (python/visibleIndex.ts `indexWriters`),
 * not first: its name joins {@link ProjectIndex.writerNames} (the prefilter runs GPU005 on its
 * callers), but {@link ProjectLookup.callableWrite} does not answer for it.
 */
export const INDEX_WRITE = "CUDA_VISIBLE_DEVICES (a device string's index)";

export type ModuleWriterMap = ReadonlyMap<string, { variable: string; line: number }>;

/**
 * Where the writers' scan of modules read from disk is kept between runs (the CLI's result cache,
 * cliCache.ts): `lookup` a module before it is read; a hit is the kept answer, a miss carries what
 * records the fresh one (the module's stamp taken at the lookup, before the read).
 */
export interface WriterScanMemo {
  lookup(
    file: string,
    options: BaseOptions,
  ): { hit: ModuleWriterMap; record?: undefined } | { hit?: undefined; record(found: ModuleWriterMap): void };
}

/** A lint's options as a lookup takes them (the defaults lint.ts uses for the ones not set). */
export const lookupOptions = (o: { eagerInitModules?: readonly string[]; torchBelow24?: boolean }): BaseOptions => ({
  eagerInitModules: o.eagerInitModules ?? DEFAULT_EAGER_INIT_MODULES,
  torchBelow24: o.torchBelow24 ?? false,
});

/** A {@link ProjectLookup} for one file, which also tells the project files its answers read. */
export interface FileLookup extends ProjectLookup {
  /** The project files (absolute paths) the answers so far were read from. */
  deps(): ReadonlySet<string>;
}

/**
 * The project modules' summaries, kept between lints (one index per CLI run or per language
 * server): {@link lookupFor} a file, pass it as `ModelOptions.project`; after a file changes,
 * {@link invalidate} it. Each module is parsed and walked once per options (and again after it or a
 * module it imports changed).
 */
export class ProjectIndex {
  private readonly summaries = new Map<string, Summary | "busy">();
  /**
   * By module file: the ranks its functions return as tuples ({@link returnedRanks}), made only when
   * a lookup asks (a tuple unpacked into a device slot is rare; making them with every summary made
   * a cold check of ColossalAI 1.5 x slower).
   */
  private readonly values = new Map<string, ModuleValues>();
  /** By module file: its functions that write a given device string's index to CUDA_VISIBLE_DEVICES (python/visibleIndex.ts). */
  private readonly indexWrites = new Map<string, ReadonlyMap<string, IndexWrite>>();
  /** By module file: {@link namesRank}. */
  private readonly namesRanks = new Map<string, boolean>();
  /** {@link reexportsOf}'s answers by file. */
  private readonly reexports = new Map<string, ReadonlyMap<string, string>>();
  /** By module file: its calls and argparse facts ({@link callsOf}), made when a {@link reach} search visits it. */
  private readonly calls = new Map<string, ModuleCalls | null>();
  /** By file: {@link deviceSitesOf} (GPU075), made when a lookup asks. */
  private readonly deviceSites = new Map<string, DeviceSites | null>();
  private readonly listings = new Map<string, ReadonlySet<string> | null>();
  /** By module file: whether its text names a startup variable (else no function of it writes one: {@link lookupFor}'s callableWrite). */
  private readonly namesStartup = new Map<string, boolean>();
  /** By project root and words: {@link mentionIn}'s scan (the modules listed, those holding a word), kept until a module under the root changes. */
  private readonly mentions = new Map<
    string,
    { root: string; words: readonly string[]; modules: string[]; hits: string[] }
  >();
  /** By project root: {@link writerNames}, kept until a file changes. */
  private readonly writers = new Map<string, ReadonlySet<string>>();
  /** The module files {@link writeOf} asked about, with the options it asked with. */
  private readonly askedWriters = new Map<string, BaseOptions>();
  /** By module file: {@link writersIn}. */
  private readonly writersByFile = new Map<string, ReadonlyMap<string, { variable: string; line: number }>>();
  private readonly roots = new Map<string, { roots: string[]; root: string }>();
  private generation = 0;
  private analysed = 0;

  /** Modules whose writers' scan came from the memo, and modules read for it (`--statistics`). */
  readonly scanCounts = { kept: 0, read: 0 };

  /**
   * @param read where module sources come from (the server: open documents first, then the disk).
   * @param memo where the writers' scan of modules read from disk is kept between runs (the CLI's result cache); used only with {@link diskReader}.
   */
  constructor(
    private readonly read: SourceReader = diskReader,
    private readonly memo?: WriterScanMemo,
  ) {}

  /**
   * What the project function at `path`, defined in `target` (null: not a project function),
   * configures of TensorFlow's devices on every call (python/tfConfigHelpers.ts), with where for
   * messages relative to `from`; null when nothing or unknown. `target` becomes a dependency.
   */
  private tfConfigAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): ReturnType<NonNullable<FileLookup["callableTfConfig"]>> {
    if (!target) return null;
    deps.add(target);
    const text = this.read(target);
    if (text === null || text.length > MAX_MODULE_BYTES || !TF_CONFIG_WORDS.some((w) => text.includes(w))) return null;
    const h = tfConfigHelpers(text, options).get(path.slice(path.lastIndexOf(".") + 1));
    return h ? { call: h.call, where: `${this.label(target, from)}:${h.line}`, file: target, line: h.line } : null;
  }

  /**
   * The text of the project file at `relative` (to the folder of `file`), read through the project's
   * reader; null outside `file`'s project root, for a path over 300 characters, or when unreadable.
   * The file becomes a dependency.
   */
  private projectTextOf(file: string, relative: string, deps: Set<string>): string | null {
    const at = resolve(dirname(file), relative);
    if (relative.length > 300 || !at.startsWith(this.rootOf(file))) return null;
    deps.add(at);
    return this.read(at);
  }

  /**
   * The lookup for the file at `file` (absolute path), with the lint's options. `depth`: how many
   * imports or calls deep its answers look ({@link MAX_DEPTH}; the index passes less to the modules it analyses).
   */
  lookupFor(file: string, options: BaseOptions, depth = MAX_DEPTH): FileLookup & { truncated(): boolean } {
    const deps = new Set<string>();
    let truncated = false;
    const take = (s: Summary | null) => {
      for (const d of s?.deps ?? []) deps.add(d);
      if (s?.truncated) truncated = true;
      return s;
    };
    const from = dirname(file);
    const shown = (init: Found | null | undefined): ProjectInit | null =>
      init ? { ...init, where: init.chain.map(([f, line]) => `${this.label(f, from)}:${line}`).join(" → ") } : null;
    const deepEnough = (files: readonly string[]) => {
      if (files.length && depth <= 0) truncated = true;
      return depth > 0;
    };
    /**
     * The project file that defines the function at dotted `path` (its module's own file), or null.
     * Where that module only imports the name from another of its package's modules under the same
     * name (a package `__init__.py`'s `from .prepare import prepare_moe`), the file that module's
     * import names, three such steps at most.
     */
    const functionFile = (path: string): string | null => this.functionFileOf(file, path, options, deps, deepEnough);
    return {
      version: String(this.generation),
      deps: () => deps,
      truncated: () => truncated,
      moduleInit: (path) => {
        const files = this.importedFiles(file, path, options);
        if (!deepEnough(files)) return null;
        for (const f of files) {
          const init = take(this.summary(f, options, depth))?.importInit;
          if (init) return shown(init);
        }
        return null;
      },
      callableInit: (path) => {
        const at = path.lastIndexOf(".");
        if (at <= 0 || path.endsWith(".")) return null;
        const files = this.importedFiles(file, path.slice(0, at), options, true);
        const target = files[files.length - 1];
        if (!target || !deepEnough(files)) return null;
        const s = this.summary(target, options, depth);
        if (!s) return null;
        const init = this.functionInits(target, s, options).get(path.slice(at + 1)) ?? null;
        take(s);
        return shown(init);
      },
      callableReturns: (path) => this.returnsAt(functionFile(path), path, from, options, deps),
      callableReturn: (path) => this.returnAt(functionFile(path), path, from, options, deps),
      isProjectFunction: (path) => functionFile(path) !== null,
      isProjectModule: (path) => this.importedFiles(file, path, options).length > 0,
      projectMentions: (words) => this.mentionIn(file, words, deps, from),
      callableTfConfig: (path) => this.tfConfigAt(functionFile(path), path, from, options, deps),
      callableModuleMentions: (path, word) => {
        const target = functionFile(path);
        if (!target) return false;
        deps.add(target);
        return !!this.read(target)?.includes(word);
      },
      documentedLaunches: (of = file) => {
        // Documents of this project only: the search stops at its root (a folder of other projects above it holds other demo.py files).
        const { launches, read } = documentedLaunchNodes(of, documentsAround(dirname(of), [this.rootOf(of)]));
        for (const d of read) deps.add(d);
        return launches;
      },
      documentedPythonLaunches: () => {
        const around = documentsAround(dirname(file), [this.rootOf(file)]);
        const { launches, read } = documentedLaunchNodes(file, around, DOC_PYTHON_WORDS);
        for (const d of read) deps.add(d);
        return launches;
      },
      callableWrite: (path) => this.writeOf(functionFile(path), path, from, options, deps),
      callableIndexWrite: (path) => this.indexWriteAt(functionFile(path), path, from, options, deps),
      launchReach: (launched, targets) => this.reach(launched, file, targets, options, deps),
      launchedCalls: (launched) => this.launchedCallsOf(launched, file, options, deps),
      writerNames: () => this.writerNames(file, options),
      keptWriterNames: () => this.writers.get(this.rootOf(file)) ?? null,
      callableDeviceParams: (path) => this.deviceParamsAt(functionFile(path), path, from, options, deps),
      callableKeyedDeviceParams: (path) => this.keyedParamsAt(functionFile(path), path, from, options, deps),
      callableOrdinalParams: (path) => this.ordinalParamsAt(functionFile(path), path, from, options, deps),
      callableListParams: (path) => this.listParamsAt(functionFile(path), path, from, options, deps),
      callableOptionLists: (path) => this.optionListsAt(path, functionFile, from, options, deps),
      projectText: (relative) => this.projectTextOf(file, relative, deps),
      processDevice: (target) => this.processDeviceOf(file, target, options, deps),
      rankCaller: (launched, callee) => this.rankCallerOf(file, launched, callee, options, deps),
    };
  }

  /**
   * The project file that defines the function at dotted `path` as the module `importer` imports it
   * (its module's own file), or null. Where that module only imports the name from another of its
   * package's modules under the same name (a package `__init__.py`'s `from .prepare import
   * prepare_moe`), the file that module's import names, three such steps at most (those modules join
   * `deps`). `deepEnough` is asked with each import's files: false stops there.
   */
  private functionFileOf(
    importer: string,
    path: string,
    options: BaseOptions,
    deps: Set<string>,
    deepEnough: (files: readonly string[]) => boolean = () => true,
  ): string | null {
    let dotted = path;
    let target: string | null = null;
    for (let hop = 0; hop < 4; hop++) {
      const at = dotted.lastIndexOf(".");
      if (at <= 0 || dotted.endsWith(".")) return target;
      const files = this.importedFiles(importer, dotted.slice(0, at), options, true);
      const found = files[files.length - 1];
      if (!found || !deepEnough(files)) return target;
      target = found;
      const again = this.reexportsOf(found, options).get(dotted.slice(at + 1));
      if (!again) return target;
      deps.add(found);
      importer = found;
      dotted = again;
    }
    return target;
  }

  /**
   * {@link ProjectLookup.launchReach} from the file `launched` to `target` (the linted file): a
   * breadth-first search from every call of `launched` (its functions, methods and `__main__` block
   * included: it is the program) along the calls that resolve to project functions (argparseReach.ts
   * `moduleCalls`), each called function taken with the functions of its module it calls by name
   * ({@link closureOf}); the rest of its module (module-level code, methods) is not followed, nor is
   * a call that does not resolve (a parameter, a method, a name built at run time). A call into
   * `target` reaches a target that `parses`, or a `caller` target when the calling scope parses the
   * command line itself in a module that never calls parse_known_args; an import of `target` reaches
   * its module level. At most {@link MAX_REACH_HOPS} modules deep and {@link MAX_REACH_SCOPES}
   * functions; a module on the way that declares `--local-rank` is not gone through (its parser may
   * take the word).
   */
  private reach(
    launched: string,
    target: string,
    targets: ReadonlyMap<string, "parses" | "caller">,
    options: BaseOptions,
    deps: Set<string>,
  ): ProjectReach | null {
    if (!targets.size || launched === target) return null;
    type Step = ProjectReach["chain"][number];
    const queue: Array<{ file: string; scope: string | null; hops: number; chain: Step[] }> = [
      { file: launched, scope: null, hops: 0, chain: [] },
    ];
    const seen = new Set<string>();
    const root = this.rootOf(target);
    const done = (chain: Step[]): ProjectReach => ({
      launched: this.label(launched, root),
      where: chain.map((s) => `${this.label(s.file, root)}:${s.range.start.line + 1}`).join(" → "),
      chain,
    });
    const atImport = targets.get(MODULE_SCOPE) === "parses";
    const names = [...targets.keys()];
    for (let i = 0; i < queue.length && seen.size < MAX_REACH_SCOPES; i++) {
      const { file, scope, hops, chain } = queue[i];
      const key = `${file}\u0000${scope}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // The last module before the target is parsed only when its text names a target function.
      if (
        hops === MAX_REACH_HOPS - 1 &&
        !atImport &&
        !this.calls.has(file) &&
        !names.some((n) => this.read(file)?.includes(n))
      )
        continue;
      deps.add(file);
      const m = this.callsOf(file, options);
      if (!m || m.dashed) continue;
      for (const s of scope === null ? m.scopes.keys() : closureOf(m, scope)) {
        const own = m.scopes.get(s);
        for (const c of own?.calls ?? []) {
          const def = this.functionFileOf(file, c.path, options, deps);
          if (!def) continue;
          const name = c.path.slice(c.path.lastIndexOf(".") + 1);
          const step = [...chain, { file, range: c.range }];
          if (def === target) {
            const kind = targets.get(name);
            if (kind === "parses" || atImport || (kind === "caller" && own!.parses && !m.knownArgs)) return done(step);
          } else if (hops + 1 < MAX_REACH_HOPS) queue.push({ file: def, scope: name, hops: hops + 1, chain: step });
        }
        if (atImport)
          for (const imp of own?.imports ?? [])
            if (this.importedFiles(file, imp.path, options).includes(target))
              return done([...chain, { file, range: imp.range }]);
      }
    }
    return null;
  }

  /** {@link ProjectLookup.launchedCalls} of the file `launched`, for the linted file `linted`. */
  private launchedCallsOf(
    launched: string,
    linted: string,
    options: BaseOptions,
    deps: Set<string>,
  ): { calls: LaunchedCall[]; writesVisible: boolean; readsRank: boolean } | null {
    deps.add(launched);
    return this.withModel(launched, options, (model) => {
      const label = this.label(launched, dirname(linted));
      const calls = model.calls.map((c) => {
        const fn = c.node.childForFieldName("function");
        const name = c.path
          ? c.path.slice(c.path.lastIndexOf(".") + 1)
          : fn?.type === "attribute"
            ? (fn.childForFieldName("attribute")?.text ?? null)
            : null;
        const here = !!c.path && this.functionFileOf(launched, c.path, options, deps) === linted;
        return { path: c.path, name, here, where: `${label}:${c.node.startPosition.row + 1}` };
      });
      const writesVisible = envWritesAnywhere(model).some((w) => w.variable.endsWith("_VISIBLE_DEVICES"));
      return { calls, writesVisible, readsRank: mayReadRank(model) };
    });
  }

  /**
   * `read` of the model of the project file at `file` (one parse with `options`; the tree is deleted
   * afterwards, so what `read` returns must hold no syntax node); null when the file cannot be read
   * or is over MAX_MODULE_BYTES.
   */
  private withModel<T>(file: string, options: ModelOptions, read: (model: ModuleModel) => T): T | null {
    const text = this.read(file);
    if (text === null || text.length > MAX_MODULE_BYTES) return null;
    const tree = ModuleTrees.parse(pythonInput(text), false);
    try {
      return read(buildModel(tree, text, options));
    } finally {
      tree.delete();
    }
  }

  /** {@link ProjectLookup.processDevice} asked from `file`. */
  private processDeviceOf(
    file: string,
    target: { module: string } | { file: string },
    options: BaseOptions,
    deps: Set<string>,
  ): ProcessDevice | null {
    let at: string | null;
    if ("module" in target) {
      const files = this.importedFiles(file, target.module, options, true);
      at = files[files.length - 1] ?? null;
      if (at && /[\\/]__init__\.py$/.test(at)) at = null; // `-m pkg` runs pkg/__main__.py
    } else at = target.file;
    if (!at) return null;
    deps.add(at);
    const sites = this.deviceSitesOf(at, options);
    if (!sites) return null;
    const from = dirname(file);
    const shown = (s: DeviceSite | null) => (s ? { ...s, where: `${this.label(at, from)}:${s.line}` } : null);
    return {
      file: at,
      label: this.label(at, from),
      defaultUse: shown(sites.defaultUse),
      rankDevice: shown(sites.rankDevice),
    };
  }

  /** {@link ProjectLookup.rankCaller} asked from `file`. */
  private rankCallerOf(
    file: string,
    launched: string,
    callee: { functions: readonly string[] } | { cls: string; methods: readonly string[] },
    options: BaseOptions,
    deps: Set<string>,
  ): { line: number; text: string; where: string } | null {
    deps.add(launched);
    for (const c of this.deviceSitesOf(launched, options)?.rankCalls ?? []) {
      const at = c.path.lastIndexOf(".");
      const name = c.path.slice(at + 1);
      let owner = c.path.slice(0, at);
      if ("cls" in callee) {
        if (!owner.endsWith("()") || !callee.methods.includes(name)) continue;
        owner = owner.slice(0, -2);
        if (owner.slice(owner.lastIndexOf(".") + 1) !== callee.cls) continue;
        if (this.functionFileOf(launched, owner, options, deps) !== file) continue;
      } else if (!callee.functions.includes(name) || this.functionFileOf(launched, c.path, options, deps) !== file)
        continue;
      return { line: c.line, text: c.text, where: `${this.label(launched, this.rootOf(file))}:${c.line}` };
    }
    return null;
  }

  /** What {@link deviceSitesOf} finds in the file `at` (null: unreadable, too large), kept until it changes. */
  private deviceSitesOf(at: string, options: BaseOptions): DeviceSites | null {
    const kept = this.deviceSites.get(at);
    if (kept !== undefined) return kept;
    const out = this.withModel(at, { ...options }, (model): DeviceSites => {
      const isProject = (path: string) => this.importedFiles(at, path, options).length > 0;
      const rank = callsAfterRankDevice(model);
      return {
        defaultUse: defaultDeviceUse(model, isProject),
        rankDevice: rank?.device ?? null,
        rankCalls: rank?.calls ?? [],
      };
    });
    this.deviceSites.set(at, out);
    return out;
  }

  /** {@link moduleCalls} of the module at `file` (null when it cannot be read or is over MAX_MODULE_BYTES), kept until it changes. */
  private callsOf(file: string, options: BaseOptions): ModuleCalls | null {
    const kept = this.calls.get(file);
    if (kept !== undefined) return kept;
    const out = this.withModel(file, { ...options, asImported: "module" }, moduleCalls);
    this.calls.set(file, out);
    return out;
  }

  /** {@link ProjectLookup.callableReturns} for the function at dotted `path`, defined in `target` (null: not a project function). */
  private returnsAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): ProjectRank[] | null {
    if (!target) return null;
    deps.add(target);
    if (!this.namesRank(target)) return null;
    const returned = this.valuesOf(target, options).returns.get(path.slice(path.lastIndexOf(".") + 1));
    if (!returned) return null;
    return returned.map((r) => ({
      kind: r.kind,
      variable: r.variable,
      where: r.line ? `${this.label(target, from)}:${r.line}` : "",
    }));
  }

  /** {@link ProjectLookup.callableReturn} for the function at dotted `path`, defined in `target` (null: not a project function). */
  private returnAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): ProjectRank | null {
    if (!target) return null;
    deps.add(target);
    if (!this.namesRank(target)) return null;
    const r = this.valuesOf(target, options).value.get(path.slice(path.lastIndexOf(".") + 1));
    return r
      ? { kind: r.kind, variable: r.variable, where: r.line ? `${this.label(target, from)}:${r.line}` : "" }
      : null;
  }

  /** {@link ProjectLookup.callableDeviceParams} for the function at dotted `path`, defined in `target` (null: not a project function). */
  private deviceParamsAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): Array<{ index: number; name: string; form: string; where: string }> | null {
    if (!target) return null;
    const params = this.valuesOf(target, options).params.get(path.slice(path.lastIndexOf(".") + 1));
    deps.add(target);
    return params?.length
      ? params.map((d) => ({
          index: d.index,
          name: d.name,
          form: d.form,
          where: `${this.label(target, from)}:${d.line}`,
        }))
      : null;
  }

  /** {@link ProjectLookup.callableIndexWrite} for the function at dotted `path`, defined in `target` (null: not a project function). */
  private indexWriteAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): (IndexWrite & { where: string; file: string }) | null {
    if (!target) return null;
    deps.add(target);
    let writes = this.indexWrites.get(target);
    if (!writes) {
      writes = new Map();
      const text = this.read(target);
      if (text !== null && text.length <= MAX_MODULE_BYTES && text.includes("CUDA_VISIBLE_DEVICES")) {
        const tree = ModuleTrees.parse(pythonInput(text), false);
        try {
          writes = indexWriters(buildModel(tree, text, { ...options }));
        } finally {
          tree.delete();
        }
      }
      this.indexWrites.set(target, writes);
    }
    const w = writes.get(path.slice(path.lastIndexOf(".") + 1));
    return w ? { ...w, where: `${this.label(target, from)}:${w.line}`, file: target } : null;
  }

  /** {@link ProjectLookup.callableKeyedDeviceParams} for the function or class at dotted `path`, defined in `target`. */
  private keyedParamsAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): KeyedDeviceUse[] | null {
    const params = this.summaryAt(target, path, options, deps, (v) => v.keyed);
    const out: KeyedDeviceUse[] = (params ?? []).map((d) => ({
      ...d,
      where: `${this.label(target!, from)}:${d.line}`,
    }));
    const splats = target ? this.valuesOf(target, options).splats.get(path.slice(path.lastIndexOf(".") + 1)) : null;
    for (const s of splats ?? []) out.push(...this.splattedUses(target!, s, from, options, deps));
    return out.length ? out : null;
  }

  /**
   * The entries of a parameter that the function at `target` unpacks with `**` into a call
   * ({@link SplatParam}) that become DataParallel's list of ids or a device ordinal in the callee,
   * a project function of another module (or of `target`), by the name of its parameter: a use by
   * key (`init_config["gpu_ids"]`), with the method that holds the call. None where the call writes
   * that parameter itself, or the callee's module names CUDA_VISIBLE_DEVICES.
   */
  private splattedUses(
    target: string,
    s: SplatParam,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): KeyedDeviceUse[] {
    const local = !s.callee.includes(".");
    const file = local ? target : this.functionFileOf(target, s.callee, options, deps);
    if (!file) return [];
    deps.add(file);
    const values = this.valuesOf(file, options);
    if (values.visible) return [];
    const name = s.callee.slice(s.callee.lastIndexOf(".") + 1);
    const out: KeyedDeviceUse[] = [];
    const uses = [
      ...(values.lists.get(name) ?? []).map((d) => ({ d, list: true })),
      ...(values.params.get(name) ?? []).map((d) => ({ d, list: false })),
    ];
    for (const { d, list } of uses) {
      if (d.index < s.positional || s.keywords.includes(d.name)) continue;
      out.push({
        index: s.index,
        name: s.name,
        key: d.name,
        subscript: true,
        converts: false,
        list,
        form: `${s.method ? `${s.method}() → ` : ""}${name}(**${s.name}) → ${d.form}`,
        where: `${this.label(file, from)}:${d.line}`,
        ...(s.method ? { method: s.method } : {}),
      });
    }
    return out;
  }

  /** {@link ProjectLookup.callableListParams} for the function at dotted `path`, defined in `target`. */
  private listParamsAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): Array<DeviceParam & { where: string }> | null {
    const params = this.summaryAt(target, path, options, deps, (v) => v.lists);
    return params ? params.map((d) => ({ ...d, where: `${this.label(target!, from)}:${d.line}` })) : null;
  }

  /**
   * {@link ProjectLookup.callableOptionLists} for the function at dotted `path` (`options.parse`), or
   * the method (`options.TrainOptions.parse`), its file found by `functionFile`.
   */
  private optionListsAt(
    path: string,
    functionFile: (path: string) => string | null,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): Array<OptionList & { where: string }> | null {
    const at = path.lastIndexOf(".");
    const direct = functionFile(path);
    const target = direct ?? (at > 0 ? functionFile(path.slice(0, at)) : null);
    if (!target) return null;
    const key = direct ? path.slice(at + 1) : path.slice(path.lastIndexOf(".", at - 1) + 1);
    deps.add(target);
    // Parsed only where it parses a command line (most callees do not).
    if (!this.read(target)?.includes("parse_args")) return null;
    const lists = this.valuesOf(target, options).optionLists.get(key);
    return lists?.length ? lists.map((l) => ({ ...l, where: `${this.label(target, from)}:${l.line}` })) : null;
  }

  /** {@link ProjectLookup.callableOrdinalParams} for the function or class at dotted `path`, defined in `target`. */
  private ordinalParamsAt(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): PassedOrdinalUse[] | null {
    const params = this.summaryAt(target, path, options, deps, (v) => v.ordinals);
    return params
      ? params.map((d) => ({ ...d, file: target!, where: `${this.label(target!, from)}:${d.start[0] + 1}` }))
      : null;
  }

  /**
   * The entry of `path`'s last name in one of the summaries of the module `target` ({@link valuesOf});
   * `target` joins `deps`. Null where there is no module or the entry is absent or empty.
   */
  private summaryAt<T>(
    target: string | null,
    path: string,
    options: BaseOptions,
    deps: Set<string>,
    pick: (v: ModuleValues) => Map<string, T[]>,
  ): T[] | null {
    if (!target) return null;
    const entry = pick(this.valuesOf(target, options)).get(path.slice(path.lastIndexOf(".") + 1));
    deps.add(target);
    return entry?.length ? entry : null;
  }

  /**
   * Forgets what was read from `file` and every summary that read it; true when any did (then the
   * next lookups have a new version, so kept facts built with the old answers are dropped).
   */
  invalidate(file: string): boolean {
    // A module asked about (parsed for its values, or found naming no rank) answers anew.
    let dropped = this.values.delete(file);
    if (this.indexWrites.delete(file)) dropped = true;
    if (this.namesRanks.delete(file)) dropped = true;
    // Re-exports change lookups only where the module had some (most modules have none).
    if (this.reexports.get(file)?.size) dropped = true;
    this.reexports.delete(file);
    // What a reach search read of it (GPU044's answers are no kept facts: no new version needed).
    this.calls.delete(file);
    if (this.deviceSites.delete(file)) dropped = true;
    if (this.writersChanged(file)) dropped = true;
    // A module's edit changes a kept scan only where it now holds the words and did not, or the
    // reverse (most edits, a keystroke in the file being linted, leave every scan as it was).
    for (const [key, m] of this.mentions) {
      if (!m.modules.includes(file)) continue;
      const text = this.read(file);
      if (m.hits.includes(file) !== (text !== null && m.words.some((w) => text.includes(w)))) {
        this.mentions.delete(key);
        dropped = true;
      }
    }
    for (const [key, s] of this.summaries) {
      if (s !== "busy" && s.deps.has(file)) {
        this.summaries.delete(key);
        dropped = true;
      }
    }
    this.listings.delete(dirname(file));
    if (dropped) this.generation++;
    return dropped;
  }

  /**
   * Forgets what the scan for startup-variable writers kept of `file` ({@link writerNames},
   * {@link writersIn}); true when a lookup's answer may have changed: the file had writers, or a
   * lookup asked about it and it has writers now. An edit of any other file (nearly every keystroke
   * in the editor) keeps the lookups' version, so the documents' kept facts stay.
   */
  private writersChanged(file: string): boolean {
    const had = this.writersByFile.get(file);
    const scanned = this.namesStartup.has(file);
    this.namesStartup.delete(file);
    this.writersByFile.delete(file);
    // The names the prefilter looks for are listed again at the next ask (no parse here).
    if (scanned) this.writers.clear();
    if (had?.size) return true;
    // A module a lookup asked about that now writes first: its callers' kept facts are stale. A
    // file no lookup asked about (the training script being edited) is not parsed again here.
    const options = this.askedWriters.get(file);
    return !!options && this.writersIn(file, options).size > 0;
  }

  /**
   * Forgets everything (a file was created, deleted or renamed: module resolution may differ, and a
   * file deleted and created again may hold other text than the one its kept answers were read from).
   */
  clear(): void {
    this.summaries.clear();
    this.namesRanks.clear();
    this.reexports.clear();
    this.namesStartup.clear();
    this.writers.clear();
    this.writersByFile.clear();
    this.mentions.clear();
    this.askedWriters.clear();
    this.values.clear();
    this.indexWrites.clear();
    this.calls.clear();
    this.deviceSites.clear();
    this.listings.clear();
    this.roots.clear();
    this.analysed = 0;
    this.generation++;
  }

  /**
   * The files importing `path` from `importer` runs, in order (parent packages' `__init__.py`, then
   * the module); [] when it is not a project module. `exact`: `path` must name a module (a
   * function's module) and its own file comes last; otherwise a last part that is no module is taken
   * as a name in the package before it (`from pkg import name`).
   */
  private importedFiles(importer: string, path: string, options: BaseOptions, exact = false): string[] {
    const dots = /^\.*/.exec(path)![0].length;
    const parts = path.slice(dots).split(".").filter(Boolean);
    if (!parts.length) return [];
    if (dots === 0) {
      if (frameworkOfModule(parts[0]) || isEagerInitModule(parts[0], options.eagerInitModules)) return [];
      const base = this.place(importer).roots.find((r) => this.has(r, parts[0]) || this.has(r, `${parts[0]}.py`));
      return base ? this.chain(base, parts, exact, true) : [];
    }
    let base = dirname(importer);
    for (let i = 1; i < dots; i++) base = dirname(base);
    return this.chain(base, parts, exact, false);
  }

  /**
   * The files of the dotted `parts` under `base` as Python's path finder takes them: a folder with
   * `__init__.py` is a regular package, else `name.py` a module, else a folder a namespace package
   * (no file). `packages`: the packages' `__init__.py` files are included (an absolute import runs
   * them; a relative one is made from inside the package, which already ran).
   */
  private chain(base: string, parts: readonly string[], exact: boolean, packages: boolean): string[] {
    const out: string[] = [];
    let dir = base;
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      const sub = join(dir, parts[i]);
      if (this.has(dir, parts[i]) && this.has(sub, "__init__.py")) {
        if (packages || last) out.push(join(sub, "__init__.py"));
        dir = sub;
      } else if (this.has(dir, `${parts[i]}.py`)) {
        out.push(join(dir, `${parts[i]}.py`));
        return last || !exact ? out : []; // the rest are names in this module
      } else if (this.has(dir, parts[i])) {
        if (exact && last) return []; // a namespace package has no code
        dir = sub;
      } else {
        return i === 0 || exact ? [] : out; // `from pkg import name`: a name in pkg
      }
    }
    return out;
  }

  /** The folders an absolute import is searched in from `file`, and its project root (see the module comment). */
  private place(file: string): { roots: string[]; root: string } {
    const start = dirname(file);
    const kept = this.roots.get(start);
    if (kept) return kept;
    const up: string[] = [start];
    let dir = start,
      found = ROOT_MARKERS.some((m) => this.has(dir, m));
    for (let i = 0; i < MAX_LEVELS_UP && !found && dirname(dir) !== dir; i++) {
      dir = dirname(dir);
      up.push(dir);
      found = ROOT_MARKERS.some((m) => this.has(dir, m));
    }
    if (!found) {
      // No project root above: the folder holding the file's top package (the file's folder, or
      // above it while the folder is a regular package), which must be on sys.path for the
      // package's own absolute imports to work.
      up.length = 1;
      dir = start;
      while (this.has(dir, "__init__.py") && dirname(dir) !== dir && up.length <= MAX_LEVELS_UP)
        up.push((dir = dirname(dir)));
    }
    const place = { roots: found && this.has(dir, "src") ? [...up, join(dir, "src")] : up, root: dir };
    this.roots.set(start, place);
    return place;
  }

  /**
   * {@link ProjectLookup.callableWrite} for the function at dotted `path` defined in the project file
   * `target` (null: not a project function), placed for a file in the folder `from`; `target` joins `deps`.
   */
  private writeOf(
    target: string | null,
    path: string,
    from: string,
    options: BaseOptions,
    deps: Set<string>,
  ): ProjectWrite | null {
    if (!target) return null;
    deps.add(target);
    this.askedWriters.set(target, options);
    const w = this.writersIn(target, options).get(path.slice(path.lastIndexOf(".") + 1));
    return w && w.variable !== INDEX_WRITE
      ? { variable: w.variable, where: `${this.label(target, from)}:${w.line}`, chain: [[target, w.line]] }
      : null;
  }

  /** Whether the module at `file` names a startup variable in its text (read once, kept until it changes). */
  private namesStartupVariable(file: string): boolean {
    let names = this.namesStartup.get(file);
    if (names === undefined) {
      if (this.read === diskReader) {
        // The bytes as they are (the names are ASCII): decoding every module of a torch-sized
        // project to text was half of this scan's cost.
        const r = readWorkspaceFile(file, { maxBytes: MAX_MODULE_BYTES });
        names =
          r.ok &&
          STARTUP_PREFIX_BYTES.some((p) => r.bytes.includes(p)) &&
          STARTUP_BYTES.some((b) => r.bytes.includes(b));
      } else {
        const text = this.read(file);
        names = text !== null && STARTUP_VARIABLES.some((v) => text.includes(v));
      }
      this.namesStartup.set(file, names);
    }
    return names;
  }

  /**
   * The module-level functions of the module at `file` that write a startup variable first, by
   * name: the variable and its 1-based line. Only a write that every call runs counts: a statement
   * of the function's own body (not in a branch, loop or `try`, nor in a helper it calls: on the
   * ecosystem corpus, yolov5's select_device() writes CUDA_VISIBLE_DEVICES only for some
   * arguments, and profile() calls it only without a device), before any initialising call of its
   * own (after one, the module's own GPU001 reports the write). Calls into other project modules
   * are not followed: a caller that initialised before the call makes the write late whatever the
   * function does first. A module whose text names no startup variable is not parsed; the others
   * are parsed once (kept until the file changes).
   */
  private writersIn(file: string, options: BaseOptions): ReadonlyMap<string, { variable: string; line: number }> {
    const kept = this.writersByFile.get(file);
    if (kept) return kept;
    const memo = this.read === diskReader ? this.memo?.lookup(file, options) : undefined;
    if (memo?.hit) {
      this.scanCounts.kept++;
      this.writersByFile.set(file, memo.hit);
      return memo.hit;
    }
    this.scanCounts.read++;
    const text = this.namesStartupVariable(file) ? this.read(file) : null;
    const out = writersOf(text, options, "partial") ?? writersOf(text, options, "whole")!;
    this.writersByFile.set(file, out);
    memo?.record?.(out);
    return out;
  }

  /**
   * The names of the module-level functions of the project holding `file` (its root, see
   * {@link place}) that write a startup variable before they initialise anything: what a caller's
   * call of one may set too late (python/walker.ts `projectCall`). The prefilter asks it before a
   * file is parsed, so that GPU001 runs on a file that calls one (its text names the function). The
   * project's `.py` files are listed (hidden folders, virtual environments, `node_modules`,
   * `__pycache__`, `build` and `dist` left out; symbolic links not followed; at most
   * {@link MAX_MODULES} files, 12 folders deep), each read once for a startup variable's name, and
   * only those that name one are parsed ({@link writersIn}). Kept per root until a file changes.
   */
  writerNames(file: string, options: BaseOptions): ReadonlySet<string> {
    const root = this.rootOf(file);
    const kept = this.writers.get(root);
    if (kept) return kept;
    const names = new Set<string>();
    for (const found of this.scanWriters(this.modulesUnder(root), () => options).values())
      for (const n of found.keys()) names.add(n);
    this.writers.set(root, names);
    return names;
  }

  /**
   * {@link ProjectLookup.projectMentions}: the first project module other than `file` (in
   * {@link modulesUnder} order) whose text holds one of `words`, labelled from `from`; every module
   * read joins `deps`. Kept per root and words until a module under the root changes.
   */
  private mentionIn(file: string, words: readonly string[], deps: Set<string>, from: string): string | null {
    const root = this.rootOf(file);
    const key = `${root}\u0000${words.join("\u0000")}`;
    let kept = this.mentions.get(key);
    if (!kept) {
      const modules = this.modulesUnder(root);
      const hits = modules.filter((m) => {
        const text = this.read(m);
        return text !== null && words.some((w) => text.includes(w));
      });
      kept = { root, words, modules, hits };
      this.mentions.set(key, kept);
    }
    for (const m of kept.modules) if (m !== file) deps.add(m);
    const hit = kept.hits.find((m) => m !== file);
    return hit ? this.label(hit, from) : null;
  }

  /** The project root of the file at `file` (absolute): the folder {@link writerNames} lists (see {@link place}). */
  rootOf(file: string): string {
    return this.place(file).root;
  }

  /**
   * The `.py` files of the project at `root`, in listing order: hidden folders, virtual
   * environments, `node_modules`, `__pycache__`, `build` and `dist` left out; symbolic links not
   * followed; at most {@link MAX_MODULES} files, 12 folders deep. No file is read.
   */
  modulesUnder(root: string): string[] {
    const files: string[] = [];
    const walk = (dir: string, level: number): void => {
      if (level > 12) return;
      let entries: import("node:fs").Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (files.length >= MAX_MODULES) return;
        if (e.name.startsWith(".") || SKIPPED_FOLDERS.has(e.name)) continue;
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path, level + 1);
        else if (e.isFile() && e.name.endsWith(".py")) files.push(path);
      }
    };
    walk(root, 0);
    return files;
  }

  /**
   * The writers' scan ({@link writersIn}) of `files` (absolute paths of project modules), by file:
   * each module-level function that writes a startup variable first (`optionsOf` gives each
   * module's lint options). A part of {@link writerNames}'s scan: the CLI's worker threads each
   * scan a share of a root's {@link modulesUnder} (those the result cache does not hold) and the
   * main thread hands the union of the names to {@link seedWriterNames}, so the project is read
   * and parsed at most once per run, not once per worker.
   */
  scanWriters(files: readonly string[], optionsOf: (file: string) => BaseOptions): Map<string, ModuleWriterMap> {
    const out = new Map<string, ModuleWriterMap>();
    for (const f of files) out.set(f, this.writersIn(f, optionsOf(f)));
    return out;
  }

  /**
   * Takes `names` as {@link writerNames}'s answer for the project at `root` (an absolute folder,
   * as {@link rootOf} gives it): the names {@link scanWriters} finds in all of {@link modulesUnder}
   * `root`, made elsewhere (the CLI's worker threads). Kept until a file changes, as a scan's answer.
   */
  seedWriterNames(root: string, names: Iterable<string>): void {
    this.writers.set(root, new Set(names));
  }

  /** Whether the folder `dir` holds an entry `name` (one listing per folder, kept). */
  private has(dir: string, name: string): boolean {
    let names = this.listings.get(dir);
    if (names === undefined) {
      try {
        names = new Set(readdirSync(dir));
      } catch {
        names = null;
      }
      this.listings.set(dir, names);
    }
    return !!names?.has(name);
  }

  /**
   * The summary of the module at `file`, made once per options (again for a deeper `depth` when the
   * kept one was cut off by its depth); null when it cannot be had.
   */
  private summary(file: string, options: BaseOptions, depth: number): Summary | null {
    const key = `${file}\u0000${options.eagerInitModules.join(",")}\u0000${options.torchBelow24}`;
    const kept = this.summaries.get(key);
    if (kept === "busy") return null; // an import cycle: the module is being analysed further up
    if (kept && (!kept.truncated || kept.depth >= depth)) return kept;
    if (this.analysed >= MAX_MODULES) return null;
    const text = this.read(file);
    if (text === null || text.length > MAX_MODULE_BYTES) return null;
    this.analysed++;
    this.summaries.set(key, "busy");
    let s: Summary | null = null;
    try {
      s = this.analyse(file, text, options, depth);
    } finally {
      if (s) this.summaries.set(key, s);
      else if (kept) this.summaries.set(key, kept);
      else this.summaries.delete(key);
    }
    return s;
  }

  /**
   * Walks the module as an import runs it (the `if __name__ == "__main__":` block left out), asking
   * about the project modules it imports and calls until its first init (python/model.ts
   * `projectWanted`); and each of its module-level functions as a call runs it, with the module's
   * own functions inlined but calls into other project modules left opaque: following every
   * function's calls through the project made a cold check of Megatron-LM 3.5 x slower.
   */
  private analyse(file: string, text: string, options: BaseOptions, depth: number): Summary {
    const project = this.lookupFor(file, options, depth - 1);
    const tree = ModuleTrees.parse(pythonInput(text), false);
    try {
      const model = buildModel(tree, text, { ...options, project, asImported: "module" });
      const importInit = asFound(firstInit(model.events), file);
      return {
        importInit,
        functions: null,
        deps: new Set([file, ...project.deps()]),
        depth,
        truncated: project.truncated(),
      };
    } finally {
      tree.delete();
    }
  }

  /**
   * {@link Summary.functions} of the module at `file`, made on the first ask (the module read and
   * parsed again; empty when it can no longer be read: a change since then drops the summary).
   */
  private functionInits(file: string, s: Summary, options: BaseOptions): Map<string, Found | null> {
    if (s.functions) return s.functions;
    const functions = new Map<string, Found | null>();
    forEachModuleFunction(this.read(file), options, false, (name, t) =>
      functions.set(name, asFound(firstInit(t.events), file)),
    );
    s.functions = functions;
    return functions;
  }

  /**
   * The names a module imports at module level under their own name without defining them itself
   * (`from .prepare import prepare_moe` in a package's `__init__.py`), by name: the dotted path
   * imported as the module's model resolves it (relative paths keep their dots). Empty for a module
   * that names no `import`, or is over MAX_MODULE_BYTES. See {@link reexportsIn}.
   */
  private reexportsOf(file: string, options: BaseOptions): ReadonlyMap<string, string> {
    let r = this.reexports.get(file);
    if (r) return r;
    const text = this.read(file);
    r =
      text !== null && text.length <= MAX_MODULE_BYTES && text.includes("import")
        ? reexportsIn(text, options)
        : new Map();
    this.reexports.set(file, r);
    return r;
  }

  /**
   * Whether the module at `file` can return a rank at all: its text names one of RANK_WORDS
   * ({@link moduleValues} reads returned ranks only then). Kept until the file changes; a module
   * without one is not parsed for {@link ProjectLookup.callableReturns} or `callableReturn` (on
   * python3-torch's own modules, parsing every called module for returned ranks was a tenth of a
   * cold CLI run).
   */
  private namesRank(file: string): boolean {
    if (this.values.has(file)) return true; // made already: asking it costs nothing
    let v = this.namesRanks.get(file);
    if (v === undefined) {
      const text = this.read(file);
      v = text !== null && RANK_WORDS.some((w) => text.includes(w));
      this.namesRanks.set(file, v);
    }
    return v;
  }

  /**
   * What the functions of the module at `file` return as rank tuples and pass on as device ordinals
   * ({@link moduleValues}), made once per file (empty when it cannot be read).
   */
  private valuesOf(file: string, options: BaseOptions): ModuleValues {
    let v = this.values.get(file);
    if (v) return v;
    const text = this.read(file);
    v = emptyValues();
    if (
      text !== null &&
      text.length <= MAX_MODULE_BYTES &&
      (RANK_WORDS.some((w) => text.includes(w)) ||
        text.includes("device") ||
        text.includes("cuda") ||
        text.includes("**") ||
        text.includes("DataParallel") ||
        text.includes("parse_args"))
    ) {
      const tree = ModuleTrees.parse(pythonInput(text), false);
      try {
        v = moduleValues(tree, text, options);
      } finally {
        tree.delete();
      }
    }
    this.values.set(file, v);
    return v;
  }

  /** `file` for messages: relative to the folder `from` when below it, else to its project root ('/' separators), else as it is. */
  private label(file: string, from: string): string {
    for (const base of [from, this.place(file).root]) {
      const rel = relative(base, file);
      if (rel && !rel.startsWith("..")) return rel.split(sep).join("/");
    }
    return file;
  }
}

/**
 * The first write of a startup variable in a timeline (not `os.putenv`, which leaves `os.environ` as
 * it was; not PYTORCH_NVML_BASED_CUDA_CHECK, read at each call), when no init comes before it; else null.
 */
function firstWriteBeforeInit(events: readonly TimelineEvent[]): EnvWriteEvent | null {
  for (const e of events) {
    if (e.kind === "init") return null;
    if (
      e.kind === "envWrite" &&
      e.form !== "putenv" &&
      e.variable !== "PYTORCH_NVML_BASED_CUDA_CHECK" &&
      STARTUP_VARIABLES.includes(e.variable)
    )
      return e;
  }
  return null;
}

/**
 * The writers' scan of a module's text (ProjectIndex `writersIn`): each module-level function that
 * writes a startup variable first, with the variable and the write's 1-based line; empty for a
 * null text. `partial` parses only what a module-level function's first write can depend on
 * ({@link scanRanges}): the module-level statements that are no class or function definition
 * (imports and aliases such as `env = os.environ` bind the names a write goes through) and the
 * function definitions that can hold a write. A function's timeline then lacks what the functions
 * and classes it calls do, so where a writer calls anything before its write or inside the
 * statement that writes (`os.environ[K] = helper()`), the partial answer is null and the caller
 * parses the `whole` module. The two answers are the same:
 * test/unit/server/engine/python/writersScan.test.ts compares them on every Python file of the
 * project, and on the ecosystem corpus, Debian's packages, the recall cases and the fixtures (15,338
 * files, 216 that name a startup variable, 15 writers) they were the same. On python3-torch (7
 * modules name one) the scan's parse and model took 184 ms of CPU instead of 522 (BENCHMARKS.md,
 * "The writers' scan parses what it reads").
 */
export function writersOf(
  text: string | null,
  options: BaseOptions,
  how: "partial" | "whole",
): Map<string, { variable: string; line: number }> | null {
  const out = new Map<string, { variable: string; line: number }>();
  let callFirst = false;
  let index: ReadonlyMap<string, IndexWrite> | undefined;
  forEachModuleFunction(text, options, how === "partial", (name, t, model) => {
    // A function that writes a given device string's index (GPU005), for the prefilter's names only.
    const i = (index ??= text?.includes("CUDA_VISIBLE_DEVICES") ? indexWriters(model) : new Map()).get(name);
    if (i) out.set(name, { variable: INDEX_WRITE, line: i.line });
    const w = firstWriteBeforeInit(t.events);
    const own = w?.statement;
    if (!w || own?.parent?.type !== "block" || own.parent.parent?.id !== t.def.id) return;
    out.set(name, { variable: w.variable, line: w.range.start.line + 1 });
    for (const st of own.parent.namedChildren) {
      if (!st) continue;
      // The writing statement itself: a call in it but the write's own (`os.putenv(...)`) runs first.
      const calls = st.descendantsOfType("call").filter((c) => c && c.id !== st.firstNamedChild?.id);
      if (calls.length > 0 || (st.id !== own.id && st.firstNamedChild?.type === "call")) callFirst = true;
      if (st.id === own.id) break;
    }
  });
  return how === "partial" && callFirst ? null : out;
}

/**
 * The parts of `text` the writers' scan parses ({@link writersOf}): its top-level statements
 * (moduleTrees.ts {@link topLevelStatements}) but class definitions and the function definitions
 * that can hold no write of a startup variable: those whose text names none, nor a name that a
 * module-level statement naming one assigns (`VAR = "CUDA_VISIBLE_DEVICES"`, then `os.environ[VAR] =
 * ...` in the function; the names are read from the parsed module-level statements). Neighbours are
 * joined into one range.
 */
export function scanRanges(text: string): StatementRange[] {
  const at: number[] = [];
  for (const v of STARTUP_VARIABLES)
    for (let i = text.indexOf(v); i >= 0; i = text.indexOf(v, i + v.length)) at.push(i);
  at.sort((a, b) => a - b);
  const holds = (r: StatementRange, offsets: readonly number[]): boolean => {
    let lo = 0,
      hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid] < r.start) lo = mid + 1;
      else hi = mid;
    }
    return lo < offsets.length && offsets[lo] < r.end;
  };
  const statements = topLevelStatements(text);
  const isDef = (r: StatementRange) => r.head === "def" || r.head === "async";
  const rest = statements.filter((r) => r.head !== "class" && !isDef(r));
  // The names the module-level statements that name a startup variable assign.
  const names = new Set<string>();
  const naming = rest.filter((r) => holds(r, at));
  if (naming.length > 0) {
    const trees = ModuleTrees.parseRanges(text, naming);
    try {
      for (const st of trees.statements)
        for (const a of st.descendantsOfType(["assignment", "augmented_assignment", "named_expression"]))
          for (const id of (a?.childForFieldName("left") ?? a?.childForFieldName("name"))?.descendantsOfType(
            "identifier",
          ) ?? [])
            if (id) names.add(id.text);
    } finally {
      trees.delete();
    }
  }
  const nameAt: number[] = [];
  for (const n of names) for (let i = text.indexOf(n); i >= 0; i = text.indexOf(n, i + n.length)) nameAt.push(i);
  nameAt.sort((a, b) => a - b);
  const out: StatementRange[] = [];
  for (const r of statements) {
    const keep = r.head === "class" ? false : isDef(r) ? holds(r, at) || holds(r, nameAt) : true;
    if (!keep) continue;
    appendJoined(out, r);
  }
  return out;
}

/**
 * Calls `visit` with each module-level function of the module source `text` (null, or over
 * MAX_MODULE_BYTES: none) and its own timeline as a call runs it (buildModel's `asImported:
 * "functions"`: the module's own functions inlined, calls into other project modules left opaque;
 * methods left out). The parse is freed before it returns.
 */
function forEachModuleFunction(
  text: string | null,
  options: BaseOptions,
  partial: boolean,
  visit: (name: string, timeline: FunctionTimeline, model: ModuleModel) => void,
): void {
  if (text === null || text.length > MAX_MODULE_BYTES) return;
  const input = pythonInput(text);
  const tree = partial ? ModuleTrees.parseRanges(input, scanRanges(input)) : ModuleTrees.parse(input, false);
  try {
    const model = buildModel(tree, text, { ...options, asImported: "functions" });
    for (const t of model.functionTimelines) {
      const name = t.def.childForFieldName("name")?.text;
      if (!t.owner && name) visit(name, t, model);
    }
  } finally {
    tree.delete();
  }
}

/**
 * {@link ProjectIndex}'s re-exports of the module `text`: the names its module-level imports bind
 * under their own name (`from .prepare import prepare_moe`), to the dotted path imported, less the
 * names the module defines itself (a `def` or `class`). Only the top-level statements that are not
 * function or class definitions are parsed (moduleTrees.ts {@link topLevelStatements}; a
 * definition's name is read after its `def`/`class` keyword): the definitions' bodies bind nothing
 * at module level, and parsing them made a package's `__init__.py` (torch/cuda/__init__.py, 2,500
 * lines) cost a whole parse per lookup (BENCHMARKS.md). Where a definition's name cannot be read
 * that way, the whole module is parsed.
 */
export function reexportsIn(text: string, options: BaseOptions): Map<string, string> {
  const r = new Map<string, string>();
  const input = pythonInput(text);
  const { ranges, defined } = definitionsApart(input);
  if (!ranges.length) return r;
  const tree = ModuleTrees.parseRanges(input, ranges);
  try {
    const model = buildModel(tree, text, { ...options, asImported: "module" });
    for (const [name, path] of model.symbols)
      if (path.endsWith(`.${name}`) && !model.functions.has(name) && !model.classes.has(name) && !defined.has(name))
        r.set(name, path);
  } finally {
    tree.delete();
  }
  return r;
}

/** Appends the statement range `r` to `out`, joined into the last range when that one ends where `r` starts (one parse of the run). */
function appendJoined(out: StatementRange[], r: StatementRange): void {
  const last = out[out.length - 1];
  if (last && last.end === r.start) out[out.length - 1] = { ...last, end: r.end, endRow: r.endRow };
  else out.push({ ...r });
}

/**
 * `text`'s top-level statements other than function and class definitions, neighbours joined into
 * one range, and the names those definitions bind: read after the keyword (`def`, `async def`,
 * `class`, then spaces and an ASCII identifier followed by `(`, `:`, `[` or a space), else from the
 * statement's own parse.
 */
function definitionsApart(text: string): { ranges: StatementRange[]; defined: Set<string> } {
  const ranges: StatementRange[] = [];
  const defined = new Set<string>();
  for (const r of topLevelStatements(text)) {
    if (r.head === "def" || r.head === "class" || r.head === "async") {
      const name = definedName(text, r.headAt) ?? parsedName(text, r);
      if (name !== "") {
        if (name) defined.add(name);
        continue;
      }
    }
    appendJoined(ranges, r);
  }
  return { ranges, defined };
}

/**
 * The name a definition starting at `at` (its `def`, `async` or `class` keyword) binds; "" when the
 * statement is not a definition (`async with`); null when it cannot be read after the keyword (see
 * {@link definitionsApart}).
 */
function definedName(text: string, at: number): string | null {
  const word = (from: number): [string, number] => {
    let i = from;
    while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
    let e = i;
    while (e < text.length && isWordCode(text.charCodeAt(e))) e++;
    return [text.slice(i, e), e];
  };
  let [kw, end] = word(at);
  if (kw === "async") {
    [kw, end] = word(end);
    if (kw !== "def") return "";
  }
  const [name, after] = word(end);
  const next = text[after];
  const digit = name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57;
  if (!name || digit || !(next === "(" || next === ":" || next === "[" || next === " " || next === "\t")) return null;
  return name;
}

/**
 * The name the definition statement `r` of `text` binds, from its own parse; "" when it parses as
 * no definition (`async with`), null when it has no name (a syntax error).
 */
function parsedName(text: string, r: StatementRange): string | null {
  const trees = ModuleTrees.parseRanges(text, [r]);
  try {
    let st = trees.statements[0];
    if (st?.type === "decorated_definition") st = st.childForFieldName("definition") ?? st;
    if (st?.type !== "function_definition" && st?.type !== "class_definition") return "";
    return st.childForFieldName("name")?.text ?? null;
  } finally {
    trees.delete();
  }
}

/** The first init event of a timeline, or null. */
const firstInit = (events: readonly { kind: string }[]): InitEvent | null =>
  events.find((e): e is InitEvent => e.kind === "init") ?? null;

/** An init event of a module as its summary keeps it: the innermost call, and the places on the way there, outermost first. */
function asFound(e: InitEvent | null, file: string): Found | null {
  if (!e) return null;
  const at = [file, e.node.startPosition.row + 1] as const;
  const inner = e.project;
  return inner
    ? { framework: inner.framework, depth: inner.depth, what: inner.what, chain: [at, ...inner.chain] }
    : { framework: e.framework, depth: e.depth, what: e.what, chain: [at] };
}

/**
 * The rank kinds of the tuples the module's module-level functions return (`return local_rank, rank,
 * world_size`), by function name: only functions returning a tuple, and only when some element is a
 * known rank. The module's own reads only (other modules' functions are not followed from here).
 */
/** A cheap gate: no rank can be read without one of these words (RANK_VARIABLES, the rank calls, Accelerate's attributes). */
const RANK_WORDS = ["RANK", "PROCID", "LOCALID", "get_rank", "process_index", "get_node_local_rank"];

/**
 * Adds to `lists` the parameters of the module's functions that they pass on unchanged, as an
 * argument, to a function of the module whose parameter is DataParallel's list of ids there
 * (`define_G(ngf, gpu_ids)` calling `init_net(net, gpu_ids)`), two calls deep.
 */
function chainLists(model: ModuleModel, lists: Map<string, DeviceParam[]>): void {
  for (let pass = 0; pass < 2; pass++)
    for (const [name, def] of model.functions) {
      if (guarded(def)) continue;
      const params = positionalParams(def);
      const rebound = namesBoundIn(def);
      const found = lists.get(name) ?? [];
      for (const call of def.descendantsOfType("call")) {
        const fn = call?.childForFieldName("function");
        const callee = fn?.type === "identifier" && fn.text !== name ? lists.get(fn.text) : undefined;
        if (!call || !callee || enclosingFunction(call)?.id !== def.id) continue;
        const { positional, keywords } = callArgs(call);
        if (positional.some((a) => a.type === "list_splat" || a.type === "dictionary_splat")) continue;
        for (const d of callee) {
          const arg = keywords.get(d.name) ?? positional[d.index];
          const index = arg?.type === "identifier" && !rebound.has(arg.text) ? params.indexOf(arg.text) : -1;
          if (index >= 0 && !found.some((f) => f.index === index))
            found.push({ index, name: arg!.text, form: `${fn!.text}() → ${d.form}`, line: d.line });
        }
      }
      if (found.length) lists.set(name, found);
    }
}

/**
 * Whether `def` may leave its DataParallel out or catch its error: it counts GPUs (`if
 * torch.cuda.device_count() > 1:`) or holds a `try`.
 */
function guarded(def: SyntaxNode): boolean {
  return def.text.includes("device_count") || def.descendantsOfType("try_statement").length > 0;
}

/** A module's values before any is found. */
function emptyValues(): ModuleValues {
  return {
    returns: new Map(),
    value: new Map(),
    params: new Map(),
    keyed: new Map(),
    ordinals: new Map(),
    lists: new Map(),
    splats: new Map(),
    optionLists: new Map(),
    visible: false,
  };
}

function moduleValues(tree: ModuleTrees, text: string, options: BaseOptions): ModuleValues {
  const out = emptyValues();
  // A full model (the environment reads anywhere: the walks as imported leave them out).
  const model: ModuleModel = buildModel(tree, text, { ...options });
  const flow = RANK_WORDS.some((w) => text.includes(w)) ? new RankFlow(model) : null;
  const slots = deviceSlots(model);
  // Entries of a config may also be lists of ids handed to DataParallel.
  const idLists = deviceIdLists(model);
  const keyedSlots = [...slots, ...idLists];
  const torch = model.frameworks.has("torch");
  // The module's code (a string, not a comment) names CUDA_VISIBLE_DEVICES: its ordinals may be relative to a selection.
  const visible = namesVisibleDevices(model);
  out.visible = visible;
  for (const [name, def] of model.functions) {
    const tuple = flow?.returnedTuple(def);
    if (tuple && !tuple.every((o) => o.kind === "unknown")) {
      out.returns.set(
        name,
        tuple.map((o) => ({ kind: o.kind, variable: o.variable, line: o.source ? o.source.startPosition.row + 1 : 0 })),
      );
    }
    const one = tuple ? null : flow?.returnedValue(def);
    if (one && one.kind !== "unknown")
      out.value.set(name, {
        kind: one.kind,
        variable: one.variable,
        line: one.source ? one.source.startPosition.row + 1 : 0,
      });
    const params = slots.length ? deviceParams(def, slots) : [];
    if (params.length) out.params.set(name, params);
    const keyed = keyedSlots.length ? keyedDeviceParams(def, keyedSlots) : [];
    if (keyed.length) out.keyed.set(name, keyed);
    const ordinals = slots.length ? ordinalParams(def, slots, torch, undefined, visible) : [];
    if (ordinals.length) out.ordinals.set(name, ordinals);
    const lists = idLists.length && !guarded(def) ? deviceParams(def, idLists) : [];
    if (lists.length) out.lists.set(name, lists);
    const splats = splatParams(model, def);
    if (splats.length) out.splats.set(name, splats);
  }
  if (idLists.length) chainLists(model, out.lists);
  out.optionLists = returnedOptionLists(model);
  for (const [name, cls] of model.classes) {
    const init = keyedSlots.length && !model.functions.has(name) ? constructorOf(cls) : undefined;
    const keyed = init ? keyedDeviceParams(init, keyedSlots, cls).map((d) => ({ ...d, index: d.index - 1 })) : [];
    if (keyed.length) out.keyed.set(name, keyed);
    const ordinals = init && slots.length ? ordinalParams(init, slots, torch, cls, visible) : [];
    if (ordinals.length) out.ordinals.set(name, ordinals);
    const ctor = model.functions.has(name) ? undefined : constructorOf(cls);
    const splats = ctor ? splatParams(model, ctor, cls).map((d) => ({ ...d, index: d.index - 1 })) : [];
    if (splats.length) out.splats.set(name, splats);
  }
  return out;
}
