/**
 * Which files a check leaves out, as Ruff does: `[tool.gpu-pilot] exclude` (replaces
 * {@link DEFAULT_EXCLUDE}) and `extend-exclude` (adds to it), gitignore-style patterns relative to
 * the pyproject.toml's folder, matched with the `ignore` package (the matcher ESLint and Prettier
 * use); and, for the CLI's folder walk, the `.gitignore` files of a git work tree
 * ({@link GitignoreFilter}; `respect-gitignore`, default true). Node's fs only; no `vscode`.
 *
 * Pattern meaning (gitignore's, which is also Ruff's for `exclude`): a pattern without a `/` (other
 * than a trailing one) matches a file or folder of that name at any depth (`third_party`,
 * `*_pb2.py`); one with a `/` is anchored at the pyproject.toml's folder (`scripts/gen/*.py`); a
 * trailing `/` matches folders only; `!` re-includes. Everything below an excluded folder is excluded.
 */
import ignore, { type Ignore } from "ignore";
import { existsSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { readWorkspaceText } from "../../../common/src/fs/workspaceFile";

/**
 * The folders a check leaves out when `exclude` is not set: virtual environments, installed
 * packages, tool caches and VCS folders (Ruff's defaults, where they name folders that hold Python
 * files users did not write). Folders whose name starts with `.` are skipped by the CLI's walk
 * whatever the configuration says.
 */
export const DEFAULT_EXCLUDE: readonly string[] = [
  "node_modules",
  "__pycache__",
  ".git",
  ".hg",
  ".venv",
  "venv",
  ".tox",
  ".nox",
  ".mypy_cache",
  ".ruff_cache",
  ".pytest_cache",
  "site-packages",
  "__pypackages__",
  ".ipynb_checkpoints",
];

/** At most this many patterns of one list or one `.gitignore` are used (a hostile file may hold millions). */
export const MAX_PATTERNS = 10_000;

/** The exclusion settings of one project (config.ts `ProjectConfig`'s fields of the same names). */
export interface ExcludeSettings {
  /** The pyproject.toml the patterns belong to: they are relative to its folder. */
  file: string;
  exclude?: readonly string[];
  extendExclude?: readonly string[];
}

/** The compiled pattern lists, by the settings object they came from (kept while it lives). */
const matchers = new WeakMap<object, Ignore>();
const defaultMatcher: Ignore = ignore().add([...DEFAULT_EXCLUDE]);

/** `path` relative to `base` with `/` separators (a folder's with a trailing `/`), or null when it is not below `base`. */
function relativeBelow(base: string, path: string, isDir: boolean): string | null {
  const rel = relative(base, path);
  if (!rel || rel.startsWith("..") || rel.startsWith(sep) || /^[A-Za-z]:/.test(rel)) return null;
  const slashed = sep === "/" ? rel : rel.split(sep).join("/");
  return isDir ? `${slashed}/` : slashed;
}

/**
 * The pattern that excludes `path` (a file, or a folder when `isDir`), or null. `settings`: the
 * nearest pyproject.toml's (patterns relative to its folder); null: the defaults, relative to
 * `fallbackBase` (the folder named on the command line, the workspace folder), since a default
 * such as `venv` must not match a folder above the user's project. A path outside the base is never
 * excluded.
 */
export function excludedBy(
  settings: ExcludeSettings | null,
  path: string,
  isDir: boolean,
  fallbackBase: string | null = null,
): string | null {
  const base = settings ? dirname(settings.file) : fallbackBase;
  if (base === null) return null;
  const rel = relativeBelow(base, path, isDir);
  if (rel === null) return null;
  let m = defaultMatcher;
  if (settings && (settings.exclude || settings.extendExclude)) {
    const known = matchers.get(settings);
    if (known) m = known;
    else {
      const patterns = [...(settings.exclude ?? DEFAULT_EXCLUDE), ...(settings.extendExclude ?? [])];
      m = ignore().add(patterns.slice(0, MAX_PATTERNS));
      matchers.set(settings, m);
    }
  }
  const r = m.test(rel);
  return r.ignored ? (r.rule?.pattern ?? "exclude") : null;
}

/**
 * The `.gitignore` rules of git work trees, as `git status` applies them to untracked files: the
 * `.gitignore` of each folder from the work tree's root (the folder holding `.git`) down to the
 * path's folder, deeper files first (a deeper `!pattern` re-includes), then the root's
 * `.git/info/exclude`. Outside a work tree nothing is ignored. The user's global excludes file
 * (`core.excludesFile`) is not read. Each file is read once through the safe reader (at most
 * 1 MiB, {@link MAX_PATTERNS} patterns); an unreadable one counts as empty.
 */
export class GitignoreFilter {
  private readonly matcherOf = new Map<string, { ig: Ignore; label: string } | null>();
  private readonly rootOf = new Map<string, string | null>();

  /** The pattern (with the `.gitignore` that holds it) that ignores `path`, or null. */
  ignoredBy(path: string, isDir: boolean): string | null {
    const root = this.workTree(dirname(path));
    if (root === null) return null;
    for (let d = dirname(path); ; d = dirname(d)) {
      const m = this.matcher(d, d === root, root);
      const rel = m ? relativeBelow(d, path, isDir) : null;
      if (m && rel !== null) {
        const r = m.ig.test(rel);
        if (r.ignored) return `${r.rule?.pattern ?? "?"} (${m.label})`;
        if (r.unignored) return null;
      }
      if (d === root || dirname(d) === d) return null;
    }
  }

  /** The work tree holding `dir` (the nearest folder at or above it with a `.git` folder or file), or null. */
  private workTree(dir: string): string | null {
    const known = this.rootOf.get(dir);
    if (known !== undefined) return known;
    const up = dirname(dir);
    const root = existsSync(join(dir, ".git")) ? dir : up === dir ? null : this.workTree(up);
    this.rootOf.set(dir, root);
    return root;
  }

  /** The compiled `.gitignore` of `dir` (and `.git/info/exclude` before it at the root), or null when it has none. */
  private matcher(dir: string, isRoot: boolean, root: string): { ig: Ignore; label: string } | null {
    const known = this.matcherOf.get(dir);
    if (known !== undefined) return known;
    const lines = (p: string): string[] => {
      const r = readWorkspaceText(p, 1024 * 1024);
      return "text" in r ? r.text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.startsWith("#")) : [];
    };
    const excludes = isRoot ? lines(join(dir, ".git", "info", "exclude")) : [];
    const own = lines(join(dir, ".gitignore"));
    const patterns = [...excludes, ...own].slice(0, MAX_PATTERNS);
    const names = [
      ...(own.length ? [relative(root, join(dir, ".gitignore"))] : []),
      ...(excludes.length ? [".git/info/exclude"] : []),
    ];
    const m = patterns.length ? { ig: ignore().add(patterns), label: names.join(" or ") } : null;
    this.matcherOf.set(dir, m);
    return m;
  }
}
