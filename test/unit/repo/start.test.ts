// `npm start` opens a fresh copy of examples/ (scripts/startWorkspace.mjs), so trying quick fixes
// in it never changes the repository's tracked files. Run through node (the module is plain ESM
// that scripts/start.mjs imports without tsx).
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { ROOT } from "../support/helpers";

const MODULE = pathToFileURL(join(ROOT, "scripts", "startWorkspace.mjs")).href;

/** Calls startWorkspace(opts) in a node child process and returns the path it gives. */
function startWorkspace(opts: { repoRoot: string; runDir: string; folder?: string }): string {
  const r = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { startWorkspace } = await import(${JSON.stringify(MODULE)}); process.stdout.write(startWorkspace(${JSON.stringify(opts)}));`,
    ],
    { encoding: "utf8" },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

test("npm start's workspace is a fresh copy of examples/: edits and fixes there leave examples/ unchanged", () => {
  const repo = mkdtempSync(join(tmpdir(), "gp-start-"));
  mkdirSync(join(repo, "examples", "sub"), { recursive: true });
  writeFileSync(
    join(repo, "examples", "wrong.py"),
    'import torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  );
  writeFileSync(join(repo, "examples", "sub", "notebook.ipynb"), "{}\n");
  const runDir = join(repo, ".e2e-run", "start");

  const copy = startWorkspace({ repoRoot: repo, runDir });
  assert.equal(copy, join(runDir, "examples"));
  assert.equal(readFileSync(join(copy, "wrong.py"), "utf8"), readFileSync(join(repo, "examples", "wrong.py"), "utf8"));
  assert.ok(existsSync(join(copy, "sub", "notebook.ipynb")));

  // A quick fix saved in the editor, and a new file: only the copy changes.
  writeFileSync(join(copy, "wrong.py"), 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n');
  writeFileSync(join(copy, "scratch.py"), "print(1)\n");
  assert.equal(
    readFileSync(join(repo, "examples", "wrong.py"), "utf8"),
    'import torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  );
  assert.ok(!existsSync(join(repo, "examples", "scratch.py")));

  // The next start begins again from the tracked files.
  assert.equal(startWorkspace({ repoRoot: repo, runDir }), copy);
  assert.equal(
    readFileSync(join(copy, "wrong.py"), "utf8"),
    'import torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  );
  assert.ok(!existsSync(join(copy, "scratch.py")));
});

test("--folder opens that folder itself (resolved), with no copy", () => {
  const repo = mkdtempSync(join(tmpdir(), "gp-start-"));
  const mine = join(repo, "mine");
  mkdirSync(mine);
  const runDir = join(repo, ".e2e-run", "start");
  assert.equal(startWorkspace({ repoRoot: repo, runDir, folder: mine }), mine);
  assert.ok(!existsSync(join(runDir, "examples")));
});

test("the copy lies under .e2e-run/, which git ignores", () => {
  assert.match(readFileSync(join(ROOT, ".gitignore"), "utf8"), /^\.e2e-run\/$/m);
  assert.match(
    readFileSync(join(ROOT, "scripts", "start.mjs"), "utf8"),
    /startWorkspace\(\{ repoRoot, runDir, folder: opts\.folder \}\)/,
  );
});

test("npm start and scripts/screenshot.mjs: --help prints the options (exit 0); an unknown option is one message with the usage (exit 2), no stack trace", () => {
  for (const script of ["start.mjs", "screenshot.mjs"]) {
    const help = spawnSync(process.execPath, [join(ROOT, "scripts", script), "--help"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: /);
    assert.match(help.stdout, /-h, --help/);
    const bad = spawnSync(process.execPath, [join(ROOT, "scripts", script), "--bogus"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(bad.status, 2, `${script}: ${bad.stderr}`);
    assert.match(bad.stderr, /Unknown option '--bogus'\nusage: /);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, "no stack trace");
  }
});
