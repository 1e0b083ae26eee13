// `gpu-pilot check` leaves out what the project excludes, as Ruff does: `[tool.gpu-pilot] exclude` /
// `extend-exclude`, `--extend-exclude`, the work tree's `.gitignore` files (`--no-respect-gitignore`,
// `respect-gitignore = false`); a path named on the command line is checked unless `--force-exclude`
// (the pre-commit hook's). And `-q`/`--quiet`, `-s`/`--silent`, `--output-format`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { runCli as cli } from "../support/cliRun";

const LATE = "import torch\nimport os\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";

/** A git work tree with the same late write in src/, third_party/, wandb/ (git-ignored), venv/ and gen/. */
function project(pyproject = ""): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-cli-exclude-"));
  execFileSync("git", ["init", "-q", dir]);
  for (const f of [
    "src/train.py",
    "third_party/lib/vendored.py",
    "wandb/run-1/files/code/train.py",
    "venv/lib/x.py",
    "gen/model_pb2.py",
  ]) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), LATE);
  }
  writeFileSync(join(dir, ".gitignore"), "wandb/\n");
  if (pyproject) writeFileSync(join(dir, "pyproject.toml"), pyproject);
  return dir;
}

/** The files with findings, relative to `dir`, sorted. */
async function checked(dir: string, ...flags: string[]): Promise<string[]> {
  const r = await cli(["check", "--format", "json", "--exit-zero", "--no-cache", ...flags]);
  assert.equal(r.code, 0, r.err);
  const files = (JSON.parse(r.out) as Array<{ filename: string }>).map((d) => relative(dir, d.filename));
  return [...new Set(files)].sort();
}

test("a folder walk leaves out the defaults (venv) and what .gitignore ignores (wandb/); --no-respect-gitignore checks those", async () => {
  const dir = project();
  assert.deepEqual(await checked(dir, dir), ["gen/model_pb2.py", "src/train.py", "third_party/lib/vendored.py"]);
  assert.deepEqual(await checked(dir, "--no-respect-gitignore", dir), [
    "gen/model_pb2.py",
    "src/train.py",
    "third_party/lib/vendored.py",
    "wandb/run-1/files/code/train.py",
  ]);
});

test("[tool.gpu-pilot] extend-exclude adds patterns, exclude replaces the defaults, respect-gitignore = false", async () => {
  const extend = project('[tool.gpu-pilot]\nextend-exclude = ["third_party", "*_pb2.py"]\n');
  assert.deepEqual(await checked(extend, extend), ["src/train.py"]);
  const replace = project('[tool.gpu-pilot]\nexclude = ["third_party"]\nrespect-gitignore = false\n');
  assert.deepEqual(await checked(replace, replace), [
    "gen/model_pb2.py",
    "src/train.py",
    "venv/lib/x.py",
    "wandb/run-1/files/code/train.py",
  ]);
  // --respect-gitignore wins over the pyproject's false.
  assert.deepEqual(await checked(replace, "--respect-gitignore", replace), [
    "gen/model_pb2.py",
    "src/train.py",
    "venv/lib/x.py",
  ]);
});

test("--extend-exclude patterns (comma-separated) add to the pyproject's", async () => {
  const dir = project('[tool.gpu-pilot]\nextend-exclude = ["third_party"]\n');
  assert.deepEqual(await checked(dir, "--extend-exclude", "gen/*.py, nothing", dir), ["src/train.py"]);
});

test("a path named on the command line is checked even when excluded (a folder whole); --force-exclude leaves it out", async () => {
  const dir = project('[tool.gpu-pilot]\nextend-exclude = ["third_party"]\n');
  const vendored = join(dir, "third_party", "lib", "vendored.py");
  assert.deepEqual(await checked(dir, vendored), ["third_party/lib/vendored.py"]);
  // A named excluded folder is checked whole but for the default folders (a venv inside it).
  mkdirSync(join(dir, "third_party", "venv"));
  writeFileSync(join(dir, "third_party", "venv", "site.py"), LATE);
  assert.deepEqual(await checked(dir, join(dir, "third_party")), ["third_party/lib/vendored.py"]);
  assert.deepEqual(await checked(dir, "--force-exclude", vendored, join(dir, "src", "train.py")), ["src/train.py"]);
  assert.deepEqual(await checked(dir, "--force-exclude", join(dir, "third_party")), []);
  // Without a pyproject.toml, a named file in a default folder below the working folder is left out too.
  const plain = mkdtempSync(join(process.cwd(), ".gp-cli-exclude-"));
  try {
    mkdirSync(join(plain, "venv"));
    writeFileSync(join(plain, "venv", "site.py"), LATE);
    assert.deepEqual(await checked(plain, "--force-exclude", join(plain, "venv", "site.py")), []);
    assert.deepEqual(await checked(plain, join(plain, "venv", "site.py")), ["venv/site.py"]);
  } finally {
    rmSync(plain, { recursive: true, force: true });
  }
  const nothing = await cli(["check", "--force-exclude", vendored]);
  assert.deepEqual([nothing.code, nothing.out], [0, "All checks passed!\n"]);
  assert.match(
    nothing.err,
    /^gpu-pilot: no file to check under the given paths \(none of the kinds GPU Pilot reads, or every one excluded\)\n/,
  );
  // --stdin-filename naming an excluded file: nothing reported; with --fix the text comes back as it was.
  const stdin = await cli(["check", "--force-exclude", "--fix", "--stdin-filename", vendored], LATE);
  assert.equal(stdin.code, 0, stdin.err);
  assert.equal(stdin.out, LATE);
  const unforced = await cli(["check", "--format", "json", "--stdin-filename", vendored], LATE);
  assert.equal(unforced.code, 1, "without --force-exclude the stdin text is checked");
});

test("-q prints the findings without the summary; -s prints nothing; the exit code still says 1; --output-format is --format", async () => {
  const dir = project();
  const file = join(dir, "src", "train.py");
  const full = await cli(["check", "--no-cache", file]);
  assert.equal(full.code, 1);
  assert.match(full.out, /Found 1 problem\./);
  for (const q of ["-q", "--quiet"]) {
    const quiet = await cli(["check", "--no-cache", q, file]);
    assert.equal(quiet.code, 1);
    assert.match(quiet.out, /train\.py:4:1: error GPU001 /);
    assert.doesNotMatch(quiet.out, /Found|fixable/);
  }
  for (const s of ["-s", "--silent"]) {
    const silent = await cli(["check", "--no-cache", s, file]);
    assert.deepEqual([silent.code, silent.out, silent.err], [1, "", ""]);
  }
  const clean = await cli(["check", "--no-cache", "-q", join(dir, "nothing-here.py")]);
  assert.equal(clean.code, 2, "a usage error still speaks under -q");
  assert.match(clean.err, /no such file or folder/);
  const exclude = await cli(["check", "--exclude", "gen", file]);
  assert.equal(exclude.code, 2);
  assert.match(exclude.err, /--exclude is not an option: use --extend-exclude PATTERNS, or exclude = \[\.\.\.\]/);
  const json = await cli(["check", "--no-cache", "--output-format", "json", file]);
  assert.equal((JSON.parse(json.out) as unknown[]).length, 1);
});
