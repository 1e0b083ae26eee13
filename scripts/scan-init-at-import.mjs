#!/usr/bin/env node
// Proposes init-catalogue entries (server/src/engine/initCatalogue.json) from a Python library's
// source: the module-level code its import runs that initialises CUDA or starts JAX's backend
// (scripts/initScan.ts says what is followed and what is not seen). Prints each finding with its
// file, line and import chain, then the proposed entries as JSON, for review: fill in the PyPI
// name, the version range (check the tags: `git log -S`) and the repository and commit.
// usage: node scripts/scan-init-at-import.mjs [--json] [--all] DIR
//   --all: scan every module, not only those the imports reach (packages that import dynamically)
//   DIR: a source checkout, an unpacked wheel (`unzip`) or Debian package (`dpkg-deb -x`)
// exit codes: 0 nothing found, 1 findings, 2 bad usage
import { execa } from "execa";
import { fileURLToPath } from "node:url";

if (!process.execArgv.some((a) => a.includes("tsx"))) {
  // The scan imports the TypeScript engine: run again under tsx.
  const r = await execa(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit", reject: false },
  );
  process.exit(r.exitCode ?? 1);
}
const args = process.argv.slice(2);
const dirs = args.filter((a) => !a.startsWith("--"));
const bad = args.filter((a) => a.startsWith("--") && a !== "--json" && a !== "--all");
if (bad.length || dirs.length !== 1) {
  console.error(
    `${bad.length ? `unknown option ${bad.join(", ")}\n` : ""}usage: node scripts/scan-init-at-import.mjs [--json] [--all] DIR`,
  );
  process.exit(2);
}
const { scanInitAtImport, proposedEntries } = await import("./initScan.ts");
const result = await scanInitAtImport(dirs[0], undefined, args.includes("--all"));
if (args.includes("--json")) {
  console.log(JSON.stringify({ ...result, proposed: proposedEntries(result) }, null, 1));
} else {
  for (const p of result.packages)
    console.log(`package ${p.name} (${p.root}): its import reaches ${result.reached[p.name] ?? 0} modules`);
  for (const f of result.findings) {
    console.log(
      `${f.file}:${f.line}: ${f.what} [${f.framework}, ${f.depth}] in ${f.module}, imported by ${f.chain.join(" -> ")}\n    ${f.quote}`,
    );
  }
  if (!result.findings.length) console.log("nothing initialises at import");
  else
    console.log(
      `\nproposed entries (review, then complete package, versions, repo and commit):\n${JSON.stringify(proposedEntries(result), null, 1)}`,
    );
}
process.exit(result.findings.length ? 1 : 0);
