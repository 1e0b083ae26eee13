#!/usr/bin/env node
// `npm run test:desktop`: the same mocha suite as test/e2e/run.mjs, in a desktop (Electron) VS Code
// through @vscode/test-electron's runTests. It downloads VS Code (VSCODE_TEST_VERSION, default
// stable) into .e2e-run/vscode-test/, or uses VSCODE_EXECUTABLE_PATH. On Linux without a display,
// run it under xvfb-run. Where nothing can be downloaded (closed networks) it fails at once with a
// message; use `node test/e2e/run.mjs` (code-server + headless Chromium) there.
//
// Results: .e2e-run/desktop/results.json {passed, failed, tests:[{title, state, error}]}.
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureBuilt, fakeNvidiaSmi, log, repoRoot, writeSettings } from "./lib/host.mjs";
import { compileSuite } from "./lib/compile.mjs";

const runDir = path.join(repoRoot, ".e2e-run", "desktop");
const TIMEOUT_S = Number(process.env.GPU_PILOT_E2E_TIMEOUT_S || 900);

function writeResults(tests, note) {
  const passed = tests.filter((t) => t.state === "passed").length;
  const failed = tests.filter((t) => t.state === "failed").length;
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(
    path.join(runDir, "results.json"),
    JSON.stringify(
      {
        passed,
        failed,
        tests: tests.map(({ title, state, error = null }) => ({ title, state, error })),
        ...(note ? { note } : {}),
      },
      null,
      2,
    ) + "\n",
  );
  return { passed, failed };
}

async function main() {
  const { runTests } = await import("@vscode/test-electron");
  ensureBuilt();
  const out = path.join(runDir, "results");
  for (const d of [out, path.join(runDir, "ws"), path.join(runDir, "ud")])
    fs.rmSync(d, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const suiteIndex = await compileSuite(path.join(runDir, "suite"));
  const ws = path.join(runDir, "ws");
  fs.cpSync(path.join(repoRoot, "test", "e2e", "workspace"), ws, { recursive: true });
  const ud = path.join(runDir, "ud");
  writeSettings(ud, {
    "gpuPilot.nvidiaSmiPath": fakeNvidiaSmi,
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "git.openRepositoryInParentFolders": "never",
  });
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    log("note: no DISPLAY; a desktop VS Code needs one on Linux (run under xvfb-run)");
  }
  // GPU_PILOT_TEST_HOOKS: activate() returns the test hooks of client/src/api.ts beside the public API.
  const env = { GPU_PILOT_E2E_OUT: out, GPU_PILOT_TEST_HOOKS: "1" };
  if (process.env.FAKE_NVIDIA_SMI_MODE) env.FAKE_NVIDIA_SMI_MODE = process.env.FAKE_NVIDIA_SMI_MODE;
  log("runTests (@vscode/test-electron): downloading/starting a desktop VS Code");
  let code;
  try {
    code = await runTests({
      extensionDevelopmentPath: repoRoot,
      extensionTestsPath: suiteIndex,
      extensionTestsEnv: env,
      cachePath: path.join(repoRoot, ".e2e-run", "vscode-test"),
      version: process.env.VSCODE_TEST_VERSION || "stable",
      timeout: 30_000,
      ...(process.env.VSCODE_EXECUTABLE_PATH ? { vscodeExecutablePath: process.env.VSCODE_EXECUTABLE_PATH } : {}),
      launchArgs: [
        ws,
        "--user-data-dir",
        ud,
        "--disable-extensions",
        "--disable-workspace-trust",
        "--skip-welcome",
        "--skip-release-notes",
        "--disable-gpu",
      ],
    });
  } catch (e) {
    const msg = String(e?.message || e);
    if (!fs.existsSync(path.join(out, "suite-results.json"))) {
      console.error(
        `\ntest:desktop: no desktop VS Code could be downloaded or started here:\n  ${msg.split("\n")[0]}\n` +
          "This is expected on machines without internet access or a display. Run the same suite in code-server\n" +
          "instead: `node test/e2e/run.mjs` (see test/e2e/README.md), or set VSCODE_EXECUTABLE_PATH.",
      );
      writeResults([{ title: "desktop VS Code", state: "failed", error: msg }], "no desktop VS Code");
      return 1;
    }
    code = e?.code ?? 1;
  }
  const res = path.join(out, "suite-results.json");
  const tests = fs.existsSync(res) ? JSON.parse(fs.readFileSync(res, "utf8")).tests : [];
  if (!tests.length) tests.push({ title: "suite", state: "failed", error: `no results (exit code ${code})` });
  const { passed, failed } = writeResults(tests);
  console.log(
    `\n${failed || code ? "DESKTOP E2E FAILED" : "DESKTOP E2E PASSED"}: ${passed} passed, ${failed} failed (VS Code exit code ${code}); ` +
      `results: ${path.relative(process.cwd(), path.join(runDir, "results.json"))}`,
  );
  return failed === 0 && code === 0 ? 0 : 1;
}

const timer = setTimeout(() => {
  console.error(`test:desktop: gave up after ${TIMEOUT_S} s`);
  process.exit(124);
}, TIMEOUT_S * 1000);
timer.unref();
main().then(
  (c) => process.exit(c),
  (e) => {
    console.error(`test:desktop failed: ${e?.stack || e}`);
    process.exit(1);
  },
);
