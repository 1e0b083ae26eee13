/**
 * The commands of package.json, as a map of factories: each takes the {@link Ctx} and returns the
 * handler. ctx.ts registers every id at activation; a command's first call makes its handler (Ctx.command).
 */
import * as vscode from "vscode";
import type { Ctx } from "./ctx";
import { pickFreeGpusCommand, stopProcessCommand, waitForFreeGpusCommand } from "./gpu/actions";
import { installKernelCommand, removeKernelCommand } from "./gpu/kernels";
import { restartKernelCommand } from "./notebook/restartKernel";
import { RESTART_KERNEL_COMMAND } from "../../common/src/kernel/commandIds";
import { pickGpus } from "./gpu/picker";
import { log } from "./log";
import { runActiveFile, runActiveFileWith } from "./run/runActiveFile";
import { SHOW_RULE_DOC_COMMAND, UNSAFE_FIXES_KIND } from "../../common/src/lsp/commandIds";

type Factory = (ctx: Ctx) => (...args: unknown[]) => unknown;

/**
 * Languages whose documents the server offers `source.fixAll.gpuPilot` for: Python (files and
 * notebook cells) and the GPU manifests (ctx.ts's document selector: Dockerfiles, compose files,
 * Kubernetes YAML).
 */
export const FIX_ALL_LANGUAGES: ReadonlySet<string> = new Set([
  "python",
  "dockerfile",
  "dockercompose",
  "yaml",
  "shellscript",
]);

/**
 * Asks the server for the code action `kind` on the active editor and applies it (the safe Fix All,
 * or every fix with the unsafe ones: commandIds.ts UNSAFE_FIXES_KIND); in another language, or
 * with no editor, says what to open instead.
 */
async function applyFixes(kind: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !FIX_ALL_LANGUAGES.has(editor.document.languageId)) {
    void vscode.window.showInformationMessage(
      "GPU Pilot: open a Python file or notebook cell, a Dockerfile, a compose file or Kubernetes YAML to fix.",
    );
    return;
  }
  await vscode.commands.executeCommand("editor.action.codeAction", { kind, apply: "first" });
}

/** Command id → handler factory (package.json's commands: test/unit/client/activation.test.ts compares them). */
const factories = {
  "gpuPilot.refreshGpus": (ctx) => () => ctx.monitor.refresh(),
  "gpuPilot.selectGpus": (ctx) => async () => {
    const picked = await pickGpus(ctx.monitor, ctx.selection.get());
    if (picked !== undefined) await ctx.selection.set(picked);
  },
  "gpuPilot.clearSelection": (ctx) => () => ctx.selection.set([]),
  "gpuPilot.pickFreeGpus": (ctx) => () => pickFreeGpusCommand(ctx.monitor, ctx.selection, {}, ctx.claims),
  "gpuPilot.waitForFreeGpus": (ctx) => () => waitForFreeGpusCommand(ctx.monitor, ctx.selection, ctx.claims),
  "gpuPilot.showHistory": (ctx) => (node?: unknown) => ctx.historyPanel.show(node),
  "gpuPilot.stopProcess": (ctx) => (node?: unknown) => stopProcessCommand(ctx.monitor, node),
  "gpuPilot.runActiveFile": (ctx) => (uri?: unknown) => runActiveFile(ctx, uri instanceof vscode.Uri ? uri : undefined),
  "gpuPilot.runActiveFileWith": (ctx) => (uri?: unknown) =>
    runActiveFileWith(ctx, uri instanceof vscode.Uri ? uri : undefined),
  "gpuPilot.restartServer": (ctx) => async () => {
    log.info("Restarting the language server (GPU Pilot: Restart Server).");
    await ctx.restartServer();
  },
  "gpuPilot.showOutput": () => () => log.show(),
  "gpuPilot.slurm.submit": (ctx) => (uri?: unknown) => ctx.slurm.submit(uri instanceof vscode.Uri ? uri : undefined),
  "gpuPilot.slurm.refresh": (ctx) => () => ctx.slurm.refresh(),
  "gpuPilot.slurm.cancel": (ctx) => (node?: unknown) => ctx.slurm.cancel(node),
  "gpuPilot.slurm.openOutput": (ctx) => (node?: unknown) => ctx.slurm.openOutput(node),
  "gpuPilot.fixAll": () => () => applyFixes("source.fixAll.gpuPilot"),
  "gpuPilot.applyUnsafeFixes": () => () => applyFixes(UNSAFE_FIXES_KIND),
  "gpuPilot.installKernel": (ctx) => () => installKernelCommand(ctx.selection),
  "gpuPilot.removeKernel": () => () => removeKernelCommand(),
  [RESTART_KERNEL_COMMAND]: (ctx) => (uri?: unknown, devices?: unknown) =>
    restartKernelCommand(
      { selection: ctx.selection, kernels: ctx.notebookKernels, dataDir: () => ctx.jupyterDataDir() },
      uri,
      devices,
    ),
  [SHOW_RULE_DOC_COMMAND]: (ctx) => async (code?: unknown) => {
    let rule = typeof code === "string" && /^GPU\d{3}$/.test(code) ? code : undefined;
    if (!rule) {
      const docs = vscode.Uri.joinPath(ctx.extCtx.extensionUri, "docs", "rules");
      const files = await vscode.workspace.fs.readDirectory(docs).then(
        (e) => e.map(([n]) => n),
        () => [] as string[],
      );
      rule = await vscode.window.showQuickPick(
        files
          .filter((n) => /^GPU\d{3}\.md$/.test(n))
          .map((n) => n.slice(0, 6))
          .sort(),
        { title: "GPU Pilot: rule documentation" },
      );
      if (!rule) return;
    }
    const page = vscode.Uri.joinPath(ctx.extCtx.extensionUri, "docs", "rules", `${rule}.md`);
    await vscode.commands.executeCommand("markdown.showPreview", page);
  },
} satisfies Record<string, Factory>;

/** A command id of {@link commands}. */
export type CommandId = keyof typeof factories;
/** Command id → handler factory. */
export const commands: Record<CommandId, Factory> = factories;
