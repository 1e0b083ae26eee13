/**
 * Lints a manifest (Dockerfile, compose file, Kubernetes YAML, Slurm job script) with the manifest
 * rules (GPU018-GPU020; GPU021-GPU025 for job scripts), with the same options as Python: select/ignore, severity overrides and
 * `# noqa`; every fix must leave the YAML as parseable as it was. Also the manifest fix-all for
 * `--fix` and `source.fixAll.gpuPilot`.
 */
import { resolve } from "node:path";
import { STARTUP_PREFIXES } from "../frameworks";
import { readWorkspaceText } from "../../../../common/src/fs/workspaceFile";
import { RULES } from "../rules/index";
import { isManifestRule, reporter, type ManifestRule, type ManifestRuleContext } from "../rule";
import { isRuleOn, type LintOptions, type RuleFailure } from "../lint";
import { applyEdits } from "../fixes";
import { safeEdits } from "../fixAll";
import type { LintDiagnostic, TextEdit } from "../types";
import type { ManifestKind } from "./files";
import { buildManifestModel } from "./model";
import { manifestNoqaLines } from "./noqa";
import { yamlErrorCount, type YamlParse } from "./yaml";
import { devcontainerErrorCount } from "./devcontainer";
import { fileOverSizeLimit } from "../limits";
import {
  hasNeedleEscape,
  hasSbatchLine,
  manifestRuleMayFire,
  mentionsContainerGpus,
  mentionsLauncher,
} from "./prefilter";

export type { ManifestKind } from "./files";
export { manifestKindOf } from "./files";

/** The result of linting one manifest. */
export interface ManifestLintResult {
  diagnostics: LintDiagnostic[];
  ruleFailures: RuleFailure[];
  /** A YAML text's parsed documents (yaml.ts YamlParse), for `extra.previous` of the next version's lint; absent when it was not parsed. */
  yaml?: YamlParse;
  /** The other files the rules read (ManifestRuleContext.read), absolute: the result depends on them. */
  deps?: string[];
}

/**
 * A reader of the workspace files a manifest's rules depend on, and the list of what it read: the
 * files it could read (a file that is missing now, such as an optional `source local.sh` or one of
 * an accelerate config's candidate folders, is not a dependency: the CLI's cache keeps no result
 * that depends on an unreadable file, and most scripts name one). A file open in the editor
 * (`openText`, LintOptions.openText) is read from its document, at most `maxBytes` bytes of UTF-8
 * as on disk; any other from the disk through the safe reader (common/src/fs/workspaceFile.ts).
 */
function dependencyReader(openText?: LintOptions["openText"]): {
  read: ManifestRuleContext["read"];
  deps(): string[];
} {
  const paths = new Set<string>();
  const readText = (path: string, maxBytes: number): string | null => {
    const open = openText?.(path) ?? null;
    if (open !== null) return Buffer.byteLength(open, "utf8") > maxBytes ? null : open;
    const r = readWorkspaceText(path, maxBytes);
    return "text" in r ? r.text : null;
  };
  return {
    read: (path, maxBytes, absentMatters = false) => {
      const at = resolve(path);
      const text = readText(at, maxBytes);
      // A file whose absence decided the result (accelerate's default config) is recorded unread
      // too: its appearance changes the result as much as an edit (the CLI's cache keeps an
      // unreadable dependency as absent: cliCache.ts ABSENT).
      if (text !== null || absentMatters) paths.add(at);
      return text;
    },
    deps: () => [...paths],
  };
}

/**
 * The startup variables' prefixes (frameworks.ts STARTUP_PREFIXES), in any case (GPU055 judges
 * names case-insensitively, as GPU007).
 */
const STARTUP_PREFIX = new RegExp(STARTUP_PREFIXES.join("|"), "i");

/**
 * Whether a shell script is read at all. A shell script is a job script only with an `#SBATCH`
 * line; any other is read only for its launch command lines (GPU040, GPU042), when it names a
 * launcher, and its container runs (GPU043), when it runs one with --gpus, for CUDA_VISIBLE_DEVICES
 * ids compared with a known machine (GPU045), for the device ordinal options it gives a Python
 * script, with a known machine or visible devices (GPU052), for a startup variable assigned
 * without `export` before Python starts (GPU054: the text names one and `python`), and for a name
 * a typo away from one (GPU055: the text has `CUDA_`, `PYTORCH_`, `XLA_` or `TF_`, in any case).
 */
function shellScriptIsRead(text: string, options: LintOptions): boolean {
  const machine = options.machine?.gpuCount != null;
  return (
    hasSbatchLine(text) ||
    mentionsLauncher(text) ||
    mentionsContainerGpus(text) ||
    // Every startup variable's name, CUDA_VISIBLE_DEVICES among them, holds one of these prefixes.
    STARTUP_PREFIX.test(text) ||
    (machine && text.includes("python") && text.includes(".py"))
  );
}

/**
 * Lints manifest text. Never throws for any input: a rule that throws is recorded in
 * `ruleFailures` and the other rules still report.
 * @param extra.previous the last version's `yaml` (the editor): a YAML stream's documents the
 *   change does not touch are not parsed again. Its documents are reused: do not use it after.
 * @param extra.file the file's absolute path, when it has one: GPU040 reads an accelerate config
 *   file named by a launch relative to it.
 */
export function lintManifest(
  text: string,
  kind: ManifestKind,
  options: LintOptions = {},
  extra: { previous?: YamlParse; file?: string | null } = {},
): ManifestLintResult {
  if (options.excluded) return { diagnostics: [], ruleFailures: [] }; // exclude.ts: the project leaves it out
  const tooLarge = fileOverSizeLimit(text, options.maxFileSizeKB);
  if (tooLarge) return { diagnostics: [tooLarge], ruleFailures: [] };
  if (kind === "jobscript" && !shellScriptIsRead(text, options)) return { diagnostics: [], ruleFailures: [] };
  // The rules to run: enabled, and (YAML, unless the prefilter is off) passing their text trigger
  // (manifests/prefilter.ts); a YAML text that none passes is not parsed.
  let escapes: boolean | undefined;
  const mayFire = (rule: ManifestRule) =>
    options.noPrefilter || manifestRuleMayFire(rule, text, kind, () => (escapes ??= hasNeedleEscape(text)));
  const rules = (options.rules ?? RULES)
    .filter(isManifestRule)
    .filter((rule) => (options.rules ? true : isRuleOn(rule, options) && mayFire(rule)));
  if (!rules.length) return { diagnostics: [], ruleFailures: [] };
  const model = buildManifestModel(text, kind, extra.previous);
  const yaml = kind === "yaml" || kind === "compose" ? { text, documents: model.documents } : undefined;
  const diagnostics: LintDiagnostic[] = [];
  const ruleFailures: RuleFailure[] = [];
  const read = dependencyReader(options.openText);
  for (const rule of rules) {
    const ctx: ManifestRuleContext = {
      manifest: model,
      machine: options.machine ?? { gpuCount: null, uuids: [] },
      file: extra.file ?? null,
      read: read.read,
      ...(options.libraryPins ? { libraryPins: options.libraryPins } : {}),
      report: reporter(rule, diagnostics, options.preview),
    };
    const before = diagnostics.length;
    try {
      rule.checkManifest(ctx);
    } catch (e) {
      diagnostics.length = before;
      ruleFailures.push({
        code: rule.meta.code,
        error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e),
      });
    }
  }
  const deps = read.deps();
  if (!diagnostics.length) return { diagnostics, ruleFailures, yaml, ...(deps.length ? { deps } : {}) };
  // Comments are read only for a text with findings (a second pass over a YAML stream: ~17 ms on 3,800 lines).
  const noqa = manifestNoqaLines(text, kind, model.dockerfile);
  const kept = diagnostics.filter((d) => {
    if (!noqa.has(d.range.start.line)) return true;
    const codes = noqa.get(d.range.start.line);
    return codes !== null && !codes!.has(d.code);
  });
  const baseErrors = syntaxErrors(text, kind, model);
  for (const d of kept) {
    const override = options.severity?.[d.code];
    if (override) d.severity = override;
  }
  // The editor checks a fix when it offers it (handlers/codeActions.ts: manifestFixParsesCleanly), as
  // for Python files; here that would parse the fixed text at every keystroke (~60 ms on 3,800 lines).
  if (!options.lazyFixValidation)
    for (const d of invalidFixes(
      text,
      kind,
      kept.filter((x) => x.fix),
      baseErrors,
    ))
      delete d.fix;
  kept.sort(
    (a, b) =>
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character ||
      a.code.localeCompare(b.code),
  );
  return { diagnostics: kept, ruleFailures, yaml, ...(deps.length ? { deps } : {}) };
}

/** The syntax errors a fix may not add to: YAML's and devcontainer.json's (none counted for a Dockerfile or shell script). */
function syntaxErrors(
  text: string,
  kind: ManifestKind,
  model?: { documents: { doc: { errors: unknown[] } }[] },
): number {
  if (kind === "dockerfile" || kind === "jobscript" || kind === "dotenv") return 0;
  if (kind === "devcontainer") return devcontainerErrorCount(text);
  return model ? model.documents.reduce((n, d) => n + d.doc.errors.length, 0) : yamlErrorCount(text);
}

/** A fix is kept only if it applies and the YAML (or JSON) has no more errors after it. */
function fixKeepsSyntax(text: string, kind: ManifestKind, edits: readonly TextEdit[], baseErrors: number): boolean {
  try {
    const fixed = applyEdits(text, [...edits]);
    return (
      kind === "dockerfile" || kind === "jobscript" || kind === "dotenv" || syntaxErrors(fixed, kind) <= baseErrors
    );
  } catch {
    return false;
  }
}

/**
 * Whether `fix` keeps `text` (a manifest of `kind`) as parseable as it was: the editor's check before
 * it offers the quick fix (the language server validates manifest fixes with this, Python ones with
 * lint.ts fixParsesCleanly).
 */
export function manifestFixParsesCleanly(
  text: string,
  kind: ManifestKind,
  fix: { edits: readonly TextEdit[] },
): boolean {
  if (kind === "dockerfile" || kind === "jobscript" || kind === "dotenv")
    return fixKeepsSyntax(text, kind, fix.edits, 0);
  const base =
    kind === "devcontainer" ? syntaxErrors(text, kind) : syntaxErrors(text, kind, buildManifestModel(text, kind));
  return fixKeepsSyntax(text, kind, fix.edits, base);
}

/**
 * The diagnostics among `withFix` whose fix would add YAML errors. Linear in the findings when the
 * fixes are fine: the fixes are split into groups of disjoint edits (usually one), each group is
 * applied at once and parsed once, and only a group that adds an error is halved and checked again,
 * down to single fixes. Checking each fix with its own parse of the whole file made a Kubernetes
 * YAML with 800 GPU018 findings take 35 s. A group that parses cleanly is taken
 * as each of its fixes parsing cleanly: the edits are disjoint and each changes one mapping.
 */
function invalidFixes(
  text: string,
  kind: ManifestKind,
  withFix: LintDiagnostic[],
  baseErrors: number,
): LintDiagnostic[] {
  if (kind === "dockerfile" || !withFix.length)
    return withFix.filter((d) => !fixKeepsSyntax(text, kind, d.fix!.edits, baseErrors));
  const bad: LintDiagnostic[] = [];
  const check = (group: LintDiagnostic[]): void => {
    if (group.length === 1) {
      if (!fixKeepsSyntax(text, kind, group[0].fix!.edits, baseErrors)) bad.push(group[0]);
      return;
    }
    if (
      fixKeepsSyntax(
        text,
        kind,
        group.flatMap((d) => d.fix!.edits),
        baseErrors,
      )
    )
      return;
    const half = group.length >> 1;
    check(group.slice(0, half));
    check(group.slice(half));
  };
  let rest = withFix;
  while (rest.length) {
    // safeEdits picks fixes whose edits are disjoint (a fix identical to a picked one is left for the next group).
    const asSafe = rest.map((d) => ({ d, fix: { safe: true, edits: d.fix!.edits } }));
    const { chosen } = safeEdits<TextEdit, (typeof asSafe)[number]>(asSafe);
    const group = chosen.length ? chosen.map((c) => c.d) : rest.slice(0, 1);
    check(group);
    const taken = new Set(group);
    rest = rest.filter((d) => !taken.has(d));
  }
  return bad;
}

/**
 * Applies all safe fixes (and unsafe ones when `unsafe`) to a manifest, re-linting between passes
 * (at most 10), like fixAllPython.
 * @param file the manifest's path, as {@link lintManifest} takes it: the rules that read the files
 *   beside it (a script it runs, a sourced file, an accelerate config) find their findings, and
 *   their fixes, only with it; null for an unsaved buffer
 */
export function fixAllManifest(
  text: string,
  kind: ManifestKind,
  options: LintOptions,
  unsafe = false,
  file: string | null = null,
): { text: string; applied: number } {
  let out = text;
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const { edits, count } = safeEdits<TextEdit>(lintManifest(out, kind, options, { file }).diagnostics, unsafe);
    if (!edits.length) break;
    applied += count;
    out = applyEdits(out, edits);
  }
  return { text: out, applied };
}
