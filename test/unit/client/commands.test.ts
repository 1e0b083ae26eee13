// gpuPilot.fixAll (client/src/commands.ts) with the stand-in `vscode` module: it asks for
// `source.fixAll.gpuPilot` in Python editors and in the manifests the server lints (Dockerfile,
// compose, Kubernetes YAML), and says what to open otherwise.
import { commands as vscodeCommands, FakeDocument, recorded, Uri, window } from "../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { commands, FIX_ALL_LANGUAGES } from "../../../client/src/commands";
import type { Ctx } from "../../../client/src/ctx";

/** Runs `command` (gpuPilot.fixAll by default) with an editor of `languageId` (undefined: no editor); returns the codeAction calls and the messages. */
async function fixAll(
  languageId: string | undefined,
  command: "gpuPilot.fixAll" | "gpuPilot.applyUnsafeFixes" = "gpuPilot.fixAll",
): Promise<{ actions: unknown[][]; messages: string[] }> {
  recorded.messages.length = 0;
  window.activeTextEditor =
    languageId === undefined ? undefined : { document: new FakeDocument(Uri.file("/work/proj/f"), languageId) };
  const actions: unknown[][] = [];
  vscodeCommands.registered.set("editor.action.codeAction", (...args: unknown[]) => actions.push(args));
  try {
    await commands[command]({} as Ctx)();
  } finally {
    vscodeCommands.registered.delete("editor.action.codeAction");
    window.activeTextEditor = undefined;
  }
  return { actions, messages: [...recorded.messages] };
}

test("gpuPilot.fixAll: Python, Dockerfile, compose, Kubernetes YAML and shell-script (job script) editors get source.fixAll.gpuPilot", async () => {
  assert.deepEqual([...FIX_ALL_LANGUAGES].sort(), ["dockercompose", "dockerfile", "python", "shellscript", "yaml"]);
  for (const languageId of ["python", "dockerfile", "dockercompose", "yaml", "shellscript"]) {
    const { actions, messages } = await fixAll(languageId);
    assert.deepEqual(actions, [[{ kind: "source.fixAll.gpuPilot", apply: "first" }]], languageId);
    assert.deepEqual(messages, [], languageId);
  }
});

test("gpuPilot.fixAll: another language or no editor: a friendly message, nothing applied", async () => {
  for (const languageId of ["markdown", "json", "plaintext", undefined]) {
    const { actions, messages } = await fixAll(languageId);
    assert.deepEqual(actions, [], String(languageId));
    assert.deepEqual(
      messages,
      ["GPU Pilot: open a Python file or notebook cell, a Dockerfile, a compose file or Kubernetes YAML to fix."],
      String(languageId),
    );
  }
});

test("gpuPilot.applyUnsafeFixes asks for the unsafe kind (not under source.fixAll), in the same editors", async () => {
  const { actions, messages } = await fixAll("python", "gpuPilot.applyUnsafeFixes");
  assert.deepEqual(actions, [[{ kind: "source.gpuPilot.applyUnsafeFixes", apply: "first" }]]);
  assert.deepEqual(messages, []);
  const other = await fixAll("markdown", "gpuPilot.applyUnsafeFixes");
  assert.deepEqual(other.actions, []);
  assert.equal(other.messages.length, 1);
});
