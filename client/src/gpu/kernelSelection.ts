/**
 * Keeps the selection file (common/src/kernel/selectionFile.ts) in step with the GPU selection, so
 * that a GPU Pilot kernel started or restarted now runs on the GPUs selected now.
 *
 * Written when the selection changes and when a VS Code window gains focus (the selection is kept
 * per workspace: with two windows open, kernels follow the window used last), but only once the
 * file exists: installing a kernel that follows the selection creates it (GPU Pilot: Install
 * Jupyter Kernel on Selected GPUs, `gpu-pilot kernel install`), so a user who never installs one
 * gets no file. A write that fails is logged once until one succeeds; it never interrupts the user.
 */
import { lstatSync } from "node:fs";
import { type KernelVendor, selectionFileOf, writeSelectionState } from "../../../common/src/kernel/selectionFile";
import { findProgram } from "../../../common/src/run/which";
import type { SelectionStore } from "../../../common/src/gpu/selection";
import { detectVendor } from "../../../common/src/gpu/vendor";

/** The vendor of this machine's GPUs, as runs decide it (gpu/vendor.ts), from PATH. */
export function machineVendor(pathEnv: string | undefined = process.env.PATH): KernelVendor {
  return detectVendor((n) => findProgram(n, { pathEnv })).vendor;
}

/** What {@link syncSelectionFile} did. */
export type SyncResult = "written" | "unchanged" | "absent" | { error: string };

/**
 * Writes `ids` into `file` (with the vendor `vendorOf` gives, asked only for a write) when the file
 * exists, or always with `create`. Never throws: a failure is returned as `{ error }`.
 */
export function syncSelectionFile(
  file: string,
  ids: readonly string[],
  vendorOf: () => KernelVendor,
  create = false,
): SyncResult {
  if (!create) {
    try {
      lstatSync(file);
    } catch {
      return "absent";
    }
  }
  try {
    return writeSelectionState(file, ids, vendorOf()) ? "written" : "unchanged";
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** A subscription to undo. */
interface Disposable {
  dispose(): unknown;
}

/**
 * Syncs the file now, after each selection change and at each `onFocus` event.
 * @param onFocus subscribes a listener to "this window gained focus" (vscode.window.onDidChangeWindowState, filtered).
 * @param warn where a failed write is reported (once until a write succeeds).
 * @returns the subscriptions.
 */
export function registerSelectionFile(
  selection: SelectionStore,
  onFocus: (listener: () => void) => Disposable,
  warn: (message: string) => void,
  file: string = selectionFileOf(),
): Disposable[] {
  let vendor: KernelVendor | undefined;
  let warned = false;
  const sync = () => {
    const r = syncSelectionFile(file, selection.get(), () => (vendor ??= machineVendor()));
    if (typeof r === "object") {
      if (!warned)
        warn(
          `Could not update the kernels' GPU selection file ${file}: ${r.error}. GPU Pilot kernels keep the GPUs written there before.`,
        );
      warned = true;
    } else if (r === "written") warned = false;
  };
  sync();
  return [selection.onDidChange(sync), onFocus(sync)];
}
