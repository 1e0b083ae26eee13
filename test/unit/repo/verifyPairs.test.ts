/**
 * Issue 10: every rule that claims a runtime consequence has a bad/fixed pair in verify/ (run on
 * real GPUs by `npm run verify:gpu`); here, without a GPU, the linter must flag the bad program
 * with the rule and leave the fixed one clean of it, and each expectation must be well-formed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, lint } from "../support/helpers";

const RUNTIME_RULES = [
  "GPU001",
  "GPU002",
  "GPU003",
  "GPU004",
  "GPU005",
  "GPU008",
  "GPU009",
  "GPU010",
  "GPU011",
  "GPU015",
  // More pairs for one rule: GPUnnn-<what>.
  "GPU003-trailing-text",
  "GPU011-set-device-after-init",
];
const KEYS = new Set([
  "claim",
  "env",
  "launcher",
  "physical",
  "physical_all",
  "error_contains",
  "no_error",
  "has_error",
  "device_count",
  "facts",
  "stderr_contains",
]);

for (const code of RUNTIME_RULES) {
  test(`${code} has a verify pair that the linter tells apart`, async () => {
    const dir = join(ROOT, "verify", code);
    for (const f of ["bad.py", "fixed.py", "expect.json"])
      assert.ok(existsSync(join(dir, f)), `missing verify/${code}/${f}`);
    const expect = JSON.parse(readFileSync(join(dir, "expect.json"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    for (const variant of ["bad", "fixed"]) {
      assert.equal(typeof expect[variant]?.claim, "string", `${code} ${variant}: a claim`);
      for (const k of Object.keys(expect[variant])) assert.ok(KEYS.has(k), `${code} ${variant}: unknown key ${k}`);
      assert.ok(
        Object.keys(expect[variant]).some((k) => !["claim", "env", "launcher"].includes(k)),
        `${code} ${variant}: something to measure`,
      );
    }
    // Preview on: a pair shows the rule's claim, whether its finding is in the default set or not (GPU002's is preview).
    const bad: string[] = (await lint(readFileSync(join(dir, "bad.py"), "utf8"), { preview: true })).map((d) => d.code);
    const fixed: string[] = (await lint(readFileSync(join(dir, "fixed.py"), "utf8"), { preview: true })).map(
      (d) => d.code,
    );
    assert.ok(bad.includes(code.slice(0, 6)), `bad.py not flagged with ${code.slice(0, 6)}: ${bad.join(",")}`);
    assert.ok(!fixed.includes(code.slice(0, 6)), `fixed.py flagged with ${code.slice(0, 6)}`);
  });
}
