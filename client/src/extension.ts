/**
 * Entry point: activate / deactivate only. What activation registers is {@link Shell} (shell.ts,
 * this bundle: dist/client.js); the code behind it is dist/features.js (features.ts, ctx.ts), loaded
 * at its first use and in any case a turn of the event loop after activation (for load time).
 *
 * `activate()` returns the {@link GpuPilotPublicApi} (publicApi.ts, docs/extension/api.md): the
 * selection, its change event and the environment of a run, which is all other extensions may rely
 * on. With GPU_PILOT_TEST_HOOKS=1 in the extension host's environment (the e2e runners, the
 * benchmark, the unit tests) the object also holds api.ts's test hooks.
 */
import type * as vscode from "vscode";
import { disposeLog, log } from "./log";
import { createPublicApi, type GpuPilotPublicApi, type GpuPilotTestApi, testHooksEnabled } from "./publicApi";
import { Shell } from "./shell";

export type { GpuPilotApi, LastRun } from "./api";
export type { GpuPilotPublicApi, GpuPilotTestApi, GpuRunEnvironment } from "./publicApi";
/** For dist/features.js only (shared.ts): the modules it takes from this bundle. */
export { shared as __gpuPilotShared } from "./shared";

let shell: Shell | undefined;

export function activate(context: vscode.ExtensionContext): GpuPilotPublicApi | GpuPilotTestApi {
  const started = performance.now();
  shell = new Shell(context);
  // What is heavy waits for the event loop's next turn (VS Code's guidance: activation
  // registers, the work comes later): the features (dist/features.js), which queue the language
  // server's start (dist/lsp.js, a turn later again), and one inventory query (dist/execa.js at the
  // first process) so the language server knows the GPUs even while the view is hidden.
  const current = shell;
  setImmediate(() => current.afterActivation());
  log.info(`GPU Pilot ${String((context.extension.packageJSON as { version?: unknown }).version ?? "")} activated.`);
  const publicApi = createPublicApi(current.selection, () => current.load().runEnvironment(), context.subscriptions);
  const hooks = testHooksEnabled() ? current.api() : undefined;
  const activationMs = performance.now() - started;
  log.info(`Activated in ${activationMs.toFixed(1)} ms.`);
  if (!hooks) return publicApi;
  hooks.activationMs = activationMs;
  return Object.assign(hooks, publicApi);
}

export async function deactivate(): Promise<void> {
  const current = shell;
  shell = undefined;
  await current?.dispose();
  disposeLog();
}
