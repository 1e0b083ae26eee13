/**
 * How the ROCm runtimes read their device-selection variables, per AMD's documentation (ROCm docs,
 * "GPU isolation techniques" and "HIP environment variables"; not measured: there is no AMD GPU on
 * the machine this project measures on):
 * - `ROCR_VISIBLE_DEVICES` (ROCm runtime, every ROCm application): device indices or UUIDs
 *   (`GPU-<hex>`), applied first;
 * - `HIP_VISIBLE_DEVICES` (HIP runtime): device indices, applied to the devices ROCR left, so its
 *   index 0 is the first device ROCR_VISIBLE_DEVICES lists. PyTorch on ROCm checks this at device
 *   discovery (pytorch/pytorch#142292, torch/cuda/__init__.py `_parse_visible_devices`): it raises
 *   'HIP_VISIBLE_DEVICES out of bounds index after applying ROCR_VISIBLE_DEVICES' and 'Cannot
 *   specify both ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES using UUIDs'.
 */

/** One comma-separated entry of a ROCm visible-devices value. */
export interface RocmEntry {
  /** The entry as written, trimmed. */
  text: string;
  kind: "index" | "uuid" | "other";
  /** The device index of an `index` entry. */
  index?: number;
}

/** Splits a ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES value into entries. An empty value has none. Never throws. */
export function parseRocmVisible(value: string): RocmEntry[] {
  if (value.trim() === "") return [];
  return value.split(",").map((raw) => {
    const text = raw.trim();
    if (/^\d+$/.test(text)) return { text, kind: "index", index: Number(text) };
    if (/^GPU-[0-9a-fA-F-]+$/.test(text)) return { text, kind: "uuid" };
    return { text, kind: "other" };
  });
}

/** What HIP_VISIBLE_DEVICES does on top of ROCR_VISIBLE_DEVICES. */
export interface RocmConflict {
  kind: "hip-uuid" | "hip-out-of-range";
  /** For `hip-out-of-range`: the HIP indices at or beyond the number of devices ROCR left. */
  outOfRange: number[];
  /** How many devices ROCR_VISIBLE_DEVICES leaves. */
  rocrCount: number;
  /** For `hip-out-of-range`: no HIP index is in range, so no GPU is left at all. */
  hidesAll: boolean;
}

/**
 * The problem of setting both variables, or null when HIP's indices all fall inside what ROCR left.
 * `rocr` and `hip` are the literal values. Entries that are neither indices nor UUIDs make the
 * answer null (GPU Pilot does not guess how the runtime reads them).
 */
export function rocmConflict(rocr: string, hip: string): RocmConflict | null {
  const r = parseRocmVisible(rocr);
  const h = parseRocmVisible(hip);
  if (r.some((e) => e.kind === "other") || h.some((e) => e.kind === "other") || h.length === 0) return null;
  if (h.some((e) => e.kind === "uuid"))
    return { kind: "hip-uuid", outOfRange: [], rocrCount: r.length, hidesAll: false };
  const out = h.filter((e) => e.index! >= r.length).map((e) => e.index!);
  if (out.length === 0) return null;
  return { kind: "hip-out-of-range", outOfRange: out, rocrCount: r.length, hidesAll: out.length === h.length };
}
