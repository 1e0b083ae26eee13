/**
 * Entry point: activate / deactivate only; everything else lives in {@link Ctx}.
 *
 * `activate()` returns the {@link GpuPilotApi} (see api.ts): selection, inventory, refresh and the
 * last run, for tests and other extensions.
 */
import type * as vscode from "vscode";
import type { GpuPilotApi } from "./api";
import { registerCommands } from "./commands";
import { Ctx } from "./ctx";
import { disposeLog, log } from "./log";

export type { GpuPilotApi, LastRun } from "./api";

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): GpuPilotApi {
  const started = performance.now();
  ctx = new Ctx(context);
  registerCommands(ctx);
  // What is heavy waits for the event loop's next turn (issue 20; VS Code's guidance: activation
  // registers, the work comes later): the language client (dist/lsp.js, loaded by startServer) and
  // one inventory query (dist/execa.js at the first process) so the language server knows the GPUs
  // even while the view is hidden (the view polls only while visible).
  void ctx.startServer(true);
  const current = ctx;
  setImmediate(() => void current.monitor.refresh());
  log.info(`GPU Pilot ${String((context.extension.packageJSON as { version?: unknown }).version ?? "")} activated.`);
  const api = ctx.api();
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
