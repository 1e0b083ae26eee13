/**
 * Shared check: every `# expect: CODE` line of a rule's fixtures is reported, and nothing else for
 * that code, with preview on (fixtures document every check of a rule, preview ones too; the
 * default set is tested in ecosystemPatterns.test.ts). Fixtures are `.py` files, and `.ipynb` notebooks for notebook-only rules (there a line
 * is `cell:line`, both 1-based, and the annotation may sit on a `!` shell line: bash ignores the comment).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fixtureFiles, expectedLines, lint, ROOT } from "../support/helpers";
import { initEngine, type LintOptions } from "../../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook } from "../../../server/src/engine/notebook";
import { renderNotebookFixture, renderTextFixture, snapshotTest } from "./snapshot";

/**
 * Registers a rule's fixture tests: each fixture reports exactly its annotated lines, and what the
 * user sees on all of them (messages, ranges, fixes) matches the rule's snapshot (snapshot.ts).
 */
export function fixtureTests(code: string, options: LintOptions = { preview: true }): void {
  for (const f of fixtureFiles(code)) {
    test(`${code} fixture ${f.name}: reports exactly the annotated lines`, async () => {
      const got = (await lint(f.text, options)).filter((d) => d.code === code).map((d) => d.range.start.line + 1);
      assert.deepEqual(
        [...new Set(got)].sort((a, b) => a - b),
        expectedLines(f.text, code),
      );
    });
  }
  for (const f of notebookFixtures(code)) {
    test(`${code} fixture ${f.name}: reports exactly the annotated cell lines`, async () => {
      await initEngine();
      const cells = cellsOfIpynb(f.text);
      const result = lintNotebook(cells, options);
      assert.deepEqual(result.ruleFailures, []);
      const got = result.diagnostics
        .filter((d) => d.code === code)
        .map((d) => `${d.cell + 1}:${d.range.start.line + 1}`);
      const expected = cells.flatMap((c, i) =>
        c.kind === "code" ? expectedLines(c.text, code).map((l) => `${i + 1}:${l}`) : [],
      );
      assert.deepEqual([...new Set(got)].sort(), expected.sort());
    });
  }
  snapshotTest(code, async () => {
    await initEngine();
    const texts = await Promise.all(
      fixtureFiles(code).map(async (f) =>
        renderTextFixture(
          f.name,
          f.text,
          (await lint(f.text, options)).filter((d) => d.code === code),
        ),
      ),
    );
    const notebooks = notebookFixtures(code).map((f) => {
      const cells = cellsOfIpynb(f.text);
      const result = lintNotebook(cells, options);
      return renderNotebookFixture(
        f.name,
        cells,
        result.diagnostics.filter((d) => d.code === code),
      );
    });
    return [...texts, ...notebooks];
  });
}

/** The notebook fixtures of a rule: test/fixtures/rules/<code>/*.ipynb */
export function notebookFixtures(code: string): Array<{ name: string; text: string }> {
  const dir = join(ROOT, "test", "fixtures", "rules", code);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".ipynb"))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(dir, name), "utf8") }));
}
