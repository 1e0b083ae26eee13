#!/usr/bin/env node
// `npm run recall`: the recall benchmark (test/recall/README.md). Lints each case's bug/ and fixed/
// folders with the CLI's default rules and prints, per category, coverage (cases a rule is documented
// to catch), recall (covered cases whose every expected finding is reported at its line) without and
// with the reporter's GPU count (`--gpus N`), and whether every fixed/ version is clean (no warning or
// error).
//
// Usage: node scripts/recall.mjs [--case SLUG]... [--json FILE] [--misses] [--preview]
//   --case     only these cases
//   --json     write every case's result to FILE
//   --misses   list each covered case that was missed, with what the CLI reported
//   --preview  lint with the preview rules on as well (reported as such)
// Exit code: 0 after a measurement, 1 when a fixed/ version has a warning or error, 2 when a case is
// malformed (see validateCase) or the CLI fails.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, dirname, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { loadCases } from "./recallCases.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const only = [];
let jsonOut = null,
  misses = false,
  preview = false;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--case") only.push(argv[++i]);
  else if (a === "--json") jsonOut = argv[++i];
  else if (a === "--misses") misses = true;
  else if (a === "--preview") preview = true;
  else {
    console.error(`recall: unknown argument ${JSON.stringify(a)}`);
    process.exit(2);
  }
}

const { cases, problems } = loadCases(join(root, "test", "recall", "cases"));
if (problems.length) {
  for (const p of problems) console.error(`recall: ${p}`);
  process.exit(2);
}
const chosen = only.length ? cases.filter((c) => only.includes(c.slug)) : cases;

const cli = join(root, "dist", "cli.js");
// Build the CLI when it is missing or older than the sources (scripts/gpu-pilot.mjs does the check,
// under its build lock): a stale bundle would measure yesterday's rules.
{
  const b = spawnSync(process.execPath, [join(root, "scripts", "gpu-pilot.mjs"), "--version"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (b.status !== 0 || !existsSync(cli)) process.exit(2);
}

/**
 * Lints `dir` with the CLI (JSON, default rules, no cache); returns its findings as
 * `{ file, rule, line, cell, severity, message }` with `file` relative to `dir` ('/'-separated).
 */
/**
 * Lints a copy of the case folder `dir` made in a fresh temporary folder, the user's project as
 * the reporter had it: linted in place, the case's files would belong to GPU Pilot's own
 * repository (its `.git` marks the project root python/project.ts finds), whose thousands of test
 * files the project analysis would then list as the case's project.
 */
function lint(dir, extra = []) {
  const copy = join(mkdtempSync(join(tmpdir(), "gp-recall-")), basename(dirname(dir)));
  cpSync(dir, copy, { recursive: true });
  try {
    return lintInPlace(copy, extra);
  } finally {
    rmSync(dirname(copy), { recursive: true, force: true });
  }
}

function lintInPlace(dir, extra) {
  const r = spawnSync(
    process.execPath,
    [cli, "check", "--format", "json", "--exit-zero", "--no-cache", ...(preview ? ["--preview"] : []), ...extra, dir],
    {
      encoding: "utf8",
      cwd: dir,
      maxBuffer: 1 << 28,
      timeout: 120_000,
    },
  );
  if (r.status !== 0)
    throw new Error(`the CLI failed on a copy of a case (${dir}, exit ${r.status}): ${(r.stderr ?? "").slice(0, 500)}`);
  return JSON.parse(r.stdout).map((d) => ({
    file: relative(dir, d.filename).split(sep).join("/"),
    rule: d.code,
    line: d.location?.row ?? null,
    cell: d.cell ?? null,
    severity: d.severity,
    message: d.message,
  }));
}

/** Whether every expected entry is among `found` (same file, rule, line and, in a notebook, cell). */
function allFound(expect, found) {
  return expect.every((e) =>
    found.some(
      (f) => f.file === e.file && f.rule === e.rule && f.line === e.line && (e.cell == null || f.cell === e.cell),
    ),
  );
}

const results = [];
for (const c of chosen) {
  const bug = lint(join(c.dir, "bug"));
  const withGpus = c.gpus != null ? lint(join(c.dir, "bug"), ["--gpus", String(c.gpus)]) : bug;
  const fixed = lint(join(c.dir, "fixed"), c.gpus != null ? ["--gpus", String(c.gpus)] : []);
  const loud = fixed.filter((f) => f.severity === "error" || f.severity === "warning");
  results.push({
    slug: c.slug,
    category: c.category,
    covered: c.covered,
    source: c.source,
    date: c.date,
    found: c.covered && allFound(c.expect, bug),
    foundWithGpus: c.covered && allFound(c.expect, withGpus),
    bug,
    fixedLoud: loud,
  });
}

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)}%` : "–");
const categories = [...new Set(results.map((r) => r.category))].sort();
const rows = [...categories.map((cat) => [cat, results.filter((r) => r.category === cat)]), ["all", results]];
console.log(`recall: ${results.length} cases${preview ? " (default + preview rules)" : " (default rules)"}\n`);
console.log("category            cases  covered  coverage  found  recall  found(--gpus)  recall(--gpus)  fixed clean");
for (const [name, rs] of rows) {
  const cov = rs.filter((r) => r.covered);
  const f = cov.filter((r) => r.found).length,
    fg = cov.filter((r) => r.foundWithGpus).length;
  const clean = rs.filter((r) => r.fixedLoud.length === 0).length;
  console.log(
    `${name.padEnd(18)}  ${String(rs.length).padStart(5)}  ${String(cov.length).padStart(7)}  ${pct(cov.length, rs.length).padStart(8)}  ` +
      `${String(f).padStart(5)}  ${pct(f, cov.length).padStart(6)}  ${String(fg).padStart(13)}  ${pct(fg, cov.length).padStart(14)}  ${`${clean}/${rs.length}`.padStart(11)}`,
  );
}
const loudFixed = results.filter((r) => r.fixedLoud.length);
for (const r of loudFixed) {
  for (const f of r.fixedLoud)
    console.log(`\nNOT CLEAN ${r.slug}/fixed/${f.file}:${f.line} ${f.rule} (${f.severity}) ${f.message}`);
}
if (misses) {
  for (const r of results.filter((x) => x.covered && !x.foundWithGpus)) {
    const c = chosen.find((x) => x.slug === r.slug);
    console.log(`\nMISSED ${r.slug} (${r.category}) ${r.source}`);
    for (const e of c.expect)
      console.log(`  expected ${e.file}:${e.line}${e.cell != null ? ` cell ${e.cell}` : ""} ${e.rule}`);
    for (const f of r.bug)
      console.log(`  reported ${f.file}:${f.line}${f.cell != null ? ` cell ${f.cell}` : ""} ${f.rule} (${f.severity})`);
  }
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ preview, results }, null, 1) + "\n");
process.exit(loudFixed.length ? 1 : 0);
