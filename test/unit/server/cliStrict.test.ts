// Strict CLI flag parsing and notebooks that cannot be read (issue 18, item 12): odd flag forms get
// a clear message and exit code 2; one nbformat-3 or broken notebook is reported as a finding and
// the run goes on, so `--format sarif > results.sarif` still lists every other file's findings.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli as cli } from "../support/cliRun";

const dir = mkdtempSync(join(tmpdir(), "gp-strict-"));
const clean = join(dir, "clean.py");
writeFileSync(clean, "print(1)\n");

test("odd flag forms are refused with a clear message (exit 2)", async () => {
  const cases: Array<[string[], RegExp]> = [
    [["check", "--fix=yes", clean], /--fix takes no value/],
    [["check", "--exit-zero=1", clean], /--exit-zero takes no value/],
    [["check", "--select=", clean], /--select needs a value/],
    [["check", "--select", "--fix", clean], /--select needs a value, not the option "--fix"/],
    [["check", "--stdin-filename", "--format", "json"], /--stdin-filename needs a value, not the option "--format"/],
    [["check", "--format", "json", "--format", "sarif", clean], /--format is given twice/],
    [["check", "--gpus", "99999999999999999999", clean], /--gpus must be a whole number from 0 to 4096/],
    [["check", "--max-file-size-kb", "1e3", clean], /--max-file-size-kb must be a whole number/],
    [["check", "--max-file-size-kb", "99999999999999999999", clean], /--max-file-size-kb must be a whole number/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, `${argv.join(" ")}: ${r.err}`);
    assert.match(r.err, message, argv.join(" "));
    assert.equal(r.out, "", argv.join(" "));
  }
  // The ordinary forms still work.
  for (const argv of [
    ["check", "--select", "GPU001", clean],
    ["check", "--select=GPU001,GPU002", "--gpus=2", "--exit-zero", clean],
    ["check", "--", clean],
  ]) {
    const r = await cli(argv);
    assert.equal(r.code, 0, `${argv.join(" ")}: ${r.err}`);
  }
});

test("a huge --select list is handled (no stack overflow)", async () => {
  // Every entry matches every code (a prefix): all of them reach the longest-prefix comparison.
  const codes = Array.from({ length: 300_000 }, (_, i) => (i % 2 ? "GPU0" : "GPU")).join(",");
  const r = await cli(["check", "--select", codes, clean]);
  assert.equal(r.code, 0, r.err.slice(0, 500));
});

test("an nbformat-3 or broken notebook is one finding; the other files are still checked", async () => {
  const d = mkdtempSync(join(tmpdir(), "gp-nb3-"));
  writeFileSync(
    join(d, "old.ipynb"),
    JSON.stringify({
      nbformat: 3,
      nbformat_minor: 0,
      metadata: {},
      worksheets: [{ cells: [{ cell_type: "code", input: "import torch", language: "python" }] }],
    }),
  );
  writeFileSync(join(d, "broken.ipynb"), "{ not json");
  writeFileSync(
    join(d, "bad.py"),
    'import torch\ntorch.cuda.init()\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  );
  const r = await cli(["check", "--format", "json", d]);
  assert.equal(r.code, 1, r.err);
  const all = JSON.parse(r.out) as Array<{ filename: string; code: string; message: string }>;
  const byFile = (name: string) => all.filter((x) => x.filename === join(d, name));
  assert.ok(
    byFile("bad.py").some((x) => x.code === "GPU001"),
    JSON.stringify(all),
  );
  for (const name of ["old.ipynb", "broken.ipynb"]) {
    const f = byFile(name);
    assert.equal(f.length, 1, `${name}: ${JSON.stringify(f)}`);
    assert.equal(f[0].code, "GPU000");
    assert.match(f[0].message, /cannot read (this )?notebook/i);
  }
  const sarif = await cli(["check", "--format", "sarif", d]);
  const results = (JSON.parse(sarif.out) as { runs: Array<{ results: unknown[] }> }).runs[0].results;
  assert.ok(results.length >= 3, `the SARIF file lists every finding: ${results.length}`);
});
