#!/usr/bin/env node
// `npm run -s gpu-pilot -- check ...`: runs the CLI bundle, building it first when it is missing or
// older than the server sources (so a fresh clone works after `npm install`).
import { spawnSync } from "node:child_process";
import { statSync, readdirSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bundle = join(root, "dist", "cli.js");
const newest = (dir) => {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};
if (!existsSync(bundle) || statSync(bundle).mtimeMs < newest(join(root, "server", "src"))) {
  const b = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (b.status !== 0) { console.error("gpu-pilot: building the CLI failed"); process.exit(2); }
}
const r = spawnSync(process.execPath, [bundle, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(r.status ?? 2);
