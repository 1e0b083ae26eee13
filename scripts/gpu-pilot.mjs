#!/usr/bin/env node
// `npm run -s gpu-pilot -- check ...` and the `gpu-pilot` bin of package.json: runs the CLI bundle.
//
// An installed package (`npm install -g` of the tarball, pre-commit's `language: node`, see
// .pre-commit-hooks.yaml) carries dist/cli.js, built by `prepack` (.npmignore), and no sources or
// esbuild.mjs: it is run as it is, never built. In a clone (esbuild.mjs beside the sources) the bundle
// is built first when it is missing or older than the sources, so a fresh clone works after
// `npm install`; several processes at once (`npm run gpu-pilot` in parallel) build once, under
// dist/.build.lock, and the others wait for it (the bundle exists only while or after the lock is held).
import { spawnSync } from "node:child_process";
import {
  statSync,
  readdirSync,
  existsSync,
  mkdirSync,
  openSync,
  writeSync,
  closeSync,
  rmSync,
  readFileSync,
  realpathSync,
} from "node:fs";
import { join, dirname } from "node:path";
import { homedir } from "node:os";
import module, { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bundle = join(root, "dist", "cli.js");
/** A clone (sources and build script present), not an installed package. */
const clone = existsSync(join(root, "esbuild.mjs"));
const lock = join(root, "dist", ".build.lock");
const sources = [join(root, "server", "src"), join(root, "client", "src"), join(root, "common", "src")];
const newest = (dir) => {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};
const stale = () => !existsSync(bundle) || statSync(bundle).mtimeMs < Math.max(...sources.map(newest));
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const lockHolderAlive = () => {
  try {
    process.kill(Number(readFileSync(lock, "utf8")), 0);
    return true;
  } catch (e) {
    return e.code === "EPERM" || e.code === "EISDIR";
  }
};

/** Builds dist/ under the lock; returns false when the build failed. */
function build() {
  mkdirSync(dirname(lock), { recursive: true });
  for (let waited = 0; ; waited += 100) {
    let fd;
    try {
      fd = openSync(lock, "wx");
    } catch {
      // Another process is building: wait for it (or take over a lock whose process is gone).
      if (waited > 120_000 || (waited > 2_000 && !lockHolderAlive())) rmSync(lock, { force: true });
      sleep(100);
      if (!existsSync(lock) && !stale()) return true;
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (!stale()) return true;
      const b = spawnSync(process.execPath, [join(root, "esbuild.mjs")], {
        cwd: root,
        stdio: ["ignore", "ignore", "inherit"],
        timeout: 300_000,
      });
      return b.status === 0;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

if (!clone && !existsSync(bundle)) {
  console.error(
    `gpu-pilot: ${bundle} is missing: this package was packed without its prepack build (npm pack --ignore-scripts?); pack it again with \`npm pack\``,
  );
  process.exit(2);
}
if (clone && (stale() || existsSync(lock)) && !build()) {
  console.error("gpu-pilot: building the CLI failed");
  process.exit(2);
}
/**
 * The folder the user ran the command from. `npm run gpu-pilot -- check dir` runs this script from the
 * package root, and npm keeps the caller's folder in INIT_CWD: paths on the command line, the
 * messages and the reports are relative to it. Only for this package's own script (a project whose
 * npm script calls an installed gpu-pilot means paths from its own root, where npm runs it).
 */
function callerCwd() {
  const init = process.env.INIT_CWD;
  if (!init || process.env.npm_lifecycle_event !== "gpu-pilot" || process.env.npm_package_name !== "gpu-pilot")
    return process.cwd();
  try {
    return realpathSync(process.cwd()) === realpathSync(root) && statSync(init).isDirectory() ? init : process.cwd();
  } catch {
    return process.cwd();
  }
}
/**
 * Where Node.js keeps the compiled code of the bundle between runs (module.enableCompileCache, Node.js
 * 22.1 and later; Node.js checks each entry against the file's contents): the user's own cache folder,
 * not the shared temporary folder Node.js picks by default, where another user could plant entries.
 * NODE_COMPILE_CACHE chooses another folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node.js's own).
 */
function compileCacheDir() {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return process.env.NODE_COMPILE_CACHE || join(base, "gpu-pilot", "node-compile-cache");
}

// The bundle runs in this process (a second Node.js process for it cost about 40 ms of CPU a run,
// and more for every pre-commit batch): from the caller's folder, with the compile cache on.
try {
  module.enableCompileCache?.(compileCacheDir());
} catch {
  // No cache (an unwritable home, an older Node.js): the bundle is compiled as before.
}
process.chdir(callerCwd());
createRequire(import.meta.url)(bundle).runAsCommand(process.argv.slice(2));
