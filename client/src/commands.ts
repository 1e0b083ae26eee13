/**
 * The commands of package.json, as a map of factories: each takes the {@link Ctx} and returns the
 * handler. {@link registerCommands} registers them all and pushes them into
 * `ExtensionContext.subscriptions`.
 */
import * as vscode from "vscode";
import type { Ctx } from "./ctx";
import { pickGpus } from "./gpu/picker";
import { log } from "./log";
import { runActiveFile } from "./run/runActiveFile";

type Factory = (ctx: Ctx) => (...args: unknown[]) => unknown;

/** Command id → handler factory. */
export const commands: Record<string, Factory> = {
  "gpuPilot.refreshGpus": (ctx) => () => ctx.monitor.refresh(),
  "gpuPilot.selectGpus": (ctx) => async () => {
    const picked = await pickGpus(ctx.monitor, ctx.selection.get());
    if (picked !== undefined) await ctx.selection.set(picked);
  },
  "gpuPilot.clearSelection": (ctx) => () => ctx.selection.set([]),
  "gpuPilot.runActiveFile": (ctx) => (uri?: unknown) => runActiveFile(ctx, uri instanceof vscode.Uri ? uri : undefined),
  "gpuPilot.restartServer": (ctx) => async () => {
    log.info("Restarting the language server (GPU Pilot: Restart Server).");
    await ctx.restartServer();
  },
  "gpuPilot.showOutput": () => () => log.show(),
};

/** Registers every command of {@link commands}; errors are logged and shown once, calmly. */
export function registerCommands(ctx: Ctx): void {
  for (const [id, factory] of Object.entries(commands)) {
    const handler = factory(ctx);
    ctx.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (e) {
          log.error(`Command ${id} failed`, e);
          void vscode.window.showErrorMessage(`GPU Pilot: ${(e as Error).message ?? String(e)}`);
          return undefined;
        }
      }),
    );
  }
}
