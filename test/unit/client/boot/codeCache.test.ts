// The extension's main loads dist/client.js with a V8 code cache of its own (client/src/boot/codeCache.ts):
// the cache is written once, used on the next load, compiled past when it is stale, corrupt or not
// this user's alone, and never blocks or fails a load.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildSync } from "esbuild";
import { codeCacheDir, loadWithCodeCache } from "../../../../client/src/boot/codeCache";
import { ROOT } from "../../support/root";

// V8 keeps what a process compiled by its source, so a second load in this process never reads
// the cache file: each load that must see the file runs in a fresh Node.js process, through the
// loader compiled to plain JavaScript.
const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const loader = join(mkdtempSync(join(tmpdir(), "gp-code-cache-loader-")), "codeCache.cjs");
made.push(dirname(loader));
buildSync({
  entryPoints: [join(ROOT, "client", "src", "boot", "codeCache.ts")],
  outfile: loader,
  bundle: true,
  platform: "node",
  format: "cjs",
  logLevel: "error",
});
/** Loads `bundle` in a fresh process (writing the cache when it was not used): its state, refusal and activate(21). */
function freshLoad(bundle: string, dir: string): { state: string; refused?: string; value: number } {
  const script = `const l = require(${JSON.stringify(loader)}).loadWithCodeCache(${JSON.stringify(bundle)}, ${JSON.stringify(dir)}, { writeAfterMs: -1 });
l.writeNow();
console.log(JSON.stringify({ state: l.state, refused: l.refused, value: l.exports.activate(21) }));`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000 })) as {
    state: string;
    refused?: string;
    value: number;
  };
}

/** A bundle folder with a CommonJS bundle that requires a file beside it, and an empty cache folder. */
function setup(body = "") {
  const root = mkdtempSync(join(tmpdir(), "gp-code-cache-"));
  made.push(root);
  const dist = join(root, "dist");
  mkdirSync(dist);
  writeFileSync(join(dist, "helper.js"), "exports.twice = (n) => 2 * n;\n");
  const bundle = join(dist, "client.js");
  writeFileSync(
    bundle,
    `"use strict";\nconst h = require("./helper.js");\n${body}\nexports.activate = (n) => h.twice(n);\nexports.where = [__filename, __dirname];\nexports.same = module.exports === exports;\n`,
  );
  return { root, bundle, dist, dir: join(root, "cache", "gpu-pilot", "code-cache") };
}
const NO_TIMER = { writeAfterMs: -1 };
const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".cache")) : []);

test("first load compiles and writes the cache (0600 in a 0700 folder); the next load uses it; the bundle runs as require would run it", () => {
  const { bundle, dist, dir } = setup();
  const first = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(first.state, "absent");
  assert.equal(first.refused, undefined);
  const exp = first.exports as { activate(n: number): number; where: string[]; same: boolean };
  assert.equal(exp.activate(21), 42);
  assert.deepEqual(exp.where, [bundle, dist]);
  assert.equal(exp.same, true);
  assert.equal(first.writeNow(), true);
  assert.equal(first.writeNow(), false, "written once");
  const [file] = cacheFiles(dir);
  assert.match(file, /^client\.js-\d+-\d+-v8-.+\.cache$/);
  assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  const before = statSync(join(dir, file)).mtimeMs;
  assert.deepEqual(freshLoad(bundle, dir), { state: "used", value: 42 });
  assert.equal(statSync(join(dir, file)).mtimeMs, before, "a used cache is not written again");
});

test("capture() takes the code compiled so far and the later write writes that: functions first run after it are not in the file (the client's cache holds what activation ran)", () => {
  // A bundle with a function, later(), whose body compiles a hundred more functions when it runs.
  const many = Array.from(
    { length: 100 },
    (_, i) => `function f${i}(x) { return x + ${i} * Math.sqrt(x + ${i}); }`,
  ).join("\n");
  const calls = Array.from({ length: 100 }, (_, i) => `f${i}(n)`).join(" + ");
  const sizeAfter = (capture: boolean) => {
    const { bundle, dir } = setup(`${many}\nexports.later = (n) => ${calls};`);
    const l = loadWithCodeCache(bundle, dir, NO_TIMER);
    const exp = l.exports as { activate(n: number): number; later(n: number): number };
    exp.activate(1);
    if (capture) l.capture();
    assert.ok(exp.later(2) > 0);
    assert.equal(l.writeNow(), true);
    const [file] = cacheFiles(dir);
    assert.deepEqual(freshLoad(bundle, dir), { state: "used", value: 42 });
    return statSync(join(dir, file)).size;
  };
  const captured = sizeAfter(true);
  const whole = sizeAfter(false);
  assert.ok(captured < whole, `captured before later(): ${captured} bytes; after: ${whole} bytes`);
  // A used cache takes nothing and writes nothing.
  const { bundle, dir } = setup();
  loadWithCodeCache(bundle, dir, NO_TIMER).writeNow();
  const used = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(used.state, "used");
  used.capture();
  assert.equal(used.writeNow(), false);
});

test("a damaged cache file (one byte of its data flipped, or cut short) is never handed to V8: its CRC-32 or length does not match; the bundle loads, the file is written again and then used", () => {
  const { bundle, dir } = setup();
  loadWithCodeCache(bundle, dir, NO_TIMER).writeNow();
  const file = join(dir, cacheFiles(dir)[0]);
  const good = readFileSync(file);
  assert.equal(good.subarray(0, 4).toString(), "GPC3");
  const flipped = Buffer.from(good);
  flipped[flipped.length - 5] ^= 0x40;
  for (const damaged of [flipped, good.subarray(0, good.length - 100), Buffer.alloc(4096, 7)]) {
    writeFileSync(file, damaged, { mode: 0o600 });
    const r = freshLoad(bundle, dir);
    assert.equal(r.state, "absent");
    assert.equal(r.value, 42);
    assert.match(r.refused ?? "", /header, length or CRC-32 does not match/);
    assert.deepEqual(freshLoad(bundle, dir), { state: "used", value: 42 });
  }
});

test("a whole file V8 does not take (the data of another bundle): rejected by V8, compiled normally, written again", () => {
  const { bundle, dir } = setup();
  const other = setup("// another bundle, another length");
  const made = loadWithCodeCache(other.bundle, other.dir, NO_TIMER);
  made.writeNow();
  const mine = loadWithCodeCache(bundle, dir, { writeAfterMs: -1 });
  // The other bundle's whole, checksummed file under this bundle's name.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(mine.cacheFile!, readFileSync(made.cacheFile!), { mode: 0o600 });
  assert.deepEqual(freshLoad(bundle, dir), { state: "rejected", value: 42 });
  assert.deepEqual(freshLoad(bundle, dir), { state: "used", value: 42 });
});

test("a new build of the bundle gets a new cache file; writing it removes the old build's, not another V8's (VS Code Insiders beside Stable)", () => {
  const { bundle, dir } = setup();
  loadWithCodeCache(bundle, dir, NO_TIMER).writeNow();
  const [old] = cacheFiles(dir);
  const insiders = "client.js-999-1-v8-0.0.1-x64.cache";
  writeFileSync(join(dir, insiders), "x", { mode: 0o600 });
  writeFileSync(bundle, `exports.activate = (n) => n + 1;\n// a longer build\n`);
  const next = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(next.state, "absent");
  assert.equal((next.exports as { activate(n: number): number }).activate(1), 2);
  next.writeNow();
  const now = cacheFiles(dir).filter((f) => f !== insiders);
  assert.equal(now.length, 1);
  assert.notEqual(now[0], old);
  assert.ok(existsSync(join(dir, insiders)), "another V8's file is kept");
});

test("a cache another user could have written is not run: a file or folder writable by others, a symbolic link, a FIFO (no wait)", () => {
  const { bundle, dir, root } = setup();
  const made = loadWithCodeCache(bundle, dir, NO_TIMER);
  made.writeNow();
  const file = made.cacheFile!;
  chmodSync(file, 0o666);
  const open = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(open.state, "absent");
  assert.match(open.refused ?? "", /^it is writable by group or others \(mode 666\)$/);
  assert.equal((open.exports as { activate(n: number): number }).activate(2), 4);
  chmodSync(file, 0o600);
  chmodSync(dir, 0o777);
  const openDir = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(openDir.state, "absent");
  assert.match(openDir.refused ?? "", /code-cache is writable by group or others \(mode 777\)$/);
  assert.equal(openDir.writeNow(), false, "nothing is written into a folder others can write");
  chmodSync(dir, 0o700);
  // A symbolic link in place of the file (to a real cache elsewhere): not followed.
  const elsewhere = join(root, "elsewhere.cache");
  execFileSync("mv", [file, elsewhere]);
  symlinkSync(elsewhere, file);
  const linked = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(linked.state, "absent");
  assert.match(linked.refused ?? "", /not a regular file \(a symbolic link\)/);
  // A FIFO in place of the file: refused at once, no writer awaited.
  execFileSync("rm", [file]);
  execFileSync("mkfifo", [file]);
  const fifo = loadWithCodeCache(bundle, dir, NO_TIMER);
  assert.equal(fifo.state, "absent");
  assert.match(fifo.refused ?? "", /not a regular file \(a FIFO\)/);
  assert.equal((fifo.exports as { activate(n: number): number }).activate(3), 6);
});

test("no cache folder: the bundle loads without a cache and nothing is written; what its top level throws is thrown", () => {
  const { bundle, root } = setup();
  const off = loadWithCodeCache(bundle, null, NO_TIMER);
  assert.equal(off.state, "off");
  assert.equal(off.cacheFile, null);
  assert.equal(off.writeNow(), false);
  assert.equal((off.exports as { activate(n: number): number }).activate(4), 8);
  assert.deepEqual(readdirSync(root), ["dist"]);
  const { bundle: throwing, dir } = setup(`throw new Error("top level failed");`);
  assert.throws(() => loadWithCodeCache(throwing, dir, NO_TIMER), /top level failed/);
});

test("the cache folder: GPU Pilot's cache folder's code-cache (GPU_PILOT_CACHE_DIR, LOCALAPPDATA on Windows, XDG_CACHE_HOME, ~/.cache); GPU_PILOT_CODE_CACHE=0 turns it off", () => {
  assert.equal(codeCacheDir({ XDG_CACHE_HOME: "/x" }, "linux"), join("/x", "gpu-pilot", "code-cache"));
  assert.equal(codeCacheDir({ GPU_PILOT_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }, "linux"), join("/c", "code-cache"));
  assert.equal(
    codeCacheDir({ LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32"),
    join("C:\\Users\\u\\AppData\\Local", "gpu-pilot", "code-cache"),
  );
  assert.match(codeCacheDir({}, "linux") ?? "", /[/\\]\.cache[/\\]gpu-pilot[/\\]code-cache$/);
  assert.equal(codeCacheDir({ GPU_PILOT_CODE_CACHE: "0", XDG_CACHE_HOME: "/x" }, "linux"), null);
});
