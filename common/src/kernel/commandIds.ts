/**
 * The kernel command's id and the running-kernel notification's method, apart from
 * runningKernel.ts so that the client (dist/client.js, which registers every command at
 * activation) and the language client's bundle (dist/lsp.js) take these lines only.
 */

/** The LSP notification the client sends when a notebook's kernel facts change or are lost (params: runningKernel.ts RunningKernelParams). */
export const RUNNING_KERNEL_METHOD = "gpuPilot/runningKernel";

/**
 * The command "GPU Pilot: Restart Kernel on Selected GPUs" (package.json). Arguments, both
 * optional: the notebook's URI (a string; default the active notebook) and the GPU ids to select
 * first (a list of CUDA_VISIBLE_DEVICES entries; default: the selection as it is). The language
 * server's code action "Restart kernel on GPU N" calls it with both.
 */
export const RESTART_KERNEL_COMMAND = "gpuPilot.restartKernelOnSelectedGpus";
