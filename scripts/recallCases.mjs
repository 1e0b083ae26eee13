// The recall benchmark's cases (test/recall/README.md): loading and validation, shared by
// scripts/recall.mjs and test/unit/repo/recallCases.test.ts.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** The categories of test/recall/README.md. */
export const RECALL_CATEGORIES = [
  "direct",
  "whole-program",
  "init-at-import",
  "value-flow",
  "rank",
  "launch",
  "job-script",
  "framework-setting",
  "notebook",
];

/** Files under `dir` (relative, '/'-separated), sorted; [] when `dir` is missing. */
function filesUnder(dir, prefix = "") {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...filesUnder(join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.isFile()) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

const RULE = /^GPU\d{3}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Checks one parsed case.json of the case folder `dir`; returns the problems found (strings, empty
 * when the case is well formed): the fields of test/recall/README.md, a report date in 2022-2026,
 * bug/ and fixed/ holding the same file names, every expected file in bug/ and every expected line
 * inside its file (for a notebook, inside its cell).
 */
export function validateCase(dir, c) {
  const p = [];
  if (typeof c !== "object" || c === null || Array.isArray(c)) return ["case.json is not an object"];
  if (typeof c.source !== "string" || !/^https:\/\/\S+$/.test(c.source)) p.push("source: not an https URL");
  const d = DATE.exec(typeof c.date === "string" ? c.date : "");
  if (!d) p.push("date: not YYYY-MM-DD");
  else if (
    Number(d[1]) < 2022 ||
    Number(d[1]) > 2026 ||
    Number(d[2]) < 1 ||
    Number(d[2]) > 12 ||
    Number(d[3]) < 1 ||
    Number(d[3]) > 31
  )
    p.push(`date: ${c.date} is outside 2022-2026 or not a date`);
  if (!RECALL_CATEGORIES.includes(c.category))
    p.push(`category: ${JSON.stringify(c.category)} is not one of ${RECALL_CATEGORIES.join(", ")}`);
  if (typeof c.summary !== "string" || c.summary.trim().length < 20)
    p.push("summary: missing or shorter than 20 characters");
  if (typeof c.covered !== "boolean") p.push("covered: not true or false");
  if (c.covered === false && (typeof c.wanted !== "string" || !c.wanted.trim()))
    p.push("wanted: an uncovered case says what a rule would have to check");
  if (c.gpus !== undefined && !(Number.isInteger(c.gpus) && c.gpus >= 1)) p.push("gpus: not a positive integer");
  const bugFiles = filesUnder(join(dir, "bug")),
    fixedFiles = filesUnder(join(dir, "fixed"));
  if (!bugFiles.length) p.push("bug/: missing or empty");
  if (!fixedFiles.length) p.push("fixed/: missing or empty");
  if (bugFiles.join("\n") !== fixedFiles.join("\n"))
    p.push(`bug/ and fixed/ hold different files (${bugFiles.join(", ")} | ${fixedFiles.join(", ")})`);
  if (!Array.isArray(c.expect) || !c.expect.length) {
    p.push("expect: an empty or missing list");
    return p;
  }
  for (const [i, e] of c.expect.entries()) {
    const at = `expect[${i}]`;
    if (typeof e !== "object" || e === null) {
      p.push(`${at}: not an object`);
      continue;
    }
    if (!(RULE.test(e.rule) || (c.covered === false && e.rule === "new")))
      p.push(`${at}.rule: ${JSON.stringify(e.rule)} is not a GPUnnn code${c.covered === false ? ' or "new"' : ""}`);
    if (!Number.isInteger(e.line) || e.line < 1) {
      p.push(`${at}.line: not a 1-based line`);
      continue;
    }
    if (typeof e.file !== "string" || !bugFiles.includes(e.file)) {
      p.push(`${at}.file: ${JSON.stringify(e.file)} is not a file of bug/`);
      continue;
    }
    const text = readFileSync(join(dir, "bug", e.file), "utf8");
    if (e.file.endsWith(".ipynb")) {
      if (!Number.isInteger(e.cell) || e.cell < 1) {
        p.push(`${at}.cell: a notebook entry names its 1-based cell`);
        continue;
      }
      let cells;
      try {
        cells = JSON.parse(text).cells;
      } catch {
        p.push(`${at}: ${e.file} is not a notebook`);
        continue;
      }
      const cell = Array.isArray(cells) ? cells[e.cell - 1] : undefined;
      const src = cell ? (Array.isArray(cell.source) ? cell.source.join("") : String(cell.source ?? "")) : null;
      if (src === null) p.push(`${at}.cell: ${e.file} has no cell ${e.cell}`);
      else if (e.line > src.split("\n").length)
        p.push(`${at}.line: cell ${e.cell} of ${e.file} has fewer than ${e.line} lines`);
    } else if (e.line > text.split("\n").length) p.push(`${at}.line: ${e.file} has fewer than ${e.line} lines`);
  }
  return p;
}

/**
 * Loads every case folder under `casesDir` (each with a case.json). Returns the well-formed cases
 * (`{ slug, dir, ...case.json }`, sorted by slug) and the problems of the others (strings naming the
 * case), including a source URL used by two cases.
 */
export function loadCases(casesDir) {
  const cases = [],
    problems = [];
  const seen = new Map();
  const slugs = existsSync(casesDir)
    ? readdirSync(casesDir)
        .filter((n) => statSync(join(casesDir, n)).isDirectory())
        .sort()
    : [];
  for (const slug of slugs) {
    const dir = join(casesDir, slug);
    let c;
    try {
      c = JSON.parse(readFileSync(join(dir, "case.json"), "utf8"));
    } catch (e) {
      problems.push(`${slug}: case.json: ${e.message}`);
      continue;
    }
    const p = validateCase(dir, c);
    if (typeof c?.source === "string") {
      const key = c.source.replace(/[#?].*$/, "").replace(/\/$/, "");
      if (seen.has(key)) p.push(`source: also the source of ${seen.get(key)}`);
      else seen.set(key, slug);
    }
    if (p.length) problems.push(...p.map((x) => `${slug}: ${x}`));
    else cases.push({ slug, dir, ...c });
  }
  return { cases, problems };
}
