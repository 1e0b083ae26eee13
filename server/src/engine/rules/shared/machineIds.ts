/** CUDA_VISIBLE_DEVICES ids compared with the machine's GPUs (GPU017 in Python, GPU045 in shell scripts). */
import type { MachineFacts } from "../../rule";
import { parseVisibleDevices } from "../../visibleDevices";

/**
 * What a CUDA_VISIBLE_DEVICES value leaves visible on a machine of `machine.gpuCount` GPUs, when one
 * of its ids does not exist there (an index at or beyond the count, or a UUID that none of the
 * machine's UUIDs starts with): CUDA stops parsing at that id (ground-truth.md). Null when every
 * id exists or the count is unknown.
 */
export function missingIdMessage(value: string, machine: MachineFacts): string | null {
  const n = machine.gpuCount;
  if (n === null) return null;
  const uuids = machine.uuids.map((u) => u.toUpperCase());
  const parsed = parseVisibleDevices(value);
  for (const [i, e] of parsed.kept.entries()) {
    const missing =
      e.kind === "index" ? e.index! >= n : uuids.length > 0 && !uuids.some((u) => u.startsWith(e.text.toUpperCase()));
    if (!missing) continue;
    const rest = parsed.kept.slice(i + 1).map((x) => x.text);
    const kept = parsed.kept.slice(0, i).map((x) => x.text);
    return `CUDA_VISIBLE_DEVICES="${value}": GPU ${e.text} does not exist on this machine (${n} GPU${n === 1 ? "" : "s"}: ${n ? `0..${n - 1}` : "none"}); CUDA stops parsing there, so ${kept.length ? `only ${kept.join(",")} stay${kept.length === 1 ? "s" : ""} visible` : "no GPU is visible"}${rest.length ? ` and ${rest.join(",")} ${rest.length === 1 ? "is" : "are"} dropped` : ""}`;
  }
  return null;
}
