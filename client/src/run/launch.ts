/**
 * What to run for "Run Active File on Selected GPUs": the program, its argument array and its
 * environment. No `vscode` import; runActiveFile.ts turns a {@link LaunchSpec} into a Task with a
 * ProcessExecution (never a shell string).
 */
import { basename, isAbsolute } from "node:path";
import { validateDeviceIds } from "../gpu/selection";

/** Input of {@link buildLaunch}. */
export interface LaunchRequest {
  /** Python executable: an absolute path, or a bare name looked up on PATH (`python3`). */
  interpreter: string;
  /** The script to run: an absolute path. */
  file: string;
  /** Working directory: an absolute path (the workspace folder, else the file's folder). */
  cwd: string;
  /** CUDA_VISIBLE_DEVICES entries (indices or GPU-/MIG- UUIDs), in the order CUDA should number them. */
  deviceIds: readonly string[];
}

/** The process to start: `command args...` in `cwd`, with `env` added to the inherited environment. */
export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  env: { CUDA_VISIBLE_DEVICES: string; CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
  /** Task name, e.g. `train.py on GPU 1`. */
  title: string;
}

/** A request {@link buildLaunch} refuses; `message` says why, in words for a notification. */
export class LaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LaunchError";
  }
}

/**
 * Builds the launch of `interpreter file` on the chosen GPUs.
 *
 * The environment sets CUDA_VISIBLE_DEVICES to the entries joined with `,` and CUDA_DEVICE_ORDER to
 * PCI_BUS_ID, so CUDA numbers GPUs in the same (PCI bus) order as nvidia-smi's indices.
 *
 * @throws LaunchError when there is no GPU entry, an entry is not an index or GPU-/MIG- UUID,
 *   indices and UUIDs are mixed, the file or cwd is not absolute, or the interpreter is empty or
 *   contains a NUL or line break.
 */
export function buildLaunch(req: LaunchRequest): LaunchSpec {
  let ids: string[];
  try {
    ids = validateDeviceIds(req.deviceIds);
  } catch (e) {
    throw new LaunchError((e as Error).message);
  }
  if (ids.length === 0) throw new LaunchError("No GPU selected.");
  const numeric = ids.filter((id) => /^\d+$/.test(id)).length;
  if (numeric !== 0 && numeric !== ids.length) {
    throw new LaunchError(`Mixes GPU indices and UUIDs (${ids.join(",")}): CUDA_VISIBLE_DEVICES takes one kind.`);
  }
  const interpreter = req.interpreter.trim();
  if (interpreter === "" || /[\0\r\n]/.test(interpreter)) {
    throw new LaunchError(`Not a usable Python interpreter: ${JSON.stringify(req.interpreter)}.`);
  }
  if (!isAbsolute(req.file) || /[\0]/.test(req.file)) throw new LaunchError(`Not an absolute file path: ${req.file}`);
  if (!isAbsolute(req.cwd) || /[\0]/.test(req.cwd)) throw new LaunchError(`Not an absolute folder path: ${req.cwd}`);
  const visible = ids.join(",");
  return {
    command: interpreter,
    args: [req.file],
    cwd: req.cwd,
    env: { CUDA_VISIBLE_DEVICES: visible, CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
    title: `${basename(req.file)} on GPU ${visible}`,
  };
}

/** How a finished run reads in the log and the notification, from its exit code (undefined: unknown, e.g. the terminal was closed). */
export function describeExit(title: string, exitCode: number | undefined): { ok: boolean; message: string } {
  if (exitCode === 0) return { ok: true, message: `${title}: finished (exit code 0).` };
  if (exitCode === undefined) return { ok: false, message: `${title}: ended without an exit code (stopped or terminal closed).` };
  return { ok: false, message: `${title}: failed with exit code ${exitCode}.` };
}
