// The CLI's fixes as Ruff's (issue 43 item 3): --unsafe-fixes, --diff, and the --fix summary that
// counts the unsafe fixes left out, also when they are the only ones; the text output's [*] marker
// (issue 45). Built dist/cli.js, real files.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../support/helpers";
import { findingText, type JsonDiagnostic } from "../../../server/src/cli";

const CLI = join(ROOT, "dist", "cli.js");
const run = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });

/** GPU007: a misspelled variable, whose only fix (the rename) is unsafe. */
const UNSAFE_ONLY = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICE"] = "1"\nimport torch\n';
/** GPU001: set after CUDA initialised, with a safe fix (move the write above `import torch`). */
const SAFE =
  'import os\nimport torch\n\nuse_gpu = torch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\n';

before(() => {
  if (!existsSync(CLI))
    spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit", timeout: 120_000 });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-fixes-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test("--fix with only unsafe fixes says so: N fixed, M remaining and the hidden fixes --unsafe-fixes would apply; the file is unchanged", () => {
  const dir = project({ "misspelled.py": UNSAFE_ONLY });
  const r = run(["check", "--no-cache", "--fix", "misspelled.py"], dir);
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stdout,
    /\nFound 1 problem \(0 fixed, 1 remaining\)\.\nNo fixes available \(1 hidden fix can be enabled with the `--unsafe-fixes` option\)\.\n$/,
  );
  assert.equal(readFileSync(join(dir, "misspelled.py"), "utf8"), UNSAFE_ONLY);
  // Without --fix the same hint, after the safe ones.
  const both = project({ "misspelled.py": UNSAFE_ONLY, "late.py": SAFE });
  const check = run(["check", "--no-cache", "."], both);
  assert.equal(check.status, 1, check.stderr);
  assert.match(
    check.stdout,
    /\nFound 2 problems\.\n\[\*\] 1 fixable with the `--fix` option \(1 hidden fix can be enabled with the `--unsafe-fixes` option\)\.\n$/,
  );
  const fixed = run(["check", "--no-cache", "--fix", "."], both);
  assert.match(
    fixed.stdout,
    /\nFound 1 problem \(1 fixed, 1 remaining\)\.\nNo fixes available \(1 hidden fix can be enabled with the `--unsafe-fixes` option\)\.\n$/,
  );
});

test("text output: [*] before the message of a finding --fix fixes, as the summary's [*] line says; each fix's title after the message, an unsafe one's said unsafe", () => {
  const dir = project({ "misspelled.py": UNSAFE_ONLY, "late.py": SAFE });
  const r = run(["check", "--no-cache", "."], dir);
  const lines = r.stdout.trimEnd().split("\n");
  const late = lines.find((l) => l.startsWith("late.py:"));
  const misspelled = lines.find((l) => l.startsWith("misspelled.py:"));
  assert.match(late ?? "", /^late\.py:5:1: error GPU001 \[\*\] [^[]+ \(fix: [^)]+\)$/, r.stdout);
  assert.match(misspelled ?? "", /^misspelled\.py:3:\d+: \w+ GPU007 (?!\[\*\])[^[]+ \(unsafe fix: [^)]+\)$/, r.stdout);
  assert.doesNotMatch(
    r.stdout,
    /\[fix:|\[\*:/,
    "the old notations, [*: ...] after safe fixes and [fix: ...] after unsafe ones",
  );
  assert.match(
    r.stdout,
    /\n\[\*\] 1 fixable with the `--fix` option \(1 hidden fix/,
    "one [*] finding, one [*] fixable",
  );
  // With --unsafe-fixes, --fix fixes both: both marked, the unsafe one still said unsafe.
  const unsafe = run(["check", "--no-cache", "--unsafe-fixes", "."], dir);
  assert.match(unsafe.stdout, /^misspelled\.py:3:\d+: \w+ GPU007 \[\*\] [^[]+ \(unsafe fix: [^)]+\)$/m, unsafe.stdout);
  assert.match(unsafe.stdout, /\n\[\*\] 2 fixable with the `--fix --unsafe-fixes` option\.\n$/);
});

test("findingText: the marker follows the fix's applicability and the run's --unsafe-fixes", () => {
  const d = (applicability: "safe" | "unsafe" | null): JsonDiagnostic => ({
    cell: null,
    code: "GPU001",
    end_location: { row: 5, column: 10 },
    filename: "/nonexistent/a.py",
    fix: applicability ? { applicability, message: "Move it up", edits: [] } : null,
    location: { row: 5, column: 1 },
    message: "Set too late.",
    noqa_row: 5,
    url: null,
    severity: "error",
  });
  const safe = { unsafe: false };
  assert.equal(findingText(d("safe"), safe), "/nonexistent/a.py:5:1: error GPU001 [*] Set too late. (fix: Move it up)");
  assert.equal(
    findingText(d("unsafe"), safe),
    "/nonexistent/a.py:5:1: error GPU001 Set too late. (unsafe fix: Move it up)",
  );
  assert.equal(
    findingText(d("unsafe"), { unsafe: true }),
    "/nonexistent/a.py:5:1: error GPU001 [*] Set too late. (unsafe fix: Move it up)",
  );
  assert.equal(findingText(d(null), safe), "/nonexistent/a.py:5:1: error GPU001 Set too late.");
});

test("--fix --unsafe-fixes applies the unsafe fixes too", () => {
  const dir = project({ "misspelled.py": UNSAFE_ONLY, "late.py": SAFE });
  const r = run(["check", "--fix", "--unsafe-fixes", "."], dir);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, "Fixed 2 problems; all checks passed!\n");
  assert.equal(
    readFileSync(join(dir, "misspelled.py"), "utf8"),
    UNSAFE_ONLY.replace('CUDA_VISIBLE_DEVICE"', 'CUDA_VISIBLE_DEVICES"'),
  );
  // Without --fix, --unsafe-fixes counts them as fixable.
  const again = project({ "misspelled.py": UNSAFE_ONLY });
  const hint = run(["check", "--no-cache", "--unsafe-fixes", "misspelled.py"], again);
  assert.match(hint.stdout, /\nFound 1 problem\.\n\[\*\] 1 fixable with the `--fix --unsafe-fixes` option\.\n$/);
});

test("--diff prints a unified diff of the fixes (git apply's a/ b/ names), writes nothing and exits 1 when there are fixes; 0 and no diff when there are none", () => {
  const dir = project({ "misspelled.py": UNSAFE_ONLY, "late.py": SAFE });
  const r = run(["check", "--diff", "."], dir);
  assert.equal(r.status, 1, r.stderr);
  assert.equal(
    r.stdout,
    [
      "--- a/late.py",
      "+++ b/late.py",
      "@@ -1,5 +1,5 @@",
      " import os",
      '+os.environ["CUDA_VISIBLE_DEVICES"] = "3"',
      " import torch",
      " ",
      " use_gpu = torch.cuda.is_available()",
      '-os.environ["CUDA_VISIBLE_DEVICES"] = "3"',
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "Would fix 1 problem (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n");
  assert.equal(readFileSync(join(dir, "late.py"), "utf8"), SAFE);
  // With --unsafe-fixes the rename is in the diff too; --fix with --diff still writes nothing.
  const all = run(["check", "--diff", "--unsafe-fixes", "--fix", "."], dir);
  assert.equal(all.status, 1, all.stderr);
  assert.match(
    all.stdout,
    /^--- a\/late\.py\n[\s\S]*^--- a\/misspelled\.py\n\+\+\+ b\/misspelled\.py\n@@ -1,4 \+1,4 @@\n import os\n \n-os\.environ\["CUDA_VISIBLE_DEVICE"\] = "1"\n\+os\.environ\["CUDA_VISIBLE_DEVICES"\] = "1"\n import torch\n$/m,
  );
  assert.equal(all.stderr, "Would fix 2 problems.\n");
  assert.equal(readFileSync(join(dir, "misspelled.py"), "utf8"), UNSAFE_ONLY);
  // Only unsafe fixes and no --unsafe-fixes: nothing to diff, exit 0.
  const none = run(["check", "--diff", "misspelled.py"], dir);
  assert.equal(none.status, 0, none.stderr);
  assert.equal(none.stdout, "");
  assert.equal(none.stderr, "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n");
  // Standard input too.
  const stdin = spawnSync(process.execPath, [CLI, "check", "--diff", "--stdin-filename", "late.py"], {
    encoding: "utf8",
    cwd: dir,
    input: SAFE,
    timeout: 60_000,
  });
  assert.equal(stdin.status, 1, stdin.stderr);
  assert.match(stdin.stdout, /^--- a\/late\.py\n\+\+\+ b\/late\.py\n@@ -1,5 \+1,5 @@\n/);
  // A file outside the working folder is named by its absolute path, as `diff -u` names it (no
  // `a//tmp/...`); to apply a diff, run it from the folder that holds the files.
  const elsewhere = mkdtempSync(join(tmpdir(), "gp-diff-cwd-"));
  const out = run(["check", "--diff", join(dir, "late.py")], elsewhere);
  assert.equal(out.status, 1, out.stderr);
  const abs = join(dir, "late.py");
  assert.ok(out.stdout.startsWith(`--- ${abs}\n+++ ${abs}\n@@ -1,5 +1,5 @@\n`), out.stdout);
});

test("the README's commands apply --diff's output: `git apply` and `patch -p1` from the folder it ran in; `patch -d / -p1` for a file outside it, named by its absolute path (GNU patch ignores it at -p0)", (t) => {
  const has = (cmd: string) => spawnSync(cmd, ["--version"], { encoding: "utf8" }).status === 0;
  if (!has("patch") || !has("git")) return t.skip("patch or git is not installed");
  const fixed =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\nimport torch\n\nuse_gpu = torch.cuda.is_available()\n';
  const apply = (cmd: string, args: string[], cwd: string, diff: string) => {
    const r = spawnSync(cmd, args, { cwd, input: diff, encoding: "utf8", timeout: 60_000 });
    assert.equal(r.status, 0, `${cmd} ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  };
  // Under the working folder: a/ b/ names.
  for (const [cmd, args] of [
    ["git", ["apply", "-"]],
    ["patch", ["-p1"]],
  ] as const) {
    const dir = project({ "late.py": SAFE });
    const r = run(["check", "--no-cache", "--diff", "late.py"], dir);
    assert.equal(r.status, 1, r.stderr);
    apply(cmd, [...args], dir, r.stdout);
    assert.equal(readFileSync(join(dir, "late.py"), "utf8"), fixed, cmd);
  }
  // Outside it: the absolute path, which `patch -p0` and `git apply` refuse.
  const dir = project({ "late.py": SAFE });
  const abs = join(dir, "late.py");
  const elsewhere = mkdtempSync(join(tmpdir(), "gp-diff-cwd-"));
  const r = run(["check", "--no-cache", "--diff", abs], elsewhere);
  assert.equal(r.status, 1, r.stderr);
  assert.ok(r.stdout.startsWith(`--- ${abs}\n+++ ${abs}\n`), r.stdout);
  const p0 = spawnSync("patch", ["-p0", "--dry-run", "--batch"], { cwd: elsewhere, input: r.stdout, encoding: "utf8" });
  assert.notEqual(p0.status, 0, "patch -p0 applied an absolute name after all: the README says it does not");
  assert.match(p0.stdout + p0.stderr, /Ignoring potentially dangerous file name/);
  apply("patch", ["-d", "/", "-p1"], elsewhere, r.stdout);
  assert.equal(readFileSync(abs, "utf8"), fixed);
});

test("--fix --unsafe-fixes and --diff --unsafe-fixes apply a manifest finding that depends on a file beside it (GPU054: a bare CUDA_VISIBLE_DEVICES before `bash scripts/train.sh`, which starts torchrun); a re-check is clean", () => {
  const script = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=1\nbash scripts/train.sh\n";
  const dir = project({ "run.sh": script });
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "scripts", "train.sh"), "#!/bin/bash\ntorchrun --nproc_per_node 1 train.py\n");
  const diff = run(["check", "--no-cache", "--select", "GPU054", "--diff", "--unsafe-fixes", "run.sh"], dir);
  assert.equal(diff.status, 1, diff.stderr);
  assert.match(diff.stdout, /\n-CUDA_VISIBLE_DEVICES=1\n\+export CUDA_VISIBLE_DEVICES=1\n/);
  assert.equal(readFileSync(join(dir, "run.sh"), "utf8"), script);
  const fixed = run(["check", "--no-cache", "--select", "GPU054", "--fix", "--unsafe-fixes", "run.sh"], dir);
  assert.equal(fixed.status, 0, fixed.stdout + fixed.stderr);
  assert.match(fixed.stdout, /^Fixed 1 problem; all checks passed!\n$/);
  assert.equal(readFileSync(join(dir, "run.sh"), "utf8"), script.replace("\nCUDA_VISIBLE", "\nexport CUDA_VISIBLE"));
});
