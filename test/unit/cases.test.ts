import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT, SHARED } from "./helpers";

/** The shared cases (../shared/cases) through the shared checker, as CI and the contract run them. */
const CASES = Array.from({ length: 24 }, (_, i) => `c${String(i + 1).padStart(2, "0")}`);

test("shared cases pass through ../shared/tools/check-cases.mjs", () => {
  const tool = join(SHARED, "tools", "check-cases.mjs");
  assert.ok(existsSync(tool), `missing ${tool}: the shared folder must sit beside the repository`);
  const r = spawnSync(process.execPath, [tool, join(SHARED, "cases"), ROOT, "--only", CASES.join(",")], { encoding: "utf8" });
  const last = r.stdout.trim().split("\n").pop();
  assert.equal(last, `${CASES.length} passed, 0 failed`, r.stdout + r.stderr);
  assert.equal(r.status, 0);
});
