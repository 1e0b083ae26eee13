/**
 * Issue 18 item 3: manifest fixes are checked in groups (one parse for all disjoint fixes, halved
 * only where a group adds a YAML error) instead of one parse of the whole file per fix. The result
 * must be the one the per-fix check gives.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  fixAllManifest,
  lintManifest,
  manifestFixParsesCleanly,
} from "../../../../../server/src/engine/manifests/lintManifest";
import type { ManifestRule } from "../../../../../server/src/engine/rule";
import { ruleByCode } from "../../../../../server/src/engine/rules/index";
import { manifestWithFindings } from "../../../../../bench/fix-scaling";

// A rule made for this test: GPU093 reports every `MARK` with a fix to `good`, or to `[` (an
// unclosed flow sequence: a YAML error) on lines that also say BREAK.
const markRule: ManifestRule = {
  meta: { ...(ruleByCode("GPU018") as ManifestRule).meta, code: "GPU093", name: "test-GPU093" } as ManifestRule["meta"],
  checkManifest(ctx) {
    ctx.manifest.src.text.split("\n").forEach((l, line) => {
      const k = l.indexOf("MARK");
      if (k < 0) return;
      const range = { start: { line, character: k }, end: { line, character: k + 4 } };
      ctx.report({
        range,
        message: "MARK",
        fix: { title: "fix", safe: true, edits: [{ range, newText: l.includes("BREAK") ? "[" : "good" }] },
      });
    });
  },
};

test("lintManifest drops exactly the fixes the per-fix check drops (groups halved around the bad ones)", () => {
  const breaks = new Set([0, 7, 8, 31, 49]);
  const text = Array.from({ length: 50 }, (_, i) => `k${i}: MARK${breaks.has(i) ? " # BREAK" : ""}`).join("\n") + "\n";
  const r = lintManifest(text, "yaml", { rules: [markRule] });
  assert.equal(r.diagnostics.length, 50);
  const fixed = r.diagnostics.filter((d) => d.fix).map((d) => d.range.start.line);
  assert.deepEqual(
    fixed,
    Array.from({ length: 50 }, (_, i) => i).filter((i) => !breaks.has(i)),
  );
  for (const d of r.diagnostics) {
    const fix = { edits: [{ range: d.range, newText: breaks.has(d.range.start.line) ? "[" : "good" }] };
    assert.equal(
      manifestFixParsesCleanly(text, "yaml", fix),
      !breaks.has(d.range.start.line),
      `line ${d.range.start.line}`,
    );
  }
  const all = fixAllManifest(text, "yaml", { rules: [markRule] });
  assert.equal(all.applied, 45);
  assert.equal(all.text, text.replace(/MARK(?! # BREAK)/g, "good"));
});

test("the editor's lint (lazyFixValidation) keeps every fix; the check it runs when offering one refuses exactly the breaking ones", () => {
  // The language server checks a manifest fix when VS Code asks for code actions
  // (handlers/codeActions.ts: manifestFixParsesCleanly), so its lint parses no fixed text.
  const breaks = new Set([3, 11]);
  const text = Array.from({ length: 20 }, (_, i) => `k${i}: MARK${breaks.has(i) ? " # BREAK" : ""}`).join("\n") + "\n";
  const lazy = lintManifest(text, "yaml", { rules: [markRule], lazyFixValidation: true });
  assert.equal(lazy.diagnostics.filter((d) => d.fix).length, 20);
  const offered = lazy.diagnostics
    .filter((d) => manifestFixParsesCleanly(text, "yaml", d.fix!))
    .map((d) => d.range.start.line);
  const eager = lintManifest(text, "yaml", { rules: [markRule] })
    .diagnostics.filter((d) => d.fix)
    .map((d) => d.range.start.line);
  assert.deepEqual(offered, eager);
  assert.deepEqual(
    eager,
    Array.from({ length: 20 }, (_, i) => i).filter((i) => !breaks.has(i)),
  );
});

test("GPU018 on a Deployment of 60 containers: every fix kept, each one parses on its own", () => {
  const text = manifestWithFindings(60);
  const r = lintManifest(text, "yaml", {});
  const gpu018 = r.diagnostics.filter((d) => d.code === "GPU018");
  assert.equal(gpu018.length, 60);
  assert.ok(gpu018.every((d) => d.fix && manifestFixParsesCleanly(text, "yaml", d.fix)));
  assert.equal(fixAllManifest(text, "yaml", {}).applied, 60);
});
