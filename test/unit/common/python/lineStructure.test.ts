/** common/src/python/lineStructure.ts codeWords: the words of the code as CPython's tokenizer reads them, and where logical lines end. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { codeWords } from "../../../../common/src/python/lineStructure";

function scan(text: string): { words: string[]; ends: number[]; error: string | null } {
  const words: string[] = [],
    ends: number[] = [];
  const error = codeWords(
    text,
    (s, e) => words.push(text.slice(s, e)),
    (o) => ends.push(o),
  );
  return { words, ends, error: error?.message ?? null };
}

test("codeWords leaves out strings (with their prefixes) and comments, not the code in f-strings", () => {
  const r = scan("x = 'del y'  # del z\nb\"q\" + rb'''a\nb''' + f\"{w} del\"\n");
  assert.deepEqual(r.words, ["x", "w"]);
  assert.deepEqual(r.ends, [20, 52]);
});

test("codeWords: a logical line ends at depth 0, not inside brackets or after a backslash", () => {
  const text = "del (a,\n  b)\ndel c, \\\n  d\n\n# note\ne\n";
  const r = scan(text);
  assert.deepEqual(r.words, ["del", "a", "b", "del", "c", "d", "e"]);
  assert.deepEqual(
    r.ends.map((o) => text.slice(0, o).split("\n").length - 1),
    [1, 3, 4, 5, 6],
  );
  assert.equal(r.error, null);
});

test("codeWords stops at the first line-structure error and returns it", () => {
  const r = scan("a = 1\n    b = 2\nc\n");
  assert.deepEqual(r.words, ["a", "1"], "numbers are words too");
  assert.equal(r.error, "unexpected indent");
});
