/**
 * The "Run on GPU <ids>" CodeLens above a module-level `if __name__ == "__main__":` (found by a
 * line scan with a size cap, mainGuard.ts: no parse in the extension host). It runs `gpuPilot.runActiveFile` on that file; it follows the
 * selection, `gpuPilot.run.launcher` and `gpuPilot.run.codeLens` (false hides it), and is hidden in
 * an untrusted workspace.
 */
import * as vscode from "vscode";
import * as config from "../config";
import type { SelectionStore } from "../../../common/src/gpu/selection";
import { log } from "../log";
import { mainGuardLine } from "./mainGuard";
import * as settings from "./settings";

/** Where the run CodeLens is offered. */
export const RUN_CODELENS_SELECTOR: vscode.DocumentSelector = [
  { language: "python", scheme: "file" },
  { language: "python", scheme: "untitled" },
];
/** The command the lens runs. */
export const RUN_COMMAND = "gpuPilot.runActiveFile";

/** The lens title for a selection and launcher: `Run on GPU 0,1`, `Run on GPU 1 with torchrun`, `Run on GPUs...`. */
export function lensTitle(ids: readonly string[], launcher: string): string {
  const base = ids.length > 0 ? `Run on GPU ${ids.join(",")}` : "Run on GPUs...";
  return launcher === "python" ? base : `${base} with ${launcher}`;
}

/** Provides the lens; {@link refresh} asks VS Code to ask again. */
export class RunCodeLensProvider implements vscode.CodeLensProvider {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when the lenses may have changed (selection, settings, trust). */
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(private readonly selection: SelectionStore) {}

  /** Makes VS Code ask for the lenses again. */
  refresh(): void {
    this.emitter.fire();
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    if (!settings.codeLens(doc.uri) || !vscode.workspace.isTrusted) return [];
    let line: number | undefined;
    try {
      line = mainGuardLine(doc.getText());
    } catch (e) {
      log.warn(`CodeLens: could not scan ${doc.uri.toString()}: ${(e as Error).message}`);
      return [];
    }
    if (line === undefined) return [];
    const launcher = settings.launcher(doc.uri);
    const ids = this.selection.get();
    const range = new vscode.Range(line, 0, line, 0);
    return [
      new vscode.CodeLens(range, {
        title: lensTitle(ids, launcher),
        command: RUN_COMMAND,
        arguments: [doc.uri],
        tooltip: `Run this file with ${launcher} on ${ids.length > 0 ? `GPU ${ids.join(",")}` : "GPUs you pick"} (GPU Pilot)`,
      }),
    ];
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** Registers the provider for Python files and refreshes it on selection, setting and trust changes. */
export function registerRunCodeLens(selection: SelectionStore): vscode.Disposable[] {
  const provider = new RunCodeLensProvider(selection);
  const sub = selection.onDidChange(() => provider.refresh());
  return [
    provider,
    vscode.languages.registerCodeLensProvider(RUN_CODELENS_SELECTOR, provider),
    { dispose: () => sub.dispose() },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (config.affects(e, settings.CODELENS_KEYS)) provider.refresh();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => provider.refresh()),
  ];
}
