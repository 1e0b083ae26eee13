/**
 * The server's `# noqa` helpers (server/src/editorHelpers.ts) answer the same from the kept
 * syntax trees of the document (the editor's chunks) as from a parse of the text, on every line
 * of the project's Python files and with a noqa comment added to lines; a line without `#`
 * (without `noqa`, for the hover) needs no parse at all.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, CASES, filesUnder } from "../support/helpers";
import { initEngine } from "../../../server/src/engine/lint";
import { commentOnLine, noqaCodeAt, noqaEdit } from "../../../server/src/editorHelpers";
import { ModuleTrees } from "../../../server/src/engine/python/moduleTrees";
import { pythonInput } from "../../../server/src/engine/python/parser";

const FILES = [
  ...filesUnder(join(ROOT, "test", "fixtures", "rules"), (n) => n.endsWith(".py")),
  ...filesUnder(CASES, (n) => n.endsWith(".py")),
  ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".py")),
];

test("commentOnLine, noqaEdit and noqaCodeAt from the kept trees equal those from a parse, on every line", async () => {
  await initEngine();
  let lines = 0,
    comments = 0,
    hits = 0;
  for (const f of FILES) {
    const original = readFileSync(f, "utf8");
    // Every third line also gets a noqa comment (a `#` inside a string on such a line stays a string).
    const text = original
      .split("\n")
      .map((l, i) => (i % 3 === 1 && l.trim() ? `${l}  # noqa: GPU001, gpu002` : l))
      .join("\n");
    const trees = ModuleTrees.parse(pythonInput(text), true);
    try {
      const count = text.split(/\r\n|\r|\n/).length;
      for (let line = 0; line < count; line++) {
        const parsed = commentOnLine(text, line);
        assert.deepEqual(commentOnLine(text, line, trees), parsed, `${f}:${line + 1}`);
        assert.deepEqual(
          noqaEdit(text, line, "GPU003", trees),
          noqaEdit(text, line, "GPU003"),
          `${f}:${line + 1} noqaEdit`,
        );
        if (parsed) {
          comments++;
          for (let ch = parsed.column; ch <= parsed.column + parsed.text.length; ch += 3) {
            const at = { line, character: ch };
            const want = noqaCodeAt(text, at);
            assert.deepEqual(noqaCodeAt(text, at, trees), want, `${f}:${line + 1}:${ch} noqaCodeAt`);
            if (want) hits++;
          }
        }
        lines++;
      }
    } finally {
      trees.delete();
    }
  }
  assert.ok(
    lines > 1000 && comments > 300 && hits > 300,
    `${lines} lines, ${comments} comments, ${hits} codes under the cursor`,
  );
});

test("a line without `#` has no comment, and a hover off a noqa comment finds no code, without parsing", () => {
  // The parser is not needed for these answers: a trees object that throws when asked proves it.
  const trees = new Proxy(
    {},
    {
      get() {
        throw new Error("the trees were queried");
      },
    },
  ) as unknown as ModuleTrees;
  assert.equal(commentOnLine("x = 1\ny = '#'\n", 0, trees), null);
  assert.equal(noqaCodeAt("x = 1  # a comment\n", { line: 0, character: 10 }, trees), null);
  assert.deepEqual(noqaEdit("x = 1\n", 0, "GPU001", trees), {
    range: { start: { line: 0, character: 5 }, end: { line: 0, character: 5 } },
    newText: "  # noqa: GPU001",
  });
});
