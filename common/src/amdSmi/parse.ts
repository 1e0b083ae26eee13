/**
 * AMD's GPU tools, parsed into the GPU view's {@link Gpu} records: `amd-smi metric --json` with
 * `amd-smi static --json` (and optionally `amd-smi list --json` for the UUIDs), or the older
 * `rocm-smi --showallinfo --json`. Pure text in, data out (no process, no `vscode`), so the
 * extension (common/src/gpu/amdSmi.ts runs the tools) and the CLI can both import it, as with
 * ../nvidiaSmi/parse.ts.
 *
 * Shapes, from output published in public issues (the reduced copies and their URLs are in
 * test/fixtures/amd-smi/README.md; not captured here: no AMD GPU on this project's machines):
 * - amd-smi prints either a JSON array of per-GPU objects (`[{"gpu": 0, ...}]`, ROCm 6.x) or an
 *   object with that array under `gpu_data` (`{"gpu_data": [...]}`, later releases). A measured value
 *   is `{"value": 42, "unit": "%"}`, a missing one the string `"N/A"`.
 * - rocm-smi prints `{"card0": {"GPU use (%)": "19", ...}, "system": {...}}`, every value a string.
 * Memory in amd-smi is in `MB` that are MiB (a 16 GiB card reports 16368 MB); rocm-smi gives bytes.
 */
import type { Gpu, Parsed, ParseProblem } from "../nvidiaSmi/parse";

/** `amd-smi metric --json`: usage, power, clocks, temperatures and memory use of every GPU. */
export const AMD_SMI_METRIC_ARGS: readonly string[] = ["metric", "--json"];
/** `amd-smi static --json`: name, PCI address, driver and limits of every GPU. */
export const AMD_SMI_STATIC_ARGS: readonly string[] = ["static", "--json"];
/** `amd-smi list --json`: index, PCI address and UUID of every GPU. */
export const AMD_SMI_LIST_ARGS: readonly string[] = ["list", "--json"];
/** `rocm-smi --showallinfo --json` (rocm-smi is deprecated in favour of amd-smi). */
export const ROCM_SMI_ARGS: readonly string[] = ["--showallinfo", "--json"];

type Json = unknown;
type Obj = Record<string, Json>;
const isObj = (v: Json): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function problem(text: string, reason: string): ParseProblem {
  return { line: 1, text: text.slice(0, 200), reason };
}

/** Parses JSON, or returns a problem (the tools print a warning line instead of JSON when they find no GPU). */
function parseJson(text: string, what: string): { value: Json } | { problem: ParseProblem } {
  try {
    return { value: JSON.parse(text) as Json };
  } catch {
    return { problem: problem(text.trim(), `${what} did not print JSON`) };
  }
}

/** The per-GPU entries of an amd-smi JSON document (array form or `gpu_data` form), by GPU index. */
function amdEntries(doc: Json): Map<number, Obj> | null {
  const list = Array.isArray(doc) ? doc : isObj(doc) && Array.isArray(doc.gpu_data) ? doc.gpu_data : null;
  if (!list) return null;
  const out = new Map<number, Obj>();
  for (const e of list)
    if (isObj(e) && typeof e.gpu === "number" && Number.isInteger(e.gpu) && e.gpu >= 0) out.set(e.gpu, e);
  return out;
}

/** The object at a key path, or undefined. */
function at(o: Json, ...path: string[]): Json {
  let cur = o;
  for (const k of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

const UNIT_TO_MIB: Readonly<Record<string, number>> = {
  B: 1 / 1048576,
  KB: 1 / 1024,
  MB: 1,
  GB: 1024,
  MIB: 1,
  GIB: 1024,
  KIB: 1 / 1024,
};

/**
 * A measured number from an amd-smi value: `{"value": n, "unit": u}` or a bare number; null for
 * `"N/A"` and anything else. With `toMiB`, memory units are converted to MiB (null for an unknown unit).
 */
export function amdNumber(v: Json, toMiB = false): number | null {
  let n: Json = v;
  let unit = "";
  if (isObj(v)) {
    n = v.value;
    unit = typeof v.unit === "string" ? v.unit.trim().toUpperCase() : "";
  }
  if (typeof n === "string" && /^-?\d+(\.\d+)?$/.test(n.trim())) n = Number(n.trim());
  if (typeof n !== "number" || !Number.isFinite(n)) return null;
  if (!toMiB) return n;
  const f = UNIT_TO_MIB[unit || "MB"];
  return f === undefined ? null : Math.round(n * f);
}

const text = (v: Json): string | null =>
  typeof v === "string" && v.trim() !== "" && v.trim() !== "N/A" ? v.trim() : null;

/**
 * The GPU view keys GPUs by UUID (tree rows, vanished-GPU notices). AMD's tools do not always give
 * one (`amd-smi list` is optional, rocm-smi prints `Unique ID: N/A` on APUs), so a GPU without one
 * gets `PCI-<bus address>` (else `AMD-GPU-<index>`): unique on the machine, and not a
 * ROCR_VISIBLE_DEVICES value (the launcher refuses it; such GPUs are selected by index).
 */
export function fallbackKey(g: Pick<Gpu, "index" | "pciBusId">): string {
  return g.pciBusId ? `PCI-${g.pciBusId}` : `AMD-GPU-${g.index}`;
}

/** An empty GPU record: every measurement unknown. */
function blankGpu(index: number): Gpu {
  return {
    index,
    uuid: "",
    name: "AMD GPU",
    pciBusId: "",
    driverVersion: null,
    memoryTotalMiB: null,
    memoryUsedMiB: null,
    memoryFreeMiB: null,
    utilizationGpuPercent: null,
    utilizationMemoryPercent: null,
    temperatureC: null,
    powerDrawW: null,
    powerLimitW: null,
    fanSpeedPercent: null,
    computeMode: null,
    migMode: null,
    persistenceMode: null,
    clockSmMHz: null,
    clockMaxSmMHz: null,
    pstate: null,
  };
}

/**
 * The GPUs of `amd-smi metric --json` (required) joined by GPU index with `amd-smi static --json`
 * and `amd-smi list --json` (optional; a GPU they lack keeps the defaults). Rows are in index order.
 * Fields: utilisation from `usage.gfx_activity` (GPU) and `usage.umc_activity` (memory), memory from
 * `mem_usage.{total,used,free}_vram`, temperature from `temperature.edge` (else `hotspot`), power from
 * `power.socket_power`, limit from static `limit.socket_power` (else `max_power`; 0 W reads unknown),
 * fan from `fan.usage`, clocks from `clock.gfx_0.{clk,max_clk}`, name from `asic.market_name`, PCI
 * address from `bus.bdf`, driver from `driver.version`, UUID from the list's `uuid` (else {@link fallbackKey}).
 * Never throws: unreadable documents become problems.
 */
export function parseAmdSmi(metricJson: string, staticJson?: string, listJson?: string): Parsed<Gpu> {
  const problems: ParseProblem[] = [];
  const metric = parseJson(metricJson, "amd-smi metric");
  if ("problem" in metric) return { rows: [], problems: [metric.problem] };
  const metrics = amdEntries(metric.value);
  if (!metrics)
    return {
      rows: [],
      problems: [
        problem(metricJson.trim(), 'amd-smi metric\'s JSON is neither a list of GPUs nor {"gpu_data": [...]}'),
      ],
    };
  const side = (json: string | undefined, what: string): Map<number, Obj> => {
    if (json === undefined) return new Map();
    const r = parseJson(json, what);
    if ("problem" in r) {
      problems.push(r.problem);
      return new Map();
    }
    const m = amdEntries(r.value);
    if (!m) {
      problems.push(problem(json.trim(), `${what}'s JSON is neither a list of GPUs nor {"gpu_data": [...]}`));
      return new Map();
    }
    return m;
  };
  const statics = side(staticJson, "amd-smi static");
  const lists = side(listJson, "amd-smi list");
  const rows: Gpu[] = [];
  for (const index of [...metrics.keys()].sort((a, b) => a - b)) {
    const m = metrics.get(index)!;
    const s = statics.get(index);
    const l = lists.get(index);
    const g = blankGpu(index);
    g.name = text(at(s, "asic", "market_name")) ?? g.name;
    g.pciBusId = text(at(s, "bus", "bdf")) ?? text(at(l, "bdf")) ?? "";
    g.uuid = text(at(l, "uuid")) ?? "";
    g.driverVersion = text(at(s, "driver", "version"));
    g.memoryTotalMiB = amdNumber(at(m, "mem_usage", "total_vram"), true) ?? amdNumber(at(s, "vram", "size"), true);
    g.memoryUsedMiB = amdNumber(at(m, "mem_usage", "used_vram"), true);
    g.memoryFreeMiB =
      amdNumber(at(m, "mem_usage", "free_vram"), true) ??
      (g.memoryTotalMiB !== null && g.memoryUsedMiB !== null ? g.memoryTotalMiB - g.memoryUsedMiB : null);
    g.utilizationGpuPercent = amdNumber(at(m, "usage", "gfx_activity"));
    g.utilizationMemoryPercent = amdNumber(at(m, "usage", "umc_activity"));
    g.temperatureC = amdNumber(at(m, "temperature", "edge")) ?? amdNumber(at(m, "temperature", "hotspot"));
    g.powerDrawW = amdNumber(at(m, "power", "socket_power"));
    const limit = amdNumber(at(s, "limit", "socket_power")) || amdNumber(at(s, "limit", "max_power"));
    g.powerLimitW = limit ? limit : null;
    g.fanSpeedPercent = amdNumber(at(m, "fan", "usage"));
    g.clockSmMHz = amdNumber(at(m, "clock", "gfx_0", "clk"));
    g.clockMaxSmMHz = amdNumber(at(m, "clock", "gfx_0", "max_clk"));
    if (!g.uuid) g.uuid = fallbackKey(g);
    rows.push(g);
  }
  return { rows, problems };
}

/** A rocm-smi number: `"19"`, `"31.0"`, `"(800Mhz)"`; null for `"N/A"` and anything else. */
function rocmNumber(v: Json): number | null {
  if (typeof v !== "string") return null;
  const m = /^\(?\s*(-?\d+(?:\.\d+)?)\s*(?:mhz|w|c|%)?\s*\)?$/i.exec(v.trim());
  return m ? Number(m[1]) : null;
}

/** The first value among keys that may be spelled several ways across rocm-smi versions. */
function firstOf(o: Obj, keys: readonly string[]): Json {
  for (const k of keys) if (k in o) return o[k];
  // Case differences ("(C)" / "(c)") between versions.
  const lower = new Map(Object.keys(o).map((k) => [k.toLowerCase(), k]));
  for (const k of keys) {
    const real = lower.get(k.toLowerCase());
    if (real !== undefined) return o[real];
  }
  return undefined;
}

/**
 * The GPUs of `rocm-smi --showallinfo --json` (`{"card0": {...}, "card1": {...}, "system": {...}}`),
 * in card order. Fields: `GPU use (%)`, `GPU Memory Allocated (VRAM%)` is not used (a share, not
 * MiB); memory from `VRAM Total Memory (B)` / `VRAM Total Used Memory (B)`; temperature from
 * `Temperature (Sensor edge) (C)` (else junction); power from `Current Socket Graphics Package Power (W)`
 * or `Average Graphics Package Power (W)`, limit `Max Graphics Package Power (W)`; fan `Fan Speed (%)`;
 * clock `sclk clock speed:`; name `Card Series` (else `Device Name`); `PCI Bus`; UUID `GPU-<Unique ID>`
 * (the form ROCR_VISIBLE_DEVICES takes) when a unique id is given (else {@link fallbackKey}); driver from `system`'s `Driver version`.
 * Never throws.
 */
export function parseRocmSmi(json: string): Parsed<Gpu> {
  const r = parseJson(json, "rocm-smi");
  if ("problem" in r) return { rows: [], problems: [r.problem] };
  if (!isObj(r.value))
    return { rows: [], problems: [problem(json.trim(), "rocm-smi's JSON is not an object of cards")] };
  const doc = r.value;
  const driver = text(at(doc, "system", "Driver version"));
  const rows: Gpu[] = [];
  const problems: ParseProblem[] = [];
  for (const [key, card] of Object.entries(doc)) {
    const m = /^card(\d+)$/.exec(key);
    if (!m) continue;
    if (!isObj(card)) {
      problems.push(problem(key, `rocm-smi's ${key} is not an object`));
      continue;
    }
    const g = blankGpu(Number(m[1]));
    g.name = text(card["Card Series"]) ?? text(card["Device Name"]) ?? g.name;
    g.pciBusId = text(card["PCI Bus"]) ?? "";
    const unique = text(card["Unique ID"]);
    if (unique && /^0x[0-9a-f]+$/i.test(unique)) g.uuid = `GPU-${unique.slice(2).toLowerCase()}`;
    g.driverVersion = driver;
    const total = rocmNumber(card["VRAM Total Memory (B)"]);
    const used = rocmNumber(card["VRAM Total Used Memory (B)"]);
    g.memoryTotalMiB = total === null ? null : Math.round(total / 1048576);
    g.memoryUsedMiB = used === null ? null : Math.round(used / 1048576);
    g.memoryFreeMiB = g.memoryTotalMiB !== null && g.memoryUsedMiB !== null ? g.memoryTotalMiB - g.memoryUsedMiB : null;
    g.utilizationGpuPercent = rocmNumber(card["GPU use (%)"]);
    g.temperatureC =
      rocmNumber(firstOf(card, ["Temperature (Sensor edge) (C)"])) ??
      rocmNumber(firstOf(card, ["Temperature (Sensor junction) (C)"]));
    g.powerDrawW = rocmNumber(
      firstOf(card, ["Current Socket Graphics Package Power (W)", "Average Graphics Package Power (W)"]),
    );
    g.powerLimitW = rocmNumber(card["Max Graphics Package Power (W)"]);
    g.fanSpeedPercent = rocmNumber(card["Fan Speed (%)"]);
    g.clockSmMHz = rocmNumber(card["sclk clock speed:"]);
    if (!g.uuid) g.uuid = fallbackKey(g);
    rows.push(g);
  }
  rows.sort((a, b) => a.index - b.index);
  if (rows.length === 0 && problems.length === 0) problems.push(problem(json.trim(), "rocm-smi listed no card"));
  return { rows, problems };
}
