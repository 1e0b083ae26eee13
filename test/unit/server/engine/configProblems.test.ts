// Issue 46 item 1: a committed pyproject.toml with tens of thousands of bad keys. Each problem's line
// was found by searching the text from its start (quadratic: 20,000 keys took the CLI 8-14 s) and
// every problem was printed or shown. Now the first 20 are listed, with their lines, and the rest
// counted in one more problem; keys quoted in messages are cut.
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../../support/helpers";
import { loadProjectConfig, MAX_CONFIG_PROBLEMS } from "../../../../server/src/engine/config";

function project(pyproject: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-cfg-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(join(dir, "pyproject.toml"), pyproject);
  writeFileSync(join(dir, "a.py"), "import os\n");
  return dir;
}

const severityTable = (n: number) =>
  '[tool.gpu-pilot.severity]\nGPU001 = "error"\n' + Array.from({ length: n }, (_, i) => `GPX${i} = "error"\n`).join("");

test("50,000 unknown severity keys: 20 problems listed with their lines, then one that counts the rest", () => {
  const dir = project(severityTable(50_000));
  const { config, problems } = loadProjectConfig(join(dir, "pyproject.toml"));
  assert.deepEqual(config?.severity, { GPU001: "error" });
  assert.equal(problems.length, MAX_CONFIG_PROBLEMS + 1);
  assert.deepEqual(
    problems.slice(0, 3).map((p) => [p.line, p.message]),
    [
      [3, "[tool.gpu-pilot] severity: unknown rule code GPX0"],
      [4, "[tool.gpu-pilot] severity: unknown rule code GPX1"],
      [5, "[tool.gpu-pilot] severity: unknown rule code GPX2"],
    ],
  );
  assert.equal(
    problems[MAX_CONFIG_PROBLEMS].message,
    "[tool.gpu-pilot] and 49,980 more problems (only the first 20 are listed)",
  );
});

test("a key of a megabyte and a list of 10,000 bad codes are quoted short", () => {
  const long = "K".repeat(1 << 20);
  const dir = project(
    `[tool.gpu-pilot]\n"${long}" = 1\nignore = [${Array.from({ length: 10_000 }, (_, i) => `"GPU9${String(i % 100).padStart(2, "0")}"`).join(", ")}]\n`,
  );
  const { problems } = loadProjectConfig(join(dir, "pyproject.toml"));
  assert.equal(problems.length, 2);
  for (const p of problems) assert.ok(p.message.length < 1000, p.message.slice(0, 200));
  assert.match(problems[0].message, /^\[tool\.gpu-pilot\] unknown key "K{80}…"/);
  assert.match(problems[1].message, /ignore: unknown rule codes GPU900, GPU901, .* and 9,990 more \(codes are/);
});

test("the CLI on a project whose pyproject.toml has 50,000 unknown severity keys: 21 lines, no stack trace", () => {
  const dir = project(severityTable(50_000));
  const r = spawnSync(process.execPath, [join(ROOT, "dist", "cli.js"), "check", "--no-cache", join(dir, "a.py")], {
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, MAX_CONFIG_PROBLEMS + 1, r.stderr.slice(0, 2000));
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.match(lines.at(-1)!, /and 49,980 more problems/);
});
