/**
 * The selection everywhere: every new integrated terminal gets CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER=PCI_BUS_ID through `ExtensionContext.environmentVariableCollection` (cleared
 * when the selection is empty), and Python debug sessions (`debugpy`, `python`) get them through a
 * DebugConfigurationProvider unless their launch configuration sets CUDA_VISIBLE_DEVICES itself.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { log } from "../log";
import type { InventorySource } from "./monitor";
import type { Inventory } from "../../../common/src/gpu/nvidiaSmi";
import { indexOfEntry, type SelectionStore } from "../../../common/src/gpu/selection";

/** The variables a selection puts into an environment. */
export interface SelectionEnvironment {
  /** The entries joined with `,` (indices or GPU-/MIG- UUIDs). */
  CUDA_VISIBLE_DEVICES: string;
  /** Always `PCI_BUS_ID`: CUDA then numbers GPUs like nvidia-smi. */
  CUDA_DEVICE_ORDER: "PCI_BUS_ID";
}

/** The variables for `ids`; undefined for an empty selection. */
export function selectionEnvironment(ids: readonly string[]): SelectionEnvironment | undefined {
  if (ids.length === 0) return undefined;
  return { CUDA_VISIBLE_DEVICES: ids.join(","), CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
}

/** Which GPUs the entries are, in words: `GPU 1 (NVIDIA H200)`, `MIG 1g.18gb on GPU 0`. */
export function describeEntries(ids: readonly string[], inv: Inventory | undefined): string {
  return ids
    .map((id) => {
      const mig = inv?.mig?.find((m) => m.uuid.toLowerCase() === id.toLowerCase());
      if (mig) return `MIG ${mig.profile} on GPU ${mig.gpuIndex}`;
      const index = inv ? indexOfEntry(id, inv.gpus, inv.mig ?? []) : undefined;
      const gpu = inv?.gpus.find((g) => g.index === index);
      return gpu ? `GPU ${gpu.index} (${gpu.name})` : id;
    })
    .join(", ");
}

/** The collection's description shown by VS Code (terminal tab hover, "relaunch" notice). */
export function collectionDescription(ids: readonly string[], inv: Inventory | undefined): string {
  return `GPU Pilot: CUDA_VISIBLE_DEVICES=${ids.join(",")} (${describeEntries(ids, inv)}) and CUDA_DEVICE_ORDER=PCI_BUS_ID, from the GPU selection.`;
}

/**
 * Makes `collection` hold the selection's variables (Replace mutators), or clears it for an empty
 * selection. Touches a variable only when its value changes, so unchanged terminals are not marked
 * stale.
 */
export function applyToCollection(
  collection: vscode.EnvironmentVariableCollection,
  ids: readonly string[],
  inv: Inventory | undefined,
): void {
  const env = selectionEnvironment(ids);
  if (!env) {
    let any = false;
    collection.forEach(() => (any = true));
    if (any) collection.clear();
    collection.description = undefined;
    return;
  }
  for (const [name, value] of Object.entries(env)) {
    const now = collection.get(name);
    if (now === undefined || now.value !== value || now.type !== vscode.EnvironmentVariableMutatorType.Replace)
      collection.replace(name, value);
  }
  const description = collectionDescription(ids, inv);
  const current = collection.description;
  if ((typeof current === "string" ? current : current?.value) !== description) collection.description = description;
}

/** True when an env file (a `KEY=value` per line, as debugpy reads it) sets CUDA_VISIBLE_DEVICES. Unreadable: false. */
export function envFileSetsVisibleDevices(file: string): boolean {
  try {
    return /^\s*(?:export\s+)?CUDA_VISIBLE_DEVICES\s*=/m.test(fs.readFileSync(file, "utf8"));
  } catch {
    return false;
  }
}

/** Debug types whose launch configurations get the selection. */
export const PYTHON_DEBUG_TYPES = ["debugpy", "python"] as const;

/**
 * Adds the selection's variables to Python launch configurations. A configuration that sets
 * CUDA_VISIBLE_DEVICES in `env` (even to "") or in its `envFile` is left as it is; so is an
 * `attach` configuration. CUDA_DEVICE_ORDER is added unless `env` sets it.
 */
export class GpuDebugConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(
    private readonly selection: SelectionStore,
    private readonly monitor: InventorySource,
  ) {}

  resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    debugConfiguration: vscode.DebugConfiguration,
  ): vscode.ProviderResult<vscode.DebugConfiguration> {
    const env = selectionEnvironment(this.selection.get());
    if (!env || debugConfiguration.request !== "launch") return debugConfiguration;
    const given = debugConfiguration.env;
    const current: Record<string, unknown> =
      given && typeof given === "object" && !Array.isArray(given) ? (given as Record<string, unknown>) : {};
    if (Object.prototype.hasOwnProperty.call(current, "CUDA_VISIBLE_DEVICES")) {
      log.info(
        `Debug configuration "${debugConfiguration.name}" sets CUDA_VISIBLE_DEVICES itself; GPU Pilot leaves it alone.`,
      );
      return debugConfiguration;
    }
    const envFile =
      typeof debugConfiguration.envFile === "string"
        ? this.resolveFolderVariable(debugConfiguration.envFile, folder)
        : undefined;
    if (envFile && envFileSetsVisibleDevices(envFile)) {
      log.info(
        `Debug configuration "${debugConfiguration.name}" sets CUDA_VISIBLE_DEVICES in its envFile; GPU Pilot leaves it alone.`,
      );
      return debugConfiguration;
    }
    const next: Record<string, unknown> = { ...current, CUDA_VISIBLE_DEVICES: env.CUDA_VISIBLE_DEVICES };
    if (!Object.prototype.hasOwnProperty.call(current, "CUDA_DEVICE_ORDER"))
      next.CUDA_DEVICE_ORDER = env.CUDA_DEVICE_ORDER;
    log.info(
      `Debug session "${debugConfiguration.name}" gets CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES} (${describeEntries(this.selection.get(), this.monitor.inventory)}).`,
    );
    return { ...debugConfiguration, env: next };
  }

  private resolveFolderVariable(file: string, folder: vscode.WorkspaceFolder | undefined): string | undefined {
    const root = folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const resolved = file.replace(/\$\{workspaceFolder\}/g, root ?? "");
    if (/\$\{/.test(resolved)) return undefined; // other variables: cannot tell, add the selection
    return path.isAbsolute(resolved) ? resolved : root ? path.join(root, resolved) : undefined;
  }
}

/**
 * Keeps `collection` in step with the selection (and GPU names for its description) and registers
 * the debug configuration provider for {@link PYTHON_DEBUG_TYPES}.
 * @param collection `ExtensionContext.environmentVariableCollection`; undefined skips the terminals.
 * @returns the provider and what to dispose.
 */
export function registerSelectionEnvironment(
  collection: vscode.GlobalEnvironmentVariableCollection | undefined,
  selection: SelectionStore,
  monitor: InventorySource,
): { provider: GpuDebugConfigurationProvider; disposables: vscode.Disposable[] } {
  const provider = new GpuDebugConfigurationProvider(selection, monitor);
  const disposables: vscode.Disposable[] = PYTHON_DEBUG_TYPES.map((type) =>
    vscode.debug.registerDebugConfigurationProvider(type, provider),
  );
  if (collection) {
    collection.persistent = true;
    const sync = () => applyToCollection(collection, selection.get(), monitor.inventory);
    sync();
    disposables.push(selection.onDidChange(sync), monitor.onDidChange(sync));
  }
  return { provider, disposables };
}
