/**
 * The checks made before a run, as data: each {@link RunFinding} carries its message, and
 * runActiveFile.ts turns it into a question with a way forward (or a warning that does not block).
 * No `vscode` import; `checkRun` of the API returns these without asking anything.
 */
import { basename } from "node:path";
import type { ComputeApp, Inventory } from "../../../common/src/gpu/nvidiaSmi";
import { escapeControls } from "../../../common/src/text/controls";
import { indexOfEntry, unknownEntries } from "../../../common/src/gpu/selection";
import type { DistributedRead, RunFacts, VisibleDevicesWrite } from "../../../common/src/run/runFacts";
import type { LauncherKind } from "../../../common/src/run/launch";
import type { ProcessOwner } from "./owners";
import { formatMiB } from "../../../common/src/gpu/units";

/**
 * Something to know before the run.
 * - `unknownIds`: the selection names GPUs nvidia-smi does not list (ask: choose GPUs / run anyway);
 * - `tooManyProcesses`: `gpuPilot.run.nproc` exceeds the selected GPUs (ask: one per GPU / run anyway);
 * - `needsDistributedLauncher`: plain python on a script that reads LOCAL_RANK/RANK/WORLD_SIZE or
 *   calls env:// init_process_group (ask: torchrun / python anyway);
 * - `overridesSelection`: the script writes CUDA_VISIBLE_DEVICES itself, a write that takes effect
 *   (the engine's verdict: not after CUDA initialisation) to another value than the selection (ask:
 *   run anyway / show the line); `writes` are the writes that take effect;
 * - `busy`: a selected GPU runs processes of another user (warn, never block).
 */
export type RunFinding =
  | { kind: "unknownIds"; message: string; ids: string[]; available: string[] }
  | { kind: "tooManyProcesses"; message: string; nproc: number; gpus: number }
  | { kind: "needsDistributedLauncher"; message: string; line: number; reads: DistributedRead[]; initLines: number[] }
  | { kind: "overridesSelection"; message: string; line: number; writes: VisibleDevicesWrite[]; selection: string }
  | { kind: "busy"; message: string; apps: BusyApp[] };

/** A process of someone else on a selected GPU. */
export interface BusyApp {
  /** nvidia-smi index of the GPU. */
  gpu: number;
  pid: number;
  name: string;
  usedMemoryMiB: number | null;
  owner: Exclude<ProcessOwner, "me">;
}

/** Input of {@link checkRun}. */
export interface CheckInput {
  launcher: LauncherKind;
  /** Absolute path of the script (its base name is used in messages). */
  file: string;
  /** The selection (CUDA_VISIBLE_DEVICES entries). */
  ids: readonly string[];
  /** `gpuPilot.run.nproc` (0 = one per GPU). */
  nproc: number;
  /** The language server's facts about the script (`gpuPilot/runFacts`); undefined when it could not say. */
  analysis?: RunFacts;
  /** The last nvidia-smi inventory; undefined when nvidia-smi failed (GPU checks are skipped). */
  inventory?: Inventory;
  /** Whose a process is (default: everyone's is unknown). */
  ownerOf?: (pid: number) => ProcessOwner;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const MB = (m: number | null) => (m === null ? "" : `, ${formatMiB(m)}`);

function distributedFinding(name: string, a: RunFacts, ids: readonly string[]): RunFinding | undefined {
  const hard = a.distributedReads.filter((r) => !r.withDefault);
  const soft = a.distributedReads.filter((r) => r.withDefault);
  const init = a.envInitProcessGroup;
  if (hard.length === 0 && soft.length === 0 && init.length === 0) return undefined;
  const where = (r: { line: number; text: string }) => `line ${r.line + 1}: ${r.text}`;
  let why: string;
  let line: number;
  if (hard.length > 0) {
    const vars = [...new Set(hard.map((r) => r.variable))].join(", ");
    why = `reads ${vars} (${where(hard[0])}), which only a distributed launcher such as torchrun sets: under plain python it raises KeyError.`;
    line = hard[0].line;
  } else if (init.length > 0) {
    why = `calls init_process_group with rank and world size from the environment (${where(init[0])}), which only a distributed launcher such as torchrun sets: under plain python it fails.`;
    line = init[0].line;
  } else {
    const vars = [...new Set(soft.map((r) => r.variable))].join(", ");
    why = `reads ${vars} (${where(soft[0])}), which only a distributed launcher such as torchrun sets: under plain python it gets its default and runs as one process.`;
    line = soft[0].line;
  }
  const n = Math.max(ids.length, 1);
  return {
    kind: "needsDistributedLauncher",
    message: `${name} ${why} Run it with torchrun (--nproc_per_node=${n}, one process per selected GPU)?`,
    line,
    reads: a.distributedReads,
    initLines: init.map((i) => i.line),
  };
}

function overrideFinding(
  name: string,
  launcher: LauncherKind,
  a: RunFacts,
  ids: readonly string[],
): RunFinding | undefined {
  const selection = ids.join(",");
  // A write of the very value GPU Pilot passes replaces nothing (compared as CUDA reads the list:
  // entries split at commas, spaces around them ignored).
  const norm = (v: string) =>
    v
      .split(",")
      .map((x) => x.trim())
      .join(",");
  // A write with no effect (GPU001: CUDA already initialised when it runs) replaces nothing either.
  const effective = a.visibleDevicesWrites.filter((x) => x.noEffect === null);
  const w = effective.find((x) => launcher === "slurm" || x.value === null || norm(x.value) !== norm(selection));
  if (!w) return undefined;
  const value = w.value === null ? `a computed value (${w.text.trim()})` : JSON.stringify(w.value);
  const passes =
    launcher === "slurm" ? "the GPUs Slurm allocates" : `the selection "${selection}" that GPU Pilot passes`;
  const more = effective.length > 1 ? ` (and ${plural(effective.length - 1, "more write")})` : "";
  return {
    kind: "overridesSelection",
    message: `${name} sets CUDA_VISIBLE_DEVICES itself to ${value} (line ${w.line + 1})${more}, which replaces ${passes}. Run it anyway?`,
    line: w.line,
    writes: effective,
    selection,
  };
}

function busyFinding(
  ids: readonly string[],
  inv: Inventory,
  ownerOf: (pid: number) => ProcessOwner,
): RunFinding | undefined {
  const apps: BusyApp[] = [];
  for (const id of ids) {
    const index = indexOfEntry(id, inv.gpus);
    const gpu = inv.gpus.find((g) => g.index === index);
    if (!gpu) continue;
    const on = inv.apps.filter((a: ComputeApp) => a.gpuUuid.toLowerCase() === gpu.uuid.toLowerCase());
    for (const app of on) {
      const owner = ownerOf(app.pid);
      if (owner === "me") continue;
      if (!apps.some((b) => b.gpu === gpu.index && b.pid === app.pid)) {
        apps.push({ gpu: gpu.index, pid: app.pid, name: app.processName, usedMemoryMiB: app.usedMemoryMiB, owner });
      }
    }
  }
  if (apps.length === 0) return undefined;
  const byGpu = new Map<number, BusyApp[]>();
  for (const a of apps) byGpu.set(a.gpu, [...(byGpu.get(a.gpu) ?? []), a]);
  const parts = [...byGpu].map(
    ([gpu, list]) =>
      `GPU ${gpu} runs ${plural(list.length, "process", "processes")} of another user${list.some((a) => a.owner === "unknown") ? " or container" : ""} (${list.map((a) => `pid ${a.pid} ${escapeControls(a.name)}${MB(a.usedMemoryMiB)}`).join("; ")})`,
  );
  return {
    kind: "busy",
    message: `${parts.join("; ")}. The run shares ${byGpu.size === 1 ? "it" : "them"}: memory and speed may suffer.`,
    apps,
  };
}

/**
 * The findings for a run, in the order they are asked: unknown ids, too many processes, distributed
 * launcher needed, selection overridden, busy GPUs.
 */
export function checkRun(input: CheckInput): RunFinding[] {
  const out: RunFinding[] = [];
  const name = basename(input.file);
  const inv = input.inventory;
  const local = input.launcher !== "slurm";
  if (local && inv) {
    const unknown = unknownEntries(input.ids, inv.gpus);
    if (unknown.length > 0) {
      const available = inv.gpus.map((g) => String(g.index));
      out.push({
        kind: "unknownIds",
        message: `The selection names ${unknown.join(", ")}, which nvidia-smi does not list (GPUs here: ${available.join(", ") || "none"}).`,
        ids: unknown,
        available,
      });
    }
  }
  if (
    (input.launcher === "torchrun" || input.launcher === "accelerate") &&
    input.nproc > input.ids.length &&
    input.ids.length > 0
  ) {
    out.push({
      kind: "tooManyProcesses",
      message:
        `gpuPilot.run.nproc asks for ${plural(input.nproc, "process", "processes")} on ${plural(input.ids.length, "selected GPU")}: ` +
        `ranks ${input.ids.length} to ${input.nproc - 1} would have no GPU of their own (torch.cuda.set_device(LOCAL_RANK) fails with "invalid device ordinal").`,
      nproc: input.nproc,
      gpus: input.ids.length,
    });
  }
  if (input.analysis) {
    if (input.launcher === "python") {
      const d = distributedFinding(name, input.analysis, input.ids);
      if (d) out.push(d);
    }
    const o = overrideFinding(name, input.launcher, input.analysis, input.ids);
    if (o) out.push(o);
  }
  if (local && inv) {
    const b = busyFinding(input.ids, inv, input.ownerOf ?? (() => "unknown"));
    if (b) out.push(b);
  }
  return out;
}
