#!/usr/bin/env node
// `npm test`: build, type-check, lint, unit + LSP + CLI + shared-case tests (node's test runner),
// then the end-to-end suite inside a real VS Code (code-server + headless Chromium).
// Ends with one line `N passed, N failed, N skipped` counting every test and check; each skipped test
// is listed above it with its reason (node:test `# SKIP`/`# TODO`, mocha's pending tests).
// GPU_PILOT_SKIP_E2E=1 skips the end-to-end stage (counted as one skipped check).
// `node scripts/test.mjs --list-unit` only prints the unit test files it would run (every *.test.ts
// below test/unit/, whose folders mirror the source tree: CONTRIBUTING.md, "Where the tests are")
// and their count, and runs nothing.
import { spawnSync } from "node:child_process";
import { readFileSync, existsSync, readdirSync, rmSync, mkdtempSync } from "node:fs";
import { join, dirname, relative } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);
let passed = 0,
  failed = 0,
  skipped = 0;
const failures = [];
/** "where: test title (reason)" of every skipped test. */
const skips = [];

function stage(name, cmd, args, opts = {}) {
  const t0 = Date.now();
  console.log(`\n=== ${name}: ${[cmd, ...args].join(" ")}`);
  const r = spawnSync(cmd, args, {
    stdio: opts.capture ? ["ignore", "pipe", "inherit"] : "inherit",
    encoding: "utf8",
    env: { ...process.env, ...(opts.env ?? {}) },
  });
  if (opts.capture) process.stdout.write(r.stdout ?? "");
  console.log(`=== ${name}: exit ${r.status} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return r;
}

function check(name, cmd, args) {
  const r = stage(name, cmd, args);
  if (r.status === 0) passed++;
  else {
    failed++;
    failures.push(name);
  }
}

/** Adds an e2e results file's skipped (mocha: pending) tests to the count, with their titles. */
function countPending(where, results) {
  const pending = (results.tests ?? []).filter((t) => t.state === "pending" || t.state === "skipped");
  skipped += pending.length;
  for (const t of pending) {
    const why = t.reason ?? t.error;
    skips.push(`${where}: ${t.title}${why ? ` (${why})` : ""}`);
  }
}

const unitFiles = () => {
  const out = [];
  const walk = (d) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, n.name);
      if (n.isDirectory()) walk(p);
      else if (n.name.endsWith(".test.ts")) out.push(p);
    }
  };
  walk(join(root, "test", "unit"));
  return out.sort();
};

if (process.argv.includes("--list-unit")) {
  const files = unitFiles();
  for (const f of files) console.log(relative(root, f));
  console.log(`${files.length} unit test files`);
  process.exit(0);
}

// The CLI's result cache (server/src/cliCache.ts) of every `gpu-pilot check` the tests run goes to
// a folder of this run, not to the user's ~/.cache, and goes with it.
const cacheDir = process.env.GPU_PILOT_CACHE_DIR ? null : mkdtempSync(join(tmpdir(), "gpu-pilot-test-cache-"));
if (cacheDir) {
  process.env.GPU_PILOT_CACHE_DIR = cacheDir;
  process.on("exit", () => rmSync(cacheDir, { recursive: true, force: true }));
}

rmSync(join(root, "dist"), { recursive: true, force: true });
check("build", process.execPath, ["esbuild.mjs"]);
check("typecheck", process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", ".", "--noEmit"]);
check("lint", process.execPath, [
  join(root, "node_modules", "eslint", "bin", "eslint.js"),
  "--max-warnings=0",
  "common",
  "client",
  "server",
  "test",
  "scripts",
  "bench",
]);
// The formatter, as `npm run lint` runs it (Prettier's check: a file it would change fails).
check("format", process.execPath, [
  join(root, "node_modules", "prettier", "bin", "prettier.cjs"),
  "--check",
  "--log-level",
  "warn",
  "{common,client,server,test,scripts,bench}/**/*.{ts,mts,cts,mjs,cjs,js}",
  "package.json",
  ".prettierrc.json",
]);

const unit = stage("unit", process.execPath, [
  "--import",
  "tsx",
  "--test",
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=tap",
  "--test-reporter-destination=.test-unit.tap",
  ...unitFiles(),
]);
try {
  const tap = readFileSync(join(root, ".test-unit.tap"), "utf8");
  const p = Number(/^# pass (\d+)/m.exec(tap)?.[1] ?? 0);
  const f = Number(/^# fail (\d+)/m.exec(tap)?.[1] ?? 0);
  passed += p;
  failed += f;
  // node:test counts `{ skip }` and `{ todo }` tests apart from pass/fail: `ok N - title # SKIP reason`.
  const s = Number(/^# skipped (\d+)/m.exec(tap)?.[1] ?? 0) + Number(/^# todo (\d+)/m.exec(tap)?.[1] ?? 0);
  skipped += s;
  for (const m of tap.matchAll(/^\s*(?:not )?ok \d+ - (.*?) # (SKIP|TODO)\b ?(.*)$/gm))
    skips.push(`unit: ${m[1]} (${m[3] || m[2].toLowerCase()})`);
  if (skips.length < s) skips.push(`unit: ${s - skips.length} more without a readable reason`);
  if (f || unit.status !== 0) failures.push(`unit (${f} failed, exit ${unit.status})`);
  if (unit.status !== 0 && f === 0) failed++;
  rmSync(join(root, ".test-unit.tap"), { force: true });
} catch {
  failed++;
  failures.push("unit (no report)");
}

if (process.env.GPU_PILOT_SKIP_E2E === "1") {
  console.log("\n=== e2e: skipped (GPU_PILOT_SKIP_E2E=1)");
  skipped++;
  skips.push("e2e: the real-VS-Code stages (GPU_PILOT_SKIP_E2E=1)");
} else {
  const resultsFile = join(root, ".e2e-run", "results.json");
  rmSync(resultsFile, { force: true });
  const e2e = stage("e2e (real VS Code: code-server + headless Chromium)", process.execPath, [
    join(root, "test", "e2e", "run.mjs"),
  ]);
  if (existsSync(resultsFile)) {
    const r = JSON.parse(readFileSync(resultsFile, "utf8"));
    passed += r.passed ?? 0;
    failed += r.failed ?? 0;
    countPending("e2e", r);
    if (r.failed || e2e.status !== 0) failures.push(`e2e (${r.failed} failed, exit ${e2e.status})`);
    if (e2e.status !== 0 && !r.failed) failed++;
  } else {
    failed++;
    failures.push(`e2e (no results, exit ${e2e.status})`);
  }
  // The packaged .vsix, installed into code-server (no development path), activates and works.
  const vsixFile = join(root, ".e2e-run", "vsix-results.json");
  rmSync(vsixFile, { force: true });
  const vs = stage("e2e: the .vsix installed in code-server", process.execPath, [
    join(root, "test", "e2e", "vsix.mjs"),
  ]);
  const vr = existsSync(vsixFile) ? JSON.parse(readFileSync(vsixFile, "utf8")) : { passed: 0, failed: 1 };
  passed += vr.passed ?? 0;
  countPending("vsix e2e", vr);
  failed += (vr.failed ?? 0) + (vs.status !== 0 && !vr.failed ? 1 : 0);
  if (vr.failed || vs.status !== 0) failures.push(`vsix e2e (${vr.failed} failed, exit ${vs.status})`);
}

console.log("");
if (skips.length) console.log(`skipped:\n  ${skips.join("\n  ")}`);
if (failures.length) console.log(`failed: ${failures.join("; ")}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
