// Helpers shared by the e2e test files (bundled into each *.test.js). Polling only: no fixed sleeps.
import * as assert from "node:assert/strict";
import * as path from "node:path";
import * as vscode from "vscode";

export const EXTENSION_ID = "gpu-pilot.gpu-pilot";

/** The API object returned by the extension's activate(). */
export interface GpuPilotApi {
  /** Wall time of activate(), ms. */
  activationMs?: number;
  getSelection(): string[];
  setSelection(ids: string[]): Promise<void>;
  getInventory(): unknown;
  refresh(): Promise<void>;
}

/** Calls `fn` until it returns a truthy value; throws with `what` (and the last value/error) after timeoutMs. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  what: string,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end) {
      const detail = lastErr
        ? `last error: ${(lastErr as Error)?.message ?? lastErr}`
        : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Activates GPU Pilot and returns its API (fails clearly when activate() returns nothing). */
export async function getApi(): Promise<GpuPilotApi> {
  const ext = vscode.extensions.getExtension<GpuPilotApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not loaded (extensionDevelopmentPath wrong?)`);
  const api = ext.isActive ? ext.exports : await ext.activate();
  assert.ok(
    api && typeof api.getSelection === "function",
    `${EXTENSION_ID} activate() did not return the API object (got ${typeof api})`,
  );
  return api;
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, "no workspace folder is open");
  return folder.uri.fsPath;
}

/** Opens (and shows) a file of the test workspace. */
export async function openWorkspaceFile(rel: string): Promise<vscode.TextEditor> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, "no workspace folder is open");
  const uri = vscode.Uri.joinPath(folder.uri, ...rel.split("/"));
  const doc = await vscode.workspace.openTextDocument(uri);
  return vscode.window.showTextDocument(doc, { preview: false });
}

export function codeOf(d: vscode.Diagnostic): string {
  const c = d.code;
  if (c === undefined) return "";
  return typeof c === "object" ? String(c.value) : String(c);
}

/** GPU Pilot's diagnostics for `uri`, optionally only those with `code`. */
export function gpuDiagnostics(uri: vscode.Uri, code?: string): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === "gpu-pilot" && (!code || codeOf(d) === code));
}

export function describeDiagnostics(uri: vscode.Uri): string {
  return JSON.stringify(
    vscode.languages.getDiagnostics(uri).map((d) => ({
      source: d.source,
      code: codeOf(d),
      line: d.range.start.line + 1,
      message: d.message,
    })),
  );
}

/** The results folder the runner passes in (also inherited by tasks). */
export function outDir(): string {
  const d = process.env.GPU_PILOT_E2E_OUT;
  assert.ok(d, "GPU_PILOT_E2E_OUT is not set in the extension host");
  return d;
}

export function basename(p: string): string {
  return path.basename(p);
}

/** The text of `doc` after `edits` (non-overlapping, as in a WorkspaceEdit), without touching the document. */
export function applyToText(doc: vscode.TextDocument, edits: readonly vscode.TextEdit[]): string {
  let text = doc.getText();
  const sorted = [...edits].sort((a, b) => doc.offsetAt(b.range.start) - doc.offsetAt(a.range.start));
  for (const e of sorted)
    text = text.slice(0, doc.offsetAt(e.range.start)) + e.newText + text.slice(doc.offsetAt(e.range.end));
  return text;
}
