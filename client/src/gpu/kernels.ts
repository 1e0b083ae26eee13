/**
 * The commands GPU Pilot: Install Jupyter Kernel on Selected GPUs (`gpuPilot.installKernel`) and
 * GPU Pilot: Remove Jupyter Kernel (`gpuPilot.removeKernel`). The kernelspec and
 * its launcher are common/src/kernel/kernelspec.ts's, the same the CLI's `gpu-pilot kernel` writes.
 *
 * Install: the interpreter is the Python extension's active environment for the active notebook
 * (or editor, or first workspace folder) when that extension is installed, else `python3` on PATH
 * (run/interpreter.ts); it must import ipykernel (else a message naming the package and the pip
 * command). The kernel follows the selection file, which the install creates with the current
 * selection (gpu/kernelSelection.ts keeps it in step from then on). Jupyter's kernel picker (VS
 * Code: Select Kernel → Jupyter Kernel...) lists the kernel as `Python 3.12 (.venv) · GPU Pilot`.
 */
import * as vscode from "vscode";
import {
  defaultKernelName,
  installKernel,
  KernelError,
  listKernels,
  removeKernel,
} from "../../../common/src/kernel/kernelspec";
import { kernelEnvironmentOf, resolveJupyterDataDir } from "../../../common/src/kernel/pythonProbe";
import { selectionFileOf } from "../../../common/src/kernel/selectionFile";
import { log } from "../log";
import { resolveInterpreter } from "../run/interpreter";
import { machineVendor, syncSelectionFile } from "./kernelSelection";
import type { SelectionStore } from "../../../common/src/gpu/selection";

/** The resource whose Python environment a kernel is for: the active notebook, editor or first folder. */
function resourceForInterpreter(): vscode.Uri {
  return (
    vscode.window.activeNotebookEditor?.notebook.uri ??
    vscode.window.activeTextEditor?.document.uri ??
    vscode.workspace.workspaceFolders?.[0]?.uri ??
    vscode.Uri.file(process.cwd())
  );
}

/** What {@link installKernelCommand} did (for tests and the API). */
export interface InstalledKernel {
  name: string;
  dir: string;
  displayName: string;
  selectionFile: string;
}

/**
 * Installs the kernel for the active environment, following the selection file.
 * @returns what was installed, or undefined after a message saying why not (no ipykernel, an
 *   unwritable data folder...).
 */
export async function installKernelCommand(selection: SelectionStore): Promise<InstalledKernel | undefined> {
  const interpreter = await resolveInterpreter(resourceForInterpreter());
  const file = selectionFileOf();
  try {
    const done = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `GPU Pilot: installing a Jupyter kernel for ${interpreter.path}`,
      },
      async () => {
        const env = await kernelEnvironmentOf(interpreter.path);
        const data = await resolveJupyterDataDir();
        const sync = syncSelectionFile(file, selection.get(), () => machineVendor(), true);
        if (typeof sync === "object")
          throw new KernelError(`Cannot write the GPU selection file ${file}: ${sync.error}.`);
        const name = defaultKernelName(env, { kind: "file", file });
        const { dir, spec } = installKernel({ dataDir: data.dir, name, env, selection: { kind: "file", file } });
        log.info(
          `Installed the Jupyter kernel "${name}" in ${dir} (data folder from ${data.source}); it follows ${file}.`,
        );
        return { name, dir, displayName: String(spec.display_name), selectionFile: file };
      },
    );
    const gpus = selection.get();
    void vscode.window.showInformationMessage(
      `GPU Pilot: installed the Jupyter kernel "${done.displayName}". Pick it in a notebook's kernel picker (Select Kernel → Jupyter Kernel...); ` +
        `it starts on ${gpus.length ? `GPU ${gpus.join(",")}` : "the GPUs the environment gives (no GPU selected)"}, and each restart applies the selection of that moment.`,
    );
    return done;
  } catch (e) {
    if (!(e instanceof KernelError)) throw e;
    log.warn(`Install Jupyter Kernel: ${e.message}`);
    void vscode.window.showErrorMessage(`GPU Pilot: ${e.message}`);
    return undefined;
  }
}

/**
 * Lets the user pick one of GPU Pilot's kernels in the data folder and removes it.
 * @returns the name removed, or undefined (none installed, cancelled, refused).
 */
export async function removeKernelCommand(): Promise<string | undefined> {
  const data = await resolveJupyterDataDir();
  const kernels = listKernels(data.dir);
  if (kernels.length === 0) {
    void vscode.window.showInformationMessage(`GPU Pilot: no GPU Pilot kernel in ${data.dir}.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    kernels.map((k) => ({ label: k.name, description: k.displayName, detail: k.dir })),
    { title: "GPU Pilot: remove a Jupyter kernel" },
  );
  if (!picked) return undefined;
  try {
    removeKernel(data.dir, picked.label);
  } catch (e) {
    if (!(e instanceof KernelError)) throw e;
    void vscode.window.showErrorMessage(`GPU Pilot: ${e.message}`);
    return undefined;
  }
  log.info(`Removed the Jupyter kernel "${picked.label}" from ${data.dir}.`);
  void vscode.window.showInformationMessage(`GPU Pilot: removed the Jupyter kernel "${picked.label}".`);
  return picked.label;
}
