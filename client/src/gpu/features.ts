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
import { createGpuTreeView, treeRows } from "./tree";

const MUTATOR_TYPE: Record<number, "replace" | "append" | "prepend"> = { 1: "replace", 2: "append", 3: "prepend" };

/**
 * Creates the GPU view, the status bar item, the terminal environment and the debug configuration
 * provider. With `claims` the view shows who claimed each GPU and Pick Free GPUs claims what it picks.
 * `extCtx.environmentVariableCollection` may be absent (stand-in contexts): terminals are
 * then left alone.
 * @returns what to dispose (push into `ExtensionContext.subscriptions`) and the API part.
 */
export function createGpuFeatures(
  extCtx: vscode.ExtensionContext,
  monitor: GpuMonitor,
  selection: SelectionStore,
  claims?: ClaimKeeper,
): { disposables: vscode.Disposable[]; api: GpuViewApi; dashboard: GpuDashboard } {
  const tree = createGpuTreeView(monitor, selection, claims);
  const dash = registerGpuDashboard(extCtx.extensionUri, monitor, selection, extCtx.workspaceState);
  const collection = (extCtx as { environmentVariableCollection?: vscode.GlobalEnvironmentVariableCollection })
    .environmentVariableCollection;
  const env = registerSelectionEnvironment(collection, selection, monitor);
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
  return {
    disposables: [
      ...tree.disposables,
      ...dash.disposables,
      ...createSelectionStatusBar(selection, monitor),
      ...env.disposables,
    ],
    api,
    dashboard: dash.dashboard,
  };
}
