/**
 * Wires the GPU side of the extension: the view, the dashboard (dashboard.ts), the status bar item, the selection in terminals
 * and Python debug sessions; and the part of the API (api.ts, {@link GpuViewApi}) that reads them.
 */
import * as vscode from "vscode";
import type { GpuViewApi } from "../api";
import { pickFreeGpusCommand } from "./actions";
import type { ClaimKeeper } from "../../../common/src/gpu/claimKeeper";
import { type GpuDashboard, registerGpuDashboard } from "./dashboard";
import { registerSelectionEnvironment } from "./environment";
import type { GpuMonitor } from "./monitor";
import type { SelectionStore } from "../../../common/src/gpu/selection";
import { createSelectionStatusBar, statusBarContent } from "./statusBar";
import { createGpuTreeView, type GpuTreeNode, treeRows } from "./tree";
import type { LateView } from "../views";

const MUTATOR_TYPE: Record<number, "replace" | "append" | "prepend"> = { 1: "replace", 2: "append", 3: "prepend" };

/** What the entry bundle (shell.ts) sets up for the GPU side at activation, before dist/features.js is loaded. */
export interface GpuEarly {
  /** The GPU view, created at activation. */
  view: LateView<GpuTreeNode>;
  /** The terminal environment and the debug configuration provider (registerSelectionEnvironment, at activation). */
  env: ReturnType<typeof registerSelectionEnvironment>;
}

/**
 * Creates the GPU view, the status bar item, the terminal environment and the debug configuration
 * provider. With `claims` the view shows who claimed each GPU and Pick Free GPUs claims what it picks.
 * `extCtx.environmentVariableCollection` may be absent (stand-in contexts): terminals are
 * then left alone. With `early` (the extension: shell.ts) the view, the dashboard's registration,
 * the status bar item and the environment exist already: the view gets its provider, the dashboard
 * its object.
 * @returns what to dispose (push into `ExtensionContext.subscriptions`) and the API part.
 */
export function createGpuFeatures(
  extCtx: vscode.ExtensionContext,
  monitor: GpuMonitor,
  selection: SelectionStore,
  early?: GpuEarly,
  claims?: ClaimKeeper,
): { disposables: vscode.Disposable[]; api: GpuViewApi; dashboard: GpuDashboard } {
  const tree = createGpuTreeView(monitor, selection, early?.view, claims);
  const dash = registerGpuDashboard(
    extCtx.extensionUri,
    monitor,
    selection,
    extCtx.workspaceState,
    early !== undefined,
  );
  const collection = (extCtx as { environmentVariableCollection?: vscode.GlobalEnvironmentVariableCollection })
    .environmentVariableCollection;
  const env = early?.env ?? registerSelectionEnvironment(collection, selection, monitor);
  const api: GpuViewApi = {
    gpuTreeProvider: tree.provider as vscode.TreeDataProvider<unknown>,
    getTreeRows: () => treeRows(tree.provider),
    getProcesses: () => [...(monitor.inventory?.processes ?? [])],
    pickFreeGpus: (policy) => pickFreeGpusCommand(monitor, selection, policy ?? {}, claims),
    getTerminalEnvironment: () => {
      const out: Record<string, { value: string; type: "replace" | "append" | "prepend" }> = {};
      collection?.forEach((name, m) => (out[name] = { value: m.value, type: MUTATOR_TYPE[m.type] ?? "replace" }));
      return out;
    },
    resolveDebugConfiguration: async (configuration, folder) =>
      env.provider.resolveDebugConfiguration(folder, configuration),
    getStatusBarText: () => statusBarContent(selection.get(), monitor.inventory).text,
    getMonitorStatus: () => ({
      streaming: monitor.isStreaming,
      streamPid: monitor.streamPid,
      notices: monitor.notices.map((n) => n.message),
    }),
    getDashboardState: () => dash.dashboard.getState(),
    clickInDashboard: (target) => dash.dashboard.click(target),
  };
  // Early, the status bar item and the environment belong to the entry bundle (their disposables too).
  const own = early ? [] : [...createSelectionStatusBar(selection, monitor), ...env.disposables];
  return { disposables: [...tree.disposables, ...dash.disposables, ...own], api, dashboard: dash.dashboard };
}
