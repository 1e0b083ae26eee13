/**
 * Entry point: activate / deactivate only. What activation registers is {@link Shell} (shell.ts,
 * this bundle: dist/client.js); the code behind it is dist/features.js (features.ts, ctx.ts), loaded
 * at its first use and in any case a turn of the event loop after activation (for load time).
 *
 * `activate()` returns the {@link GpuPilotApi} (see api.ts): selection, inventory, refresh and the
 * last run, for tests and other extensions.
 */
import type * as vscode from "vscode";
import type { GpuPilotApi } from "./api";
import { disposeLog, log } from "./log";
import { Shell } from "./shell";

export type { GpuPilotApi, LastRun } from "./api";
/** For dist/features.js only (shared.ts): the modules it takes from this bundle. */
export { shared as __gpuPilotShared } from "./shared";

let shell: Shell | undefined;

export function activate(context: vscode.ExtensionContext): GpuPilotApi {
  const started = performance.now();
  shell = new Shell(context);
  // What is heavy waits for the event loop's next turn (VS Code's guidance: activation
  // registers, the work comes later): the features (dist/features.js), which queue the language
  // server's start (dist/lsp.js, a turn later again), and one inventory query (dist/execa.js at the
  // first process) so the language server knows the GPUs even while the view is hidden.
  const current = shell;
  setImmediate(() => current.afterActivation());
  log.info(`GPU Pilot ${String((context.extension.packageJSON as { version?: unknown }).version ?? "")} activated.`);
  const api = shell.api();
  api.activationMs = performance.now() - started;
  log.info(`Activated in ${api.activationMs.toFixed(1)} ms.`);
  return api;
}

export async function deactivate(): Promise<void> {
  const current = shell;
  shell = undefined;
  await current?.dispose();
  disposeLog();
}
