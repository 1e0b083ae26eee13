// exclude.ts: `[tool.gpu-pilot] exclude`/`extend-exclude` (gitignore-style patterns relative to the
// pyproject.toml's folder, Ruff's meaning) and the `.gitignore` files of a git work tree.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_EXCLUDE, excludedBy, GitignoreFilter, MAX_PATTERNS } from "../../../../server/src/engine/exclude";
import { loadProjectConfig } from "../../../../server/src/engine/config";

const root = mkdtempSync(join(tmpdir(), "gp-exclude-"));
const at = (...p: string[]) => join(root, ...p);
const settings = (extra: { exclude?: string[]; extendExclude?: string[] }) => ({
  file: at("pyproject.toml"),
  ...extra,
});

test("without exclude the defaults leave out virtual environments and caches at any depth below the base, never above it", () => {
  for (const d of ["venv", ".venv", "node_modules", "__pycache__", "site-packages"]) {
    assert.ok(DEFAULT_EXCLUDE.includes(d), d);
    assert.equal(excludedBy(null, at("pkg", d), true, root), d);
    assert.equal(excludedBy(null, at("pkg", d, "lib", "x.py"), false, root), d, "everything below an excluded folder");
  }
  assert.equal(excludedBy(null, at("pkg", "train.py"), false, root), null);
  // A default such as `venv` above the base (the user's project lives in ~/venv/proj) excludes nothing.
  assert.equal(excludedBy(null, at("venv", "proj", "train.py"), false, at("venv", "proj")), null);
  // Outside the base, or no base: nothing is excluded.
  assert.equal(excludedBy(null, "/elsewhere/venv/x.py", false, root), null);
  assert.equal(excludedBy(null, at("venv", "x.py"), false, null), null);
});

test("extend-exclude adds to the defaults; exclude replaces them (Ruff's meaning); a slash anchors a pattern at the pyproject's folder", () => {
  const extend = settings({ extendExclude: ["third_party", "gen/*.py", "*_pb2.py"] });
  assert.equal(excludedBy(extend, at("third_party", "lib", "a.py"), false), "third_party");
  assert.equal(
    excludedBy(extend, at("src", "third_party"), true),
    "third_party",
    "a name without / matches at any depth",
  );
  assert.equal(excludedBy(extend, at("gen", "a.py"), false), "gen/*.py");
  assert.equal(excludedBy(extend, at("src", "gen", "a.py"), false), null, "gen/*.py is anchored at the root");
  assert.equal(excludedBy(extend, at("src", "model_pb2.py"), false), "*_pb2.py");
  assert.equal(excludedBy(extend, at("venv", "x.py"), false), "venv", "the defaults still hold");
  const replace = settings({ exclude: ["build/"] });
  assert.equal(excludedBy(replace, at("venv", "x.py"), false), null, "exclude replaces the defaults");
  assert.equal(excludedBy(replace, at("build"), true), "build/");
  assert.equal(excludedBy(replace, at("build"), false), null, "a trailing / matches folders only");
  const negated = settings({ extendExclude: ["scripts/", "!scripts/keep.py"] });
  assert.equal(excludedBy(negated, at("scripts", "x.py"), false), "scripts/");
  // git's rule, kept by the matcher: a file below an excluded folder cannot be re-included.
  assert.equal(excludedBy(negated, at("scripts", "keep.py"), false), "scripts/");
  // The pyproject's own folder and paths outside it are never excluded.
  assert.equal(excludedBy(extend, root, true), null);
  assert.equal(excludedBy(extend, "/elsewhere/third_party/a.py", false), null);
});

test("a pyproject's exclude lists are validated: a list of non-empty strings, at most MAX_PATTERNS used", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-exclude-config-"));
  const file = join(dir, "pyproject.toml");
  writeFileSync(
    file,
    '[tool.gpu-pilot]\nexclude = ["build", "third_party/"]\nextend-exclude = ["*_pb2.py"]\nrespect-gitignore = false\n',
  );
  const good = loadProjectConfig(file);
  assert.deepEqual(good.problems, []);
  assert.deepEqual(good.config?.exclude, ["build", "third_party/"]);
  assert.deepEqual(good.config?.extendExclude, ["*_pb2.py"]);
  assert.equal(good.config?.respectGitignore, false);
  writeFileSync(file, '[tool.gpu-pilot]\nexclude = "build"\nextend-exclude = ["", "x"]\nrespect-gitignore = "no"\n');
  const bad = loadProjectConfig(file);
  assert.deepEqual(
    bad.problems.map((p) => [p.line, p.message]),
    [
      [2, '[tool.gpu-pilot] exclude must be a list of path patterns such as ["third_party", "gen/*.py"]'],
      [3, '[tool.gpu-pilot] extend-exclude must be a list of path patterns such as ["third_party", "gen/*.py"]'],
      [4, "[tool.gpu-pilot] respect-gitignore must be true or false"],
    ],
  );
  assert.equal(bad.config?.exclude, undefined);
  const many = Array.from({ length: MAX_PATTERNS + 5 }, (_, i) => `"d${i}"`).join(", ");
  writeFileSync(file, `[tool.gpu-pilot]\nextend-exclude = [${many}]\n`);
  const big = loadProjectConfig(file);
  assert.equal(big.config?.extendExclude?.length, MAX_PATTERNS);
  assert.match(big.problems[0].message, /extend-exclude has 10,005 patterns; only the first 10,000 are used/);
});

test("GitignoreFilter: nested .gitignore files, deeper first (a deeper ! re-includes), .git/info/exclude; nothing outside a work tree", () => {
  const repo = mkdtempSync(join(tmpdir(), "gp-gitignore-"));
  execFileSync("git", ["init", "-q", repo]);
  mkdirSync(join(repo, "wandb", "run-1", "files"), { recursive: true });
  mkdirSync(join(repo, "src", "outputs"), { recursive: true });
  writeFileSync(join(repo, ".gitignore"), "# runs\nwandb/\n*.tmp.py\noutputs/\n");
  writeFileSync(join(repo, "src", ".gitignore"), "!keep.tmp.py\n");
  writeFileSync(join(repo, ".git", "info", "exclude"), "scratch_*.py\n");
  const g = new GitignoreFilter();
  assert.equal(g.ignoredBy(join(repo, "wandb"), true), "wandb/ (.gitignore or .git/info/exclude)");
  assert.equal(
    g.ignoredBy(join(repo, "wandb", "run-1", "files", "train.py"), false),
    "wandb/ (.gitignore or .git/info/exclude)",
  );
  assert.equal(g.ignoredBy(join(repo, "src", "outputs"), true), "outputs/ (.gitignore or .git/info/exclude)");
  assert.equal(g.ignoredBy(join(repo, "a.tmp.py"), false), "*.tmp.py (.gitignore or .git/info/exclude)");
  assert.equal(g.ignoredBy(join(repo, "src", "keep.tmp.py"), false), null, "src/.gitignore re-includes it");
  assert.equal(g.ignoredBy(join(repo, "scratch_1.py"), false), "scratch_*.py (.gitignore or .git/info/exclude)");
  assert.equal(g.ignoredBy(join(repo, "src", "train.py"), false), null);
  writeFileSync(join(repo, "src", ".gitignore"), "!keep.tmp.py\nlocal_*.py\n");
  assert.equal(new GitignoreFilter().ignoredBy(join(repo, "src", "local_1.py"), false), "local_*.py (src/.gitignore)");
  assert.equal(g.ignoredBy(join(repo, "outputs"), false), null, "outputs/ matches folders only");
  // The same files outside a work tree: nothing is ignored.
  const plain = mkdtempSync(join(tmpdir(), "gp-nogit-"));
  writeFileSync(join(plain, ".gitignore"), "*.py\n");
  assert.equal(new GitignoreFilter().ignoredBy(join(plain, "train.py"), false), null);
});

test("GitignoreFilter: a .gitignore that is a link to /dev/zero or a FIFO counts as empty, without hanging", () => {
  const repo = mkdtempSync(join(tmpdir(), "gp-gitignore-hostile-"));
  execFileSync("git", ["init", "-q", repo]);
  mkdirSync(join(repo, "a"));
  mkdirSync(join(repo, "b"));
  symlinkSync("/dev/zero", join(repo, "a", ".gitignore"));
  execFileSync("mkfifo", [join(repo, "b", ".gitignore")]);
  const g = new GitignoreFilter();
  assert.equal(g.ignoredBy(join(repo, "a", "x.py"), false), null);
  assert.equal(g.ignoredBy(join(repo, "b", "x.py"), false), null);
});
