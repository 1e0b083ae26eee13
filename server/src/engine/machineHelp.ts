/**
 * Machine-aware help: hovers and inlay hints that say which physical GPU a device expression
 * (`"cuda:1"`, `torch.device("cuda", 1)`, `set_device(1)`, `device_ids=[...]`, `jax.devices()[1]`)
 * or a CUDA_VISIBLE_DEVICES write means on this machine, from the client's GPU inventory and
 * selection. Pure: no `vscode`, no transport.
 */
import type { InventoryParams } from "../../../common/src/lsp/protocol";
import type { ModuleModel } from "./python/model";
import type { EnvWriteEvent } from "./python/events";
import { nodeRange } from "./python/events";
import { deviceUses, type DeviceUse } from "./python/devices";
import { stringValue } from "./python/parser";
import { cudaDeviceOrdinal } from "./frameworks";
import { describeOrdinal, visibleDevices, type VisibleMap } from "./machine";
import type { Position, Range } from "./types";
import { frameworksText, type RunningKernelFacts } from "../../../common/src/kernel/runningKernel";

/**
 * What the machine hovers, inlay hints and the "use the selected GPUs" action read of a module
 * model: its trees, import bindings, name resolution and environment writes.
 */
export type MachineModel = Pick<ModuleModel, "tree" | "symbols" | "frameworks" | "resolve" | "nodesOfType" | "events">;

/**
 * The {@link MachineModel} of `model`, holding none of its indexes or caches (the server keeps one
 * per document for its hovers: the whole model of a 5,000-line file held ~2 MiB, mostly the lint's
 * cache of resolved names; `ModuleModel.freshResolve`). Its `events`
 * are the model's environment writes (computed now if the lint's rules did not ask for them);
 * `nodesOfType` walks the trees. Valid while `model.tree` is neither edited nor deleted.
 */
export function machineModel(model: ModuleModel): MachineModel {
  const { tree, symbols, frameworks } = model;
  const resolve = model.freshResolve();
  const events = model.events.filter((e) => e.kind === "envWrite");
  return { tree, symbols, frameworks, resolve, events, nodesOfType: (types) => tree.descendantsOfType(types) };
}

const inside = (r: Range, p: Position) =>
  (p.line > r.start.line || (p.line === r.start.line && p.character >= r.start.character)) &&
  (p.line < r.end.line || (p.line === r.end.line && p.character <= r.end.character));

function cvdWrites(model: MachineModel): EnvWriteEvent[] {
  return model.events.filter((e): e is EnvWriteEvent => e.kind === "envWrite" && e.variable === "CUDA_VISIBLE_DEVICES");
}

/**
 * The visible devices this file runs with: its own literal CUDA_VISIBLE_DEVICES, else GPU Pilot's
 * selection, else all. `noEffect`: 0-based lines of writes the engine found to have no effect
 * (GPU001: CUDA was already initialised when they run); those writes are not the file's value.
 * `notebook`: the model is a notebook's joined cells, run by a kernel: the selection reaches
 * terminals, runs and debug sessions started from VS Code (client/src/gpu/environment.ts, client/src/run), never
 * a notebook's kernel, so it is not the notebook's value.
 * `kernel`: a notebook's running kernel as the editor's probe saw it (common/src/kernel/runningKernel.ts):
 * when no cell's write takes effect, the kernel's own CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER
 * decide (the physical GPU the kernel really uses), not "every GPU it was started with".
 */
export function fileVisibleMap(
  model: MachineModel,
  inventory: InventoryParams,
  where: (line: number) => string,
  noEffect: ReadonlySet<number> = new Set(),
  notebook = false,
  kernel?: RunningKernelFacts,
): VisibleMap | null {
  const gpus = inventory.gpus;
  if (!gpus || gpus.length === 0) return null;
  const orderWrite = model.events.find(
    (e): e is EnvWriteEvent => e.kind === "envWrite" && e.variable === "CUDA_DEVICE_ORDER",
  );
  const order = orderWrite?.literal ?? null;
  const writes = cvdWrites(model).filter((w) => w.literal !== null && !noEffect.has(w.range.start.line));
  if (writes.length > 0) {
    const w = writes[writes.length - 1];
    return visibleDevices(
      gpus,
      w.literal,
      `${where(w.range.start.line)} sets CUDA_VISIBLE_DEVICES="${w.literal}"`,
      order,
    );
  }
  // A write with no effect is named as such: "nothing sets it" would be false beside it.
  const late = cvdWrites(model)
    .filter((w) => noEffect.has(w.range.start.line))
    .at(-1);
  const lateWrite =
    late && `${where(late.range.start.line)} sets CUDA_VISIBLE_DEVICES only after CUDA initialised (no effect: GPU001)`;
  if (notebook && kernel) {
    const init = kernel.initialisedBy.length
      ? `, and ${frameworksText(kernel.initialisedBy)} initialised CUDA there`
      : "";
    const value =
      kernel.cudaVisibleDevices === null
        ? "CUDA_VISIBLE_DEVICES unset"
        : `CUDA_VISIBLE_DEVICES="${kernel.cudaVisibleDevices}"`;
    return visibleDevices(
      gpus,
      kernel.cudaVisibleDevices,
      `the running kernel (pid ${kernel.pid}) reports ${value}${init}${lateWrite ? `; ${lateWrite}` : ""}`,
      kernel.cudaDeviceOrder,
    );
  }
  if (notebook) {
    return visibleDevices(
      gpus,
      null,
      `${lateWrite ?? "nothing in the notebook sets CUDA_VISIBLE_DEVICES"}, so its kernel sees every GPU it was started with (GPU Pilot's selection reaches a notebook's kernel only through a GPU Pilot kernel, at its start; its running kernel is not known here)`,
      order,
    );
  }
  if (inventory.selection.length > 0) {
    const sel = inventory.selection.join(",");
    return visibleDevices(
      gpus,
      sel,
      `GPU Pilot's selection is ${sel} (terminals and runs started from VS Code)`,
      "PCI_BUS_ID",
    );
  }
  return visibleDevices(
    gpus,
    null,
    `${lateWrite ?? "nothing sets CUDA_VISIBLE_DEVICES"} and no GPU is selected, so every GPU is visible`,
    order,
  );
}

/** Device expressions including bare `"cuda"` (the current device, 0 unless set_device changed it). */
function allDeviceUses(model: MachineModel, within: { startLine: number; endLine: number }): DeviceUse[] {
  const uses = deviceUses(model, within);
  for (const s of model.tree.descendantsOfType(
    "string",
    { row: within.startLine, column: 0 },
    { row: within.endLine + 1, column: 0 },
  )) {
    if (!s) continue;
    const v = stringValue(s);
    if (v !== null && cudaDeviceOrdinal(v) === -1)
      uses.push({ ordinal: 0, node: s, form: `"cuda"`, replace: () => s.text });
  }
  return uses;
}

/**
 * Markdown for a hover at `position`, or null when nothing device-related is there. `noEffect`: as
 * in {@link fileVisibleMap} (the lines of the document's GPU001 findings): such a write's hover says
 * it has no effect, and device expressions do not map through it.
 */
export function machineHover(
  model: MachineModel,
  position: Position,
  inventory: InventoryParams,
  where: (line: number) => string,
  noEffect: ReadonlySet<number> = new Set(),
  notebook = false,
  kernel?: RunningKernelFacts,
): { markdown: string; range: Range } | null {
  const map = fileVisibleMap(model, inventory, where, noEffect, notebook, kernel);
  if (!map) return null;
  const use = allDeviceUses(model, { startLine: position.line, endLine: position.line }).find((u) =>
    inside(nodeRange(u.node), position),
  );
  if (use) {
    // Bare "cuda" is torch's current device: the running kernel says which one it is.
    const ordinal = use.form === `"cuda"` && kernel?.torchCurrent !== undefined ? kernel.torchCurrent : use.ordinal;
    const lines = [`**${describeOrdinal(map, ordinal)}**`, "", `because ${map.because}.`];
    if (use.form === `"cuda"`)
      lines.push(
        "",
        kernel?.torchCurrent !== undefined
          ? `\`"cuda"\` is the current device: the running kernel's torch reports cuda:${kernel.torchCurrent}.`
          : '`"cuda"` is the current device: cuda:0 unless `torch.cuda.set_device` changed it.',
      );
    for (const n of map.notes) lines.push("", `⚠ ${n}`);
    return { markdown: lines.join("\n"), range: nodeRange(use.node) };
  }
  const write = cvdWrites(model).find((w) => inside(w.range, position));
  if (write && noEffect.has(write.range.start.line)) {
    const lines = [
      `**CUDA_VISIBLE_DEVICES="${write.literal ?? "…"}" has no effect here**: CUDA is already initialised when this line runs (GPU001), so the process keeps the GPUs it started with.`,
      "",
      `The GPUs this process sees: ${map.because}.`,
    ];
    return { markdown: lines.join("\n"), range: write.range };
  }
  if (write && write.literal !== null) {
    const own = visibleDevices(
      inventory.gpus ?? [],
      write.literal,
      `this line sets CUDA_VISIBLE_DEVICES="${write.literal}"`,
      map.certain ? "PCI_BUS_ID" : null,
    );
    const rows = own.devices.length
      ? own.devices.map((_, i) => `- ${describeOrdinal(own, i)}`)
      : ["- no GPU is visible"];
    const lines = [
      `**CUDA_VISIBLE_DEVICES="${write.literal}"** makes ${own.devices.length} GPU${own.devices.length === 1 ? "" : "s"} visible, renumbered from 0:`,
      "",
      ...rows,
    ];
    for (const n of own.notes) lines.push("", `⚠ ${n}`);
    if (!notebook && inventory.selection.length && inventory.selection.join(",") !== write.literal) {
      lines.push(
        "",
        `GPU Pilot's selection is ${inventory.selection.join(",")}: this line overrides it for runs of this file.`,
      );
    }
    return { markdown: lines.join("\n"), range: write.range };
  }
  return null;
}

/** Inlay hints `→ GPU n` after each device literal inside `range` (`noEffect` and `notebook` as in {@link fileVisibleMap}). */
export function machineInlayHints(
  model: MachineModel,
  range: Range,
  inventory: InventoryParams,
  where: (line: number) => string,
  noEffect: ReadonlySet<number> = new Set(),
  notebook = false,
  kernel?: RunningKernelFacts,
): Array<{ position: Position; label: string; tooltip: string }> {
  const map = fileVisibleMap(model, inventory, where, noEffect, notebook, kernel);
  if (!map) return [];
  const out: Array<{ position: Position; label: string; tooltip: string }> = [];
  for (const u of allDeviceUses(model, { startLine: range.start.line, endLine: range.end.line })) {
    const r = nodeRange(u.node);
    if (r.end.line < range.start.line || r.start.line > range.end.line) continue;
    const g = map.devices[u.ordinal];
    out.push({
      position: r.end,
      label: g ? `→ GPU ${g.index}` : "→ no such GPU",
      tooltip: `${describeOrdinal(map, u.ordinal)}, because ${map.because}`,
    });
  }
  return out.sort((a, b) => a.position.line - b.position.line || a.position.character - b.position.character);
}

/** The edit that rewrites a literal CUDA_VISIBLE_DEVICES value to the selection (code action "Use the selected GPUs"). */
export function useSelectionEdit(
  model: MachineModel,
  position: Position,
  selection: readonly string[],
): { range: Range; newText: string; title: string } | null {
  if (selection.length === 0) return null;
  const sel = selection.join(",");
  const w = cvdWrites(model).find((x) => inside(x.range, position) && x.literal !== null && x.literal !== sel);
  if (!w || w.value?.type !== "string") return null;
  const content = w.value.namedChildren.find((c) => c?.type === "string_content");
  if (content) return { range: nodeRange(content), newText: sel, title: `Use the selected GPUs (${sel})` };
  const quote = w.value.text.endsWith("'") ? "'" : '"';
  return { range: nodeRange(w.value), newText: `${quote}${sel}${quote}`, title: `Use the selected GPUs (${sel})` };
}
