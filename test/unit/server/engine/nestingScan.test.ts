/**
 * limits.ts: nestingProblem (brackets by a regular expression, unary runs and nesting words only on
 * lines longer than MAX_NESTING) answers exactly what the full character scan scanNesting(text, 0, 0)
 * answers, message included: on random texts that cross every limit, alone and together, on runs of
 * each piece right at the limit, and on every Python file of the repository's tests and examples.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, filesUnder } from "../../support/helpers";
import { nestingProblem, scanNesting, MAX_NESTING } from "../../../../server/src/engine/limits";

/** A small deterministic generator (xorshift32). */
function rng(seed: number): (n: number) => number {
  let x = seed | 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const PIECES = [
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  "\n",
  "\r\n",
  "\r",
  "-",
  "+",
  "~",
  " not",
  " lambda",
  " if",
  " await",
  "x",
  " ",
  "\t",
  "a = 1\n",
  "notable",
  "if(",
  "é",
  "not-",
  "(-",
];

test("nestingProblem answers scanNesting's full scan on random texts past every limit", () => {
  const r = rng(2026);
  const found = new Set<string | null>();
  for (let k = 0; k < 3000; k++) {
    // Runs of one piece (to reach a limit) mixed with random pieces (to reset or shift it).
    let text = "";
    for (let parts = 1 + r(6); parts > 0; parts--) {
      const piece = PIECES[r(PIECES.length)];
      const run = r(3) === 0 ? MAX_NESTING - 2 + r(5) : r(4) === 0 ? r(600) : r(20);
      text += piece.repeat(run);
      for (let i = r(30); i > 0; i--) text += PIECES[r(PIECES.length)];
    }
    const want = scanNesting(text, 0, 0);
    found.add(want);
    assert.equal(nestingProblem(text), want, `case ${k}: ${JSON.stringify(text.slice(0, 120))}`);
  }
  // The generator reached every answer (so the comparison covered each problem, not only null).
  assert.equal(found.size, 4, [...found].join(" | "));
});

test("nestingProblem at each limit exactly, and the first problem in the text wins", () => {
  const cases = [
    "(".repeat(MAX_NESTING),
    "(".repeat(MAX_NESTING + 1),
    "-".repeat(MAX_NESTING),
    "-".repeat(MAX_NESTING + 1),
    " not".repeat(MAX_NESTING),
    " not".repeat(MAX_NESTING + 1),
    "- ".repeat(MAX_NESTING + 1),
    `${"-".repeat(MAX_NESTING + 1)}\n${"(".repeat(MAX_NESTING + 1)}`,
    `${"(".repeat(MAX_NESTING + 1)}\n${"-".repeat(MAX_NESTING + 1)}`,
    `${"(".repeat(200)}\n${"(".repeat(57)}`,
    `${"(".repeat(200)}${")".repeat(300)}\n${"(".repeat(57)}`,
    `${"-".repeat(200)}\r${"-".repeat(100)}`,
    `x${" if".repeat(MAX_NESTING + 1)}(`,
    `${"(".repeat(MAX_NESTING)}${" not".repeat(MAX_NESTING + 1)}(`,
  ];
  for (const text of cases)
    assert.equal(nestingProblem(text), scanNesting(text, 0, 0), JSON.stringify(text.slice(0, 60)));
  assert.match(nestingProblem(`${"-".repeat(MAX_NESTING + 1)}\n${"(".repeat(MAX_NESTING + 1)}`)!, /unary/);
  assert.match(nestingProblem(`${"(".repeat(MAX_NESTING + 1)}\n${"-".repeat(MAX_NESTING + 1)}`)!, /brackets/);
  assert.equal(nestingProblem("(".repeat(MAX_NESTING)), null);
});

const pyFiles = (dir: string): string[] => filesUnder(dir, (n) => n.endsWith(".py"));

test("nestingProblem answers scanNesting's full scan on every Python file of the tests and examples", () => {
  const files = ["test", "examples", "verify"].flatMap((d) => pyFiles(join(ROOT, d)));
  assert.ok(files.length > 80, `${files.length} files`);
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    assert.equal(nestingProblem(text), scanNesting(text, 0, 0), f);
  }
});
