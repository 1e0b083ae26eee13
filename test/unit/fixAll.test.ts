import assert from "node:assert/strict";
import { test } from "node:test";
import { initEngine, lintPython } from "../../server/src/engine/lint";
import { fixAllPython, safeEdits } from "../../server/src/engine/fixAll";

test("fix-all: a write moved by GPU001 and GPU006's insertion above it do not both land in one pass (regression: duplicated CUDA_DEVICE_ORDER)", async () => {
  await initEngine();
  const src = 'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
  const once = fixAllPython(src, { preview: true });
  assert.equal(once.text, 'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\n');
  assert.equal(fixAllPython(once.text, { preview: true }).text, once.text, "applying fix-all twice changes nothing the second time");
  const r = lintPython(once.text, { preview: true });
  r.tree?.delete();
  assert.deepEqual(r.diagnostics.filter((d) => d.fix?.safe), []);
});

test("safeEdits: touching edits conflict, disjoint ones both apply", () => {
  const at = (l: number, c: number) => ({ line: l, character: c });
  const ins = { range: { start: at(5, 0), end: at(5, 0) }, newText: "x" };
  const del = { range: { start: at(5, 0), end: at(6, 0) }, newText: "" };
  const far = { range: { start: at(9, 0), end: at(9, 1) }, newText: "y" };
  const picked = safeEdits([{ fix: { safe: true, edits: [del] } }, { fix: { safe: true, edits: [ins] } }, { fix: { safe: true, edits: [far] } }, { fix: { safe: false, edits: [far] } }]);
  assert.deepEqual(picked.edits, [del, far]);
  assert.equal(picked.count, 2);
});
