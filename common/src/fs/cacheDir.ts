/**
 * GPU Pilot's folder in the user's cache: where the CLI keeps its result cache (server/src/cliCache.ts)
 * and the extension the V8 code cache of its client bundle (client/src/boot/codeCache.ts), and the
 * check both make of what they read and write there. Node's fs, path and os only; no `vscode`.
 */
import { lstatSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileKind } from "./workspaceFile";

/**
 * The folder: `GPU_PILOT_CACHE_DIR`; on Windows `%LOCALAPPDATA%\gpu-pilot`; else
 * `$XDG_CACHE_HOME/gpu-pilot`, else `~/.cache/gpu-pilot`. Throws what `os.homedir()` throws
 * when it is needed and there is no home folder.
 */
export function cacheDirOf(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.GPU_PILOT_CACHE_DIR) return env.GPU_PILOT_CACHE_DIR;
  if (platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "gpu-pilot");
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "gpu-pilot");
  return join(homedir(), ".cache", "gpu-pilot");
}

/**
 * Why `st` (the lstat of `label`) may not be trusted in a cache (a phrase naming `label`), or null:
 * it must belong to the current user and not be writable by group or others. Where uids do not
 * exist (Windows) nothing is checked.
 */
export function notPrivate(st: Stats, label: string): string | null {
  if (typeof process.getuid !== "function") return null;
  if (st.uid !== process.getuid()) return `${label} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `${label} is writable by group or others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/**
 * Why `path` is not fit to hold or be a cache (a phrase), or null: it must not be a symbolic link,
 * must be a folder (or, `file`, a regular file), and {@link notPrivate} must pass. A missing path is
 * null (it will be made).
 */
export function unfit(path: string, kind: "folder" | "file"): string | null {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
      ? null
      : `${path} cannot be examined (${(e as NodeJS.ErrnoException).code})`;
  }
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (kind === "folder" ? !st.isDirectory() : !st.isFile()) return `${path} is ${fileKind(st)}`;
  return notPrivate(st, path);
}
