/**
 * The `gpuPilot.gpus` view: one checkable node per GPU (ticked = in the selection), its compute
 * processes as children, and a calm warning row when nvidia-smi failed.
 */
import * as vscode from "vscode";
import type { GpuMonitor } from "./monitor";
import type { ComputeApp, Gpu } from "./nvidiaSmi";
import { appLabel, appsOf, gpuDescription, gpuLabel, gpuTooltipMarkdown, type LoadLevel, loadLevel } from "./present";
import { isSelected, type SelectionStore, toggleGpu } from "./selection";
import { log } from "../log";

/** View id in package.json. */
export const VIEW_ID = "gpuPilot.gpus";

/** A row of the view. */
export type GpuTreeNode =
  | { kind: "gpu"; gpu: Gpu; apps: ComputeApp[] }
  | { kind: "app"; gpu: Gpu; app: ComputeApp }
  | { kind: "message"; id: string; label: string; detail: string; icon: "warning" | "info" | "loading" };

const LOAD_COLOR: Record<LoadLevel, string | undefined> = {
  low: "charts.green",
  medium: "charts.yellow",
  high: "charts.red",
  unknown: undefined,
};

/** TreeDataProvider of {@link VIEW_ID}, fed by a {@link GpuMonitor} and a {@link SelectionStore}. */
export class GpuTreeProvider implements vscode.TreeDataProvider<GpuTreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<GpuTreeNode | undefined | void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly monitor: GpuMonitor,
    private readonly selection: SelectionStore,
  ) {
    this.disposables.push(monitor.onDidChange(() => this.emitter.fire()), selection.onDidChange(() => this.emitter.fire()));
  }

  getChildren(node?: GpuTreeNode): GpuTreeNode[] {
    if (node) return node.kind === "gpu" ? node.apps.map((app) => ({ kind: "app", gpu: node.gpu, app })) : [];
    const m = this.monitor;
    switch (m.state) {
      case "unknown":
        return [{ kind: "message", id: "message/loading", label: "Reading nvidia-smi...", detail: "", icon: "loading" }];
      case "missing":
        return []; // the view's welcome content (viewsWelcome, when gpuPilot.nvidiaSmiState == missing) explains
      case "failed": {
        const f = m.failure;
        const detail = f?.kind === "failed" ? f.explanation : f?.kind === "timeout" ? `Stopped after ${f.ms} ms (gpuPilot.nvidiaSmiTimeoutMs).` : "";
        return [{ kind: "message", id: "message/failure", label: m.problem || "nvidia-smi failed", detail, icon: "warning" }];
      }
      case "ok": {
        const inv = m.inventory;
        if (!inv) return [];
        const rows: GpuTreeNode[] = inv.gpus.map((gpu) => ({ kind: "gpu", gpu, apps: appsOf(gpu, inv.apps) }));
        if (inv.gpus.length === 0) {
          rows.push({ kind: "message", id: "message/none", label: "nvidia-smi lists no GPUs", detail: "", icon: "info" });
        }
        inv.problems.forEach((p, i) => rows.push({ kind: "message", id: `message/problem/${i}`, label: p, detail: "", icon: "warning" }));
        return rows;
      }
    }
  }

  getTreeItem(node: GpuTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case "gpu": {
        const { gpu, apps } = node;
        const item = new vscode.TreeItem(
          gpuLabel(gpu),
          apps.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `gpu/${gpu.uuid}`;
        item.description = gpuDescription(gpu);
        item.tooltip = new vscode.MarkdownString(gpuTooltipMarkdown(gpu, apps));
        const color = LOAD_COLOR[loadLevel(gpu)];
        item.iconPath = new vscode.ThemeIcon("circuit-board", color ? new vscode.ThemeColor(color) : undefined);
        const ticked = isSelected(gpu, this.selection.get());
        item.checkboxState = {
          state: ticked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
          tooltip: ticked ? `Runs see GPU ${gpu.index} (CUDA_VISIBLE_DEVICES)` : `Tick to let runs use GPU ${gpu.index}`,
        };
        item.contextValue = "gpu";
        return item;
      }
      case "app": {
        const item = new vscode.TreeItem(appLabel(node.app), vscode.TreeItemCollapsibleState.None);
        item.id = `app/${node.gpu.uuid}/${node.app.pid}`;
        item.tooltip = `${node.app.processName}\npid ${node.app.pid} on GPU ${node.gpu.index} (${node.gpu.uuid})`;
        item.iconPath = new vscode.ThemeIcon("server-process");
        item.contextValue = "computeApp";
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.tooltip = [node.label, node.detail, node.icon === "warning" ? "Details: GPU Pilot output channel." : ""].filter(Boolean).join("\n");
        item.iconPath =
          node.icon === "warning"
            ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"))
            : new vscode.ThemeIcon(node.icon === "loading" ? "loading~spin" : "info");
        if (node.icon === "warning") item.command = { command: "gpuPilot.showOutput", title: "Show Output" };
        item.contextValue = "message";
        return item;
      }
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/**
 * Creates the view with its provider; ticking a GPU's checkbox updates the selection (and so the
 * status bar, the language server and later runs). The monitor polls while the view is visible.
 * @returns the TreeView and everything to dispose with it.
 */
export function createGpuTreeView(monitor: GpuMonitor, selection: SelectionStore): { view: vscode.TreeView<GpuTreeNode>; disposables: vscode.Disposable[] } {
  const provider = new GpuTreeProvider(monitor, selection);
  const view = vscode.window.createTreeView<GpuTreeNode>(VIEW_ID, {
    treeDataProvider: provider,
    manageCheckboxStateManually: true,
    showCollapseAll: false,
  });
  const onCheck = view.onDidChangeCheckboxState(async (e) => {
    const gpus = monitor.inventory?.gpus ?? [];
    let ids = selection.get();
    for (const [node, state] of e.items) {
      if (node.kind !== "gpu") continue;
      ids = toggleGpu(ids, node.gpu, state === vscode.TreeItemCheckboxState.Checked, gpus);
    }
    try {
      await selection.set(ids);
    } catch (err) {
      log.error("Could not update the GPU selection", err);
    }
  });
  const visibility = monitor.followVisibility(view);
  return { view, disposables: [provider, view, onCheck, visibility] };
}
