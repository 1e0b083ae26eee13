/**
 * Which Python runs a file: the Python extension's active environment for that file when the
 * extension (ms-python.python) is installed, else `python3` from PATH. Every choice is logged.
 */
import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import { log } from "../log";

/** The interpreter to run and where the choice came from. */
export interface Interpreter {
  /** Executable path, or the bare name `python3`. */
  path: string;
  /** `python-extension` (its active environment) or `default` (`python3`). */
  source: "python-extension" | "default";
}

const PYTHON_EXTENSION_ID = "ms-python.python";
/** The Python extension can be slow to activate; past this (ms) the default is used. */
const API_TIMEOUT_MS = 15_000;

function withTimeout<T>(p: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    Promise.resolve(p).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * Resolves the interpreter for `resource` (a file). Never throws: any problem with the Python
 * extension is logged and `python3` is used.
 */
export async function resolveInterpreter(resource: vscode.Uri): Promise<Interpreter> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
    log.info(`The Python extension (${PYTHON_EXTENSION_ID}) is not installed: running with python3 from PATH.`);
    return { path: "python3", source: "default" };
  }
  try {
    const api = await withTimeout(PythonExtension.api(), API_TIMEOUT_MS, "The Python extension");
    const envPath = api.environments.getActiveEnvironmentPath(resource);
    const env = await withTimeout(api.environments.resolveEnvironment(envPath), API_TIMEOUT_MS, "The Python extension");
    const exe = env?.executable.uri?.fsPath ?? envPath.path;
    if (exe) {
      log.info(`Interpreter from the Python extension's active environment: ${exe}`);
      return { path: exe, source: "python-extension" };
    }
    log.warn("The Python extension has no active environment: running with python3 from PATH.");
  } catch (e) {
    log.warn(
      `Could not ask the Python extension for the interpreter (${(e as Error).message}): running with python3 from PATH.`,
    );
  }
  return { path: "python3", source: "default" };
}
