/**
 * GPU Pilot kernelspecs: one per Python environment, in the user's Jupyter data
 * folder, `<data>/kernels/<name>/kernel.json` plus the launcher beside it (kernelLauncher.ts).
 * Jupyter (JupyterLab, classic Notebook, `jupyter console`, the VS Code Jupyter extension) lists
 * them with its other kernels; starting or restarting one applies the GPU selection of that moment.
 *
 * The data folder, as jupyter_core decides it (jupyter/jupyter_core, jupyter_core/paths.py,
 * `jupyter_data_dir()`: "Returns JUPYTER_DATA_DIR if defined, else a platform-appropriate path";
 * Linux and other Unix `$XDG_DATA_HOME/jupyter`, else `~/.local/share/jupyter`; macOS
 * `~/Library/Jupyter`; Windows `%APPDATA%\jupyter`): `JUPYTER_DATA_DIR` when set and not empty,
 * else what `jupyter --data-dir` prints (which also honours `JUPYTER_PLATFORM_DIRS`), else that
 * platform default ({@link defaultJupyterDataDir}).
 *
 * Kernel names follow jupyter_client (jupyter_client/kernelspec.py `_kernel_name_pat`,
 * `^[a-z0-9._\-]+$` ignoring case; `install_kernel_spec` lowercases the name): letters, digits,
 * `.`, `_` and `-`, lowercased here too, at most {@link MAX_NAME_LENGTH} characters.
 *
 * What marks a kernelspec as GPU Pilot's: `metadata.gpu_pilot` in its kernel.json (Jupyter keeps
 * `metadata` for "additional attributes about this kernel") and the launcher file beside it.
 * Only such kernelspecs are replaced or removed; any other is refused.
 */
import { lstatSync, mkdirSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { readWorkspaceFile } from "../fs/workspaceFile";
import { homedir } from "node:os";
import { join } from "node:path";
import { LAUNCHER_FILE_NAME, LAUNCHER_SOURCE } from "./kernelLauncher";
import { START_RECORD_NAME, START_RECORDS_FOLDER } from "./startRecord";
import type { KernelVendor } from "./selectionFile";
import { writeFileSafely } from "./selectionFile";

/** Kernel names Jupyter accepts (jupyter_client kernelspec.py `_kernel_name_pat`). */
export const KERNEL_NAME = /^[a-z0-9._-]+$/i;
/** The longest name accepted (a folder name; Jupyter sets no limit, file systems do). */
export const MAX_NAME_LENGTH = 100;
/** The version of `metadata.gpu_pilot` written. */
export const SPEC_VERSION = 1;

/** A problem the user can fix (bad name, unusable folder, interpreter without ipykernel); `message` is for them. */
export class KernelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KernelError";
  }
}

/**
 * The name, lowercased as Jupyter's install does.
 * @throws KernelError when it is empty, longer than {@link MAX_NAME_LENGTH}, `.`/`..`, or has a
 *   character outside [A-Za-z0-9._-] (a space, a slash, a non-ASCII letter...).
 */
export function validateKernelName(name: string): string {
  if (typeof name !== "string" || name.length === 0) throw new KernelError("A kernel name is needed.");
  if (name.length > MAX_NAME_LENGTH) throw new KernelError(`The kernel name is over ${MAX_NAME_LENGTH} characters.`);
  if (!KERNEL_NAME.test(name) || name === "." || name === "..") {
    throw new KernelError(
      `Not a Jupyter kernel name: ${JSON.stringify(name)}. Use letters, digits, '.', '_' and '-' only (Jupyter's rule).`,
    );
  }
  return name.toLowerCase();
}

/**
 * The name `gpu-pilot kernel install` and the install command give when none is asked for:
 * `gpu-pilot-<environment>-<6 hex>`, the environment's name (or `python3.12`) made safe, and a hash
 * of the interpreter's path and pinned ids, so that two environments called `.venv` get two kernels
 * and installing again for the same environment replaces its kernel.
 */
export function defaultKernelName(env: KernelEnvironment, selection: KernelSelection): string {
  const base =
    (env.envName ?? `python${env.version}`)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[-.]+|[-.]+$/g, "") || "python";
  const key = env.python + (selection.kind === "pinned" ? `\0${selection.vendor}\0${selection.devices.join(",")}` : "");
  // node:crypto is required here, not at the module's load: the client imports this module at its
  // load, and node:crypto's first require costs ~12 ms in a fresh process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require("node:crypto") as typeof import("node:crypto");
  const hash = createHash("sha1").update(key).digest("hex").slice(0, 6);
  return validateKernelName(`gpu-pilot-${base.slice(0, 60)}-${hash}`);
}

/** The platform default of jupyter_core's `jupyter_data_dir()` (see the module comment), without JUPYTER_DATA_DIR. */
export function defaultJupyterDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  if (platform === "darwin") return join(home, "Library", "Jupyter");
  if (platform === "win32") return env.APPDATA ? join(env.APPDATA, "jupyter") : join(home, ".jupyter", "data");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "jupyter");
}

/** What {@link GpuPilotMetadata.selection} says: follow the selection file, or pinned ids. */
export type KernelSelection =
  { kind: "file"; file: string } | { kind: "pinned"; devices: string[]; vendor: KernelVendor };

/** `metadata.gpu_pilot` of a GPU Pilot kernel.json. */
export interface GpuPilotMetadata {
  version: number;
  /** The interpreter the kernel runs (absolute path, as given at install). */
  python: string;
  selection: KernelSelection;
}

/** What {@link buildKernelJson} needs about the environment (pythonProbe.ts gives it). */
export interface KernelEnvironment {
  /** The interpreter's absolute path. */
  python: string;
  /** `3.12`. */
  version: string;
  /** The environment's folder name (`.venv`, a conda env's name), or undefined for a system Python. */
  envName?: string;
  /** Whether debugpy is importable (ipykernel's own kernelspec sets `metadata.debugger` so). */
  debugpy: boolean;
}

/** The display name: `Python 3.12 (.venv) · GPU Pilot`, with ` · GPU 0,1` for pinned ids. */
export function displayNameOf(env: KernelEnvironment, selection: KernelSelection): string {
  const where = env.envName ? ` (${env.envName})` : "";
  const pinned = selection.kind === "pinned" ? ` · GPU ${selection.devices.join(",")}` : "";
  return `Python ${env.version}${where} · GPU Pilot${pinned}`;
}

/**
 * The kernel.json object for `env` with its launcher at `launcher` (absolute path).
 * `argv`: `[python, launcher, --selection FILE | --gpus IDS --vendor V, --, -m, ipykernel_launcher, -f, {connection_file}]`.
 */
export function buildKernelJson(
  env: KernelEnvironment,
  launcher: string,
  selection: KernelSelection,
): Record<string, unknown> {
  const opts =
    selection.kind === "file"
      ? ["--selection", selection.file]
      : ["--gpus", selection.devices.join(","), "--vendor", selection.vendor];
  const gpuPilot: GpuPilotMetadata = { version: SPEC_VERSION, python: env.python, selection };
  return {
    argv: [env.python, launcher, ...opts, "--", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    display_name: displayNameOf(env, selection),
    language: "python",
    interrupt_mode: "signal",
    env: {},
    metadata: { debugger: env.debugpy, gpu_pilot: gpuPilot },
  };
}

/** Why `dir` cannot hold kernelspecs, in words, from a failed mkdir/write's error. */
function folderProblem(dir: string, e: unknown): KernelError {
  const code = (e as NodeJS.ErrnoException).code;
  const why =
    code === "EACCES" || code === "EPERM" || code === "EROFS"
      ? "is read-only for this user"
      : code === "ENOTDIR" || code === "EEXIST"
        ? "is not a folder (a file is in the way)"
        : `cannot be written (${(e as Error).message})`;
  return new KernelError(
    `The Jupyter data folder ${dir} ${why}: no kernel was installed. Set JUPYTER_DATA_DIR to a folder you can write, or fix that one.`,
  );
}

/** One kernelspec folder as {@link listKernels} and {@link installKernel} see it. */
export interface KernelEntry {
  name: string;
  dir: string;
  displayName: string;
  /** Set for a GPU Pilot kernel (see the module comment), else undefined. */
  gpuPilot?: GpuPilotMetadata;
}

/** The largest kernel.json read (bytes); Jupyter's are well under 4 KiB. */
export const KERNEL_JSON_MAX_BYTES = 256 * 1024;

/**
 * The kernelspec in `dir` (named `name`), or undefined when `dir` is no folder with a readable
 * kernel.json (read through the safe reader: a regular file of at most {@link KERNEL_JSON_MAX_BYTES}).
 * Never throws.
 */
export function readKernel(dir: string, name: string): KernelEntry | undefined {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return undefined;
    const read = readWorkspaceFile(join(dir, "kernel.json"), { maxBytes: KERNEL_JSON_MAX_BYTES });
    if (!read.ok) return undefined;
    const spec = JSON.parse(read.bytes.toString("utf8")) as Record<string, unknown>;
    const displayName = typeof spec.display_name === "string" ? spec.display_name : name;
    const meta = (spec.metadata as Record<string, unknown> | undefined)?.gpu_pilot as GpuPilotMetadata | undefined;
    const ours =
      meta && typeof meta === "object" && typeof meta.version === "number" && isFile(join(dir, LAUNCHER_FILE_NAME));
    return { name, dir, displayName, ...(ours ? { gpuPilot: meta } : {}) };
  } catch {
    return undefined;
  }
}

/** Removes the launcher's records (and its temporary files) in `folder`, then the folder when that left it empty. Never throws: what stays is named by the caller. */
function removeStartRecords(folder: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const n of names) {
    if (START_RECORD_NAME.test(n) || /^\.[0-9]{1,10}\.tmp$/.test(n)) {
      try {
        unlinkSync(join(folder, n));
      } catch {
        /* named below */
      }
    }
  }
  try {
    rmdirSync(folder);
  } catch {
    /* not empty: kept */
  }
}

const isFile = (p: string): boolean => {
  try {
    return lstatSync(p).isFile();
  } catch {
    return false;
  }
};

/**
 * The kernelspecs in `<dataDir>/kernels`, sorted by name; with `all` false only GPU Pilot's.
 * A missing folder lists none. Never throws.
 */
export function listKernels(dataDir: string, all = false): KernelEntry[] {
  const kernels = join(dataDir, "kernels");
  let names: string[];
  try {
    names = readdirSync(kernels);
  } catch {
    return [];
  }
  return names
    .filter((n) => KERNEL_NAME.test(n))
    .sort()
    .map((n) => readKernel(join(kernels, n), n.toLowerCase()))
    .filter((k): k is KernelEntry => k !== undefined && (all || k.gpuPilot !== undefined));
}

/** Input of {@link installKernel}. */
export interface InstallRequest {
  dataDir: string;
  /** Already validated ({@link validateKernelName}). */
  name: string;
  env: KernelEnvironment;
  selection: KernelSelection;
}

/**
 * Writes `<dataDir>/kernels/<name>/` with kernel.json and the launcher (each through a temporary
 * file renamed over the old one; no link followed). The data folder is made when missing, as
 * `jupyter kernelspec install` does. An existing GPU Pilot kernel of that name is replaced.
 * @returns the kernel folder and kernel.json's object.
 * @throws KernelError when the data folder cannot be made or written (read-only, a file in the
 *   way), or `<name>` exists and is not a GPU Pilot kernel (or is a symbolic link).
 */
export function installKernel(req: InstallRequest): { dir: string; spec: Record<string, unknown> } {
  const kernels = join(req.dataDir, "kernels");
  const dir = join(kernels, req.name);
  try {
    mkdirSync(kernels, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw folderProblem(req.dataDir, e);
  }
  const existing = existingKind(dir);
  if (existing === "other")
    throw new KernelError(
      `A kernel named "${req.name}" exists in ${kernels} and GPU Pilot did not create it: choose another name (--name).`,
    );
  if (existing === "link")
    throw new KernelError(
      `${dir} is a symbolic link: GPU Pilot does not write through links. Choose another name (--name).`,
    );
  const launcher = join(dir, LAUNCHER_FILE_NAME);
  const spec = buildKernelJson(req.env, launcher, req.selection);
  try {
    if (existing === "none") mkdirSync(dir, { mode: 0o755 });
    writeFileSafely(launcher, LAUNCHER_SOURCE);
    writeFileSafely(join(dir, "kernel.json"), JSON.stringify(spec, null, 2) + "\n");
  } catch (e) {
    throw folderProblem(kernels, e);
  }
  return { dir, spec };
}

/** What is at a kernel folder's path: nothing, a GPU Pilot kernel, a link, or something else. */
function existingKind(dir: string): "none" | "ours" | "link" | "other" {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return "none";
  }
  if (st.isSymbolicLink()) return "link";
  return readKernel(dir, "")?.gpuPilot ? "ours" : "other";
}

/**
 * Removes the GPU Pilot kernel `name` from `<dataDir>/kernels`: its kernel.json, its launcher,
 * the launcher's start records (`starts/<pid>.json`, common/src/kernel/startRecord.ts), then its folder.
 * @returns the folder removed.
 * @throws KernelError when the name is not valid, there is no such kernel, it is not GPU Pilot's
 *   (no `metadata.gpu_pilot` or no launcher: refused, nothing removed), or its folder holds files
 *   GPU Pilot did not write (those are kept and named).
 */
export function removeKernel(dataDir: string, name: string): string {
  const n = validateKernelName(name);
  const dir = join(dataDir, "kernels", n);
  const kind = existingKind(dir);
  if (kind === "none") throw new KernelError(`No kernel named "${n}" in ${join(dataDir, "kernels")}.`);
  if (kind !== "ours")
    throw new KernelError(
      `The kernel "${n}" (${dir}) was not created by GPU Pilot: not removed (jupyter kernelspec remove ${n} removes any kernel).`,
    );
  for (const f of ["kernel.json", LAUNCHER_FILE_NAME]) unlinkSync(join(dir, f));
  removeStartRecords(join(dir, START_RECORDS_FOLDER));
  const rest = readdirSync(dir);
  if (rest.length > 0)
    throw new KernelError(
      `Removed the kernel "${n}", but its folder ${dir} still holds files GPU Pilot did not write (${rest.join(", ")}): kept.`,
    );
  rmdirSync(dir);
  return dir;
}
