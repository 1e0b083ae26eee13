/**
 * nvidia-smi's query output, parsed: the `--query-gpu` / `--query-compute-apps` CSV (`--format=csv,
 * noheader,nounits`) and the `-L` device listing, into {@link Gpu}, {@link ComputeApp} and
 * {@link MigDevice} records. Pure text in, data out (no process, no `vscode`): shared by the
 * extension's GPU view (common/src/gpu/nvidiaSmi.ts, which runs nvidia-smi) and the CLI's
 * `--inventory` (server/src/cli.ts), so the CLI does not reach into the client.
 *
 * Sources for field names, units and formats: `nvidia-smi --help-query-gpu`,
 * `nvidia-smi --help-query-compute-apps`, NVIDIA's MIG user guide (`nvidia-smi -L`); checked against
 * real captured output (test/fixtures/nvidia-smi/h200x2).
 */
/** The `--query-gpu` fields GPU Pilot asks for, in this order (the columns of {@link parseQueryGpu}'s input). */
export const QUERY_GPU_FIELDS = [
  "index",
  "uuid",
  "name",
  "pci.bus_id",
  "driver_version",
  "memory.total",
  "memory.used",
  "memory.free",
  "utilization.gpu",
  "utilization.memory",
  "temperature.gpu",
  "power.draw",
  "power.limit",
  "fan.speed",
  "compute_mode",
  "mig.mode.current",
  "persistence_mode",
  "clocks.sm",
  "clocks.max.sm",
  "pstate",
] as const;

/** The `--query-compute-apps` fields GPU Pilot asks for, in this order (the columns of {@link parseComputeApps}'s input). */
export const QUERY_APPS_FIELDS = ["gpu_uuid", "gpu_bus_id", "pid", "process_name", "used_memory"] as const;

/** Arguments for the GPU query: one CSV line per GPU, no header, no unit suffixes. */
export const QUERY_GPU_ARGS: readonly string[] = [
  `--query-gpu=${QUERY_GPU_FIELDS.join(",")}`,
  "--format=csv,noheader,nounits",
];

/**
 * Arguments for the streaming GPU query: {@link QUERY_GPU_ARGS} plus `-lms <intervalMs>`, so one
 * long-lived nvidia-smi prints one line per GPU every `intervalMs` ms (see fixtures/h200x2/loop.txt).
 * @param intervalMs sampling period, ms (rounded; at least 1).
 */
export function streamGpuArgs(intervalMs: number): string[] {
  return [...QUERY_GPU_ARGS, "-lms", String(Math.max(1, Math.round(intervalMs)))];
}

/** Arguments of the device listing (`nvidia-smi -L`): GPUs and, under MIG, their MIG devices with UUIDs. */
export const LIST_GPUS_ARGS: readonly string[] = ["-L"];

/** Arguments for the compute-process query: one CSV line per process, no header, no unit suffixes. */
export const QUERY_APPS_ARGS: readonly string[] = [
  `--query-compute-apps=${QUERY_APPS_FIELDS.join(",")}`,
  "--format=csv,noheader,nounits",
];

/**
 * One GPU, from one line of `nvidia-smi --query-gpu=<QUERY_GPU_FIELDS> --format=csv,noheader,nounits`.
 *
 * A numeric or text field is `null` when nvidia-smi printed a placeholder instead of a value
 * (`[N/A]`, `[Not Supported]`, `[Unknown Error]`, `[GPU is lost]`, `[Insufficient Permissions]`, ...):
 * never `NaN`.
 */
export interface Gpu {
  /** `index`: nvidia-smi's ordinal, in PCI bus order (nvidia-smi ignores CUDA_VISIBLE_DEVICES). */
  index: number;
  /** `uuid`: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  uuid: string;
  /** `name`: product name, e.g. `NVIDIA H200`. */
  name: string;
  /** `pci.bus_id`: `domain:bus:device.function` in hex, e.g. `00000000:00:06.0`. */
  pciBusId: string;
  /** `driver_version`, e.g. `580.159.04`. */
  driverVersion: string | null;
  /** `memory.total`, MiB. */
  memoryTotalMiB: number | null;
  /** `memory.used`, MiB. */
  memoryUsedMiB: number | null;
  /** `memory.free`, MiB. */
  memoryFreeMiB: number | null;
  /** `utilization.gpu`: % of the last sample period in which a kernel ran (0-100). */
  utilizationGpuPercent: number | null;
  /** `utilization.memory`: % of the last sample period in which device memory was read or written (0-100). */
  utilizationMemoryPercent: number | null;
  /** `temperature.gpu`: core temperature, °C. */
  temperatureC: number | null;
  /** `power.draw`: current board power draw, W. */
  powerDrawW: number | null;
  /** `power.limit`: software power limit, W. */
  powerLimitW: number | null;
  /** `fan.speed`: % of the fan's maximum speed; `null` on passively cooled boards (`[N/A]`). */
  fanSpeedPercent: number | null;
  /** `compute_mode`: `Default`, `Exclusive_Process` or `Prohibited`. */
  computeMode: string | null;
  /** `mig.mode.current`: `Enabled` or `Disabled`; `null` (`[N/A]`) on GPUs without MIG. */
  migMode: string | null;
  /** `persistence_mode`: `Enabled` or `Disabled` (Linux only). */
  persistenceMode: string | null;
  /** `clocks.sm` (also spelled `clocks.current.sm`): current SM clock, MHz. */
  clockSmMHz: number | null;
  /** `clocks.max.sm`: maximum SM clock, MHz. */
  clockMaxSmMHz: number | null;
  /** `pstate`: performance state, `P0` (maximum performance) to `P12` (minimum). */
  pstate: string | null;
  /** Present (true) when a field read `[GPU is lost]`: the GPU fell off the bus; its numbers are unusable. */
  lost?: true;
}

/** One process holding a CUDA context, from one line of `nvidia-smi --query-compute-apps=<QUERY_APPS_FIELDS> --format=csv,noheader,nounits`. */
export interface ComputeApp {
  /** `gpu_uuid`: the GPU the context lives on (match with {@link Gpu.uuid}). */
  gpuUuid: string;
  /** `gpu_bus_id`, e.g. `00000000:00:06.0`. */
  gpuBusId: string | null;
  /** `pid`: process id (in nvidia-smi's PID namespace: inside a container it can be a host pid). */
  pid: number;
  /** `process_name`: the executable name or path as nvidia-smi reports it; may contain `, `. */
  processName: string;
  /** `used_memory` (alias `used_gpu_memory`): device memory held by the context, MiB; `null` where not reported (e.g. `[N/A]` under MIG or WDDM). */
  usedMemoryMiB: number | null;
}

/** A line the parser could not use, reported instead of dropped. `line` is 1-based. */
export interface ParseProblem {
  line: number;
  text: string;
  reason: string;
  /**
   * Set for nvidia-smi's per-device error line `Unable to determine the device handle for GPU
   * <bus id>: <message>` (e.g. `GPU is lost.  Reboot the system to recover this GPU`): the GPU at
   * that PCI bus id could not be read this time.
   */
  device?: { busId: string; message: string };
}

const DEVICE_HANDLE_ERROR =
  /^Unable to determine the device handle for GPU\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]):?\s*(.*)$/;

/**
 * Recognises nvidia-smi's per-device error line, e.g.
 * `Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system to recover this GPU`
 * (also printed without the space: `GPU0000:07:00.0`).
 * @returns the bus id and the message (whitespace collapsed), or undefined for any other line.
 */
export function parseDeviceError(line: string): { busId: string; message: string } | undefined {
  const m = DEVICE_HANDLE_ERROR.exec(line.trim());
  if (!m) return undefined;
  return { busId: m[1], message: m[2].replace(/\s+/g, " ").trim() || "Unknown Error" };
}

/** What a parser returns: the rows it understood and the lines it could not use. */
export interface Parsed<T> {
  rows: T[];
  problems: ParseProblem[];
}

/**
 * Splits nvidia-smi's CSV output into trimmed, non-empty lines with their 1-based line numbers.
 * Handles `\r\n` line ends.
 */
function lines(csv: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  csv.split(/\r?\n/).forEach((raw, i) => {
    const text = raw.trim();
    if (text !== "") out.push({ line: i + 1, text });
  });
  return out;
}

/** nvidia-smi's CSV separator: a comma and a space. Values never start with a space. */
function splitFields(text: string): string[] {
  return text.split(", ").map((f) => f.trim());
}

/** True for nvidia-smi placeholders: `[N/A]`, `[Not Supported]`, `[Unknown Error]`, `[GPU is lost]`, ... (and bare `N/A`). */
export function isPlaceholder(value: string): boolean {
  return /^\[[^\]]*\]$/.test(value) || value === "N/A";
}

class FieldError extends Error {}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const UNIT_SUFFIX = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*(MiB|%|W|MHz|C|°C)$/;

/** Parses a numeric field in `unit`; `null` for a placeholder; throws FieldError for anything else. */
function num(field: string, value: string, unit: string): number | null {
  if (isPlaceholder(value)) return null;
  if (NUMBER.test(value)) return Number(value);
  if (UNIT_SUFFIX.test(value)) {
    throw new FieldError(`${field} is "${value}": units in the output; query with --format=csv,noheader,nounits`);
  }
  throw new FieldError(`${field} is "${value}", expected a number in ${unit}`);
}

/** A text field; `null` for a placeholder. */
function text(value: string): string | null {
  return isPlaceholder(value) ? null : value;
}

/** A required text field; throws FieldError for a placeholder or empty value. */
function requiredText(field: string, value: string): string {
  if (value === "" || isPlaceholder(value)) throw new FieldError(`${field} is "${value}"`);
  return value;
}

/** Largest GPU index taken (a 400-digit one would be Infinity; 2^53 + 1 loses its last digit). */
const MAX_INDEX = 2 ** 31 - 1;

/** A required non-negative integer below 2^31; throws FieldError otherwise. */
function integer(field: string, value: string): number {
  if (!/^\d+$/.test(value)) {
    if (isPlaceholder(value)) throw new FieldError(`${field} is "${value}"`);
    throw new FieldError(`${field} is "${value}", expected a whole number`);
  }
  const n = Number(value);
  if (n > MAX_INDEX) throw new FieldError(`${field} is "${value}", expected a whole number below 2^31`);
  return n;
}

/**
 * Remembers the GPUs seen (by index and UUID): the function returns why a GPU is a repeat
 * (one GPU listed twice: the first is kept), or undefined the first time. `line` is the 1-based line.
 */
function gpuRegistry() {
  const byIndex = new Map<number, number>();
  const byUuid = new Map<string, number>();
  return (g: { index: number; uuid: string }, line: number): string | undefined => {
    const again = byIndex.has(g.index)
      ? `GPU index ${g.index} again (line ${byIndex.get(g.index)})`
      : byUuid.has(g.uuid.toLowerCase())
        ? `GPU ${g.uuid} again (line ${byUuid.get(g.uuid.toLowerCase())})`
        : undefined;
    if (again) return `${again}: ignored`;
    byIndex.set(g.index, line);
    byUuid.set(g.uuid.toLowerCase(), line);
    return undefined;
  };
}

/**
 * Parses `nvidia-smi --query-gpu=<QUERY_GPU_FIELDS> --format=csv,noheader,nounits` (see {@link QUERY_GPU_ARGS}).
 *
 * Input: one line per GPU with exactly the 20 fields of {@link QUERY_GPU_FIELDS}, separated by `, `.
 * Units of the numeric fields: memory in MiB, utilization and fan speed in %, temperature in °C,
 * power in W, clocks in MHz.
 *
 * Placeholders (`[N/A]`, `[Not Supported]`, ...) become `null`. A line that cannot be used (a header
 * line, a wrong number of fields, unit suffixes such as `143771 MiB` from a query without `nounits`,
 * text in a numeric field, a placeholder in index/uuid/name/pci.bus_id) is listed in `problems` with
 * the reason; the other lines are still returned. Never throws.
 */
export function parseQueryGpu(csv: string): Parsed<Gpu> {
  const rows: Gpu[] = [];
  const problems: ParseProblem[] = [];
  const firstSeen = gpuRegistry();
  for (const { line, text: t } of lines(csv)) {
    const f = splitFields(t);
    if (f[0] === "index") {
      problems.push({ line, text: t, reason: "header line: query with --format=csv,noheader,nounits" });
      continue;
    }
    const device = parseDeviceError(t);
    if (device) {
      problems.push({ line, text: t, reason: `GPU ${device.busId}: ${device.message}`, device });
      continue;
    }
    if (f.length !== QUERY_GPU_FIELDS.length) {
      problems.push({ line, text: t, reason: `expected ${QUERY_GPU_FIELDS.length} fields, found ${f.length}` });
      continue;
    }
    try {
      const gpu: Gpu = {
        index: integer("index", f[0]),
        uuid: requiredText("uuid", f[1]),
        name: requiredText("name", f[2]),
        pciBusId: requiredText("pci.bus_id", f[3]),
        driverVersion: text(f[4]),
        memoryTotalMiB: num("memory.total", f[5], "MiB"),
        memoryUsedMiB: num("memory.used", f[6], "MiB"),
        memoryFreeMiB: num("memory.free", f[7], "MiB"),
        utilizationGpuPercent: num("utilization.gpu", f[8], "%"),
        utilizationMemoryPercent: num("utilization.memory", f[9], "%"),
        temperatureC: num("temperature.gpu", f[10], "°C"),
        powerDrawW: num("power.draw", f[11], "W"),
        powerLimitW: num("power.limit", f[12], "W"),
        fanSpeedPercent: num("fan.speed", f[13], "%"),
        computeMode: text(f[14]),
        migMode: text(f[15]),
        persistenceMode: text(f[16]),
        clockSmMHz: num("clocks.sm", f[17], "MHz"),
        clockMaxSmMHz: num("clocks.max.sm", f[18], "MHz"),
        pstate: text(f[19]),
        ...(f.some((v) => /^\[GPU is lost\]$/i.test(v)) ? { lost: true as const } : {}),
      };
      const again = firstSeen(gpu, line);
      if (again) problems.push({ line, text: t, reason: again });
      else rows.push(gpu);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      problems.push({ line, text: t, reason: e.message });
    }
  }
  return { rows, problems };
}

/** The start of a compute-apps record: its `gpu_uuid` field (`GPU-<uuid>, `, or a MIG UUID). */
const APP_RECORD_START = /^\s*(?:GPU|MIG)-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}(?:\/\d+\/\d+)?, /;

/** The end of a whole compute-apps record: `, <used_memory>` (a number or a placeholder such as `[N/A]`). */
const APP_RECORD_END = /, (?:\d+(?:\.\d*)?|\[[^\]\n]*\])\s*$/;

/**
 * Splits compute-apps CSV into records with the 1-based line each starts on. nvidia-smi prints
 * `process_name` as is (checked on an H200 driver 580: argv[0] `a\nb` gives two lines), so while a
 * record lacks its last field (`, <used_memory>`), a line that does not start with a GPU UUID
 * continues it, joined with `\n` (blank lines inside a name included). Other lines are records
 * of their own (a header, `No running processes found`, garbage: reported by the parser).
 * `\r\n` line ends are handled. A name that itself holds a line looking like a whole record (a
 * UUID, then fields) cannot be told from one: nvidia-smi's CSV has no quoting.
 */
function appRecords(csv: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  /** The record that may go on: one that starts with a GPU UUID and lacks its last field. */
  let open: { line: number; text: string } | undefined;
  csv.split(/\r?\n/).forEach((raw, i) => {
    if (open !== undefined && !APP_RECORD_START.test(raw)) {
      open.text += `\n${raw}`;
    } else if (raw.trim() !== "") {
      const record = { line: i + 1, text: raw };
      out.push(record);
      open = APP_RECORD_START.test(raw) ? record : undefined;
    }
    if (open !== undefined && APP_RECORD_END.test(open.text)) open = undefined;
  });
  return out.map((r) => ({ line: r.line, text: r.text.trim() })).filter((r) => r.text !== "");
}

/**
 * Parses `nvidia-smi --query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_memory --format=csv,noheader,nounits`
 * (see {@link QUERY_APPS_ARGS}).
 *
 * `process_name` can be a path containing `, ` or newlines: it is everything between the third
 * field and the last one, and a record may span lines (see {@link appRecords}). `used_memory` is
 * in MiB (`null` for a placeholder). A header line, fewer than 5
 * fields, a non-numeric pid or a unit suffix (`3380 MiB`) is reported in `problems`. Lines such as
 * `No running processes found` (printed by some drivers instead of an empty result) are skipped
 * silently. Never throws.
 */
export function parseComputeApps(csv: string): Parsed<ComputeApp> {
  const rows: ComputeApp[] = [];
  const problems: ParseProblem[] = [];
  for (const { line, text: t } of appRecords(csv)) {
    if (/^no running (compute )?process(es)? found/i.test(t)) continue;
    const f = splitFields(t);
    if (f[0] === "gpu_uuid") {
      problems.push({ line, text: t, reason: "header line: query with --format=csv,noheader,nounits" });
      continue;
    }
    if (f.length < QUERY_APPS_FIELDS.length) {
      problems.push({ line, text: t, reason: `expected ${QUERY_APPS_FIELDS.length} fields, found ${f.length}` });
      continue;
    }
    try {
      rows.push({
        gpuUuid: requiredText("gpu_uuid", f[0]),
        gpuBusId: text(f[1]),
        pid: integer("pid", f[2]),
        processName: f.slice(3, -1).join(", "),
        usedMemoryMiB: num("used_memory", f[f.length - 1], "MiB"),
      });
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      problems.push({ line, text: t, reason: e.message });
    }
  }
  return { rows, problems };
}

/**
 * One MIG device (a GPU instance with its compute instance), from a line of `nvidia-smi -L` such as
 * `  MIG 1g.18gb     Device  0: (UUID: MIG-0f3f1cd4-8bbe-5fd3-9e2b-2b8d1e9e3f3a)` under its GPU's line.
 * CUDA_VISIBLE_DEVICES accepts its UUID; a CUDA process can use only one MIG device.
 */
export interface MigDevice {
  /** The parent GPU's nvidia-smi index. */
  gpuIndex: number;
  /** The parent GPU's UUID (`GPU-...`). */
  gpuUuid: string;
  /** The profile name, e.g. `1g.18gb` (compute slices `g`, memory in GB). */
  profile: string;
  /** The MIG device's number under its GPU (`Device N`). */
  device: number;
  /** `MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (R470+) or `MIG-GPU-<uuid>/<gi>/<ci>` (older drivers). */
  uuid: string;
}

/** One GPU line of `nvidia-smi -L`: `GPU 0: NVIDIA H200 (UUID: GPU-...)`. */
export interface ListedGpu {
  index: number;
  name: string;
  uuid: string;
}

/**
 * Parses `nvidia-smi -L`: GPU lines and the MIG device lines indented under them (NVIDIA's
 * documented format, MIG user guide). Lines of neither shape are returned in `problems`. Never throws.
 */
export function parseListGpus(text: string): { gpus: ListedGpu[]; mig: MigDevice[]; problems: ParseProblem[] } {
  const gpus: ListedGpu[] = [];
  const mig: MigDevice[] = [];
  const problems: ParseProblem[] = [];
  const firstSeen = gpuRegistry();
  for (const { line, text: t } of lines(text)) {
    const g = /^GPU (\d+): (.*?) \(UUID: (GPU-[^)\s]+)\)$/.exec(t);
    if (g) {
      const gpu = { index: Number(g[1]), name: g[2], uuid: g[3] };
      const bad = gpu.index > MAX_INDEX ? "GPU index too large" : firstSeen(gpu, line);
      if (bad) problems.push({ line, text: t, reason: bad });
      else gpus.push(gpu);
      continue;
    }
    const m = /^MIG\s+(\S+)\s+Device\s+(\d+):\s+\(UUID:\s+(MIG-[^)\s]+)\)$/.exec(t);
    const parent = gpus.at(-1);
    if (m && parent) {
      mig.push({ gpuIndex: parent.index, gpuUuid: parent.uuid, profile: m[1], device: Number(m[2]), uuid: m[3] });
      continue;
    }
    problems.push({
      line,
      text: t,
      reason: m ? "MIG device line before any GPU line" : "not a GPU or MIG device line",
    });
  }
  return { gpus, mig, problems };
}
