/**
 * Resolves the options of one lint run from the editor settings, the nearest pyproject.toml's
 * `[tool.gpu-pilot]`, the project's torch pin and (CLI) flags, with Ruff's
 * `configurationPreference` semantics: `editorFirst` (editor settings win where set),
 * `filesystemFirst` (pyproject wins where present), `editorOnly` (pyproject ignored).
 */
import { dirname, resolve, sep } from "node:path";
import { excludedBy } from "./exclude";
import { existsSync, statSync } from "node:fs";
import {
  findPyproject,
  loadProjectConfig,
  perFileIgnored,
  projectPinsTorchBelow20,
  projectPinsTorchBelow24,
  versionBelow,
  TARGET_VERSION,
  type ConfigProblem,
  type ProjectConfig,
} from "./config";
import { DEFAULT_EAGER_INIT_MODULES } from "./frameworks";
import { libraryPins, projectRequirements } from "./requirements";
import { catalogueEagerOf, INIT_CATALOGUE, normalisePackage } from "./initCatalogue";
import type { LintOptions } from "./lint";
import type { MachineFacts } from "./rule";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";
import { parseQueryGpu } from "../../../common/src/nvidiaSmi/parse";
import type { Severity } from "./types";
import {
  jobScriptsAround,
  jobScriptSearchMemo,
  rankArgLaunchesIn,
  severalNodeLaunchesIn,
  startedFilesIn,
  scriptLaunchesIn,
  type JobScriptsAround,
  type JobScriptSearchMemo,
  type RankArgLaunch,
  type SeveralNodeLaunch,
} from "./slurmLaunch";

export type ConfigurationPreference = "editorFirst" | "filesystemFirst" | "editorOnly";

/**
 * Whether `file` is a test module by pytest's discovery conventions ("test_*.py or *_test.py files",
 * https://docs.pytest.org/en/stable/explanation/goodpractices.html#conventions-for-python-test-discovery),
 * a `conftest.py`, or a file under a `tests`, `test` or `testing` folder.
 */
export function isTestModule(file: string): boolean {
  const parts = file.split(/[\\/]/);
  const name = parts[parts.length - 1] ?? "";
  return (
    /^test_.*\.py$/.test(name) ||
    /_test\.py$/.test(name) ||
    name === "conftest.py" ||
    parts.slice(0, -1).some((d) => d === "tests" || d === "test" || d === "testing")
  );
}

/** Lint settings that come from the editor or the command line (unset fields: not given). */
export interface LintOverrides {
  select?: string[];
  extendSelect?: string[];
  ignore?: string[];
  severity?: Record<string, Severity>;
  eagerInitModules?: string[];
  /** Run the preview rules and checks too (CLI `--preview`, setting `gpuPilot.lint.preview`). */
  preview?: boolean;
  /** The torch version the code targets (CLI `--target-torch`, setting `gpuPilot.lint.targetTorch`): "2.11". */
  targetTorch?: string;
}

interface CacheEntry {
  mtimeMs: number;
  config: ProjectConfig | null;
  problems: ConfigProblem[];
  torchBelow24: boolean;
  torchBelow20: boolean;
  machine: MachineFacts | null;
}

/**
 * The machine `[tool.gpu-pilot]` describes: its `inventory` file (nvidia-smi CSV, read through
 * workspaceFile.ts, at most 1 MiB) when set, else `gpus`; null when neither is set or the inventory
 * cannot be used (then a problem says why).
 */
export function configMachine(config: ProjectConfig | null, problems: ConfigProblem[]): MachineFacts | null {
  if (!config) return null;
  if (config.inventory) {
    const read = readWorkspaceText(config.inventory, 1024 * 1024);
    if (!("text" in read)) {
      problems.push({
        file: config.file,
        message: `[tool.gpu-pilot] inventory ${config.inventory} not read: ${read.reason}`,
      });
      return config.gpus !== undefined ? { gpuCount: config.gpus, uuids: [] } : null;
    }
    const parsed = parseQueryGpu(read.text);
    if (parsed.rows.length === 0) {
      problems.push({
        file: config.file,
        message: `[tool.gpu-pilot] inventory ${config.inventory} has no GPU lines: expected \`nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,... --format=csv,noheader,nounits\` output${parsed.problems[0] ? ` (line ${parsed.problems[0].line}: ${parsed.problems[0].reason})` : ""}`,
      });
      return config.gpus !== undefined ? { gpuCount: config.gpus, uuids: [] } : null;
    }
    return { gpuCount: parsed.rows.length, uuids: parsed.rows.map((g) => g.uuid) };
  }
  return config.gpus !== undefined ? { gpuCount: config.gpus, uuids: [] } : null;
}
const cache = new Map<string, CacheEntry>();

function projectConfig(pyproject: string): CacheEntry {
  let mtimeMs = -1;
  try {
    mtimeMs = statSync(pyproject).mtimeMs;
  } catch {
    /* deleted meanwhile: reload below */
  }
  const hit = cache.get(pyproject);
  if (hit && hit.mtimeMs === mtimeMs) return hit;
  const { config, problems } = loadProjectConfig(pyproject);
  const machine = configMachine(config, problems);
  const entry = {
    mtimeMs,
    config,
    problems,
    torchBelow24: projectPinsTorchBelow24(dirname(pyproject)),
    torchBelow20: projectPinsTorchBelow20(dirname(pyproject)),
    machine,
  };
  cache.set(pyproject, entry);
  return entry;
}

const sameList = (a: readonly string[] | undefined, b: readonly string[]): boolean =>
  !!a && a.length === b.length && a.every((x, i) => x === b[i]);
const nonEmpty = <T>(a: T[] | undefined): a is T[] => !!a && a.length > 0;

/**
 * Options for linting `file` (null for an unsaved buffer: no pyproject is read). `roots`: folders
 * the pyproject.toml lookup does not go above (the workspace folders; config.ts `findPyproject`).
 * @returns the options and the configuration problems met (each to be shown once by the caller).
 */
export function resolveLintOptions(
  file: string | null,
  editor: LintOverrides,
  preference: ConfigurationPreference = "editorFirst",
  flags: LintOverrides = {},
  roots: readonly string[] = [],
): ResolvedOptions {
  const folder = file ? folderFacts(dirname(file), preference, roots) : null;
  const resolved = resolveIn(file, folder, editor, preference, flags);
  // Without a pyproject.toml the default exclusions are taken from the workspace folder holding the file.
  const base = file ? (roots.map((r) => resolve(r)).find((r) => file.startsWith(r + sep)) ?? null) : null;
  const excluded = file ? excludedBy(folder?.entry?.config ?? null, file, false, base) : null;
  return excluded ? { ...resolved, excluded } : resolved;
}

/** What {@link resolveLintOptions} gives. */
export type ResolvedOptions = {
  options: LintOptions;
  problems: ConfigProblem[];
  pyproject: string | null;
  /** The baseline file the pyproject names (`[tool.gpu-pilot] baseline`, absolute), or null. */
  baseline: string | null;
  /** The `exclude`/`extend-exclude` pattern that leaves the file out (exclude.ts `excludedBy`); absent when none does. */
  excluded?: string;
};

/**
 * What the options of a file take from its folder: the nearest pyproject.toml (and its config), the
 * folder's torch pin, and the job scripts around it (slurmLaunch.ts `jobScriptsAround`); the last
 * two computed at their first use.
 */
interface FolderFacts {
  pyproject: string | null;
  entry: CacheEntry | null;
  pinsTorchBelow24: () => boolean;
  pinsTorchBelow20: () => boolean;
  jobScripts: () => JobScriptsAround;
  /** The eager-init modules of the catalogue for the folder's pins (its dependency files and the pyproject folder's); undefined when it pins no catalogued library. */
  catalogueEager: () => string[] | undefined;
  /** The folder's library pins (its dependency files and the pyproject folder's), by PEP 503 name. */
  pins: () => Readonly<Record<string, string>>;
}

/** What one run keeps between the folders it resolves: existence tests and the job-script search's memo. */
interface RunMemo {
  exists: (path: string) => boolean;
  jobScripts: JobScriptSearchMemo;
}

/**
 * The catalogue's eager-init modules for the library pins found in `dirs` (config.ts
 * projectRequirements; the first folder's pin of a library wins), or undefined when none of them
 * pins a catalogued library (the engine's default list applies).
 */
export function catalogueEagerFor(dirs: readonly string[]): string[] | undefined {
  return catalogueEagerOf(pinsIn(dirs));
}

/** The library pins found in `dirs` (config.ts projectRequirements; the first folder's pin of a library wins). */
function pinsIn(dirs: readonly string[]): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const d of dirs) for (const [k, v] of Object.entries(libraryPins(projectRequirements(d)))) pins[k] ??= v;
  return pins;
}

/**
 * The libraries whose pin a rule's claim depends on (LintOptions.libraryPins): GPU056 (what vLLM
 * does with `device="cuda:N"` changed across its releases), GPU040 (DeepSpeed 0.15.2 stopped
 * refusing an `--include` slot beyond a hostfile's `slots=`), and the init catalogue's packages
 * (GPU001's message and GPU002's suspects follow the pinned version's entries). Only these go into
 * the options, so that an unrelated pin does not change the CLI cache's options key.
 */
export const RULE_PINNED_PACKAGES: readonly string[] = [
  ...new Set(["vllm", "deepspeed", ...INIT_CATALOGUE.map((e) => normalisePackage(e.package))]),
];

function folderFacts(
  dir: string,
  preference: ConfigurationPreference,
  roots: readonly string[],
  memo?: RunMemo,
): FolderFacts {
  const pyproject = preference !== "editorOnly" ? findPyproject(dir, roots, memo?.exists) : null;
  let pins: boolean | undefined;
  let pins20: boolean | undefined;
  let scripts: JobScriptsAround | undefined;
  let eager: { modules: string[] | undefined } | undefined;
  let libraries: Record<string, string> | undefined;
  const folderPins = () =>
    (libraries ??= pinsIn([dir, ...(pyproject && dirname(pyproject) !== dir ? [dirname(pyproject)] : [])]));
  return {
    pyproject,
    entry: pyproject ? projectConfig(pyproject) : null,
    pinsTorchBelow24: () => (pins ??= projectPinsTorchBelow24(dir)),
    pinsTorchBelow20: () => (pins20 ??= projectPinsTorchBelow20(dir)),
    catalogueEager: () => (eager ??= { modules: catalogueEagerOf(folderPins()) }).modules,
    pins: folderPins,
    jobScripts: () => (scripts ??= jobScriptsAround(dir, roots, memo?.jobScripts)),
  };
}

/**
 * {@link resolveLintOptions} for many files of one run (the CLI): the folder's part (the
 * pyproject.toml lookup, its config, the folder's torch pin, the job scripts around it) is resolved
 * once per folder, and what folders share (whether a path exists on the way up, the job scripts in
 * each ancestor) once per run; the file's own part (per-file ignores, which job scripts start it)
 * per file. For a run over files that do not change meanwhile (a pyproject.toml edited during the
 * run is read at its first use).
 */
export function optionsResolver(
  editor: LintOverrides,
  preference: ConfigurationPreference = "editorFirst",
  flags: LintOverrides = {},
  roots: readonly string[] = [],
): OptionsResolver {
  const folders = new Map<string, FolderFacts>();
  const existing = new Map<string, boolean>();
  const memo: RunMemo = {
    exists: (p) => {
      let v = existing.get(p);
      if (v === undefined) {
        v = existsSync(p);
        existing.set(p, v);
      }
      return v;
    },
    jobScripts: jobScriptSearchMemo(),
  };
  const folderOf = (file: string): FolderFacts => {
    const dir = dirname(file);
    let folder = folders.get(dir);
    if (!folder) {
      folder = folderFacts(dir, preference, roots, memo);
      folders.set(dir, folder);
    }
    return folder;
  };
  const resolver = (file: string | null) =>
    file
      ? resolveIn(file, folderOf(file), editor, preference, flags)
      : resolveIn(null, null, editor, preference, flags);
  return Object.assign(resolver, {
    baselineOf: (file: string) => folderOf(file).entry?.config?.baseline ?? null,
    excludedBy: (path: string, isDir: boolean, fallbackBase: string) =>
      excludedBy(folderOf(path).entry?.config ?? null, path, isDir, fallbackBase),
    respectsGitignore: (path: string) => folderOf(path).entry?.config?.respectGitignore !== false,
  });
}

/**
 * What {@link optionsResolver} returns: the options of a file (null: of no file), and
 * `baselineOf(file)`: the baseline file its pyproject.toml's `[tool.gpu-pilot] baseline` names
 * (absolute), or null, without the rest of the resolution (the job-script search, the pins: a
 * third of a cold check's main thread on python3-torch when resolved for every folder).
 */
export type OptionsResolver = ((file: string | null) => ResolvedOptions) & {
  baselineOf(file: string): string | null;
  /**
   * The `exclude`/`extend-exclude` pattern of the nearest pyproject.toml above `path` (a folder when
   * `isDir`) that leaves it out, or null (exclude.ts `excludedBy`; without a pyproject.toml the
   * defaults, relative to `fallbackBase`).
   */
  excludedBy(path: string, isDir: boolean, fallbackBase: string): string | null;
  /** Whether the folder walk skips what `.gitignore` files ignore at `path` (`respect-gitignore`, default true). */
  respectsGitignore(path: string): boolean;
};

/**
 * The other Python files that `around`'s scripts start on several nodes (slurmLaunch.ts
 * {@link severalNodeLaunchesIn}; GPU039: a module one of them uses runs there too); none for a test
 * module or without a file.
 */
function severalNodeImporters(file: string | null, around: JobScriptsAround | null): readonly SeveralNodeLaunch[] {
  return around && file && !isTestModule(file)
    ? severalNodeLaunchesIn(around).filter((l) => l.file !== resolve(file))
    : [];
}

/**
 * The other Python files that `around`'s scripts start, each with whether every launch of it says one
 * node (slurmLaunch.ts {@link startedFilesIn}; GPU039: a module whose every started user runs on one
 * node); none for a test module, without a file, or where the scripts start too many files to list.
 */
function startedOthers(file: string | null, around: JobScriptsAround | null): readonly SeveralNodeLaunch[] {
  const started = around && file && !isTestModule(file) ? startedFilesIn(around) : null;
  return started ? started.filter((l) => l.file !== resolve(file!)) : [];
}

/**
 * The launch part of a Python file's options ({@link resolveIn}): how the project's job and shell
 * scripts start it, in one pass (its Slurm launches for GPU036, GPU037, GPU044 and GPU063; how many
 * nodes each runs it on for GPU039, whose documents are read lazily, ProjectLookup.documentedLaunches;
 * the CUDA_VISIBLE_DEVICES each gives it for GPU064), the other files they start (with the local
 * rank as an argument: GPU044; on several nodes: GPU039), the documents around it (their paths are
 * options too: one added or removed makes the CLI's cached result stale), and whether a launch passes
 * --local_rank under torch < 2.0 (GPU044). Only for Python files, not for notebooks or manifests.
 */
function launchOptions(
  file: string | null,
  folder: FolderFacts | null,
  targetTorch: string | undefined,
  entry: FolderFacts["entry"] | null,
): Partial<LintOptions> {
  const around = file && folder && /\.py$/i.test(file) ? folder.jobScripts() : null;
  const {
    slurm,
    nodes: launchNodes,
    visible: visibleLaunches,
  } = around && file ? scriptLaunchesIn(file, around) : { slurm: [], nodes: [], visible: [] };
  const launchDocuments = around?.docs ?? [];
  const importerLaunches = severalNodeImporters(file, around);
  const startedFiles = startedOthers(file, around);
  // The other files those scripts start with the local rank as an argument (GPU044 follows their
  // calls into this file's parser), less those whose own folder pins torch < 2.0 (no explicit target).
  const rankArgLaunches =
    around && file ? rankArgLaunchesUnpinned(around, !targetTorch).filter((l) => l.file !== resolve(file)) : [];
  const torchBelow20 =
    (slurm.some((l) => l.passesLocalRankArg) || rankArgLaunches.length > 0) &&
    (targetTorch
      ? versionBelow(targetTorch, 2, 0)
      : !!entry?.torchBelow20 || (folder ? folder.pinsTorchBelow20() : false));
  return {
    ...(torchBelow20 ? { torchBelow20: true } : {}),
    ...(slurm.length ? { slurm } : {}),
    ...(launchNodes.length ? { launchNodes } : {}),
    ...(visibleLaunches.length ? { visibleLaunches } : {}),
    ...(rankArgLaunches.length ? { rankArgLaunches } : {}),
    ...(importerLaunches.length ? { severalNodeLaunches: importerLaunches } : {}),
    ...(startedFiles.length ? { startedFiles } : {}),
    ...(launchDocuments.length ? { launchDocuments } : {}),
  };
}

/**
 * slurmLaunch.ts {@link rankArgLaunchesIn} of `around`; with `unpinned`, less the launches of files
 * whose folder pins torch below 2.0 (config.ts projectPinsTorchBelow20: that launcher passed
 * `--local_rank`). Kept per `around` (a folder's, for a run or a resolution).
 */
function rankArgLaunchesUnpinned(around: JobScriptsAround, unpinned: boolean): readonly RankArgLaunch[] {
  const all = rankArgLaunchesIn(around);
  if (!unpinned || all.length === 0) return all;
  let kept = unpinnedByAround.get(around);
  if (!kept) {
    kept = all.filter((l) => !projectPinsTorchBelow20(dirname(l.file)));
    unpinnedByAround.set(around, kept);
  }
  return kept;
}
const unpinnedByAround = new WeakMap<JobScriptsAround, readonly RankArgLaunch[]>();

function resolveIn(
  file: string | null,
  folder: FolderFacts | null,
  editor: LintOverrides,
  preference: ConfigurationPreference,
  flags: LintOverrides,
): ResolvedOptions {
  const pyproject = folder?.pyproject ?? null;
  const entry = folder?.entry ?? null;
  const project = entry?.config ?? null;
  // An explicit target (flag, then editor/pyproject per the preference) wins over the pin found in
  // the dependency files.
  const validTarget = (v: string | undefined): boolean => typeof v === "string" && TARGET_VERSION.test(v);
  const targetTorch = validTarget(flags.targetTorch)
    ? flags.targetTorch
    : preference === "filesystemFirst"
      ? validTarget(project?.targetTorch)
        ? project?.targetTorch
        : validTarget(editor.targetTorch)
          ? editor.targetTorch
          : undefined
      : validTarget(editor.targetTorch)
        ? editor.targetTorch
        : validTarget(project?.targetTorch)
          ? project?.targetTorch
          : undefined;
  const torchBelow24 = targetTorch
    ? versionBelow(targetTorch, 2, 4)
    : entry?.torchBelow24 || (folder ? folder.pinsTorchBelow24() : false);
  const launches = launchOptions(file, folder, targetTorch, entry);
  const pick = <T>(e: T | undefined, p: T | undefined, has: (v: T | undefined) => boolean): T | undefined =>
    preference === "filesystemFirst" ? (has(p) ? p : e) : has(e) ? e : p;
  const select = nonEmpty(flags.select) ? flags.select : pick(editor.select, project?.select, nonEmpty);
  const extend = [...(project?.extendSelect ?? []), ...(editor.extendSelect ?? []), ...(flags.extendSelect ?? [])];
  const ignore = [
    ...(pick(editor.ignore, project?.ignore, nonEmpty) ?? []),
    ...(flags.ignore ?? []),
    ...(project && file ? perFileIgnored(project, file) : []),
  ];
  const severity =
    preference === "filesystemFirst"
      ? { ...(editor.severity ?? {}), ...(project?.severity ?? {}), ...(flags.severity ?? {}) }
      : { ...(project?.severity ?? {}), ...(editor.severity ?? {}), ...(flags.severity ?? {}) };
  const preview =
    flags.preview ??
    (preference === "filesystemFirst" ? (project?.preview ?? editor.preview) : (editor.preview ?? project?.preview));
  // The editor sends the setting's default (package.json: DEFAULT_EAGER_INIT_MODULES) when the user set
  // none: the project's library pins (the catalogue's versions) decide then.
  const editorEager = sameList(editor.eagerInitModules, DEFAULT_EAGER_INIT_MODULES)
    ? undefined
    : editor.eagerInitModules;
  const eager =
    flags.eagerInitModules ?? pick(editorEager, project?.eagerInitModules, nonEmpty) ?? folder?.catalogueEager();
  const folderPins = folder?.pins() ?? {};
  const rulePins = Object.fromEntries(RULE_PINNED_PACKAGES.filter((p) => folderPins[p]).map((p) => [p, folderPins[p]]));
  const options: LintOptions = {
    ...(select || extend.length ? { select: [...(select ?? ["GPU"]), ...extend] } : {}),
    ...(ignore.length ? { ignore } : {}),
    ...(Object.keys(severity).length ? { severity } : {}),
    ...(eager ? { eagerInitModules: eager } : {}),
    ...(preview ? { preview: true } : {}),
    torchBelow24,
    ...(Object.keys(rulePins).length ? { libraryPins: rulePins } : {}),
    ...launches,
    ...(file && isTestModule(file) ? { testModule: true } : {}),
    // The machine of `[tool.gpu-pilot] gpus`/`inventory`; the CLI's --gpus/--inventory and the editor's live inventory win over it (cli.ts, handlers/context.ts lintOptions).
    ...(entry?.machine ? { machine: entry.machine } : {}),
  };
  return { options, problems: entry?.problems ?? [], pyproject, baseline: project?.baseline ?? null };
}
