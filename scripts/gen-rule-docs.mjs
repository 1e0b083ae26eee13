#!/usr/bin/env node
// Writes docs/rules/GPUnnn.md for every registered rule and docs/rules/README.md, from the rules' meta.
// usage: npm run docs:rules            (write)
//        npm run docs:rules -- --check (exit 1 and list the pages that are out of date; write nothing)
// Runs under tsx (node --import tsx) so that it can import the TypeScript rules directly.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RULES } from "../server/src/engine/rules/index.ts";
import { renderRuleDoc, renderRulesIndex } from "../server/src/ruleDocs.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "docs", "rules");
const check = process.argv.includes("--check");

const pages = [...RULES.map((r) => [`${r.meta.code}.md`, renderRuleDoc(r)]), ["README.md", renderRulesIndex(RULES)]];
const stale = pages
  .filter(([file, text]) => !existsSync(join(dir, file)) || readFileSync(join(dir, file), "utf8") !== text)
  .map(([file]) => file);

if (check) {
  if (stale.length) {
    console.error(`out of date in docs/rules: ${stale.join(", ")} (run npm run docs:rules)`);
    process.exit(1);
  }
  console.log(`docs/rules: ${pages.length} pages up to date`);
} else {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of pages) if (stale.includes(file)) writeFileSync(join(dir, file), text);
  console.log(`docs/rules: ${stale.length} of ${pages.length} pages written`);
}
