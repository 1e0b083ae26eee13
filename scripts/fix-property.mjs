#!/usr/bin/env node
// The fix-safety property check (issue 16 item 5; scripts/fixProperty.ts says what it checks) over
// any folders or files: apply every safe fix, re-lint, re-parse, compile, compare, and run
// `gpu-pilot check --fix` on copies. Never writes to the folders it checks.
// usage: node scripts/fix-property.mjs [--debian] [--preview] [--no-cli] [--json] PATH...
//   --debian   add the Debian corpus trees (scripts/debian-corpus.mjs; fetched if needed)
//   --preview  lint and fix with the preview rules and checks on (the CLI sub-check gets --preview too)
//   --no-cli   skip the `gpu-pilot check --fix` sub-check
//   --json     print the report as JSON
// exit codes: 0 no violation, 1 violations, 2 bad usage, 3 skipped (--debian and the archive cannot be reached)
import { execa } from "execa";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (!process.execArgv.some((a) => a.includes("tsx"))) {
  // The property check imports the TypeScript engine: run again under tsx.
  const r = await execa(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit", reject: false },
  );
  process.exit(r.exitCode ?? 1);
}
const args = process.argv.slice(2);
const paths = args.filter((a) => !a.startsWith("--"));
const bad = args.filter((a) => a.startsWith("--") && !["--debian", "--preview", "--no-cli", "--json"].includes(a));
if (bad.length || (!paths.length && !args.includes("--debian"))) {
  console.error(
    `${bad.length ? `unknown option ${bad.join(", ")}\n` : ""}usage: node scripts/fix-property.mjs [--debian] [--preview] [--no-cli] [--json] PATH...`,
  );
  process.exit(2);
}
if (args.includes("--debian")) {
  const { ensureCorpus, CorpusUnavailable } = await import("./debian-corpus.mjs");
  try {
    paths.push(...(await ensureCorpus()).map((p) => p.tree));
  } catch (e) {
    if (!(e instanceof CorpusUnavailable)) throw e;
    console.log(`fix property over the Debian corpus skipped: ${e.message}`);
    process.exit(3);
  }
}
const { checkFixProperty, formatReport } = await import("./fixProperty.ts");
const report = await checkFixProperty(paths, {
  preview: args.includes("--preview"),
  cli: args.includes("--no-cli") ? null : [process.execPath, join(root, "scripts", "gpu-pilot.mjs")],
});
console.log(args.includes("--json") ? JSON.stringify(report, null, 2) : formatReport(paths, report));
process.exitCode = report.violations.length ? 1 : 0;
