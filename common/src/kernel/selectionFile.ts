/**
 * The selection state file: the GPU selection as the editor last had it, which a
 * GPU Pilot kernel's launcher reads each time the kernel starts or restarts (kernelLauncher.ts).
 * The extension rewrites it whenever the selection changes and when a window gains focus; the CLI
 * only reads its path (`gpu-pilot kernel install` bakes the path into the kernelspec).
 *
 * Where: `$GPU_PILOT_STATE_DIR/selection.json`, else `$XDG_STATE_HOME/gpu-pilot/selection.json`,
 * else `~/.local/state/gpu-pilot/selection.json` (Windows: `%LOCALAPPDATA%\gpu-pilot\selection.json`):
 * one file per user, not in VS Code's storage, so that a kernel started by JupyterLab, classic
 * Jupyter or the Jupyter extension finds it, and the CLI computes the same path. The XDG Base
 * Directory specification puts "state data that should persist between (application) restarts" in
 * `$XDG_STATE_HOME` (default `~/.local/state`).
 *
 * Shape (version 1): `{"version":1,"devices":["1"],"vendor":"nvidia","updatedAt":"<ISO 8601>"}`.
 * `devices` are CUDA_VISIBLE_DEVICES entries (common/src/gpu/selection.ts DEVICE_ID); an empty list
 * means "no GPU selected" and the launcher then leaves the kernel's environment as it is, as a new
 * terminal gets no variable for an empty selection (client/src/gpu/environment.ts).
 *
 * No `vscode` import: the client (client/src/gpu/kernelSelection.ts) and the CLI both use it.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { readWorkspaceFile } from "../fs/workspaceFile";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** The file's name inside the state folder. */
export const SELECTION_FILE_NAME = "selection.json";

/** Who reads the selection: NVIDIA (CUDA_VISIBLE_DEVICES) or AMD ROCm (ROCR_VISIBLE_DEVICES); the same values as run/launch.ts GpuVendor. */
export type KernelVendor = "nvidia" | "amd";

/** The content of the selection file (version 1). */
export interface SelectionState {
  version: 1;
  /** CUDA_VISIBLE_DEVICES entries, in the order CUDA should number them; empty: no GPU selected. */
  devices: string[];
  vendor: KernelVendor;
  /** When the editor wrote it (ISO 8601, UTC). */
  updatedAt: string;
}

/** The folder of the state file (see the module comment) for `env`, `platform` and `home`. Never throws. */
export function stateDirOf(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (env.GPU_PILOT_STATE_DIR) return env.GPU_PILOT_STATE_DIR;
  if (platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "gpu-pilot");
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "gpu-pilot");
  return join(home, ".local", "state", "gpu-pilot");
}

/** The absolute path of the selection file for `env` ({@link stateDirOf} + {@link SELECTION_FILE_NAME}). */
export function selectionFileOf(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  return join(stateDirOf(env, platform), SELECTION_FILE_NAME);
}

/** The JSON text written for `devices` on a `vendor` machine at `now` (one line and a newline). */
export function selectionStateText(devices: readonly string[], vendor: KernelVendor, now: Date = new Date()): string {
  const state: SelectionState = { version: 1, devices: [...devices], vendor, updatedAt: now.toISOString() };
  return JSON.stringify(state) + "\n";
}

/** The state in `text`, or undefined when it is not a version 1 object with a list of strings and a known vendor. */
export function parseSelectionState(text: string): SelectionState | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.version !== 1 || !Array.isArray(o.devices) || !o.devices.every((d) => typeof d === "string")) return undefined;
  if (o.vendor !== "nvidia" && o.vendor !== "amd") return undefined;
  return {
    version: 1,
    devices: o.devices as string[],
    vendor: o.vendor,
    updatedAt: typeof o.updatedAt === "string" ? o.updatedAt : "",
  };
}

/**
 * Writes `text` to `file` safely: the folder is made (0700) when missing, the text goes into a new
 * temporary file beside it (O_EXCL | O_NOFOLLOW, `mode`) that is then renamed over `file`, so a
 * reader sees the old or the new file, never half of one, and a link planted at the temporary
 * name is never followed. A `file` that is a symbolic link or not a regular file is refused
 * (rename would replace the link itself, but the user did not ask for that).
 * @throws Error (with the path in its message) when the folder cannot be made, `file` is a link
 *   or not a file, or the write or the rename fails; the temporary file is removed then.
 */
export function writeFileSafely(file: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let st;
  try {
    st = lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  if (st && (st.isSymbolicLink() || !st.isFile()))
    throw new Error(`${file} is ${st.isSymbolicLink() ? "a symbolic link" : "not a regular file"}: not written`);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const fd = openSync(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
      mode,
    );
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* nothing to remove */
    }
    throw e;
  }
}

/**
 * Writes the selection file at `file` when its devices or vendor differ from what is there (an
 * unchanged selection leaves the file, and its time, alone).
 * @returns true when the file was written.
 * @throws Error as {@link writeFileSafely} does.
 */
export function writeSelectionState(
  file: string,
  devices: readonly string[],
  vendor: KernelVendor,
  now: Date = new Date(),
): boolean {
  const current = readSelectionState(file);
  if (
    current &&
    current.vendor === vendor &&
    current.devices.length === devices.length &&
    current.devices.every((d, i) => d === devices[i])
  )
    return false;
  writeFileSafely(file, selectionStateText(devices, vendor, now));
  return true;
}

/**
 * The state in `file`, or undefined when it is missing, unreadable, a link, not a regular file,
 * over 64 KiB or malformed (read through the safe reader, common/src/fs/workspaceFile.ts). Never throws.
 */
export function readSelectionState(file: string): SelectionState | undefined {
  const r = readWorkspaceFile(file, { maxBytes: 64 * 1024, noFollow: true });
  return r.ok ? parseSelectionState(r.bytes.toString("utf8")) : undefined;
}

/**
 * Makes the selection file with no GPU selected when nothing is at `file` yet (an existing file,
 * valid or not, is left alone), so that the editor, which only updates a file that exists
 * (client/src/gpu/kernelSelection.ts), keeps it in step from then on.
 * @returns true when it was made.
 * @throws Error as {@link writeFileSafely} does.
 */
export function ensureSelectionFile(file: string, vendor: KernelVendor): boolean {
  try {
    lstatSync(file);
    return false;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  writeFileSafely(file, selectionStateText([], vendor));
  return true;
}
