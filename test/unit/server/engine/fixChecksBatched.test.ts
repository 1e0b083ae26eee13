// Issue 46 item 2: `check` without --fix validated each finding's fix with its own re-parse of the
// text, quadratic in findings (2,000 GPU002 findings, 82 KB: 33 s; 4,500: over 300 s). With more
// than FIXES_CHECKED_ALONE fixes, non-overlapping fixes are checked together (one parse), a failing
// batch halved until the failing fixes are found alone. The count of parses is asserted, not time.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import {
  fixParsesCleanly,
  initEngine,
  lintPython,
  FIXES_CHECKED_ALONE,
  MAX_FIX_CHECKS,
} from "../../../../server/src/engine/lint";
import type { PythonRule } from "../../../../server/src/engine/rule";
import { ruleByCode } from "../../../../server/src/engine/rules/index";

before(async () => {
  await initEngine();
});

const lateWrites = (n: number) =>
  "import os\nimport torch\n" +
  Array.from({ length: n }, (_, i) => `os.environ["CUDA_VISIBLE_DEVICES"] = "${i % 4}"\n`).join("");

test("2,000 GPU002 findings: every move fix checked and kept, with a handful of parses", () => {
  const r = lintPython(lateWrites(2000), { maxFileSizeKB: 0, preview: true, select: ["GPU002"] });
  r.tree?.delete();
  assert.equal(r.diagnostics.filter((d) => d.code === "GPU002").length, 2000);
  assert.equal(r.diagnostics.filter((d) => d.fix).length, 2000);
  assert.ok(r.fixChecks !== undefined && r.fixChecks <= 4, `parses to check 2,000 fixes: ${r.fixChecks}`);
});

/** A rule that reports every `MARK` line, with a fix that inserts `insert(i)` before the i-th one. */
function insertRule(insert: (i: number) => string): PythonRule {
  const base = ruleByCode("GPU001") as PythonRule;
  return {
    meta: { ...base.meta },
    check(ctx) {
      ctx.model.text.split("\n").forEach((l, row) => {
        if (!l.includes("MARK")) return;
        const at = { line: row, character: 0 };
        ctx.report({
          range: { start: at, end: { line: row, character: l.length } },
          message: "mark",
          fix: { title: "insert", safe: true, edits: [{ range: { start: at, end: at }, newText: insert(row) }] },
        });
      });
    },
  };
}

test("with many fixes, the batches keep exactly the fixes that pass alone", () => {
  const n = 3 * FIXES_CHECKED_ALONE;
  const text = Array.from({ length: n }, (_, i) => `MARK_${i} = ${i}\n`).join("");
  // Every 7th fix opens a bracket it never closes: a syntax error alone.
  const rule = insertRule((row) => (row % 7 === 3 ? `broken_${row} = (\n` : `fine_${row} = ${row}\n`));
  const r = lintPython(text, { rules: [rule], noPrefilter: true });
  r.tree?.delete();
  assert.equal(r.diagnostics.length, n);
  for (const d of r.diagnostics) {
    const row = d.range.start.line;
    assert.equal(d.fix !== undefined, row % 7 !== 3, `line ${row}: ${d.fix ? "kept" : "dropped"}`);
  }
  // The same verdicts as one check per fix (fixParsesCleanly: the editor's check of one fix).
  const lazy = lintPython(text, { rules: [rule], noPrefilter: true, lazyFixValidation: true });
  lazy.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => d.fix !== undefined),
    lazy.diagnostics.map((d) => fixParsesCleanly(text, d.fix!)),
  );
  assert.ok(r.fixChecks! <= MAX_FIX_CHECKS);
});

test("a fix whose edits are the same as another's shares its verdict", () => {
  const n = 2 * FIXES_CHECKED_ALONE;
  const text = Array.from({ length: n }, (_, i) => `MARK_${i} = ${i}\n`).join("");
  const base = ruleByCode("GPU001") as PythonRule;
  const same: PythonRule = {
    meta: { ...base.meta },
    check(ctx) {
      ctx.model.text.split("\n").forEach((l, row) => {
        if (!l.includes("MARK")) return;
        const top = { line: 0, character: 0 };
        ctx.report({
          range: { start: { line: row, character: 0 }, end: { line: row, character: l.length } },
          message: "mark",
          fix: {
            title: `insert ${row}`,
            safe: true,
            edits: [{ range: { start: top, end: top }, newText: "import os\n" }],
          },
        });
      });
    },
  };
  const r = lintPython(text, { rules: [same], noPrefilter: true });
  r.tree?.delete();
  assert.equal(r.diagnostics.filter((d) => d.fix).length, n);
  assert.deepEqual(
    r.diagnostics.slice(0, 2).map((d) => d.fix?.title),
    ["insert 0", "insert 1"],
    "each keeps its own fix",
  );
  assert.equal(r.fixChecks, 1);
});
