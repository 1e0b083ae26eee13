/**
 * Entry point: activate / deactivate only. `activate()` makes the {@link Ctx} (ctx.ts), which
 * registers everything with its real code; what is heavy waits for the event loop's next turn.
 *
 * `activate()` returns the {@link GpuPilotPublicApi} (publicApi.ts, docs/extension/api.md): the
 * selection, its change event and the environment of a run, which is all other extensions may rely
 * on. With GPU_PILOT_TEST_HOOKS=1 in the extension host's environment (the e2e runners, the
 * benchmark, the unit tests) the object also holds api.ts's test hooks.
 */
import type * as vscode from "vscode";
import { Ctx, writeLanguageClientCodeCache } from "./ctx";
import { disposeLog, log } from "./log";
import { createPublicApi, type GpuPilotPublicApi, type GpuPilotTestApi, testHooksEnabled } from "./publicApi";

export type { GpuPilotApi, LastRun } from "./api";
export type { GpuPilotPublicApi, GpuPilotTestApi, GpuRunEnvironment } from "./publicApi";

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): GpuPilotPublicApi | GpuPilotTestApi {
  const started = performance.now();
  const current = (ctx = new Ctx(context));
  // What is heavy waits for the event loop's next turn (VS Code's guidance: activation
  // registers, the work comes later): one inventory query (execa's code runs at the first
  // process), so the language server knows the GPUs even while the view is hidden, and the
  // language server's start (queued now, so that a request made meanwhile waits for it; it loads
  // dist/lsp.js then).
  setImmediate(() => current.afterActivation());
  void current.startServer(true);
  log.info(`GPU Pilot ${String((context.extension.packageJSON as { version?: unknown }).version ?? "")} activated.`);
  const publicApi = createPublicApi(current.selection, () => current.runEnvironment(), context.subscriptions);
  const hooks = testHooksEnabled() ? current.api() : undefined;
  const activationMs = performance.now() - started;
  log.info(`Activated in ${activationMs.toFixed(1)} ms.`);
  if (!hooks) return publicApi;
  hooks.activationMs = activationMs;
  return Object.assign(hooks, publicApi);
}

export async function deactivate(): Promise<void> {
  writeLanguageClientCodeCache();
  const current = ctx;
  ctx = undefined;
  await current?.dispose();
  disposeLog();
}
