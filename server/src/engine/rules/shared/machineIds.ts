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
    return `CUDA_VISIBLE_DEVICES="${value}": GPU ${e.text} does not exist on this machine (${machineGpus(n)}); CUDA stops parsing there, so ${kept.length ? `only ${kept.join(",")} stay${kept.length === 1 ? "s" : ""} visible` : "no GPU is visible"}${rest.length ? ` and ${rest.join(",")} ${rest.length === 1 ? "is" : "are"} dropped` : ""}`;
  }
  return null;
}

/** `1 GPU: 0..0`, `4 GPUs: 0..3`, `0 GPUs: none`: the machine's GPUs, for messages. */
export function machineGpus(n: number): string {
  return `${n} GPU${n === 1 ? "" : "s"}: ${n ? `0..${n - 1}` : "none"}`;
}

/**
 * The host GPU ids among `ids` that the machine does not have, as the NVIDIA Container Toolkit
 * reads them (`--gpus device=...`, a compose reservation's `device_ids`; "a comma-separated list of
 * GPU UUID(s) or index(es)", 'Specialized Configurations with Docker'): an index at or beyond the
 * machine's count, also as the GPU of a MIG index (`3:0`), and, when the inventory gives UUIDs, a
 * `GPU-` UUID (or the GPU of a `MIG-GPU-<uuid>/gi/ci` id) that none of them starts with. A MIG
 * device's own `MIG-<uuid>` (not in the inventory), `all`, `none`, `void` and anything else are
 * left alone. Empty when the machine is unknown.
 */
export function missingHostIds(ids: readonly string[], machine: MachineFacts): string[] {
  const n = machine.gpuCount;
  if (n === null) return [];
  const uuids = machine.uuids.map((u) => u.toUpperCase());
  return ids.filter((raw) => {
    const id = raw.trim();
    const index = /^(\d+)(?::\d+)?$/.exec(id);
    if (index) return Number(index[1]) >= n;
    const gpu = /^(?:MIG-)?(GPU-[^/,\s]+)/i.exec(id)?.[1].toUpperCase();
    return !!gpu && gpu.length > 4 && uuids.length > 0 && !uuids.some((u) => u.startsWith(gpu));
  });
}

/**
 * The ids a `docker run --gpus` value names with `device=`, or null when it names none (`all`, a
 * count) or expands a variable. Docker reads the value as one CSV record (docker/cli opts.GpuOpts):
 * `"device=1,2"` (as the shell leaves `'"device=1,2"'`) is one field holding both ids, while in a
 * plain `device=1,2` the `2` is a field of its own (a count), so only `1` is a device id there.
 */
export function gpusDeviceIds(value: string): string[] | null {
  const v = value.trim();
  const m = /(?:^|,)"device=([^"]*)"/.exec(v) ?? /(?:^|,)device=([^,"]*)/.exec(v);
  if (!m || m[1].includes("$") || m[1].includes("`")) return null;
  return m[1]
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "" && !x.includes("="));
}
