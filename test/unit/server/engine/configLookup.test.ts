// Where the pyproject.toml lookup stops (issue 18, item 12): at the repository root (a folder with
// `.git`) or a workspace folder, never a pyproject.toml above them (/tmp or /home on a shared host
// could hold anyone's); above no root at all, a pyproject.toml owned by another user is not read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chownSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPyproject } from "../../../../server/src/engine/config";
import { resolveLintOptions } from "../../../../server/src/engine/options";

const IGNORE_ALL = '[tool.gpu-pilot]\nignore = ["GPU"]\n';

function tree(): string {
  const top = mkdtempSync(join(tmpdir(), "gp-cfg-"));
  writeFileSync(join(top, "pyproject.toml"), IGNORE_ALL);
  mkdirSync(join(top, "repo", ".git"), { recursive: true });
  mkdirSync(join(top, "repo", "sub"), { recursive: true });
  mkdirSync(join(top, "plain", "sub"), { recursive: true });
  mkdirSync(join(top, "ws", "sub"), { recursive: true });
  return top;
}

test("the lookup stops at the repository root and at a workspace folder", () => {
  const top = tree();
  assert.equal(findPyproject(join(top, "repo", "sub")), null, "not above the folder holding .git");
  assert.equal(findPyproject(join(top, "ws", "sub"), [join(top, "ws")]), null, "not above the workspace folder");
  assert.equal(findPyproject(join(top, "plain", "sub")), join(top, "pyproject.toml"), "no root: on up (own file)");
  writeFileSync(join(top, "repo", "pyproject.toml"), "[tool.gpu-pilot]\n");
  assert.equal(
    findPyproject(join(top, "repo", "sub")),
    join(top, "repo", "pyproject.toml"),
    "the repository's own is found",
  );
  // A .git file (worktrees, submodules) marks a root too.
  mkdirSync(join(top, "wt", "sub"), { recursive: true });
  writeFileSync(join(top, "wt", ".git"), "gitdir: /elsewhere\n");
  assert.equal(findPyproject(join(top, "wt", "sub")), null);
  // Through resolveLintOptions (the server passes its workspace folders).
  const file = join(top, "ws", "sub", "a.py");
  assert.equal(resolveLintOptions(file, {}, "editorFirst", {}, [join(top, "ws")]).pyproject, null);
  assert.equal(resolveLintOptions(file, {}, "editorFirst", {}).pyproject, join(top, "pyproject.toml"));
});

test(
  "above every root, a pyproject.toml owned by another user is not read",
  { skip: typeof process.getuid !== "function" || process.getuid() !== 0 },
  () => {
    const top = tree();
    chownSync(join(top, "pyproject.toml"), 4242, 4242);
    assert.equal(findPyproject(join(top, "plain", "sub")), null);
    // Inside a repository another user's file is the project's (a shared checkout).
    writeFileSync(join(top, "repo", "pyproject.toml"), "[tool.gpu-pilot]\n");
    chownSync(join(top, "repo", "pyproject.toml"), 4242, 4242);
    assert.equal(findPyproject(join(top, "repo", "sub")), join(top, "repo", "pyproject.toml"));
  },
);
