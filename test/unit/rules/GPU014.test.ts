import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixtureTests } from "./fixtureCheck";
import { CASES } from "../support/helpers";
import { rule } from "../../../server/src/engine/rules/GPU014-notebook-shell-export";
import { initEngine } from "../../../server/src/engine/lint";
import { blankMagics, cellsOfIpynb, lintNotebook } from "../../../server/src/engine/notebook";
import { ModuleTrees } from "../../../server/src/engine/python/moduleTrees";
import { buildModel } from "../../../server/src/engine/python/model";
import { applyEdits } from "../../../server/src/engine/fixes";
import type { RuleContext } from "../../../server/src/engine/rule";

fixtureTests("GPU014");

/** Runs GPU014 alone on one cell, as the engine models it (IPython lines blanked, kept as events). */
async function check(cell: string): Promise<Array<Parameters<RuleContext["report"]>[0]>> {
  await initEngine();
  const { text, magics } = blankMagics(cell, 0);
  const tree = ModuleTrees.parse(text, false);
  const model = buildModel(tree, text, { eagerInitModules: [], torchBelow24: false }, magics);
  const out: Array<Parameters<RuleContext["report"]>[0]> = [];
  rule.check({
    model,
    machine: { gpuCount: null, uuids: [] },
    notebook: true,
    where: (l) => `line ${l + 1}`,
    report: (f) => out.push(f),
  });
  tree.delete();
  return out;
}

test("GPU014 on notebook.ipynb: a warning on the !export line of cell 4", async () => {
  await initEngine();
  const cells = cellsOfIpynb(readFileSync(join(CASES, "notebook.ipynb"), "utf8"));
  const [d] = lintNotebook(cells).diagnostics.filter((x) => x.code === "GPU014");
  assert.equal(d.cell, 3);
  assert.deepEqual(d.range, { start: { line: 0, character: 0 }, end: { line: 0, character: 30 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /`!export CUDA_VISIBLE_DEVICES=1` sets CUDA_VISIBLE_DEVICES in a subshell/);
  assert.match(d.message, /the kernel .* never sees it; use `%env CUDA_VISIBLE_DEVICES=1`/);
});

test("GPU014 fix: !export K=v becomes %env K=v, and the fixed cell is clean", async () => {
  const cell = "!export CUDA_VISIBLE_DEVICES=0";
  const [f] = await check(cell);
  assert.equal(f.fix?.title, "Use %env CUDA_VISIBLE_DEVICES=0");
  assert.equal(f.fix?.safe, true);
  const fixed = applyEdits(cell, f.fix!.edits);
  assert.equal(fixed, "%env CUDA_VISIBLE_DEVICES=0");
  assert.deepEqual(await check(fixed), []);
});

test("GPU014 fix: several variables, a command after them, and a trailing shell comment", async () => {
  const many = "!export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,0";
  const [a, b] = await check(many);
  assert.deepEqual(a.fix?.edits, b.fix?.edits, "one fix for the whole line");
  assert.equal(applyEdits(many, a.fix!.edits), "%env CUDA_DEVICE_ORDER=PCI_BUS_ID\n%env CUDA_VISIBLE_DEVICES=1,0");
  // `!VAR=1 command` sets the variable for that command, which is what the line means (issue 16, pattern 12).
  assert.deepEqual(await check("!CUDA_VISIBLE_DEVICES=1 python train.py --epochs 3"), []);
  const alone = "!CUDA_VISIBLE_DEVICES=1";
  const [c] = await check(alone);
  assert.match(c.message, /for that one command only/);
  const commented = "!export CUDA_VISIBLE_DEVICES=1  # second GPU";
  const [d] = await check(commented);
  assert.equal(applyEdits(commented, d.fix!.edits), "# second GPU\n%env CUDA_VISIBLE_DEVICES=1");
});

test("GPU014 offers no fix when the value needs the shell", async () => {
  for (const cell of ["!export CUDA_VISIBLE_DEVICES=$GPU", '!export CUDA_VISIBLE_DEVICES="0, 1"']) {
    const [f] = await check(cell);
    assert.ok(f, cell);
    assert.equal(f.fix, undefined, cell);
  }
});

test("GPU014 fix survives the engine's syntax check for notebooks (lint.ts re-blanks IPython lines before counting errors)", async () => {
  await initEngine();
  const [d] = lintNotebook([{ kind: "code", text: "!export CUDA_VISIBLE_DEVICES=0" }]).diagnostics.filter(
    (x) => x.code === "GPU014",
  );
  assert.ok(d.fix);
});

test("GPU014's fix is safe before CUDA initialises, and not safe after (%env would be too late: a new GPU001)", async () => {
  const before = await check("!export CUDA_VISIBLE_DEVICES=1\nimport torch\nx = torch.ones(1).cuda()\n");
  assert.equal(before.length, 1);
  assert.equal(before[0].fix?.title, "Use %env CUDA_VISIBLE_DEVICES=1");
  assert.equal(before[0].fix?.safe, true);
  const after = await check("import torch\nx = torch.ones(1).cuda()\n!export CUDA_VISIBLE_DEVICES=1\n");
  assert.equal(after.length, 1);
  assert.equal(after[0].fix?.title, "Use %env CUDA_VISIBLE_DEVICES=1");
  assert.equal(after[0].fix?.safe, false);
  // test/cases/notebook.ipynb: cell 2 initialises CUDA, cell 4 exports; Fix All leaves cell 4 alone.
  await initEngine();
  const cells = cellsOfIpynb(readFileSync(join(CASES, "notebook.ipynb"), "utf8"));
  const [d] = lintNotebook(cells).diagnostics.filter((x) => x.code === "GPU014");
  assert.equal(d.fix?.safe, false);
});
