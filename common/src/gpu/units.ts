/**
 * The one units policy of the GPU side, and the one place its numbers are written: the tree, the
 * dashboard, the status bar, the quick pick, Pick Free GPUs and the notifications all format through
 * here, so the same GPU reads the same everywhere.
 *
 * Memory: nvidia-smi reports MiB (`memory.total`, `memory.used`, `memory.free`, `used_memory`;
 * `nvidia-smi --help-query-gpu`). From 1 GiB (1024 MiB) up a value is written in GiB with one
 * decimal (`3.3 GiB`, `140.4 GiB`), below in whole MiB (`812 MiB`). A pair `used/total` is written in
 * its total's unit (`3.3/140.4 GiB`, `0.9/140.4 GiB`, `12/900 MiB`): one unit per pair, as one unit per
 * axis in the history, and every GPU's row keeps its length, so the tree's rows fit a 300 px side bar.
 * An unknown value (nvidia-smi printed `[N/A]`, parsed as null) is written `?`.
 *
 * Pure (no `vscode`); the dashboard's webview script imports it too.
 */

/** MiB in a GiB. */
export const MIB_PER_GIB = 1024;

/** `?` for an unknown value. */
export const UNKNOWN = "?";

const finite = (v: number | null | undefined): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * A memory amount given in MiB: `812 MiB` below 1 GiB, `3.3 GiB` from 1 GiB up (one decimal), `?`
 * when unknown. Negative values are clamped to 0 MiB.
 */
export function formatMiB(mib: number | null | undefined): string {
  if (!finite(mib)) return UNKNOWN;
  const v = Math.max(0, mib);
  return v >= MIB_PER_GIB ? `${(v / MIB_PER_GIB).toFixed(1)} GiB` : `${Math.round(v)} MiB`;
}

/**
 * Used and total memory (MiB) as one field in the total's unit: `3.3/140.4 GiB`, `0.9/140.4 GiB`
 * (915 MiB used), `0.0/140.4 GiB` (4 MiB: below 0.05 GiB) when the total is at least 1 GiB,
 * `12/900 MiB` when it is not; `?/140.4 GiB` when the used amount is unknown, `3.3 GiB/?` when the total is.
 * A single amount (a process's memory, free memory) keeps {@link formatMiB}'s MiB-below-1-GiB rule.
 */
export function formatMemoryPair(usedMiB: number | null | undefined, totalMiB: number | null | undefined): string {
  const used = finite(usedMiB) ? Math.max(0, usedMiB) : null;
  const total = finite(totalMiB) ? Math.max(0, totalMiB) : null;
  if (total === null) return `${used === null ? UNKNOWN : formatMiB(used)}/${UNKNOWN}`;
  const gib = total >= MIB_PER_GIB;
  const write = (v: number) => (gib ? (v / MIB_PER_GIB).toFixed(1) : String(Math.round(v)));
  return `${used === null ? UNKNOWN : write(used)}/${write(total)} ${gib ? "GiB" : "MiB"}`;
}

/** A percentage (0-100, e.g. `utilization.gpu`): `12%`, `?%` when unknown; rounded to a whole number. */
export function formatPercent(p: number | null | undefined): string {
  return finite(p) ? `${Math.round(p)}%` : `${UNKNOWN}%`;
}

/** A temperature in °C (`temperature.gpu`): `35°C`, `?°C` when unknown. */
export function formatTemperature(c: number | null | undefined): string {
  return finite(c) ? `${Math.round(c)}°C` : `${UNKNOWN}°C`;
}

/** Power draw and cap in W (`power.draw`, `power.limit`): `109/700 W` (whole watts), `?/700 W`. */
export function formatPower(drawW: number | null | undefined, limitW: number | null | undefined): string {
  const w = (v: number | null | undefined) => (finite(v) ? String(Math.round(v)) : UNKNOWN);
  return `${w(drawW)}/${w(limitW)} W`;
}

/**
 * The free memory of a GPU, MiB: nvidia-smi's `memory.free` (the driver's number: total minus used
 * minus what the driver reserves), null when not reported. Every place that says how much is free
 * reads it here, never `total - used`, so the tree and Pick Free GPUs cannot disagree.
 */
export function freeMemoryMiB(gpu: { memoryFreeMiB: number | null }): number | null {
  return finite(gpu.memoryFreeMiB) ? gpu.memoryFreeMiB : null;
}

/** `<free> free`, e.g. `139.8 GiB free` ({@link freeMemoryMiB}, {@link formatMiB}). */
export function formatFree(gpu: { memoryFreeMiB: number | null }): string {
  return `${formatMiB(freeMemoryMiB(gpu))} free`;
}

/**
 * The memory the NVIDIA driver and firmware hold on a GPU, MiB. nvidia-smi reports it as
 * `memory.reserved` ("Total memory reserved by the NVIDIA driver and firmware", `nvidia-smi
 * --help-query-gpu`) and counts it in neither `memory.used` nor `memory.free`, so used + free falls
 * short of `memory.total` by it: on the recorded H200s 143771 total, 0 used, 143156 free, and
 * `nvidia-smi -q` says Reserved 616 MiB (each field rounded on its own). GPU Pilot does not ask for
 * the field (an nvidia-smi that lacks it rejects the whole query): it is total − used − free here,
 * null when any of the three is unknown or the difference is negative.
 */
export function reservedMemoryMiB(gpu: {
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  memoryFreeMiB: number | null;
}): number | null {
  const { memoryTotalMiB: total, memoryUsedMiB: used, memoryFreeMiB: free } = gpu;
  if (!finite(total) || !finite(used) || !finite(free)) return null;
  const reserved = total - used - free;
  return reserved >= 0 ? reserved : null;
}

/**
 * Why used + free is not the total, for tooltips: `3.3 GiB used + 136.5 GiB free + 615 MiB reserved
 * by the NVIDIA driver and firmware (nvidia-smi memory.reserved) = 140.4 GiB total`; without a
 * reserved amount (unknown numbers) `3.3 GiB used, 136.5 GiB free of 140.4 GiB`.
 */
export function memoryBreakdown(gpu: {
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  memoryFreeMiB: number | null;
}): string {
  const reserved = reservedMemoryMiB(gpu);
  const used = `${formatMiB(gpu.memoryUsedMiB)} used`;
  const free = formatFree(gpu);
  const total = formatMiB(gpu.memoryTotalMiB);
  return reserved === null
    ? `${used}, ${free} of ${total}`
    : `${used} + ${free} + ${formatMiB(reserved)} reserved by the NVIDIA driver and firmware (nvidia-smi memory.reserved) = ${total} total`;
}

/** The fraction `used/total` clamped to 0..1, null when either is unknown or the total is not positive. */
export function fraction(used: number | null | undefined, total: number | null | undefined): number | null {
  if (!finite(used) || !finite(total) || total <= 0) return null;
  return Math.min(1, Math.max(0, used / total));
}

/** How full a bar is, for its colour: `low` under 50 %, `medium` under 90 %, `high` from 90 %, `unknown`. */
export type Level = "low" | "medium" | "high" | "unknown";

/** The {@link Level} of a percentage (0-100). */
export function levelOf(percent: number | null | undefined): Level {
  if (!finite(percent)) return "unknown";
  return percent >= 90 ? "high" : percent >= 50 ? "medium" : "low";
}

/**
 * A short GPU name for narrow rows: nvidia-smi's `name` without the vendor prefix (`NVIDIA H200` →
 * `H200`, `Tesla V100-SXM2-16GB` unchanged). The full name stays in tooltips and the dashboard.
 */
export function shortGpuName(name: string): string {
  const s = name.replace(/^NVIDIA\s+/i, "").trim();
  return s || name;
}
