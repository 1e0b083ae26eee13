/** Test helpers: lint a string or a fixture, read `# expect: GPUnnn` annotations. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { initEngine, lintPython, type LintOptions } from "../../../server/src/engine/lint";
import { parsePython, syntaxErrorCount } from "../../../server/src/engine/python/parser";
import { applyEdits } from "../../../server/src/engine/fixes";
import type { LintDiagnostic } from "../../../server/src/engine/types";
import { ROOT } from "./root";

export { ROOT };
/**
 * A project folder in the temporary folder (with a pyproject.toml, so it is the project root)
 * holding `files` (relative path: text; folders made as needed). Returns its path.
 */
export function projectTree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-project-"));
  writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'demo'\n");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/**
 * A project whose `tools.env.pin_gpu()` sets CUDA_VISIBLE_DEVICES as its first statement (line 5),
 * and `run.py` calls it after `torch.cuda.is_available()` (line 5: GPU001 with the project index).
 */
export const WRITER_PROJECT: Readonly<Record<string, string>> = {
  "tools/__init__.py": "",
  "tools/env.py": 'import os\n\n\ndef pin_gpu():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  "run.py": "import torch\nfrom tools.env import pin_gpu\n\nprint(torch.cuda.is_available())\npin_gpu()\n",
};

/** The project's rule cases with their expected.json (test/cases/README.md). */
export const CASES = join(ROOT, "test", "cases");
/** A rule case's path: test/cases/<name>. */
export const caseFile = (name: string): string => join(CASES, name);

/** The files below `dir` (recursively; none when it does not exist) whose name passes `keep`. */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p, keep));
    else if (keep(n)) out.push(p);
  }
  return out;
}

/** Lints Python text (loads the engine on first use). */
export async function lint(text: string, options: LintOptions = {}): Promise<LintDiagnostic[]> {
  await initEngine();
  const r = lintPython(text, options);
  r.tree?.delete();
  if (r.ruleFailures.length) throw new Error(`rule failures: ${JSON.stringify(r.ruleFailures)}`);
  return r.diagnostics;
}

/** Lints and keeps only one code. */
export async function lintCode(text: string, code: string, options: LintOptions = {}): Promise<LintDiagnostic[]> {
  return (await lint(text, options)).filter((d) => d.code === code);
}

/** 1-based lines annotated `# expect: CODE` (several codes may be listed, comma-separated). */
export function expectedLines(text: string, code: string): number[] {
  const out: number[] = [];
  text.split("\n").forEach((line, i) => {
    const at = line.indexOf("# expect:");
    if (
      at >= 0 &&
      line
        .slice(at + 9)
        .split(",")
        .map((s) => s.trim())
        .includes(code)
    )
      out.push(i + 1);
  });
  return out;
}

/** The fixture files of a rule: test/fixtures/rules/<code>/*.py */
export function fixtureFiles(code: string): Array<{ name: string; text: string }> {
  const dir = join(ROOT, "test", "fixtures", "rules", code);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".py"))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(dir, name), "utf8") }));
}

/** Applies a diagnostic's fix and returns the new text, asserting it parses with no new errors. */
export function applyFix(text: string, d: LintDiagnostic): string {
  if (!d.fix) throw new Error(`${d.code} has no fix`);
  const out = applyEdits(text, d.fix.edits);
  const before = parsePython(text);
  const after = parsePython(out);
  const ok = syntaxErrorCount(after) <= syntaxErrorCount(before);
  before.delete();
  after.delete();
  if (!ok) throw new Error(`fix produced a syntax error:\n${out}`);
  return out;
}
