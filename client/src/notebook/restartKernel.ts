/**
 * GPU Pilot: Restart Kernel on Selected GPUs (`gpuPilot.restartKernelOnSelectedGpus`, issue 42
 * item 1): restarts the active (or given) notebook's kernel so that its GPU Pilot launcher applies
 * the GPU selection of this moment. With GPU ids (the lint's "Restart kernel on GPU N"), they are
 * selected first.
 *
 * Steps: find the notebook; check that its kernel is a GPU Pilot kernel that follows the selection
 * (the running kernel's probe says its launcher ran, or the notebook's metadata names a GPU Pilot
 * kernelspec), else say so and offer to install one or pick another kernel; a kernel pinned to ids
 * at install cannot follow the selection (said so); an empty selection is confirmed first (the
 * kernel then keeps the GPUs its environment gives); write the selection file; restart through
 * the Jupyter extension's command `jupyter.restartkernel` (its API has no restart; VS Code has no
 * restart of its own for Jupyter kernels), which asks the user to confirm unless they turned that off.
 */
import * as vscode from "vscode";
import { join } from "node:path";
import { DEVICE_ID, type SelectionStore } from "../../../common/src/gpu/selection";
import { readKernel } from "../../../common/src/kernel/kernelspec";
import { selectionFileOf } from "../../../common/src/kernel/selectionFile";
import { machineVendor, syncSelectionFile } from "../gpu/kernelSelection";
import { log } from "../log";
import { kernelspecNameOf, type NotebookKernels } from "./runningKernel";

/** The command of the Jupyter extension that restarts a notebook's kernel (argument: the notebook's URI). */
export const JUPYTER_RESTART_COMMAND = "jupyter.restartkernel";

/** What {@link restartKernelCommand} needs. */
export interface RestartDeps {
  selection: SelectionStore;
  kernels: NotebookKernels;
  /** The Jupyter data folder (pythonProbe.ts resolveJupyterDataDir). */
  dataDir(): Promise<string>;
  /** The selection file's path (default selectionFileOf()). */
  selectionFile?: string;
}

/** What the command did: `restarted`, or why not. */
export type RestartOutcome =
  "restarted" | "no-notebook" | "not-gpu-pilot" | "pinned" | "bad-ids" | "cancelled" | "no-jupyter" | "selection-file";

/**
 * Restarts the notebook `uri` (default: the active one) on `devices` (default: the selection).
 * @param uri the notebook's URI as a string (the code action's argument) or a vscode.Uri.
 * @param devices CUDA_VISIBLE_DEVICES entries to select first; anything else than a list of ids is refused.
 * @returns what happened; every refusal is also a message to the user. Never throws for the user's input.
 */
export async function restartKernelCommand(
  deps: RestartDeps,
  uri?: unknown,
  devices?: unknown,
): Promise<RestartOutcome> {
  const key = uri instanceof vscode.Uri ? uri.toString() : typeof uri === "string" ? uri : undefined;
  const notebook = key
    ? vscode.workspace.notebookDocuments?.find((n) => n.uri.toString() === key)
    : vscode.window.activeNotebookEditor?.notebook;
  if (!notebook) {
    void vscode.window.showInformationMessage("GPU Pilot: open a notebook to restart its kernel on the selected GPUs.");
    return "no-notebook";
  }
  if (
    devices !== undefined &&
    devices !== null &&
    (!Array.isArray(devices) ||
      devices.length === 0 ||
      !devices.every((d) => typeof d === "string" && DEVICE_ID.test(d)))
  ) {
    void vscode.window.showErrorMessage(`GPU Pilot: not GPU ids to restart the kernel on: ${JSON.stringify(devices)}.`);
    return "bad-ids";
  }
  const kind = await kernelKind(deps, notebook);
  if (kind.kind === "other") {
    const install = "Install GPU Pilot Kernel",
      pick = "Select Another Kernel";
    const answer = await vscode.window.showWarningMessage(
      `GPU Pilot: this notebook's kernel${kind.name ? ` (${kind.name})` : ""} is not a GPU Pilot kernel: a restart would not apply the GPU selection. Install a GPU Pilot kernel for its environment, then select it for this notebook.`,
      install,
      pick,
    );
    if (answer === install) await vscode.commands.executeCommand("gpuPilot.installKernel");
    else if (answer === pick) await vscode.commands.executeCommand("notebook.selectKernel");
    return "not-gpu-pilot";
  }
  if (kind.kind === "pinned") {
    void vscode.window.showWarningMessage(
      `GPU Pilot: this notebook's kernel (${kind.name}) was installed pinned to GPU ${kind.devices.join(",")} (gpu-pilot kernel install --gpus): it does not follow the selection. Install a kernel without --gpus to move it.`,
    );
    return "pinned";
  }
  const wanted = Array.isArray(devices) ? (devices as string[]) : deps.selection.get();
  if (wanted.length === 0) {
    const go = "Restart Anyway",
      pick = "Select GPUs";
    const answer = await vscode.window.showWarningMessage(
      "GPU Pilot: no GPU is selected, so the restarted kernel gets no CUDA_VISIBLE_DEVICES from GPU Pilot: it sees the GPUs its environment gives (usually all).",
      pick,
      go,
    );
    if (answer === pick) await vscode.commands.executeCommand("gpuPilot.selectGpus");
    if (answer !== go) return "cancelled";
  }
  if (Array.isArray(devices)) await deps.selection.set(wanted);
  const file = deps.selectionFile ?? selectionFileOf();
  const sync = syncSelectionFile(file, wanted, () => machineVendor(), true);
  if (typeof sync === "object") {
    void vscode.window.showErrorMessage(
      `GPU Pilot: cannot write the GPU selection file ${file} (${sync.error}): the kernel was not restarted.`,
    );
    return "selection-file";
  }
  const available = await vscode.commands.getCommands(true).then(
    (c) => c.includes(JUPYTER_RESTART_COMMAND),
    () => false,
  );
  if (!available) {
    void vscode.window.showWarningMessage(
      `GPU Pilot: the Jupyter extension (ms-toolsai.jupyter) is not installed or not active, so GPU Pilot cannot restart the kernel. The selection file says ${wanted.length ? `GPU ${wanted.join(",")}` : "no GPU"}: restart the kernel from your notebook's toolbar and it starts there.`,
    );
    return "no-jupyter";
  }
  deps.kernels.forget(notebook.uri.toString());
  await vscode.commands.executeCommand(JUPYTER_RESTART_COMMAND, notebook.uri);
  log.info(
    `Restarted the kernel of ${notebook.uri.toString()} on ${wanted.length ? `GPU ${wanted.join(",")}` : "the environment's GPUs (no GPU selected)"}.`,
  );
  return "restarted";
}

/** Whether the notebook's kernel is a GPU Pilot kernel that follows the selection, one pinned to ids, or another. */
async function kernelKind(
  deps: RestartDeps,
  notebook: vscode.NotebookDocument,
): Promise<
  { kind: "follows" } | { kind: "pinned"; name: string; devices: string[] } | { kind: "other"; name?: string }
> {
  const name = kernelspecNameOf(notebook);
  const spec = name ? readKernel(join(await deps.dataDir(), "kernels", name), name) : undefined;
  const selection = spec?.gpuPilot?.selection;
  if (selection?.kind === "pinned") return { kind: "pinned", name: name!, devices: selection.devices };
  if (selection?.kind === "file") return { kind: "follows" };
  // The metadata names no GPU Pilot kernelspec (not saved since the kernel was picked): the running kernel's launcher says.
  if (deps.kernels.factsOf(notebook.uri.toString())?.launcherDevices != null) return { kind: "follows" };
  return { kind: "other", ...(name ? { name } : {}) };
}
