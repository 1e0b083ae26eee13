#!/usr/bin/env node
// `npm run -s gpu-pilot -- check ...` and the `gpu-pilot` bin of package.json: runs the CLI bundle,
// building it first when it is missing or older than the sources (so a fresh clone works after
// `npm install`).
//
// An installed package (`npm install -g`, pre-commit's `language: node`, see .pre-commit-hooks.yaml)
// carries the sources and esbuild (.npmignore) but no build: the first run builds dist/ there. No npm
// lifecycle script does it, because pre-commit reads `npm pack`'s output and npm 11 skips the
// scripts of git dependencies. pre-commit runs several hook processes at once, so one builds under
// dist/.build.lock and the others wait for it (the bundle exists only while or after the lock is held).
import { spawnSync } from "node:child_process";
import { statSync, readdirSync, existsSync, mkdirSync, openSync, writeSync, closeSync, rmSync, readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bundle = join(root, "dist", "cli.js");
const lock = join(root, "dist", ".build.lock");
const sources = [join(root, "server", "src"), join(root, "client", "src")];
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
      const b = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
      return b.status === 0;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

if ((stale() || existsSync(lock)) && !build()) {
  console.error("gpu-pilot: building the CLI failed");
  process.exit(2);
}
const r = spawnSync(process.execPath, [bundle, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(r.status ?? 2);
