/**
 * Typed getters for the `gpuPilot.run.*` settings (resource scope: read for the file's folder).
 * Values of the wrong type fall back to the default. In an untrusted workspace VS Code ignores the
 * workspace values of the settings listed in package.json's `restrictedConfigurations`
 * (customArgs, env, dockerImage), and the run command refuses to run at all.
 */
import * as vscode from "vscode";
import { isLauncher, type LauncherKind } from "../../../common/src/run/launch";

/** Settings that change what the CodeLens shows. */
export const CODELENS_KEYS: readonly string[] = ["gpuPilot.run.codeLens", "gpuPilot.run.launcher"];

function cfg(resource?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("gpuPilot", resource);
}

function stringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
}

/** `gpuPilot.run.launcher` (default `python`). */
export function launcher(resource?: vscode.Uri): LauncherKind {
  const v = cfg(resource).get<unknown>("run.launcher");
  return isLauncher(v) ? v : "python";
}

/** `gpuPilot.run.args`: arguments after the script, one element per argument. */
export function scriptArgs(resource?: vscode.Uri): string[] {
  return stringArray(cfg(resource).get<unknown>("run.args"));
}

/** `gpuPilot.run.nproc`: processes for torchrun / accelerate; 0 (default) = one per selected GPU. */
export function nproc(resource?: vscode.Uri): number {
  const v = cfg(resource).get<unknown>("run.nproc");
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : 0;
}

/** `gpuPilot.run.customArgs`: the custom launcher's command line template. */
export function customArgs(resource?: vscode.Uri): string[] {
  return stringArray(cfg(resource).get<unknown>("run.customArgs"));
}

/** `gpuPilot.run.dockerImage` ("" when unset). */
export function dockerImage(resource?: vscode.Uri): string {
  const v = cfg(resource).get<unknown>("run.dockerImage");
  return typeof v === "string" ? v.trim() : "";
}

/** `gpuPilot.run.env`: extra variables for the run (values may use `${env:NAME}`); non-objects give {}. */
export function runEnv(resource?: vscode.Uri): Record<string, unknown> {
  const v = cfg(resource).get<unknown>("run.env");
  return v && typeof v === "object" && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {};
}

/** `gpuPilot.run.codeLens` (default true). */
export function codeLens(resource?: vscode.Uri): boolean {
  return cfg(resource).get<unknown>("run.codeLens") !== false;
}
