/**
 * Notebooks in the editor (notebook.ts lintNotebook with `keep`): the trees of the last lint's
 * analysis are edited to the new joined cells (ModuleTrees.editTo: the one change between the texts) and
 * re-parsed where it changed; the findings equal a lint from scratch after random cell edits of
 * the project's notebooks, and a notebook's first lint in chunks equals its lint as one tree.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, filesUnder } from "../../support/helpers";
import { initEngine, type LintOptions } from "../../../../server/src/engine/lint";
import { cellInJoined, cellsOfIpynb, lintNotebook, type CellInput } from "../../../../server/src/engine/notebook";
import type { DocumentAnalysis } from "../../../../server/src/engine/analysis";
import { ruleByCode } from "../../../../server/src/engine/rules/index";
import { isPythonRule } from "../../../../server/src/engine/rule";

const MACHINE = { gpuCount: 2, uuids: ["GPU-0a1b2c3d-0000-0000-0000-000000000000"] };
/** Every rule, preview on; and the defaults with the prefilter (the editor's), which keeps its probe across versions. */
const OPTION_SETS: LintOptions[] = [
  { noPrefilter: true, preview: true, machine: MACHINE, lazyFixValidation: true },
  { machine: MACHINE, lazyFixValidation: true },
];
const NOTEBOOKS = [
  ...filesUnder(join(ROOT, "test"), (n) => n.endsWith(".ipynb")),
  ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".ipynb")),
];
const INSERTS = [
  "x",
  "\n",
  "import torch\n",
  "torch.cuda.init()\n",
  'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  "%env CUDA_VISIBLE_DEVICES=0\n",
  "!nvidia-smi\n",
  "!export CUDA_VISIBLE_DEVICE=1\n",
  "  %env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync\n",
  "(",
  "def f():\n    pass\n",
  "",
];
const shape = (r: ReturnType<typeof lintNotebook>) =>
  JSON.stringify({ d: r.diagnostics, f: r.ruleFailures.map((x) => x.code) });

test("a notebook linted with its kept trees and facts gives the findings of a lint from scratch after random cell edits", async () => {
  await initEngine();
  assert.ok(NOTEBOOKS.length >= 5, `${NOTEBOOKS.length} notebooks`);
  let x = 0x1234567;
  const r = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  let steps = 0,
    reused = 0,
    whole = 0,
    unparsed = 0;
  for (const options of OPTION_SETS) {
    for (const file of NOTEBOOKS) {
      const cells: CellInput[] = cellsOfIpynb(readFileSync(file, "utf8"));
      const first = lintNotebook(cells, options, {});
      // A notebook that no Python rule's trigger names is not parsed (the prefilter): nothing to keep.
      // Its `!` lines are still read as a shell script (GPU040, GPU045 and the other launch rules):
      // the same findings as a lint without `keep`.
      if (!first.analysis) {
        assert.equal(shape(first), shape(lintNotebook(cells, options)), `${file}: not parsed, found as without keep`);
        assert.ok(
          first.diagnostics.every((d) => !d.code || !isPythonRule(ruleByCode(d.code)!)),
          `${file}: not parsed, so no Python rule's finding`,
        );
        unparsed++;
        continue;
      }
      const codeTexts = new Set(cells.filter((c) => c.kind === "code").map((c) => c.text));
      assert.equal(first.analysis?.cells?.size, codeTexts.size, `${file}: the joined cells are kept`);
      assert.equal(shape(first), shape(lintNotebook(cells, options)), `${file}: first lint in chunks`);
      let kept: DocumentAnalysis | undefined = first.analysis;
      for (let step = 0; step < 16; step++) {
        const code = cells.map((c, i) => [c, i] as const).filter(([c]) => c.kind === "code");
        if (r(6) === 0) cells.splice(r(cells.length + 1), 0, { kind: "code", text: INSERTS[r(INSERTS.length)] });
        else if (code.length) {
          const [c] = code[r(code.length)];
          const at = r(c.text.length + 1);
          c.text = c.text.slice(0, at) + INSERTS[r(INSERTS.length)] + c.text.slice(Math.min(c.text.length, at + r(3)));
        }
        const next = lintNotebook(cells, options, { previous: kept });
        if (kept) reused++;
        kept?.dispose();
        // Afresh in chunks (the same error recovery), and, where the code parses, as one tree with
        // the model built without kept facts (IPython lines' events placed by the plain walk).
        const fresh = lintNotebook(cells, options, {});
        assert.equal(shape(next), shape(fresh), `${file} step ${step}`);
        if (fresh.analysis && !fresh.analysis.trees.hasError) {
          assert.equal(shape(next), shape(lintNotebook(cells, options)), `${file} step ${step}, one tree`);
          whole++;
        }
        fresh.analysis?.dispose();
        kept = next.analysis;
        steps++;
      }
      kept?.dispose();
    }
  }
  assert.ok(
    steps === (OPTION_SETS.length * NOTEBOOKS.length - unparsed) * 16 &&
      unparsed < NOTEBOOKS.length &&
      reused > steps / 2 &&
      whole >= 10,
    `steps ${steps}, with kept trees ${reused}, as one tree ${whole}, not parsed ${unparsed}`,
  );
});

test("IPython lines between kept statements: after edits that keep the code valid, the kept lint equals the plain lint as one tree", async () => {
  await initEngine();
  // Whole lines at a cell's start (where no block is open): IPython lines, writes, CUDA initialisation.
  const LINES = [
    "%env CUDA_VISIBLE_DEVICES=1",
    "!export CUDA_VISIBLE_DEVICES=0",
    "%env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync",
    "%set_env CUDA_DEVICE_ORDER PCI_BUS_ID",
    "import os",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "2"',
    "import torch",
    "torch.cuda.init()",
    "x = torch.zeros(1).cuda()",
    "!nvidia-smi",
    "%time y = 1",
  ];
  let x = 0x2468ace;
  const r = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  let steps = 0,
    magicFindings = 0;
  for (const options of OPTION_SETS) {
    for (const file of NOTEBOOKS) {
      const cells: CellInput[] = cellsOfIpynb(readFileSync(file, "utf8"));
      if (lintNotebook(cells, options, {}).analysis?.trees.hasError) continue;
      let kept = lintNotebook(cells, options, {}).analysis;
      for (let step = 0; step < 24; step++) {
        const code = cells.filter((c) => c.kind === "code");
        const c = code[r(code.length)];
        const lines = c.text.split("\n");
        if (r(3) === 0 && /^[%!]/.test(lines[0])) lines.shift();
        else if (r(5) === 0) cells.splice(r(cells.length + 1), 0, { kind: "code", text: LINES[r(LINES.length)] });
        else lines.unshift(LINES[r(LINES.length)]);
        c.text = lines.join("\n");
        const next = lintNotebook(cells, options, { previous: kept });
        kept?.dispose();
        const plain = lintNotebook(cells, options);
        assert.equal(shape(next), shape(plain), `${file} step ${step}`);
        magicFindings += plain.diagnostics.filter((d) =>
          /^\s*[%!]/.test(cells[d.cell].text.split("\n")[d.range.start.line] ?? ""),
        ).length;
        kept = next.analysis;
        steps++;
      }
      kept?.dispose();
    }
  }
  assert.ok(steps >= 200 && magicFindings > 50, `${steps} steps, ${magicFindings} findings on IPython lines`);
});

test("cellFixParsesCleanly: a notebook fix checked when offered equals the lint's own check, and a fix that breaks the code is refused", async () => {
  const { cellFixParsesCleanly } = await import("../../../../server/src/engine/notebook");
  await initEngine();
  const cells: CellInput[] = [
    { kind: "markup", text: "# title" },
    { kind: "code", text: "import torch\nprint(torch.cuda.is_available())" },
    { kind: "code", text: '%env FOO=1\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"' },
  ];
  const eager = lintNotebook(cells, { lazyFixValidation: false });
  const lazy = lintNotebook(cells, { lazyFixValidation: true });
  const fix = lazy.diagnostics.find((d) => d.code === "GPU001")?.fix;
  assert.ok(fix && eager.diagnostics.find((d) => d.code === "GPU001")?.fix, "GPU001's fix, eager and lazy");
  assert.equal(cellFixParsesCleanly(cells, fix.edits), true);
  const at = { line: 1, character: 0 };
  assert.equal(
    cellFixParsesCleanly(cells, [{ cell: 1, range: { start: at, end: at }, newText: "x = (\n" }]),
    false,
    "an unclosed bracket",
  );
  assert.equal(
    cellFixParsesCleanly(cells, [
      { cell: 2, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, newText: "  y = 1\n" },
    ]),
    false,
    "an unexpected indent (CPython's line structure)",
  );
  assert.equal(
    cellFixParsesCleanly(cells, [
      { cell: 2, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: "%env BAR=2\n" },
    ]),
    true,
    "an IPython line is blanked as in the lint",
  );
  assert.equal(
    cellFixParsesCleanly(cells, [{ cell: 0, range: { start: at, end: at }, newText: "x" }]),
    false,
    "an edit of a markdown cell",
  );
});

test("cellInJoined: each code cell's lines are its lines of the joined text (IPython lines blanked to the same length); markup cells and bad indices give null", () => {
  let checked = 0;
  for (const file of NOTEBOOKS) {
    const cells = cellsOfIpynb(readFileSync(file, "utf8"));
    assert.equal(cellInJoined(cells, cells.length), null);
    assert.equal(cellInJoined(cells, -1), null);
    cells.forEach((c, i) => {
      const place = cellInJoined(cells, i);
      if (c.kind !== "code") {
        assert.equal(place, null, `${file} cell ${i + 1} is markup`);
        return;
      }
      const own = c.text.split(/\r\n|\r|\n/);
      const joined = place!.joined.split(/\r\n|\r|\n/).slice(place!.start.line, place!.start.line + place!.start.lines);
      assert.equal(place!.start.cell, i);
      assert.equal(place!.start.lines, own.length, `${file} cell ${i + 1}: line count`);
      // An IPython line ending in `\` continues on the next line (blanked with it).
      let continued = false;
      own.forEach((line, k) => {
        assert.equal(joined[k].length, line.length, `${file} cell ${i + 1} line ${k + 1}: same length`);
        const ipython = continued || /^\s*[%!]/.test(line);
        if (!ipython) assert.equal(joined[k], line, `${file} cell ${i + 1} line ${k + 1}`);
        else assert.equal(joined[k].trim(), "", `${file} cell ${i + 1} line ${k + 1}: blanked`);
        continued = ipython && line.endsWith("\\") && !own[0].trimStart().startsWith("%%");
        checked++;
      });
      assert.equal(place!.where(place!.start.line), `cell ${i + 1}, line 1`);
    });
  }
  assert.ok(checked >= 40, `${checked} cell lines checked`);
});
