/**
 * Finds module-level code that initialises CUDA (or starts JAX's backend) when a Python package is
 * imported, to propose catalogue entries (server/src/engine/initCatalogue.json) for review.
 *
 * From each top-level package under the folder (a source checkout, an unpacked wheel, an unpacked
 * Debian package: `dpkg-deb -x`), the scan follows the imports that run at import: those of the
 * package's `__init__.py` and, transitively, of every package module they import, relative
 * (`from .x import y`, `from . import x`) or absolute within the folder's packages (`import pkg.x`,
 * `from pkg.x import y`); an import inside a function, under `if TYPE_CHECKING:` or through a
 * module `__getattr__` does not run at import and is not followed. Each module reached is modelled
 * by the engine (python/model.ts: its timeline walks module-level statements, `if`/`try`/`with`
 * blocks, class bodies and the module functions called at top level, two levels deep) and its
 * timeline's init events are the findings: `torch.cuda.is_available()` (nvml),
 * `torch.cuda.get_device_capability()` (driver), a tensor on CUDA (context), `jax.devices()`, an
 * import of a catalogued initialising library, ... (frameworks.ts tables).
 *
 * Not seen: a call at module level of a function defined in another module (the model inlines only
 * the module's own functions), compiled extensions (`.so`), and code run through `exec`.
 * Runs under tsx (it imports the TypeScript engine); `scripts/scan-init-at-import.mjs` is its command line.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { initEngine } from "../server/src/engine/lint";
import { ModuleTrees } from "../server/src/engine/python/moduleTrees";
import { pythonInput } from "../server/src/engine/python/parser";
import { buildModel } from "../server/src/engine/python/model";
import { importsRunAtImport } from "../server/src/engine/python/imports";
import { DEFAULT_EAGER_INIT_MODULES, type Framework, type InitDepth } from "../server/src/engine/frameworks";

/** One initialising event found at import. */
export interface ScanFinding {
  /** The top-level package whose import runs it (`bitsandbytes`). */
  package: string;
  /** The dotted module it sits in (`bitsandbytes.cextension`). */
  module: string;
  /** The module's file, relative to the scanned folder, `/`-separated. */
  file: string;
  /** 1-based line of the initialising call or import. */
  line: number;
  /** That source line, trimmed. */
  quote: string;
  /** The engine's description (`torch.cuda.is_available()`). */
  what: string;
  depth: InitDepth;
  framework: Framework;
  /** The import chain from the package's `__init__` to `module` (first: the package). */
  chain: string[];
}

/** What a scan found. */
export interface ScanResult {
  /** The top-level packages found, with the folder holding each (relative, `.` for the folder itself). */
  packages: Array<{ name: string; root: string }>;
  /** How many modules each package's import reaches (files parsed). */
  reached: Record<string, number>;
  findings: ScanFinding[];
}

/** Folders never searched for packages: tests, docs and build trees are not imported by the library. */
const SKIP_DIRS = new Set([
  "tests",
  "test",
  "docs",
  "doc",
  "examples",
  "benchmarks",
  "benchmark",
  "build",
  "dist",
  "node_modules",
  ".git",
  "__pycache__",
  "site-packages-tests",
]);

/**
 * The top-level packages under `dir`: folders with an `__init__.py` whose parent has none, at most
 * `maxDepth` folders down (an unpacked Debian package keeps them at usr/lib/python3/dist-packages/).
 * `dir` itself when it is a package.
 */
export function topLevelPackages(dir: string, maxDepth = 6): Array<{ name: string; path: string }> {
  if (existsSync(join(dir, "__init__.py"))) return [{ name: dir.split(sep).filter(Boolean).pop()!, path: dir }];
  const out: Array<{ name: string; path: string }> = [];
  const visit = (d: string, depth: number) => {
    let names: string[] = [];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (SKIP_DIRS.has(n) || n.startsWith(".") || n.endsWith(".egg-info") || n.endsWith(".dist-info")) continue;
      const p = join(d, n);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        continue;
      }
      if (!isDir) continue;
      if (existsSync(join(p, "__init__.py")) && /^[A-Za-z_]\w*$/.test(n)) out.push({ name: n, path: p });
      else if (depth < maxDepth) visit(p, depth + 1);
    }
  };
  visit(dir, 0);
  return out;
}

/** The `.py` files under a package folder, sorted (test folders skipped). */
function pythonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir).sort()) {
    const p = join(dir, n);
    if (n.endsWith(".py")) out.push(p);
    else if (!SKIP_DIRS.has(n) && existsSync(join(p, "__init__.py"))) out.push(...pythonFiles(p));
  }
  return out;
}

/** A module of the scanned packages: its dotted name and file. */
interface ModuleFile {
  name: string;
  file: string;
  isPackage: boolean;
}

/**
 * Scans `dir` (see the module comment).
 * @param eager the import names counted as initialising at import (default: the engine's catalogue
 *   list); a package never counts as eager inside its own scan.
 * @param all scan every module of the packages, not only those the imports reach: for a package
 *   that imports its submodules dynamically (MONAI's `load_submodules`, importlib loops).
 */
export async function scanInitAtImport(
  dir: string,
  eager: readonly string[] = DEFAULT_EAGER_INIT_MODULES,
  all = false,
): Promise<ScanResult> {
  await initEngine();
  const packages = topLevelPackages(dir);
  const roots = new Map(packages.map((p) => [p.name, p.path]));
  /** The file of dotted module `name`, when it is in one of the scanned packages. */
  const fileOf = (name: string): ModuleFile | null => {
    const parts = name.split(".");
    const root = roots.get(parts[0]);
    if (!root) return null;
    const base = join(root, ...parts.slice(1));
    if (existsSync(join(base, "__init__.py"))) return { name, file: join(base, "__init__.py"), isPackage: true };
    if (parts.length > 1 && existsSync(base + ".py")) return { name, file: base + ".py", isPackage: false };
    return null;
  };
  const result: ScanResult = {
    packages: packages.map((p) => ({ name: p.name, root: relative(dir, p.path).split(sep).join("/") || "." })),
    reached: {},
    findings: [],
  };
  for (const pkg of packages) {
    const seen = new Set<string>();
    const queue: Array<{ mod: ModuleFile; chain: string[] }> = [];
    const enqueue = (name: string, chain: string[]) => {
      // Importing a.b.c runs a, a.b and a.b.c.
      const parts = name.split(".");
      for (let i = 1; i <= parts.length; i++) {
        const n = parts.slice(0, i).join(".");
        if (seen.has(n)) continue;
        const mod = fileOf(n);
        if (!mod) continue;
        seen.add(n);
        queue.push({ mod, chain: [...chain, n] });
      }
    };
    enqueue(pkg.name, []);
    if (all)
      for (const f of pythonFiles(pkg.path))
        enqueue(
          [
            pkg.name,
            ...relative(pkg.path, f)
              .replace(/\.py$/, "")
              .split(sep)
              .filter((x) => x !== "__init__"),
          ].join("."),
          ["(all)"],
        );
    const modelOptions = { eagerInitModules: eager.filter((m) => m.split(".")[0] !== pkg.name), torchBelow24: false };
    while (queue.length) {
      const { mod, chain } = queue.shift()!;
      let text: string;
      try {
        text = readFileSync(mod.file, "utf8");
      } catch {
        continue;
      }
      const tree = ModuleTrees.parse(pythonInput(text), false);
      try {
        const model = buildModel(tree, text, modelOptions);
        const lines = text.split(/\r?\n/);
        for (const e of model.events) {
          if (e.kind !== "init") continue;
          const line = e.node.startPosition.row;
          result.findings.push({
            package: pkg.name,
            module: mod.name,
            file: relative(dir, mod.file).split(sep).join("/"),
            line: line + 1,
            quote: (lines[line] ?? "").trim(),
            what: e.what,
            depth: e.depth,
            framework: e.framework,
            chain,
          });
        }
        // The package this module's relative imports start from.
        const here = mod.isPackage ? mod.name.split(".") : mod.name.split(".").slice(0, -1);
        for (const stmt of importsRunAtImport(tree.statements)) {
          if (stmt.type === "import_statement") {
            for (const n of stmt.namedChildren) {
              const dotted =
                n?.type === "dotted_name"
                  ? n.text
                  : n?.type === "aliased_import"
                    ? n.childForFieldName("name")?.text
                    : undefined;
              if (dotted) enqueue(dotted, chain);
            }
            continue;
          }
          const modText = stmt.childForFieldName("module_name")?.text ?? "";
          const level = /^\.*/.exec(modText)![0].length;
          const rest = modText.slice(level);
          if (level > here.length) continue;
          const base = level
            ? [...here.slice(0, here.length - (level - 1)), ...(rest ? rest.split(".") : [])].join(".")
            : rest;
          if (!base) continue;
          enqueue(base, chain);
          // `from pkg import sub` runs pkg.sub when sub is a module.
          for (const n of stmt.childrenForFieldName("name")) {
            const name =
              n?.type === "dotted_name"
                ? n.text
                : n?.type === "aliased_import"
                  ? n.childForFieldName("name")?.text
                  : undefined;
            if (name && fileOf(`${base}.${name}`)) enqueue(`${base}.${name}`, chain);
          }
        }
      } finally {
        tree.delete();
      }
    }
    result.reached[pkg.name] = seen.size;
  }
  return result;
}

/** Proposed catalogue entries, one per package with findings: the deepest finding as its provenance line, for a reviewer to complete (`package`, `versions`, `repo`, `commit`). */
export function proposedEntries(result: ScanResult): object[] {
  const rank: Record<InitDepth, number> = { nvml: 0, driver: 1, context: 2, alloc: 3 };
  const byPkg = new Map<string, ScanFinding[]>();
  for (const f of result.findings) byPkg.set(f.package, [...(byPkg.get(f.package) ?? []), f]);
  return [...byPkg].map(([pkg, fs]) => {
    const first = fs[0];
    const deepest = fs.reduce((a, b) => (rank[b.depth] > rank[a.depth] ? b : a));
    return {
      library: pkg,
      package: "<PyPI name>",
      versions: "<range: check the tags>",
      initialises: "import",
      depth: deepest.depth,
      ...(deepest.framework !== "torch" ? { framework: deepest.framework } : {}),
      provenance: {
        kind: "read",
        repo: "<owner/name>",
        commit: "<40 hex>",
        path: first.file,
        line: first.line,
        quote: first.quote,
      },
    };
  });
}
