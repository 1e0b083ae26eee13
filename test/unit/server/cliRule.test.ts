import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { main } from "../../../server/src/cli";
import { RULES } from "../../../server/src/engine/rules/index";
import type { RuleJson } from "../../../server/src/cliRule";

const ROOT = join(__dirname, "..", "..", "..");

/** Runs the CLI in-process; returns its exit code and what it wrote. */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), stdin: async () => "" });
  return { code, out, err };
}

test("gpu-pilot rule GPU054: the committed page docs/rules/GPU054.md without its generated-file banner; the code in any case", async () => {
  const page = readFileSync(join(ROOT, "docs", "rules", "GPU054.md"), "utf8");
  const r = await cli("rule", "GPU054");
  assert.equal(r.code, 0);
  assert.equal(r.err, "");
  assert.equal(r.out, page.slice(page.indexOf("\n") + 1));
  assert.ok(r.out.startsWith("# GPU054: startup-variable-not-exported\n"));
  assert.equal((await cli("rule", "gpu054")).out, r.out);
});

test("gpu-pilot rule --format json: the fields of one rule, or of every rule with --all", async () => {
  const one = await cli("rule", "GPU056", "--format", "json");
  assert.equal(one.code, 0);
  const j = JSON.parse(one.out) as RuleJson;
  assert.equal(j.code, "GPU056");
  assert.equal(j.name, "vllm-device-index-ignored");
  assert.equal(j.set, "preview");
  assert.equal(j.severity, "warning");
  assert.equal(j.fixable, false);
  assert.match(j.what, /^Finds vLLM's `LLM\(\.\.\.\)`/);
  assert.ok(j.references.length > 0);
  const all = JSON.parse((await cli("rule", "--all", "--format=json")).out) as RuleJson[];
  assert.deepEqual(
    all.map((r) => r.code),
    RULES.map((r) => r.meta.code),
  );
  assert.equal(all.find((r) => r.code === "GPU001")?.set, "default");
  const text = await cli("rule", "--all");
  assert.equal(text.out.match(/^# GPU\d{3}: [a-z0-9-]+\n\n- \*\*Severity:\*\* /gm)?.length, RULES.length);
});

test("gpu-pilot rule: a code no rule has, no code, two codes, a bad format: exit 2 with the reason and the usage", async () => {
  const cases: [string[], RegExp][] = [
    [["rule", "GPU999"], /^gpu-pilot rule: no rule has the code "GPU999" \(the rules are GPU001 to GPU\d{3}\)\n/],
    [["rule"], /^gpu-pilot rule: give a rule's code or --all\n/],
    [["rule", "GPU001", "GPU002"], /^gpu-pilot rule: give one rule's code\n/],
    [["rule", "GPU001", "--all"], /^gpu-pilot rule: give a code or --all, not both\n/],
    [["rule", "GPU001", "--format", "sarif"], /^gpu-pilot rule: --format must be text or json, not "sarif"\n/],
    [["rule", "--fix"], /^gpu-pilot rule: unknown option "--fix"\n/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(...argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.equal(r.out, "");
    assert.match(r.err, message);
    assert.match(r.err, /usage: gpu-pilot rule CODE/);
  }
  const help = await cli("rule", "--help");
  assert.equal(help.code, 0);
  assert.match(help.out, /^usage: gpu-pilot rule CODE/);
});
