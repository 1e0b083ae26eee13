import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../support/helpers";

const CLI = join(ROOT, "dist", "cli.js");

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

test("a folder's Dev Container configurations are checked; nothing else in .devcontainer or another hidden folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-devc-"));
  const config = '{\n  // two GPUs\n  "image": "img",\n  "runArgs": ["--gpus", "device=0,1",],\n}\n';
  mkdirSync(join(dir, ".devcontainer", "gpu"), { recursive: true });
  mkdirSync(join(dir, ".hidden"));
  writeFileSync(join(dir, ".devcontainer", "devcontainer.json"), config);
  writeFileSync(join(dir, ".devcontainer", "gpu", "devcontainer.json"), config);
  writeFileSync(join(dir, ".devcontainer.json"), config);
  writeFileSync(join(dir, ".hidden", "devcontainer.json"), config);
  writeFileSync(join(dir, "devcontainer.json"), config);
  // Read only when named: a script and a Dockerfile in .devcontainer.
  writeFileSync(join(dir, ".devcontainer", "post-create.sh"), "docker run --gpus device=0,1 img\n");
  writeFileSync(join(dir, ".devcontainer", "Dockerfile"), "FROM img\nENV CUDA_VISIBLE_DEVICES=0\n");
  const r = spawnSync(process.execPath, [CLI, "check", "--format", "json", dir], { encoding: "utf8", cwd: dir });
  assert.equal(r.status, 1, r.stderr);
  const found = (JSON.parse(r.stdout) as { filename: string; code: string; location: { row: number } }[]).map(
    (d) => `${relative(dir, d.filename).split("\\").join("/")}:${d.location.row}:${d.code}`,
  );
  assert.deepEqual(found.sort(), [
    ".devcontainer.json:4:GPU072",
    ".devcontainer/devcontainer.json:4:GPU072",
    ".devcontainer/gpu/devcontainer.json:4:GPU072",
  ]);
});
