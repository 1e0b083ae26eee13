/**
 * The project's rule cases (test/cases, README there): every file goes through the CLI
 * (`dist/cli.js check --format json`, the contract's interface) once, and each file's expected.json
 * entry is checked as its own test: every `[code, row(, {cell})]` of `expect` is reported there, no
 * code of `forbid` is reported anywhere in the file. The contract's own cases (../shared/cases) run
 * through the contract's checker in .ci/run, not here: a clone without ../shared tests the same.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { ROOT, CASES } from "../support/helpers";

/** One entry of expected.json: `expect` holds [code, 1-based row] or [code, row, { cell: 1-based }]. */
interface CaseExpectation {
  expect: Array<[string, number] | [string, number, { cell: number }]>;
  forbid: string[];
}
/** The CLI's JSON diagnostic, the fields checked here (Ruff's shape; `cell` is 1-based or null). */
interface CliDiagnostic {
  filename: string;
  code: string;
  cell: number | null;
  location: { row: number; column: number };
  message: string;
}

const CLI = join(ROOT, "dist", "cli.js");
const expected = JSON.parse(readFileSync(join(CASES, "expected.json"), "utf8")) as Record<
  string,
  CaseExpectation | string
>;
const names = Object.keys(expected)
  .filter((k) => !k.startsWith("_"))
  .sort();
let diagnostics: CliDiagnostic[] = [];

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
  const r = spawnSync(process.execPath, [CLI, "check", "--format", "json", ...names.map((n) => join(CASES, n))], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  assert.ok(r.status === 0 || r.status === 1, `the CLI exited ${r.status}: ${r.stderr}`);
  diagnostics = JSON.parse(r.stdout) as CliDiagnostic[];
});

test("expected.json and test/cases list the same files", () => {
  const onDisk = readdirSync(CASES)
    .filter((f) => f.endsWith(".py") || f.endsWith(".ipynb"))
    .sort();
  assert.deepEqual(names, onDisk);
  assert.ok(names.length >= 24, `only ${names.length} cases`);
});

for (const name of names) {
  test(`case ${name}`, () => {
    const want = expected[name] as CaseExpectation;
    const got = diagnostics.filter((d) => basename(d.filename) === name);
    const show = () =>
      got.map((d) => `${d.code} row ${d.location.row}${d.cell === null ? "" : ` cell ${d.cell}`}`).join(", ") ||
      "nothing";
    for (const [code, row, extra] of want.expect) {
      const hit = got.some(
        (d) => d.code === code && d.location.row === row && (extra === undefined || d.cell === extra.cell),
      );
      assert.ok(
        hit,
        `${name}: ${code} expected at row ${row}${extra ? ` of cell ${extra.cell}` : ""}; the CLI reported ${show()}`,
      );
    }
    for (const code of want.forbid) {
      const bad = got.filter((d) => d.code === code);
      assert.deepEqual(
        bad.map((d) => `${d.code} row ${d.location.row}: ${d.message}`),
        [],
        `${name}: ${code} must not be reported`,
      );
    }
  });
}
