// Inputs the fuzzer (npm run fuzz, test/fuzz/) found failing, each with its minimal counterexample,
// kept as fixed cases after the engine was fixed. checkPython/checkNotebook check every property.
import { test } from "node:test";
import assert from "node:assert/strict";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { lintNotebook } from "../../../../server/src/engine/notebook";
import { checkNotebook, checkPython } from "../../../fuzz/harness";

test.before(() => initEngine());

test("deeply nested expressions do not overflow the stack (callsInOrder was recursive)", () => {
  checkPython(`x = 1${" + 1".repeat(12_000)}\n`);
  checkPython(`x = ${"(".repeat(12_000)}1${")".repeat(12_000)}\n`);
  checkPython(`import torch\nx = ${"f(".repeat(12_000)}torch.device("cuda:9")${")".repeat(12_000)}\n`);
  checkPython(`x = ${"[".repeat(12_000)}"cuda:1"${"]".repeat(12_000)}\n`);
});

test("a 50,000-part attribute chain does not overflow the stack (resolve was unbounded)", () => {
  checkPython(`import torch\nx = torch${".a".repeat(50_000)}()\n`);
  checkPython(`import os\nenv = os${".environ".repeat(50_000)}\nenv["CUDA_VISIBLE_DEVICES"] = "0"\n`);
});

test("a lone CR ends a line (Python's universal newlines, LSP): old Mac line endings are linted", () => {
  const text = 'import os\rimport torch\rtorch.cuda.init()\ros.environ["CUDA_VISIBLE_DEVICES"] = "0"\r';
  const r = lintPython(text, { select: ["GPU001"] });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => [d.code, d.range]),
    [["GPU001", { start: { line: 3, character: 0 }, end: { line: 3, character: 40 } }]],
  );
  checkPython(text);
  checkPython('import os\r\nimport torch\rtorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\r\n');
});

test("notebook: a fix removing a cell's last line ends at that line's end, not at character 2^53-1", () => {
  // Minimal counterexample: the GPU001 move fix removes up to the next line, which is in the next cell.
  const cells = [
    { kind: "code" as const, text: "import torch\ntorch.cuda.init()" },
    { kind: "code" as const, text: 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"' },
    { kind: "code" as const, text: "print(1)" },
  ];
  const r = lintNotebook(cells, { select: ["GPU001"] });
  const edits = r.diagnostics.flatMap((d) => d.fix?.edits ?? []);
  assert.ok(edits.length > 0);
  for (const e of edits) assert.ok(e.range.end.character <= 40, JSON.stringify(e.range));
  checkNotebook(cells);
});

test("notebook: a cell ending in a lone CR does not shift the next cells' lines", () => {
  // Minimal counterexample: the joining \n merged with the cell's final \r into one line break.
  const cells = [
    { kind: "code" as const, text: "import os\r" },
    { kind: "code" as const, text: 'import torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"' },
  ];
  const r = lintNotebook(cells, { select: ["GPU001"] });
  assert.deepEqual(
    r.diagnostics.map((d) => [d.cell, d.range.start]),
    [[1, { line: 2, character: 0 }]],
  );
  checkNotebook(cells);
});

test("notebook: IPython lines after a lone CR are recognised", () => {
  const r = lintNotebook([{ kind: "code", text: "import torch\rtorch.cuda.init()\r%env CUDA_VISIBLE_DEVICES=0" }], {
    select: ["GPU001"],
  });
  assert.deepEqual(
    r.diagnostics.map((d) => [d.code, d.range.start]),
    [["GPU001", { line: 2, character: 0 }]],
  );
});

test("nesting that overflows tree-sitter's wasm stack is not parsed (the trap killed every later parse in the process)", () => {
  // Minimal counterexample (fuzz seed 4242, case 2418): deep brackets after a syntax error.
  const deep = `  T,\nx = ${"[".repeat(3000)}"cuda:1"${"]".repeat(3000)}\n`;
  for (const text of [
    deep,
    `  T,\nx = ${"not ".repeat(3000)}"c"\n`,
    `  T,\nx = ${"a if b else ".repeat(1000)}"c"\n`,
    `  T,\nx = ${"lambda: ".repeat(3000)}"c"\n`,
    `  T,\nx = ${"-".repeat(3000)}"c"\n`,
  ]) {
    const r = lintPython(text);
    assert.equal(r.tree, null);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.code, d.severity]),
      [["GPU000", "information"]],
    );
    assert.match(r.diagnostics[0].message, /did not lint this file: .*(nest|chains)/);
    checkPython(text);
  }
  // The parser still works afterwards.
  const after = lintPython('import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', {
    select: ["GPU001"],
  });
  after.tree?.delete();
  assert.deepEqual(
    after.diagnostics.map((d) => d.code),
    ["GPU001"],
  );
});

test("notebook: a fix whose edit runs on into the next cell is not offered (it cannot be applied cell by cell)", () => {
  // Minimal counterexample (npm run fuzz, seed 90010): GPU008's fix wraps the rest of a block that
  // continues, through an unclosed parenthesis, into the next cell; truncated to the cell it added
  // syntax errors (2 → 4).
  const cells = [
    { kind: "code" as const, text: "import threading\nimport torch" },
    { kind: "code" as const, text: "def worker():\n    torch.cuda.set_device(1)\n    print(t" },
    { kind: "code" as const, text: " = threading.Thread(target=worker)\nt.start()\n" },
  ];
  checkNotebook(cells, { machine: { gpuCount: null, uuids: [] }, torchBelow24: false });
  const r = lintNotebook(cells);
  assert.ok(r.diagnostics.some((d) => d.code === "GPU008"));
  assert.ok(!r.diagnostics.some((d) => d.code === "GPU008" && d.fix));
});
