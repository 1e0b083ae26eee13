/**
 * Status bar item showing the selection (`$(circuit-board) GPU 1` / `$(circuit-board) GPU: none`);
 * clicking it runs `gpuPilot.selectGpus`.
 */
import * as vscode from "vscode";
import type { GpuMonitor } from "./monitor";
import { selectionLabel, type SelectionStore, unknownEntries } from "./selection";

/** Creates, shows and keeps updated the selection status bar item. @returns what to dispose. */
export function createSelectionStatusBar(selection: SelectionStore, monitor: GpuMonitor): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem("gpuPilot.selection", vscode.StatusBarAlignment.Left, 100);
  item.name = "GPU Pilot: GPU Selection";
  item.command = "gpuPilot.selectGpus";
  const update = () => {
    const ids = selection.get();
    const gpus = monitor.inventory?.gpus;
    const unknown = gpus ? unknownEntries(ids, gpus) : [];
    item.text = `$(circuit-board) ${selectionLabel(ids)}`;
    item.tooltip =
      ids.length === 0
        ? "No GPU selected for runs. Click to choose GPUs."
        : `Runs get CUDA_VISIBLE_DEVICES=${ids.join(",")}.` +
          (unknown.length > 0 ? ` Not on this machine: ${unknown.join(", ")}.` : "") +
          " Click to change.";
    item.backgroundColor = unknown.length > 0 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  };
  update();
  item.show();
  return [item, selection.onDidChange(update), monitor.onDidChange(update)];
}
