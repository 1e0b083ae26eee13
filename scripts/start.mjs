#!/usr/bin/env node
// `npm start`: a real VS Code (code-server 4.139.1, VS Code 1.139) with GPU Pilot installed, on a
// copy of the examples/ workspace, at http://127.0.0.1:<port>/ (open it in a browser; no password).
//
//   npm start                          # free port, a fresh copy of examples/
//   PORT=8080 npm start                # fixed port
//   npm start -- --folder ~/project    # another workspace
//   npm start -- --host 0.0.0.0        # listen beyond localhost (no authentication!)
//
// Installs the tools into .e2e-tools/ when missing (scripts/e2e-tools.sh), builds dist/ when it is
// missing or older than the sources, symlinks this repo into the code-server extensions folder
// (.e2e-run/start/extensions/gpu-pilot.gpu-pilot-<version>; see test/e2e/lib/devserver.mjs), and
// uses the real nvidia-smi from PATH, or the fake one replaying a recorded 2 x H200 machine.
// The workspace is a copy of examples/ made afresh at every start in .e2e-run/start/examples/
// (git-ignored), so quick fixes tried there never change the repository's tracked files; --folder
// opens that folder itself. State (settings, open editors) persists in .e2e-run/start/. Runs until
// Ctrl-C, then kills
// code-server's whole process group (language server, pty host, file watcher).
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { log, onShutdown, repoRoot } from "../test/e2e/lib/host.mjs";
import { startDevServer } from "../test/e2e/lib/devserver.mjs";
import { startWorkspace } from "./startWorkspace.mjs";

const USAGE = `usage: npm start [-- OPTIONS]
  --port N         listen on port N (default: $PORT, else a free port)
  --host ADDR      listen on ADDR (default: $HOST, else 127.0.0.1; 0.0.0.0 has no authentication!)
  --folder DIR     open DIR instead of a fresh copy of examples/
  --no-build       use dist/ as it is (no build even when it is missing or older than the sources)
  --fresh          forget the saved state (settings, open editors) in .e2e-run/start/ first
  -h, --help       print this`;

let opts;
try {
  ({ values: opts } = parseArgs({
    options: {
      port: { type: "string", default: process.env.PORT || "" },
      host: { type: "string", default: process.env.HOST || "127.0.0.1" },
      folder: { type: "string" },
      "no-build": { type: "boolean", default: false },
      fresh: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (e) {
  console.error(`npm start: ${e.message}\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}

let cs = null;
let stopping = false;
const shutdown = onShutdown(async () => {
  stopping = true;
  if (cs) {
    log("stopping code-server");
    await cs.stop();
  }
});

const runDir = path.join(repoRoot, ".e2e-run", "start");

try {
  if (opts.fresh) fs.rmSync(runDir, { recursive: true, force: true });
  const folder = startWorkspace({ repoRoot, runDir, folder: opts.folder });
  const started = await startDevServer({
    runDir,
    folder,
    port: opts.port ? Number(opts.port) : undefined,
    host: opts.host,
    build: !opts["no-build"],
    freshUserData: false,
  });
  cs = started.cs;
  if (started.smi.fake) {
    console.log(
      `\nNote: no nvidia-smi on PATH, so GPU Pilot uses ${path.relative(repoRoot, started.smi.path)}, which replays` +
        `\n      ${fakeMachine(process.env.FAKE_NVIDIA_SMI_MODE)} (FAKE_NVIDIA_SMI_MODE=busy|idle|spin|x8|x16|hang|fail9 changes it; the README pictures use spin).`,
    );
  } else {
    console.log(`\nUsing nvidia-smi from PATH: ${started.smi.path}`);
  }
  console.log(
    `\nGPU Pilot in VS Code (code-server): ${started.url}\n` +
      `Workspace: ${folder}${opts.folder ? "" : " (a fresh copy of examples/: edits there leave the repository unchanged)"}\nAfter \`npm run build\`, run "Developer: Reload Window" to load the new build. Ctrl-C stops.\n`,
  );
  const { code, signal } = await cs.exited;
  if (stopping) await new Promise(() => {}); // Ctrl-C: the shutdown hook exits
  console.error(`code-server exited by itself (${code ?? signal}); log: ${cs.logFile}\n${cs.logTail(20)}`);
  await shutdown(code || 1);
} catch (e) {
  console.error(`npm start failed: ${e?.stack || e}`);
  await shutdown(1);
}

/**
 * What the stand-in nvidia-smi replays for a FAKE_NVIDIA_SMI_MODE (test/fixtures/bin/nvidia-smi picks
 * the folder the same way: x16, then x8, else the recorded 2 x H200 machine).
 */
function fakeMachine(mode = "") {
  const has = (m) => mode.split(/[,\s]+/).includes(m);
  if (has("x16")) return "a constructed 16 x NVIDIA H200 machine (test/fixtures/nvidia-smi/h200x16)";
  if (has("x8")) return "a constructed 8 x NVIDIA H200 machine (test/fixtures/nvidia-smi/h200x8)";
  return "the recorded output of a 2 x NVIDIA H200 machine";
}
