/**
 * Finding a launcher's program (torchrun, accelerate, deepspeed, docker, srun): next to the Python
 * interpreter first when it is an absolute path (a virtual environment's own torchrun matches its
 * torch), then on the PATH the task will have. No `vscode` import; only file-system checks, nothing
 * is run.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** Where to look, and how executables are named on this platform. */
export interface FindOptions {
  /** The PATH the task will run with (the run's env PATH when set, else the extension host's). */
  pathEnv: string | undefined;
  /** The interpreter: its folder is searched first when it is absolute. */
  interpreter?: string;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** Windows PATHEXT; default `.EXE;.CMD;.BAT;.COM`. */
  pathExt?: string;
}

function isExecutableFile(p: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    if (platform !== "win32") fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of executable `name`, or undefined when it is found neither next to an absolute
 * interpreter nor in a PATH entry. Relative PATH entries are skipped (they depend on the cwd).
 */
export function findProgram(name: string, opts: FindOptions): string | undefined {
  const platform = opts.platform ?? process.platform;
  const p = platform === "win32" ? path.win32 : path.posix;
  const exts =
    platform === "win32"
      ? [
          "",
          ...(opts.pathExt ?? ".EXE;.CMD;.BAT;.COM")
            .split(";")
            .filter(Boolean)
            .map((e) => e.toLowerCase()),
        ]
      : [""];
  const dirs: string[] = [];
  if (opts.interpreter && p.isAbsolute(opts.interpreter)) dirs.push(p.dirname(opts.interpreter));
  for (const d of (opts.pathEnv ?? "").split(platform === "win32" ? ";" : ":")) {
    if (d && p.isAbsolute(d) && !dirs.includes(d)) dirs.push(d);
  }
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = p.join(dir, name + ext);
      if (isExecutableFile(candidate, platform)) return candidate;
    }
  }
  return undefined;
}
