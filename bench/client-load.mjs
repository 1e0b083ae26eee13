// The client bundle's cost before and inside activate() (issue 20): in a fresh Node.js process,
// the `require` of dist/client.js (reading and compiling the bundle and running its top level) and
// the `activate()` call, with the `vscode` module replaced by the unit tests' stand-in
// (test/unit/client-fakeVscode.ts, compiled here to plain JavaScript with esbuild so that no
// TypeScript loader sits in the timed require). The language client inside the bundle is the real
// one; it starts the server asynchronously, after activate() has returned, and is not timed.
// usage: node bench/client-load.mjs [--child FAKE.js]  (prints {load_ms, activate_ms, bundle_bytes})
import { spawn } from "node:child_process";
import { mkdtempSync, statSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const bundle = join(root, "dist", "client.js");

/** Compiles the vscode stand-in to CommonJS in a temporary folder; returns its path. */
export function buildFake() {
  const out = join(mkdtempSync(join(tmpdir(), "gp-client-load-")), "fake-vscode.cjs");
  const esbuild = require("esbuild");
  esbuild.buildSync({ entryPoints: [join(root, "test", "unit", "client-fakeVscode.ts")], outfile: out, bundle: true, platform: "node", format: "cjs", logLevel: "error" });
  return out;
}

/**
 * One fresh process: {load_ms, activate_ms, bundle_bytes}. The process gets its own process group
 * (detached): a SIGTERM to the process group, from inside that process, ended this benchmark and
 * the shell that ran it (intermittent; not a process.kill with a pid <= 0; cause not established).
 */
export function measureOnce(fake) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", fake], { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    child.on("error", reject);
    child.on("close", () => {
      const line = out.trim().split("\n").filter((l) => l.startsWith("{")).pop();
      if (line) resolve(JSON.parse(line)); else reject(new Error(`client-load child failed: ${err}`));
    });
  });
}

/**
 * A stand-in for anything the fake lacks (the bundled vscode-languageclient reads many `vscode`
 * classes at load): a constructible, callable function whose every property is again one.
 */
const anything = new Proxy(function anythingAtAll() {}, {
  get: (target, key) => (key === "prototype" ? target.prototype : key === Symbol.toPrimitive ? () => 0 : anything),
  apply: () => anything,
  construct: () => ({}),
});

async function child(fake) {
  const { Module } = require("node:module");
  require(fake);
  const fakeLoad = Module._load;
  let vscode;
  Module._load = function (request, parent, isMain) {
    if (request !== "vscode") return fakeLoad.call(this, request, parent, isMain);
    vscode ??= new Proxy(fakeLoad.call(this, request, parent, isMain), { get: (t, k) => (k in t ? t[k] : anything) });
    return vscode;
  };
  process.on("unhandledRejection", () => undefined);
  const ext = join(mkdtempSync(join(tmpdir(), "gp-client-ext-")), "ext");
  mkdirSync(join(ext, "dist"), { recursive: true });
  // A server stand-in that exits at once: what the client does with it happens after activate().
  writeFileSync(join(ext, "dist", "server.js"), "process.exit(0);\n");
  const data = new Map();
  const state = { get: (k) => data.get(k), update: (k, v) => { data.set(k, v); return Promise.resolve(); }, keys: () => [...data.keys()], setKeysForSync: () => undefined };
  const context = {
    subscriptions: [], workspaceState: state, globalState: state,
    asAbsolutePath: (p) => join(ext, p), extension: { packageJSON: { version: "0.1.0" } },
    extensionUri: { fsPath: ext }, extensionPath: ext,
  };
  const t0 = process.hrtime.bigint();
  const mod = require(bundle);
  const t1 = process.hrtime.bigint();
  mod.activate(context);
  const t2 = process.hrtime.bigint();
  process.stdout.write(JSON.stringify({ load_ms: Number(t1 - t0) / 1e6, activate_ms: Number(t2 - t1) / 1e6, bundle_bytes: statSync(bundle).size }) + "\n");
  await mod.deactivate?.().catch?.(() => undefined);
  rmSync(dirname(ext), { recursive: true, force: true });
  process.exit(0);
}

const i = process.argv.indexOf("--child");
if (i >= 0) await child(process.argv[i + 1]);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fake = buildFake();
  console.log(JSON.stringify(await measureOnce(fake)));
}
