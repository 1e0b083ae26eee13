/**
 * The start records of a GPU Pilot kernel (issue 42 item 1): at each start or restart the launcher
 * (common/src/kernel/kernelLauncher.ts) writes `<kernelspec folder>/starts/<pid>.json`, what it
 * applied and the visible-devices value the kernel got. The editor's status bar reads the newest
 * one for the notebook's kernelspec when it cannot ask the kernel itself (no kernel access), and
 * `removeKernel` removes them with the kernel.
 *
 * Shape (version 1): `{"version":1,"pid":4242,"applied":"1"|null,"variable":"CUDA_VISIBLE_DEVICES"|
 * "ROCR_VISIBLE_DEVICES","visible":"1"|null,"startedAt":"2026-12-05T12:00:00Z"}`. `applied` null: the
 * launcher applied nothing (no GPU selected, no selection file, a bad one), and `visible` is what
 * the kernel's environment had anyway (null: unset, every GPU).
 *
 * Files are read through the safe reader (common/src/fs/workspaceFile.ts: regular files only, no
 * link followed, at most {@link START_RECORD_MAX_BYTES}). No `vscode`.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readWorkspaceFile } from "../fs/workspaceFile";

/** The records' folder inside the kernelspec folder (kernelLauncher.ts START_RECORDS_DIR). */
export const START_RECORDS_FOLDER = "starts";
/** A record's file name: the process id and `.json`. */
export const START_RECORD_NAME = /^[0-9]{1,10}\.json$/;
/** The largest record read (bytes); one is about 150. */
export const START_RECORD_MAX_BYTES = 4096;

/** One start of a GPU Pilot kernel. */
export interface KernelStart {
  pid: number;
  /** The ids the launcher applied, joined by commas; null when it applied none. */
  applied: string | null;
  /** The variable that decides the kernel's GPUs on this machine. */
  variable: "CUDA_VISIBLE_DEVICES" | "ROCR_VISIBLE_DEVICES";
  /** That variable's value in the kernel's environment (null: unset, every GPU). */
  visible: string | null;
  /** When it started (ISO 8601, UTC, seconds). */
  startedAt: string;
}

/** The record in `text`, or undefined when it is not a version 1 record. Never throws. */
export function parseKernelStart(text: string): KernelStart | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.version !== 1 || typeof o.pid !== "number" || !Number.isInteger(o.pid) || typeof o.startedAt !== "string")
    return undefined;
  if (o.variable !== "CUDA_VISIBLE_DEVICES" && o.variable !== "ROCR_VISIBLE_DEVICES") return undefined;
  if (!(o.applied === null || typeof o.applied === "string") || !(o.visible === null || typeof o.visible === "string"))
    return undefined;
  return { pid: o.pid, applied: o.applied, variable: o.variable, visible: o.visible, startedAt: o.startedAt };
}

/**
 * The start records of the kernel in `kernelDir`, newest first (by `startedAt`, then pid). A
 * missing or unreadable folder, and files that are not records (links, others' files, malformed
 * ones), give none. Never throws.
 */
export function readKernelStarts(kernelDir: string): KernelStart[] {
  const folder = join(kernelDir, START_RECORDS_FOLDER);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const out: KernelStart[] = [];
  for (const name of names) {
    if (!START_RECORD_NAME.test(name)) continue;
    const r = readWorkspaceFile(join(folder, name), { maxBytes: START_RECORD_MAX_BYTES, noFollow: true });
    const rec = r.ok ? parseKernelStart(r.bytes.toString("utf8")) : undefined;
    if (rec && `${rec.pid}.json` === name) out.push(rec);
  }
  return out.sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.pid - a.pid);
}

/**
 * The start of the kernel in `kernelDir` that runs as `pid` (the probe's answer), else the newest.
 * @returns the record, or undefined when there is none.
 */
export function kernelStartOf(kernelDir: string, pid?: number): KernelStart | undefined {
  const all = readKernelStarts(kernelDir);
  return (pid !== undefined ? all.find((s) => s.pid === pid) : undefined) ?? all[0];
}
