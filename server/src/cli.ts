/**
 * The command-line interface, for CI and pre-commit:
 *   gpu-pilot check [options] PATH...
 * Lints .py files and .ipynb notebooks, and Dockerfiles, compose files, Kubernetes YAML and Slurm job
 * scripts (.sbatch, .slurm, and .sh/.bash files with #SBATCH lines)
 * (GPU018-GPU020), folders searched recursively, with the same engine and configuration
 * (`[tool.gpu-pilot]`, `# noqa`) as the language server.
 * Exit codes, as ESLint's: 0 nothing at or above the fail level (default: warning, so information
 * and hint findings do not fail a run; --fail-level changes it, --exit-zero never fails), 1 findings
 * at or above it, 2 bad usage, an unreadable path or a broken file (message on stderr).
 */
import { readdirSync, realpathSync, statSync, type Dirent, type Stats } from "node:fs";
import { join, resolve, extname, relative, sep, dirname, basename, isAbsolute } from "node:path";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";
import { initEngine, lintPython, type LintOptions } from "./engine/lint";
import {
  diskReader,
  lookupOptions,
  ProjectIndex,
  type FileLookup,
  type ModuleWriterMap,
  type WriterScanMemo,
} from "./engine/python/project";
import { lintNotebook, readIpynb, withCellSources } from "./engine/notebook";
import { optionsResolver, type LintOverrides, type OptionsResolver } from "./engine/options";
import { TARGET_VERSION } from "./engine/config";
import { excludedBy, GitignoreFilter, type ExcludeSettings } from "./engine/exclude";
import { fixAllPython, fixAllNotebook } from "./engine/fixAll";
import { RULES } from "./engine/rules/index";
import { lintManifest, fixAllManifest, manifestKindOf, type ManifestKind } from "./engine/manifests/lintManifest";
import { DEVCONTAINER_FOLDER } from "./engine/manifests/files";
import type { Range, TextEdit, Severity } from "./engine/types";
import { parseQueryGpu } from "../../common/src/nvidiaSmi/parse";
import { QUERY_GPU_ARGS, runNvidiaSmi } from "../../common/src/gpu/nvidiaSmi";
import { ownProjectLinks, ruleDocsWebUrl } from "./docsUrl";
import { ruleMain } from "./cliRule";
import { DEFAULT_MAX_FILE_SIZE_KB, FILE_TOO_LARGE_CODE, sizeOverLimit, sourceReadCap } from "./engine/limits";
import {
  readWorkspaceFile,
  readWorkspaceText,
  replaceFile,
  fileKind,
  SOURCE_MAX_BYTES,
} from "../../common/src/fs/workspaceFile";
import { decodeSource } from "./engine/sourceEncoding";
import { escapeControls as plain } from "../../common/src/text/controls";
import { exitQuietlyOnClosedPipe } from "./closedPipe";
import { mcpCheckFile } from "./mcp/engine";
import { createTwoFilesPatch } from "diff";
import { applyBaselines, baselineSummary, textOnDisk, type BaselineOutcome } from "./cliBaseline";
import { BaselineError } from "./engine/baseline";
import {
  ResultCache,
  buildIdOf,
  cacheDirOf,
  optionsKey,
  sha1,
  stampOf,
  type CachedResult,
  type FileStamp,
  type ModuleWriters,
} from "./cliCache";

const VERSION = "0.1.0";
const USAGE = `usage: gpu-pilot check [options] PATH...
       gpu-pilot mcp [--allow-run] [--nvidia-smi PATH] [--python PATH] [--root DIR] [--claims-dir DIR | --no-claims] [--claim-minutes N]   (gpu-pilot mcp --help)
       gpu-pilot kernel install|list|remove ...   Jupyter kernels on the selected GPUs (gpu-pilot kernel --help)
       gpu-pilot rule CODE | --all [--format json]   a rule's documentation (gpu-pilot rule GPU001)
  PATH                    a .py or .ipynb file, a Dockerfile, compose file, Kubernetes YAML, Slurm
                          job script (.sbatch, .slurm, .sh with #SBATCH lines), shell script or
                          devcontainer.json, or a folder (searched recursively for all of these);
                          - for stdin
options:
  --format FORMAT         (or --output-format) text (default: one line per problem, [*] before the message of those --fix
                          fixes, then a summary) | json (Ruff's shape) | sarif (2.1.0) | github (workflow annotations)
  --select CODES          enable only these codes or prefixes (comma-separated, e.g. GPU001,GPU01)
  --extend-select CODES   enable these in addition
  --ignore CODES          disable these codes or prefixes
  --fix                   apply safe fixes in place, then report what remains
  --unsafe-fixes          also apply the unsafe fixes (with --fix or --diff), which may change what the
                          code does: review them
  --diff                  print the fixes as a unified diff and write nothing; exit 1 when there are fixes
  --preview               also run the preview rules and checks (below the default set's precision bar)
  --target-torch VERSION  the torch version the code runs on (e.g. 2.11; < 2.4: device_count()
                          initialises CUDA); wins over [tool.gpu-pilot] target-torch and the pin
  --fail-level LEVEL      exit 1 when a finding is at least this severe: error | warning (default) |
                          information | hint  (alias: --exit-non-zero-on)
  --exit-zero             exit 0 even when problems are reported
  -q, --quiet             print the problems only (no summary, no notes)
  -s, --silent            print nothing; the exit code tells
  --extend-exclude PATS   also leave out these gitignore-style patterns (comma-separated), besides
                          [tool.gpu-pilot] exclude / extend-exclude and the default folders (venv, ...)
  --force-exclude         leave out excluded paths even when named on the command line (pre-commit)
  --no-respect-gitignore  also check what the work tree's .gitignore files ignore (--respect-gitignore: do not)
  --statistics            print counts per rule and how many files were parsed, skipped without
                          parsing and taken from the result cache (and project modules scanned
                          for startup-variable writers), on stderr
  --no-prefilter          parse every file, even those no enabled rule can fire on (benchmarks)
  --no-cache              check every file, also those unchanged since an earlier run (the result
                          cache is not read or written; it is never used with --fix or stdin)
  --cache-dir DIR         keep the result cache in DIR (default: $GPU_PILOT_CACHE_DIR, else
                          $XDG_CACHE_HOME/gpu-pilot or ~/.cache/gpu-pilot)
  --stdin-filename FILE   read the source from stdin; FILE names it (config lookup, messages)
  --baseline FILE         leave out the findings FILE holds (written by --write-baseline; default: the
                          nearest pyproject's [tool.gpu-pilot] baseline); reports how many were left
                          out and the entries that no longer match
  --write-baseline FILE   write this run's findings to FILE (JSON, paths relative to its folder) and
                          report none; entries of files the run did not check are kept
  --gpus N                the machine has N GPUs (enables GPU017); auto: ask this machine's nvidia-smi
  --inventory FILE        nvidia-smi --query-gpu=index,uuid,... CSV of the machine (enables GPU017)
  --max-file-size-kb N    report a file whose code is over N KB as not linted (GPU000) instead of linting it (default 2048; 0: no limit)
exit codes: 0 no finding at or above the fail level, 1 findings at or above it, 2 bad usage or unreadable input`;

/** The project configuration file: read for `[tool.gpu-pilot]`, never linted. */
const PYPROJECT = "pyproject.toml";
const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** Severities from most to least severe (LSP's order): a lower rank is more severe. */
const SEVERITY_RANK: Record<Severity, number> = { error: 1, warning: 2, information: 3, hint: 4 };

/** The exit code of a run: 1 when a finding is at least as severe as `failLevel` (and not --exit-zero). */
function exitCodeOf(all: readonly JsonDiagnostic[], args: Pick<CliArgs, "exitZero" | "failLevel">): number {
  if (args.exitZero) return 0;
  return all.some((d) => SEVERITY_RANK[d.severity] <= SEVERITY_RANK[args.failLevel]) ? 1 : 0;
}

/** Thrown for bad usage or unreadable input; the message goes to stderr and the exit code is 2. */
class UsageError extends Error {
  /** @param withUsage print the usage text after the message (as it is: its line breaks are not escaped). */
  constructor(
    message: string,
    readonly withUsage = false,
  ) {
    super(message);
  }
}

type Format = "text" | "json" | "sarif" | "github";
interface CliArgs {
  format: Format;
  paths: string[];
  flags: LintOverrides;
  fix: boolean;
  /** `--unsafe-fixes`: fixing (--fix, --diff) applies unsafe fixes too. */
  unsafeFixes: boolean;
  /** `--diff`: the fixes are printed as a unified diff, not written. */
  diff: boolean;
  exitZero: boolean;
  /** Findings at least this severe make the exit code 1. */
  failLevel: Severity;
  stdinFilename: string | null;
  /** `--gpus N`, or `--gpus auto` (ask this machine's nvidia-smi: {@link resolveMachine}). */
  gpus: number | "auto" | null;
  inventory: string | null;
  maxFileSizeKB: number;
  statistics: boolean;
  noPrefilter: boolean;
  /** `--no-cache`: neither read nor write the result cache (cliCache.ts). */
  noCache: boolean;
  /** `--cache-dir`: the result cache's folder; null: cliCache.ts `cacheDirOf`. */
  cacheDir: string | null;
  /** `--baseline`: the baseline file for every file checked; null: each file's pyproject's. */
  baseline: string | null;
  /** `--write-baseline`: write the findings to this file. */
  writeBaseline: string | null;
  /** `--extend-exclude`: more patterns to leave out (exclude.ts; relative to the working folder). */
  extendExclude: string[];
  /** `--force-exclude`: paths named on the command line are left out too when excluded. */
  forceExclude: boolean;
  /** `--respect-gitignore` / `--no-respect-gitignore`; null: each pyproject's `respect-gitignore` (default true). */
  respectGitignore: boolean | null;
  /** `-q`/`--quiet`: findings only, no summary or notes; `-s`/`--silent`: nothing at all (the exit code tells). */
  quiet: "" | "quiet" | "silent";
}

/**
 * A `--select`/`--extend-select`/`--ignore` value: codes, prefixes or ALL, comma-separated.
 * @throws UsageError for an entry that is not a code or prefix, or that no rule's code matches.
 */
const codeList = (v: string, flag: string): string[] => {
  const list = v
    .split(",")
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const bad = list.filter((c) => !/^GPU\d{0,3}$/.test(c) && c !== "ALL");
  if (bad.length) throw new UsageError(`${flag}: not a rule code or prefix: ${bad.join(", ")}`);
  const codes = RULES.map((r) => r.meta.code);
  const none = list.find((c) => c !== "ALL" && !codes.some((k) => k.startsWith(c)));
  if (none) {
    const what = none.length === 6 ? `the code ${none}` : `a code starting with ${none}`;
    throw new UsageError(`${flag}: no rule has ${what} (codes are ${[...codes].sort().join(", ")})`);
  }
  return list;
};

/** Options that take no value. */
const SWITCHES = new Set([
  "--fix",
  "--unsafe-fixes",
  "--diff",
  "--exit-zero",
  "--statistics",
  "--no-prefilter",
  "--no-cache",
  "--preview",
  "--force-exclude",
  "--respect-gitignore",
  "--no-respect-gitignore",
  "--quiet",
  "--silent",
]);
/** The largest `--gpus` accepted (a bound, not a claim about machines). */
const MAX_GPUS = 4096;

function parseArgs(argv: string[]): CliArgs {
  const [command, ...rest] = argv;
  if (!command || command === "-h" || command === "--help") throw new UsageError(USAGE);
  if (command === "--version") throw new UsageError(VERSION);
  if (command !== "check") throw new UsageError(`unknown command "${command}"`, true);
  // `gpu-pilot check --help` (before a `--`, after which every word is a path): the usage, exit 0.
  const end = rest.indexOf("--");
  const options = end < 0 ? rest : rest.slice(0, end);
  if (options.includes("--help") || options.includes("-h")) throw new UsageError(USAGE);
  const a: CliArgs = {
    format: "text",
    paths: [],
    flags: {},
    fix: false,
    unsafeFixes: false,
    diff: false,
    exitZero: false,
    failLevel: "warning",
    stdinFilename: null,
    gpus: null,
    inventory: null,
    maxFileSizeKB: DEFAULT_MAX_FILE_SIZE_KB,
    statistics: false,
    noPrefilter: false,
    noCache: false,
    cacheDir: null,
    baseline: null,
    writeBaseline: null,
    extendExclude: [],
    forceExclude: false,
    respectGitignore: null,
    quiet: "",
  };
  const given = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    // Strict forms: `--flag VALUE` or `--flag=VALUE` with a non-empty value that is not another
    // option, each value option once, and no value for a switch (`--fix=yes` is refused).
    const value = (): string => {
      if (given.has(name)) throw new UsageError(`${name} is given twice`);
      given.add(name);
      const v = eq > 0 ? arg.slice(eq + 1) : rest[++i];
      if (v === undefined || v === "") throw new UsageError(`${name} needs a value`);
      if (eq < 0 && v.startsWith("-") && v !== "-")
        throw new UsageError(`${name} needs a value, not the option "${v}"`);
      return v;
    };
    if (eq > 0 && SWITCHES.has(name)) throw new UsageError(`${name} takes no value (got "${arg}")`);
    switch (name) {
      case "--format":
      case "--output-format": {
        const v = value();
        if (!["text", "json", "sarif", "github"].includes(v))
          throw new UsageError(`${name} must be text, json, sarif or github, not "${v}"`);
        a.format = v as Format;
        break;
      }
      case "--select":
        a.flags.select = codeList(value(), name);
        break;
      case "--extend-select":
        a.flags.extendSelect = codeList(value(), name);
        break;
      case "--ignore":
        a.flags.ignore = codeList(value(), name);
        break;
      case "--fix":
        a.fix = true;
        break;
      case "--unsafe-fixes":
        a.unsafeFixes = true;
        break;
      case "--diff":
        a.diff = true;
        break;
      case "--exit-zero":
        a.exitZero = true;
        break;
      case "--preview":
        a.flags.preview = true;
        break;
      case "--target-torch": {
        const v = value();
        if (!TARGET_VERSION.test(v)) throw new UsageError(`--target-torch must be a version such as 2.11, not "${v}"`);
        a.flags.targetTorch = v;
        break;
      }
      case "--fail-level":
      case "--exit-non-zero-on": {
        const v = value();
        if (!(v in SEVERITY_RANK))
          throw new UsageError(`${name} must be error, warning, information or hint, not "${v}"`);
        a.failLevel = v as Severity;
        break;
      }
      case "--statistics":
        a.statistics = true;
        break;
      case "--no-prefilter":
        a.noPrefilter = true;
        break;
      case "--no-cache":
        a.noCache = true;
        break;
      case "--cache-dir":
        a.cacheDir = value();
        break;
      case "--baseline":
        a.baseline = value();
        break;
      case "--write-baseline":
        a.writeBaseline = value();
        break;
      case "--stdin-filename":
        a.stdinFilename = value();
        break;
      case "--extend-exclude":
        a.extendExclude = value()
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean);
        break;
      case "--force-exclude":
        a.forceExclude = true;
        break;
      case "--respect-gitignore":
      case "--no-respect-gitignore":
        if (a.respectGitignore !== null && a.respectGitignore !== (name === "--respect-gitignore"))
          throw new UsageError("--respect-gitignore and --no-respect-gitignore cannot be combined");
        a.respectGitignore = name === "--respect-gitignore";
        break;
      case "-q":
      case "--quiet":
        if (a.quiet === "") a.quiet = "quiet";
        break;
      case "-s":
      case "--silent":
        a.quiet = "silent";
        break;
      case "--gpus": {
        const v = value();
        if (v === "auto") {
          a.gpus = "auto";
          break;
        }
        if (!/^\d{1,4}$/.test(v) || Number(v) > MAX_GPUS)
          throw new UsageError(`--gpus must be a whole number from 0 to ${MAX_GPUS} or auto, not "${v}"`);
        a.gpus = Number(v);
        break;
      }
      case "--inventory":
        a.inventory = value();
        break;
      case "--max-file-size-kb": {
        const v = value();
        if (!/^\d{1,9}$/.test(v))
          throw new UsageError(
            `--max-file-size-kb must be a whole number of KB up to 999999999 (0: no limit), not "${v}"`,
          );
        a.maxFileSizeKB = Number(v);
        break;
      }
      case "--":
        a.paths.push(...rest.slice(i + 1));
        i = rest.length;
        break;
      case "--exclude":
        // Ruff's --exclude replaces its exclusions for one run; here the pyproject's `exclude` does that.
        throw new UsageError(
          "--exclude is not an option: use --extend-exclude PATTERNS, or exclude = [...] under [tool.gpu-pilot] in pyproject.toml to replace the default exclusions",
        );
      default:
        if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option "${arg}"`, true);
        a.paths.push(arg);
    }
  }
  if (a.paths.includes("-") && a.paths.length > 1)
    throw new UsageError("- (stdin) cannot be checked together with other paths", true);
  // `check -`: the source from stdin, named "-" (config looked up from the working folder).
  if (a.paths.length === 1 && a.paths[0] === "-" && a.stdinFilename === null) a.stdinFilename = "-";
  if (a.paths.length === 0 && a.stdinFilename === null) throw new UsageError("no PATH given", true);
  if (a.writeBaseline !== null && (a.fix || a.diff))
    throw new UsageError(
      "--write-baseline cannot be combined with --fix or --diff (fix first, then write the baseline)",
    );
  if (a.writeBaseline !== null && a.baseline !== null && resolve(a.writeBaseline) !== resolve(a.baseline))
    throw new UsageError("--baseline and --write-baseline name different files");
  return a;
}

/** A file to check: the path as found, its real path (symlinks resolved) and the real path of the tree it was found in. */
interface Target {
  path: string;
  real: string;
  tree: string;
}

/**
 * What the folder walk leaves out (exclude.ts): `why(path, isDir, base)` names the pattern that
 * excludes a file or folder (`exclude`/`extend-exclude`, `--extend-exclude`, a `.gitignore`), or
 * null; `base` is the folder named on the command line (where the defaults apply without a
 * pyproject.toml). `force`: also leave out paths named on the command line (`--force-exclude`).
 */
interface Exclusion {
  why(path: string, isDir: boolean, base: string): string | null;
  force: boolean;
}

/**
 * Expands folders into .py/.ipynb files and manifests (sorted; hidden folders and what `exclusion`
 * names skipped). A path named on the command line is checked even when excluded, and so is
 * everything below a folder so named but the default folders (exclude.ts `DEFAULT_EXCLUDE`), unless
 * `exclusion.force` (Ruff's `--force-exclude`, which pre-commit hooks pass). Real paths are walked once: a symlink loop or a second link to a
 * folder or file already seen adds nothing, and a link to a folder outside the tree is not
 * followed (a note says so). A matching name in a folder that is not a regular file (a FIFO, a
 * link to a device) is skipped with a note through `note`; a path named on the command line is
 * kept (reading it fails with the reason).
 */
function collectFiles(paths: string[], note: (s: string) => void, exclusion: Exclusion): Target[] {
  const out: Target[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  const inside = (real: string, tree: string) =>
    real === tree || real.startsWith(tree.endsWith(sep) ? tree : tree + sep);
  /** `real`: the file's real path when known (an entry that is no link, in a folder whose real path is known). */
  const add = (path: string, tree: string, real?: string) => {
    if (real === undefined) {
      try {
        real = realpathSync(path);
      } catch {
        real = path;
      }
    }
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
    out.push({ path, real, tree });
  };
  /** `skip(path, isDir)`: whether the walk leaves an entry out (see the loop over `paths` below). */
  type Skip = (path: string, isDir: boolean) => boolean;
  /** `devOnly`: inside a `.devcontainer` folder, where only Dev Container configurations are read. */
  const walk = (dir: string, tree: string, skip: Skip, knownReal?: string, devOnly = false) => {
    let realDir: string;
    if (knownReal !== undefined) realDir = knownReal;
    else {
      try {
        realDir = realpathSync(dir);
      } catch (e) {
        throw new UsageError(`cannot read folder ${dir}: ${(e as Error).message}`);
      }
    }
    if (seenDirs.has(realDir)) return;
    if (!inside(realDir, tree)) {
      note(`gpu-pilot: skipped ${dir}: a link to the folder ${realDir}, outside ${tree}\n`);
      return;
    }
    seenDirs.add(realDir);
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
    } catch (e) {
      throw new UsageError(`cannot read folder ${dir}: ${(e as Error).message}`);
    }
    for (const e of entries) {
      const n = e.name;
      const p = join(dir, n);
      // A folder or regular file as listed needs no stat (and its real path is its folder's plus its
      // name); a link or anything else is stat'ed (through the link) as before.
      const plain = e.isDirectory() || e.isFile();
      let st: Stats | Dirent = e;
      if (!plain) {
        try {
          st = statSync(p);
        } catch {
          continue;
        }
      } // a dangling link, or a link loop (ELOOP)
      if (st.isDirectory()) {
        // Hidden folders are left out, except `.devcontainer` for its devcontainer.json files.
        const dev = devOnly || n === DEVCONTAINER_FOLDER;
        if ((!n.startsWith(".") || dev) && !skip(p, true))
          walk(p, tree, skip, plain ? join(realDir, n) : undefined, dev);
      } else if (
        devOnly ? manifestKindOf(p) === "devcontainer" : n.endsWith(".py") || n.endsWith(".ipynb") || manifestKindOf(p)
      ) {
        if (skip(p, false)) continue;
        if (st.isFile()) add(p, tree, plain ? join(realDir, n) : undefined);
        else note(`gpu-pilot: skipped ${p}: not a regular file (${fileKind(st as Stats)})\n`);
      }
    }
  };
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new UsageError(`no such file or folder: ${p}`);
    }
    // A path named on the command line is checked whole unless --force-exclude leaves it out.
    // Without a pyproject.toml the defaults apply below the working folder (pre-commit's repository
    // root), else below the named path's folder.
    const cwd = process.cwd();
    const named = exclusion.why(abs, st.isDirectory(), abs.startsWith(cwd + sep) ? cwd : dirname(abs));
    if (named && exclusion.force) continue;
    // Below a folder named on the command line that is itself excluded, only the default folders
    // (venv, node_modules, ...) are left out, by name: the project's patterns and .gitignore files
    // would match the named folder itself and so everything in it.
    const skip: Skip = named
      ? (p, isDir) => excludedBy(null, p, isDir, abs) !== null
      : (p, isDir) => exclusion.why(p, isDir, abs) !== null;
    if (st.isDirectory()) walk(abs, realpathSync(abs), skip);
    else {
      let tree: string;
      try {
        tree = realpathSync(dirname(abs));
      } catch {
        tree = dirname(abs);
      }
      add(abs, tree);
    }
  }
  return out;
}

/** One reported problem in Ruff's JSON shape (1-based rows and columns); `severity` is GPU Pilot's addition. */
export interface JsonDiagnostic {
  cell: number | null;
  code: string;
  end_location: { row: number; column: number };
  filename: string;
  fix: {
    applicability: "safe" | "unsafe";
    message: string;
    edits: Array<{
      content: string;
      location: { row: number; column: number };
      end_location: { row: number; column: number };
    }>;
  } | null;
  location: { row: number; column: number };
  message: string;
  noqa_row: number;
  /** The rule's documentation page in the project's repository (docsUrl.ts `ruleDocsWebUrl`); null when package.json names none. */
  url: string | null;
  severity: Severity;
  /**
   * The places that explain the finding (LintDiagnostic.related: the call that initialised CUDA for
   * GPU001, the child script's `deepspeed` line for GPU040), 1-based as `location`; `filename` is the
   * finding's own file unless the place is in another one, `cell` (1-based) for a notebook's cell.
   * Absent when there are none (Ruff's JSON has no such key).
   */
  related?: JsonRelated[];
}

/** One related place of a {@link JsonDiagnostic}. */
export interface JsonRelated {
  filename: string;
  cell: number | null;
  location: { row: number; column: number };
  end_location: { row: number; column: number };
  message: string;
}

/** A rule's documentation page for the reports (never a file:// URL: docsUrl.ts `ruleDocsWebUrl`). */
const ruleUrl = (code: string): string | null => ruleDocsWebUrl(code, ownProjectLinks());

const loc = (p: { line: number; character: number }) => ({ row: p.line + 1, column: p.character + 1 });

function toJson(
  filename: string,
  d: {
    code: string;
    message: string;
    severity: Severity;
    range: Range;
    fix?: { title: string; safe: boolean; edits: TextEdit[] };
    related?: ReadonlyArray<{ range: Range; message: string; file?: string; cell?: number }>;
  },
  cell: number | null,
): JsonDiagnostic {
  const related = (d.related ?? []).map((r): JsonRelated => ({
    filename: r.file ?? filename,
    // A notebook's related place names its own cell (0-based in the engine), else none.
    cell: r.cell !== undefined ? r.cell + 1 : null,
    location: loc(r.range.start),
    end_location: loc(r.range.end),
    message: r.message,
  }));
  return {
    cell,
    code: d.code,
    end_location: loc(d.range.end),
    filename,
    fix: d.fix
      ? {
          applicability: d.fix.safe ? "safe" : "unsafe",
          message: d.fix.title,
          edits: d.fix.edits.map((e) => ({
            content: e.newText,
            location: loc(e.range.start),
            end_location: loc(e.range.end),
          })),
        }
      : null,
    location: loc(d.range.start),
    message: d.message,
    noqa_row: d.range.start.line + 1,
    url: ruleUrl(d.code),
    severity: d.severity,
    ...(related.length ? { related } : {}),
  };
}

/** Which fixes a run applies: none, the safe ones (--fix, --diff) or all (with --unsafe-fixes). */
type FixMode = false | "safe" | "unsafe";
/** The fix mode of a run's arguments. */
const fixModeOf = (a: Pick<CliArgs, "fix" | "diff" | "unsafeFixes">): FixMode =>
  a.fix || a.diff ? (a.unsafeFixes ? "unsafe" : "safe") : false;

/**
 * The project lookup of a Python file or notebook (python/project.ts), as LintOptions' `project`;
 * none for manifests (their rules read no imports).
 */
function projectOf(index: ProjectIndex, file: string, options: LintOptions): Pick<LintOptions, "project"> {
  if (manifestKindOf(file)) return {};
  return { project: index.lookupFor(resolve(file), lookupOptions(options)) };
}

/** Lints Python source, applying fixes first when `fix`. */
function checkPython(
  filename: string,
  source: string,
  options: LintOptions,
  fix: FixMode,
): { diagnostics: JsonDiagnostic[]; fixed: string | null; applied: number; parsed: boolean } {
  const { text, applied } = fix ? fixAllPython(source, options, fix === "unsafe") : { text: source, applied: 0 };
  const r = lintPython(text, options);
  r.tree?.delete();
  return {
    diagnostics: r.diagnostics.map((d) => toJson(filename, d, null)),
    fixed: text !== source ? text : null,
    applied,
    parsed: r.parsed,
  };
}

/** Lints a Dockerfile, compose file, Kubernetes YAML or Slurm job script, applying fixes first when `fix`. */
function checkManifest(
  filename: string,
  source: string,
  kind: ManifestKind,
  options: LintOptions,
  fix: FixMode,
): { diagnostics: JsonDiagnostic[]; fixed: string | null; applied: number; deps: string[] } {
  const { text, applied } = fix
    ? fixAllManifest(source, kind, options, fix === "unsafe", filename)
    : { text: source, applied: 0 };
  const r = lintManifest(text, kind, options, { file: filename });
  return {
    diagnostics: r.diagnostics.map((d) => toJson(filename, d, null)),
    fixed: text !== source ? text : null,
    applied,
    // The files its rules read (a launched script, an accelerate config, a sourced env file).
    deps: r.deps ?? [],
  };
}

/** Lints a notebook's JSON text, applying fixes to its cells when `fix`. */
function checkNotebook(
  filename: string,
  json: string,
  options: LintOptions,
  fix: FixMode,
): { diagnostics: JsonDiagnostic[]; fixed: string | null; applied: number; deps?: string[] } {
  let original;
  let host: "colab" | "kaggle" | undefined;
  try {
    ({ cells: original, host } = readIpynb(json));
  } catch (e) {
    // One unreadable notebook (nbformat 3, broken JSON) is a finding of its own; the run goes on,
    // so `--format sarif > results.sarif` still holds every other file's findings.
    const at = { line: 0, character: 0 };
    const message = `GPU Pilot did not lint this notebook: cannot read notebook (${(e as Error).message}).`;
    return {
      diagnostics: [
        toJson(
          filename,
          { code: FILE_TOO_LARGE_CODE, message, severity: "warning", range: { start: at, end: at } },
          null,
        ),
      ],
      fixed: null,
      applied: 0,
    };
  }
  if (host) options = { ...options, notebookHost: host };
  const { cells, applied } = fix
    ? fixAllNotebook(original, options, fix === "unsafe")
    : { cells: original, applied: 0 };
  const r = lintNotebook(cells, options, undefined, filename);
  let fixed: string | null = null;
  if (cells.some((c, i) => c.text !== original[i].text))
    fixed = withCellSources(
      json,
      cells.map((c) => c.text),
    );
  return {
    diagnostics: r.diagnostics.map((d) =>
      toJson(
        filename,
        { ...d, fix: d.fix ? { title: d.fix.title, safe: d.fix.safe, edits: d.fix.edits } : undefined },
        d.cell + 1,
      ),
    ),
    fixed,
    applied,
    // The files its shell lines' rules read (a script started with `!python x.py`).
    ...(r.deps ? { deps: r.deps } : {}),
  };
}

function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith("..") ? rel.split(sep).join("/") : file;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * The summary after the findings, as Ruff's: how many were found (and with --fix, fixed and
 * remaining), how many more the fixes of this run's kind would fix, and the unsafe fixes left out
 * without --unsafe-fixes ("hidden fixes"), also when they are the only ones.
 * @param all the findings reported (with --fix: those that remain)
 * @param mode whether this run fixed (`fix`) and with unsafe fixes (`unsafe`)
 */
export function summaryText(
  all: readonly JsonDiagnostic[],
  fixedCount: number,
  mode: { fix: boolean; unsafe: boolean },
): string {
  if (all.length === 0)
    return fixedCount ? `Fixed ${plural(fixedCount, "problem")}; all checks passed!` : "All checks passed!";
  const safe = all.filter((d) => d.fix?.applicability === "safe").length;
  const unsafe = all.filter((d) => d.fix?.applicability === "unsafe").length;
  const fixable = mode.unsafe ? safe + unsafe : safe;
  const hidden = mode.unsafe ? 0 : unsafe;
  const lines = [
    `Found ${plural(all.length, "problem")}${mode.fix ? ` (${fixedCount} fixed, ${all.length} remaining)` : ""}.`,
  ];
  const hiddenText = `${hidden} hidden fix${hidden === 1 ? "" : "es"} can be enabled with the \`--unsafe-fixes\` option`;
  if (fixable)
    lines.push(
      `[*] ${fixable} fixable with the \`--fix${mode.unsafe ? " --unsafe-fixes" : ""}\` option${hidden ? ` (${hiddenText})` : ""}.`,
    );
  else if (hidden) lines.push(`No fixes available (${hiddenText}).`);
  return lines.join("\n");
}

/**
 * One finding of the text output, as Ruff's: `<file>:<row>:<col>: <severity> <code> [*] <message>
 * (fix: <title>)`. `[*]` marks the findings `--fix` fixes with this run's options (the safe fixes;
 * with `--unsafe-fixes` the unsafe ones too), as the summary's `[*] N fixable with the --fix option`
 * says; a fix's title follows the message, `(unsafe fix: ...)` for an unsafe one (it may change what
 * the code does), whose finding has no `[*]` without `--unsafe-fixes` (the summary counts it among
 * the hidden fixes). The output printed `[*: title]` after safe fixes and `[fix: title]` after unsafe
 * ones, unexplained.
 */
export function findingText(d: JsonDiagnostic, mode: { unsafe: boolean }): string {
  const name = plain(displayName(d.filename));
  const where =
    d.cell !== null
      ? `${name}:cell ${d.cell}:${d.location.row}:${d.location.column}`
      : `${name}:${d.location.row}:${d.location.column}`;
  const fixable = d.fix !== null && (d.fix.applicability === "safe" || mode.unsafe);
  const fix = d.fix ? ` (${d.fix.applicability === "safe" ? "fix" : "unsafe fix"}: ${plain(d.fix.message)})` : "";
  return `${where}: ${d.severity} ${d.code} ${fixable ? "[*] " : ""}${plain(d.message.replace(/\s*[\r\n]+\s*/g, " "))}${fix}`;
}

function formatText(
  all: JsonDiagnostic[],
  fixedCount: number,
  mode: { fix: boolean; unsafe: boolean; quiet?: boolean },
): string {
  const lines = all.map((d) => findingText(d, mode));
  if (!mode.quiet) lines.push(summaryText(all, fixedCount, mode));
  return lines.length ? lines.join("\n") + "\n" : "";
}

const SARIF_LEVEL: Record<Severity, string> = { error: "error", warning: "warning", information: "note", hint: "note" };

/**
 * JSON text with the characters JSON.stringify leaves raw (DEL, C1 controls, U+2028/U+2029, the
 * bidirectional formatting characters) written as `\uXXXX`: the same data, but nothing a terminal
 * or log viewer showing the file would act on. They only occur inside strings, where the escape is valid.
 */
export function jsonSafe(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * SARIF 2.1.0, as GitHub code scanning accepts it (paths relative to the working folder, %SRCROOT%);
 * a finding's related places are its `relatedLocations` (SARIF 2.1.0 §3.27.22).
 */
export function formatSarif(all: JsonDiagnostic[]): string {
  const rules = RULES.map((r) => ({
    id: r.meta.code,
    name: r.meta.name,
    shortDescription: { text: r.meta.docs.what.split(". ")[0].replace(/\.$/, "") + "." },
    fullDescription: { text: r.meta.docs.what },
    help: {
      text: r.meta.docs.why,
      markdown: `${r.meta.docs.why}\n\n**Fix**\n\n\`\`\`${r.meta.docs.language ?? "python"}\n${r.meta.docs.fix}\`\`\``,
    },
    ...(ruleUrl(r.meta.code) ? { helpUri: ruleUrl(r.meta.code) } : {}),
    defaultConfiguration: { level: SARIF_LEVEL[r.meta.severity] },
    properties: { tags: ["gpu", "cuda"] },
  }));
  const index = new Map<string, number>(rules.map((r, i) => [r.id, i]));
  const results = all.map((d) => ({
    ruleId: d.code,
    ruleIndex: index.get(d.code) ?? -1,
    level: SARIF_LEVEL[d.severity],
    message: { text: plain(d.message) },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: displayName(d.filename), uriBaseId: "%SRCROOT%" },
          region: {
            startLine: d.location.row,
            startColumn: d.location.column,
            endLine: d.end_location.row,
            endColumn: d.end_location.column,
          },
        },
      },
    ],
    ...(d.related?.length
      ? {
          relatedLocations: d.related.map((r, id) => ({
            id,
            message: { text: plain(r.cell !== null ? `${r.message} (cell ${r.cell})` : r.message) },
            physicalLocation: {
              artifactLocation: { uri: displayName(r.filename), uriBaseId: "%SRCROOT%" },
              region: {
                startLine: r.location.row,
                startColumn: r.location.column,
                endLine: r.end_location.row,
                endColumn: r.end_location.column,
              },
            },
          })),
        }
      : {}),
    ...(d.cell !== null ? { properties: { cell: d.cell } } : {}),
  }));
  return (
    jsonSafe(
      JSON.stringify(
        {
          $schema: "https://json.schemastore.org/sarif-2.1.0.json",
          version: "2.1.0",
          runs: [{ tool: { driver: { name: "gpu-pilot", version: VERSION, rules } }, results }],
        },
        null,
        2,
      ),
    ) + "\n"
  );
}

/** A workflow command's data: controls escaped (common/src/text/controls.ts `escapeControls`, as in every format) (no raw ESC in the log), then GitHub's own %-encoding (no line break can end the command). */
const ghData = (s: string) => plain(s).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const ghProp = (s: string) => ghData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** GitHub Actions workflow commands (`::error file=...,line=...::message`). */
export function formatGithub(all: JsonDiagnostic[]): string {
  return (
    all
      .map((d) => {
        const level = d.severity === "error" ? "error" : d.severity === "warning" ? "warning" : "notice";
        const cell = d.cell !== null ? ` (cell ${d.cell})` : "";
        return `::${level} title=${ghProp(`gpu-pilot (${d.code})`)},file=${ghProp(displayName(d.filename))},line=${d.location.row},col=${d.location.column},endLine=${d.end_location.row},endColumn=${d.end_location.column}::${ghData(`${d.code} ${d.message}${cell}`)}`;
      })
      .join("\n") + (all.length ? "\n" : "")
  );
}

/** The machine facts from --gpus / --inventory. */
function machineOf(a: CliArgs): NonNullable<LintOptions["machine"]> {
  if (a.inventory) {
    // Through the safe reader, as every file the CLI reads: a regular file of at most 1 MiB (a FIFO
    // or a link to /dev/zero is refused without blocking).
    const read = readWorkspaceText(a.inventory, 1024 * 1024);
    if (!("text" in read)) throw new UsageError(`cannot read inventory ${a.inventory}: ${read.reason}`);
    const parsed = parseQueryGpu(read.text);
    if (parsed.rows.length === 0)
      throw new UsageError(
        `inventory ${a.inventory} has no GPU lines: expected \`nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,... --format=csv,noheader,nounits\` output${parsed.problems[0] ? ` (line ${parsed.problems[0].line}: ${parsed.problems[0].reason})` : ""}`,
      );
    return { gpuCount: parsed.rows.length, uuids: parsed.rows.map((g) => g.uuid) };
  }
  if (typeof a.gpus === "number") return { gpuCount: a.gpus, uuids: [] };
  return { gpuCount: null, uuids: [] };
}

/** How long `--gpus auto` waits for nvidia-smi (it answers in well under a second on a working driver), ms. */
const AUTO_GPUS_TIMEOUT_MS = 10_000;

/**
 * The machine of a run: {@link machineOf}, except that `--gpus auto` asks this machine's nvidia-smi
 * (`--query-gpu=...`, found on PATH, at most {@link AUTO_GPUS_TIMEOUT_MS} ms, output capped: the
 * runner of common/src/gpu/nvidiaSmi.ts): its GPUs and their UUIDs, as the editor gets them. Without
 * a working nvidia-smi (a CI runner with no GPU) the machine stays unknown and `note` says why: the
 * machine checks stay off rather than fail the run.
 */
async function resolveMachine(a: CliArgs, note: (s: string) => void): Promise<NonNullable<LintOptions["machine"]>> {
  if (a.gpus !== "auto") return machineOf(a);
  const r = await runNvidiaSmi("nvidia-smi", QUERY_GPU_ARGS, { timeoutMs: AUTO_GPUS_TIMEOUT_MS });
  const rows = r.kind === "ok" ? parseQueryGpu(r.stdout).rows : [];
  if (rows.length) return { gpuCount: rows.length, uuids: rows.map((g) => g.uuid) };
  const why = r.kind === "ok" ? "nvidia-smi listed no GPU" : r.message;
  note(`gpu-pilot: --gpus auto: ${why}; the checks that need the machine's GPUs (GPU017, GPU040, GPU045) stay off\n`);
  return { gpuCount: null, uuids: [] };
}

/** The machine a file is checked for: `--gpus`/`--inventory` when given, else its pyproject's `[tool.gpu-pilot] gpus`/`inventory` (options.ts). */
function machineFor(
  flags: NonNullable<LintOptions["machine"]>,
  options: LintOptions,
): NonNullable<LintOptions["machine"]> {
  return flags.gpuCount !== null ? flags : (options.machine ?? flags);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  stdin: () => Promise<string>;
}

/** One configuration problem as printed on stderr (once per run). */
function configProblemText(p: { file: string; line?: number; message: string }): string {
  return `gpu-pilot: ${plain(p.file)}${p.line ? `:${p.line}` : ""}: ${plain(p.message)} (linting goes on without it)\n`;
}

/**
 * What checking one file gave, as passed back from a worker thread; `cacheKeys` (when the run keeps
 * a result cache): the SHA-1 of the bytes checked and of the options they were checked with.
 */
interface FileResult {
  diagnostics: JsonDiagnostic[];
  applied: number;
  parsed: boolean;
  problems: string[];
  cacheKeys?: { content: string; options: string; deps: string[] };
  diff?: string;
}

/**
 * Lints (and with --fix, fixes in place; with --diff, returns the fixes as a unified diff and writes
 * nothing) one file. The bytes are decoded as the file says
 * (sourceEncoding.ts); a fix is written only when the encoding round-trips, so no byte outside the
 * edits changes. Notes (a fix not written, and why) are returned in `problems`.
 * @throws UsageError when it cannot be read.
 */
function checkPath(
  target: Target,
  args: CliArgs,
  optionsFor: (file: string) => LintOptions,
  cached = false,
): FileResult {
  const file = target.path;
  const kind = manifestKindOf(file);
  const notebook = extname(file) === ".ipynb";
  const options = optionsFor(file);
  // Not read past the size limit: such a file gets GPU000 from its size alone.
  const cap = sourceReadCap(options.maxFileSizeKB, notebook, SOURCE_MAX_BYTES);
  const read = readWorkspaceFile(file, { maxBytes: cap });
  if (!read.ok && read.code === "too-large" && cap < SOURCE_MAX_BYTES) {
    return {
      diagnostics: [
        toJson(file, sizeOverLimit(read.size ?? cap, options.maxFileSizeKB ?? DEFAULT_MAX_FILE_SIZE_KB), null),
      ],
      applied: 0,
      parsed: false,
      problems: [],
    };
  }
  if (!read.ok) throw new UsageError(`cannot read ${file}: ${read.reason}`);
  const decoded = decodeSource(read.bytes, !notebook && !kind);
  const problems: string[] = [];
  const check = (fix: FixMode) =>
    notebook
      ? checkNotebook(file, decoded.text, options, fix)
      : kind
        ? checkManifest(file, decoded.text, kind, options, fix)
        : checkPython(file, decoded.text, options, fix);
  const mode = fixModeOf(args);
  if (mode && decoded.noFix) problems.push(`gpu-pilot: ${file}: not fixed: ${decoded.noFix}\n`);
  let r = check(decoded.noFix === null ? mode : false);
  let diff: string | undefined;
  if (r.fixed !== null && args.diff) {
    if (decoded.encode(r.fixed) === null) {
      problems.push(
        `gpu-pilot: ${file}: not fixed: the fixed text has characters that ${decoded.encoding} cannot hold\n`,
      );
      r = check(false);
    } else diff = unifiedDiff(file, decoded.text, r.fixed);
  } else if (r.fixed !== null) {
    const bytes = decoded.encode(r.fixed);
    if (bytes === null) {
      problems.push(
        `gpu-pilot: ${file}: not fixed: the fixed text has characters that ${decoded.encoding} cannot hold\n`,
      );
      r = check(false);
    } else {
      // Written at its real path (a link inside the tree stays a link); never through a link out of the tree.
      const inTree =
        target.real === target.tree ||
        target.real.startsWith(target.tree.endsWith(sep) ? target.tree : target.tree + sep);
      const w = inTree
        ? replaceFile(target.real, bytes, read.bytes)
        : { ok: false as const, reason: `it is a link to ${target.real}, outside ${target.tree}` };
      if (!w.ok) {
        problems.push(`gpu-pilot: ${file}: not fixed: ${w.reason}\n`);
        r = check(false);
      }
    }
  }
  const cacheKeys = cached
    ? {
        content: sha1(read.bytes),
        options: cacheOptionsKey(options),
        deps: [
          ...((options.project as FileLookup | undefined)?.deps() ?? []),
          ...("deps" in r ? (r as { deps: string[] }).deps : []),
        ],
      }
    : undefined;
  return {
    diagnostics: r.diagnostics,
    applied: r.applied,
    parsed: "parsed" in r ? (r as { parsed: boolean }).parsed : true,
    problems,
    cacheKeys,
    ...(diff !== undefined ? { diff } : {}),
  };
}

/**
 * A unified diff (3 lines of context) from `before` to `after` of `file`, named as in the reports:
 * a file under the working folder relative to it with git's `a/` and `b/` prefixes, so `git apply`
 * and `patch -p1` take it; a file outside it by its absolute path, as Ruff and `diff -u` name it
 * (`a//tmp/x.py` is no path at all). `git apply` refuses an absolute name and GNU patch ignores it
 * at `-p0`; `patch -d / -p1` applies it (README, `--diff`; cliFixes.test.ts runs each command).
 * Controls in the name escaped.
 */
export function unifiedDiff(file: string, before: string, after: string): string {
  const name = plain(displayName(file));
  const outside = isAbsolute(name);
  const patch = createTwoFilesPatch(
    outside ? name : `a/${name}`,
    outside ? name : `b/${name}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  // jsdiff starts with a line of "=" (and "Index:" for equal names): neither is part of a unified diff.
  return patch.replace(/^(Index: .*\n)?=+\n/, "");
}

/** Files per worker thread below which another worker does not pay for its start (see {@link workerCount}). */
const FILES_PER_WORKER = 250;
/** The most worker threads a run starts, whatever the cores (each holds its own heap, 60-100 MiB). */
const MAX_WORKERS = 16;

/**
 * Worker threads for large trees: one per {@link FILES_PER_WORKER} files, at most one per core and
 * {@link MAX_WORKERS}, none under 200 files (a worker costs a bundle load and a parser start, about
 * 0.1 s). Measured on a 16-core machine (BENCHMARKS.md, "The CLI on 16 cores"): 16 copies of
 * python3-torch took 4.56 s with 4 workers, 3.19 s with 8 and 2.79 s with 16. GPU_PILOT_WORKERS
 * overrides (1 turns them off).
 */
export function workerCount(files: number, cores = availableParallelism()): number {
  const forced = Number(process.env.GPU_PILOT_WORKERS);
  if (Number.isInteger(forced) && forced >= 1) return Math.min(forced, Math.max(1, files));
  if (files < 200) return 1;
  return Math.max(1, Math.min(cores, MAX_WORKERS, Math.ceil(files / FILES_PER_WORKER)));
}

/** A share of one project's modules for a worker to scan for startup-variable writers (python/project.ts `scanWriters`). */
interface ScanShare {
  root: string;
  files: string[];
}

/** The options a project's writers' scan runs with: its root's (as each worker resolves them). */
const scanOptionsOf = (optionsFor: (file: string) => LintOptions, root: string) =>
  lookupOptions(optionsFor(join(root, "__init__.py")));

/**
 * The writers' scan planned for `n` workers: the project roots of the Python files among `files`
 * (manifests have none); each root's modules that the result cache holds a scan of (`memo`) give
 * their names here, the others are dealt round-robin into `n` shares for the workers to scan
 * before any of them checks a file, so each module is read (and, when it names a startup variable,
 * parsed) at most once per run instead of once per worker (on python3-torch with 2 workers that
 * scan was 0.69 s of CPU each). `records`: what keeps a worker's answer for a module in the cache.
 */
function scanPlan(
  files: readonly Target[],
  n: number,
  optionsFor: (file: string) => LintOptions,
  memo: WriterScanMemo | undefined,
): {
  shares: ScanShare[][];
  names: Map<string, Set<string>>;
  records: Map<string, (found: ModuleWriterMap) => void>;
  kept: number;
} {
  const index = new ProjectIndex();
  const roots = new Set<string>();
  for (const f of files) if (!manifestKindOf(f.path)) roots.add(index.rootOf(resolve(f.path)));
  const shares: ScanShare[][] = Array.from({ length: n }, () => []);
  const names = new Map<string, Set<string>>();
  const records = new Map<string, (found: ModuleWriterMap) => void>();
  let keptCount = 0;
  for (const root of roots) {
    const options = scanOptionsOf(optionsFor, root);
    const known = new Set<string>();
    const toScan: string[] = [];
    for (const m of index.modulesUnder(root)) {
      const kept = memo?.lookup(m, options);
      if (kept?.hit) {
        keptCount++;
        for (const name of kept.hit.keys()) known.add(name);
      } else {
        toScan.push(m);
        if (kept?.record) records.set(m, kept.record);
      }
    }
    names.set(root, known);
    shares.forEach((share, k) => share.push({ root, files: toScan.filter((_, i) => i % n === k) }));
  }
  return { shares, names, records, kept: keptCount };
}

/** A message from a worker of {@link checkInWorkers}. */
interface WorkerReply {
  ready?: true;
  /** By root: each scanned module's writers (cliCache.ts ModuleWriters). */
  scanned?: Array<{ root: string; files: Array<[string, ModuleWriters]> }>;
  start?: number;
  results?: FileResult[];
  error?: string;
  usage?: boolean;
}

/**
 * Checks `files` in `n` worker threads; results in file order. First each worker scans its share
 * of the projects' modules ({@link scanPlan}) and every worker is handed the union; then the
 * workers pull batches of files from a shared queue.
 */
function checkInWorkers(
  files: Target[],
  argv: string[],
  machine: NonNullable<LintOptions["machine"]>,
  n: number,
  cached: boolean,
  optionsFor: (file: string) => LintOptions,
  memo: WriterScanMemo | undefined,
  counted: (scan: ScanCounts) => void,
): Promise<FileResult[]> {
  const results: FileResult[] = new Array(files.length);
  const { shares, names, records, kept } = scanPlan(files, n, optionsFor, memo);
  counted({ kept, read: shares.flat().reduce((sum, s) => sum + s.files.length, 0) });
  let next = 0,
    scanning = n;
  const BATCH = 8;
  return new Promise((resolvePromise, reject) => {
    let live = n;
    let failed = false;
    const workers: Worker[] = [];
    const feed = (worker: Worker) => {
      if (next >= files.length) {
        worker.postMessage({ done: true });
        return;
      }
      const start = next;
      next = Math.min(files.length, next + BATCH);
      worker.postMessage({ start, files: files.slice(start, next) });
    };
    const fail = (e: Error, worker?: Worker) => {
      if (!failed) {
        failed = true;
        reject(e);
      }
      void worker?.terminate();
    };
    for (let i = 0; i < n; i++) {
      const worker = new Worker(__filename, { workerData: { gpuPilotCliWorker: true, argv, cached, machine } });
      workers.push(worker);
      worker.on("message", (m: WorkerReply) => {
        if (m.error !== undefined) return fail(m.usage ? new UsageError(m.error) : new Error(m.error), worker);
        if (m.ready) return worker.postMessage({ scan: shares[i] });
        if (m.scanned) {
          for (const r of m.scanned) {
            const kept = names.get(r.root) ?? new Set<string>();
            for (const [file, writers] of r.files) {
              const found = writersMapOf(writers);
              records.get(file)?.(found);
              for (const name of found.keys()) kept.add(name);
            }
            names.set(r.root, kept);
          }
          if (--scanning > 0) return;
          const seed = [...names].map(([root, set]) => ({ root, names: [...set] }));
          for (const w of workers) {
            w.postMessage({ seed });
            feed(w);
          }
          return;
        }
        if (m.results && m.start !== undefined)
          m.results.forEach((r, k) => {
            results[m.start! + k] = r;
          });
        feed(worker);
      });
      worker.on("error", (e) => fail(e));
      worker.on("exit", () => {
        if (--live === 0 && !failed) resolvePromise(results);
      });
    }
  });
}

/** A message to a worker of {@link checkInWorkers}. */
interface WorkerOrder {
  done?: true;
  scan?: ScanShare[];
  seed?: Array<{ root: string; names: string[] }>;
  start?: number;
  files?: Target[];
}

/**
 * The result cache's key for a file's options (cliCache.ts optionsKey): the options, and for a
 * Python file or notebook the names of its project's functions that write a startup variable
 * first (ProjectLookup.writerNames). GPU001's prefilter skips a file that names none of them, and
 * such a file records no dependency on the module that defines one: a module that starts writing
 * would otherwise leave its callers' kept "no finding" in place (a fresh user's repro: `setup()`
 * in pkg/envsetup.py made to set CUDA_VISIBLE_DEVICES, train.py calling it after
 * `torch.cuda.is_available()` still "All checks passed!" from the cache). Asking the names runs
 * the project's writers' scan, which the cache keeps per module (only changed modules are read).
 */
function cacheOptionsKey(options: LintOptions): string {
  const writers = options.project?.writerNames?.();
  return optionsKey(writers ? { ...options, projectWriters: [...writers].sort() } : options);
}

/** A module's writers as the cache and the workers' messages carry them (`[name, variable, line]`). */
const writersListOf = (found: ModuleWriterMap): ModuleWriters =>
  [...found].map(([name, w]): [string, string, number] => [name, w.variable, w.line]);

/** {@link writersListOf}'s inverse. */
const writersMapOf = (list: ModuleWriters): ModuleWriterMap =>
  new Map(list.map(([name, variable, line]) => [name, { variable, line }]));

/**
 * The result cache as the project index's memo of the writers' scan (python/project.ts
 * WriterScanMemo): a module unchanged since the run that scanned it (its stamp, cliCache.ts
 * `writersOf`) is not read again, so a pre-commit run over a few files of a large project does not
 * read the whole project. `cache()`: the run's cache, null where there is none (no memo then).
 */
function writerMemoOf(cache: () => ResultCache | null): WriterScanMemo {
  return {
    lookup(file, options) {
      const c = cache();
      if (!c) return { record: () => {} };
      const key = optionsKey(options);
      const nowMs = Date.now();
      const stamp = stampOf(file);
      const kept = c.writersOf(file, key, stamp);
      if (kept) return { hit: writersMapOf(kept) };
      return { record: (found) => c.recordWriters(file, key, stamp, nowMs, writersListOf(found)) };
    },
  };
}

/** The worker side of {@link checkInWorkers}. */
async function runWorker(argv: string[], cached: boolean, machine: NonNullable<LintOptions["machine"]>): Promise<void> {
  const args = parseArgs(argv);
  await initEngine();
  const resolveOptions = optionsResolver({}, "filesystemFirst", args.flags); // once per folder
  const project = new ProjectIndex();
  parentPort!.postMessage({ ready: true });
  parentPort!.on("message", (m: WorkerOrder) => {
    if (m.done) {
      parentPort!.close();
      return;
    }
    try {
      if (m.scan) {
        // The root's configuration for all its modules (resolving each module's folder cost more
        // than the scan's parses on python3-torch), as writerNames takes the asking file's.
        const scanned = m.scan.map((s) => {
          const options = lookupOptions(resolveOptions(join(s.root, "__init__.py")).options);
          const found = project.scanWriters(s.files, () => options);
          return {
            root: s.root,
            files: [...found].map(([file, w]): [string, ModuleWriters] => [file, writersListOf(w)]),
          };
        });
        parentPort!.postMessage({ scanned });
        return;
      }
      for (const s of m.seed ?? []) project.seedWriterNames(s.root, s.names);
      if (!m.files) return;
      const out: FileResult[] = [];
      for (const f of m.files) {
        const problems: string[] = [];
        const optionsFor = (file: string): LintOptions => {
          const r = resolveOptions(file);
          problems.push(...r.problems.map(configProblemText));
          return {
            ...r.options,
            machine: machineFor(machine, r.options),
            maxFileSizeKB: args.maxFileSizeKB,
            ...(args.noPrefilter ? { noPrefilter: true } : {}),
            ...projectOf(project, file, r.options),
          };
        };
        const r = checkPath(f, args, optionsFor, cached);
        out.push({ ...r, problems: [...problems, ...r.problems] });
      }
      parentPort!.postMessage({ start: m.start, results: out });
    } catch (e) {
      parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e), usage: e instanceof UsageError });
    }
  });
}

/** `--statistics`: diagnostics per code, how many files the prefilter let through and how many came from the result cache, on stderr. */
function statistics(
  all: JsonDiagnostic[],
  files: number,
  parsed: number,
  fromCache: number,
  workers: number,
  scan: ScanCounts,
): string {
  const by = new Map<string, number>();
  for (const d of all) by.set(d.code, (by.get(d.code) ?? 0) + 1);
  const rows = [...by.entries()].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${String(n).padStart(6)}  ${c}`);
  return `${rows.join("\n")}${rows.length ? "\n" : ""}gpu-pilot: parsed ${parsed} of ${files} files; skipped ${files - parsed - fromCache} of ${files} files without parsing (no enabled rule can fire on them); ${fromCache} of ${files} files from the cache (unchanged since an earlier run); ${workers} worker${workers === 1 ? "" : "s"}${scan.read + scan.kept ? `; the scan for functions that write a startup variable read ${scan.read} project module${scan.read === 1 ? "" : "s"} and took ${scan.kept} from the cache` : ""}\n`;
}

/** How many project modules the writers' scan read, and how many it took from the result cache (`--statistics`). */
interface ScanCounts {
  read: number;
  kept: number;
}

/**
 * The run's result cache (cliCache.ts), or null: with --no-cache, --fix (files are rewritten) or
 * when the running code is not a bundle (cliCache.ts `buildIdOf`).
 */
function openCache(args: CliArgs, note: (s: string) => void): ResultCache | null {
  if (args.noCache || args.fix || args.diff) return null;
  const build = buildIdOf(__filename);
  return build ? new ResultCache(args.cacheDir ?? cacheDirOf(), process.cwd(), build, note) : null;
}

/** The folders among `paths` (absolute): walked in full, so a cached file under one that was not found is gone. */
function walkedFolders(paths: readonly string[]): string[] {
  return paths
    .map((p) => resolve(p))
    .filter((p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    });
}

/**
 * Checks `files` (in worker threads when there are many: {@link workerCount}), taking those
 * unchanged since an earlier run from `cache` and recording the others in it; results in file order.
 * @returns the results, how many files were parsed and taken from the cache, and the workers used (0: none checked).
 * @throws UsageError when a file cannot be read.
 */
async function checkFiles(
  files: Target[],
  args: CliArgs,
  argv: string[],
  machine: NonNullable<LintOptions["machine"]>,
  optionsFor: (file: string) => LintOptions,
  cache: ResultCache | null,
  memo?: WriterScanMemo,
): Promise<{ results: FileResult[]; parsed: number; fromCache: number; workers: number; scan?: ScanCounts }> {
  const results: FileResult[] = new Array(files.length);
  // Each file's stamp is taken before anything reads it (cliCache.ts `lookup`, `record`).
  const nowMs = Date.now();
  const stamps: Array<FileStamp | null> = cache ? files.map((f) => stampOf(f.path)) : [];
  const misses: number[] = [];
  // A kept result's key holds its project's writer names (cacheOptionsKey): asking them may parse
  // a module changed since the last run, so the parser is loaded here first when anything is kept.
  if (cache && files.some((f) => cache.has(f.path))) await initEngine();
  files.forEach((f, i) => {
    const kept = cache?.has(f.path)
      ? cache.lookup(f.path, stamps[i], cacheOptionsKey(optionsFor(f.path)), nowMs)
      : null;
    if (kept?.hit) results[i] = { ...(kept.result as FileResult), problems: [] };
    else misses.push(i);
  });
  const toCheck = misses.map((i) => files[i]);
  const workers = workerCount(toCheck.length);
  // The parser is loaded where the files are checked: in each worker, or here (not in both).
  if (workers === 1 && toCheck.length > 0) await initEngine();
  let scan: ScanCounts | undefined;
  const checked =
    workers > 1
      ? await checkInWorkers(toCheck, argv, machine, workers, !!cache, optionsFor, memo, (c) => (scan = c))
      : toCheck.map((f) => checkPath(f, args, optionsFor, !!cache));
  let parsed = 0;
  checked.forEach((r, k) => {
    const i = misses[k];
    parsed += r.parsed ? 1 : 0;
    results[i] = r;
    if (cache && r.cacheKeys)
      cache.record(
        files[i].path,
        stamps[i],
        nowMs,
        r.cacheKeys.options,
        r.cacheKeys.content,
        { diagnostics: r.diagnostics, applied: r.applied, parsed: r.parsed } satisfies CachedResult,
        r.cacheKeys.deps,
      );
  });
  if (cache) {
    cache.forgetMissingUnder(walkedFolders(args.paths));
    cache.save();
  }
  return { results, parsed, fromCache: files.length - misses.length, workers: toCheck.length ? workers : 0, scan };
}

/** `--diff`'s line on stderr: how many problems the diff fixes, and the unsafe fixes it left out. */
function diffSummary(
  fixedCount: number,
  remaining: readonly JsonDiagnostic[],
  args: Pick<CliArgs, "unsafeFixes">,
): string {
  const hidden = args.unsafeFixes ? 0 : remaining.filter((d) => d.fix?.applicability === "unsafe").length;
  const more = hidden
    ? ` (${hidden} hidden fix${hidden === 1 ? "" : "es"} can be enabled with the \`--unsafe-fixes\` option)`
    : "";
  return `${fixedCount ? `Would fix ${plural(fixedCount, "problem")}` : "No fixes available"}${more}.\n`;
}

/** Runs the CLI; returns the exit code. */
export async function main(
  argv: string[],
  given: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), stdin: readStdin },
): Promise<number> {
  if (argv[0] === "mcp") return mcp(argv.slice(1), given);
  if (argv[0] === "kernel") return kernel(argv.slice(1), given);
  if (argv[0] === "rule") return ruleMain(argv.slice(1), given);
  let io = given;
  try {
    const args = parseArgs(argv);
    // -s/--silent: nothing is written but a fixed stdin's text (below) and usage errors; the exit code tells.
    if (args.quiet === "silent") io = { ...given, out: () => {}, err: () => {} };
    const machine = await resolveMachine(args, io.err);
    let all: JsonDiagnostic[] = [];
    let baseline: BaselineOutcome | null = null;
    const problemsShown = new Set<string>();
    let fixedCount = 0;
    const diffs: string[] = [];
    const textMode = { fix: args.fix, unsafe: args.unsafeFixes, quiet: args.quiet !== "" };
    const resolveOptions = optionsResolver({}, "filesystemFirst", args.flags); // once per folder
    let cache: ResultCache | null = null;
    const memo = writerMemoOf(() => cache);
    const project = new ProjectIndex(diskReader, memo);
    const optionsFor = (file: string | null): LintOptions => {
      const { options, problems } = resolveOptions(file);
      for (const p of problems.map(configProblemText)) {
        if (!problemsShown.has(p)) {
          problemsShown.add(p);
          io.err(p);
        }
      }
      return {
        ...options,
        machine: machineFor(machine, options),
        maxFileSizeKB: args.maxFileSizeKB,
        ...(args.noPrefilter ? { noPrefilter: true } : {}),
        ...(file ? projectOf(project, file, options) : {}),
      };
    };
    const stdinMode =
      args.stdinFilename !== null && (args.paths.length === 0 || (args.paths.length === 1 && args.paths[0] === "-"));
    if (stdinMode) {
      const name = resolve(args.stdinFilename!);
      await initEngine();
      let text = await io.stdin();
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      // --force-exclude with an excluded --stdin-filename: nothing to report (with --fix, the text as it came).
      if (args.forceExclude && exclusionOf(args, resolveOptions).why(name, false, dirname(name))) {
        if (args.fix) given.out(text);
        return 0;
      }
      const kind = manifestKindOf(name);
      const mode = fixModeOf(args);
      const r = name.endsWith(".ipynb")
        ? checkNotebook(name, text, optionsFor(name), mode)
        : kind
          ? checkManifest(name, text, kind, optionsFor(name), mode)
          : checkPython(name, text, optionsFor(name), mode);
      all.push(...r.diagnostics);
      fixedCount += r.applied;
      if (args.diff) {
        if (r.fixed !== null) io.out(unifiedDiff(name, text, r.fixed));
        if (!textMode.quiet) io.err(diffSummary(fixedCount, all, args));
        return fixedCount > 0 ? 1 : 0;
      }
      const checked = r.fixed ?? text;
      baseline = baselineStep(all, [name], args, resolveOptions, (f) => (f === name ? checked : null));
      if (baseline) all = baseline.shown;
      if (args.fix) {
        given.out(checked);
        if (all.length) io.err(formatText(all, fixedCount, textMode));
        if (baseline && !textMode.quiet) io.err(baselineSummary(baseline, (p) => plain(displayName(p))));
        return exitCodeOf(all, args);
      }
    } else {
      // A pyproject.toml named on the command line (pre-commit passes it when it is staged) is
      // configuration, not Python: its [tool.gpu-pilot] table is read (problems on stderr), not linted.
      const isConfig = (p: string) => basename(p) === PYPROJECT && isFile(p);
      for (const c of args.paths.filter(isConfig)) optionsFor(resolve(c));
      const files = collectFiles(
        args.paths.filter((p) => !isConfig(p)),
        textMode.quiet ? () => {} : io.err,
        exclusionOf(args, resolveOptions),
      );
      // As Ruff's "No Python files found under the given path(s)": a run that checked nothing says so.
      if (files.length === 0 && !textMode.quiet)
        io.err(
          "gpu-pilot: no file to check under the given paths (none of the kinds GPU Pilot reads, or every one excluded)\n",
        );
      cache = openCache(args, io.err);
      const run = await checkFiles(files, args, argv, machine, optionsFor, cache, memo);
      for (const r of run.results) {
        fixedCount += r.applied;
        if (r.diff) diffs.push(r.diff);
        // Results from the cache carry the url of the run that made them.
        for (const d of r.diagnostics) d.url = ruleUrl(d.code);
        all.push(...r.diagnostics);
        for (const p of r.problems) {
          if (!problemsShown.has(p)) {
            problemsShown.add(p);
            io.err(p);
          }
        }
      }
      if (!args.diff) {
        baseline = baselineStep(
          all,
          files.map((f) => f.path),
          args,
          resolveOptions,
          textOnDisk,
        );
        if (baseline) all = baseline.shown;
      }
      if (args.statistics)
        io.err(statistics(all, files.length, run.parsed, run.fromCache, run.workers, run.scan ?? project.scanCounts));
    }
    if (args.diff) {
      // Ruff's --diff: the diff on stdout, what it would fix on stderr; exit 1 when there is a fix.
      io.out(diffs.join(""));
      if (!textMode.quiet) io.err(diffSummary(fixedCount, all, args));
      return fixedCount > 0 ? 1 : 0;
    }
    const shown = all;
    const render = {
      text: () => formatText(shown, fixedCount, textMode),
      json: () => jsonSafe(JSON.stringify(shown, null, 2)) + "\n",
      sarif: () => formatSarif(shown),
      github: () => formatGithub(shown),
    }[args.format];
    io.out(render());
    // The baseline's line: after the text report's summary, on stderr for the machine-read formats.
    if (baseline && !textMode.quiet)
      (args.format === "text" ? io.out : io.err)(baselineSummary(baseline, (p) => plain(displayName(p))));
    return exitCodeOf(all, args);
  } catch (e) {
    if (e instanceof UsageError) {
      if (e.message === USAGE || e.message === VERSION) {
        given.out(e.message + "\n");
        return 0;
      }
      given.err(`gpu-pilot: ${plain(e.message)}\n${e.withUsage ? `${USAGE}\n` : ""}`);
      return 2;
    }
    given.err(`gpu-pilot: internal error: ${e instanceof Error ? e.stack : String(e)}\n`);
    return 2;
  }
}

/**
 * What the run's folder walk leaves out: each pyproject.toml's `exclude`/`extend-exclude` (or the
 * defaults), `--extend-exclude` (patterns relative to the working folder), and, unless
 * `--no-respect-gitignore` or the pyproject's `respect-gitignore = false`, what `.gitignore` files
 * ignore (exclude.ts).
 */
function exclusionOf(
  args: CliArgs,
  resolveOptions: Pick<OptionsResolver, "excludedBy" | "respectsGitignore">,
): Exclusion {
  const gitignore = new GitignoreFilter();
  const cwd = process.cwd();
  // --extend-exclude's patterns are relative to the working folder; for a tree outside it, to the
  // folder named on the command line (a pattern without a `/` matches at any depth either way).
  const extraFor = new Map<string, ExcludeSettings>();
  const extra = (path: string, base: string): ExcludeSettings => {
    const at = path.startsWith(cwd + sep) ? cwd : base;
    let s = extraFor.get(at);
    if (!s) extraFor.set(at, (s = { file: join(at, PYPROJECT), exclude: [], extendExclude: args.extendExclude }));
    return s;
  };
  return {
    force: args.forceExclude,
    why: (path, isDir, base) =>
      resolveOptions.excludedBy(path, isDir, base) ??
      (args.extendExclude.length ? excludedBy(extra(path, base), path, isDir) : null) ??
      ((args.respectGitignore ?? resolveOptions.respectsGitignore(path)) ? gitignore.ignoredBy(path, isDir) : null),
  };
}

/**
 * The run's baseline step (cliBaseline.ts), or null when no baseline applies: `--write-baseline`,
 * `--baseline`, or a checked file's pyproject naming one (`[tool.gpu-pilot] baseline`).
 * @param textOf the text checked for a file (for the findings' fingerprints).
 * @throws UsageError when a baseline cannot be read, is not valid, or cannot be written.
 */
function baselineStep(
  all: readonly JsonDiagnostic[],
  checked: readonly string[],
  args: CliArgs,
  resolveOptions: Pick<OptionsResolver, "baselineOf">,
  textOf: (file: string) => string | null,
): BaselineOutcome | null {
  const flag = args.baseline !== null ? resolve(args.baseline) : null;
  const write = args.writeBaseline !== null ? resolve(args.writeBaseline) : null;
  const fromPyproject = (file: string): string | null => resolveOptions.baselineOf(file);
  const baselineOf = (file: string): string | null => flag ?? fromPyproject(file);
  if (!write && !flag && !checked.some((f) => fromPyproject(f) !== null)) return null;
  try {
    return applyBaselines(all, checked, { baselineOf, write, textOf });
  } catch (e) {
    if (e instanceof BaselineError) throw new UsageError(e.message);
    throw e;
  }
}

/** `gpu-pilot mcp`: the MCP server on stdio until stdin closes (0), or a usage error (2) (mcp/command.ts, which dist/server.js runs too). Loaded only for this command. */
async function mcp(argv: string[], io: Io): Promise<number> {
  const { mcpMain } = await import("./mcp/command");
  return mcpMain(argv, io, VERSION, mcpCheckFile);
}

/** `gpu-pilot kernel ...` (kernel/cli.ts): loaded only for this command. */
async function kernel(argv: string[], io: Io): Promise<number> {
  const { kernelMain } = await import("./kernel/cli");
  return kernelMain(argv, io);
}

if (!isMainThread && (workerData as { gpuPilotCliWorker?: boolean } | null)?.gpuPilotCliWorker) {
  const data = workerData as { argv: string[]; cached: boolean; machine: NonNullable<LintOptions["machine"]> };
  void runWorker(data.argv, data.cached, data.machine);
} else if (require.main === module) {
  runAsCommand(process.argv.slice(2));
}

/**
 * Turns V8's optimising compiler (TurboFan) off for the rest of a one-shot run (`check`, `rule`;
 * not the long-lived `mcp` server nor `kernel`): V8's flags are the process's, so the CLI's worker
 * threads run without it too, and the interpreter and the mid-tier compiler (Maglev) run the code.
 * A cold check compiles about 65 hot functions with TurboFan (on 2 cores, a thread beside the run)
 * and does not run long enough to earn that back: python3-torch, one thread, 0.93 x the CPU time
 * (4 copies: 0.93 x; 2 workers: 0.92 x), the same output (BENCHMARKS.md, "The CLI's cold run:
 * V8's tiers"). WebAssembly's own tiers (the parser) are left alone: without its tier-up the parse
 * cost as much as the compile saved. Set before any of the engine's code is hot; a Node.js that
 * refuses the flag runs as before.
 */
function withoutOptimisingCompiler(): void {
  try {
    setFlagsFromString("--no-turbofan");
  } catch {
    // An embedder that froze V8's flags: TurboFan stays on.
  }
}

/**
 * Runs the CLI as the process's command: `node dist/cli.js ARGS`, or scripts/gpu-pilot.mjs (the
 * package's `gpu-pilot` bin), which loads this bundle into its own process and calls this. Sets
 * `process.exitCode` to {@link main}'s exit code when it is done (0 clean, 1 findings, 2 usage or
 * internal error); the process ends when nothing is left to run.
 * @param argv the arguments after the command name (`["check", "train.py"]`).
 */
export function runAsCommand(argv: string[]): void {
  // `gpu-pilot check ... | head`: a reader that closes the pipe early ends the run quietly.
  exitQuietlyOnClosedPipe();
  if (argv[0] !== "mcp" && argv[0] !== "kernel") withoutOptimisingCompiler();
  main(argv).then((code) => {
    process.exitCode = code;
  });
}
