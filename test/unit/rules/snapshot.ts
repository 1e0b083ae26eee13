/**
 * Snapshots of what the user sees, one text file per rule beside its fixtures
 * (test/fixtures/rules/<code>/<code>.snap), after Ruff's: for every fixture, each diagnostic of the
 * rule with its severity, range, message and related locations, and each fix with its title, whether
 * it is safe, its note and the unified diff it makes. The fixture tests (fixtureCheck.ts,
 * manifestFixtureCheck.ts) compare them with what the engine gives now.
 *
 * `UPDATE_SNAPSHOTS=1` rewrites every snapshot a run compares; a missing snapshot is written when
 * not in CI and fails under `CI` (a snapshot must be reviewed and committed, never made up by CI).
 * Ranges are 1-based `line:column-line:column` (columns in UTF-16 code units, as the editor counts
 * them), the end exclusive.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { createTwoFilesPatch } from "diff";
import { ROOT } from "../support/helpers";
import { applyEdits } from "../../../server/src/engine/fixes";
import type { Fix, LintDiagnostic, Range, RelatedInfo } from "../../../server/src/engine/types";
import type { CellDiagnostic } from "../../../server/src/engine/notebook";

/** One fixture's part of a snapshot: its file name and its rendered findings. */
export interface FixtureSnapshot {
  name: string;
  body: string;
}

/** A range as the user reads it: 1-based `line:column-line:column`. */
export function renderRange(r: Range): string {
  return `${r.start.line + 1}:${r.start.character + 1}-${r.end.line + 1}:${r.end.character + 1}`;
}

/**
 * A unified diff (3 lines of context) from `before` to `after`, both named `name` (`a/` and `b/`
 * as git writes them); empty when the texts are equal.
 */
export function unifiedDiff(name: string, before: string, after: string): string {
  if (before === after) return "";
  const patch = createTwoFilesPatch(`a/${name}`, `b/${name}`, before, after, undefined, undefined, { context: 3 });
  return patch.replace(/^(Index: .*\n)?=+\n/, "").replace(/\t\n/g, "\n");
}

/**
 * `text`'s lines, each after `by`, without trailing blanks (a blank context line of a diff is then
 * empty): an editor that trims trailing white space on save leaves a snapshot as it is.
 */
const indent = (text: string, by: string) =>
  text
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => (by + l).trimEnd())
    .join("\n");

/** The lines of a fix: title, safety, note, and the diff(s) `diffs` gives. */
function renderFix(fix: Pick<Fix, "title" | "safe" | "note">, diffs: string): string {
  const lines = [`  fix (${fix.safe ? "safe" : "unsafe"}): ${fix.title}`];
  if (fix.note) lines.push(`    note: ${fix.note}`);
  lines.push(diffs ? indent(diffs, "    ") : "    (no change)");
  return lines.join("\n");
}

/** The head line, message and related locations of one finding; `at` names a cell in a notebook. */
function renderHead(
  d: Pick<LintDiagnostic, "code" | "severity" | "message" | "range">,
  related: RelatedInfo[] | undefined,
  at = "",
): string {
  const lines = [`${d.code} ${d.severity} at ${at}${renderRange(d.range)}`, `  ${d.message}`];
  for (const r of related ?? [])
    lines.push(`  related ${r.file ? `${basename(r.file)} ` : ""}${renderRange(r.range)}: ${r.message}`);
  return lines.join("\n");
}

/** Findings in reading order (range, then message), so a snapshot does not depend on the rules' order of reports. */
function inOrder<T extends { range: Range; message: string; cell?: number }>(ds: readonly T[]): T[] {
  const key = (d: T) =>
    [d.cell ?? 0, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character] as const;
  return [...ds].sort((a, b) => {
    const ka = key(a),
      kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
}

/** A text fixture (Python or a manifest): each finding, and each fix's diff on the fixture's text. */
export function renderTextFixture(name: string, text: string, diagnostics: readonly LintDiagnostic[]): FixtureSnapshot {
  const parts = inOrder(diagnostics).map((d) => {
    const head = renderHead(d, d.related);
    return d.fix ? `${head}\n${renderFix(d.fix, unifiedDiff(name, text, applyEdits(text, d.fix.edits)))}` : head;
  });
  return { name, body: parts.length ? parts.join("\n\n") : "(no findings)" };
}

/** A notebook fixture: locations are `cell N, line:column`, and a fix's diff is per cell it changes. */
export function renderNotebookFixture(
  name: string,
  cells: ReadonlyArray<{ text: string }>,
  diagnostics: readonly CellDiagnostic[],
): FixtureSnapshot {
  const parts = inOrder(diagnostics).map((d) => {
    const related = d.related?.map((r) => ({ range: r.range, message: `cell ${r.cell + 1}, ${r.message}` }));
    const head = renderHead(d, related, `cell ${d.cell + 1}, `);
    if (!d.fix) return head;
    const touched = [...new Set(d.fix.edits.map((e) => e.cell))].sort((a, b) => a - b);
    const diffs = touched
      .map((c) => {
        const before = cells[c].text;
        return unifiedDiff(
          `${name} cell ${c + 1}`,
          before,
          applyEdits(
            before,
            d.fix!.edits.filter((e) => e.cell === c),
          ),
        );
      })
      .join("");
    return `${head}\n${renderFix(d.fix, diffs)}`;
  });
  return { name, body: parts.length ? parts.join("\n\n") : "(no findings)" };
}

/** The snapshot file of a rule: test/fixtures/rules/<code>/<code>.snap. */
export function snapshotPath(code: string): string {
  return join(ROOT, "test", "fixtures", "rules", code, `${code}.snap`);
}

/** The whole snapshot text of a rule from its fixtures' parts (sorted by name). */
export function renderSnapshot(code: string, fixtures: readonly FixtureSnapshot[]): string {
  const head = [
    `# ${code}: what the user sees on each fixture of test/fixtures/rules/${code}/`,
    `# Checked by test/unit/rules/${code}.test.ts; rewrite with UPDATE_SNAPSHOTS=1 and review the diff.`,
    "# Ranges: line:column-line:column, 1-based, end exclusive.",
  ].join("\n");
  const parts = [...fixtures].sort((a, b) => (a.name < b.name ? -1 : 1)).map((f) => `## ${f.name}\n\n${f.body}`);
  return `${head}\n\n${parts.join("\n\n")}\n`;
}

/**
 * Compares `actual` with the snapshot file `file`: rewrites it under UPDATE_SNAPSHOTS=1, writes a
 * missing one outside CI, and fails (with the diff, or with how to make it: `remake`) otherwise.
 * `env` is the environment read (the process's by default).
 */
export function checkSnapshot(
  file: string,
  actual: string,
  remake: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const shown = relative(ROOT, file);
  const update = env.UPDATE_SNAPSHOTS === "1";
  if (!existsSync(file) && !update) {
    assert.ok(!env.CI, `${shown} is missing: run ${remake}, review the file and commit it`);
    writeFileSync(file, actual);
    return;
  }
  if (update) {
    writeFileSync(file, actual);
    return;
  }
  const expected = readFileSync(file, "utf8");
  if (expected === actual) return;
  assert.fail(
    `${shown} differs from what the rules report now (UPDATE_SNAPSHOTS=1 rewrites it; review before committing):\n${unifiedDiff(shown, expected, actual)}`,
  );
}

/** Registers the snapshot test of a rule: `render` gives each fixture's part. */
export function snapshotTest(code: string, render: () => Promise<FixtureSnapshot[]> | FixtureSnapshot[]): void {
  test(`${code} snapshot: messages, ranges and fixes on its fixtures are as ${code}.snap records`, async () => {
    checkSnapshot(
      snapshotPath(code),
      renderSnapshot(code, await render()),
      `UPDATE_SNAPSHOTS=1 node --import tsx --test test/unit/rules/${code}.test.ts`,
    );
  });
}
