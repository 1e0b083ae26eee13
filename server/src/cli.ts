/**
 * The command-line interface: `gpu-pilot check [--format text|json] PATH...`
 * Lints .py files and .ipynb notebooks (folders are searched recursively) with the same engine as
 * the language server. Exit codes: 0 clean, 1 something was reported, 2 bad usage or an unreadable
 * path (message on stderr).
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve, extname, basename } from "node:path";
import { docUrl } from "./docsUrl";
import { initEngine, lintPython, type LintOptions } from "./engine/lint";
import { cellsOfIpynb, lintNotebook } from "./engine/notebook";
import type { LintDiagnostic, Range, TextEdit } from "./engine/types";

const USAGE = `usage: gpu-pilot check [--format text|json] PATH...
  PATH    a .py or .ipynb file, or a folder (searched recursively)
exit codes: 0 nothing reported, 1 problems reported, 2 bad usage or unreadable path`;

const SKIP_DIRS = new Set(["node_modules", "__pycache__", ".git", ".hg", ".venv", "venv", ".tox", ".mypy_cache", ".ruff_cache", "site-packages", ".ipynb_checkpoints"]);

/** Thrown for bad usage; the message goes to stderr and the exit code is 2. */
class UsageError extends Error {}

interface CliArgs { command: string; format: "text" | "json"; paths: string[] }

function parseArgs(argv: string[]): CliArgs {
  const [command, ...rest] = argv;
  if (!command || command === "-h" || command === "--help") throw new UsageError(USAGE);
  if (command !== "check") throw new UsageError(`unknown command "${command}"\n${USAGE}`);
  let format: CliArgs["format"] = "text";
  const paths: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === "--format" || a.startsWith("--format=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : rest[++i];
      if (v !== "text" && v !== "json") throw new UsageError(`--format must be text or json, not "${v ?? ""}"`);
      format = v;
    } else if (a === "--") {
      paths.push(...rest.slice(i + 1));
      break;
    } else if (a.startsWith("-") && a !== "-") {
      throw new UsageError(`unknown option "${a}"\n${USAGE}`);
    } else paths.push(a);
  }
  if (paths.length === 0) throw new UsageError(`no PATH given\n${USAGE}`);
  return { command, format, paths };
}

/** Expands folders into .py/.ipynb files (sorted, hidden and virtualenv folders skipped). */
function collectFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try { names = readdirSync(dir).sort(); } catch (e) { throw new UsageError(`cannot read folder ${dir}: ${(e as Error).message}`); }
    for (const n of names) {
      const p = join(dir, n);
      let st;
      try { st = statSync(p); } catch { continue; }
      if (st.isDirectory()) { if (!n.startsWith(".") && !SKIP_DIRS.has(n)) walk(p); }
      else if (n.endsWith(".py") || n.endsWith(".ipynb")) out.push(p);
    }
  };
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try { st = statSync(abs); } catch { throw new UsageError(`no such file or folder: ${p}`); }
    if (st.isDirectory()) walk(abs);
    else out.push(abs);
  }
  return out;
}

/** One reported problem in Ruff's JSON shape (1-based rows and columns). */
export interface JsonDiagnostic {
  cell: number | null;
  code: string;
  end_location: { row: number; column: number };
  filename: string;
  fix: { applicability: "safe" | "unsafe"; message: string; edits: Array<{ content: string; location: { row: number; column: number }; end_location: { row: number; column: number } }> } | null;
  location: { row: number; column: number };
  message: string;
  noqa_row: number;
  url: string;
  severity: string;
}


const loc = (p: { line: number; character: number }) => ({ row: p.line + 1, column: p.character + 1 });

function toJson(filename: string, d: LintDiagnostic | (Omit<LintDiagnostic, "fix"> & { fix?: { title: string; safe: boolean; edits: TextEdit[] } }), cell: number | null): JsonDiagnostic {
  const r: Range = d.range;
  return {
    cell, code: d.code, end_location: loc(r.end), filename,
    fix: d.fix ? { applicability: d.fix.safe ? "safe" : "unsafe", message: d.fix.title, edits: d.fix.edits.map((e) => ({ content: e.newText, location: loc(e.range.start), end_location: loc(e.range.end) })) } : null,
    location: loc(r.start), message: d.message, noqa_row: r.start.line + 1, url: docUrl(d.code), severity: d.severity,
  };
}

/** Lints one file; returns its diagnostics or throws with a clear message. */
function checkFile(file: string, options: LintOptions): JsonDiagnostic[] {
  let text: string;
  try { text = readFileSync(file, "utf8"); } catch (e) { throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`); }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (extname(file) === ".ipynb") {
    let cells;
    try { cells = cellsOfIpynb(text); } catch (e) { throw new UsageError(`cannot read notebook ${file}: ${(e as Error).message}`); }
    return lintNotebook(cells, options).diagnostics.map((d) => {
      const { fix, ...rest } = d;
      return toJson(file, { ...rest, related: undefined, ...(fix ? { fix: { title: fix.title, safe: fix.safe, edits: fix.edits } } : {}) }, d.cell + 1);
    });
  }
  const result = lintPython(text, options);
  result.tree.delete();
  return result.diagnostics.map((d) => toJson(file, d, null));
}

function formatText(all: JsonDiagnostic[], cwd: string): string {
  const lines = all.map((d) => {
    const name = d.filename.startsWith(cwd + "/") ? d.filename.slice(cwd.length + 1) : d.filename;
    const where = d.cell !== null ? `${name}:cell ${d.cell}:${d.location.row}:${d.location.column}` : `${name}:${d.location.row}:${d.location.column}`;
    return `${where}: ${d.code} ${d.message}${d.fix ? ` [fix: ${d.fix.message}]` : ""}`;
  });
  const fixable = all.filter((d) => d.fix).length;
  lines.push(all.length === 0 ? "All checks passed!" : `Found ${all.length} problem${all.length === 1 ? "" : "s"}${fixable ? ` (${fixable} with a quick fix)` : ""}.`);
  return lines.join("\n") + "\n";
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[], io: { out: (s: string) => void; err: (s: string) => void } = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }): Promise<number> {
  try {
    const args = parseArgs(argv);
    const files = collectFiles(args.paths);
    await initEngine();
    const options: LintOptions = {};
    const all: JsonDiagnostic[] = [];
    for (const f of files) all.push(...checkFile(f, options));
    io.out(args.format === "json" ? JSON.stringify(all, null, 2) + "\n" : formatText(all, process.cwd()));
    return all.length > 0 ? 1 : 0;
  } catch (e) {
    if (e instanceof UsageError) { io.err(`gpu-pilot: ${e.message}\n`); return 2; }
    io.err(`gpu-pilot: internal error: ${e instanceof Error ? e.stack : String(e)}\n`);
    return 2;
  }
}

if (require.main === module || basename(process.argv[1] ?? "") === "cli.js") {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
