/**
 * The fix-safety property (issue 16 item 5), checked over any folders of real code:
 * for every file with a safe fix, apply every safe fix with the engine's fix-all (fixAll.ts), then
 *   - new-finding:  re-lint; no finding (code at a place) that was not there before, beyond the fixed
 *                   ones going away (places are mapped through a line diff; a moved line keeps its
 *                   findings), neither after fix-all nor after any one safe fix applied alone (a fix
 *                   that creates a finding fix-all then fixes too changes more than its title says);
 *   - fixed-point:  no safe fix is left, and a second fix-all changes nothing;
 *   - syntax:       the fixed text has no more tree-sitter ERROR/MISSING nodes than before;
 *   - compile:      the fixed text compiles with CPython (`compile(source, path, "exec")`, the step
 *                   `python3 -m py_compile` runs) wherever the original did;
 *   - fixed-count:  the number fix-all says it fixed is the number of findings that went away;
 *   - cli:          `gpu-pilot check --fix` on a copy writes the same text and its summary says how
 *                   many were fixed and how many remain, as computed here;
 *   - notebook:     the CLI's fixed notebook keeps every cell the fixes do not touch byte for byte, and
 *                   the `source` shape (list of lines or string) of the cells they do.
 * Runs under tsx (it imports the TypeScript engine); `scripts/fix-property.mjs` is its command line.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { diffLines } from "diff";
import { initEngine, lintPython, type LintOptions } from "../server/src/engine/lint";
import { blankMagics, cellsOfIpynb, lintNotebook, type CellInput } from "../server/src/engine/notebook";
import { fixAllNotebook, fixAllPython } from "../server/src/engine/fixAll";
import {
  fixAllManifest,
  lintManifest,
  manifestKindOf,
  type ManifestKind,
} from "../server/src/engine/manifests/lintManifest";
import { resolveLintOptions } from "../server/src/engine/options";
import { findPyproject } from "../server/src/engine/config";
import { parsePython, syntaxErrorCount } from "../server/src/engine/python/parser";
import { DEFAULT_MAX_FILE_SIZE_KB } from "../server/src/engine/limits";
import { applyEdits } from "../server/src/engine/fixes";
import type { TextEdit } from "../server/src/engine/types";
import type { Rule } from "../server/src/engine/rule";
import { DEFAULT_EXCLUDE } from "../server/src/engine/exclude";

/** One broken property: the file, which property (see the top of this file) and what happened. */
export interface Violation {
  file: string;
  kind: "new-finding" | "fixed-point" | "syntax" | "compile" | "fixed-count" | "cli" | "notebook";
  /** Short and message-free (codes and 1-based places): what a list of known violations matches on. */
  key: string;
  detail: string;
}

/** What {@link checkFixProperty} found: files checked, files with a safe fix, fixes applied, violations, and sub-checks it could not run. */
export interface FixPropertyReport {
  files: number;
  fixable: number;
  applied: number;
  violations: Violation[];
  notRun: string[];
}

/** A finding reduced to what the property compares: where (cell, 0-based line and column), which code, whether it has a safe fix. */
interface Spot {
  cell: number;
  line: number;
  column: number;
  code: string;
  safe: boolean;
  message: string;
  edits: Array<TextEdit & { cell: number }>;
}

/** The folders the CLI's walk skips by default (exclude.ts), so that the property covers the files `check --fix` would touch. */
const SKIP_DIRS: ReadonlySet<string> = new Set(DEFAULT_EXCLUDE);

/** .py, .ipynb and manifest files under `paths` (files kept as given), sorted, hidden folders skipped as the CLI does. */
export function collectFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (!n.startsWith(".") && !SKIP_DIRS.has(n)) walk(p);
      } else if (n.endsWith(".py") || n.endsWith(".ipynb") || manifestKindOf(n)) out.push(p);
    }
  };
  for (const p of paths) {
    const abs = resolve(p);
    if (statSync(abs).isDirectory()) walk(abs);
    else out.push(abs);
  }
  return out;
}

/** One file, as texts (one per cell for a notebook) with a lint and a fix-all over them. */
interface Unit {
  kind: "python" | "notebook" | ManifestKind;
  texts: string[];
  lint: (texts: string[]) => Spot[];
  fixAll: (texts: string[]) => { texts: string[]; applied: number };
  /** The texts as Python for the parser and the compiler (magics blanked), or null (manifests). */
  python: (texts: string[]) => string | null;
}

const spot = (
  cell: number,
  d: {
    code: string;
    message: string;
    range: { start: { line: number; character: number } };
    fix?: { safe: boolean; edits: TextEdit[] };
  },
): Spot => ({
  cell,
  line: d.range.start.line,
  column: d.range.start.character,
  code: d.code,
  safe: !!d.fix?.safe,
  message: d.message,
  edits: (d.fix?.edits ?? []).map((e) => ({
    cell: (e as { cell?: number }).cell ?? cell,
    range: e.range,
    newText: e.newText,
  })),
});

function unitOf(file: string, text: string, options: LintOptions): Unit | null {
  const manifest = manifestKindOf(file);
  if (extname(file) === ".ipynb") {
    let cells: CellInput[];
    try {
      cells = cellsOfIpynb(text);
    } catch {
      return null;
    }
    const withTexts = (texts: string[]) => cells.map((c, i) => ({ ...c, text: texts[i] }));
    return {
      kind: "notebook",
      texts: cells.map((c) => c.text),
      lint: (texts) => lintNotebook(withTexts(texts), options).diagnostics.map((d) => spot(d.cell, d)),
      fixAll: (texts) => {
        const r = fixAllNotebook(withTexts(texts), options);
        return { texts: r.cells.map((c) => c.text), applied: r.applied };
      },
      python: (texts) => cells.map((c, i) => (c.kind === "code" ? blankMagics(texts[i], 0).text : "")).join("\n"),
    };
  }
  if (manifest) {
    return {
      kind: manifest,
      texts: [text],
      lint: ([t]) => lintManifest(t, manifest, options).diagnostics.map((d) => spot(0, d)),
      fixAll: ([t]) => {
        const r = fixAllManifest(t, manifest, options);
        return { texts: [r.text], applied: r.applied };
      },
      python: () => null,
    };
  }
  return {
    kind: "python",
    texts: [text],
    lint: ([t]) => {
      const r = lintPython(t, options);
      r.tree?.delete();
      return r.diagnostics.map((d) => spot(0, d));
    },
    fixAll: ([t]) => {
      const r = fixAllPython(t, options);
      return { texts: [r.text], applied: r.applied };
    },
    python: ([t]) => t,
  };
}

/**
 * For each 0-based line of `after`, the lines of `before` it stands for: an unchanged line its old
 * self, a line the fixes moved (same text, trimmed, removed elsewhere) the removed one, any other
 * added line the lines its hunk removed.
 */
export function lineOrigins(before: string, after: string): Array<{ lines: number[]; same: boolean }> {
  const parts = diffLines(before, after);
  const out: Array<{ lines: number[]; same: boolean }> = [];
  const removedByText = new Map<string, number[]>();
  let oldLine = 0;
  const hunks: Array<{ removed: number[]; added: number[] }> = [];
  let hunk: { removed: number[]; added: number[] } | null = null;
  const addedLines: Array<{ index: number; text: string; hunk: { removed: number[]; added: number[] } }> = [];
  for (const p of parts) {
    const lines = p.value.split(/(?<=\n)/);
    if (!p.added && !p.removed) {
      hunk = null;
      for (let k = 0; k < lines.length; k++) out.push({ lines: [oldLine++], same: true });
      continue;
    }
    if (!hunk) {
      hunk = { removed: [], added: [] };
      hunks.push(hunk);
    }
    if (p.removed) {
      for (const l of lines) {
        const t = l.trim();
        if (t) removedByText.set(t, [...(removedByText.get(t) ?? []), oldLine]);
        hunk.removed.push(oldLine++);
      }
    } else {
      for (const l of lines) {
        addedLines.push({ index: out.length, text: l.trim(), hunk });
        out.push({ lines: [], same: false });
      }
    }
  }
  for (const a of addedLines) {
    const moved = a.text ? removedByText.get(a.text) : undefined;
    out[a.index] = { lines: moved ?? a.hunk.removed, same: false };
  }
  return out;
}

/** After-fix findings with no counterpart before (same code, at the mapped place), and before-fix findings with none after. */
export function diffFindings(
  beforeTexts: string[],
  afterTexts: string[],
  before: Spot[],
  after: Spot[],
): { added: Spot[]; gone: Spot[] } {
  const origins = afterTexts.map((t, i) => lineOrigins(beforeTexts[i], t));
  const matched = new Set<Spot>();
  const added: Spot[] = [];
  for (const a of after) {
    const o = origins[a.cell]?.[a.line];
    const candidates = before.filter(
      (b) =>
        b.cell === a.cell &&
        b.code === a.code &&
        !matched.has(b) &&
        (o ? o.lines.includes(b.line) && (!o.same || b.column === a.column) : false),
    );
    if (candidates.length) matched.add(candidates[0]);
    else added.push(a);
  }
  return { added, gone: before.filter((b) => !matched.has(b)) };
}

/** Compiles Python texts with CPython in one process; per text the error (e.g. "SyntaxError: ... (line 3)") or null. @throws when python3 cannot run. */
async function compileAll(items: Array<{ name: string; text: string }>): Promise<Array<string | null>> {
  if (!items.length) return [];
  const { execa } = await import("execa");
  const script = [
    "import json, sys",
    "out = []",
    "for it in json.load(sys.stdin):",
    "    try:",
    "        compile(it['text'].encode('utf-8'), it['name'], 'exec', dont_inherit=True)",
    "        out.append(None)",
    "    except (SyntaxError, ValueError) as e:",
    "        out.append(f'{type(e).__name__}: {e}')",
    "json.dump(out, sys.stdout)",
  ].join("\n");
  const r = await execa("python3", ["-c", script], { input: JSON.stringify(items), maxBuffer: 64 << 20 });
  return JSON.parse(r.stdout) as Array<string | null>;
}

const errorsOf = (text: string): number => {
  const t = parsePython(text);
  try {
    return syntaxErrorCount(t);
  } finally {
    t.delete();
  }
};
const at = (s: Spot) => `${s.cell ? `cell ${s.cell + 1}:` : ""}${s.line + 1}:${s.column + 1} ${s.code}`;

/** The summary line of `gpu-pilot check --fix` (text format): how many it fixed and how many remain. */
export function parseFixSummary(out: string): { fixed: number; remaining: number } | null {
  const found = /^Found (\d+) problems?(?: \((\d+) fixed, (\d+) remaining\))?\.$/m.exec(out);
  if (found) return { fixed: Number(found[2] ?? 0), remaining: Number(found[1]) };
  const clean = /^Fixed (\d+) problems?; all checks passed!$/m.exec(out);
  if (clean) return { fixed: Number(clean[1]), remaining: 0 };
  return /^All checks passed!$/m.test(out) ? { fixed: 0, remaining: 0 } : null;
}

/** Copies `file` into `dir` at its absolute path, with the configuration the CLI would read for it (nearest pyproject.toml, requirements*.txt, environment.yml beside it). */
function mirror(dir: string, file: string): string {
  const put = (p: string) => {
    const to = join(dir, p);
    mkdirSync(dirname(to), { recursive: true });
    if (!existsSync(to)) copyFileSync(p, to);
    return to;
  };
  const pyproject = findPyproject(dirname(file));
  for (const d of new Set([dirname(file), ...(pyproject ? [dirname(pyproject)] : [])])) {
    for (const n of readdirSync(d))
      if (/^requirements.*\.txt$|^pyproject\.toml$|^environment\.ya?ml$/.test(n) && statSync(join(d, n)).isFile())
        put(join(d, n));
  }
  return put(file);
}

const changedLineCount = (a: string, b: string) =>
  diffLines(a, b)
    .filter((p) => p.added || p.removed)
    .reduce((n, p) => n + (p.count ?? 0), 0);

/**
 * Checks the notebook JSON gpu-pilot --fix wrote: each cell the fixes do not touch is unchanged, a
 * fixed cell keeps its `source` shape (list of lines or string), other keys are unchanged, and the
 * file's text changes in no more lines than the fixed cells' sources account for (every other byte kept).
 */
export function notebookShape(
  originalJson: string,
  fixedJson: string,
  changed: boolean[],
  before: string[],
  after: string[],
): Array<{ key: string; detail: string }> {
  const a = JSON.parse(originalJson) as { cells: Array<{ source?: unknown }> } & Record<string, unknown>;
  const b = JSON.parse(fixedJson) as { cells: Array<{ source?: unknown }> } & Record<string, unknown>;
  const out: Array<{ key: string; detail: string }> = [];
  a.cells.forEach((c, i) => {
    const d = b.cells[i];
    if (!changed[i] && JSON.stringify(c) !== JSON.stringify(d))
      out.push({
        key: `cell ${i + 1} rewritten`,
        detail: `cell ${i + 1} has no fix but was rewritten (source ${JSON.stringify(c.source).slice(0, 60)} -> ${JSON.stringify(d?.source).slice(0, 60)})`,
      });
    if (changed[i] && Array.isArray(c.source) !== Array.isArray(d?.source))
      out.push({
        key: `cell ${i + 1} shape`,
        detail: `cell ${i + 1}: source was ${Array.isArray(c.source) ? "a list of lines" : "a string"}, is now ${Array.isArray(d?.source) ? "a list of lines" : "a string"}`,
      });
  });
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
    if (k !== "cells" && JSON.stringify(a[k]) !== JSON.stringify(b[k]))
      out.push({ key: `top-level ${k}`, detail: `top-level "${k}" changed` });
  const budget = changed.reduce((n, ch, i) => n + (ch ? changedLineCount(before[i], after[i]) + 2 : 0), 0);
  const used = changedLineCount(originalJson, fixedJson);
  if (used > budget)
    out.push({
      key: "bytes outside fixed cells",
      detail: `the file changed in ${used} lines; the fixed cells account for at most ${budget} (formatting or other cells rewritten)`,
    });
  return out;
}

/**
 * Checks the property over every .py, .ipynb and manifest file under `paths` (see the top of this
 * file). `cli`: the command that runs gpu-pilot (argv, e.g. [node, scripts/gpu-pilot.mjs]); null
 * skips the CLI sub-check. `rules` replaces the registry (tests). `preview` turns the preview set on
 * (as `--preview`) whatever the files' configuration says. Never writes to `paths` (the CLI runs on copies in a temporary folder).
 */
export async function checkFixProperty(
  paths: string[],
  opts: { cli: string[] | null; rules?: readonly Rule[]; preview?: boolean },
): Promise<FixPropertyReport> {
  await initEngine();
  const report: FixPropertyReport = { files: 0, fixable: 0, applied: 0, violations: [], notRun: [] };
  const v = (file: string, kind: Violation["kind"], key: string, detail: string) =>
    report.violations.push({ file, kind, key, detail });
  const toCompile: Array<{ file: string; before: string; after: string }> = [];
  const forCli: Array<{
    file: string;
    raw: string;
    bom: boolean;
    unit: Unit;
    fixed: string[];
    applied: number;
    remaining: number;
  }> = [];
  for (const file of collectFiles(paths)) {
    report.files++;
    let raw: string;
    try {
      raw = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const bom = raw.charCodeAt(0) === 0xfeff;
    const text = bom ? raw.slice(1) : raw;
    const options: LintOptions = {
      ...resolveLintOptions(file, {}, "filesystemFirst", {}).options,
      maxFileSizeKB: DEFAULT_MAX_FILE_SIZE_KB,
      ...(opts.preview ? { preview: true } : {}),
      ...(opts.rules ? { rules: opts.rules, noPrefilter: true } : {}),
    };
    const unit = unitOf(file, text, options);
    if (!unit) continue;
    const before = unit.lint(unit.texts);
    if (!before.some((s) => s.safe)) continue;
    report.fixable++;
    for (const b of before.filter((x) => x.safe)) {
      const texts = unit.texts.map((t, i) => {
        const es = b.edits.filter((e) => e.cell === i);
        return es.length ? applyEdits(t, es) : t;
      });
      const { added: made } = diffFindings(unit.texts, texts, before, unit.lint(texts));
      for (const a of made)
        v(
          file,
          "new-finding",
          `fix ${at(b)} creates ${at(a)}`,
          `the safe fix of ${at(b)} ("${b.message.slice(0, 50)}...") alone creates ${at(a)}: ${a.message}`,
        );
    }
    const once = unit.fixAll(unit.texts);
    report.applied += once.applied;
    const after = unit.lint(once.texts);
    const { added, gone } = diffFindings(unit.texts, once.texts, before, after);
    for (const a of added)
      v(file, "new-finding", `after fix-all ${at(a)}`, `${at(a)} is new after fix-all: ${a.message}`);
    const left = after.filter((s) => s.safe);
    if (left.length)
      v(
        file,
        "fixed-point",
        `left ${left.map(at).join(", ")}`,
        `safe fixes left after fix-all: ${left.map(at).join(", ")}`,
      );
    const twice = unit.fixAll(once.texts);
    if (twice.applied || twice.texts.some((t, i) => t !== once.texts[i]))
      v(
        file,
        "fixed-point",
        "second run changes",
        `a second fix-all applied ${twice.applied} more and changed the text`,
      );
    if (once.applied !== gone.length)
      v(
        file,
        "fixed-count",
        `fixed ${once.applied}, gone ${gone.length}`,
        `fix-all says it fixed ${once.applied}, but ${gone.length} findings went away (${gone.map(at).join(", ") || "none"})`,
      );
    const pyBefore = unit.python(unit.texts),
      pyAfter = unit.python(once.texts);
    if (pyBefore !== null && pyAfter !== null && pyAfter !== pyBefore) {
      const e0 = errorsOf(pyBefore),
        e1 = errorsOf(pyAfter);
      if (e1 > e0)
        v(file, "syntax", `${e0} -> ${e1}`, `tree-sitter finds ${e1} ERROR/MISSING nodes after fix-all, ${e0} before`);
      toCompile.push({ file, before: pyBefore, after: pyAfter });
    }
    forCli.push({ file, raw, bom, unit, fixed: once.texts, applied: once.applied, remaining: after.length });
  }
  try {
    const results = await compileAll(
      toCompile.flatMap((c) => [
        { name: c.file, text: c.before },
        { name: c.file, text: c.after },
      ]),
    );
    toCompile.forEach((c, i) => {
      const [b, a] = [results[2 * i], results[2 * i + 1]];
      if (b === null && a !== null)
        v(c.file, "compile", a.split(" (")[0], `CPython compiled it before fix-all, not after: ${a}`);
    });
  } catch (e) {
    report.notRun.push(`compile (python3 could not run: ${(e as Error).message.split("\n")[0]})`);
  }
  if (opts.cli && forCli.length) await checkCli(opts.cli, forCli, v, !!opts.preview);
  return report;
}

/** The CLI sub-check: `check --fix` over copies of the fixable files writes the engine's text and prints the right summary. */
async function checkCli(
  cli: string[],
  items: Array<{
    file: string;
    raw: string;
    bom: boolean;
    unit: Unit;
    fixed: string[];
    applied: number;
    remaining: number;
  }>,
  v: (file: string, kind: Violation["kind"], key: string, detail: string) => void,
  preview: boolean,
): Promise<void> {
  const { execa } = await import("execa");
  const dir = mkdtempSync(join(tmpdir(), "gp-fix-property-"));
  try {
    const copies = items.map((it) => mirror(dir, it.file));
    const r = await execa(
      cli[0],
      [...cli.slice(1), "check", "--fix", "--exit-zero", ...(preview ? ["--preview"] : []), ...copies],
      { reject: false, maxBuffer: 256 << 20, cwd: dir },
    );
    const summary = parseFixSummary(r.stdout);
    const fixed = items.reduce((n, it) => n + it.applied, 0),
      remaining = items.reduce((n, it) => n + it.remaining, 0);
    const all = `${items.length} files (${items
      .map((it) => it.file)
      .slice(0, 3)
      .join(", ")}${items.length > 3 ? ", ..." : ""})`;
    if (r.exitCode !== 0)
      v(all, "cli", "exit", `gpu-pilot check --fix exited ${r.exitCode}: ${r.stderr.trim().split("\n").pop()}`);
    else if (!summary)
      v(
        all,
        "cli",
        "no summary",
        `no summary line in the output of gpu-pilot check --fix: ${r.stdout.trim().split("\n").pop()}`,
      );
    else if (summary.fixed !== fixed || summary.remaining !== remaining)
      v(
        all,
        "cli",
        "summary",
        `gpu-pilot check --fix says ${summary.fixed} fixed, ${summary.remaining} remaining; fix-all fixed ${fixed} and ${remaining} remain`,
      );
    items.forEach((it, i) => {
      const written = readFileSync(copies[i], "utf8");
      if (it.unit.kind === "notebook") {
        const changed = it.fixed.map((t, k) => t !== it.unit.texts[k]);
        let cells: string[] | null = null;
        try {
          cells = cellsOfIpynb(written.replace(/^\ufeff/, "")).map((c) => c.text);
        } catch (e) {
          v(
            it.file,
            "cli",
            "unreadable notebook",
            `the notebook gpu-pilot --fix wrote does not load: ${(e as Error).message}`,
          );
        }
        if (cells && cells.some((t, k) => t !== it.fixed[k]))
          v(it.file, "cli", "cells differ", "the cells gpu-pilot --fix wrote differ from the engine's fix-all");
        if (cells)
          for (const p of notebookShape(
            it.raw.replace(/^\ufeff/, ""),
            written.replace(/^\ufeff/, ""),
            changed,
            it.unit.texts,
            it.fixed,
          ))
            v(it.file, "notebook", p.key, p.detail);
      } else {
        const expected = (it.bom ? "\ufeff" : "") + it.fixed[0];
        if (written !== expected)
          v(it.file, "cli", "text differs", "the text gpu-pilot --fix wrote differs from the engine's fix-all");
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The report as text: a summary line, then one line per violation. */
export function formatReport(paths: string[], r: FixPropertyReport): string {
  const head = `fix property over ${paths.join(", ")}: ${r.files} files, ${r.fixable} with a safe fix, ${r.applied} fixes applied, ${r.violations.length} violation${r.violations.length === 1 ? "" : "s"}${r.notRun.length ? `; not run: ${r.notRun.join("; ")}` : ""}`;
  return [head, ...r.violations.map((x) => `  ${x.kind.padEnd(11)} ${x.file}: ${x.detail}`)].join("\n");
}

/** Writes `text` to `file` (used by the tests to build small trees). */
export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [p, t] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), t);
  }
}
