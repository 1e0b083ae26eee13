// The baseline (issue 43 item 3): --write-baseline, --baseline and [tool.gpu-pilot] baseline, with
// findings matched by rule, file and a fingerprint of their lines. Built dist/cli.js, real files;
// the engine's functions (engine/baseline.ts) directly.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../support/helpers";
import {
  BaselineError,
  entriesOf,
  fingerprintOf,
  parseBaseline,
  serialiseBaseline,
} from "../../../server/src/engine/baseline";

const CLI = join(ROOT, "dist", "cli.js");
const run = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    cwd,
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, GPU_PILOT_CACHE_DIR: join(cwd, ".cache") },
  });

/** GPU001 (line 5): set after CUDA initialised. */
const LATE =
  'import os\nimport torch\n\nuse_gpu = torch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\n';
/** GPU007 (line 3): a misspelled variable. */
const MISSPELLED = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICE"] = "1"\nimport torch\n';

before(() => {
  if (!existsSync(CLI))
    spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit", timeout: 120_000 });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-baseline-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const entries = (file: string) =>
  (JSON.parse(readFileSync(file, "utf8")) as { entries: Array<{ file: string; code: string; occurrence: number }> })
    .entries;

test("round trip: write, edit elsewhere (still matched), fix one (reported stale), a new finding is reported, rewrite shrinks", () => {
  const dir = project({ "src/late.py": LATE, "src/misspelled.py": MISSPELLED });
  const w = run(["check", "--write-baseline", "gp-baseline.json", "src"], dir);
  assert.equal(w.status, 0, w.stderr);
  assert.equal(
    w.stdout,
    "All checks passed!\nWrote 2 baseline entries to gp-baseline.json; 2 baselined, 0 entries no longer match.\n",
  );
  assert.deepEqual(
    entries(join(dir, "gp-baseline.json")).map((e) => [e.file, e.code, e.occurrence]),
    [
      ["src/late.py", "GPU001", 0],
      ["src/misspelled.py", "GPU007", 0],
    ],
  );
  // Lines added above and the finding's line re-indented: still matched.
  writeFileSync(
    join(dir, "src/late.py"),
    `# a header\n\n${LATE.replace('os.environ["CUDA', 'if True:\n    os.environ["CUDA')}`,
  );
  const edited = run(["check", "--baseline", "gp-baseline.json", "src"], dir);
  assert.equal(edited.status, 0, edited.stdout + edited.stderr);
  assert.equal(edited.stdout, "All checks passed!\n2 baselined, 0 entries no longer match.\n");
  // Fixed: its entry no longer matches; a new finding elsewhere is reported and fails the run.
  writeFileSync(join(dir, "src/misspelled.py"), MISSPELLED.replace('DEVICE"', 'DEVICES"'));
  writeFileSync(join(dir, "src/new.py"), MISSPELLED);
  const fixed = run(["check", "--baseline", "gp-baseline.json", "src"], dir);
  assert.equal(fixed.status, 1, fixed.stderr);
  assert.match(fixed.stdout, /^src\/new\.py:3:\d+: warning GPU007 /);
  assert.match(fixed.stdout, /\n1 baselined, 1 entry no longer matches \(write the baseline again to drop it\)\.\n$/);
  // Written again (the new file fixed first): one entry left.
  writeFileSync(join(dir, "src/new.py"), "print(1)\n");
  const again = run(["check", "--write-baseline", "gp-baseline.json", "src"], dir);
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(
    entries(join(dir, "gp-baseline.json")).map((e) => e.file),
    ["src/late.py"],
  );
});

test("same line twice: occurrence indexes; a run over some files counts no stale entries of the others, and writing keeps their entries", () => {
  const twice = `${MISSPELLED}os.environ["CUDA_VISIBLE_DEVICE"] = "1"\n`;
  const dir = project({ "a.py": twice, "b.py": LATE });
  assert.equal(run(["check", "--write-baseline", "base.json", "."], dir).status, 0);
  assert.deepEqual(
    entries(join(dir, "base.json")).map((e) => [e.file, e.code, e.occurrence]),
    [
      ["a.py", "GPU007", 0],
      ["a.py", "GPU007", 1],
      ["b.py", "GPU001", 0],
    ],
  );
  const one = run(["check", "--baseline", "base.json", "b.py"], dir);
  assert.equal(one.stdout, "All checks passed!\n1 baselined, 0 entries no longer match.\n");
  // A third copy of the line: one new finding.
  writeFileSync(join(dir, "a.py"), `${twice}os.environ["CUDA_VISIBLE_DEVICE"] = "1"\n`);
  const third = run(["check", "--baseline", "base.json", "a.py"], dir);
  assert.equal(third.status, 1);
  assert.match(third.stdout, /\nFound 1 problem\.\n[^\n]*\n2 baselined, 0 entries no longer match\.\n$/);
  // Rewritten from a.py alone: b.py's entry is kept (b.py exists; the run did not check it).
  writeFileSync(join(dir, "a.py"), "print(1)\n");
  assert.equal(run(["check", "--write-baseline", "base.json", "a.py"], dir).status, 0);
  assert.deepEqual(
    entries(join(dir, "base.json")).map((e) => e.file),
    ["b.py"],
  );
});

test("[tool.gpu-pilot] baseline: relative to the pyproject's folder, entries relative to the baseline's; a missing one is an error", () => {
  const dir = project({
    "pyproject.toml": '[tool.gpu-pilot]\nbaseline = "ci/gp.json"\n',
    "pkg/late.py": LATE,
    "ci/.keep": "",
  });
  assert.equal(run(["check", "--write-baseline", "ci/gp.json", "pkg"], dir).status, 0);
  assert.deepEqual(
    entries(join(dir, "ci/gp.json")).map((e) => e.file),
    ["../pkg/late.py"],
  );
  // No --baseline: the pyproject's, from the root and from inside pkg.
  const r = run(["check", "--format", "json", "pkg"], dir);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, "[]\n");
  assert.equal(r.stderr, "1 baselined, 0 entries no longer match.\n");
  const inPkg = run(["check", "."], join(dir, "pkg"));
  assert.equal(inPkg.status, 0, inPkg.stdout + inPkg.stderr);
  assert.equal(inPkg.stdout, "All checks passed!\n1 baselined, 0 entries no longer match.\n");
  writeFileSync(join(dir, "pyproject.toml"), '[tool.gpu-pilot]\nbaseline = "ci/none.json"\n');
  const missing = run(["check", "pkg"], dir);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^gpu-pilot: cannot read baseline .*ci\/none\.json: no such file\n/);
  writeFileSync(join(dir, "pyproject.toml"), "[tool.gpu-pilot]\nbaseline = 3\n");
  const bad = run(["check", "pkg"], dir);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /baseline must be the path of a baseline file/);
});

test("a hostile baseline is a clear error (exit 2), never a crash or a hang; 50,000 entries are read", () => {
  const dir = project({ "late.py": LATE });
  const cases: Array<[string, RegExp]> = [
    ["{", /is not valid JSON/],
    ["[]", /must be a JSON object with "version" and "entries"/],
    ['{"version": 2, "entries": []}', /has version 2; this gpu-pilot reads version 1/],
    [
      '{"version": 1, "entries": [{"file": "/etc/passwd", "code": "GPU001", "fingerprint": "0123456789abcdef", "occurrence": 0}]}',
      /entry 1 of 1: "file" must be a relative path/,
    ],
    [
      '{"version": 1, "entries": [{"file": "a.py", "code": "GPU001", "fingerprint": "0123456789abcdef", "occurrence": -1}]}',
      /"occurrence" must be a whole number/,
    ],
  ];
  for (const [text, message] of cases) {
    writeFileSync(join(dir, "b.json"), text);
    const r = run(["check", "--baseline", "b.json", "."], dir);
    assert.equal(r.status, 2, text);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
  }
  spawnSync("mkfifo", [join(dir, "fifo.json")]);
  const fifo = run(["check", "--baseline", "fifo.json", "."], dir);
  assert.equal(fifo.status, 2);
  assert.match(fifo.stderr, /cannot read baseline .*fifo\.json: not a regular file \(a FIFO\)/);
  const writeFifo = run(["check", "--write-baseline", "fifo.json", "."], dir);
  assert.equal(writeFifo.status, 2);
  assert.match(writeFifo.stderr, /cannot write baseline .*fifo\.json: it is a FIFO, not a regular file/);
  const many = Array.from({ length: 50_000 }, (_, i) => ({
    file: "late.py",
    code: "GPU001",
    fingerprint: i.toString(16).padStart(16, "0"),
    occurrence: 0,
  }));
  writeFileSync(join(dir, "many.json"), JSON.stringify({ version: 1, entries: many }));
  const started = Date.now();
  const big = run(["check", "--baseline", "many.json", "."], dir);
  assert.equal(big.status, 1, big.stderr);
  assert.match(
    big.stdout,
    /\n0 baselined, 50000 entries no longer match \(write the baseline again to drop them\)\.\n$/,
  );
  assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
});

test("fingerprints ignore indentation and spacing, not the code; the file is sorted and stable", () => {
  assert.equal(fingerprintOf(["    x  =  1"]), fingerprintOf(["x = 1"]));
  assert.notEqual(fingerprintOf(["x = 1"]), fingerprintOf(["x = 2"]));
  assert.match(fingerprintOf([]), /^[0-9a-f]{16}$/);
  const list = entriesOf(
    [
      { code: "GPU007", file: "/r/b.py", lines: ["y"] },
      { code: "GPU001", file: "/r/a.py", lines: ["x"] },
      { code: "GPU001", file: "/r/a.py", lines: ["  x"] },
    ],
    "/r",
  );
  assert.deepEqual(
    list.map((e) => [e.file, e.code, e.occurrence]),
    [
      ["a.py", "GPU001", 0],
      ["a.py", "GPU001", 1],
      ["b.py", "GPU007", 0],
    ],
  );
  const text = serialiseBaseline(list);
  assert.equal(serialiseBaseline([...list].reverse()), text);
  assert.deepEqual(parseBaseline(text, "/r/base.json").entries, list);
  assert.equal(serialiseBaseline([]), '{\n  "version": 1,\n  "entries": []\n}\n');
  assert.throws(
    () =>
      parseBaseline(
        '{"version": 1, "entries": [{"file": "a.py", "code": "E501", "fingerprint": "0123456789abcdef", "occurrence": 0}]}',
        "x.json",
      ),
    BaselineError,
  );
});

test("usage: --write-baseline with --fix, and two different baseline files, are refused", () => {
  const dir = project({ "late.py": LATE });
  const fix = run(["check", "--fix", "--write-baseline", "b.json", "."], dir);
  assert.equal(fix.status, 2);
  assert.match(fix.stderr, /--write-baseline cannot be combined with --fix or --diff/);
  const two = run(["check", "--baseline", "a.json", "--write-baseline", "b.json", "."], dir);
  assert.equal(two.status, 2);
  assert.match(two.stderr, /--baseline and --write-baseline name different files/);
});
