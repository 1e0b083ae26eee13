/** Shared check: every `# expect: CODE` line of a rule's fixtures is reported, and nothing else for that code. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixtureFiles, expectedLines, lint } from "../helpers";
import type { LintOptions } from "../../../server/src/engine/lint";

export function fixtureTests(code: string, options: LintOptions = {}): void {
  for (const f of fixtureFiles(code)) {
    test(`${code} fixture ${f.name}: reports exactly the annotated lines`, async () => {
      const got = (await lint(f.text, options)).filter((d) => d.code === code).map((d) => d.range.start.line + 1);
      assert.deepEqual([...new Set(got)].sort((a, b) => a - b), expectedLines(f.text, code));
    });
  }
}
