/**
 * The Jupyter extension's kernel API as GPU Pilot uses it (issue 42 item 2). The types are the
 * subset of `@vscode/jupyter-extension` 1.1.1's `api.d.ts` (MIT, Microsoft Corporation: the
 * package that publishes the API of `ms-toolsai.jupyter`) that GPU Pilot calls, copied field for
 * field: `Jupyter.kernels`, `Kernels.getKernel(uri)`, `Kernel.status`, `onDidChangeStatus`,
 * `language` and `executeCode(code, token)`, whose outputs carry items of a MIME type and bytes
 * (`application/x.notebook.stream.stdout` for what the code printed). They are copied rather than
 * installed as a devDependency because the package holds nothing but that file.
 *
 * What the API does not have: a way to restart a kernel (restartKernel.ts runs the command the
 * Jupyter extension contributes, `jupyter.restartkernel`), or to set a kernel's environment
 * before it starts (vscode-jupyter #13893: why GPU Pilot kernelspecs carry a launcher).
 */
import * as vscode from "vscode";

/** The extension that publishes the API. */
export const JUPYTER_EXTENSION_ID = "ms-toolsai.jupyter";
/** The MIME type of a stream of stdout in {@link JupyterOutputItem.mime} (VS Code's `NotebookCellOutputItem.stdout('').mime`). */
export const STDOUT_MIME = "application/x.notebook.stream.stdout";

/** One item of an output: its MIME type and bytes (api.d.ts `OutputItem`). */
export interface JupyterOutputItem {
  mime: string;
  data: Uint8Array;
}
/** One output of an execution (api.d.ts `Output`). */
export interface JupyterOutput {
  items: JupyterOutputItem[];
  metadata?: { [key: string]: unknown };
}
/** api.d.ts `KernelStatus`. */
export type JupyterKernelStatus =
  "unknown" | "starting" | "idle" | "busy" | "terminating" | "restarting" | "autorestarting" | "dead";
/** A running kernel (api.d.ts `Kernel`). */
export interface JupyterKernel {
  readonly status: JupyterKernelStatus;
  onDidChangeStatus: vscode.Event<JupyterKernelStatus>;
  /** `python`, `r`, `julia`... */
  language: string;
  /** Runs `code` without touching the execution count or history; the iterable ends when the execution does. */
  executeCode(code: string, token: vscode.CancellationToken): AsyncIterable<JupyterOutput>;
}
/** api.d.ts `Kernels`: `getKernel` answers only kernels the user started, of notebooks open now. */
export interface JupyterKernels {
  getKernel(uri: vscode.Uri): Thenable<JupyterKernel | undefined>;
}
/** api.d.ts `Jupyter` (the kernel part). */
export interface JupyterApi {
  readonly kernels: JupyterKernels;
}

/**
 * The Jupyter extension's API, activating the extension when it is installed but not active yet.
 * @returns the API, or undefined when the extension is not installed, fails to activate, or
 *   exports no `kernels` (an older version). Never throws.
 */
export async function jupyterApi(): Promise<JupyterApi | undefined> {
  const ext = vscode.extensions.getExtension<JupyterApi>(JUPYTER_EXTENSION_ID);
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    return api && typeof api.kernels?.getKernel === "function" ? api : undefined;
  } catch {
    return undefined;
  }
}
