/**
 * GPU Pilot's public API: the object `activate()` returns to other extensions, and all they may rely
 * on (docs/extension/api.md). It is small on purpose: the GPU selection, an event when it changes,
 * and the environment a run on it gets.
 *
 * ```ts
 * // GpuPilotPublicApi and GpuRunEnvironment: copied from this file (no package ships them).
 * const ext = vscode.extensions.getExtension<GpuPilotPublicApi>("gpu-pilot.gpu-pilot");
 * const gpuPilot = ext && (ext.isActive ? ext.exports : await ext.activate());
 * if (gpuPilot?.apiVersion === 1) {
 *   gpuPilot.onDidChangeSelection((ids) => console.log(`GPUs now: ${ids.join(",")}`));
 *   const run = gpuPilot.getRunEnvironment(); // e.g. { vendor: "nvidia", set: { CUDA_VISIBLE_DEVICES: "1", ... }, unset: [] }
 * }
 * ```
 *
 * The many other methods of api.ts's {@link GpuPilotApi} (tree rows, the dashboard's state, clicks
 * in webviews, timings, Slurm...) are test hooks: `activate()` adds them only when the extension host
 * runs with {@link TEST_HOOKS_ENV}=1 (the e2e runners, the benchmark, the unit tests set it). They
 * may change in any release.
 */
import * as vscode from "vscode";
import type { SelectionStore } from "../../common/src/gpu/selection";
import type { GpuPilotApi } from "./api";

/** The environment variable that makes `activate()` return the test hooks too (value `1`). */
export const TEST_HOOKS_ENV = "GPU_PILOT_TEST_HOOKS";

/** Whether `env` (the extension host's environment) asks for the test hooks. */
export function testHooksEnabled(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env[TEST_HOOKS_ENV] === "1";
}

/**
 * What a program started on the selected GPUs gets from the selection, as GPU Pilot's own runs give
 * it (launchers `python`, `torchrun`, `custom`; common/src/run/launch.ts `selectionVariables`).
 */
export interface GpuRunEnvironment {
  /**
   * Whose GPUs: `amd` when amd-smi or rocm-smi read them (or, before any was read, when one of those
   * is on PATH and nvidia-smi is not), else `nvidia`.
   */
  readonly vendor: "nvidia" | "amd";
  /**
   * Variables to set. NVIDIA: `CUDA_VISIBLE_DEVICES` (the selection, comma-separated indices or
   * GPU-/MIG- UUIDs) and `CUDA_DEVICE_ORDER=PCI_BUS_ID` (CUDA then numbers GPUs as nvidia-smi does).
   * AMD: `ROCR_VISIBLE_DEVICES` alone.
   */
  readonly set: Readonly<Record<string, string>>;
  /**
   * Inherited variables to remove before setting {@link set}. NVIDIA: none. AMD: `HIP_VISIBLE_DEVICES`,
   * `GPU_DEVICE_ORDINAL`, `CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER` (HIP would apply them after
   * ROCR_VISIBLE_DEVICES, indexing into what it left).
   */
  readonly unset: readonly string[];
}

/** What `activate()` returns: see the file comment and docs/extension/api.md. */
export interface GpuPilotPublicApi {
  /** This API's version: 1. A change that breaks a caller raises it. */
  readonly apiVersion: 1;
  /**
   * The selected GPUs (the GPU view's ticks, persisted per workspace): CUDA_VISIBLE_DEVICES entries,
   * nvidia-smi index strings (`"1"`) or GPU-/MIG- UUIDs, in index order; empty when nothing is selected.
   */
  getSelection(): string[];
  /** Fires with the new selection (as {@link getSelection} returns it) each time it changes. */
  readonly onDidChangeSelection: vscode.Event<string[]>;
  /**
   * The environment a run on the selected GPUs gets; undefined when nothing is selected (or GPU Pilot
   * has been deactivated). Reads no process: the vendor comes from the last GPU inventory, else from
   * the tools on PATH.
   */
  getRunEnvironment(): GpuRunEnvironment | undefined;
}

/** Every member of {@link GpuPilotPublicApi}, once (the type checks it); the unit test compares `activate()`'s object with it and with the documentation. */
export const PUBLIC_API_MEMBERS: Readonly<Record<keyof GpuPilotPublicApi, true>> = {
  apiVersion: true,
  getSelection: true,
  onDidChangeSelection: true,
  getRunEnvironment: true,
};

/**
 * The public API over the selection store of this activation.
 * @param runEnvironment the features' answer (ctx.ts `runEnvironment`; loads dist/features.js).
 * @param subscriptions where the event's emitter and its listener are disposed (`ExtensionContext.subscriptions`).
 */
export function createPublicApi(
  selection: SelectionStore,
  runEnvironment: () => GpuRunEnvironment | undefined,
  subscriptions: { dispose(): unknown }[],
): GpuPilotPublicApi {
  const changed = new vscode.EventEmitter<string[]>();
  subscriptions.push(
    changed,
    selection.onDidChange((ids) => changed.fire([...ids])),
  );
  return Object.freeze({
    apiVersion: 1 as const,
    getSelection: () => selection.get(),
    onDidChangeSelection: changed.event,
    getRunEnvironment: () => {
      try {
        return runEnvironment();
      } catch {
        return undefined; // deactivated, or the features could not be loaded (logged where they load)
      }
    },
  });
}

/** What `activate()` returns with {@link TEST_HOOKS_ENV}=1: the public API and the test hooks of api.ts. */
export type GpuPilotTestApi = GpuPilotApi & GpuPilotPublicApi;
