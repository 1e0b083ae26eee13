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
  // One inventory query at start so the language server knows the GPUs even while the view is
  // hidden (the view polls only while visible).
  void ctx.monitor.refresh();
  void ctx.startServer();
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
