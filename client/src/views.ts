/**
 * What the entry bundle (dist/client.js) registers for the views and providers whose code lives in
 * dist/features.js (for load time): the ids and options, and stand-in providers that VS Code
 * gets at activation. Each stand-in loads the features (`load()`, a synchronous `require`) the first
 * time VS Code asks it for something, then answers with the real provider's answer; events of the
 * real provider (onDidChangeTreeData, onDidChangeCodeLenses) are relayed once it is connected.
 */
import * as vscode from "vscode";
import { log } from "./log";
import { findProgram } from "../../common/src/run/which";

/** The GPU view (gpu/tree.ts). */
export const GPU_VIEW_ID = "gpuPilot.gpus";
/** The GPU view's TreeViewOptions besides the provider. */
export const GPU_VIEW_OPTIONS = { manageCheckboxStateManually: true, showCollapseAll: true } as const;
/** The dashboard webview view (gpu/dashboard.ts). */
export const DASHBOARD_VIEW_ID = "gpuPilot.dashboard";
/** The Slurm view (slurm/view.ts). */
export const SLURM_VIEW_ID = "gpuPilot.slurm";
/** The Slurm view's TreeViewOptions besides the provider. */
export const SLURM_VIEW_OPTIONS = { showCollapseAll: false } as const;
/** Context key: sinfo is on PATH (the Slurm view's `when`). */
export const SLURM_CONTEXT_KEY = "gpuPilot.slurmAvailable";
/** Where the run CodeLens is offered (run/codeLens.ts). */
export const RUN_CODELENS_SELECTOR: vscode.DocumentSelector = [
  { language: "python", scheme: "file" },
  { language: "python", scheme: "untitled" },
];
/** Where the Slurm submit CodeLens is offered (slurm/submit.ts). */
export const SUBMIT_CODELENS_SELECTOR: vscode.DocumentSelector = [
  { language: "shellscript", scheme: "file" },
  { scheme: "file", pattern: "**/*.{sbatch,slurm}" },
];

/** A tree view created at activation whose provider comes later (see {@link LateTreeProvider}). */
export interface LateView<T> {
  readonly view: vscode.TreeView<T>;
  /** Makes `provider` the one that answers; its onDidChangeTreeData is relayed. @returns the relay's subscription. */
  connect(provider: vscode.TreeDataProvider<T>): vscode.Disposable;
}

/**
 * The TreeDataProvider VS Code gets at activation: getChildren and getTreeItem call `load()` (which
 * connects the real provider, synchronously) the first time, then answer with the real provider.
 * It has no getParent nor resolveTreeItem: neither has the real ones (gpu/tree.ts, slurm/view.ts).
 */
export class LateTreeProvider<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  private readonly relay = new vscode.EventEmitter<T | T[] | undefined | null | void>();
  readonly onDidChangeTreeData = this.relay.event;
  private target: vscode.TreeDataProvider<T> | undefined;

  constructor(private readonly load: () => void) {}

  /** See {@link LateView.connect}. */
  connect(provider: vscode.TreeDataProvider<T>): vscode.Disposable {
    this.target = provider;
    // No change to announce now: VS Code has read nothing but through this object, which loads first.
    return provider.onDidChangeTreeData?.((e) => this.relay.fire(e)) ?? { dispose: () => undefined };
  }

  private real(): vscode.TreeDataProvider<T> | undefined {
    if (!this.target) this.load();
    return this.target;
  }

  getChildren(element?: T): vscode.ProviderResult<T[]> {
    return this.real()?.getChildren(element) ?? [];
  }

  getTreeItem(element: T): vscode.TreeItem | Thenable<vscode.TreeItem> {
    const real = this.real();
    if (!real) throw new Error("GPU Pilot: the view's provider is not loaded");
    return real.getTreeItem(element);
  }

  dispose(): void {
    this.relay.dispose();
  }
}

/** Creates a tree view at activation with a {@link LateTreeProvider}. @returns the view, its late connection and what to dispose. */
export function createLateTreeView<T>(
  id: string,
  options: Omit<vscode.TreeViewOptions<T>, "treeDataProvider">,
  load: () => void,
): LateView<T> & { disposables: vscode.Disposable[] } {
  const provider = new LateTreeProvider<T>(load);
  const view = vscode.window.createTreeView<T>(id, { ...options, treeDataProvider: provider });
  return { view, connect: (p) => provider.connect(p), disposables: [view, provider] };
}

/**
 * The CodeLensProvider VS Code gets at activation: provideCodeLenses loads the features the first
 * time; `withEvents` gives it an onDidChangeCodeLenses relayed from the real provider (only the run
 * CodeLens has one).
 */
export class LateCodeLensProvider implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly relay: vscode.EventEmitter<void> | undefined;
  readonly onDidChangeCodeLenses: vscode.Event<void> | undefined;
  private target: vscode.CodeLensProvider | undefined;

  constructor(
    private readonly load: () => void,
    withEvents: boolean,
  ) {
    this.relay = withEvents ? new vscode.EventEmitter<void>() : undefined;
    this.onDidChangeCodeLenses = this.relay?.event;
  }

  /** Makes `provider` the one that answers. @returns the relay's subscription. */
  connect(provider: vscode.CodeLensProvider): vscode.Disposable {
    this.target = provider;
    return (this.relay && provider.onDidChangeCodeLenses?.(() => this.relay?.fire())) || { dispose: () => undefined };
  }

  provideCodeLenses(
    document: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): vscode.ProviderResult<vscode.CodeLens[]> {
    if (!this.target) this.load();
    return this.target?.provideCodeLenses(document, token) ?? [];
  }

  dispose(): void {
    this.relay?.dispose();
  }
}

/**
 * Whether sinfo is on PATH (a synchronous look along PATH, no process); sets the context key
 * {@link SLURM_CONTEXT_KEY} (the view's `when`) and logs the answer. Runs at activation (shell.ts).
 */
export function probeSlurm(): boolean {
  const available = findProgram("sinfo", { pathEnv: process.env.PATH }) !== undefined;
  void vscode.commands.executeCommand("setContext", SLURM_CONTEXT_KEY, available);
  log.info(
    available
      ? "Slurm: sinfo found on PATH; the Slurm view is available."
      : "Slurm: no sinfo on PATH; the Slurm view is hidden.",
  );
  return available;
}
