// Finding torchrun / accelerate / deepspeed / docker / srun: next to an absolute interpreter first,
// then on the run's PATH (common/src/run/which.ts); an absolute program as it is; the script's kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findProgram, scriptProblem } from "../../../../common/src/run/which";

const root = mkdtempSync(join(tmpdir(), "gpu-pilot-which-"));
test.after(() => rmSync(root, { recursive: true, force: true }));

function exe(dir: string, name: string, mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, name);
  writeFileSync(p, "#!/bin/sh\n");
  chmodSync(p, mode);
  return p;
}

test(
  "the interpreter's folder wins over PATH; PATH order is kept; relative entries are skipped",
  { skip: process.platform === "win32" },
  () => {
    const venv = join(root, "venv", "bin");
    const a = join(root, "a");
    const b = join(root, "b");
    const venvTorchrun = exe(venv, "torchrun");
    exe(a, "torchrun");
    const bAccelerate = exe(b, "accelerate");
    const aDeepspeed = exe(a, "deepspeed");
    exe(b, "deepspeed");
    const pathEnv = ["relative/bin", a, b].join(":");
    assert.equal(findProgram("torchrun", { pathEnv, interpreter: join(venv, "python") }), venvTorchrun);
    assert.equal(
      findProgram("torchrun", { pathEnv, interpreter: "python3" }),
      join(a, "torchrun"),
      "bare interpreter: PATH only",
    );
    assert.equal(findProgram("accelerate", { pathEnv, interpreter: join(venv, "python") }), bAccelerate);
    assert.equal(findProgram("deepspeed", { pathEnv }), aDeepspeed);
    assert.equal(findProgram("srun", { pathEnv }), undefined);
    assert.equal(findProgram("torchrun", { pathEnv: undefined }), undefined);
  },
);

test(
  "a file without any execute bit or a folder of that name does not count",
  { skip: process.platform === "win32" },
  () => {
    const d = join(root, "noexec");
    exe(d, "docker", 0o644);
    mkdirSync(join(d, "srun"), { recursive: true });
    assert.equal(findProgram("docker", { pathEnv: d }), undefined);
    assert.equal(findProgram("srun", { pathEnv: d }), undefined);
  },
);

test(
  "an absolute program is checked as it is; a relative path is never found; the script must be a regular file",
  { skip: process.platform === "win32" },
  () => {
    const dir = join(root, "abs");
    const python = exe(dir, "python");
    const plain = exe(dir, "notes.txt", 0o644);
    assert.equal(findProgram(python, { pathEnv: "/nowhere" }), python);
    assert.equal(findProgram(join(dir, "gone"), { pathEnv: dir }), undefined);
    assert.equal(findProgram(plain, { pathEnv: dir }), undefined, "not executable");
    assert.equal(findProgram(dir, { pathEnv: dir }), undefined, "a folder");
    assert.equal(findProgram("abs/python", { pathEnv: root }), undefined, "relative with a separator");
    assert.equal(scriptProblem(plain), undefined);
    assert.equal(scriptProblem(join(dir, "gone.py")), "no such file");
    assert.equal(scriptProblem(join(plain, "x.py")), "no such file");
    assert.equal(scriptProblem(dir), "not a regular file (a folder)");
  },
);
