/**
 * What a kernel install asks of the machine, each with a deadline and an output cap: the Python
 * environment (its version, its name, whether ipykernel and debugpy import) and the Jupyter data
 * folder (`jupyter --data-dir`). Processes run through execa with argument arrays, never a shell.
 */
import { isAbsolute } from "node:path";
import { defaultJupyterDataDir, KernelError, type KernelEnvironment } from "./kernelspec";

/** How long the interpreter may take to answer (ms): importing ipykernel on a cold disk is slow. */
export const PROBE_TIMEOUT_MS = 30_000;
/** How long `jupyter --data-dir` may take (ms). */
export const DATA_DIR_TIMEOUT_MS = 10_000;
/** The most output read from either (bytes). */
export const PROBE_MAX_BUFFER = 64 * 1024;

/**
 * Run by the interpreter: one JSON line with its absolute executable, version, prefix, base prefix,
 * whether it is a conda environment, and what importing ipykernel and debugpy gave. `import
 * ipykernel` (not find_spec) so that a broken install is caught here, not at the kernel's start.
 */
export const PROBE_SOURCE = `import json, os, sys
def tried(name):
    try:
        __import__(name)
        return None
    except BaseException as e:
        return "%s: %s" % (type(e).__name__, e)
print(json.dumps({"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2], "prefix": sys.prefix,
  "base_prefix": getattr(sys, "base_prefix", sys.prefix), "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
  "ipykernel": tried("ipykernel"), "debugpy": tried("debugpy")}))
`;

/** What {@link probePython} found. */
export interface PythonFacts extends KernelEnvironment {
  /** Why `import ipykernel` failed, or undefined when it imports. */
  ipykernelError?: string;
}

type Execa = typeof import("execa").execa;
let execaModule: Promise<typeof import("execa")> | undefined;
/** execa, run at the first process (an `import()`: in the bundles its code runs then, esbuild.mjs deferredImports). */
async function loadExeca(): Promise<Execa> {
  execaModule ??= import("execa");
  return (await execaModule).execa;
}

/** The environment's name from its prefix: a venv's or conda env's folder name; undefined for a base install. */
export function envNameOf(prefix: string, basePrefix: string, conda: boolean): string | undefined {
  const name = prefix.split(/[\\/]/).filter(Boolean).pop();
  if (prefix !== basePrefix) return name;
  return conda ? name : undefined;
}

/**
 * Asks `python` (a path or a name on PATH) about itself with {@link PROBE_SOURCE}.
 * @returns the facts; `python` is the interpreter's absolute `sys.executable` (a bare name is resolved).
 * @throws KernelError when it cannot be started, does not answer within `timeoutMs`, exits non-zero
 *   or prints something else than the JSON line.
 */
export async function probePython(python: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<PythonFacts> {
  const execa = await loadExeca();
  const r = await execa(python, ["-c", PROBE_SOURCE], {
    timeout: timeoutMs,
    maxBuffer: PROBE_MAX_BUFFER,
    reject: false,
    stdin: "ignore",
    encoding: "utf8",
    windowsHide: true,
  });
  if (r.timedOut) throw new KernelError(`${python} did not answer within ${Math.round(timeoutMs / 1000)} s.`);
  if (r.failed && r.exitCode === undefined)
    throw new KernelError(`Cannot start ${python}: ${(r.cause as Error | undefined)?.message ?? r.shortMessage}.`);
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(String(r.stdout).trim().split("\n").pop() ?? "") as Record<string, unknown>;
  } catch {
    throw new KernelError(
      `${python} is not a Python 3 interpreter GPU Pilot can ask (exit ${r.exitCode}: ${String(r.stderr).trim().slice(-300)}).`,
    );
  }
  const executable = typeof o.executable === "string" && isAbsolute(o.executable) ? o.executable : python;
  return {
    python: executable,
    version: String(o.version),
    envName: envNameOf(String(o.prefix), String(o.base_prefix), o.conda === true),
    debugpy: o.debugpy === null,
    ...(o.ipykernel === null ? {} : { ipykernelError: String(o.ipykernel) }),
  };
}

/**
 * The probe's facts, or a KernelError that names the package to install when ipykernel does not import.
 * @throws KernelError as {@link probePython}, or "... has no ipykernel ... install it: <python> -m pip install ipykernel".
 */
export async function kernelEnvironmentOf(python: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<KernelEnvironment> {
  const facts = await probePython(python, timeoutMs);
  if (facts.ipykernelError !== undefined) {
    throw new KernelError(
      `${facts.python} has no usable ipykernel (${facts.ipykernelError}): a Jupyter kernel needs it. Install it into that environment: ${facts.python} -m pip install ipykernel (or conda install ipykernel).`,
    );
  }
  return { python: facts.python, version: facts.version, envName: facts.envName, debugpy: facts.debugpy };
}

/**
 * The Jupyter data folder (kernelspec.ts module comment): `JUPYTER_DATA_DIR` when set and not
 * empty, else the absolute path `jupyter --data-dir` prints within `timeoutMs`, else
 * {@link defaultJupyterDataDir}. Never throws.
 * @returns the folder and where it came from.
 */
export async function resolveJupyterDataDir(
  env: NodeJS.ProcessEnv = process.env,
  jupyter = "jupyter",
  timeoutMs = DATA_DIR_TIMEOUT_MS,
): Promise<{ dir: string; source: "JUPYTER_DATA_DIR" | "jupyter --data-dir" | "default" }> {
  if (env.JUPYTER_DATA_DIR) return { dir: env.JUPYTER_DATA_DIR, source: "JUPYTER_DATA_DIR" };
  try {
    const execa = await loadExeca();
    const r = await execa(jupyter, ["--data-dir"], {
      timeout: timeoutMs,
      maxBuffer: PROBE_MAX_BUFFER,
      reject: false,
      stdin: "ignore",
      encoding: "utf8",
      windowsHide: true,
      env,
      extendEnv: false,
    });
    const line =
      String(r.stdout ?? "")
        .trim()
        .split(/\r?\n/)
        .pop() ?? "";
    if (r.exitCode === 0 && isAbsolute(line)) return { dir: line, source: "jupyter --data-dir" };
  } catch {
    /* no jupyter: the default */
  }
  return { dir: defaultJupyterDataDir(env), source: "default" };
}
