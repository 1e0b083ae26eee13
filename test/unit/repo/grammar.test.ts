// The TextMate injection grammars (syntaxes/) that mark the CUDA startup variables: the grammar
// tests (vscode-tmgrammar-test, test/grammar/run.mjs) pass with a real number of assertions, a wrong
// assertion fails, the names match the rule engine's list, and package.json contributes every grammar.
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { STARTUP_VARIABLES } from "../../../server/src/engine/frameworks";
import { ROOT } from "../support/root";

const RUNNER = join(ROOT, "test", "grammar", "run.mjs");

interface GrammarRun {
  ok: boolean;
  files: number;
  passedFiles: number;
  failedFiles: string[];
  assertions: number;
  passedAssertions: number;
  errors: string[];
  missing: string[];
}

function runGrammarTests(extra: string[] = []): GrammarRun {
  const r = spawnSync(process.execPath, [RUNNER, "--json", ...extra], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  const line = (r.stdout ?? "").trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as GrammarRun;
  } catch {
    throw new Error(`no JSON from test/grammar/run.mjs (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  }
}

interface Generator {
  NAMES: string[];
  SCOPE: string;
  GRAMMARS: Record<string, { scopeName: string; injectionSelector: string }>;
  render(name: string): string;
}
const loadGenerator = async (): Promise<Generator> =>
  (await import(pathToFileURL(join(ROOT, "syntaxes", "generate.mjs")).href)) as Generator;

test("grammar tests (npm run test:grammar) pass: every .py/.sh/.env fixture, with real assertions", () => {
  const r = runGrammarTests();
  assert.deepEqual(r.missing, [], "base grammars from the tm-grammars package are missing");
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.failedFiles, []);
  assert.equal(r.files, 3, "fixtures: cuda-env.test.py, cuda-env.test.sh, cuda-env.test.env");
  assert.ok(r.assertions >= 80, `only ${r.assertions} scope assertions found`);
  assert.equal(r.passedAssertions, r.assertions);
  assert.equal(r.ok, true);
});

test("a fixture with a wrong scope makes the grammar tests fail (the runner is not vacuous)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-grammar-"));
  try {
    const good = readFileSync(join(ROOT, "test", "grammar", "cuda-env.test.py"), "utf8");
    const bad = good.replace(
      /(\^+ )(\S*)variable\.other\.constant\.cuda-env\.gpu-pilot/,
      "$1$2variable.other.constant.cuda-env.WRONG",
    );
    assert.notEqual(bad, good);
    writeFileSync(join(dir, "wrong.test.py"), bad);
    const r = runGrammarTests(["--fixtures", dir]);
    assert.equal(r.ok, false);
    assert.deepEqual(r.failedFiles, ["wrong.test.py"]);
    assert.ok(
      r.errors.some((e) => e.includes("cuda-env.WRONG")),
      JSON.stringify(r.errors),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the grammars mark exactly the startup variables of the rule engine", async () => {
  const g = await loadGenerator();
  assert.deepEqual([...g.NAMES].sort(), [...STARTUP_VARIABLES].sort());
  const main = readFileSync(join(ROOT, "syntaxes", "cuda-env.injection.tmLanguage.json"), "utf8");
  for (const name of STARTUP_VARIABLES) assert.ok(main.includes(name), `${name} missing from the grammar`);
});

test("the committed grammar JSON is what syntaxes/generate.mjs writes", async () => {
  const g = await loadGenerator();
  for (const name of Object.keys(g.GRAMMARS)) {
    const file = join(ROOT, "syntaxes", `${name}.injection.tmLanguage.json`);
    assert.equal(readFileSync(file, "utf8"), g.render(name), `${file} is stale: run node syntaxes/generate.mjs`);
  }
});

test("package.json contributes every injection grammar with its scope and injectTo", async () => {
  const g = await loadGenerator();
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { grammars?: Array<{ scopeName: string; path: string; injectTo?: string[] }> };
  };
  const contributed = pkg.contributes.grammars ?? [];
  assert.equal(contributed.length, Object.keys(g.GRAMMARS).length);
  for (const [name, grammar] of Object.entries(g.GRAMMARS)) {
    const entry = contributed.find((c) => c.path === `./syntaxes/${name}.injection.tmLanguage.json`);
    assert.ok(entry, `no contributes.grammars entry for ${name}`);
    assert.equal(entry.scopeName, grammar.scopeName);
    assert.ok(entry.injectTo && entry.injectTo.length > 0, `${name}: injectTo missing`);
    // Every host scope named in the selector must be one the grammar is injected into.
    for (const host of grammar.injectionSelector.match(/source\.\w+/g) ?? []) {
      assert.ok(
        entry.injectTo.includes(host),
        `${name}: selector names ${host} but injectTo is ${entry.injectTo.join(", ")}`,
      );
    }
  }
  const python = contributed.filter((c) => c.injectTo?.includes("source.python")).length;
  assert.equal(python, 2, "Python: strings (cuda-env) and notebook magics (cuda-env-magics)");
});
