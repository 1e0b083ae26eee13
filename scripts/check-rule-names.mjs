#!/usr/bin/env node
// Checks test/rule-names.json (the rule names the tests hold the registry to) against the rule
// table of the contract's spec/rules.md (`| GPU001 | env-after-cuda-init | ...` rows).
// usage: node scripts/check-rule-names.mjs ../shared/spec/rules.md
// Prints one line per difference and a closing 'N passed, N failed' line; exits 1 on a difference,
// 2 when rules.md cannot be read or has no rule rows. Codes numbered above the contract's highest
// (GPU021 and later: this project's own rules) are listed as extensions, not failures.
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const specFile = process.argv[2];
if (!specFile) {
  console.error("usage: check-rule-names.mjs PATH/TO/rules.md");
  process.exit(2);
}
let text;
try {
  text = readFileSync(specFile, "utf8");
} catch (e) {
  console.error(`cannot read ${specFile}: ${e.message}`);
  process.exit(2);
}
const spec = new Map();
for (const line of text.split("\n")) {
  const m = /^\|\s*(GPU\d{3})\s*\|\s*([a-z0-9-]+)\s*\|/.exec(line);
  if (m) spec.set(m[1], m[2]);
}
if (spec.size === 0) {
  console.error(`${specFile} has no rule rows (| GPUnnn | name | ...)`);
  process.exit(2);
}
const ours = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "test", "rule-names.json"), "utf8"),
);
let passed = 0,
  failed = 0;
// Codes above the contract's last one are the project's own rules (issue 21: GPU021 and up); the
// contract does not name them, so they are listed, not compared. A code at or below it must match.
const lastSpec = [...spec.keys()].sort().pop();
for (const code of [...new Set([...spec.keys(), ...Object.keys(ours).filter((k) => /^GPU\d{3}$/.test(k))])].sort()) {
  if (spec.get(code) === ours[code]) {
    passed++;
    continue;
  }
  if (!spec.has(code) && code > lastSpec) {
    passed++;
    console.log(`${code} (${ours[code]}): beyond the contract's last rule ${lastSpec}, not in rules.md`);
    continue;
  }
  failed++;
  console.log(
    `FAIL ${code}: rules.md says ${spec.get(code) ?? "(absent)"}, test/rule-names.json says ${ours[code] ?? "(absent)"}`,
  );
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
