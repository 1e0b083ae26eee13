// The npm package (issue 43 item 1): what `npm pack` makes and `npm install -g` / `npm exec` install,
// the way a user, CI or pre-commit's `language: node` gets the `gpu-pilot` CLI. The package is packed
// from a copy of the repository (as pre-commit packs its clone; never the shared dist/, which other
// tests read while this runs), then installed from the tarball into a fresh prefix inside a folder
// named node_modules (an installed package's build once took every project file for a dependency
// there, and crashed on its first run), offline, with a cache of its own: it must install no
// dependency, run no script and work on its first run.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, sep } from "node:path";
import { parse as parseYaml } from "yaml";
import { ROOT } from "../support/helpers";

/** The top-level entries of the repository that the copy leaves out (not needed to pack; large). */
const LEFT_OUT = new Set([
  "node_modules",
  ".git",
  "dist",
  "test",
  "bench",
  "verify",
  "media",
  ".e2e-tools",
  ".e2e-run",
  "out",
  ".cache",
]);
/** Every file the package holds (npm adds package.json, README.md and LICENSE itself). */
const PACKAGE_FILES = [
  "LICENSE",
  "README.md",
  "dist/cli.js",
  "dist/tree-sitter-python.wasm",
  "dist/tree-sitter.wasm",
  "package.json",
  "scripts/gpu-pilot.mjs",
];
const BAD = 'import os\nimport torch\nprint(torch.cuda.is_available())\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
const CLEAN = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\nprint(torch.cuda.is_available())\n';

let dir = "";
/** The environment of every npm and gpu-pilot run here: this Node first on PATH, caches inside `dir`. */
let env: NodeJS.ProcessEnv = {};
let npmMissing: string | undefined;

/** Runs `cmd` with a deadline and an output cap; the result, with stdout and stderr as text. */
function run(cmd: string, args: string[], cwd: string, timeout = 180_000): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout, maxBuffer: 16 * 1024 * 1024 });
}
const show = (r: SpawnSyncReturns<string>) =>
  `exit ${r.status}${r.error ? ` (${r.error.message})` : ""}\n${r.stdout}\n${r.stderr}`.slice(-4000);

/** The files below `d`, as paths relative to it with "/". */
function filesBelow(d: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const q = join(p, e.name);
      if (e.isDirectory()) walk(q);
      else out.push(relative(d, q).split(sep).join("/"));
    }
  };
  walk(d);
  return out.sort();
}

let tarball = "";
let packStdout = "";
before(() => {
  dir = mkdtempSync(join(tmpdir(), "gpu-pilot-npm-"));
  env = {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
    npm_config_cache: join(dir, "npm-cache"),
    npm_config_update_notifier: "false",
    GPU_PILOT_CACHE_DIR: join(dir, "gpu-pilot-cache"),
  };
  for (const k of Object.keys(env)) if (/^npm_(lifecycle|package)_|^INIT_CWD$/.test(k)) delete env[k];
  const v = run("npm", ["--version"], dir, 30_000);
  if (v.status !== 0) {
    npmMissing = `npm cannot be run here (${show(v).trim().split("\n")[0]})`;
    return;
  }
  // A copy of the repository, as a clone has it (node_modules linked: the build's dependencies).
  // Inside a folder named node_modules, as an installed clone is: the build must still tell the
  // project's files from its dependencies.
  const clone = join(dir, "node_modules", "clone");
  cpSync(ROOT, clone, {
    recursive: true,
    filter: (src) => {
      const rel = relative(ROOT, src);
      return rel === "" || (!LEFT_OUT.has(rel.split(sep)[0]) && !rel.endsWith(".vsix"));
    },
  });
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"), "dir");
  const packed = run("npm", ["pack", "--pack-destination", dir], clone, 300_000);
  assert.equal(packed.status, 0, show(packed));
  packStdout = packed.stdout;
  tarball = join(dir, packed.stdout.trim().split("\n").pop() ?? "");
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("npm pack prints only the tarball's name on stdout (pre-commit takes the whole of it as the file name), the prepack build's output hidden", (t) => {
  if (npmMissing) return t.skip(npmMissing);
  assert.match(packStdout, /^gpu-pilot-0\.1\.0\.tgz\n$/);
  assert.ok(existsSync(tarball));
});

test("the package installed from the tarball into a fresh prefix under node_modules: only its own files, no dependency, and the CLI works on its first and second run", (t) => {
  if (npmMissing) return t.skip(npmMissing);
  const prefix = join(dir, "node_modules", "tools");
  mkdirSync(prefix, { recursive: true });
  // Offline, with an empty cache: a package that needed a dependency from the registry fails here.
  const inst = run(
    "npm",
    ["install", "--global", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", tarball],
    dir,
  );
  assert.equal(inst.status, 0, show(inst));
  const installed = join(prefix, "lib", "node_modules", "gpu-pilot");
  assert.deepEqual(filesBelow(installed), PACKAGE_FILES);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
    dependencies?: object;
    scripts?: Record<string, string>;
  };
  assert.equal(manifest.dependencies, undefined);
  for (const s of ["preinstall", "install", "postinstall", "prepare"])
    assert.equal(manifest.scripts?.[s], undefined, `an install script (${s}) would need a shell at install`);
  // Minified, with every dependency bundled in.
  assert.ok(
    Math.max(
      ...readFileSync(join(installed, "dist", "cli.js"), "utf8")
        .split("\n")
        .map((l) => l.length),
    ) > 50_000,
    "dist/cli.js is not the minified build",
  );
  const bin = join(prefix, "bin", "gpu-pilot");
  assert.ok(statSync(bin).mode & 0o111, "the bin is not executable");
  const work = join(dir, "node_modules", "project");
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "bad.py"), BAD);
  writeFileSync(join(work, "clean.py"), CLEAN);
  for (const round of ["first", "second"]) {
    const bad = run(bin, ["check", "--format", "json", "bad.py"], work, 60_000);
    assert.equal(bad.status, 1, `${round} run: ${show(bad)}`);
    const found = JSON.parse(bad.stdout) as Array<{ code: string; filename: string }>;
    assert.deepEqual(
      found.map((d) => d.code),
      ["GPU001"],
      `${round} run`,
    );
    assert.equal(bad.stderr, "", `${round} run`);
    const clean = run(bin, ["check", "clean.py"], work, 60_000);
    assert.equal(clean.status, 0, `${round} run: ${show(clean)}`);
    assert.equal(clean.stdout, "All checks passed!\n");
  }
  // `gpu-pilot rule`: the rule's page from the bundle (the package has no docs folder).
  const rule = run(bin, ["rule", "GPU001"], work, 60_000);
  assert.equal(rule.status, 0, show(rule));
  assert.match(rule.stdout, /^# GPU001: [a-z-]+\n\n- \*\*Severity:\*\* error\n/);
  assert.match(rule.stdout, /\n## References\n/);
  // `gpu-pilot kernel` (its code and execa's, in dist/cli.js, run for that command: it asks the interpreter).
  const kernel = run(bin, ["kernel", "install", "--python", join(dir, "no-python")], work, 60_000);
  assert.equal(kernel.status, 1, show(kernel));
  assert.match(kernel.stderr, /^gpu-pilot kernel: Cannot start .*no-python/);
  // `gpu-pilot mcp` (the MCP server, in dist/cli.js too): initialize and tools/list over stdio, then
  // stdin closes and it exits 0.
  const mcp = spawnSync(bin, ["mcp", "--nvidia-smi", join(dir, "no-nvidia-smi")], {
    cwd: work,
    env,
    encoding: "utf8",
    timeout: 60_000,
    input: [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]
      .map((m) => JSON.stringify(m) + "\n")
      .join(""),
  });
  assert.equal(mcp.status, 0, show(mcp));
  const answers = mcp.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result?: { tools?: { name: string }[] } });
  assert.deepEqual(
    answers.find((a) => a.id === 2)?.result?.tools?.map((t) => t.name),
    ["gpu-pilot_listGpus", "gpu-pilot_pickGpus", "gpu-pilot_checkFile", "gpu-pilot_runOnGpus"],
    show(mcp),
  );
  // Nothing was built in the installed package (no dist/.build.lock, no new file).
  assert.deepEqual(filesBelow(installed), PACKAGE_FILES);
});

test("npm exec runs the CLI from the tarball (npx --package), in a project under node_modules", (t) => {
  if (npmMissing) return t.skip(npmMissing);
  const work = join(dir, "node_modules", "npx-project");
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "bad.py"), BAD);
  writeFileSync(join(work, "clean.py"), CLEAN);
  const bad = run(
    "npm",
    ["exec", "--yes", "--offline", "--package", tarball, "--", "gpu-pilot", "check", "bad.py"],
    work,
  );
  assert.equal(bad.status, 1, show(bad));
  assert.match(bad.stdout, /^bad\.py:4:1: error GPU001 /m);
  const clean = run(
    "npm",
    ["exec", "--yes", "--offline", "--package", tarball, "--", "gpu-pilot", "check", "clean.py"],
    work,
  );
  assert.equal(clean.status, 0, show(clean));
});

/**
 * pre-commit (Debian's `pre-commit`, when installed) runs the hook as .pre-commit-hooks.yaml defines it
 * (entry, files, language) on commits of a temporary git repository. The hook is a `repo: local` one
 * with the packed tarball as its `additional_dependencies` and `language_version: system` (this Node
 * 24): the remote form installs from a clone with `npm install` (the registry) and downloads the
 * pinned Node with nodeenv, neither of which works offline. npm runs offline here.
 */
test("pre-commit: a commit with a finding in a staged Python file or Dockerfile fails and shows it; the fixed files commit; pyproject.toml is not linted", (t) => {
  if (npmMissing) return t.skip(npmMissing);
  const pc = run("pre-commit", ["--version"], dir, 30_000);
  if (pc.status !== 0)
    return t.skip(`pre-commit is not installed (apt-get install pre-commit): ${pc.error?.message ?? pc.stderr.trim()}`);
  const git = run("git", ["--version"], dir, 30_000);
  if (git.status !== 0) return t.skip("git is not installed");
  const hooks = JSON.parse(
    JSON.stringify(parseYaml(readFileSync(join(ROOT, ".pre-commit-hooks.yaml"), "utf8"))),
  ) as Array<Record<string, unknown>>;
  const hook = hooks.find((h) => h.id === "gpu-pilot");
  assert.ok(hook);
  const repo = join(dir, "precommit-repo");
  mkdirSync(repo);
  const config = {
    repos: [
      {
        repo: "local",
        hooks: [
          {
            ...hook,
            minimum_pre_commit_version: undefined,
            language_version: "system",
            additional_dependencies: [tarball],
          },
        ],
      },
    ],
  };
  writeFileSync(join(repo, ".pre-commit-config.yaml"), JSON.stringify(config, null, 2)); // JSON is YAML
  const pcEnv = {
    PRE_COMMIT_HOME: join(dir, "pre-commit-home"),
    npm_config_offline: "true",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.invalid",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.invalid",
  };
  const saved = env;
  env = { ...env, ...pcEnv };
  try {
    const g = (...args: string[]) => {
      const r = run("git", args, repo, 60_000);
      assert.equal(r.status, 0, show(r));
    };
    g("init", "-q");
    g("add", ".pre-commit-config.yaml");
    g("commit", "-q", "-m", "config");
    const inst = run("pre-commit", ["install"], repo, 60_000);
    assert.equal(inst.status, 0, show(inst));
    mkdirSync(join(repo, "docker"));
    writeFileSync(join(repo, "train.py"), BAD);
    writeFileSync(
      join(repo, "docker", "Dockerfile.gpu"),
      'FROM pytorch/pytorch:latest\nENV CUDA_VISIBLE_DEVICES=1\nCMD ["python", "train.py"]\n',
    );
    writeFileSync(
      join(repo, "pyproject.toml"),
      '[project]\nname = "x"\n\n[tool.gpu-pilot]\nselect = ["GPU0"]\nextend-exclude = ["third_party"]\n',
    );
    // A vendored file the project excludes: pre-commit names it, the hook's --force-exclude leaves it out.
    mkdirSync(join(repo, "third_party"));
    writeFileSync(join(repo, "third_party", "vendored.py"), BAD);
    g("add", "train.py", "docker/Dockerfile.gpu", "pyproject.toml", "third_party/vendored.py");
    const failed = run("git", ["commit", "-m", "bad"], repo, 300_000);
    assert.equal(failed.status, 1, show(failed));
    const out = failed.stdout + failed.stderr;
    assert.match(out, /^train\.py:4:1: error GPU001 /m, out);
    assert.match(out, /^docker\/Dockerfile\.gpu:2:5: warning GPU019 /m, out);
    assert.doesNotMatch(out, /pyproject\.toml:\d/, out);
    assert.doesNotMatch(out, /third_party/, out);
    writeFileSync(join(repo, "train.py"), CLEAN);
    writeFileSync(join(repo, "docker", "Dockerfile.gpu"), 'FROM pytorch/pytorch:latest\nCMD ["python", "train.py"]\n');
    g("add", "train.py", "docker/Dockerfile.gpu");
    const passed = run("git", ["commit", "-m", "fixed"], repo, 300_000);
    assert.equal(passed.status, 0, show(passed));
    assert.match(passed.stdout + passed.stderr, /GPU Pilot\.+Passed/);
  } finally {
    env = saved;
  }
});
