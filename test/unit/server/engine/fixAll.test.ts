import assert from "node:assert/strict";
import { test } from "node:test";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { fixAllNotebook, fixAllPython, safeEdits } from "../../../../server/src/engine/fixAll";
import { applyEdits } from "../../../../server/src/engine/fixes";
import type { TextEdit } from "../../../../server/src/engine/types";
import { lintNotebook } from "../../../../server/src/engine/notebook";

test("fix-all: a write moved by GPU001 and GPU006's insertion above it do not both land in one pass (regression: duplicated CUDA_DEVICE_ORDER)", async () => {
  await initEngine();
  const src =
    'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
  const once = fixAllPython(src, { preview: true });
  assert.equal(
    once.text,
    'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\n',
  );
  assert.equal(
    fixAllPython(once.text, { preview: true }).text,
    once.text,
    "applying fix-all twice changes nothing the second time",
  );
  const r = lintPython(once.text, { preview: true });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.filter((d) => d.fix?.safe),
    [],
  );
});

test("safeEdits: touching edits conflict, disjoint ones both apply", () => {
  const at = (l: number, c: number) => ({ line: l, character: c });
  const ins = { range: { start: at(5, 0), end: at(5, 0) }, newText: "x" };
  const del = { range: { start: at(5, 0), end: at(6, 0) }, newText: "" };
  const far = { range: { start: at(9, 0), end: at(9, 1) }, newText: "y" };
  const picked = safeEdits([
    { fix: { safe: true, edits: [del] } },
    { fix: { safe: true, edits: [ins] } },
    { fix: { safe: true, edits: [far] } },
    { fix: { safe: false, edits: [far] } },
  ]);
  assert.deepEqual(picked.edits, [del, far]);
  assert.equal(picked.count, 2);
});

test("safeEdits picks what the first-come pairwise check picks (1,000 random edits, issue 18 item 3)", () => {
  let seed = 18;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pos = () => ({ line: rnd(30), character: rnd(5) });
  const diags = Array.from({ length: 1000 }, () => {
    const edits = Array.from({ length: 1 + rnd(2) }, () => {
      const a = pos(),
        b = pos();
      const [start, end] = a.line < b.line || (a.line === b.line && a.character <= b.character) ? [a, b] : [b, a];
      return { range: { start, end: rnd(3) === 0 ? start : end }, newText: "x", cell: rnd(3) };
    });
    return { fix: { safe: rnd(5) !== 0, edits } };
  });
  const cmp = (a: { line: number; character: number }, b: { line: number; character: number }) =>
    a.line - b.line || a.character - b.character;
  type E = (typeof diags)[number]["fix"]["edits"][number];
  const overlaps = (a: E, b: E) =>
    a.cell === b.cell && cmp(a.range.start, b.range.end) <= 0 && cmp(b.range.start, a.range.end) <= 0;
  const expected: E[] = [];
  for (const d of diags) {
    if (!d.fix.safe || d.fix.edits.some((e) => expected.some((o) => overlaps(o, e)))) continue;
    expected.push(...d.fix.edits);
  }
  assert.deepEqual(safeEdits(diags).edits, expected);
});

test("fixAllPython on 60 late writes gives the text of one eagerly checked fix at a time per pass", async () => {
  await initEngine();
  const text =
    "import os\nimport torch\ntorch.cuda.init()\n" +
    Array.from(
      { length: 60 },
      (_, i) => `os.environ["CUDA_VISIBLE_DEVICES"] = "${i % 4}"\nx${i} = torch.zeros(1)\n`,
    ).join("");
  // The reference: the pass loop as it was, every fix checked by re-parsing in the lint.
  let ref = text;
  for (let pass = 0; pass < 10; pass++) {
    const r = lintPython(ref, { preview: true });
    r.tree?.delete();
    const { edits } = safeEdits<TextEdit>(r.diagnostics);
    if (!edits.length) break;
    ref = applyEdits(ref, edits);
  }
  const got = fixAllPython(text, { preview: true });
  assert.equal(got.text, ref);
  // One GPU001 move per pass (each pass sees the text the last one made); GPU006 says nothing about
  // writes that CUDA initialisation already made moot.
  assert.ok(got.applied >= 10, String(got.applied));
});

test("safeEdits: a diagnostic whose fix is the same edit as one already picked is fixed by it and counted (regression: `!export A=1 B=2` reported twice, fixed as one)", () => {
  const at = (l: number, c: number) => ({ line: l, character: c });
  const line = { range: { start: at(1, 0), end: at(1, 20) }, newText: "%env A=1\n%env B=2" };
  const picked = safeEdits([
    { fix: { safe: true, edits: [line] } },
    { fix: { safe: true, edits: [{ ...line, range: { start: at(1, 0), end: at(1, 20) } }] } },
  ]);
  assert.deepEqual(picked.edits, [line]);
  assert.equal(picked.count, 2);
});

test("fix-all over a notebook: one `!export` of two variables is two findings, and fixing the line counts both", async () => {
  await initEngine();
  const cells = [
    { kind: "code" as const, text: "!export CUDA_DEVICE_ORDER=PCI_BUS_ID XLA_PYTHON_CLIENT_PREALLOCATE=false\n" },
  ];
  assert.equal(lintNotebook(cells, {}).diagnostics.filter((d) => d.code === "GPU014" && d.fix?.safe).length, 2);
  const r = fixAllNotebook(cells, {});
  assert.equal(r.cells[0].text, "%env CUDA_DEVICE_ORDER=PCI_BUS_ID\n%env XLA_PYTHON_CLIENT_PREALLOCATE=false\n");
  assert.equal(r.applied, 2);
  assert.deepEqual(
    lintNotebook(r.cells, {}).diagnostics.filter((d) => d.code === "GPU014"),
    [],
  );
});
