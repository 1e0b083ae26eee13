/**
 * Renders the rule documentation pages (docs/rules/GPUnnn.md) and their index (docs/rules/README.md)
 * from each rule's `meta`, the single source of truth. Pure functions: scripts/gen-rule-docs.mjs
 * writes their output, and test/unit/rules/registry.test.ts checks the committed pages against it.
 */
import type { Rule } from "./engine/rule";

/** The generated-file banner (an HTML comment: invisible when the Markdown is rendered). */
const BANNER =
  "<!-- Generated from the rule's meta by scripts/gen-rule-docs.mjs (npm run docs:rules). Do not edit by hand. -->";

/** The doc page of one rule, as committed in docs/rules/<code>.md. */
export function renderRuleDoc(rule: Rule): string {
  const { code, name, severity, docs } = rule.meta;
  const language = languageOf(rule);
  const lines = [
    BANNER,
    `# ${code}: ${name}`,
    "",
    `- **Severity:** ${severity}`,
    `- **Set:** ${rule.meta.preview ? "preview (off unless preview is on: `--preview`, `gpuPilot.lint.preview`, `[tool.gpu-pilot] preview = true`; below the default set's precision bar on the ecosystem corpus)" : "default"}`,
    `- **Fixable:** ${fixableText(rule)}`,
    "",
    "## What it does",
    "",
    paragraph(docs.what),
    "",
    "## What it follows",
    "",
    paragraph(docs.follows),
    "",
    "## Why is this bad",
    "",
    paragraph(docs.why),
    "",
    "## Example",
    "",
    ...codeBlock(docs.example, language),
    "",
    "## Fix",
    "",
    ...codeBlock(docs.fix, language),
    "",
    "## When not to care",
    "",
    paragraph(docs.whenNotToCare),
    "",
    "## References",
    "",
    ...docs.references.map((r) => `- ${paragraph(r)}`),
    "",
  ];
  return lines.join("\n");
}

/**
 * The page's "Fixable" line: whether the rule's fixes are safe (applied by `--fix`, Fix All and on
 * save), unsafe (offered only, applied by `--unsafe-fixes`), or either by finding (`meta.fixSafety`).
 */
function fixableText(rule: Rule): string {
  if (!rule.meta.fixable) return "no";
  switch (rule.meta.fixSafety) {
    case "safe":
      return "yes, for the findings that have one: a safe fix (applied by `--fix`, **Fix All**, and on save where `editor.codeActionsOnSave` asks for `source.fixAll.gpuPilot`; also a quick fix)";
    case "unsafe":
      return "yes, for the findings that have one: an unsafe fix, offered as a quick fix and applied by `--fix --unsafe-fixes` or **Apply Unsafe Fixes**, never by `--fix` alone or on save (review what it changes)";
    default:
      return "yes, for the findings that have one: a safe fix where the finding allows it (applied by `--fix`, **Fix All** and on save), else an unsafe one (a quick fix; `--fix --unsafe-fixes`)";
  }
}

/** The index's "Fixable" cell: `safe`, `unsafe`, `safe or unsafe`, or `no`. */
function fixableCell(rule: Rule): string {
  if (!rule.meta.fixable) return "no";
  return rule.meta.fixSafety === "both" ? "safe or unsafe" : (rule.meta.fixSafety ?? "yes");
}

/** The index of all rules (docs/rules/README.md): one table row per rule, in code order. */
export function renderRulesIndex(rules: readonly Rule[]): string {
  const rows = rules.map((r) => {
    const { code, name, severity, docs } = r.meta;
    return `| [${code}](${code}.md) | ${name} | ${severity}${r.meta.preview ? " (preview)" : ""} | ${fixableCell(r)} | ${cell(firstSentence(docs.what))} |`;
  });
  return [
    BANNER,
    "# GPU Pilot rules",
    "",
    "Each rule reports one kind of GPU device-selection mistake in Python files and notebooks. Severities are the defaults;",
    "a project can change them (`[tool.gpu-pilot]` in pyproject.toml) and silence a line with `# noqa: GPUnnn`.",
    "",
    "| Code | Name | Severity | Fix | What it does |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

/** A doc text as one Markdown paragraph (line breaks folded, trailing space trimmed). */
function paragraph(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " ");
}

/** The language of a rule's example and fix: `docs.language` (manifest rules: yaml, dockerfile), else Python. */
export function languageOf(rule: Rule): string {
  return (rule.meta.docs as { language?: string }).language ?? "python";
}

/** A fenced code block; the fence grows if the code itself contains three backquotes. */
function codeBlock(code: string, language: string): string[] {
  const fence = code.includes("```") ? "````" : "```";
  return [`${fence}${language}`, ...code.replace(/\s+$/, "").split("\n"), fence];
}

/** The first sentence of a text (not cut at `e.g.` or inside backquotes). */
export function firstSentence(text: string): string {
  const t = paragraph(text);
  let inCode = false;
  for (let i = 0; i < t.length; i++) {
    if (t[i] === "`") inCode = !inCode;
    if (
      !inCode &&
      t[i] === "." &&
      (i + 1 === t.length || t[i + 1] === " ") &&
      !/\b(e\.g|i\.e|etc|vs)$/.test(t.slice(Math.max(0, i - 4), i))
    )
      return t.slice(0, i + 1);
  }
  return t;
}

/** Text safe inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}
