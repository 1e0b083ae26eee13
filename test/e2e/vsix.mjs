#!/usr/bin/env node
// End-to-end test of the packaged extension: builds gpu-pilot.vsix (`npm run package`), installs it
// into a fresh extensions folder of the real VS Code (code-server 4.139.1:
// `--extensions-dir D --install-extension gpu-pilot.vsix`), starts code-server on that folder with
// no extensionDevelopmentPath (so only the installed copy can load) and checks in headless Chromium
// that it activates and works from there: a GPU001 in the Problems panel, the GPU view rows, the
// injection grammar's token, the walkthrough. Also runs the grammar tests against the Python, shell
// and dotenv grammars that this VS Code ships, and starts the MCP server the extension registers as
// VS Code starts it (the installed `dist/server.js mcp`: the .vsix carries no cli.js).
//
//   node test/e2e/vsix.mjs [--keep] [--timeout SEC]
//
// Writes .e2e-run/vsix-results.json ({passed, failed, tests: [{title, state, error, durationMs}]}),
// screenshots to .e2e-run/vsix/screens/, and exits 0 only when every test passed. code-server's
// process group is killed at the end, also on failure, timeout and Ctrl-C. Runs take
// .e2e-run/vsix.lock (independent of run.mjs's lock: own folder, own port).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import {
  acquireLock,
  codeServerEntry,
  ensureTools,
  extensionId,
  fakeNvidiaSmi,
  launchBrowser,
  log,
  node24Dir,
  onShutdown,
  openGpuPilotView,
  repoRoot,
  startCodeServer,
  waitForWorkbench,
  writeSettings,
} from "./lib/host.mjs";
import { MAX_VSIX_BYTES } from "../../scripts/vsixBudget.mjs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const { values: opts } = parseArgs({
  options: {
    keep: { type: "boolean", default: false },
    timeout: { type: "string", default: process.env.GPU_PILOT_E2E_TIMEOUT_S || "600" },
  },
});

const runDir = path.join(repoRoot, ".e2e-run", "vsix");
const resultsFile = path.join(repoRoot, ".e2e-run", "vsix-results.json");
const screens = path.join(runDir, "screens");
const vsixFile = path.join(runDir, "gpu-pilot.vsix");
const extensionsDir = path.join(runDir, "extensions");
const userDataDir = path.join(runDir, "user-data");
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
const installedName = `${pkg.publisher}.${pkg.name}-${pkg.version}`;

const tests = [];
let codeServer = null;
let browser = null;
let resultsWritten = false;

function writeResults(note) {
  const passed = tests.filter((t) => t.state === "passed").length;
  const failed = tests.filter((t) => t.state === "failed").length;
  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  fs.writeFileSync(
    resultsFile,
    JSON.stringify(
      {
        passed,
        failed,
        tests: tests.map(({ title, state, error = null, durationMs }) => ({ title, state, error, durationMs })),
        vsix: fs.existsSync(vsixFile) ? { path: vsixFile, bytes: fs.statSync(vsixFile).size } : null,
        ...(note ? { note } : {}),
        finishedAt: new Date().toISOString(),
      },
      null,
      2,
    ) + "\n",
  );
  resultsWritten = true;
  return { passed, failed };
}

async function cleanup() {
  if (browser) {
    const b = browser;
    browser = null;
    await Promise.race([b.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  }
  if (codeServer) {
    const cs = codeServer;
    codeServer = null;
    await cs.stop();
    log(`code-server (process group ${cs.pid}) stopped`);
  }
}

const shutdown = onShutdown(async (code) => {
  await cleanup();
  if (code >= 128)
    tests.push({ title: "vsix e2e run", state: "failed", error: `interrupted by a signal (exit ${code})` });
  if (!resultsWritten || code >= 128) writeResults("interrupted");
});
const watchdog = setTimeout(
  async () => {
    console.error(`[vsix] FAIL: the run exceeded ${opts.timeout} s`);
    tests.push({ title: "vsix e2e run", state: "failed", error: `timed out after ${opts.timeout} s` });
    await shutdown(124);
  },
  Number(opts.timeout) * 1000,
);
watchdog.unref();

/** Runs one test: records it, prints PASS/FAIL, never throws. Returns the function's value or undefined. */
async function check(title, fn) {
  const t = Date.now();
  try {
    const detail = await fn();
    tests.push({ title, state: "passed", durationMs: Date.now() - t });
    console.log(`  PASS: ${title}${detail ? ` (${detail})` : ""}`);
    return true;
  } catch (e) {
    const error = String(e?.message ?? e)
      .split("\n")
      .slice(0, 8)
      .join("\n");
    tests.push({ title, state: "failed", error, durationMs: Date.now() - t });
    console.log(`  FAIL: ${title} :: ${error}`);
    return false;
  }
}

/** The environment of the code-server CLI (as startCodeServer gives the server): HOME etc. in runDir. */
function cliEnv() {
  const home = path.join(runDir, "home");
  const env = {
    ...process.env,
    HOME: home,
    TMPDIR: path.join(runDir, "tmp"),
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    PATH: `${node24Dir}${path.delimiter}${process.env.PATH}`,
  };
  for (const k of Object.keys(env)) if (/^(VSCODE_|ELECTRON_RUN_AS_NODE)/.test(k)) delete env[k];
  for (const d of [env.HOME, env.TMPDIR]) fs.mkdirSync(d, { recursive: true });
  return env;
}

function codeServerCli(args) {
  const r = spawnSync(
    path.join(node24Dir, "node"),
    [codeServerEntry, "--user-data-dir", userDataDir, "--extensions-dir", extensionsDir, ...args],
    { cwd: runDir, env: cliEnv(), encoding: "utf8", timeout: 180_000, killSignal: "SIGKILL" },
  );
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? `\n${r.error.message}` : ""}`;
  return { status: r.status, output };
}

/** Quick open / command palette: opens it with `key`, types `text`, waits for a row matching `row`, picks it. */
async function quickPick(page, key, text, row) {
  await page.keyboard.press(key);
  const input = page.locator(".quick-input-widget input").first();
  await input.waitFor({ timeout: 15_000 });
  await input.fill(text);
  const hit = page.locator(".quick-input-widget .monaco-list-row", { hasText: row }).first();
  await hit.waitFor({ timeout: 20_000 });
  await hit.click();
}

async function main() {
  await acquireLock(path.join(repoRoot, ".e2e-run", "vsix.lock"), { what: "another vsix e2e run" });
  fs.rmSync(resultsFile, { force: true });
  fs.rmSync(runDir, { recursive: true, force: true });
  for (const d of [runDir, screens, extensionsDir, userDataDir]) fs.mkdirSync(d, { recursive: true });
  ensureTools();

  // 1. Package.
  const packaged = await check(
    `package: npm run package builds gpu-pilot.vsix of at most ${MAX_VSIX_BYTES / 1024 / 1024} MiB`,
    () => {
      const r = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "package.mjs"), "--out", vsixFile], {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 300_000,
      });
      if (r.status !== 0)
        throw new Error(`scripts/package.mjs exited ${r.status}: ${`${r.stdout}${r.stderr}`.slice(-1500)}`);
      const size = fs.statSync(vsixFile).size;
      if (size > MAX_VSIX_BYTES) throw new Error(`${size} bytes > ${MAX_VSIX_BYTES}`);
      return `${(size / 1024).toFixed(0)} KiB`;
    },
  );
  if (!packaged) return;

  // 2. Install into a fresh extensions folder with the code-server CLI.
  const installed = await check(
    `install: code-server --install-extension installs ${extensionId}@${pkg.version} (a real copy, not a link)`,
    () => {
      const r = codeServerCli(["--install-extension", vsixFile]);
      if (r.status !== 0) throw new Error(`--install-extension exited ${r.status}: ${r.output.slice(-1500)}`);
      const list = codeServerCli(["--list-extensions", "--show-versions"]);
      if (!list.output.includes(`${extensionId}@${pkg.version}`))
        throw new Error(`--list-extensions: ${list.output.trim()}`);
      const dir = path.join(extensionsDir, installedName);
      if (!fs.existsSync(dir) || fs.lstatSync(dir).isSymbolicLink()) throw new Error(`${dir} missing or a link`);
      for (const f of [
        "package.json",
        "dist/main.js",
        "dist/client.js",
        "dist/lsp.js",
        "dist/server.js",
        "dist/mcp.js",
        "dist/tree-sitter-python.wasm",
        "syntaxes/cuda-env.injection.tmLanguage.json",
      ]) {
        if (!fs.existsSync(path.join(dir, f))) throw new Error(`${f} not installed`);
      }
      // dist/cli.js is the npm package's: the extension's MCP server is `node dist/server.js mcp` (with dist/mcp.js).
      for (const f of ["client/src", "server/src", "common/src", "node_modules", "test", "dist/cli.js"]) {
        if (fs.existsSync(path.join(dir, f))) throw new Error(`${f} was installed from the .vsix`);
      }
      return `${path.relative(repoRoot, dir)}`;
    },
  );
  if (!installed) return;

  // 2b. The MCP server the extension registers, started as VS Code starts it, from the installed files.
  await check(
    "mcp: the installed dist/server.js mcp (the server the extension registers) answers initialize and lists the four tools",
    async () => {
      const client = new Client({ name: "gpu-pilot-e2e", version: "1" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [path.join(extensionsDir, installedName, "dist", "server.js"), "mcp", "--no-claims"],
          env: { ...process.env, PATH: `${path.dirname(fakeNvidiaSmi)}:${process.env.PATH}` },
          stderr: "pipe",
        }),
      );
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        const want = ["gpu-pilot_listGpus", "gpu-pilot_pickGpus", "gpu-pilot_checkFile", "gpu-pilot_runOnGpus"];
        if (JSON.stringify(names) !== JSON.stringify(want)) throw new Error(`tools/list: ${names.join(", ")}`);
        return `${client.getServerVersion()?.name} ${client.getServerVersion()?.version}: ${names.length} tools`;
      } finally {
        await client.close();
      }
    },
  );

  // 3. The grammar tests against the grammars this VS Code ships (not only the npm copies).
  await check(
    "grammar: the injection grammars pass their tests on VS Code 1.139's own Python, shell and dotenv grammars",
    () => {
      const builtins = path.join(
        path.dirname(path.dirname(path.dirname(codeServerEntry))),
        "lib",
        "vscode",
        "extensions",
      );
      const r = spawnSync(
        process.execPath,
        [path.join(repoRoot, "test", "grammar", "run.mjs"), "--json", "--vscode-extensions", builtins],
        { cwd: repoRoot, encoding: "utf8", timeout: 120_000 },
      );
      const res = JSON.parse((r.stdout || "{}").trim().split("\n").pop());
      if (!res.ok) throw new Error(`grammar tests: ${JSON.stringify(res)}`);
      return `${res.passedAssertions}/${res.assertions} assertions in ${res.files} files`;
    },
  );

  // 4. Start code-server with only the installed extension, on a workspace with a GPU001.
  const ws = path.join(runDir, "workspace");
  fs.mkdirSync(ws, { recursive: true });
  fs.copyFileSync(path.join(repoRoot, "test", "e2e", "workspace", "gpu001.py"), path.join(ws, "gpu001.py"));
  writeSettings(userDataDir, {
    "gpuPilot.nvidiaSmiPath": fakeNvidiaSmi,
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "workbench.tips.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "editor.minimap.enabled": false,
  });
  codeServer = await startCodeServer({ runDir, workspace: ws, userDataDir, extensionsDir, smokeTestDriver: false });
  log(`code-server ${codeServer.origin} (pid/pgid ${codeServer.pid}) with ${path.relative(repoRoot, extensionsDir)}`);
  browser = await launchBrowser(path.join(runDir, "chromium-profile"));
  const page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(`${codeServer.origin}/?folder=${encodeURIComponent(ws)}`, {
    waitUntil: "domcontentloaded",
    timeout: 60_000,
  });
  await waitForWorkbench(page);

  await check(
    "activate: opening gpu001.py shows GPU001 from the installed extension in the Problems panel",
    async () => {
      await quickPick(page, "Control+P", "gpu001.py", "gpu001.py");
      await page.locator(".tabs-container .tab", { hasText: "gpu001.py" }).first().waitFor({ timeout: 15_000 });
      await page.locator(".part.editor .monaco-editor .squiggly-error").first().waitFor({ timeout: 90_000 });
      await page.keyboard.press("Control+Shift+M");
      // The row of the problem itself (the file's row also matches "gpu001", case-insensitively).
      const problem = page
        .locator(".markers-panel .monaco-list-row")
        .filter({ hasText: /GPU001/ })
        .filter({ hasText: /CUDA_VISIBLE_DEVICES/ })
        .first();
      await problem.waitFor({ timeout: 30_000 });
      const text = (await problem.textContent()) ?? "";
      if (!/Ln 5\b/.test(text)) throw new Error(`GPU001 not on line 5: ${text}`);
      await page.screenshot({ path: path.join(screens, "problems.png"), timeout: 10_000 }).catch(() => {});
      return text.replace(/\s+/g, " ").slice(0, 120);
    },
  );

  await check(
    "grammar: in the editor, the CUDA_VISIBLE_DEVICES of a Python string is its own token, coloured apart from the string",
    async () => {
      const name = page.locator(".part.editor .view-lines span span", { hasText: /^CUDA_VISIBLE_DEVICES$/ }).first();
      await name.waitFor({ timeout: 20_000 });
      const value = page.locator(".part.editor .view-lines span span", { hasText: /^"1"$/ }).first();
      await value.waitFor({ timeout: 10_000 });
      const [c1, c2] = [
        await name.evaluate((e) => e.ownerDocument.defaultView.getComputedStyle(e).color),
        await value.evaluate((e) => e.ownerDocument.defaultView.getComputedStyle(e).color),
      ];
      if (c1 === c2) throw new Error(`same colour as the string: ${c1}`);
      return `${c1} vs string ${c2}`;
    },
  );

  await check("UI: the GPU Pilot view lists `GPU 0` and `GPU 1`", async () => {
    await openGpuPilotView(page);
    const sidebar = page.locator(".part.sidebar");
    for (const label of ["GPU 0", "GPU 1"]) {
      await sidebar
        .locator(".monaco-list-row .label-name", { hasText: new RegExp(`^${label}$`) })
        .first()
        .waitFor({ timeout: 30_000 });
    }
    await page.screenshot({ path: path.join(screens, "gpu-view.png"), timeout: 10_000 }).catch(() => {});
  });

  await check("walkthrough: 'Get Started with GPU Pilot' opens with its steps", async () => {
    await quickPick(page, "F1", ">Open Walkthrough", /Open Walkthrough/);
    // The command opens a second quick pick: the walkthroughs of every extension.
    const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: "Get Started with GPU Pilot" }).first();
    await row.waitFor({ timeout: 20_000 });
    await row.click();
    const steps = [
      "See your GPUs",
      "Pick the GPUs to run on",
      "See a device-selection mistake",
      "Run a file on the selected GPUs",
    ];
    for (const s of steps) await page.locator(".part.editor", { hasText: s }).first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: path.join(screens, "walkthrough.png"), timeout: 10_000 }).catch(() => {});
    return `${steps.length} steps`;
  });
}

main().then(
  async () => {
    await cleanup();
    if (!opts.keep) fs.rmSync(path.join(runDir, "chromium-profile"), { recursive: true, force: true });
    const { passed, failed } = writeResults();
    for (const t of tests.filter((x) => x.state === "failed"))
      console.log(`FAILED: ${t.title}\n    ${String(t.error).split("\n").join("\n    ")}`);
    console.log(
      `\n${failed ? "VSIX E2E FAILED" : "VSIX E2E PASSED"}: ${passed} passed, ${failed} failed; results: ${path.relative(process.cwd(), resultsFile)}`,
    );
    await shutdown(failed === 0 && passed > 0 ? 0 : 1);
  },
  async (e) => {
    console.error(`[vsix] FAIL: ${e?.stack || e}`);
    tests.push({ title: "vsix e2e harness", state: "failed", error: String(e?.message || e) });
    await cleanup();
    writeResults("harness error");
    await shutdown(1);
  },
);
