#!/usr/bin/env node
// End-to-end tests of GPU Pilot in a real VS Code: code-server 4.139.1 (VS Code 1.139 server, remote
// Node extension host) + its web workbench in headless Chromium (playwright-core).
//
//   node test/e2e/run.mjs [--grep RE] [--no-ui] [--build] [--timeout SEC] [--keep]
//
// 1. installs the tools if missing (scripts/e2e-tools.sh -> .e2e-tools/), builds dist/ when missing
//    or older than client/src, server/src, common/src (--build forces it), bundles test/e2e/suite/*.ts into
//    .e2e-run/suite/;
// 2. copies test/e2e/workspace/ to a fresh .e2e-run/ws-<stamp>/, writes code-server user + machine
//    settings (gpuPilot.nvidiaSmiPath = test/fixtures/bin/nvidia-smi, the recorded 2 x H200 output);
// 3. starts code-server on a free 127.0.0.1 port (own process group, HOME/TMPDIR in .e2e-run);
// 4. suite phase: opens the workbench with the extensionDevelopmentPath (= this repo) /
//    extensionTestsPath payload; the mocha suite runs in the extension host and the workbench calls
//    codeAutomationExit(code) when it settles;
// 5. UI phase: opens the workbench again (extension loaded, no tests), clicks the GPU Pilot activity
//    bar item, checks the tree rows `GPU 0`, `GPU 1` and clicks GPU 1's tick box in the dashboard's
//    webview (a real mouse click), which must tick GPU 1 in the tree and the status bar;
// 6. writes .e2e-run/results.json {passed, failed, tests:[{title, state, error, reason?}]} (reason: why a
//    pending test was skipped, suite/skipReason.ts), screenshots in
//    .e2e-run/screens/, logs in .e2e-run/logs/; kills code-server's whole process group (also on
//    failure, timeout and Ctrl-C); exits 0 only if every test passed.
// Env: FAKE_NVIDIA_SMI_MODE (idle|busy|hang|fail9, passed through), GPU_PILOT_E2E_TIMEOUT_S.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import {
  acquireLock,
  ensureBuilt,
  ensureTools,
  fakeNvidiaSmi,
  launchBrowser,
  log,
  onShutdown,
  openGpuPilotView,
  remoteUri,
  repoRoot,
  startCodeServer,
  waitForWorkbench,
  workbenchUrl,
  writeSettings,
} from "./lib/host.mjs";
import { compileSuite } from "./lib/compile.mjs";
import { slurmAvailability, startCluster } from "../../scripts/slurm-cluster.mjs";

const { values: opts } = parseArgs({
  options: {
    grep: { type: "string" },
    "no-ui": { type: "boolean", default: false },
    build: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    timeout: { type: "string", default: process.env.GPU_PILOT_E2E_TIMEOUT_S || "600" },
    "suite-timeout": { type: "string", default: "300" },
  },
});

const runDir = path.join(repoRoot, ".e2e-run");
const screens = path.join(runDir, "screens");
const logsDir = path.join(runDir, "logs");
const resultsDir = path.join(runDir, "results");
const csDir = path.join(runDir, "code-server");
const tests = []; // {title, state, error?, durationMs?, reason?}
const timings = {};
let codeServer = null;
let browser = null;
/** The test Slurm cluster (scripts/slurm-cluster.mjs), stopped by pid in cleanup(). */
let slurm = null;

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
  if (slurm) {
    const c = slurm;
    slurm = null;
    await c.stop();
    log(`test Slurm cluster in ${c.base} stopped`);
  }
}
let resultsWritten = false;
const shutdown = onShutdown(async (code) => {
  await cleanup();
  if (code >= 128) {
    tests.push({ title: "e2e run", state: "failed", error: `interrupted by a signal (exit ${code})` });
    writeResults("interrupted");
  } else if (!resultsWritten) {
    writeResults("interrupted");
  }
});

// Whole-run watchdog: results are still written and the process group still killed.
const watchdog = setTimeout(
  async () => {
    console.error(`[e2e] FAIL: the whole run exceeded ${opts.timeout} s`);
    tests.push({ title: "e2e run", state: "failed", error: `timed out after ${opts.timeout} s` });
    await shutdown(124);
  },
  Number(opts.timeout) * 1000,
);
watchdog.unref();

function writeResults(note) {
  const passed = tests.filter((t) => t.state === "passed").length;
  const failed = tests.filter((t) => t.state === "failed").length;
  fs.mkdirSync(runDir, { recursive: true });
  resultsWritten = true;
  fs.writeFileSync(
    path.join(runDir, "results.json"),
    JSON.stringify(
      {
        passed,
        failed,
        tests: tests.map(({ title, state, error = null, durationMs, reason }) => ({
          title,
          state,
          error,
          durationMs,
          ...(reason ? { reason } : {}),
        })),
        timingsMs: timings,
        screenshots: fs.existsSync(screens) ? fs.readdirSync(screens).map((f) => path.join(screens, f)) : [],
        ...(note ? { note } : {}),
        finishedAt: new Date().toISOString(),
      },
      null,
      2,
    ) + "\n",
  );
  return { passed, failed };
}

async function timed(name, fn) {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    timings[name] = Date.now() - t;
  }
}

function freshDir(d) {
  fs.rmSync(d, { recursive: true, force: true });
  fs.mkdirSync(d, { recursive: true });
  return d;
}

/** Copies tails of the extension-host / GPU Pilot logs into .e2e-run/logs and returns a short excerpt. */
function collectLogs() {
  const src = path.join(csDir, "ud", "logs");
  const excerpt = [];
  if (!fs.existsSync(src)) return "";
  for (const e of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith(".log")) continue;
    const full = path.join(e.parentPath ?? e.path, e.name);
    const rel = path.relative(src, full);
    fs.mkdirSync(path.dirname(path.join(logsDir, rel)), { recursive: true });
    fs.copyFileSync(full, path.join(logsDir, rel));
    if (/GPU Pilot|gpu-pilot|gpuPilot|exthost\.log$|remoteexthost\.log$/i.test(rel)) {
      const text = fs.readFileSync(full, "utf8").trim();
      if (text) excerpt.push(`--- ${rel} (last 25 lines)\n${text.split("\n").slice(-25).join("\n")}`);
    }
  }
  return excerpt.join("\n");
}

async function suitePhase(ctx, folder, suiteIndex, extEnv) {
  const page = await ctx.newPage();
  const consoleLog = fs.createWriteStream(path.join(logsDir, "suite-page-console.log"));
  page.on("console", (m) => {
    const t = m.text();
    consoleLog.write(`[${m.type()}] ${t}\n`);
    // Extension-host console lines arrive as "%c INFO color: #33f <text>".
    const text = t.replace(/^%c\s*\S+\s+color:\s*\S+\s*/, "");
    if (/^(PASS|FAIL|SKIP): |^\[gpu-pilot e2e\]/.test(text)) console.log("  " + text.split("\n")[0].slice(0, 500));
  });
  page.on("pageerror", (e) => consoleLog.write(`[pageerror] ${e}\n`));
  let settle;
  const exited = new Promise((r) => (settle = r));
  await page.exposeFunction("codeAutomationExit", (code, logs) => {
    settle({ code, logs });
  });
  const url = workbenchUrl(codeServer.origin, folder, [
    ["extensionDevelopmentPath", remoteUri(codeServer.origin, repoRoot)],
    ["extensionTestsPath", remoteUri(codeServer.origin, suiteIndex)],
    ["extensionEnvironment", JSON.stringify(extEnv)],
  ]);
  fs.writeFileSync(path.join(logsDir, "suite-url.txt"), url + "\n");
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60_000 });
  let timer;
  const limit = Number(opts["suite-timeout"]) * 1000;
  const res = await Promise.race([
    exited,
    new Promise((r) => (timer = setTimeout(() => r({ code: "timeout" }), limit))),
  ]);
  clearTimeout(timer);
  log(`suite settled: codeAutomationExit(${res.code})`);
  for (const l of res.logs ?? []) {
    const f = path.join(logsDir, "automation", l.relativePath);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, String(l.contents ?? ""));
  }
  await page.screenshot({ path: path.join(screens, "suite-end.png"), timeout: 10_000 }).catch(() => {});
  consoleLog.end();
  await page.close().catch(() => {});
  return res.code;
}

/**
 * The frame (iframe#active-frame in a webview's iframe) that holds `selector`: the GPU Pilot
 * dashboard's, among every webview open (the workbench may restore a notebook editor from the
 * suite, whose outputs are a webview too). Polls until `timeout` ms; throws with the count seen.
 */
async function dashboardFrame(page, selector, timeout) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const frames = page.locator("iframe.webview.ready");
    const n = await frames.count();
    for (let i = 0; i < n; i++) {
      const inner = frames.nth(i).contentFrame().frameLocator("iframe#active-frame");
      if (
        await inner
          .locator(selector)
          .count()
          .catch(() => 0)
      )
        return inner;
    }
    if (Date.now() > deadline) throw new Error(`no webview holds ${selector} after ${timeout} ms (${n} webviews open)`);
    await page.waitForTimeout(250);
  }
}

async function uiPhase(ctx, folder, extEnv) {
  const page = await ctx.newPage();
  const url = workbenchUrl(codeServer.origin, folder, [
    ["extensionDevelopmentPath", remoteUri(codeServer.origin, repoRoot)],
    ["extensionEnvironment", JSON.stringify(extEnv)],
  ]);
  const t = Date.now();
  const title =
    "UI: the GPU Pilot view lists `GPU 0` and `GPU 1`; a click on GPU 1's tick box in the dashboard ticks it in the tree and the status bar";
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60_000 });
    await waitForWorkbench(page);
    await openGpuPilotView(page);
    const sidebar = page.locator(".part.sidebar");
    for (const label of ["GPU 0", "GPU 1"]) {
      // The row's label element holds exactly the label; the description (load, memory) is separate.
      await sidebar
        .locator(".monaco-list-row .label-name", { hasText: new RegExp(`^${label}$`) })
        .first()
        .waitFor({ timeout: 30_000 });
    }
    const rows = await sidebar.locator(".monaco-list-row .label-name").allTextContents();
    // The dashboard's webview (iframe in iframe): a real click on GPU 1's tick box, on its GPUs tab
    // (the webview restores the tab it last saved: the suite's process table test leaves it on
    // Processes when the workbench saved its state then).
    const gpusTab = 'button[data-view="gpus"]';
    await (await dashboardFrame(page, gpusTab, 30_000)).locator(gpusTab).click();
    const tickSelector = 'input.tick[data-uuid="GPU-6486822f-842c-1320-f829-e4155c0d2130"]';
    const tick = (await dashboardFrame(page, tickSelector, 30_000)).locator(tickSelector);
    await tick.click();
    const gpu1Row = sidebar
      .locator(".monaco-list-row", { has: page.locator(".label-name", { hasText: /^GPU 1$/ }) })
      .first();
    await gpu1Row.locator(".codicon-check, [aria-checked=true], .checked").first().waitFor({ timeout: 15_000 });
    await page
      .locator(".part.statusbar", { hasText: /GPU 1 ·/ })
      .first()
      .waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(screens, "ui-gpu-tree.png"), timeout: 10_000 });
    tests.push({ title, state: "passed", durationMs: Date.now() - t });
    console.log(`  PASS: ${title} (rows: ${JSON.stringify(rows)})`);
  } catch (e) {
    await page.screenshot({ path: path.join(screens, "ui-gpu-tree-failed.png"), timeout: 10_000 }).catch(() => {});
    const rows = await page
      .locator(".part.sidebar .monaco-list-row")
      .allTextContents()
      .catch(() => []);
    const error = `${e.message.split("\n")[0]}; sidebar rows: ${JSON.stringify(rows)}`;
    tests.push({ title, state: "failed", error, durationMs: Date.now() - t });
    console.log(`  FAIL: ${title} :: ${error}`);
  } finally {
    await page.close().catch(() => {});
  }
}

async function main() {
  const t0 = Date.now();
  // One run at a time: runs share .e2e-run/ (results.json, workspace, code-server state).
  await timed("waitLock", () => acquireLock(path.join(runDir, "run.lock")));
  await timed("tools", async () => ensureTools());
  await timed("build", async () => ensureBuilt({ force: opts.build }));
  for (const f of ["main.js", "client.js", "server.js"]) {
    if (!fs.existsSync(path.join(repoRoot, "dist", f)))
      log(`warning: dist/${f} missing after the build (is its source written yet?)`);
  }
  freshDir(screens);
  freshDir(logsDir);
  freshDir(resultsDir);
  const suiteIndex = await timed("compileSuite", () => compileSuite(path.join(runDir, "suite")));

  // Fresh workspace copy and code-server state for every run.
  for (const d of fs.readdirSync(runDir))
    if (d.startsWith("ws-")) fs.rmSync(path.join(runDir, d), { recursive: true, force: true });
  const ws = path.join(runDir, `ws-${Date.now()}`);
  fs.cpSync(path.join(repoRoot, "test", "e2e", "workspace"), ws, { recursive: true });
  freshDir(csDir);
  const ud = path.join(csDir, "ud");
  const settings = {
    "gpuPilot.nvidiaSmiPath": fakeNvidiaSmi,
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "workbench.tips.enabled": false,
    "telemetry.telemetryLevel": "off",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "git.openRepositoryInParentFolders": "never",
    "update.mode": "none",
    "task.quickOpen.skip": true,
    "terminal.integrated.enablePersistentSessions": false,
  };
  writeSettings(ud, settings);
  if (!fs.existsSync(fakeNvidiaSmi)) log(`warning: ${fakeNvidiaSmi} does not exist (yet)`);

  // Variables for the extension host (payload) and for code-server itself: tasks run from the
  // server's pty host, which inherits code-server's environment rather than the extension host's.
  // GPU_PILOT_TEST_HOOKS: activate() returns the test hooks of client/src/api.ts beside the public API.
  const extEnv = { GPU_PILOT_E2E_OUT: resultsDir, GPU_PILOT_TEST_HOOKS: "1" };
  if (process.env.FAKE_NVIDIA_SMI_MODE) extEnv.FAKE_NVIDIA_SMI_MODE = process.env.FAKE_NVIDIA_SMI_MODE;
  if (opts.grep) extEnv.GPU_PILOT_E2E_GREP = opts.grep;
  // A real single-node Slurm with two fake GPUs for suite/slurm.test.ts (issue 23): its SLURM_CONF
  // reaches the extension host (and code-server); without Slurm or root the tests skip with the reason.
  const slurmWhy = slurmAvailability();
  if (slurmWhy) {
    extEnv.GPU_PILOT_E2E_SLURM_SKIP = slurmWhy;
    log(`Slurm tests will be skipped: ${slurmWhy}`);
  } else {
    slurm = await timed("slurmStart", () => startCluster({ gpus: 2, cpus: 4 }));
    extEnv.SLURM_CONF = slurm.conf;
    log(`test Slurm cluster: SLURM_CONF=${slurm.conf} (node ${slurm.nodeName}, ${slurm.gpus} GPUs)`);
  }

  codeServer = await timed("codeServerStart", () =>
    startCodeServer({
      runDir: csDir,
      workspace: ws,
      userDataDir: ud,
      extensionsDir: path.join(csDir, "exts"),
      env: extEnv,
    }),
  );
  log(`code-server ${codeServer.origin} (pid/pgid ${codeServer.pid}); workspace ${path.relative(repoRoot, ws)}`);
  browser = await timed("browserStart", () => launchBrowser(path.join(runDir, "chromium-profile")));

  log("suite phase: running the mocha suite in the extension host");
  const code = await timed("suite", () => suitePhase(browser, ws, suiteIndex, extEnv));
  const suiteRes = path.join(resultsDir, "suite-results.json");
  if (fs.existsSync(suiteRes)) {
    const r = JSON.parse(fs.readFileSync(suiteRes, "utf8"));
    tests.push(...r.tests);
    if (r.loadError) tests.push({ title: "suite: load", state: "failed", error: r.loadError });
    if (!r.done)
      tests.push({
        title: "suite: completion",
        state: "failed",
        error: `the suite did not finish (codeAutomationExit ${code})`,
      });
  } else {
    tests.push({
      title: "suite: start",
      state: "failed",
      error: `no suite-results.json: the suite never ran (codeAutomationExit ${code}); see .e2e-run/logs/`,
    });
  }
  if (code !== 0 && !tests.some((t) => t.state === "failed")) {
    tests.push({
      title: "suite: exit code",
      state: "failed",
      error: `codeAutomationExit(${code}) although no test failed`,
    });
  }

  if (!opts["no-ui"]) {
    log("UI phase: GPU Pilot view in the workbench");
    await timed("ui", () => uiPhase(browser, ws, extEnv));
  }
  await cleanup();
  const excerpt = collectLogs();
  timings.total = Date.now() - t0;
  const { passed, failed } = writeResults();
  if (failed && excerpt) console.log(`\nLog excerpts (full logs in .e2e-run/logs/):\n${excerpt}\n`);
  for (const t of tests.filter((x) => x.state === "failed"))
    console.log(`FAILED: ${t.title}\n    ${String(t.error).split("\n").slice(0, 6).join("\n    ")}`);
  console.log(
    `\n${failed ? "E2E FAILED" : "E2E PASSED"}: ${passed} passed, ${failed} failed in ${(timings.total / 1000).toFixed(1)} s ` +
      `(${Object.entries(timings)
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}s`)
        .join(", ")})`,
  );
  console.log(
    `results: ${path.relative(process.cwd(), path.join(runDir, "results.json"))}; screenshots: ${path.relative(process.cwd(), screens)}/`,
  );
  if (!opts.keep) fs.rmSync(path.join(runDir, "chromium-profile"), { recursive: true, force: true });
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => shutdown(code),
  async (e) => {
    console.error(`[e2e] FAIL: ${e?.stack || e}`);
    tests.push({ title: "e2e harness", state: "failed", error: String(e?.message || e) });
    await cleanup();
    collectLogs();
    writeResults("harness error");
    await shutdown(1);
  },
);
