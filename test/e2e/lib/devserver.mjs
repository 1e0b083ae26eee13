// Starts code-server with GPU Pilot installed, for `npm start` (scripts/start.mjs) and
// scripts/screenshot.mjs.
//
// How the extension is loaded: the repository root is symlinked into the code-server extensions
// folder as `<publisher>.<name>-<version>` (gpu-pilot.gpu-pilot-0.1.0). code-server then treats it as
// an installed extension (it records it in extensions.json at start-up), so the plain URL works and
// no "[Extension Development Host]" payload is needed; after `npm run build`, "Developer: Reload
// Window" picks up the new dist/. Removing the extension from the UI only unlinks the symlink.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  ensureBuilt,
  ensureTools,
  fakeNvidiaSmi,
  log,
  repoRoot,
  startCodeServer,
  whichNvidiaSmi,
  writeSettings,
} from "./host.mjs";

export function extensionFolderName() {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
  return `${pkg.publisher}.${pkg.name}-${pkg.version}`;
}

/** Symlinks the repo into `extensionsDir` (removing stale GPU Pilot links of other versions). */
export function linkExtension(extensionsDir) {
  fs.mkdirSync(extensionsDir, { recursive: true });
  const name = extensionFolderName();
  const prefix = name.replace(/-[^-]+$/, "-");
  for (const e of fs.readdirSync(extensionsDir)) {
    const p = path.join(extensionsDir, e);
    if (e.startsWith(prefix) && fs.lstatSync(p).isSymbolicLink() && e !== name) fs.unlinkSync(p);
  }
  const link = path.join(extensionsDir, name);
  let ok = false;
  try {
    ok = fs.lstatSync(link).isSymbolicLink() && fs.realpathSync(link) === fs.realpathSync(repoRoot);
    if (!ok) fs.rmSync(link, { recursive: true, force: true });
  } catch {
    ok = false;
  }
  if (!ok) fs.symlinkSync(repoRoot, link, "dir");
  return link;
}

/**
 * Installs tools, builds, links the extension and starts code-server on `folder`.
 * nvidia-smi: the real one from PATH when there is one, else the fake that replays the recorded
 * 2 x H200 output (test/fixtures/bin/nvidia-smi).
 * Returns { cs, url, smi: { path, fake } }.
 */
export async function startDevServer({
  runDir,
  folder,
  port,
  host = "127.0.0.1",
  build = true,
  freshUserData = false,
  env = {},
  settings = {},
}) {
  ensureTools();
  if (build) ensureBuilt();
  if (freshUserData) fs.rmSync(runDir, { recursive: true, force: true });
  const userDataDir = path.join(runDir, "user-data");
  const extensionsDir = path.join(runDir, "extensions");
  linkExtension(extensionsDir);
  const real = whichNvidiaSmi();
  const smi = real ? { path: real, fake: false } : { path: fakeNvidiaSmi, fake: true };
  writeSettings(
    userDataDir,
    {
      "gpuPilot.nvidiaSmiPath": smi.path,
      "workbench.startupEditor": "none",
      "security.workspace.trust.enabled": false,
      "workbench.tips.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "chat.disableAIFeatures": true,
      "git.openRepositoryInParentFolders": "never",
      ...settings,
    },
    { fresh: false },
  );
  const cs = await startCodeServer({
    runDir,
    workspace: folder,
    port,
    host,
    userDataDir,
    extensionsDir,
    env,
    smokeTestDriver: false,
  });
  const url = `${cs.origin}/?folder=${encodeURIComponent(folder)}`;
  log(`code-server ${cs.origin} (pid/pgid ${cs.pid}), log ${path.relative(process.cwd(), cs.logFile)}`);
  return { cs, url, smi };
}
