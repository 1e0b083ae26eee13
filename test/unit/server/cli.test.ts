import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, CASES, projectTree, WRITER_PROJECT } from "../support/helpers";
import { workerCount } from "../../../server/src/cli";

const CLI = join(ROOT, "dist", "cli.js");
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", input, cwd: ROOT });

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

test("check --format json prints Ruff-shaped diagnostics and exits 1", () => {
  const r = run(["check", "--format", "json", join(CASES, "env_after_is_available.py")]);
  assert.equal(r.status, 1, r.stderr);
  const [d] = JSON.parse(r.stdout);
  assert.equal(d.code, "GPU001");
  assert.deepEqual(d.location, { row: 6, column: 1 });
  assert.deepEqual(d.end_location, { row: 6, column: 41 });
  assert.equal(d.noqa_row, 6);
  assert.equal(d.cell, null);
  assert.equal(d.fix.applicability, "safe");
  assert.doesNotMatch(String(d.url), /^file:/); // a page anyone can open, or null (cliLinks.test.ts)
  assert.ok(d.filename.endsWith("env_after_is_available.py"));
});

test("--format json gives each finding's related places (file, 1-based cell and position, message)", () => {
  const r = run(["check", "--format", "json", join(CASES, "env_after_is_available.py"), join(CASES, "notebook.ipynb")]);
  const all = JSON.parse(r.stdout) as Array<{ code: string; filename: string; cell: number | null; related?: unknown }>;
  const py = all.find((d) => d.filename.endsWith("env_after_is_available.py"))!;
  assert.deepEqual(py.related, [
    {
      filename: py.filename,
      cell: null,
      location: { row: 5, column: 11 },
      end_location: { row: 5, column: 36 },
      message: "CUDA initialised here by torch.cuda.is_available()",
    },
  ]);
  // A notebook's related place names its cell as the finding does (cell 2 ran .cuda(); the write is in cell 3).
  const nb = all.find((d) => d.filename.endsWith("notebook.ipynb") && d.code === "GPU001")!;
  assert.equal(nb.cell, 3);
  assert.deepEqual(nb.related, [
    {
      filename: nb.filename,
      cell: 2,
      location: { row: 2, column: 1 },
      end_location: { row: 2, column: 22 },
      message: "CUDA initialised here by .cuda()",
    },
  ]);
  // A finding without related places has no key (Ruff's shape otherwise).
  assert.ok(all.some((d) => d.code === "GPU014" && !("related" in d)));
});

test("a clean file exits 0 with 'All checks passed!'", () => {
  const r = run(["check", join(CASES, "env_before_import_ok.py")]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /All checks passed!/);
});

test("folders are searched for .py and .ipynb; notebooks report 1-based cells", () => {
  const r = run(["check", "--format", "json", CASES]);
  assert.equal(r.status, 1);
  const all = JSON.parse(r.stdout) as Array<{
    filename: string;
    cell: number | null;
    code: string;
    location: { row: number };
  }>;
  const nb = all.filter((d) => d.filename.endsWith("notebook.ipynb"));
  assert.ok(
    nb.some((d) => d.code === "GPU001" && d.cell === 3 && d.location.row === 2),
    JSON.stringify(nb),
  );
  // Cells are counted as VS Code shows them, the markdown cell first included (the editor says the same: lsp.test.ts).
  const text = run(["check", join(CASES, "notebook.ipynb")]);
  assert.match(
    text.stdout,
    /notebook\.ipynb:cell 3:2:1: error GPU001 \[\*\] CUDA_VISIBLE_DEVICES is set after CUDA was initialised by \.cuda\(\) \(cell 2, line 2\): it has no effect/,
  );
});

test("bad usage and unreadable paths exit 2 with a message on stderr", () => {
  const missing = run(["check", "/nonexistent/dir/x.py"]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no such file or folder: \/nonexistent\/dir\/x\.py/);
  const noPath = run(["check"]);
  assert.equal(noPath.status, 2);
  assert.match(noPath.stderr, /no PATH given/);
  // The usage follows on lines of its own, not as literal "\n" escapes (issue 20 item 3).
  assert.equal(noPath.stderr.includes("\\n"), false, noPath.stderr);
  assert.match(noPath.stderr, /^gpu-pilot: no PATH given\nusage: gpu-pilot check \[options\] PATH\.\.\.\n/);
  const badFormat = run(["check", "--format", "xml", "x.py"]);
  assert.equal(badFormat.status, 2);
  assert.match(badFormat.stderr, /--format must be/);
  const dir = mkdtempSync(join(tmpdir(), "gp-cli-"));
  writeFileSync(join(dir, "broken.ipynb"), "{ not json");
  // An unreadable notebook is a finding (GPU000), not a usage error (issue 18: the SARIF recipe).
  const broken = run(["check", join(dir, "broken.ipynb")]);
  assert.equal(broken.status, 1);
  assert.match(
    broken.stdout,
    /broken\.ipynb:1:1: warning GPU000 GPU Pilot did not lint this notebook: cannot read notebook/,
  );
});

test("a file with syntax errors is still linted, and odd names work", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp cli 'weird' $(x) "));
  const f = join(dir, "a b;$(rm -rf).py");
  writeFileSync(
    f,
    'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ndef broken(:\n',
  );
  const r = run(["check", "--format", "json", f]);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(JSON.parse(r.stdout)[0].code, "GPU001");
});

import { chmodSync, cpSync, readFileSync, readdirSync } from "node:fs";

const tmpCopy = (names: string[]) => {
  const dir = mkdtempSync(join(tmpdir(), "gp-fix-"));
  // The copies are made writable: --fix leaves a read-only file alone.
  for (const n of names) {
    cpSync(join(CASES, n), join(dir, n));
    chmodSync(join(dir, n), 0o644);
  }
  return dir;
};

test("--format sarif is SARIF 2.1.0 with rules, levels and regions", () => {
  const r = run([
    "check",
    "--format",
    "sarif",
    join(CASES, "env_after_is_available.py"),
    join(CASES, "notebook.ipynb"),
  ]);
  assert.equal(r.status, 1);
  const sarif = JSON.parse(r.stdout);
  assert.equal(sarif.version, "2.1.0");
  assert.match(sarif.$schema, /sarif-2\.1\.0/);
  assert.equal(sarif.runs.length, 1);
  const driver = sarif.runs[0].tool.driver;
  assert.equal(driver.name, "gpu-pilot");
  const ids = driver.rules.map((x: { id: string }) => x.id);
  assert.ok(ids.includes("GPU001"));
  for (const rule of driver.rules) {
    assert.equal(typeof rule.shortDescription.text, "string");
    assert.ok(["error", "warning", "note"].includes(rule.defaultConfiguration.level));
  }
  const results = sarif.runs[0].results;
  assert.ok(results.length >= 2);
  for (const res of results) {
    assert.equal(driver.rules[res.ruleIndex].id, res.ruleId);
    assert.ok(["error", "warning", "note"].includes(res.level));
    assert.equal(typeof res.message.text, "string");
    const pl = res.locations[0].physicalLocation;
    assert.equal(typeof pl.artifactLocation.uri, "string");
    assert.ok(pl.region.startLine >= 1 && pl.region.startColumn >= 1 && pl.region.endLine >= pl.region.startLine);
  }
  const c01 = results.find((x: { locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }> }) =>
    x.locations[0].physicalLocation.artifactLocation.uri.endsWith("/env_after_is_available.py"),
  );
  assert.deepEqual(c01.locations[0].physicalLocation.region, {
    startLine: 6,
    startColumn: 1,
    endLine: 6,
    endColumn: 41,
  });
  assert.equal(c01.level, "error");
  // Its related place (the call that initialised CUDA) is a relatedLocation.
  assert.deepEqual(c01.relatedLocations, [
    {
      id: 0,
      message: { text: "CUDA initialised here by torch.cuda.is_available()" },
      physicalLocation: {
        artifactLocation: { uri: c01.locations[0].physicalLocation.artifactLocation.uri, uriBaseId: "%SRCROOT%" },
        region: { startLine: 5, startColumn: 11, endLine: 5, endColumn: 36 },
      },
    },
  ]);
});

test("--format github prints workflow annotations with escaped properties", () => {
  // GPU002 on a write that works today is a preview check (rules.md amendment 2026-12-05).
  const r = run(["check", "--preview", "--format", "github", join(CASES, "env_after_import_only.py")]);
  assert.equal(r.status, 0, "information findings do not fail a run");
  assert.match(
    r.stdout.trim(),
    /^::notice title=gpu-pilot \(GPU002\),file=.*env_after_import_only\.py,line=5,col=1,endLine=5,endColumn=41::GPU002 /,
  );
});

test("--select/--ignore/--exit-zero", () => {
  const f = join(CASES, "reimport.py");
  const all = JSON.parse(run(["check", "--format", "json", f]).stdout).map((d: { code: string }) => d.code);
  assert.ok(all.includes("GPU001"));
  const ignored = run(["check", "--format", "json", "--ignore", "GPU001", f]);
  assert.ok(!JSON.parse(ignored.stdout).some((d: { code: string }) => d.code === "GPU001"));
  const selected = run(["check", "--format", "json", "--select", "GPU001", f]);
  assert.deepEqual([...new Set(JSON.parse(selected.stdout).map((d: { code: string }) => d.code))], ["GPU001"]);
  assert.equal(run(["check", "--exit-zero", f]).status, 0);
  assert.equal(run(["check", "--select", "XYZ1", f]).status, 2);
});

test("--fix on the rule cases: fixed files re-parse and re-lint without the fixed codes", () => {
  const names = [
    "env_after_is_available.py",
    "env_after_import_only.py",
    "int_value.py",
    "duplicate_ids.py",
    "jax_after_devices.py",
    "accelerator_then_env.py",
    "seed_is_lazy.py",
    "notebook.ipynb",
  ];
  const dir = tmpCopy(names);
  // With GPU002's preview check (the moves) and without GPU006's order insert, a preview fix of its own.
  const P = ["--preview", "--ignore", "GPU006"];
  const before = JSON.parse(run(["check", ...P, "--format", "json", dir]).stdout) as Array<{
    code: string;
    filename: string;
    cell: number | null;
    fix: { applicability: string } | null;
  }>;
  // Keyed by cell too: in notebook.ipynb, GPU014's fix turns `!export` into `%env` in cell 4, which is then (rightly) GPU001 there.
  const fixedCodes = new Set(
    before.filter((d) => d.fix?.applicability === "safe").map((d) => `${d.filename}|${d.code}|${d.cell}`),
  );
  assert.ok(fixedCodes.size >= 7, [...fixedCodes].join("\n"));
  const r = run(["check", ...P, "--fix", dir]);
  assert.match(r.stdout, /Fixed \d+ problem|\(\d+ fixed, \d+ remaining\)/);
  const after = JSON.parse(run(["check", ...P, "--format", "json", dir]).stdout) as Array<{
    code: string;
    filename: string;
    cell: number | null;
  }>;
  for (const d of after)
    assert.ok(
      !fixedCodes.has(`${d.filename}|${d.code}|${d.cell}`),
      `still reported after --fix: ${d.filename} ${d.code} cell ${d.cell}`,
    );
  // The literal becomes the string it means (issue 16: not str(0)); GPU006's order insert is preview, not applied.
  assert.equal(
    readFileSync(join(dir, "int_value.py"), "utf8"),
    'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\n\nprint(torch.__version__)\n',
  );
  const nb = JSON.parse(readFileSync(join(dir, "notebook.ipynb"), "utf8"));
  assert.deepEqual(nb.cells[1].source, [
    "import os\n",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "import torch\n",
    "torch.zeros(1).cuda()",
  ]);
  assert.equal(readdirSync(dir).length, names.length);
});

test("--stdin-filename lints stdin; with --fix prints the fixed source", () => {
  const src = 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const r = run(["check", "--format", "json", "--stdin-filename", "train.py"], src);
  assert.equal(r.status, 1);
  assert.equal(JSON.parse(r.stdout)[0].code, "GPU001");
  assert.ok(JSON.parse(r.stdout)[0].filename.endsWith("train.py"));
  const f = run(["check", "--fix", "--stdin-filename", "train.py"], src);
  assert.equal(f.status, 0, f.stderr);
  assert.equal(f.stdout, 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\ntorch.cuda.init()\n');
});

test("--inventory reads nvidia-smi CSV and enables GPU017; --gpus too", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-inv-"));
  writeFileSync(join(dir, "t.py"), 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,7,0"\n');
  const inv = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_gpu_nounits.csv");
  const r = run(["check", "--format", "json", "--select", "GPU017", "--inventory", inv, join(dir, "t.py")]);
  const [d] = JSON.parse(r.stdout);
  assert.equal(d.code, "GPU017");
  assert.match(d.message, /2 GPUs/);
  assert.equal(
    JSON.parse(run(["check", "--format", "json", "--select", "GPU017", join(dir, "t.py")]).stdout).length,
    0,
  );
  assert.equal(
    JSON.parse(run(["check", "--format", "json", "--select", "GPU017", "--gpus", "8", join(dir, "t.py")]).stdout)
      .length,
    0,
  );
  assert.equal(
    JSON.parse(run(["check", "--format", "json", "--select", "GPU017", "--gpus", "1", join(dir, "t.py")]).stdout)
      .length,
    1,
  );
  const bad = run([
    "check",
    "--inventory",
    join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_gpu_units.csv"),
    join(dir, "t.py"),
  ]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /has no GPU lines/);
});

test("[tool.gpu-pilot] in pyproject.toml is honoured; a broken one is reported with its line and linting goes on", () => {
  const dir = tmpCopy(["env_after_import_only.py", "env_after_is_available.py"]);
  // preview = true: GPU002 on env_after_import_only.py (a write that works today) is a preview check.
  writeFileSync(
    join(dir, "pyproject.toml"),
    '[tool.gpu-pilot]\npreview = true\nignore = ["GPU002"]\n[tool.gpu-pilot.severity]\nGPU001 = "warning"\n',
  );
  const r = (
    JSON.parse(run(["check", "--format", "json", dir]).stdout) as Array<{ code: string; severity: string }>
  ).filter((d) => d.code === "GPU001" || d.code === "GPU002");
  assert.deepEqual(
    r.map((d) => [d.code, d.severity]),
    [["GPU001", "warning"]],
  );
  writeFileSync(join(dir, "pyproject.toml"), '[tool.gpu-pilot]\npreview = true\nignore = ["GPU002"\n');
  const broken = run(["check", "--format", "json", dir]);
  assert.match(broken.stderr, /pyproject\.toml:4: TOML error/);
  // The broken table is not used at all: the defaults (no preview, so no GPU002; GPU001 an error).
  assert.deepEqual(
    JSON.parse(broken.stdout)
      .filter((d: { code: string }) => d.code === "GPU001" || d.code === "GPU002")
      .map((d: { code: string; severity: string }) => [d.code, d.severity]),
    [["GPU001", "error"]],
  );
  writeFileSync(
    join(dir, "pyproject.toml"),
    '[tool.gpu-pilot]\nignore = ["GPU002", "GPU777"]\nper-file-ignores = { "env_after_is_*.py" = ["GPU001"] }\n',
  );
  const unknown = run(["check", "--format", "json", dir]);
  assert.match(unknown.stderr, /pyproject\.toml:2: \[tool\.gpu-pilot\] ignore: unknown rule code GPU777/);
  assert.deepEqual(
    JSON.parse(unknown.stdout).filter((d: { code: string }) => d.code === "GPU001" || d.code === "GPU002"),
    [],
  );
});

test("worker threads: none under 200 files, one per 250 files, at most one per core and 16 (measured on 16 cores)", () => {
  const saved = process.env.GPU_PILOT_WORKERS;
  delete process.env.GPU_PILOT_WORKERS;
  try {
    assert.equal(workerCount(199, 16), 1);
    assert.equal(workerCount(1141, 2), 2, "python3-torch on 2 cores");
    assert.equal(workerCount(1141, 16), 5, "python3-torch on 16 cores: ceil(1141 / 250)");
    assert.equal(workerCount(4856, 16), 16, "4 copies on 16 cores");
    assert.equal(workerCount(18256, 64), 16, "never more than 16");
    process.env.GPU_PILOT_WORKERS = "3";
    assert.equal(workerCount(1141, 16), 3, "GPU_PILOT_WORKERS overrides");
  } finally {
    if (saved === undefined) delete process.env.GPU_PILOT_WORKERS;
    else process.env.GPU_PILOT_WORKERS = saved;
  }
});

test("worker threads give the same output, in the same order, as one thread; --statistics reports the prefilter", () => {
  const env = (n: string) => ({ ...process.env, GPU_PILOT_WORKERS: n });
  const one = spawnSync(
    process.execPath,
    [CLI, "check", "--no-cache", "--format", "json", CASES, join(ROOT, "examples")],
    { encoding: "utf8", env: env("1") },
  );
  const two = spawnSync(
    process.execPath,
    [CLI, "check", "--no-cache", "--format", "json", "--statistics", CASES, join(ROOT, "examples")],
    { encoding: "utf8", env: env("2") },
  );
  assert.equal(two.status, one.status);
  assert.deepEqual(JSON.parse(two.stdout), JSON.parse(one.stdout));
  assert.match(
    two.stderr,
    /gpu-pilot: parsed \d+ of \d+ files; skipped \d+ of \d+ files without parsing .*; 2 workers/,
  );
});

test("worker threads scan the project's writers once, in shares, and each sees the union: a call of another module's writer after CUDA initialised is GPU001 with 1, 2 and 3 workers", () => {
  const files: Record<string, string> = { ...WRITER_PROJECT };
  for (let i = 0; i < 12; i++) files[`pkg/m${i}.py`] = `def f${i}(x):\n    return x + ${i}\n`;
  const dir = projectTree(files);
  const found = (n: string) => {
    const r = spawnSync(process.execPath, [CLI, "check", "--no-cache", "--format", "json", "--statistics", dir], {
      encoding: "utf8",
      env: { ...process.env, GPU_PILOT_WORKERS: n },
    });
    assert.match(r.stderr, new RegExp(`; ${n} worker`));
    return (JSON.parse(r.stdout) as Array<{ code: string; filename: string; location: { row: number } }>).map(
      (d) => `${d.filename.slice(dir.length + 1)}:${d.location.row} ${d.code}`,
    );
  };
  for (const n of ["1", "2", "3"]) assert.deepEqual(found(n), ["run.py:5 GPU001"], `${n} workers`);
});

test("exit codes like ESLint's: information does not fail; --fail-level and --exit-non-zero-on change the bar; text shows the severity on one line", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-fail-level-"));
  const info = join(dir, "info.py");
  // GPU002 in the default set: vllm (unmeasured) imported between torch and the write.
  writeFileSync(info, 'import os\nimport torch\nimport vllm\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n');
  const r = run(["check", info]);
  assert.equal(r.status, 0, r.stdout);
  assert.match(r.stdout, /info\.py:4:1: information GPU002 /);
  assert.equal(run(["check", "--fail-level", "information", info]).status, 1);
  assert.equal(run(["check", "--exit-non-zero-on", "hint", info]).status, 1);
  const bad = run(["check", "--fail-level", "fatal", info]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--fail-level must be error, warning, information or hint, not "fatal"/);
  const err = join(dir, "err.py");
  writeFileSync(
    err,
    'import os\nimport sys\nimport torch\nx = torch.zeros(1).cuda()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ndel sys.modules["torch"]\nimport torch\n',
  );
  const e = run(["check", err]);
  assert.equal(e.status, 1);
  assert.equal(run(["check", "--fail-level", "error", err]).status, 1);
  // A message quoting multi-line code stays on one line of text output.
  for (const line of e.stdout.split("\n").filter((l) => l.includes("GPU0")))
    assert.match(line, /^.*err\.py:\d+:\d+: (error|warning|information|hint) GPU0\d\d /);
});

test("--preview adds the preview rules (GPU006 here); the default set leaves them out", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-preview-"));
  const f = join(dir, "order.py");
  writeFileSync(f, 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n');
  assert.deepEqual(JSON.parse(run(["check", "--format", "json", f]).stdout), []);
  assert.deepEqual(
    JSON.parse(run(["check", "--format", "json", "--preview", f]).stdout).map((d: { code: string }) => d.code),
    ["GPU006"],
  );
});

test("a reader that closes the pipe early (gpu-pilot check ... | head) ends the run quietly: no EPIPE stack trace", () => {
  // 300 files with a finding each: far more output than a pipe holds, so the writes after `head`
  // exits meet a closed pipe.
  const dir = mkdtempSync(join(tmpdir(), "gp-epipe-"));
  for (let i = 0; i < 300; i++)
    writeFileSync(
      join(dir, `f${i}.py`),
      'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    );
  const r = spawnSync(
    "bash",
    ["-c", `"${process.execPath}" "${CLI}" check --format sarif "${dir}" | head -c 10 >/dev/null`],
    { encoding: "utf8" },
  );
  assert.doesNotMatch(r.stderr, /EPIPE|Error:/, r.stderr);
});

test("check --help and check -h print the usage and exit 0, as --help does; after `--` the word is a path", () => {
  for (const args of [["--help"], ["check", "--help"], ["check", "-h"], ["check", "examples", "--help"]]) {
    const r = run(args);
    assert.equal(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stdout, /^usage: gpu-pilot check/m);
  }
  const r = run(["check", "--", "--help"]);
  assert.equal(r.status, 2);
  assert.doesNotMatch(r.stdout, /usage:/);
});
