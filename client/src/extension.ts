/**
 * Entry point: activate / deactivate only. `activate()` makes the {@link Ctx} (ctx.ts), which
 * registers everything with its real code; what is heavy waits for the event loop's next turn.
 *
 * `activate()` returns the {@link GpuPilotApi} (see api.ts): selection, inventory, refresh and the
 * last run, for tests and other extensions.
 */
import type * as vscode from "vscode";
import type { GpuPilotApi } from "./api";
import { Ctx } from "./ctx";
import { disposeLog, log } from "./log";

export type { GpuPilotApi, LastRun } from "./api";

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): GpuPilotApi {
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
  const api = current.api();
  api.activationMs = performance.now() - started;
  log.info(`Activated in ${api.activationMs.toFixed(1)} ms.`);
  return api;
}

export async function deactivate(): Promise<void> {
  const current = ctx;
  ctx = undefined;
  await current?.dispose();
  disposeLog();
}
