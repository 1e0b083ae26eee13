/**
 * Status bar item: the selection and the chosen GPUs' live load, e.g.
 * `$(circuit-board) GPU 1 · 0% · 3.3/140.4 GiB` (`GPU: none` without a selection); clicking it opens
 * the "Select GPUs..." quick pick. The numbers are as fresh as the monitor's (streamed while the GPU
 * view is visible, else from the last query).
 */
import * as vscode from "vscode";
import type { InventorySource } from "./monitor";
import type { Gpu, Inventory } from "../../../common/src/gpu/nvidiaSmi";
import { indexOfEntry, selectionLabel, type SelectionStore, unknownEntries } from "../../../common/src/gpu/selection";
import { formatMemoryPair, formatPercent, formatTemperature } from "../../../common/src/gpu/units";

/** The GPUs the entries name (MIG devices count as their parent GPU), each once, in index order. */
export function selectedGpus(ids: readonly string[], inv: Inventory | undefined): Gpu[] {
  if (!inv) return [];
  const out: Gpu[] = [];
  for (const id of ids) {
    const index = indexOfEntry(id, inv.gpus, inv.mig ?? []);
    const gpu = inv.gpus.find((g) => g.index === index);
    if (gpu && !out.includes(gpu)) out.push(gpu);
  }
  return out.sort((a, b) => a.index - b.index);
}

/**
 * The load part of the status bar text: `<util>% · <used>/<total>` over the chosen GPUs (highest
 * utilisation, summed memory; units.ts), or "" when nothing is known.
 */
export function loadSummary(gpus: readonly Gpu[]): string {
  const utils = gpus.map((g) => g.utilizationGpuPercent).filter((v): v is number => v !== null);
  const withMem = gpus.filter((g) => g.memoryUsedMiB !== null && g.memoryTotalMiB !== null);
  const parts: string[] = [];
  if (utils.length > 0) parts.push(`${Math.max(...utils)}%`);
  if (withMem.length > 0) {
    const used = withMem.reduce((s, g) => s + (g.memoryUsedMiB ?? 0), 0);
    const total = withMem.reduce((s, g) => s + (g.memoryTotalMiB ?? 0), 0);
    parts.push(formatMemoryPair(used, total));
  }
  return parts.join(" · ");
}

/**
 * Text, tooltip and warning state of the item for a selection and inventory. The tooltip is plain
 * text (a string tooltip is not Markdown: a `- ` list would show its dashes), one line per GPU.
 */
export function statusBarContent(
  ids: readonly string[],
  inv: Inventory | undefined,
): { text: string; tooltip: string; warning: boolean } {
  const unknown = inv ? unknownEntries(ids, inv.gpus, inv.mig ?? []) : [];
  const gpus = selectedGpus(ids, inv);
  const load = ids.length > 0 ? loadSummary(gpus) : "";
  const text = `$(circuit-board) ${selectionLabel(ids)}${load ? ` · ${load}` : ""}`;
  if (ids.length === 0) {
    return { text, tooltip: "No GPU selected for runs. Click to choose GPUs.", warning: false };
  }
  const lines = [
    `Runs, new terminals and Python debug sessions get CUDA_VISIBLE_DEVICES=${ids.join(",")}.`,
    ...(unknown.length > 0 ? ["", `Not on this machine: ${unknown.join(", ")}.`] : []),
    ...(gpus.length > 0 ? [""] : []),
    ...gpus.map(
      (g) =>
        `GPU ${g.index} (${g.name}): ${formatPercent(g.utilizationGpuPercent)} busy · ${formatMemoryPair(g.memoryUsedMiB, g.memoryTotalMiB)} · ${formatTemperature(g.temperatureC)}`,
    ),
    "",
    "Click to change.",
  ];
  return { text, tooltip: lines.join("\n"), warning: unknown.length > 0 };
}

/** Creates, shows and keeps updated the selection status bar item. @returns what to dispose. */
export function createSelectionStatusBar(selection: SelectionStore, monitor: InventorySource): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem("gpuPilot.selection", vscode.StatusBarAlignment.Left, 100);
  item.name = "GPU Pilot: GPU Selection";
  item.command = "gpuPilot.selectGpus";
  let last = "";
  const update = () => {
    const c = statusBarContent(selection.get(), monitor.inventory);
    const key = JSON.stringify(c);
    if (key === last) return;
    last = key;
    item.text = c.text;
    item.tooltip = c.tooltip;
    item.backgroundColor = c.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  };
  update();
  item.show();
  return [item, selection.onDidChange(update), monitor.onDidChange(update)];
}
