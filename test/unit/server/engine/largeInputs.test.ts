// Large inputs (issue 9): over gpuPilot.maxFileSizeKB / --max-file-size-kb, a file is not linted and
// one GPU000 information diagnostic says why. Inputs are generated here (test/fuzz/memory.ts), never
// committed. No timing assertions: speed and memory are measured by `npm run bench:memory`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook } from "../../../../server/src/engine/notebook";
import { fixAllPython } from "../../../../server/src/engine/fixAll";
import { main } from "../../../../server/src/cli";
import { bigNotebook, bigPython } from "../../../fuzz/memory";

const MB = 1024 * 1024;
test.before(() => initEngine());

test("a 5 MB Python file is skipped with one information diagnostic (default limit 2048 KB)", () => {
  const text = bigPython(5 * MB);
  const r = lintPython(text);
  assert.equal(r.tree, null);
  assert.equal(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.deepEqual(
    [d.code, d.name, d.severity, d.range],
    ["GPU000", "file-too-large", "information", { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }],
  );
  assert.match(d.message, /its code is 5,1\d\d KB, over the 2,048 KB limit\. Raise gpuPilot\.maxFileSizeKB/);
  assert.equal(fixAllPython(text, {}).text, text, "nothing to fix in a skipped file");
});

test("maxFileSizeKB: a smaller limit skips, 0 means no limit", () => {
  const text = 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'.repeat(40);
  assert.deepEqual(
    lintPython(text, { maxFileSizeKB: 1 }).diagnostics.map((d) => d.code),
    ["GPU000"],
  );
  const all = lintPython(text, { maxFileSizeKB: 0, select: ["GPU001"] });
  all.tree?.delete();
  assert.equal(all.diagnostics.length, 40);
  // The size is UTF-8: 400 emoji are 1,600 bytes in 800 UTF-16 code units.
  assert.deepEqual(
    lintPython(`# ${"😀".repeat(400)}\n`, { maxFileSizeKB: 1 }).diagnostics.map((d) => d.code),
    ["GPU000"],
  );
  const r = lintPython(`# ${"é".repeat(400)}\n`, { maxFileSizeKB: 1 });
  r.tree?.delete();
  assert.deepEqual(r.diagnostics, []);
});

test("a 50 MB notebook: outputs do not count (its ~1 MB of code is linted); 50 MB of code is skipped in its first code cell", () => {
  const outputs = cellsOfIpynb(bigNotebook(50 * MB, 1 * MB));
  const linted = lintNotebook(outputs);
  assert.deepEqual(linted.ruleFailures, []);
  assert.ok(linted.diagnostics.length > 0 && !linted.diagnostics.some((d) => d.code === "GPU000"));
  const code = lintNotebook([{ kind: "markup", text: "# title" }, ...cellsOfIpynb(bigNotebook(50 * MB, 50 * MB))]);
  assert.deepEqual(
    code.diagnostics.map((d) => [d.code, d.cell, d.range.start]),
    [["GPU000", 1, { line: 0, character: 0 }]],
  );
});

test("CLI --max-file-size-kb: the skip is reported as GPU000; 0 lints; a bad value is a usage error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-large-"));
  try {
    const file = join(dir, "big.py");
    writeFileSync(
      file,
      'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n' + "x = 1\n".repeat(400),
    );
    const run = async (...args: string[]) => {
      let out = "";
      let err = "";
      const code = await main(["check", "--format=json", "--select=GPU001", ...args, file], {
        out: (s) => {
          out += s;
        },
        err: (s) => {
          err += s;
        },
        stdin: async () => "",
      });
      return { code, out, err };
    };
    const skipped = await run("--max-file-size-kb", "1");
    assert.deepEqual(
      (JSON.parse(skipped.out) as Array<{ code: string }>).map((d) => d.code),
      ["GPU000"],
    );
    const linted = await run("--max-file-size-kb=0");
    assert.deepEqual(
      (JSON.parse(linted.out) as Array<{ code: string }>).map((d) => d.code),
      ["GPU001"],
    );
    const bad = await run("--max-file-size-kb", "lots");
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--max-file-size-kb must be a whole number/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
