/**
 * Finding a run's programs: a launcher's (torchrun, accelerate, deepspeed, docker, srun) next to the
 * Python interpreter first when it is an absolute path (a virtual environment's own torchrun matches
 * its torch), then on the PATH the task will have; the program a run starts (the interpreter, a
 * found launcher, a custom command), by its bare name on that PATH or by its absolute path; and
 * whether the script to run is a regular file. No `vscode` import; only file-system checks, nothing
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
    // Windows' app execution aliases (WindowsApps\python3.exe) are reparse points stat may not follow.
    if (platform !== "win32") return false;
    try {
      return !fs.lstatSync(p).isDirectory();
    } catch {
      return false;
    }
  }
}

/**
 * The absolute path of executable `name`, or undefined when it is found neither next to an absolute
 * interpreter nor in a PATH entry. Relative PATH entries are skipped (they depend on the cwd). An
 * absolute `name` is checked as it is (undefined when it is not an executable file); any other name
 * holding a path separator is never found (it depends on the cwd).
 */
export function findProgram(name: string, opts: FindOptions): string | undefined {
  const platform = opts.platform ?? process.platform;
  const p = platform === "win32" ? path.win32 : path.posix;
  if (p.isAbsolute(name)) return isExecutableFile(name, platform) ? name : undefined;
  if (name.includes("/") || (platform === "win32" && name.includes("\\"))) return undefined;
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

/**
 * Why `file` cannot be run as a script, in words (`no such file`, `not a regular file (a folder)`,
 * `EACCES`), or undefined when it is a regular file (symbolic links followed).
 */
export function scriptProblem(file: string): string | undefined {
  try {
    const st = fs.statSync(file);
    if (st.isFile()) return undefined;
    return `not a regular file (${st.isDirectory() ? "a folder" : "a special file"})`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? "no such file" : (code ?? String(e));
  }
}
