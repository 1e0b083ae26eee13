// More helpers for the e2e suites (notebook, linterExperience, machineHelp): settings changed for
// one test and put back, workspace URIs, hover/inlay-hint text. Polling only: no fixed sleeps.
import * as path from "node:path";
import * as vscode from "vscode";
import { waitFor, workspaceRoot } from "./util";

/** The URI of a workspace file (`rel` uses `/`). */
export function wsUri(rel: string): vscode.Uri {
  return vscode.Uri.file(path.join(workspaceRoot(), ...rel.split("/")));
}

/**
 * Sets `section.key` in the workspace settings (.vscode/settings.json of the test workspace) and
 * waits until the extension host reads the new value. Returns a function that puts the previous
 * workspace value back (and waits for that too): call it in `finally`.
 */
export async function setWorkspaceSetting(section: string, key: string, value: unknown): Promise<() => Promise<void>> {
  const cfg = () => vscode.workspace.getConfiguration(section);
  const before = cfg().inspect(key)?.workspaceValue;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  await cfg().update(key, value, vscode.ConfigurationTarget.Workspace);
  await waitFor(
    () => same(cfg().inspect(key)?.workspaceValue, value),
    `${section}.${key} = ${JSON.stringify(value)} in the workspace settings`,
    10_000,
  );
  return async () => {
    await cfg().update(key, before, vscode.ConfigurationTarget.Workspace);
    await waitFor(
      () => same(cfg().inspect(key)?.workspaceValue, before),
      `${section}.${key} back to ${JSON.stringify(before)}`,
      10_000,
    );
  };
}

/** Reverts every dirty document of the test workspace (best effort; leaves nothing modified for later tests). */
export async function revertDirtyWorkspaceDocuments(): Promise<void> {
  const root = workspaceRoot() + path.sep;
  for (const doc of vscode.workspace.textDocuments) {
    if (!doc.isDirty || doc.uri.scheme !== "file" || !doc.uri.fsPath.startsWith(root)) continue;
    try {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand("workbench.action.files.revert");
    } catch (e) {
      console.log(`[gpu-pilot e2e] could not revert ${doc.uri.fsPath}: ${(e as Error).message}`);
    }
  }
}

/** The position of the first occurrence of `needle` in `doc` (plus `offset` characters). */
export function positionOf(doc: vscode.TextDocument, needle: string, offset = 0): vscode.Position {
  const i = doc.getText().indexOf(needle);
  if (i < 0) throw new Error(`"${needle}" not found in ${doc.uri.fsPath}`);
  return doc.positionAt(i + offset);
}

/** The text of every hover at `pos` (all providers), joined. */
export async function hoverText(uri: vscode.Uri, pos: vscode.Position): Promise<string> {
  const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", uri, pos)) ?? [];
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value))).join("\n---\n");
}

/** The labels of the inlay hints of `uri` in `range` (label parts joined). */
export async function inlayHintLabels(
  uri: vscode.Uri,
  range: vscode.Range,
): Promise<{ label: string; line: number; character: number }[]> {
  const hints =
    (await vscode.commands.executeCommand<vscode.InlayHint[]>("vscode.executeInlayHintProvider", uri, range)) ?? [];
  return hints.map((h) => ({
    label: typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join(""),
    line: h.position.line,
    character: h.position.character,
  }));
}
