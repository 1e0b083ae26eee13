import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, SHARED } from "./helpers";

const CLI = join(ROOT, "dist", "cli.js");
const run = (args: string[], input?: string) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", input, cwd: ROOT });

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

test("check --format json prints Ruff-shaped diagnostics and exits 1", () => {
  const r = run(["check", "--format", "json", join(SHARED, "cases", "c01_env_after_is_available.py")]);
  assert.equal(r.status, 1, r.stderr);
  const [d] = JSON.parse(r.stdout);
  assert.equal(d.code, "GPU001");
  assert.deepEqual(d.location, { row: 6, column: 1 });
  assert.deepEqual(d.end_location, { row: 6, column: 41 });
  assert.equal(d.noqa_row, 6);
  assert.equal(d.cell, null);
  assert.equal(d.fix.applicability, "safe");
  assert.match(d.url, /^file:\/\/.*docs\/rules\/GPU001\.md$/);
  assert.ok(d.filename.endsWith("c01_env_after_is_available.py"));
});

test("a clean file exits 0 with 'All checks passed!'", () => {
  const r = run(["check", join(SHARED, "cases", "c03_env_before_import_ok.py")]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /All checks passed!/);
});

test("folders are searched for .py and .ipynb; notebooks report 1-based cells", () => {
  const r = run(["check", "--format", "json", join(SHARED, "cases")]);
  assert.equal(r.status, 1);
  const all = JSON.parse(r.stdout) as Array<{ filename: string; cell: number | null; code: string; location: { row: number } }>;
  const nb = all.filter((d) => d.filename.endsWith("c20_notebook.ipynb"));
  assert.ok(nb.some((d) => d.code === "GPU001" && d.cell === 2 && d.location.row === 2), JSON.stringify(nb));
});

test("bad usage and unreadable paths exit 2 with a message on stderr", () => {
  const missing = run(["check", "/nonexistent/dir/x.py"]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no such file or folder: \/nonexistent\/dir\/x\.py/);
  const noPath = run(["check"]);
  assert.equal(noPath.status, 2);
  assert.match(noPath.stderr, /no PATH given/);
  const badFormat = run(["check", "--format", "xml", "x.py"]);
  assert.equal(badFormat.status, 2);
  assert.match(badFormat.stderr, /--format must be/);
  const dir = mkdtempSync(join(tmpdir(), "gp-cli-"));
  writeFileSync(join(dir, "broken.ipynb"), "{ not json");
  const broken = run(["check", join(dir, "broken.ipynb")]);
  assert.equal(broken.status, 2);
  assert.match(broken.stderr, /cannot read notebook .*broken\.ipynb/);
});

test("a file with syntax errors is still linted, and odd names work", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp cli 'weird' $(x) "));
  const f = join(dir, "a b;$(rm -rf).py");
  writeFileSync(f, 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ndef broken(:\n');
  const r = run(["check", "--format", "json", f]);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(JSON.parse(r.stdout)[0].code, "GPU001");
});
