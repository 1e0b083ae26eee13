/**
 * How GPUs and processes read in the tree view, the quick pick and the tooltips. Pure text; the
 * vscode objects (TreeItem, ThemeIcon, MarkdownString) are made in tree.ts and picker.ts.
 */
import type { InventoryGpu, InventoryParams } from "../../../common/src/lsp/protocol";
import { escapeControls } from "../../../common/src/text/controls";
import type { ComputeApp, Gpu, MigDevice, ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import { type Claim, claimField, describeClaim } from "../../../common/src/gpu/claims";
import {
  formatFree,
  formatMemoryPair,
  formatMiB,
  formatPercent,
  formatPower,
  formatTemperature,
  reservedMemoryMiB,
} from "../../../common/src/gpu/units";

/** `GPU <index>: <name>`, e.g. `GPU 0: NVIDIA H200`. */
export function gpuLabel(gpu: Gpu): string {
  return `GPU ${gpu.index}: ${gpu.name}`;
}

/**
 * `GPU <index>`, e.g. `GPU 0`: the tree row's label, short enough that label and
 * {@link gpuDescription} fit a 300 px side bar; the name is in the tooltip and on the dashboard.
 */
export function gpuShortLabel(gpu: Gpu): string {
  return `GPU ${gpu.index}`;
}

/**
 * `<util>% · <used>/<total> · <temp>°C` in the units policy of units.ts, e.g.
 * `12% · 3.3/140.4 GiB · 35°C` or `0% · 0.0/140.4 GiB · 35°C`; without the temperature when
 * `temperature` is false (`12% · 3.3/140.4 GiB`). Values nvidia-smi did not report show as `?`.
 */
export function gpuDescription(gpu: Gpu, temperature = true): string {
  const parts = [formatPercent(gpu.utilizationGpuPercent), formatMemoryPair(gpu.memoryUsedMiB, gpu.memoryTotalMiB)];
  if (temperature) parts.push(formatTemperature(gpu.temperatureC));
  return parts.join(" · ");
}

/**
 * Whether the tree's GPU rows write the temperature: not on a machine with a GPU 10 or more. There
 * the label takes a second digit, and at the default 300 px side bar `GPU 10  100% · 130.7/140.4 GiB ·
 * 72°C` was cut to `· 7…` (6 px too long, with the tree's scroll bar shown for 16 GPUs). Every row
 * of such a machine leaves it out, so that the rows keep one length; the row's tooltip and the
 * dashboard give it.
 */
export function rowsShowTemperature(gpus: readonly { index: number }[]): boolean {
  return gpus.every((g) => g.index < 10);
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

/**
 * A process name or command line for one line of text: control characters (a newline nvidia-smi
 * printed as is, an ESC) written as visible escapes (`\n`, `\x1b`; common/src/text/controls.ts).
 */
export function printableName(name: string): string {
  return escapeControls(name);
}

/** `pid <pid> · <name> · <memory>`, e.g. `pid 582 · python3 · 3.3 GiB` (the name through {@link printableName}, memory per units.ts). */
export function appLabel(app: ComputeApp): string {
  return `pid ${app.pid} · ${printableName(app.processName)} · ${formatMiB(app.usedMemoryMiB)}`;
}

/** Text for a Markdown table cell inside a code span: one line, no backtick, `|` escaped (GFM splits cells at `|` even in code spans). */
function tableCode(text: string): string {
  return `\`${printableName(text).replace(/`/g, "'").replace(/\|/g, "\\|")}\``;
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

const withUnit = (v: number | null, unit: string, digits = 0): string =>
  v === null ? "n/a" : `${v.toFixed(digits)} ${unit}`;

/**
 * A Markdown table of everything nvidia-smi said about the GPU, its processes and `warnings`
 * (see {@link gpuWarnings}): the tree item's tooltip.
 */
export function gpuTooltipMarkdown(gpu: Gpu, apps: readonly ComputeApp[], warnings: readonly string[] = []): string {
  const rows: [string, string][] = [
    ["UUID", `\`${gpu.uuid}\``],
    ["PCI bus id", `\`${gpu.pciBusId}\``],
    ["Memory used", `${formatMiB(gpu.memoryUsedMiB)} of ${formatMiB(gpu.memoryTotalMiB)} (${formatFree(gpu)})`],
    // memory.used + memory.free falls short of memory.total by what the driver and firmware reserve.
    [
      "Memory reserved",
      (() => {
        const reserved = reservedMemoryMiB(gpu);
        return reserved === null
          ? "n/a"
          : `${formatMiB(reserved)} by the NVIDIA driver and firmware (nvidia-smi memory.reserved: total − used − free)`;
      })(),
    ],
    // utilization.gpu and utilization.memory (nvidia-smi --help-query-gpu): the share of the last sample
    // period in which a kernel ran, and in which device memory was read or written: the latter is
    // memory *bandwidth* use, not how full the memory is (that is "Memory used").
    ["GPU-Util", `${withUnit(gpu.utilizationGpuPercent, "%")} of the time a kernel ran`],
    ["Memory bandwidth", `${withUnit(gpu.utilizationMemoryPercent, "%")} of the time memory was read or written`],
    ["Temperature", withUnit(gpu.temperatureC, "°C")],
    ["Power", `${formatPower(gpu.powerDrawW, gpu.powerLimitW)} (draw/cap)`],
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
    `**${escapeMarkdown(gpuLabel(gpu))}** · ${escapeMarkdown(gpuDescription(gpu))}`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
    mine.length === 0
      ? "No compute processes."
      : `Compute processes: ${mine.map((a) => `${a.pid} ${escapeMarkdown(printableName(a.processName))} (${formatMiB(a.usedMemoryMiB)})`).join(", ")}`,
  ];
  for (const w of warnings) lines.push("", `$(warning) ${escapeMarkdown(w)}`);
  return lines.join("\n");
}

/** The GPU as the language server sees it (common/src/lsp/protocol.ts). */
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

// ---------------------------------------------------------------------------------------------
// The richer rows of the view (nvitop-like): bars, details, processes, MIG devices.
// ---------------------------------------------------------------------------------------------

/**
 * The GPU row's description in the tree and the quick pick: {@link gpuDescription} (fits a 300 px
 * side bar beside {@link gpuShortLabel}; the tree leaves the temperature out from GPU 10 on:
 * {@link rowsShowTemperature}); `[GPU is lost]` GPUs say so instead. Power, clocks, fan, bus id and
 * modes are in the tooltip ({@link gpuTooltipMarkdown}) and on the dashboard.
 */
export function gpuRowDescription(gpu: Gpu, temperature = true): string {
  if (gpu.lost) return "GPU is lost: reboot to recover it";
  return gpuDescription(gpu, temperature);
}

/** Warnings about a GPU, in words: Exclusive_Process, Prohibited, lost, MIG enabled without devices listed. */
export function gpuWarnings(gpu: Gpu, apps: readonly ComputeApp[], migCount: number): string[] {
  const out: string[] = [];
  if (gpu.lost) out.push("nvidia-smi reports this GPU as lost: reboot the machine to recover it.");
  if (gpu.computeMode === "Exclusive_Process") {
    out.push(
      appsOf(gpu, apps).length > 0
        ? "Exclusive_Process and already in use: a second CUDA process fails here (it does not fall back to another GPU)."
        : "Exclusive_Process: only one CUDA process at a time; a second one fails (it does not fall back to another GPU).",
    );
  }
  if (gpu.computeMode === "Prohibited") out.push("Compute mode Prohibited: no CUDA process can use this GPU.");
  if (gpu.migMode?.toLowerCase() === "enabled" && migCount === 0)
    out.push("MIG is enabled but no MIG device is listed: CUDA cannot use this GPU until MIG devices are created.");
  return out;
}

/** Shortens a command line to `max` characters with an ellipsis. */
export function shorten(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The word for a process whose user /proc could not say, in the dashboard, the picker and the tree's tooltip alike (the tree's row leaves it out). */
export const UNKNOWN_USER = "unknown";

/**
 * The user column of a process: the user name; {@link UNKNOWN_USER} when /proc could not say (the
 * process lives in another PID namespace, e.g. a container, or ended: {@link ProcessDetails.note}
 * says which, in the tooltip: {@link unknownUserNote}); `…` before the details are read.
 */
export function processUser(details: ProcessDetails | undefined): string {
  if (!details) return "…";
  return details.uid === null && details.user === "unknown" ? UNKNOWN_USER : printableName(details.user);
}

/** Why the user is unknown, for tooltips (tree and dashboard say it alike): `User unknown: <note>`, or undefined when it is known. */
export function unknownUserNote(details: ProcessDetails | undefined): string | undefined {
  return details?.note ? `User unknown: ${printableName(details.note)}` : undefined;
}

/**
 * The process row, led by what identifies it so that a 300 px side bar shows that part whole: label
 * `<pid> <program>` (the program's file name without its directory, {@link programName}, whole up
 * to {@link PROGRAM_CHARS} characters), description `<memory> · <user>`, then `extras`
 * (e.g. the tree's idle-held note), then the program's arguments last (memory per units.ts). A user
 * /proc could not read is left out of the row (the tooltip says `User unknown: <why>`): at 300 px
 * `7007 jupyter-kernel 812 MiB · unknown` was cut to `… · unkn…`. The side bar cuts a row at its
 * end, so what it cuts first are the arguments; the whole command line is in the tooltip. This
 * workspace's run is marked by the row's icon and said in the tooltip.
 */
export function processRow(
  app: ComputeApp,
  details: ProcessDetails | undefined,
  extras: readonly string[] = [],
): { label: string; description: string } {
  // argv when /proc gave it; else the one name nvidia-smi printed (a path may hold spaces: not split)
  const argv = details && details.argv.length > 0 ? details.argv : undefined;
  const program = programName(argv ? argv[0] : details?.commandLine || app.processName);
  const args = argv ? printableName(argv.slice(1).join(" ")) : "";
  const user = processUser(details);
  const description = [
    formatMiB(app.usedMemoryMiB),
    ...(user === UNKNOWN_USER ? [] : [user]),
    ...extras,
    ...(args ? [shorten(args)] : []),
  ];
  return { label: `${app.pid} ${shorten(program, PROGRAM_CHARS)}`, description: description.join(" · ") };
}

/** The longest program name a process row's label shows whole (longer ones end in `…`; the tooltip has it all). */
export const PROGRAM_CHARS = 24;

/** A program's file name without its directory, control characters escaped: `/opt/conda/bin/python` → `python`. */
export function programName(program: string): string {
  return printableName(program).replace(/^.*\//s, "") || printableName(program);
}

/**
 * A command line with its program's directory dropped, for narrow rows: `/opt/conda/bin/python
 * train.py` → `python train.py` (control characters escaped). The full line is in the tooltip.
 */
export function programCommand(commandLine: string): string {
  const printable = printableName(commandLine);
  return printable.replace(/^\S*\//, "");
}

/** The process row's Markdown tooltip: full command line, user, memory, GPU, and notes. */
export function processTooltipMarkdown(app: ComputeApp, details: ProcessDetails | undefined, gpu: Gpu): string {
  const command = printableName(details?.commandLine || app.processName);
  const lines = [
    `**pid ${app.pid}** on ${escapeMarkdown(gpuLabel(gpu))}`,
    "",
    "```",
    command.replace(/```/g, "`\u200b``"),
    "```",
    "",
    ...(details?.note ? [`${escapeMarkdown(unknownUserNote(details)!)}.`, ""] : []),
    "| | |",
    "|---|---|",
    `| User | ${details ? `${escapeMarkdown(printableName(details.user))}${details.uid !== null ? ` (uid ${details.uid})` : ""}` : "not read yet"} |`,
    `| GPU memory | ${formatMiB(app.usedMemoryMiB)} |`,
    `| nvidia-smi's name | ${tableCode(app.processName)} |`,
  ];
  if (details?.workspaceRun) lines.push("", "Started by this workspace's **Run on Selected GPUs**.");
  if (details?.own) lines.push("", "Yours: right-click → *Stop Process* sends it SIGTERM.");
  return lines.join("\n");
}

/** A MIG device row: label `MIG <profile> · device <n>`, description its UUID. */
export function migRow(mig: MigDevice): { label: string; description: string } {
  return { label: `MIG ${mig.profile} · device ${mig.device}`, description: mig.uuid };
}

/** The MIG device row's Markdown tooltip. */
export function migTooltipMarkdown(mig: MigDevice, gpu: Gpu): string {
  return [
    `**MIG ${escapeMarkdown(mig.profile)}**, device ${mig.device} of ${escapeMarkdown(gpuLabel(gpu))}`,
    "",
    `UUID: \`${mig.uuid}\``,
    "",
    "Tick it to run on this MIG device: CUDA_VISIBLE_DEVICES then holds its UUID (MIG devices have no index).",
    "A CUDA process uses a single MIG device (NVIDIA MIG user guide, CUDA device enumeration).",
  ].join("\n");
}

/**
 * The GPU row's claim: a description suffix for another's claim (`claimed by alice`) and a tooltip
 * line; empty when unclaimed. A claim of this window's gets the tooltip line only: its tick already
 * says the GPU is ours, and the suffix cut the row at the default 300 px side bar.
 */
export function claimText(c: { mine: boolean; claim: Claim } | undefined): { suffix: string; tooltip: string } {
  if (!c) return { suffix: "", tooltip: "" };
  const tooltip = `$(lock) Claimed by ${c.mine ? `you (this window, ${c.claim.purpose})` : escapeMarkdown(describeClaim(c.claim))} in the GPU claims ledger.`;
  return { suffix: c.mine ? "" : ` · claimed by ${claimField(c.claim.owner.user, 32)}`, tooltip };
}
