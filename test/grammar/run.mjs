#!/usr/bin/env node
// `npm run test:grammar`: the TextMate grammar tests. Runs vscode-tmgrammar-test on every
// test/grammar/*.test.{py,sh,env} with GPU Pilot's injection grammars taken from package.json
// (contributes.grammars, so the manifest entries are tested too) on top of the Python, shell and
// dotenv grammars that VS Code ships (the copies in the tm-grammars npm package by default).
//
//   node test/grammar/run.mjs                      # base grammars from node_modules/tm-grammars
//   node test/grammar/run.mjs --vscode-extensions D  # base grammars from a VS Code build's extensions/
//   node test/grammar/run.mjs --json               # one JSON line: {ok, files, assertions, failedFiles, errors}
//   node test/grammar/run.mjs --fixtures DIR       # other fixtures (the unit test checks a wrong one fails)
//
// Each fixture line `# ^^^ scope` (or `# <--- scope`) is one assertion about the code line above it;
// `- scope` asserts a scope is absent. Exit 0 only when every file passed and assertions were found.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values: opts } = parseArgs({
  options: {
    "vscode-extensions": { type: "string" },
    fixtures: { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const here = opts.fixtures ? resolve(opts.fixtures) : join(root, "test", "grammar");

/** Paths of the host grammars, by language. */
function baseGrammars() {
  const ext = opts["vscode-extensions"];
  if (ext) {
    return [
      join(ext, "python", "syntaxes", "MagicPython.tmLanguage.json"),
      join(ext, "python", "syntaxes", "MagicRegExp.tmLanguage.json"),
      join(ext, "shellscript", "syntaxes", "shell-unix-bash.tmLanguage.json"),
      join(ext, "dotenv", "syntaxes", "dotenv.tmLanguage.json"),
    ];
  }
  const dir = join(root, "node_modules", "tm-grammars", "grammars");
  return ["python.json", "shellscript.json", "dotenv.json"].map((f) => join(dir, f));
}

const fixtures = readdirSync(here)
  .filter((f) => /\.test\.(py|sh|env)$/.test(f))
  .sort();
/** Assertion lines: the comment token, then `^`s or `<-`s, then scopes. */
const countAssertions = (text) => text.split("\n").filter((l) => /^#\s*(\^+|<[-~]+)\s+\S/.test(l)).length;
const assertions = Object.fromEntries(fixtures.map((f) => [f, countAssertions(readFileSync(join(here, f), "utf8"))]));

const missing = baseGrammars().filter((g) => !existsSync(g));
const cli = join(root, "node_modules", "vscode-tmgrammar-test", "dist", "unit.js");
let out = "";
let status = 1;
if (missing.length === 0 && fixtures.length > 0) {
  const args = [
    cli,
    "--compact",
    "--config",
    join(root, "package.json"),
    ...baseGrammars().flatMap((g) => ["-g", g]),
    ...fixtures.map((f) => join(here, f)),
  ];
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, FORCE_COLOR: "0" },
    timeout: 120_000,
  });
  out = `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? `\n${r.error.message}` : ""}`;
  status = r.status ?? 1;
}

const passedFiles = fixtures.filter((f) => new RegExp(`${f.replace(/\./g, "\\.")} run successfuly`).test(out));
const failedFiles = fixtures.filter((f) => !passedFiles.includes(f));
const errors = out.split("\n").filter((l) => /^ERROR\b|aborted|can't parse/.test(l));
const total = Object.values(assertions).reduce((a, b) => a + b, 0);
const passedAssertions = passedFiles.reduce((a, f) => a + assertions[f], 0);
const ok = status === 0 && failedFiles.length === 0 && fixtures.length > 0 && total > 0 && missing.length === 0;

if (opts.json) {
  console.log(
    JSON.stringify({
      ok,
      files: fixtures.length,
      passedFiles: passedFiles.length,
      failedFiles,
      assertions: total,
      passedAssertions,
      errors,
      missing,
    }),
  );
} else {
  if (missing.length) console.log(`missing base grammars: ${missing.join(", ")}`);
  if (fixtures.length === 0) console.log(`no fixtures (*.test.py|sh|env) in ${relative(process.cwd(), here)}`);
  for (const f of fixtures)
    console.log(`${passedFiles.includes(f) ? "ok  " : "FAIL"} ${f} (${assertions[f]} assertions)`);
  for (const e of errors) console.log(`  ${e}`);
  if (!ok && !errors.length && out.trim()) console.log(out.trim());
  console.log(
    `grammar: ${passedAssertions}/${total} assertions in ${passedFiles.length}/${fixtures.length} files passed`,
  );
}
process.exit(ok ? 0 : 1);
