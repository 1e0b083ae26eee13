/**
 * GPU Pilot's folder in the user's cache: where the CLI keeps its result cache (server/src/cliCache.ts)
 * and the extension the V8 code cache of its client bundle (client/src/boot/codeCache.ts).
 * Node's path and os only; no `vscode`.
 */
import { homedir } from "node:os";
import { join } from "node:path";

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
