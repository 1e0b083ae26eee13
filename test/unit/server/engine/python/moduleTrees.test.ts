/**
 * python/moduleTrees.ts: a module parsed in chunks has the top-level statements of one tree (types,
 * ranges, points, whole subtrees) on every Python file of the project; edited step by step it is
 * cut and parsed exactly as the same text parsed afresh; node text follows the current version;
 * the chunk boundaries respect CPython's line structure (decorators, clauses, strings, brackets,
 * continuations).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Node } from "web-tree-sitter";
import { ROOT, CASES, filesUnder } from "../../../support/helpers";
import { initEngine } from "../../../../../server/src/engine/lint";
import { parsePython, pythonInput, syntaxErrorCount } from "../../../../../server/src/engine/python/parser";
import { ModuleTrees, INCREMENTAL_FROM, topLevelStatements } from "../../../../../server/src/engine/python/moduleTrees";

const sig = (n: Node) =>
  `${n.type}@${n.startIndex}-${n.endIndex}[${n.startPosition.row}:${n.startPosition.column}-${n.endPosition.row}:${n.endPosition.column}]${n.toString()}`;
const signatures = (m: ModuleTrees) => m.statements.map(sig);

/** Top-level statements of one tree of `text`. */
function wholeTree(text: string): string[] {
  const t = parsePython(text);
  try {
    return t.rootNode.namedChildren.map((n) => sig(n!));
  } finally {
    t.delete();
  }
}

const PY = [
  ...filesUnder(join(ROOT, "test", "fixtures"), (n) => n.endsWith(".py")),
  ...filesUnder(CASES, (n) => n.endsWith(".py")),
  ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".py")),
  ...filesUnder(join(ROOT, "verify"), (n) => n.endsWith(".py")),
];

/** Many top-level statements of every kind the boundaries must respect. */
function bigModule(blocks = 120): string {
  const out: string[] = ['"""Docstring.\n\ndef not_code():\n"""', "import os", "import torch", ""];
  for (let i = 0; i < blocks; i++) {
    out.push(
      `@torch.no_grad()`,
      `@decorator_${i}`,
      `def f_${i}(x):`,
      `    y = (x +`,
      `         1)`,
      `    return y`,
      "",
      `z_${i} = (f_${i}(1) +`,
      `1)`,
    );
    out.push(
      `try:`,
      `    v_${i} = os.environ["K_${i}"]`,
      `except KeyError:`,
      `    v_${i} = None`,
      `finally:`,
      `    pass`,
    );
    out.push(`if v_${i}:`, `    pass`, `elif x_${i} := 1:`, `    pass`, `else:`, `    pass`);
    out.push(
      `s_${i} = """`,
      `col0 = ${i}`,
      `"""`,
      `t_${i} = 1 + \\`,
      `2`,
      `# a comment at column 0`,
      `class C_${i}:`,
      `    a = ${i}`,
      "",
    );
  }
  return out.join("\n") + "\n";
}

test("chunks have the statements of one tree on every Python file of the project", async () => {
  await initEngine();
  assert.ok(PY.length > 100, `only ${PY.length} files`);
  for (const f of PY) {
    const text = pythonInput(readFileSync(f, "utf8"));
    const m = ModuleTrees.parse(text);
    assert.deepEqual(signatures(m), wholeTree(text), f);
    assert.equal(
      m.syntaxErrorCount(),
      (() => {
        const t = parsePython(text);
        try {
          return syntaxErrorCount(t);
        } finally {
          t.delete();
        }
      })(),
      f,
    );
    m.delete();
  }
});

test("topLevelStatements cover the text, one range per top-level statement, and parsed one by one they are the statements of one tree (every Python file of the project)", async () => {
  await initEngine();
  for (const f of PY) {
    const text = pythonInput(readFileSync(f, "utf8"));
    const ranges = topLevelStatements(text);
    assert.equal(ranges[0].start, 0, f);
    assert.equal(ranges[ranges.length - 1].end, text.length, f);
    for (let i = 1; i < ranges.length; i++) assert.equal(ranges[i].start, ranges[i - 1].end, f);
    const m = ModuleTrees.parseRanges(text, ranges);
    assert.deepEqual(signatures(m), wholeTree(text), f);
    m.delete();
  }
  // Heads: the first word not of a decorator; clauses and decorated lines stay with their statement.
  const text =
    "import os\n@dec\n@other(1)\ndef f():\n    pass\nif a:\n    x = 1\nelse:\n    x = 2\nclass C:\n    pass\n# note\nasync def g():\n    pass\n";
  assert.deepEqual(
    topLevelStatements(text).map((r) => [r.head, text.slice(r.start, r.end).split("\n")[0], r.row, r.headAt]),
    [
      ["import", "import os", 0, 0],
      ["def", "@dec", 1, text.indexOf("def f")],
      ["if", "if a:", 5, text.indexOf("if a")],
      ["class", "class C:", 9, text.indexOf("class C")],
      ["async", "async def g():", 12, text.indexOf("async def")],
    ],
  );
});

test("boundaries: a decorated def, else/except/finally clauses, strings, brackets and continuations stay whole", async () => {
  await initEngine();
  const text = bigModule();
  const m = ModuleTrees.parse(text);
  assert.deepEqual(signatures(m), wholeTree(text));
  assert.ok(m.chunkCount > 20 && m.chunkCount < 400, `${m.chunkCount} chunks`);
  for (const [start] of m.chunkRanges.slice(1)) {
    const line = text.slice(start, text.indexOf("\n", start));
    assert.doesNotMatch(
      line,
      /^(else|elif|except|finally|def |1\)|2$|col0|"""|\s)/,
      `a chunk starts at ${JSON.stringify(line)}`,
    );
    assert.doesNotMatch(
      text.slice(text.lastIndexOf("\n", start - 2) + 1, start),
      /^@/,
      `a chunk starts after a decorator: ${JSON.stringify(line)}`,
    );
  }
  m.delete();
  const one = ModuleTrees.parse(text, false);
  assert.equal(one.chunkCount, 1);
  assert.deepEqual(signatures(one), wholeTree(text));
  one.delete();
});

/** Row and column of an offset (lines end at \n). */
function point(text: string, offset: number): { row: number; column: number } {
  let row = 0,
    start = 0;
  for (let i = 0; i < offset; i++)
    if (text.charCodeAt(i) === 10) {
      row++;
      start = i + 1;
    }
  return { row, column: offset - start };
}

function applyEdit(m: ModuleTrees, text: string, start: number, end: number, inserted: string): string {
  const next = text.slice(0, start) + inserted + text.slice(end);
  m.edit({
    startIndex: start,
    oldEndIndex: end,
    newEndIndex: start + inserted.length,
    startPosition: point(text, start),
    oldEndPosition: point(text, end),
    newEndPosition: point(next, start + inserted.length),
  });
  return next;
}

const INSERTS = [
  "x",
  "\n",
  "(",
  ")",
  "'",
  '"""',
  "\ndef g():\n    pass\n",
  "else:\n",
  "@dec\n",
  "  ",
  "#",
  "\\\n",
  "",
  "import os\n",
  "except:",
  "el",
];

test("edited step by step, a module is cut and parsed as the same text afresh (random edits of real files)", async () => {
  await initEngine();
  let x = 0x2545f491;
  const r = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  const files = [...PY.filter((f) => readFileSync(f, "utf8").length > 700).slice(0, 60), "<big>"];
  const insert = () => (r(2) ? "x" : INSERTS[r(INSERTS.length)]);
  let steps = 0,
    clean = 0;
  for (const f of files) {
    const original = f === "<big>" ? bigModule(40) : pythonInput(readFileSync(f, "utf8"));
    let text = original;
    let m = ModuleTrees.parse(text);
    for (let step = 0; step < 25; step++) {
      const old = text;
      // Every fifth step the whole text is replaced by the original (one edit, as "revert file" sends).
      if (step % 5 === 4) text = applyEdit(m, text, 0, text.length, original);
      else
        for (let k = 1 + r(2); k > 0; k--) {
          const start = r(text.length + 1);
          const end = Math.min(text.length, start + (r(4) === 0 ? r(300) : r(3) ? 0 : r(3)));
          text = applyEdit(m, text, start, end, insert());
        }
      // pendingChange: outside it, the old and the new text are the same.
      const c = m.pendingChange!;
      assert.ok(
        c.start <= c.oldEnd && c.start <= c.newEnd && old.length - c.oldEnd === text.length - c.newEnd,
        `${f} step ${step}: ${JSON.stringify(c)}`,
      );
      assert.equal(old.slice(0, c.start), text.slice(0, c.start));
      assert.equal(old.slice(c.oldEnd), text.slice(c.newEnd));
      const next = m.next(text);
      m.delete();
      m = next;
      assert.equal(m.pendingChange, undefined);
      const fresh = ModuleTrees.parse(text);
      assert.deepEqual(m.chunkRanges, fresh.chunkRanges, `${f} step ${step}: chunks`);
      const big = fresh.chunkRanges.some(([s, e]) => e - s >= INCREMENTAL_FROM);
      if (!big) assert.deepEqual(signatures(m), signatures(fresh), `${f} step ${step}: trees`);
      // hasError is kept per chunk: it must follow each edit of the chunk (and not change by a move).
      if (!big) assert.equal(m.hasError, fresh.hasError, `${f} step ${step}: hasError`);
      // statementShapes is kept per chunk across moves: it must be the nodes' ends and types now.
      const shapes = m.statementShapes();
      assert.deepEqual(
        shapes,
        { ends: m.statements.map((n) => n.endIndex), types: m.statements.map((n) => n.type) },
        `${f} step ${step}: shapes`,
      );
      if (!fresh.hasError) {
        assert.deepEqual(signatures(m), wholeTree(text), `${f} step ${step}: one tree`);
        clean++;
      }
      assert.equal(
        m.statements.map((s) => s.text).join("\u0000"),
        fresh.statements.map((s) => s.text).join("\u0000"),
        `${f} step ${step}: node text`,
      );
      fresh.delete();
      steps++;
    }
    m.delete();
  }
  assert.ok(steps === files.length * 25 && clean >= 10, `steps ${steps}, clean ${clean}`);
});

test("node text, positions and syntax errors follow the current version; the fix check leaves the module as it is", async () => {
  await initEngine();
  let text = bigModule(30);
  let m = ModuleTrees.parse(text);
  const before = m.chunkCount,
    ranges = m.chunkRanges;
  // Insert a line into the docstring: every chunk below moves by 9 code units and one row.
  text = applyEdit(m, text, 3, 3, "import x\n");
  const moved = m.next(text);
  m.delete();
  m = moved;
  assert.deepEqual(
    m.chunkRanges,
    ranges.map(([s, e], i) => [i === 0 ? s : s + 9, e + 9]),
  );
  const last = m.statements[m.statements.length - 1];
  assert.equal(last.text, text.slice(last.startIndex, last.endIndex));
  assert.equal(last.startPosition.row, point(text, last.startIndex).row);
  assert.equal(m.descendantForIndex(text.indexOf("def f_29"))?.text, "def");
  assert.deepEqual(m.descendantsOfType("decorator").length, 60);
  // An unterminated triple quote swallows the rest; closing it again restores the chunks.
  const at = text.indexOf("def f_10");
  text = applyEdit(m, text, at, at, '"""');
  const open = m.next(text);
  m.delete();
  assert.ok(open.chunkCount < before, `${open.chunkCount} chunks with an open string`);
  text = applyEdit(open, text, at, at + 3, "");
  m = open.next(text);
  open.delete();
  assert.equal(m.chunkCount, before);
  assert.deepEqual(signatures(m), wholeTree(text));
  // syntaxErrorsAfter: the count of the edited text, the module unchanged.
  const shape = signatures(m);
  const broken = text.slice(0, at) + "def (" + text.slice(at);
  const full = parsePython(broken);
  const errors = syntaxErrorCount(full);
  full.delete();
  assert.ok(errors > 0);
  assert.equal(m.syntaxErrorsAfter(broken, [{ start: at, end: at, text: "def (" }]), errors);
  assert.equal(m.syntaxErrorsAfter(text, [{ start: at, end: at, text: "" }]), 0);
  assert.deepEqual(signatures(m), shape);
  assert.equal(m.syntaxErrorCount(), 0);
  m.delete();
});
