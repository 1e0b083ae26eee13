/**
 * Project configuration: `[tool.gpu-pilot]` in the nearest pyproject.toml (parsed with smol-toml),
 * and the torch version the project pins (requirements*.txt, pyproject dependencies,
 * environment.yml), which decides whether `torch.cuda.device_count()` initialises CUDA
 * (ground-truth.md: torch < 2.4 cached it before initialisation).
 * Node's fs only; no `vscode`.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { satisfies } from "@renovatebot/pep440";
import { minimatch } from "minimatch";
import type { Severity } from "./types";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";
import { RULES } from "./rules/index";
import { MAX_PATTERNS } from "./exclude";
import { projectRequirements } from "./requirements";

/** The `[tool.gpu-pilot]` table, validated. Keys are kebab-case as in pyproject. */
export interface ProjectConfig {
  /** The pyproject.toml it came from. */
  file: string;
  select?: string[];
  extendSelect?: string[];
  ignore?: string[];
  /** Glob (relative to the pyproject folder) → codes to ignore in matching files. */
  perFileIgnores?: Record<string, string[]>;
  severity?: Record<string, Severity>;
  eagerInitModules?: string[];
  /** `preview = true`: also run the preview rules and checks (below the default set's precision bar). */
  preview?: boolean;
  /**
   * `target-torch = "2.11"`: the torch version the code runs on (MAJOR.MINOR[.PATCH]); decides the
   * facts that differ between versions (torch < 2.4: `device_count()` initialises CUDA) and wins
   * over the pin found in the project's dependency files.
   */
  targetTorch?: string;
  /**
   * `gpus = N`: the machine the code is checked for has N GPUs (0..1024), for GPU017 and GPU040 in
   * pre-commit and CI, where no nvidia-smi runs. The CLI's `--gpus`/`--inventory` win over it; in
   * the editor, the live inventory from nvidia-smi wins.
   */
  gpus?: number;
  /**
   * `inventory = "path/to/gpus.csv"`: an `nvidia-smi --query-gpu=index,uuid,... --format=csv,noheader`
   * file, relative to the pyproject.toml's folder, read through workspaceFile.ts; absolute path
   * here. Wins over `gpus` when both are set (it also gives the UUIDs).
   */
  inventory?: string;
  /**
   * `baseline = "gpu-pilot-baseline.json"`: the baseline file (engine/baseline.ts), relative to the
   * pyproject.toml's folder; absolute path here. Its findings are not reported by the CLI and show
   * as hints in the editor.
   */
  baseline?: string;
  /**
   * `exclude = ["third_party", "gen/*.py"]`: gitignore-style patterns (relative to the pyproject.toml's
   * folder) of files and folders not to check; replaces exclude.ts `DEFAULT_EXCLUDE`, as Ruff's `exclude`.
   */
  exclude?: string[];
  /** `extend-exclude = [...]`: patterns excluded in addition to `exclude` (or the defaults), as Ruff's. */
  extendExclude?: string[];
  /** `respect-gitignore = false`: the CLI's folder walk also checks files the work tree's `.gitignore` files ignore (default true, as Ruff's). */
  respectGitignore?: boolean;
}

/** The largest `gpus` accepted (a bound, as the CLI's `--gpus`). */
export const MAX_CONFIG_GPUS = 1024;

/** A target version as written in `target-torch`: MAJOR.MINOR or MAJOR.MINOR.PATCH. */
export const TARGET_VERSION = /^\d+\.\d+(\.\d+)?$/;

/**
 * Whether a target version (`"2.3"`, `"2.11.0"`) is below `major.minor`. Throws on a string that is
 * not {@link TARGET_VERSION} (callers validate first).
 */
export function versionBelow(version: string, major: number, minor: number): boolean {
  if (!TARGET_VERSION.test(version)) throw new Error(`not a version: ${version}`);
  const [a, b] = version.split(".").map(Number);
  return a < major || (a === major && b < minor);
}

/** A configuration problem: shown once, pointing at the file and line; linting goes on with defaults. */
export interface ConfigProblem {
  file: string;
  /** 1-based line, when known. */
  line?: number;
  message: string;
}

const CODE = /^GPU\d{0,3}$/;
/** The registered rule codes (GPU001..GPU020 of the contract, then the project's own: GPU026 and up). */
const KNOWN_CODES: ReadonlySet<string> = new Set<string>(RULES.map((r) => r.meta.code));
const SEVERITIES = new Set(["error", "warning", "information", "hint"]);

/**
 * The nearest pyproject.toml at or above `dir`, or null. The walk stops at the repository root (a
 * folder holding `.git`, a folder or a worktree's file) and at any of `roots` (the workspace
 * folders), after looking there: a pyproject.toml above them belongs to no project of the user's
 * (on a shared host /tmp or /home may hold anyone's). When `dir` is under no root, the walk goes
 * on up, but a pyproject.toml owned by another user (not the current one, not root) is passed over.
 * `exists`: the existence test of a path (a run over files that do not change may pass a memoised one).
 */
export function findPyproject(
  dir: string,
  roots: readonly string[] = [],
  exists: (path: string) => boolean = existsSync,
): string | null {
  const stops = new Set(roots.map((r) => resolve(r)));
  let d = resolve(dir);
  const found: string[] = [];
  for (;;) {
    const p = join(d, "pyproject.toml");
    if (exists(p)) found.push(p);
    if (stops.has(d) || exists(join(d, ".git"))) return found[0] ?? null;
    const up = dirname(d);
    if (up === d) return found.find(ownedByUs) ?? null;
    d = up;
  }
}

/** True when `file` belongs to the current user or root (always true where uids do not exist). */
function ownedByUs(file: string): boolean {
  if (typeof process.getuid !== "function") return true;
  try {
    const { uid } = statSync(file);
    return uid === process.getuid() || uid === 0;
  } catch {
    return false;
  }
}

/** How many configuration problems of one file are listed; the rest are counted in one closing problem. */
export const MAX_CONFIG_PROBLEMS = 20;

/** Longest key or value quoted in a problem's message, in UTF-16 code units; longer ones end in "…". */
const QUOTE_MAX = 80;

/** `s` cut to {@link QUOTE_MAX} code units (a committed key may be a megabyte long). */
function short(s: string): string {
  return s.length <= QUOTE_MAX ? s : `${s.slice(0, QUOTE_MAX)}…`;
}

/** `items` joined with ", ", at most `max` of them, then "and N more". */
function listed(items: readonly string[], max = 10): string {
  const shown = items.slice(0, max).map(short).join(", ");
  return items.length > max ? `${shown} and ${(items.length - max).toLocaleString("en-US")} more` : shown;
}

/**
 * The problems of one configuration file, listed up to {@link MAX_CONFIG_PROBLEMS}, counted after
 * that. The line of a listed problem is that of the first occurrence of its key: the text is
 * searched only for listed problems, so a file with 50,000 bad keys costs one pass, not one per key
 * (a 30,000-key severity table froze the server for 57 s).
 */
class ProblemList {
  private readonly list: ConfigProblem[] = [];
  private more = 0;
  private starts: number[] | null = null;
  constructor(
    private readonly file: string,
    private readonly text: string,
  ) {}
  /** Records a problem about `needle` (a key; its line is looked up only if the problem is listed). */
  add(needle: string, message: string): void {
    if (this.list.length >= MAX_CONFIG_PROBLEMS) {
      this.more++;
      return;
    }
    this.list.push({ file: this.file, line: this.lineOf(needle), message });
  }
  /** The listed problems, then one "and N more" problem when some were only counted. */
  done(): ConfigProblem[] {
    if (this.more === 0) return this.list;
    return [
      ...this.list,
      {
        file: this.file,
        message: `[tool.gpu-pilot] and ${this.more.toLocaleString("en-US")} more problem${this.more === 1 ? "" : "s"} (only the first ${MAX_CONFIG_PROBLEMS} are listed)`,
      },
    ];
  }
  /** 1-based line of the first occurrence of `needle`, or undefined: a binary search in the line starts (computed once). */
  private lineOf(needle: string): number | undefined {
    const i = this.text.indexOf(needle);
    if (i < 0) return undefined;
    if (!this.starts) {
      this.starts = [0];
      for (let at = this.text.indexOf("\n"); at >= 0; at = this.text.indexOf("\n", at + 1)) this.starts.push(at + 1);
    }
    let lo = 0,
      hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

/**
 * Reads `[tool.gpu-pilot]` from a pyproject.toml. Never throws: a TOML error or a bad value becomes
 * a problem (with its line) and the offending key is left out. At most {@link MAX_CONFIG_PROBLEMS}
 * problems are listed, then one more counts the rest; keys quoted in messages are cut to 80 characters.
 */
export function loadProjectConfig(file: string): { config: ProjectConfig | null; problems: ConfigProblem[] } {
  const read = readWorkspaceText(file);
  if (!("text" in read)) return { config: null, problems: [{ file, message: `not read: ${read.reason}` }] };
  const text = read.text;
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError)
      return {
        config: null,
        problems: [{ file, line: e.line, message: `TOML error: ${short(e.message.split("\n")[0])}` }],
      };
    return { config: null, problems: [{ file, message: `TOML error: ${short((e as Error).message)}` }] };
  }
  const table = (doc.tool as Record<string, unknown> | undefined)?.["gpu-pilot"] as Record<string, unknown> | undefined;
  if (!table) return { config: null, problems: [] };
  const problems = new ProblemList(file, text);
  const config: ProjectConfig = { file };
  for (const [key, value] of Object.entries(table)) setConfigKey(config, problems, file, key, value);
  return { config, problems: problems.done() };
}

/** The rule codes of `v` (the list at `key`), unknown ones reported and left out; undefined if not a list. */
function ruleCodes(problems: ProblemList, key: string, v: unknown): string[] | undefined {
  if (!Array.isArray(v) || v.some((c) => typeof c !== "string")) {
    problems.add(key, `[tool.gpu-pilot] ${short(key)} must be a list of rule codes`);
    return undefined;
  }
  const bad = (v as string[]).filter((c) => !CODE.test(c) || (c.length === 6 && !KNOWN_CODES.has(c)));
  if (bad.length) {
    const badSet = new Set(bad);
    problems.add(
      key,
      `[tool.gpu-pilot] ${short(key)}: unknown rule code${bad.length > 1 ? "s" : ""} ${listed(bad)} (codes are ${[...KNOWN_CODES].join(", ")})`,
    );
    return (v as string[]).filter((c) => !badSet.has(c));
  }
  return v as string[];
}

/**
 * An `exclude`/`extend-exclude` list: non-empty strings (gitignore-style patterns), at most
 * exclude.ts `MAX_PATTERNS` of them; undefined (with a problem) when it is not such a list.
 */
function patternList(problems: ProblemList, key: string, v: unknown): string[] | undefined {
  if (!Array.isArray(v) || v.some((p) => typeof p !== "string" || p.trim() === "")) {
    problems.add(key, `[tool.gpu-pilot] ${key} must be a list of path patterns such as ["third_party", "gen/*.py"]`);
    return undefined;
  }
  if (v.length > MAX_PATTERNS)
    problems.add(
      key,
      `[tool.gpu-pilot] ${key} has ${v.length.toLocaleString("en-US")} patterns; only the first ${MAX_PATTERNS.toLocaleString("en-US")} are used`,
    );
  return (v as string[]).slice(0, MAX_PATTERNS);
}

/** `per-file-ignores`: each glob's codes, checked by {@link ruleCodes}. */
function perFileIgnoresOf(problems: ProblemList, value: object): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [glob, list] of Object.entries(value)) {
    const c = ruleCodes(problems, `per-file-ignores."${glob}"`, list);
    if (c) out[glob] = c;
  }
  return out;
}

/** `severity`: each known code's severity; unknown codes and bad severities are reported and left out. */
function severityOf(problems: ProblemList, value: object): Record<string, Severity> {
  const out: Record<string, Severity> = {};
  for (const [code, sev] of Object.entries(value)) {
    if (!KNOWN_CODES.has(code)) problems.add(code, `[tool.gpu-pilot] severity: unknown rule code ${short(code)}`);
    else if (typeof sev !== "string" || !SEVERITIES.has(sev))
      problems.add(code, `[tool.gpu-pilot] severity.${short(code)} must be one of error, warning, information, hint`);
    else out[code] = sev as Severity;
  }
  return out;
}

/** Sets the `[tool.gpu-pilot]` key `key` on `config`, or adds its problem to `problems`. */
function setConfigKey(config: ProjectConfig, problems: ProblemList, file: string, key: string, value: unknown): void {
  switch (key) {
    case "select":
      config.select = ruleCodes(problems, key, value);
      break;
    case "extend-select":
      config.extendSelect = ruleCodes(problems, key, value);
      break;
    case "ignore":
      config.ignore = ruleCodes(problems, key, value);
      break;
    case "per-file-ignores":
      if (typeof value !== "object" || value === null || Array.isArray(value))
        problems.add(key, "[tool.gpu-pilot] per-file-ignores must be a table of glob = [codes]");
      else config.perFileIgnores = perFileIgnoresOf(problems, value);
      break;
    case "severity":
      if (typeof value !== "object" || value === null || Array.isArray(value))
        problems.add(key, '[tool.gpu-pilot] severity must be a table of CODE = "error"|"warning"|"information"|"hint"');
      else config.severity = severityOf(problems, value);
      break;
    case "preview":
      if (typeof value !== "boolean") problems.add(key, "[tool.gpu-pilot] preview must be true or false");
      else config.preview = value;
      break;
    case "target-torch":
      if (typeof value !== "string" || !TARGET_VERSION.test(value))
        problems.add(key, '[tool.gpu-pilot] target-torch must be a version string such as "2.11"');
      else config.targetTorch = value;
      break;
    case "gpus":
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_CONFIG_GPUS)
        problems.add(
          key,
          `[tool.gpu-pilot] gpus must be a whole number from 0 to ${MAX_CONFIG_GPUS}, not ${short(JSON.stringify(value) ?? String(value))}`,
        );
      else config.gpus = value;
      break;
    case "inventory":
      if (typeof value !== "string" || value.trim() === "")
        problems.add(
          key,
          "[tool.gpu-pilot] inventory must be the path of an nvidia-smi CSV file (nvidia-smi --query-gpu=index,uuid,name,pci.bus_id --format=csv,noheader)",
        );
      else config.inventory = resolve(dirname(file), value);
      break;
    case "baseline":
      if (typeof value !== "string" || value.trim() === "")
        problems.add(
          key,
          "[tool.gpu-pilot] baseline must be the path of a baseline file (gpu-pilot check --write-baseline FILE)",
        );
      else config.baseline = resolve(dirname(file), value);
      break;
    case "exclude":
    case "extend-exclude": {
      const list = patternList(problems, key, value);
      if (list && key === "exclude") config.exclude = list;
      else if (list) config.extendExclude = list;
      break;
    }
    case "respect-gitignore":
      if (typeof value !== "boolean") problems.add(key, "[tool.gpu-pilot] respect-gitignore must be true or false");
      else config.respectGitignore = value;
      break;
    case "eager-init-modules":
      if (!Array.isArray(value) || value.some((m) => typeof m !== "string"))
        problems.add(key, "[tool.gpu-pilot] eager-init-modules must be a list of module names");
      else config.eagerInitModules = value as string[];
      break;
    default:
      problems.add(
        key,
        `[tool.gpu-pilot] unknown key "${short(key)}" (known: select, extend-select, ignore, per-file-ignores, severity, eager-init-modules, preview, target-torch, gpus, inventory, baseline, exclude, extend-exclude, respect-gitignore)`,
      );
  }
}

/** Codes ignored for `file` by the config's per-file-ignores (globs relative to the pyproject folder). */
export function perFileIgnored(config: ProjectConfig, file: string): string[] {
  if (!config.perFileIgnores) return [];
  const rel = relative(dirname(config.file), file).split(sep).join("/");
  const out: string[] = [];
  for (const [glob, codes] of Object.entries(config.perFileIgnores)) {
    if (minimatch(rel, glob, { dot: true, matchBase: !glob.includes("/") })) for (const c of codes) out.push(c);
  }
  return out;
}

/** The version specifier that one requirement line gives `torch`, or null (PEP 508 name, then the specifier). */
export function torchSpecifier(requirement: string): string | null {
  const line = requirement.split("#")[0].split(";")[0].trim();
  const m = /^torch(\[[^\]]*\])?\s*(\(?\s*([<>=!~][^)]*)\)?)?$/i.exec(line);
  if (!m) return null;
  return (m[3] ?? "").trim();
}

/**
 * Whether a specifier allows only torch < 2.4 (e.g. `==2.1.0`, `<2.4`, `>=1.13,<2.3`). An empty
 * specifier (any version) is not a pin.
 */
export function pinsTorchBelow24(specifier: string): boolean {
  if (!specifier) return false;
  const spec = specifier.replace(/\+[\w.]+/g, "");
  const newer = ["2.4.0", "2.4.1", "2.5.1", "2.6.0", "2.8.0", "2.11.0", "3.0.0"];
  const older = ["1.12.1", "1.13.1", "2.0.1", "2.1.0", "2.1.2", "2.2.2", "2.3.0", "2.3.1"];
  try {
    return (
      !newer.some((v) => satisfies(v, spec)) &&
      (older.some((v) => satisfies(v, spec)) || /^==\s*[01]\.|^==\s*2\.[0-3](\.|$)/.test(spec.trim()))
    );
  } catch {
    return false;
  }
}

/**
 * Whether a specifier allows only torch < 2.0 (e.g. `==1.13.1`, `<2.0`, `>=1.10,<1.14`): before 2.0,
 * `python -m torch.distributed.launch` passed `--local_rank=N` to the script, since then
 * `--local-rank=N` (GPU044). An empty specifier (any version) is not a pin.
 */
export function pinsTorchBelow20(specifier: string): boolean {
  if (!specifier) return false;
  const spec = specifier.replace(/\+[\w.]+/g, "");
  const newer = ["2.0.0", "2.0.1", "2.1.2", "2.4.0", "2.8.0", "2.11.0", "3.0.0"];
  const older = ["1.8.1", "1.9.1", "1.10.2", "1.11.0", "1.12.1", "1.13.1"];
  try {
    return (
      !newer.some((v) => satisfies(v, spec)) &&
      (older.some((v) => satisfies(v, spec)) || /^==\s*[01]\./.test(spec.trim()))
    );
  } catch {
    return false;
  }
}

/**
 * Looks for a torch pin in the project folder `dir` ({@link projectRequirements}).
 * @returns true when some file pins torch below 2.4.
 */
export function projectPinsTorchBelow24(dir: string): boolean {
  const specs: string[] = [];
  for (const r of projectRequirements(dir)) {
    const s = torchSpecifier(r);
    if (s !== null) specs.push(s);
  }
  return specs.some(pinsTorchBelow24);
}

/**
 * Looks for a torch pin below 2.0 in the project folder `dir` ({@link projectRequirements}).
 * @returns true when some file pins torch below 2.0.
 */
export function projectPinsTorchBelow20(dir: string): boolean {
  for (const r of projectRequirements(dir)) {
    const s = torchSpecifier(r);
    if (s !== null && pinsTorchBelow20(s)) return true;
  }
  return false;
}
