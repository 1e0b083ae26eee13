/**
 * The recall benchmark's cases (test/recall/README.md): every case is well formed (the validator of
 * scripts/recallCases.mjs), the validator itself rejects what it must, and every corrected version
 * (fixed/) is clean under the default rules: no warning or error (the benchmark's "no false alarm
 * on the corrected programs").
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ROOT } from "../support/helpers";
import { loadCases, validateCase, type RecallCase } from "../../../scripts/recallCases.mjs";

const CASES_DIR = join(ROOT, "test", "recall", "cases");
const { cases, problems } = loadCases(CASES_DIR);

test("every recall case is well formed", () => {
  assert.deepEqual(problems, []);
});

test("the validator names each malformed field", () => {
  const dir = mkdtempSync(join(tmpdir(), "recall-case-"));
  try {
    mkdirSync(join(dir, "bug"));
    mkdirSync(join(dir, "fixed"));
    writeFileSync(join(dir, "bug", "train.py"), "import torch\nx = 1\n");
    writeFileSync(join(dir, "fixed", "other.py"), "x = 1\n");
    const p = validateCase(dir, {
      source: "http://example.com",
      date: "2019-05-01",
      category: "misc",
      summary: "short",
      covered: false,
      expect: [
        { file: "train.py", rule: "GPU1", line: 9 },
        { file: "nope.py", rule: "GPU001", line: 1 },
      ],
    });
    assert.deepEqual(p, [
      "source: not an https URL",
      "date: 2019-05-01 is outside 2022-2026 or not a date",
      `category: "misc" is not one of direct, whole-program, init-at-import, value-flow, rank, launch, job-script, framework-setting, notebook`,
      "summary: missing or shorter than 20 characters",
      "wanted: an uncovered case says what a rule would have to check",
      "bug/ and fixed/ hold different files (train.py | other.py)",
      `expect[0].rule: "GPU1" is not a GPUnnn code or "new"`,
      "expect[0].line: train.py has fewer than 9 lines",
      `expect[1].file: "nope.py" is not a file of bug/`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a well-formed case has no problems; two cases with one source are reported", () => {
  const root = mkdtempSync(join(tmpdir(), "recall-cases-"));
  try {
    for (const slug of ["a-case", "b-case"]) {
      for (const side of ["bug", "fixed"]) {
        mkdirSync(join(root, slug, side), { recursive: true });
        writeFileSync(
          join(root, slug, side, "train.py"),
          "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n",
        );
      }
      writeFileSync(
        join(root, slug, "case.json"),
        JSON.stringify({
          source: "https://github.com/o/r/issues/1",
          date: "2024-02-29",
          category: "direct",
          summary: "The variable is set after import torch.",
          covered: true,
          expect: [{ file: "train.py", rule: "GPU002", line: 3 }],
        }),
      );
    }
    const r = loadCases(root);
    assert.deepEqual(
      r.cases.map((c) => c.slug),
      ["a-case"],
    );
    assert.deepEqual(r.problems, ["b-case: source: also the source of a-case"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("every corrected version (fixed/) has no warning or error under the default rules", (t) => {
  if (!cases.length) {
    t.skip("no recall cases yet");
    return;
  }
  const cli = join(ROOT, "dist", "cli.js");
  if (!existsSync(cli)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
  const loud: string[] = [];
  // One CLI run per machine size (the cases that give the reporter's GPU count run with it).
  const groups = new Map<string, string[]>();
  for (const c of cases as RecallCase[]) {
    const key = c.gpus != null ? String(c.gpus) : "";
    groups.set(key, [...(groups.get(key) ?? []), join(c.dir, "fixed")]);
  }
  for (const [gpus, dirs] of groups) {
    const r = spawnSync(
      process.execPath,
      [cli, "check", "--format", "json", "--exit-zero", "--no-cache", ...(gpus ? ["--gpus", gpus] : []), ...dirs],
      {
        encoding: "utf8",
        maxBuffer: 1 << 26,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    for (const d of JSON.parse(r.stdout) as Array<{
      filename: string;
      code: string;
      severity: string;
      location: { row: number };
    }>) {
      if (d.severity === "error" || d.severity === "warning")
        loud.push(`${relative(CASES_DIR, d.filename)}:${d.location.row} ${d.code}`);
    }
  }
  assert.deepEqual(loud, []);
});
