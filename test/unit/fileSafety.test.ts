// Issue 18, file safety: special files, encodings, notebooks byte for byte, atomic writes,
// symlinks. Every scenario that could hang or exhaust memory runs in a child process with a
// timeout, so a regression fails the test instead of hanging the run.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, symlinkSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "./helpers";
import { readWorkspaceFile } from "../../server/src/engine/workspaceFile";

const CLI = join(ROOT, "dist", "cli.js");
const tmp = (p = "gp-safe-") => mkdtempSync(join(tmpdir(), p));
const cli = (args: string[], cwd = ROOT) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd, timeout: 30_000 });
const posix = process.platform !== "win32";
const mkfifo = (p: string) => execFileSync("mkfifo", [p]);
/** Runs `code` (TypeScript, through tsx) in a child process; returns its status, stdout and whether it timed out. */
const child = (code: string) => {
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", code], { encoding: "utf8", cwd: ROOT, timeout: 20_000, maxBuffer: 1 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined || r.signal !== null };
};

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

test("readWorkspaceFile: regular files only, with a size cap, and a reason when refused", { skip: !posix }, () => {
  const dir = tmp();
  writeFileSync(join(dir, "ok.txt"), "torch==2.1.0\n");
  const ok = readWorkspaceFile(join(dir, "ok.txt"), { maxBytes: 100 });
  assert.ok(ok.ok);
  assert.equal(ok.ok && ok.bytes.toString("utf8"), "torch==2.1.0\n");
  const big = readWorkspaceFile(join(dir, "ok.txt"), { maxBytes: 5 });
  assert.deepEqual(big, { ok: false, reason: "it is 13 bytes, over the 5-byte limit", code: "too-large", size: 13 });
  symlinkSync("/dev/zero", join(dir, "zero.txt"));
  assert.deepEqual(readWorkspaceFile(join(dir, "zero.txt"), { maxBytes: 100 }), { ok: false, reason: "not a regular file (a character device)", code: "not-regular" });
  mkfifo(join(dir, "fifo.txt"));
  assert.deepEqual(readWorkspaceFile(join(dir, "fifo.txt"), { maxBytes: 100 }), { ok: false, reason: "not a regular file (a FIFO)", code: "not-regular" });
  mkdirSync(join(dir, "d"));
  assert.deepEqual(readWorkspaceFile(join(dir, "d"), { maxBytes: 100 }), { ok: false, reason: "not a regular file (a folder)", code: "not-regular" });
  const missing = readWorkspaceFile(join(dir, "missing.txt"), { maxBytes: 100 });
  assert.equal(missing.ok, false);
  assert.equal(!missing.ok && missing.code, "ENOENT");
});

test("the torch-pin lookup ignores requirements.txt -> /dev/zero and a FIFO environment.yml (no hang, no memory blow-up)", { skip: !posix }, () => {
  const dir = tmp();
  symlinkSync("/dev/zero", join(dir, "requirements.txt"));
  mkfifo(join(dir, "environment.yml"));
  mkfifo(join(dir, "requirements-dev.txt"));
  writeFileSync(join(dir, "requirements-gpu.txt"), "torch==2.1.0\n");
  const r = child(`const { projectPinsTorchBelow24 } = require("./server/src/engine/config.ts"); console.log(JSON.stringify(projectPinsTorchBelow24(${JSON.stringify(dir)})));`);
  assert.equal(r.timedOut, false, "the lookup hung");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "true", "the regular requirements file is still read");
});

test("a pyproject.toml that is a FIFO or /dev/zero is a configuration problem, not a hang", { skip: !posix }, () => {
  for (const make of [(p: string) => mkfifo(p), (p: string) => symlinkSync("/dev/zero", p)]) {
    const dir = tmp();
    make(join(dir, "pyproject.toml"));
    writeFileSync(join(dir, "a.py"), "import torch\n");
    const r = child(`const { resolveLintOptions } = require("./server/src/engine/options.ts"); console.log(JSON.stringify(resolveLintOptions(${JSON.stringify(join(dir, "a.py"))}, {}).problems));`);
    assert.equal(r.timedOut, false, "config lookup hung");
    assert.equal(r.status, 0, r.stderr);
    const problems = JSON.parse(r.stdout) as Array<{ file: string; message: string }>;
    assert.equal(problems.length, 1);
    assert.match(problems[0].message, /^not read: not a regular file \(a (FIFO|character device)\)$/);
  }
});

test("CLI: a source that is a link to /dev/zero or a FIFO is refused by name, skipped with a note in a folder", { skip: !posix }, () => {
  const dir = tmp();
  symlinkSync("/dev/zero", join(dir, "zero.py"));
  mkfifo(join(dir, "pipe.ipynb"));
  writeFileSync(join(dir, "real.py"), 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n');
  const named = cli(["check", join(dir, "zero.py")]);
  assert.equal(named.error, undefined, "the CLI hung");
  assert.equal(named.status, 2);
  assert.match(named.stderr, /cannot read .*zero\.py: not a regular file \(a character device\)/);
  const fifo = cli(["check", join(dir, "pipe.ipynb")]);
  assert.equal(fifo.error, undefined, "the CLI hung on a FIFO");
  assert.equal(fifo.status, 2);
  assert.match(fifo.stderr, /cannot read .*pipe\.ipynb: not a regular file \(a FIFO\)/);
  const folder = cli(["check", "--format", "json", dir]);
  assert.equal(folder.error, undefined, "the folder scan hung");
  assert.equal(folder.status, 1, folder.stderr);
  const found = JSON.parse(folder.stdout) as Array<{ code: string; filename: string }>;
  assert.deepEqual([...new Set(found.map((d) => d.filename.slice(dir.length + 1)))], ["real.py"]);
  assert.ok(found.some((d) => d.code === "GPU001"));
  assert.match(folder.stderr, /skipped .*pipe\.ipynb: not a regular file \(a FIFO\)/);
  assert.match(folder.stderr, /skipped .*zero\.py: not a regular file \(a character device\)/);
});
