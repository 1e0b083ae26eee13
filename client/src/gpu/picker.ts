/**
 * The "Select GPUs..." quick pick (canSelectMany): GPUs and MIG devices with their live numbers
 * (the monitor streams while it is open); free memory, processes and warnings in the detail line.
 */
import * as vscode from "vscode";
import * as config from "../config";
import type { GpuMonitor } from "./monitor";
import type { Gpu, MigDevice } from "../../../common/src/gpu/nvidiaSmi";
import { appsOf, gpuLabel, gpuRowDescription, gpuWarnings } from "./present";
import { isMigSelected, isSelected, normalizeSelection, type SelectBy } from "../../../common/src/gpu/selection";
import { formatFree } from "../../../common/src/gpu/units";
import { log } from "../log";

interface GpuPickItem extends vscode.QuickPickItem {
  /** The selection entry this item adds: an index string for a GPU, the UUID of a MIG device. */
  id: string;
}

function gpuItem(gpu: Gpu, monitor: GpuMonitor): GpuPickItem {
  const inv = monitor.inventory;
  const apps = appsOf(gpu, inv?.apps ?? []);
  const migCount = (inv?.mig ?? []).filter((m) => m.gpuUuid === gpu.uuid).length;
  const users = [...new Set(apps.map((a) => monitor.processOf(a.pid)?.user ?? "unknown"))];
  const warnings = gpuWarnings(gpu, inv?.apps ?? [], migCount);
  return {
    id: String(gpu.index),
    label: gpuLabel(gpu),
    description: gpuRowDescription(gpu),
    // Short enough for the quick pick's default width (600 px): what matters for the choice, free
    // memory (units.ts) and who runs there; the UUID and PCI bus ID are in the GPU view's tooltip.
    detail: [
      formatFree(gpu),
      ...(apps.length > 0
        ? [
            `${apps.length} process${apps.length === 1 ? "" : "es"} (${users.map((u) => (u === "unknown" ? "user unknown" : u)).join(", ")})`,
          ]
        : []),
      ...warnings.map((w) => `$(warning) ${w}`),
    ].join(" · "),
  };
}

function migItem(mig: MigDevice): GpuPickItem {
  return {
    id: mig.uuid,
    label: `$(symbol-namespace) MIG ${mig.profile} on GPU ${mig.gpuIndex} (device ${mig.device})`,
    description: mig.uuid,
    detail: "Selected by UUID: CUDA_VISIBLE_DEVICES then holds UUIDs only",
  };
}

/**
 * Asks which GPUs (and MIG devices) to use, starting from `current` (indices or UUIDs).
 * @returns the picked entries in index order, written per `selectBy` (default `gpuPilot.selectBy`;
 *   UUIDs once a MIG device is picked), possibly empty; undefined when the user cancelled or there
 *   is no GPU to choose from (then a warning says why).
 */
export async function pickGpus(
  monitor: GpuMonitor,
  current: readonly string[],
  title = "Select GPUs for runs, terminals and debugging (CUDA_VISIBLE_DEVICES)",
  selectBy: SelectBy = config.selectBy(),
): Promise<string[] | undefined> {
  if (!monitor.inventory) await monitor.refresh();
  if (!monitor.inventory || monitor.inventory.gpus.length === 0) {
    const why = monitor.problem || "nvidia-smi lists no GPUs";
    log.warn(`GPU pick: nothing to choose from: ${why}`);
    void vscode.window.showWarningMessage(`GPU Pilot: no GPUs to choose from. ${why}`, "Show Output").then((c) => {
      if (c) log.show();
    });
    return undefined;
  }

  const hold = monitor.hold(); // live numbers while open
  const pick = vscode.window.createQuickPick<GpuPickItem>();
  pick.title = title;
  pick.placeholder = "Tick the GPUs a run may use, then press Enter";
  pick.canSelectMany = true;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  const inv0 = monitor.inventory;
  let chosen = new Set([
    ...inv0.gpus.filter((g) => isSelected(g, current)).map((g) => String(g.index)),
    ...(inv0.mig ?? []).filter((m) => isMigSelected(m, current)).map((m) => m.uuid),
  ]);
  let shown = "";
  const fill = () => {
    const inv = monitor.inventory;
    if (!inv) return;
    const items: GpuPickItem[] = [];
    for (const g of inv.gpus) {
      items.push(gpuItem(g, monitor));
      for (const m of (inv.mig ?? []).filter((d) => d.gpuUuid === g.uuid)) items.push(migItem(m));
    }
    const key = JSON.stringify(items);
    if (key === shown) return;
    shown = key;
    const active = pick.activeItems[0]?.id;
    pick.items = items;
    pick.selectedItems = items.filter((i) => chosen.has(i.id));
    const again = items.find((i) => i.id === active);
    if (again) pick.activeItems = [again];
  };
  fill();

  return new Promise<string[] | undefined>((resolve) => {
    let accepted = false;
    const subs = [
      pick.onDidChangeSelection((sel) => (chosen = new Set(sel.map((i) => i.id)))),
      monitor.onDidChange(fill),
      pick.onDidAccept(() => {
        accepted = true;
        const inv = monitor.inventory;
        resolve(normalizeSelection([...chosen], inv?.gpus ?? [], inv?.mig ?? [], selectBy));
        pick.hide();
      }),
      pick.onDidHide(() => {
        if (!accepted) resolve(undefined);
        for (const s of subs) s.dispose();
        hold.dispose();
        pick.dispose();
      }),
    ];
    pick.show();
  });
}
