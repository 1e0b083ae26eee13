/**
 * python/keptText.ts: textChange finds where two versions differ, and KeptNesting's scan of an
 * edited text (only the lines the edit changed, then the old state) answers what limits.ts's
 * nestingProblem answers for the whole text, over random edit sequences that open and close
 * brackets, chain unary operators and nesting keywords up to and past the limit, and use \r\n.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { textChange, KeptNesting } from "../../../../../server/src/engine/python/keptText";
import { nestingProblem, MAX_NESTING } from "../../../../../server/src/engine/limits";
import { lineStarts } from "../../../../../server/src/engine/fixes";

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

test("textChange: the common prefix and the non-overlapping common suffix", () => {
  assert.deepEqual(textChange("abcdef", "abcdef"), { start: 6, oldEnd: 6, newEnd: 6 });
  assert.deepEqual(textChange("abcdef", "abXdef"), { start: 2, oldEnd: 3, newEnd: 3 });
  assert.deepEqual(textChange("aaaa", "aaaaa"), { start: 4, oldEnd: 4, newEnd: 5 });
  assert.deepEqual(textChange("", "xy"), { start: 0, oldEnd: 0, newEnd: 2 });
  assert.deepEqual(textChange("xy", ""), { start: 0, oldEnd: 2, newEnd: 0 });
  const r = rng(7);
  const alphabet = "ab\n(";
  for (let k = 0; k < 400; k++) {
    const len = r(5) === 0 ? r(3000) : r(40);
    let old = "";
    for (let i = 0; i < len; i++) old += alphabet[r(alphabet.length)];
    const at = r(old.length + 1),
      end = Math.min(old.length, at + r(4));
    let ins = "";
    for (let i = r(4); i > 0; i--) ins += alphabet[r(alphabet.length)];
    const next = old.slice(0, at) + ins + old.slice(end);
    const c = textChange(old, next);
    let p = 0;
    while (p < Math.min(old.length, next.length) && old[p] === next[p]) p++;
    let s = 0;
    while (s < Math.min(old.length, next.length) - p && old[old.length - 1 - s] === next[next.length - 1 - s]) s++;
    assert.deepEqual(c, { start: p, oldEnd: old.length - s, newEnd: next.length - s }, `case ${k}`);
    assert.equal(old.slice(0, c.start) + next.slice(c.start, c.newEnd) + old.slice(c.oldEnd), next);
  }
});

/** Pieces that move the scan's state: brackets, unary runs, nesting keywords, line ends. */
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
  "a = 1\n",
  "notable",
  "if(",
  "\n\n",
];

test("KeptNesting.next answers nestingProblem(text) for every version of random edit sequences", () => {
  const r = rng(20261201);
  let problems = 0,
    passes = 0;
  for (let seq = 0; seq < 60; seq++) {
    let text = "";
    for (let i = r(400); i > 0; i--) text += PIECES[r(PIECES.length)];
    let state = KeptNesting.scan(text);
    assert.equal(state.problem, nestingProblem(text));
    for (let step = 0; step < 40; step++) {
      const at = r(text.length + 1);
      const end = Math.min(text.length, at + (r(3) === 0 ? r(20) : 0));
      let ins = "";
      const kind = r(8);
      if (kind === 0)
        ins = "(".repeat(MAX_NESTING - 10 + r(20)); // near and past the bracket limit
      else if (kind === 1) ins = "-".repeat(MAX_NESTING - 3 + r(6));
      else if (kind === 2) ins = " not".repeat(MAX_NESTING - 3 + r(6));
      else for (let i = 1 + r(4); i > 0; i--) ins += PIECES[r(PIECES.length)];
      const next = text.slice(0, at) + ins + text.slice(end);
      const expected = nestingProblem(next);
      // As lintPython: the kept state of the last text that passed, else a scan from scratch.
      const got = state.kept ? state.kept.next(next) : KeptNesting.scan(next);
      assert.equal(got.problem, expected, `sequence ${seq}, step ${step}`);
      if (expected === null) passes++;
      else problems++;
      // The kept state must be the one a scan from scratch keeps: check it on the next edit too.
      state = got;
      text = next;
      if (text.length > 6000) {
        text = text.slice(0, 1000);
        state = KeptNesting.scan(text);
      }
    }
  }
  assert.ok(problems > 50 && passes > 200, `both answers occur (${problems} problems, ${passes} passes)`);
});

test("KeptNesting.next: an unclosed bracket typed far above a deep nest is found below it", () => {
  const deep = `x = ${"(".repeat(MAX_NESTING - 1)}1${")".repeat(MAX_NESTING - 1)}\n`;
  const text = "a = 1\n".repeat(200) + deep + "b = 2\n".repeat(200);
  const first = KeptNesting.scan(text);
  assert.equal(first.problem, null);
  const next = "(((" + text; // three open brackets at the top: the nest 200 lines below goes past the limit
  assert.equal(nestingProblem(next), `its brackets nest more than ${MAX_NESTING} deep (Python allows 200)`);
  assert.equal(first.kept!.next(next).problem, nestingProblem(next));
});

test("KeptNesting.next hands its state on (patched in place) and refuses a second call; a pasted 300,000-line text is taken", () => {
  const text = "a = (1,\n     2)\n".repeat(50);
  const first = KeptNesting.scan(text).kept!;
  const typed = text.slice(0, 10) + "x" + text.slice(10);
  const second = first.next(typed).kept!;
  assert.throws(() => first.next(typed), /handed on/);
  const pasted = typed.slice(0, 20) + "b = [\n1,\n]\n".repeat(100_000) + typed.slice(20);
  const third = second.next(pasted);
  assert.equal(third.problem, nestingProblem(pasted));
  const back = third.kept!.next(typed);
  assert.equal(back.problem, null);
  assert.equal(back.kept!.next(typed.replace("(1", "((1")).problem, nestingProblem(typed.replace("(1", "((1")));
});

test("lineStarts: \\n, \\r\\n and a lone \\r end lines; a text with only \\n is searched line by line", () => {
  assert.deepEqual(lineStarts("a\nbc\n\nd"), [0, 2, 5, 6]);
  assert.deepEqual(lineStarts("a\r\nb\rc\n"), [0, 3, 5, 7]);
  assert.deepEqual(lineStarts(""), [0]);
  assert.deepEqual(lineStarts("\n"), [0, 1]);
  const r = rng(3);
  for (let k = 0; k < 200; k++) {
    let t = "";
    for (let i = r(60); i > 0; i--) t += ["a", "\n", "\r", "\r\n", " "][r(5)];
    const expected = [0];
    for (let i = 0; i < t.length; i++) {
      if (t[i] === "\r") {
        if (t[i + 1] === "\n") i++;
        expected.push(i + 1);
      } else if (t[i] === "\n") expected.push(i + 1);
    }
    assert.deepEqual(lineStarts(t), expected, JSON.stringify(t));
  }
});
