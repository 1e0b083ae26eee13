/**
 * Whose is a process holding a GPU: this user's, another user's, or unknown (not visible here, e.g.
 * in another container's PID namespace). Linux only, read from `/proc/<pid>`'s owner; no `vscode`.
 */
import * as fs from "node:fs";

/** The owner of a process as far as this machine can tell. */
export type ProcessOwner = "me" | "other" | "unknown";

/** Looks a pid up in `/proc` (Linux); `unknown` elsewhere or when the pid is not visible. */
export function processOwner(pid: number): ProcessOwner {
  if (process.platform !== "linux" || typeof process.getuid !== "function" || !Number.isInteger(pid) || pid <= 0)
    return "unknown";
  try {
    return fs.statSync(`/proc/${pid}`).uid === process.getuid() ? "me" : "other";
  } catch {
    return "unknown";
  }
}
