/**
 * The target torch version (issue 21): `[tool.gpu-pilot] target-torch`, `gpuPilot.lint.targetTorch`,
 * `--target-torch`. It decides the facts that differ between versions (torch < 2.4:
 * `torch.cuda.device_count()` initialises CUDA) and wins over the pin in the dependency files.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../../support/helpers";
import { resolveLintOptions } from "../../../../server/src/engine/options";
import { loadProjectConfig, versionBelow } from "../../../../server/src/engine/config";
import { checkEditorSettings } from "../../../../common/src/lsp/protocol";

const CLI = join(ROOT, "scripts", "gpu-pilot.mjs");
const SRC = 'import os\nimport torch\n\nn = torch.cuda.device_count()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-target-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "train.py"), SRC);
  return dir;
}

test("versionBelow compares MAJOR.MINOR numerically", () => {
  assert.equal(versionBelow("2.3", 2, 4), true);
  assert.equal(versionBelow("2.11", 2, 4), false, "2.11 is not below 2.4");
  assert.equal(versionBelow("1.13.1", 2, 4), true);
  assert.equal(versionBelow("2.4.0", 2, 4), false);
  assert.throws(() => versionBelow("latest", 2, 4), /not a version/);
});

test("[tool.gpu-pilot] target-torch wins over the requirements pin, both ways", () => {
  const old = project({
    "pyproject.toml": '[tool.gpu-pilot]\ntarget-torch = "2.11"\n',
    "requirements.txt": "torch==2.1.0\n",
  });
  assert.equal(resolveLintOptions(join(old, "train.py"), {}).options.torchBelow24, false);
  const pinNew = project({
    "pyproject.toml": '[tool.gpu-pilot]\ntarget-torch = "2.3"\n',
    "requirements.txt": "torch>=2.6\n",
  });
  assert.equal(resolveLintOptions(join(pinNew, "train.py"), {}).options.torchBelow24, true);
  const pinOnly = project({ "requirements.txt": "torch==2.1.0\n" });
  assert.equal(
    resolveLintOptions(join(pinOnly, "train.py"), {}).options.torchBelow24,
    true,
    "without a target the pin decides",
  );
});

test("the flag wins over the editor setting, which wins over pyproject under editorFirst (pyproject under filesystemFirst)", () => {
  const dir = project({ "pyproject.toml": '[tool.gpu-pilot]\ntarget-torch = "2.3"\n' });
  const f = join(dir, "train.py");
  assert.equal(resolveLintOptions(f, { targetTorch: "2.11" }).options.torchBelow24, false);
  assert.equal(resolveLintOptions(f, { targetTorch: "2.11" }, "filesystemFirst").options.torchBelow24, true);
  assert.equal(
    resolveLintOptions(f, { targetTorch: "2.11" }, "filesystemFirst", { targetTorch: "2.11" }).options.torchBelow24,
    false,
  );
  assert.equal(resolveLintOptions(f, {}, "editorOnly").options.torchBelow24, false, "editorOnly ignores pyproject");
});

test("a bad target-torch is a configuration problem, and the key is known", () => {
  const dir = project({ "pyproject.toml": "[tool.gpu-pilot]\ntarget-torch = 2.3\n" });
  const { config, problems } = loadProjectConfig(join(dir, "pyproject.toml"));
  assert.equal(config?.targetTorch, undefined);
  assert.deepEqual(
    problems.map((p) => [p.line, p.message]),
    [[2, '[tool.gpu-pilot] target-torch must be a version string such as "2.11"']],
  );
});

test("gpuPilot.lint.targetTorch is checked by the protocol", () => {
  assert.deepEqual(checkEditorSettings({ targetTorch: "2.3" }).value, { targetTorch: "2.3" });
  assert.deepEqual(checkEditorSettings({ targetTorch: null }).value, { targetTorch: null });
  assert.deepEqual(checkEditorSettings({ targetTorch: "new" }).problems, [
    'targetTorch is not a version such as "2.11" or null',
  ]);
});

test("CLI --target-torch: 2.3 makes device_count() an initialising call (GPU001), 2.11 does not; a bad value is a usage error", () => {
  const dir = project({});
  const codes = (v: string) => {
    // --preview: GPU002 on a write that works today is a preview check.
    const r = spawnSync(
      process.execPath,
      [CLI, "check", "--preview", "--ignore", "GPU006", "--format", "json", "--target-torch", v, join(dir, "train.py")],
      { encoding: "utf8" },
    );
    return (JSON.parse(r.stdout) as Array<{ code: string }>).map((d) => d.code);
  };
  assert.deepEqual(codes("2.3"), ["GPU001"]);
  assert.deepEqual(codes("2.11"), ["GPU002"], "on torch 2.11 device_count() is lazy: the write is only fragile");
  const bad = spawnSync(process.execPath, [CLI, "check", "--target-torch", "abc", join(dir, "train.py")], {
    encoding: "utf8",
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--target-torch must be a version such as 2\.11, not "abc"/);
});

test("the project's own codes (GPU026 and up) are known to [tool.gpu-pilot]", () => {
  const dir = project({ "pyproject.toml": '[tool.gpu-pilot]\nignore = ["GPU026", "GPU099"]\n' });
  const { config, problems } = loadProjectConfig(join(dir, "pyproject.toml"));
  assert.deepEqual(config?.ignore, ["GPU026"]);
  assert.equal(problems.length, 1);
  assert.match(problems[0].message, /unknown rule code GPU099 \(codes are GPU001, .*GPU026/);
});
