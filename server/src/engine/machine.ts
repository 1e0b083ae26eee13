/**
 * Where does `cuda:N` land on this machine? Maps CUDA device ordinals to physical GPUs of the
 * inventory (nvidia-smi, PCI bus order), given a CUDA_VISIBLE_DEVICES value, per
 * ../shared/spec/ground-truth.md ("How CUDA parses CUDA_VISIBLE_DEVICES"): visible devices are
 * renumbered from 0 in the order listed ("1,0": cuda:0 is GPU 1), parsing stops at the first id
 * that does not exist ("0,5,1": only GPU 0), a duplicate hides every GPU, a full `GPU-<uuid>` or a
 * unique prefix of one selects that GPU. Without the variable, CUDA numbers devices fastest-first
 * unless CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA C Programming Guide, CUDA Environment Variables).
 */
import type { InventoryGpu } from "../../../common/src/lsp/protocol";
import { formatFree } from "../../../common/src/gpu/units";
import { parseVisibleDevices } from "./visibleDevices";

/** The visible devices in CUDA ordinal order, with why. */
export interface VisibleMap {
  /** Physical GPUs by CUDA ordinal (index 0 = `cuda:0`). */
  devices: InventoryGpu[];
  /** Where the value came from, for messages (`line 4 sets CUDA_VISIBLE_DEVICES="1"`). */
  because: string;
  /** Caveats: dropped entries, ambiguous ordering, ids not on this machine. */
  notes: string[];
  /** The ordinal ↔ physical mapping is certain (false: fastest-first ordering among different GPUs). */
  certain: boolean;
}

/** The inventory GPU an entry names (index, full UUID or unique UUID prefix), or null. */
export function gpuForEntry(gpus: readonly InventoryGpu[], entry: string): InventoryGpu | null {
  if (/^\d+$/.test(entry)) return gpus.find((g) => g.index === Number(entry)) ?? null;
  const up = entry.toUpperCase();
  const hits = gpus.filter((g) => g.uuid.toUpperCase().startsWith(up));
  return hits.length === 1 ? hits[0] : null;
}

/**
 * The visible devices for a CUDA_VISIBLE_DEVICES value (null: the variable is not set).
 * @param order CUDA_DEVICE_ORDER as the program sets it (null: not set, i.e. FASTEST_FIRST).
 */
export function visibleDevices(
  gpus: readonly InventoryGpu[],
  value: string | null,
  because: string,
  order: string | null,
): VisibleMap {
  const byBus = [...gpus].sort((a, b) => a.index - b.index);
  const sameModel = new Set(gpus.map((g) => g.name)).size <= 1;
  if (value === null) {
    const pci = order === "PCI_BUS_ID";
    return {
      devices: byBus,
      because,
      certain: pci || sameModel,
      notes:
        pci || sameModel
          ? []
          : [
              "CUDA numbers GPUs fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi numbers them by PCI bus, so cuda:N may not be GPU N here",
            ],
    };
  }
  const parsed = parseVisibleDevices(value);
  const notes: string[] = [];
  if (parsed.duplicate)
    return {
      devices: [],
      because,
      certain: true,
      notes: [`"${value}" repeats ${parsed.duplicate.text}: a duplicate hides every GPU`],
    };
  const devices: InventoryGpu[] = [];
  for (const e of parsed.kept) {
    const g = gpuForEntry(byBus, e.text);
    if (!g) {
      notes.push(
        `${e.text} is not a GPU of this machine: CUDA stops there${parsed.kept.length > devices.length + 1 ? ", dropping the ids after it" : ""}`,
      );
      break;
    }
    devices.push(g);
  }
  if (parsed.stop) notes.push(`"${parsed.stop.text}" is not a valid id: CUDA stops there`);
  const indexed = parsed.kept.some((e) => e.kind === "index");
  const certain = !indexed || order === "PCI_BUS_ID" || sameModel;
  if (!certain)
    notes.push(
      "without CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA reads these indices fastest-first, not in nvidia-smi's order",
    );
  return { devices, because, notes, certain };
}

/**
 * A GPU's free memory for the hovers and inlay hints: `136.5 GiB free`, `812 MiB free`, written by
 * units.ts formatFree as the GPU view and the dashboard write it (the hover rounded to `136 GiB
 * free` where the dashboard said `136.5 GiB free`); `free memory unknown` when nvidia-smi did not say.
 */
export function freeText(g: InventoryGpu): string {
  if (g.memoryFreeMiB === null) return "free memory unknown";
  return formatFree(g);
}

/** One line naming where an ordinal lands: `cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07.0 · 139.8 GiB free`. */
export function describeOrdinal(map: VisibleMap, ordinal: number): string {
  const g = map.devices[ordinal];
  if (!g) {
    const n = map.devices.length;
    return `cuda:${ordinal} → no such device: ${n === 0 ? "no GPU is visible" : `only cuda:0..cuda:${n - 1} are visible`} (invalid device ordinal)`;
  }
  return `cuda:${ordinal} → GPU ${g.index} · ${g.name} · ${g.pciBusId} · ${freeText(g)}${map.certain ? "" : " (if CUDA's fastest-first order matches nvidia-smi's)"}`;
}
