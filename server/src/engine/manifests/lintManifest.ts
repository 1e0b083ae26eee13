/**
 * Lints a manifest (Dockerfile, compose file, Kubernetes YAML, Slurm job script) with the manifest
 * rules (GPU018-GPU020; GPU021-GPU025 for job scripts), with the same options as Python: select/ignore, severity overrides and
 * `# noqa`; every fix must leave the YAML as parseable as it was. Also the manifest fix-all for
 * `--fix` and `source.fixAll.gpuPilot`.
 */
import { RULES } from "../rules/index";
import { isManifestRule, toDiagnostic, type ManifestRuleContext } from "../rule";
import { isRuleOn, type LintOptions, type RuleFailure } from "../lint";
import { applyEdits } from "../fixes";
import { safeEdits } from "../fixAll";
import type { LintDiagnostic, TextEdit } from "../types";
import type { ManifestKind } from "./files";
import { buildManifestModel } from "./model";
import { manifestNoqaLines } from "./noqa";
import { yamlErrorCount } from "./yaml";
import { fileOverSizeLimit } from "../limits";
import { hasSbatchLine } from "../prefilter";

export type { ManifestKind } from "./files";
export { manifestKindOf } from "./files";

/** The result of linting one manifest. */
export interface ManifestLintResult {
  diagnostics: LintDiagnostic[];
  ruleFailures: RuleFailure[];
}

/**
 * Lints manifest text. Never throws for any input: a rule that throws is recorded in
 * `ruleFailures` and the other rules still report.
 */
export function lintManifest(text: string, kind: ManifestKind, options: LintOptions = {}): ManifestLintResult {
  const tooLarge = fileOverSizeLimit(text, options.maxFileSizeKB);
  if (tooLarge) return { diagnostics: [tooLarge], ruleFailures: [] };
  // A shell script is a job script only with an `#SBATCH` line; any other gets no finding (and no parse).
  if (kind === "jobscript" && !hasSbatchLine(text)) return { diagnostics: [], ruleFailures: [] };
  const model = buildManifestModel(text, kind);
  const diagnostics: LintDiagnostic[] = [];
  const ruleFailures: RuleFailure[] = [];
  for (const rule of RULES) {
    if (!isManifestRule(rule) || !isRuleOn(rule, options)) continue;
    const ctx: ManifestRuleContext = { manifest: model, report: (f) => { if (!f.preview || options.preview) diagnostics.push(toDiagnostic(rule, f)); } };
    const before = diagnostics.length;
    try {
      rule.checkManifest(ctx);
    } catch (e) {
      diagnostics.length = before;
      ruleFailures.push({ code: rule.meta.code, error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e) });
    }
  }
  const noqa = manifestNoqaLines(text, kind, model.dockerfile);
  const kept = diagnostics.filter((d) => {
    if (!noqa.has(d.range.start.line)) return true;
    const codes = noqa.get(d.range.start.line);
    return codes !== null && !codes!.has(d.code);
  });
  const baseErrors = kind === "dockerfile" || kind === "jobscript" ? 0 : model.documents.reduce((n, d) => n + d.doc.errors.length, 0);
  for (const d of kept) {
    const override = options.severity?.[d.code];
    if (override) d.severity = override;
    if (d.fix && !fixKeepsSyntax(text, kind, d.fix.edits, baseErrors)) delete d.fix;
  }
  kept.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character || a.code.localeCompare(b.code));
  return { diagnostics: kept, ruleFailures };
}

/** A fix is kept only if it applies and the YAML has no more errors after it. */
function fixKeepsSyntax(text: string, kind: ManifestKind, edits: TextEdit[], baseErrors: number): boolean {
  try {
    const fixed = applyEdits(text, edits);
    return kind === "dockerfile" || kind === "jobscript" || yamlErrorCount(fixed) <= baseErrors;
  } catch {
    return false;
  }
}

/** Applies all safe fixes to a manifest, re-linting between passes (at most 10), like fixAllPython. */
export function fixAllManifest(text: string, kind: ManifestKind, options: LintOptions): { text: string; applied: number } {
  let out = text;
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const { edits, count } = safeEdits<TextEdit>(lintManifest(out, kind, options).diagnostics);
    if (!edits.length) break;
    applied += count;
    out = applyEdits(out, edits);
  }
  return { text: out, applied };
}
