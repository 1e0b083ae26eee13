// Paths and links of the CLI (issue 43 item 4): `npm run gpu-pilot -- check PATH` takes PATH from the
// caller's folder (npm's INIT_CWD), and the rule links in JSON and SARIF are pages anyone can open
// (the repository's docs/rules/GPUnnn.md, from package.json), never file:// URLs into a local clone.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import nodeModule from "node:module";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../support/helpers";
import { ruleDocsWebUrl } from "../../../server/src/docsUrl";

const CLI = join(ROOT, "dist", "cli.js");
const BAD = 'import os\nimport torch\nprint(torch.cuda.is_available())\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- package.json is untyped JSON */
const pkg: any = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

before(() => {
  if (!existsSync(CLI))
    spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit", timeout: 120_000 });
});

test("ruleDocsWebUrl: the rule's page on the repository's forge, from every form of package.json's repository and homepage; null without one", () => {
  const gh = "https://github.com/acme/gpu-pilot/blob/HEAD/docs/rules/GPU001.md";
  for (const repository of [
    "https://github.com/acme/gpu-pilot",
    "git+https://github.com/acme/gpu-pilot.git",
    "git@github.com:acme/gpu-pilot.git",
    "github:acme/gpu-pilot",
    "acme/gpu-pilot",
    { type: "git", url: "git+ssh://git@github.com/acme/gpu-pilot.git" },
  ]) {
    assert.equal(ruleDocsWebUrl("GPU001", { repository }), gh, JSON.stringify(repository));
  }
  assert.equal(
    ruleDocsWebUrl("GPU007", {
      repository: { url: "https://github.com/acme/tools.git", directory: "packages/gpu-pilot" },
    }),
    "https://github.com/acme/tools/blob/HEAD/packages/gpu-pilot/docs/rules/GPU007.md",
  );
  assert.equal(
    ruleDocsWebUrl("GPU001", { repository: "https://gitlab.com/lab/ml/gpu-pilot.git" }),
    "https://gitlab.com/lab/ml/gpu-pilot/-/blob/HEAD/docs/rules/GPU001.md",
  );
  assert.equal(
    ruleDocsWebUrl("GPU001", { repository: "gitlab:lab/gpu-pilot" }),
    "https://gitlab.com/lab/gpu-pilot/-/blob/HEAD/docs/rules/GPU001.md",
  );
  assert.equal(ruleDocsWebUrl("GPU001", { homepage: "https://github.com/acme/gpu-pilot#readme" }), gh);
  assert.equal(
    ruleDocsWebUrl("GPU001", { homepage: "https://gpu-pilot.example.org/" }),
    "https://gpu-pilot.example.org/docs/rules/GPU001.md",
  );
  // Nothing to link to: no field, a local path, a file URL, a rule code without a page.
  assert.equal(ruleDocsWebUrl("GPU001", {}), null);
  assert.equal(ruleDocsWebUrl("GPU001", { repository: "file:../gpu-pilot" }), null);
  assert.equal(ruleDocsWebUrl("GPU001", { homepage: "file:///home/me/gpu-pilot" }), null);
  assert.equal(ruleDocsWebUrl("GPU000", { repository: "acme/gpu-pilot" }), null);
});

test("JSON url and SARIF helpUri are the repository's page of the rule (package.json), never a file:// URL into this clone", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-links-"));
  writeFileSync(join(dir, "bad.py"), BAD);
  const expected = ruleDocsWebUrl("GPU001", { repository: pkg.repository, homepage: pkg.homepage });
  const json = spawnSync(process.execPath, [CLI, "check", "--no-cache", "--format", "json", "bad.py"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(json.status, 1, json.stderr);
  const [d] = JSON.parse(json.stdout) as Array<{ code: string; url: string | null }>;
  assert.equal(d.code, "GPU001");
  assert.equal(d.url, expected);
  const sarif = spawnSync(process.execPath, [CLI, "check", "--no-cache", "--format", "sarif", "bad.py"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  const rules = JSON.parse(sarif.stdout).runs[0].tool.driver.rules as Array<{ id: string; helpUri?: string }>;
  assert.equal(rules.find((r) => r.id === "GPU001")?.helpUri, expected ?? undefined);
  assert.doesNotMatch(json.stdout + sarif.stdout, /file:\/\//);
});

test("npm run gpu-pilot -- check PATH: PATH is taken from the caller's folder (INIT_CWD), only for this package's own script", () => {
  // The launcher in a package of its own (no esbuild.mjs: it runs the built dist/, never builds).
  const pkgDir = mkdtempSync(join(tmpdir(), "gp-initcwd-pkg-"));
  mkdirSync(join(pkgDir, "scripts"));
  copyFileSync(join(ROOT, "scripts", "gpu-pilot.mjs"), join(pkgDir, "scripts", "gpu-pilot.mjs"));
  symlinkSync(join(ROOT, "dist"), join(pkgDir, "dist"), "dir");
  const caller = mkdtempSync(join(tmpdir(), "gp-initcwd-caller-"));
  mkdirSync(join(caller, "src"));
  writeFileSync(join(caller, "src", "bad.py"), BAD);
  const npmEnv = (name: string) => ({
    ...process.env,
    INIT_CWD: caller,
    npm_lifecycle_event: "gpu-pilot",
    npm_package_name: name,
  });
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [join(pkgDir, "scripts", "gpu-pilot.mjs"), "check", "--no-cache", "src"], {
      cwd: pkgDir,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
  const own = run(npmEnv("gpu-pilot"));
  assert.equal(own.status, 1, own.stdout + own.stderr);
  assert.match(own.stdout, /^src\/bad\.py:4:1: error GPU001 /m);
  // Another project's script named gpu-pilot means paths from that project's root, where npm runs it.
  const other = run(npmEnv("someone-elses-project"));
  assert.equal(other.status, 2);
  assert.match(other.stderr, /no such file or folder: src/);
});

test("the gpu-pilot bin runs the bundle in its own process, with Node.js's compile cache in the user's cache folder", () => {
  const cacheHome = mkdtempSync(join(tmpdir(), "gp-xdg-cache-"));
  const caller = mkdtempSync(join(tmpdir(), "gp-bin-caller-"));
  writeFileSync(join(caller, "bad.py"), BAD);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cacheHome };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  const run = () =>
    spawnSync(process.execPath, [join(ROOT, "scripts", "gpu-pilot.mjs"), "check", "--no-cache", "bad.py"], {
      cwd: caller,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
  for (const r of [run(), run()]) {
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^bad\.py:4:1: error GPU001 /m);
  }
  // Node.js 22.1+ (the pinned 24 here) writes its cache there; older ones run without it.
  const cacheDir = join(cacheHome, "gpu-pilot", "node-compile-cache");
  if (typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === "function")
    assert.ok(existsSync(cacheDir) && readdirSync(cacheDir).length > 0, `no compile cache in ${cacheDir}`);
  // One process: the bin's own pid is the one that checks (the bundle does not start another Node.js).
  const probe = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(
        'import cp from "node:child_process"; import { syncBuiltinESMExports } from "node:module"; const s = cp.spawnSync; cp.spawnSync = (cmd, args, ...rest) => { if (String(args?.[0]).endsWith("cli.js")) process.stderr.write("SECOND-NODE\\n"); return s(cmd, args, ...rest); }; syncBuiltinESMExports();',
      )}`,
      join(ROOT, "scripts", "gpu-pilot.mjs"),
      "check",
      "--no-cache",
      "bad.py",
    ],
    { cwd: caller, env, encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(probe.status, 1, probe.stdout + probe.stderr);
  assert.doesNotMatch(probe.stderr, /SECOND-NODE/);
});
