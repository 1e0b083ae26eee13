/**
 * Notebooks in the editor (notebook.ts lintNotebook with `keep`): the trees of the last lint are
 * edited to the new joined cells (ModuleTrees.editTo: the one change between the texts) and
 * re-parsed where it changed; the findings equal a lint from scratch after random cell edits of
 * the project's notebooks, and a notebook's first lint in chunks equals its lint as one tree.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, filesUnder } from "./helpers";
import { initEngine, type LintOptions } from "../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook, type CellInput } from "../../server/src/engine/notebook";
import type { ModuleTrees } from "../../server/src/engine/python/moduleTrees";

const OPTIONS: LintOptions = { noPrefilter: true, preview: true, machine: { gpuCount: 2, uuids: ["GPU-0a1b2c3d-0000-0000-0000-000000000000"] }, lazyFixValidation: true };
const NOTEBOOKS = [...filesUnder(join(ROOT, "test"), (n) => n.endsWith(".ipynb")), ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".ipynb"))];
const INSERTS = ["x", "\n", "import torch\n", "torch.cuda.init()\n", "import os\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"\n", "%env CUDA_VISIBLE_DEVICES=0\n", "!nvidia-smi\n", "(", "def f():\n    pass\n", ""];
const shape = (r: ReturnType<typeof lintNotebook>) => JSON.stringify({ d: r.diagnostics, f: r.ruleFailures.map((x) => x.code) });

test("a notebook linted with its kept trees gives the findings of a lint from scratch after random cell edits", async () => {
  await initEngine();
  assert.ok(NOTEBOOKS.length >= 5, `${NOTEBOOKS.length} notebooks`);
  let x = 0x1234567;
  const r = (n: number) => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % n; };
  let steps = 0, reused = 0;
  for (const file of NOTEBOOKS) {
    const cells: CellInput[] = cellsOfIpynb(readFileSync(file, "utf8"));
    const first = lintNotebook(cells, OPTIONS, {});
    assert.equal(shape(first), shape(lintNotebook(cells, OPTIONS)), `${file}: first lint in chunks`);
    let kept: ModuleTrees | null | undefined = first.tree;
    for (let step = 0; step < 12; step++) {
      const code = cells.map((c, i) => [c, i] as const).filter(([c]) => c.kind === "code");
      if (r(6) === 0) cells.splice(r(cells.length + 1), 0, { kind: "code", text: INSERTS[r(INSERTS.length)] });
      else if (code.length) {
        const [c] = code[r(code.length)];
        const at = r(c.text.length + 1);
        c.text = c.text.slice(0, at) + INSERTS[r(INSERTS.length)] + c.text.slice(Math.min(c.text.length, at + r(3)));
      }
      const next = lintNotebook(cells, OPTIONS, { previous: kept ?? undefined });
      if (kept) reused++;
      kept?.delete();
      const fresh = lintNotebook(cells, OPTIONS, {});
      assert.equal(shape(next), shape(fresh), `${file} step ${step}`);
      fresh.tree?.delete();
      kept = next.tree;
      steps++;
    }
    kept?.delete();
  }
  assert.ok(steps === NOTEBOOKS.length * 12 && reused > steps / 2, `steps ${steps}, with kept trees ${reused}`);
});
