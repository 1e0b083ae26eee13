/**
 * How GPUs and processes read in the tree view, the quick pick and the tooltips. Pure text; the
 * vscode objects (TreeItem, ThemeIcon, MarkdownString) are made in tree.ts and picker.ts.
 */
import type { InventoryGpu, InventoryParams } from "../../../server/src/protocol";
import type { ComputeApp, Gpu } from "./nvidiaSmi";

const q = (v: number | null, digits = 0): string => (v === null ? "?" : v.toFixed(digits));

/** `GPU <index>: <name>`, e.g. `GPU 0: NVIDIA H200`. */
export function gpuLabel(gpu: Gpu): string {
  return `GPU ${gpu.index}: ${gpu.name}`;
}

/**
 * `<util>% · <used>/<total> MiB · <temp>°C`, e.g. `0% · 0/143771 MiB · 35°C`.
 * Values nvidia-smi did not report show as `?`.
 */
export function gpuDescription(gpu: Gpu): string {
  return `${q(gpu.utilizationGpuPercent)}% · ${q(gpu.memoryUsedMiB)}/${q(gpu.memoryTotalMiB)} MiB · ${q(gpu.temperatureC)}°C`;
}

/** How busy a GPU is: the larger of its utilization and its memory use (both %). */
export type LoadLevel = "low" | "medium" | "high" | "unknown";

/** `low` under 50 %, `medium` under 90 %, `high` from 90 %; `unknown` when neither number is known. */
export function loadLevel(gpu: Gpu): LoadLevel {
  const parts: number[] = [];
  if (gpu.utilizationGpuPercent !== null) parts.push(gpu.utilizationGpuPercent);
  if (gpu.memoryUsedMiB !== null && gpu.memoryTotalMiB !== null && gpu.memoryTotalMiB > 0) {
    parts.push((100 * gpu.memoryUsedMiB) / gpu.memoryTotalMiB);
  }
  if (parts.length === 0) return "unknown";
  const load = Math.max(...parts);
  return load >= 90 ? "high" : load >= 50 ? "medium" : "low";
}

/** `pid <pid> · <name> · <MiB> MiB`, e.g. `pid 582 · python3 · 3380 MiB`. */
export function appLabel(app: ComputeApp): string {
  return `pid ${app.pid} · ${app.processName} · ${q(app.usedMemoryMiB)} MiB`;
}

/** The processes on `gpu` (matched by UUID), largest memory first. */
export function appsOf(gpu: Gpu, apps: readonly ComputeApp[]): ComputeApp[] {
  return apps
    .filter((a) => a.gpuUuid.toLowerCase() === gpu.uuid.toLowerCase())
    .sort((a, b) => (b.usedMemoryMiB ?? -1) - (a.usedMemoryMiB ?? -1) || a.pid - b.pid);
}

/** Escapes Markdown punctuation so nvidia-smi text (names, paths) shows literally. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

const withUnit = (v: number | null, unit: string, digits = 0): string => (v === null ? "n/a" : `${v.toFixed(digits)} ${unit}`);

/** A Markdown table of everything nvidia-smi said about the GPU, and its processes: the tree item's tooltip. */
export function gpuTooltipMarkdown(gpu: Gpu, apps: readonly ComputeApp[]): string {
  const rows: [string, string][] = [
    ["UUID", `\`${gpu.uuid}\``],
    ["PCI bus id", `\`${gpu.pciBusId}\``],
    ["Memory used", `${withUnit(gpu.memoryUsedMiB, "MiB")} of ${withUnit(gpu.memoryTotalMiB, "MiB")} (${withUnit(gpu.memoryFreeMiB, "MiB")} free)`],
    ["Utilization", `GPU ${withUnit(gpu.utilizationGpuPercent, "%")}, memory ${withUnit(gpu.utilizationMemoryPercent, "%")}`],
    ["Temperature", withUnit(gpu.temperatureC, "°C")],
    ["Power", `${withUnit(gpu.powerDrawW, "W", 1)} of ${withUnit(gpu.powerLimitW, "W", 0)}`],
    ["Fan", withUnit(gpu.fanSpeedPercent, "%")],
    ["SM clock", `${withUnit(gpu.clockSmMHz, "MHz")} (max ${withUnit(gpu.clockMaxSmMHz, "MHz")})`],
    ["Performance state", gpu.pstate ?? "n/a"],
    ["Compute mode", gpu.computeMode ?? "n/a"],
    ["MIG mode", gpu.migMode ?? "n/a"],
    ["Persistence mode", gpu.persistenceMode ?? "n/a"],
    ["Driver", gpu.driverVersion ?? "n/a"],
  ];
  const mine = appsOf(gpu, apps);
  const lines = [
    `**${escapeMarkdown(gpuLabel(gpu))}**`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
    mine.length === 0
      ? "No compute processes."
      : `Compute processes: ${mine.map((a) => `${a.pid} ${escapeMarkdown(a.processName)} (${withUnit(a.usedMemoryMiB, "MiB")})`).join(", ")}`,
  ];
  return lines.join("\n");
}

/** The GPU as the language server sees it (server/src/protocol.ts). */
export function toInventoryGpu(gpu: Gpu): InventoryGpu {
  return {
    index: gpu.index,
    uuid: gpu.uuid,
    name: gpu.name,
    pciBusId: gpu.pciBusId,
    memoryTotalMiB: gpu.memoryTotalMiB,
    memoryFreeMiB: gpu.memoryFreeMiB,
  };
}

/** The `gpuPilot/inventory` notification's params; `gpus` null when nvidia-smi could not be run. */
export function toInventoryParams(gpus: readonly Gpu[] | null, selection: readonly string[]): InventoryParams {
  return { gpus: gpus === null ? null : gpus.map(toInventoryGpu), selection: [...selection] };
}
