/**
 * The rule snapshots' machinery (test/unit/rules/snapshot.ts): how a finding and its fix read, and
 * what a run does with a missing, stale or matching snapshot file (in CI, locally, with
 * UPDATE_SNAPSHOTS=1).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { checkSnapshot, renderNotebookFixture, renderSnapshot, renderTextFixture } from "./snapshot";
import type { LintDiagnostic } from "../../../server/src/engine/types";
import type { CellDiagnostic } from "../../../server/src/engine/notebook";

const at = (line: number, from: number, to: number) => ({
  start: { line, character: from },
  end: { line, character: to },
});

test("a text fixture's finding reads as code, severity, 1-based range, message, related, and its fix as title, safety, note and diff", () => {
  const text = "import os\nimport torch\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
  const d: LintDiagnostic = {
    code: "GPU001",
    name: "env-after-cuda-init",
    severity: "error",
    message: "too late",
    range: at(3, 0, 40),
    related: [{ range: at(2, 0, 17), message: "CUDA initialised here" }],
    fix: {
      title: "Move it up",
      safe: true,
      note: "restart",
      edits: [
        { range: at(3, 0, 41), newText: "" },
        { range: at(1, 0, 0), newText: "os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n" },
      ],
    },
  };
  const quiet: LintDiagnostic = {
    code: "GPU001",
    name: "env-after-cuda-init",
    severity: "warning",
    message: "first",
    range: at(0, 0, 2),
  };
  assert.deepEqual(renderTextFixture("late.py", text, [d, quiet]), {
    name: "late.py",
    body: [
      "GPU001 warning at 1:1-1:3",
      "  first",
      "",
      "GPU001 error at 4:1-4:41",
      "  too late",
      "  related 3:1-3:18: CUDA initialised here",
      "  fix (safe): Move it up",
      "    note: restart",
      "    --- a/late.py",
      "    +++ b/late.py",
      "    @@ -1,4 +1,4 @@",
      "     import os",
      "    +os.environ['CUDA_VISIBLE_DEVICES'] = '1'",
      "     import torch",
      "     torch.cuda.init()",
      "    -os.environ['CUDA_VISIBLE_DEVICES'] = '1'",
    ].join("\n"),
  });
  assert.deepEqual(renderTextFixture("ok.py", "x = 1\n", []), { name: "ok.py", body: "(no findings)" });
});

test("a notebook fixture's finding names its cell, and its fix is a diff of each cell it changes", () => {
  const cells = [{ text: "import torch" }, { text: "!export CUDA_VISIBLE_DEVICES=1" }];
  const d: CellDiagnostic = {
    code: "GPU014",
    name: "notebook-shell-export",
    severity: "warning",
    message: "subshell",
    cell: 1,
    range: at(0, 0, 30),
    fix: {
      title: "Use %env",
      safe: false,
      edits: [{ cell: 1, range: at(0, 0, 30), newText: "%env CUDA_VISIBLE_DEVICES=1" }],
    },
  };
  assert.equal(
    renderNotebookFixture("n.ipynb", cells, [d]).body,
    [
      "GPU014 warning at cell 2, 1:1-1:31",
      "  subshell",
      "  fix (unsafe): Use %env",
      "    --- a/n.ipynb cell 2",
      "    +++ b/n.ipynb cell 2",
      "    @@ -1,1 +1,1 @@",
      "    -!export CUDA_VISIBLE_DEVICES=1",
      "    \\ No newline at end of file",
      "    +%env CUDA_VISIBLE_DEVICES=1",
      "    \\ No newline at end of file",
    ].join("\n"),
  );
});

test("a rule's snapshot has a header and its fixtures in name order", () => {
  const text = renderSnapshot("GPU099", [
    { name: "b.py", body: "(no findings)" },
    { name: "a.py", body: "GPU099 error at 1:1-1:2\n  m" },
  ]);
  assert.equal(
    text,
    [
      "# GPU099: what the user sees on each fixture of test/fixtures/rules/GPU099/",
      "# Checked by test/unit/rules/GPU099.test.ts; rewrite with UPDATE_SNAPSHOTS=1 and review the diff.",
      "# Ranges: line:column-line:column, 1-based, end exclusive.",
      "",
      "## a.py",
      "",
      "GPU099 error at 1:1-1:2\n  m",
      "",
      "## b.py",
      "",
      "(no findings)",
      "",
    ].join("\n"),
  );
});

test("checkSnapshot: a missing snapshot fails in CI (and writes nothing), is written locally; a stale one fails with the diff; UPDATE_SNAPSHOTS=1 rewrites it", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-snap-"));
  const file = join(dir, "GPU099.snap");
  assert.throws(
    () => checkSnapshot(file, "new\n", "REMAKE-IT", { CI: "1" }),
    /GPU099\.snap is missing: run REMAKE-IT, review the file and commit it/,
  );
  assert.equal(existsSync(file), false, "CI never writes a snapshot");
  checkSnapshot(file, "one\ntwo\n", "REMAKE-IT", {});
  assert.equal(readFileSync(file, "utf8"), "one\ntwo\n", "written outside CI");
  checkSnapshot(file, "one\ntwo\n", "REMAKE-IT", { CI: "1" });
  assert.throws(
    () => checkSnapshot(file, "one\nthree\n", "REMAKE-IT", {}),
    (e: Error) => /differs from what the rules report now/.test(e.message) && /-two\n\+three/.test(e.message),
  );
  assert.equal(readFileSync(file, "utf8"), "one\ntwo\n", "a stale snapshot is not rewritten without UPDATE_SNAPSHOTS");
  checkSnapshot(file, "one\nthree\n", "REMAKE-IT", { UPDATE_SNAPSHOTS: "1", CI: "1" });
  assert.equal(readFileSync(file, "utf8"), "one\nthree\n");
});
