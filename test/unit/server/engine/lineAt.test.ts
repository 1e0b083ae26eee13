/**
 * fixes.ts `lineStartAt`, `nextLineStartAt` and `lineEndAt` (the fixes' line lookups, which scan
 * from a node instead of building the whole text's line starts at every keystroke) answer as
 * `lineStarts` does, at every offset of texts mixing \n, \r\n and lone \r line breaks.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { lineEndAt, lineStartAt, lineStarts, nextLineStartAt } from "../../../../server/src/engine/fixes";

/** The line of `offset` by `lineStarts` (a line break belongs to the line it ends). */
function lineOf(starts: readonly number[], offset: number): number {
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1] <= offset) line++;
  return line;
}

test("lineStartAt, nextLineStartAt and lineEndAt agree with lineStarts at every offset", () => {
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pieces = ["x", "ab", " ", "\n", "\r\n", "\r", "\n\n", "#c"];
  const texts = ["", "x", "\n", "\r\n", "\r", "a\r\nb", "a\rb\n", "a\n\r\nb\r"];
  for (let k = 0; k < 200; k++)
    texts.push(Array.from({ length: 1 + rnd(12) }, () => pieces[rnd(pieces.length)]).join(""));
  for (const text of texts) {
    const starts = [...lineStarts(text)];
    for (let offset = 0; offset <= text.length; offset++) {
      // An offset between the \r and \n of one line break is no node boundary: not asked.
      if (text[offset - 1] === "\r" && text[offset] === "\n") continue;
      const line = lineOf(starts, offset);
      const where = `${JSON.stringify(text)} at ${offset}`;
      assert.equal(lineStartAt(text, offset), starts[line], `lineStartAt, ${where}`);
      assert.equal(
        nextLineStartAt(text, offset),
        line + 1 < starts.length ? starts[line + 1] : null,
        `nextLineStartAt, ${where}`,
      );
      const next = line + 1 < starts.length ? starts[line + 1] : text.length;
      const end = text.slice(starts[line], next).replace(/(\r\n|\n|\r)$/, "").length + starts[line];
      assert.equal(lineEndAt(text, offset), end, `lineEndAt, ${where}`);
    }
  }
});

test("lineStartAt and nextLineStartAt at a line's own line break: the line it ends", () => {
  const text = "ab\r\ncd\ref\n";
  assert.equal(lineStartAt(text, 2), 0); // the \r of \r\n ends line 0
  assert.equal(nextLineStartAt(text, 2), 4);
  assert.equal(lineStartAt(text, 6), 4); // a lone \r
  assert.equal(nextLineStartAt(text, 6), 7);
  assert.equal(nextLineStartAt(text, 9), 10); // the last \n: an empty last line follows
  assert.equal(nextLineStartAt(text, 10), null);
  assert.equal(lineEndAt(text, 4), 6);
});
