/**
 * Fixture checks for the manifest rules (GPU018-GPU020): every manifest in
 * test/fixtures/rules/<code>/ (Dockerfiles, compose files, Kubernetes YAML, told apart by name as the
 * CLI does) reports exactly its annotated lines, and every fix keeps the YAML valid and is not
 * offered again once applied.
 *
 * Annotations: in YAML, `# expect: CODE` at the end of the line; in a Dockerfile, where `#` starts
 * a comment only at the start of a line, a `# expect: CODE` line marks the line below it.
 */
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../support/helpers";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";
import { manifestKindOf, type ManifestKind } from "../../../server/src/engine/manifests/files";
import { yamlErrorCount } from "../../../server/src/engine/manifests/yaml";
import { applyEdits } from "../../../server/src/engine/fixes";
import type { LintOptions } from "../../../server/src/engine/lint";
import type { LintDiagnostic } from "../../../server/src/engine/types";
import { ruleByCode } from "../../../server/src/engine/rules/index";
import { renderTextFixture, snapshotTest } from "./snapshot";
import { initEngine } from "../../../server/src/engine/lint";

// The launch rules parse the Python script a launch line names (launch/script.ts): every test file
// that lints manifests through these helpers has the parser ready first.
before(() => initEngine());

/** A manifest fixture. */
export interface ManifestFixture {
  name: string;
  text: string;
  kind: ManifestKind;
}

/** The manifests among a rule's fixtures (test/fixtures/rules/<code>/), sorted by name. */
export function manifestFixtureFiles(code: string): ManifestFixture[] {
  const dir = join(ROOT, "test", "fixtures", "rules", code);
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const kind = manifestKindOf(name);
      return kind ? [{ name, text: readFileSync(join(dir, name), "utf8"), kind }] : [];
    });
}

/** 1-based lines annotated for `code` (see the module comment for the two forms). */
export function expectedManifestLines(text: string, kind: ManifestKind, code: string): number[] {
  const out: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const at = line.indexOf("# expect:");
    if (
      at < 0 ||
      !line
        .slice(at + 9)
        .split(",")
        .map((s) => s.trim())
        .includes(code)
    )
      return;
    out.push(kind === "dockerfile" && line.trim().startsWith("#") ? i + 2 : i + 1);
  });
  return out;
}

/** Lints manifest text (as the file `file`, when given), failing the test on a rule failure. */
export function lintManifestText(
  text: string,
  kind: ManifestKind,
  options: LintOptions = {},
  file?: string,
): LintDiagnostic[] {
  const r = lintManifest(text, kind, options, file ? { file } : {});
  if (r.ruleFailures.length) throw new Error(`rule failures: ${JSON.stringify(r.ruleFailures)}`);
  return r.diagnostics;
}

/** Lints manifest text and keeps only one code. */
export function lintManifestCode(
  text: string,
  kind: ManifestKind,
  code: string,
  options: LintOptions = {},
  file?: string,
): LintDiagnostic[] {
  return lintManifestText(text, kind, options, file).filter((d) => d.code === code);
}

/** Applies a diagnostic's fix to manifest text, asserting the YAML (a YAML manifest's) gains no error. */
export function applyManifestFix(text: string, kind: ManifestKind, d: LintDiagnostic): string {
  if (!d.fix) throw new Error(`${d.code} has no fix`);
  const out = applyEdits(text, d.fix.edits);
  if (kind === "compose" || kind === "yaml")
    assert.ok(yamlErrorCount(out) <= yamlErrorCount(text), `fix "${d.fix.title}" broke the YAML:\n${out}`);
  return out;
}

/**
 * Registers the fixture tests of a manifest rule, its snapshot (snapshot.ts) among them. `asFiles`:
 * each fixture is linted as the file it is (for a rule that reads the files a launch line names
 * beside it: GPU042), or, given a folder, as the file of that name in it (a copy of the fixtures
 * in a project of their own: GPU076, which reads the whole project); otherwise as text alone.
 */
export function manifestFixtureTests(code: string, options: LintOptions = {}, asFiles: boolean | string = false): void {
  const files = manifestFixtureFiles(code);
  const dir = typeof asFiles === "string" ? asFiles : join(ROOT, "test", "fixtures", "rules", code);
  const at = (name: string) => (asFiles !== false ? join(dir, name) : undefined);
  test(`${code} has manifest fixtures`, () => assert.ok(files.length > 0));
  for (const f of files) {
    test(`${code} fixture ${f.name}: reports exactly the annotated lines`, () => {
      const got = lintManifestCode(f.text, f.kind, code, options, at(f.name)).map((d) => d.range.start.line + 1);
      assert.deepEqual(
        [...new Set(got)].sort((a, b) => a - b),
        expectedManifestLines(f.text, f.kind, code),
      );
    });
    test(`${code} fixture ${f.name}: each fix keeps the file valid and is not offered again`, () => {
      const same = (ds: LintDiagnostic[], d: LintDiagnostic) =>
        ds.filter((x) => x.fix?.title === d.fix!.title && x.message === d.message).length;
      const before = lintManifestCode(f.text, f.kind, code, options, at(f.name));
      for (const d of before.filter((x) => x.fix)) {
        const after = lintManifestCode(applyManifestFix(f.text, f.kind, d), f.kind, code, options, at(f.name));
        assert.ok(
          same(after, d) < same(before, d),
          `${f.name}:${d.range.start.line + 1} "${d.fix!.title}" is offered again after applying it`,
        );
      }
    });
  }
  snapshotTest(code, () =>
    files.map((f) => renderTextFixture(f.name, f.text, lintManifestCode(f.text, f.kind, code, options, at(f.name)))),
  );
}

/** The rule's doc example (read as `kind`) fires it, and its doc fix does not. */
export function manifestDocExampleTest(code: string, kind: ManifestKind, { preview = false } = {}): void {
  test(`${code}: the doc example fires the rule and the doc fix does not${preview ? " (preview only)" : ""}`, () => {
    const docs = ruleByCode(code)!.meta.docs;
    if (preview) assert.deepEqual(lintManifestCode(docs.example, kind, code), [], `${code} is a preview rule`);
    const options = preview ? { preview: true } : {};
    assert.ok(lintManifestCode(docs.example, kind, code, options).length > 0, `${code}'s example does not trigger it`);
    assert.deepEqual(lintManifestCode(docs.fix, kind, code, options), [], `${code}'s fixed example still triggers it`);
  });
}
