/**
 * The GPU quick pick (canSelectMany): lists the GPUs with their live numbers, refreshed while open.
 */
import * as vscode from "vscode";
import type { GpuMonitor } from "./monitor";
import type { Gpu } from "./nvidiaSmi";
import { appsOf, gpuDescription, gpuLabel } from "./present";
import { isSelected, orderSelection } from "./selection";
import { log } from "../log";

interface GpuPickItem extends vscode.QuickPickItem {
  id: string;
}

function toItem(gpu: Gpu, monitor: GpuMonitor): GpuPickItem {
  const apps = appsOf(gpu, monitor.inventory?.apps ?? []);
  return {
    id: String(gpu.index),
    label: gpuLabel(gpu),
    description: gpuDescription(gpu),
    detail: `${gpu.uuid} · ${gpu.pciBusId}` + (apps.length > 0 ? ` · ${apps.length} process${apps.length === 1 ? "" : "es"}` : ""),
  };
}

/**
 * Asks which GPUs to use, starting from `current` (indices or UUIDs).
 * @returns the picked GPUs as index strings in index order (possibly empty), or undefined when the
 *   user cancelled or there is no GPU to choose from (then a warning says why).
 */
export async function pickGpus(monitor: GpuMonitor, current: readonly string[], title = "Select GPUs for runs (CUDA_VISIBLE_DEVICES)"): Promise<string[] | undefined> {
  if (!monitor.inventory) await monitor.refresh();
  if (!monitor.inventory || monitor.inventory.gpus.length === 0) {
    const why = monitor.problem || "nvidia-smi lists no GPUs";
    log.warn(`GPU pick: nothing to choose from: ${why}`);
    void vscode.window.showWarningMessage(`GPU Pilot: no GPUs to choose from. ${why}`, "Show Output").then((c) => {
      if (c) log.show();
    });
    return undefined;
  }

  const pick = vscode.window.createQuickPick<GpuPickItem>();
  pick.title = title;
  pick.placeholder = "Tick the GPUs a run may use, then press Enter";
  pick.canSelectMany = true;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let chosen = new Set(
    monitor.inventory.gpus.filter((g) => isSelected(g, current)).map((g) => String(g.index)),
  );
  const fill = () => {
    const gpus = monitor.inventory?.gpus ?? [];
    const items = gpus.map((g) => toItem(g, monitor));
    pick.items = items;
    pick.selectedItems = items.filter((i) => chosen.has(i.id));
  };
  fill();

  return new Promise<string[] | undefined>((resolve) => {
    let accepted = false;
    const subs = [
      pick.onDidChangeSelection((sel) => (chosen = new Set(sel.map((i) => i.id)))),
      monitor.onDidChange(fill),
      pick.onDidAccept(() => {
        accepted = true;
        resolve(orderSelection([...chosen], monitor.inventory?.gpus ?? []));
        pick.hide();
      }),
      pick.onDidHide(() => {
        if (!accepted) resolve(undefined);
        for (const s of subs) s.dispose();
        pick.dispose();
      }),
    ];
    pick.show();
    pick.busy = true;
    void monitor.refresh().finally(() => (pick.busy = false));
  });
}
