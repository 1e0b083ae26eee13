/**
 * `gpu-pilot rule CODE` and `gpu-pilot rule --all`: a rule's documentation in the terminal, as
 * `ruff rule F401` prints Ruff's. The text is the page docs/rules/GPUnnn.md holds (ruleDocs.ts
 * renders both from the rule's meta), so the installed package, which carries no docs folder, shows
 * the same words as the repository; `--format json` gives the fields one by one.
 */
import { RULES } from "./engine/rules/index";
import type { Rule } from "./engine/rule";
import type { RuleDocs } from "./engine/types";
import { renderRuleDoc } from "./ruleDocs";

/** Usage of `gpu-pilot rule`. */
export const RULE_USAGE = `usage: gpu-pilot rule CODE [--format text|json]    a rule's documentation (e.g. gpu-pilot rule GPU001)
       gpu-pilot rule --all [--format text|json]   every rule's`;

/** One rule as `gpu-pilot rule --format json` prints it: its meta, and its documentation's fields (types.ts RuleDocs). */
export interface RuleJson extends Omit<RuleDocs, "language"> {
  code: string;
  name: string;
  severity: string;
  /** `default`, or `preview` (runs only with `--preview`). */
  set: "default" | "preview";
  fixable: boolean;
  /** When fixable: `safe`, `unsafe` or `both` (RuleMeta.fixSafety). */
  fixSafety?: "safe" | "unsafe" | "both";
}

function ruleJson(r: Rule): RuleJson {
  const { code, name, severity, fixable, docs } = r.meta;
  const { language: _language, ...fields } = docs as RuleDocs;
  return {
    code,
    name,
    severity,
    set: r.meta.preview ? "preview" : "default",
    fixable,
    ...(r.meta.fixSafety ? { fixSafety: r.meta.fixSafety } : {}),
    ...fields,
    references: [...docs.references],
  };
}

/** A rule's page for the terminal: docs/rules' Markdown without its generated-file banner. */
function ruleText(r: Rule): string {
  return renderRuleDoc(r).replace(/^<!--[^\n]*-->\n/, "");
}

/**
 * Runs `gpu-pilot rule ARGS`; returns the exit code: 0 printed, 2 a usage error or a code no rule
 * has (the message names the known range). A code is matched without regard to case (`gpu054`).
 */
export function ruleMain(argv: string[], io: { out: (s: string) => void; err: (s: string) => void }): number {
  let format = "text";
  let all = false;
  const codes: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") {
      io.out(`${RULE_USAGE}\n`);
      return 0;
    }
    if (a === "--all") all = true;
    else if (
      a === "--format" ||
      a === "--output-format" ||
      a.startsWith("--format=") ||
      a.startsWith("--output-format=")
    ) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (v !== "text" && v !== "json") return usage(io, `--format must be text or json, not "${v ?? ""}"`);
      format = v;
    } else if (a.startsWith("-")) return usage(io, `unknown option "${a}"`);
    else codes.push(a);
  }
  if (all === codes.length > 0)
    return usage(io, all ? "give a code or --all, not both" : "give a rule's code or --all");
  if (codes.length > 1) return usage(io, "give one rule's code");
  let rules: readonly Rule[] = RULES;
  if (!all) {
    const rule = RULES.find((r) => r.meta.code === codes[0].toUpperCase());
    if (!rule) {
      const first = RULES[0].meta.code;
      const last = RULES[RULES.length - 1].meta.code;
      return usage(io, `no rule has the code "${codes[0]}" (the rules are ${first} to ${last})`);
    }
    rules = [rule];
  }
  if (format === "json") io.out(`${JSON.stringify(all ? rules.map(ruleJson) : ruleJson(rules[0]), null, 2)}\n`);
  else io.out(rules.map(ruleText).join("\n"));
  return 0;
}

function usage(io: { err: (s: string) => void }, message: string): number {
  io.err(`gpu-pilot rule: ${message}\n${RULE_USAGE}\n`);
  return 2;
}
