/**
 * What the file's own CUDA_VISIBLE_DEVICES leaves visible, for rules that compare a device
 * ordinal or a GPU count with it (GPU004, GPU035).
 */
import { envWrites } from "../../rule";
import type { ModuleModel } from "../../python/model";
import type { EnvWriteEvent } from "../../python/events";
import { stateBefore } from "../../python/timeline";
import { parseVisibleDevices, type VisibleDevices } from "../../visibleDevices";

/** The one value a file gives CUDA_VISIBLE_DEVICES before CUDA initialises, parsed as CUDA does. */
export interface FileVisibleDevices {
  /** The literal value written, e.g. `"1"` or `"0,2"`. */
  value: string;
  /** The first such write (where messages point). */
  write: EnvWriteEvent;
  /** The value parsed as CUDA parses it (visibleDevices.ts; ground-truth.md 'How CUDA parses CUDA_VISIBLE_DEVICES'). */
  parsed: VisibleDevices;
  /** Devices visible in the process, numbered cuda:0..count-1. */
  count: number;
}

/**
 * The number of GPUs the file itself makes visible, or null when it does not tell: no write, writes
 * of different or unknown values, or a value that hides every GPU or stops CUDA's parse early
 * (GPU003's business). Writes made after CUDA initialised are ignored: they have no effect (GPU001).
 */
export function fileVisibleDevices(model: ModuleModel): FileVisibleDevices | null {
  const writes = envWrites(model).filter(
    (w) => w.variable === "CUDA_VISIBLE_DEVICES" && !stateBefore(model, w).frozenBy,
  );
  const literals = new Set(writes.map((w) => w.literal));
  if (writes.length === 0 || literals.size !== 1 || literals.has(null)) return null;
  const value = writes[0].literal!;
  const parsed = parseVisibleDevices(value);
  if (parsed.hidesAll || parsed.stop) return null;
  return { value, write: writes[0], parsed, count: parsed.count };
}
