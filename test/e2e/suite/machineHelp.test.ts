// Issue 7: machine-aware help. With the fake 2 x H200 nvidia-smi (GPU 0 at 00000000:00:06.0, GPU 1 at
// 00000000:00:07.0), the language server gets the inventory and selection from the client
// (gpuPilot/inventory notification) and says which physical GPU a device expression lands on:
// hover on "cuda:0" and, with gpuPilot.inlayHints.physicalDevice, an inlay hint `→ GPU n`.
// Fixtures: machine_env.py (sets CUDA_VISIBLE_DEVICES="1" itself), machine_plain.py (sets nothing),
// machine_nb.ipynb (cell 2 sets CUDA_VISIBLE_DEVICES="1", cell 3 uses "cuda:0").
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { type GpuPilotApi, getApi, openWorkspaceFile, waitFor } from "./util";
import { hoverText, inlayHintLabels, positionOf, setWorkspaceSetting } from "./helpers";

/** Waits until the API's inventory lists GPUs (the client then sends it to the server). */
async function waitForInventory(api: GpuPilotApi): Promise<void> {
  await api.refresh();
  await waitFor(
    () => {
      const inv = api.getInventory() as { gpus?: unknown[] } | undefined;
      return Array.isArray(inv?.gpus) && inv.gpus.length === 2;
    },
    "getInventory() to list the two GPUs of the fake nvidia-smi",
    30_000,
  );
}

/** Polls the hover at `"cuda:0"` of `doc` until `ok(text)`; returns the text. */
async function hoverOnCuda0(doc: vscode.TextDocument, ok: (t: string) => boolean, what: string): Promise<string> {
  const pos = positionOf(doc, '"cuda:0"', 3);
  let last = "";
  await waitFor(async () => ok((last = await hoverText(doc.uri, pos))), what, 30_000).catch((e: Error) => {
    throw new Error(`${e.message}; hover text at ${pos.line + 1}:${pos.character + 1}: ${JSON.stringify(last)}`);
  });
  return last;
}

suite("GPU Pilot: machine-aware help", () => {
  test('a. hover on "cuda:0" in a file that sets CUDA_VISIBLE_DEVICES="1": cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07.0', async () => {
    const api = await getApi();
    await waitForInventory(api);
    assert.deepEqual(api.getSelection(), [], "no GPU should be selected at the start");
    const doc = (await openWorkspaceFile("machine_env.py")).document;
    const expected = "cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07.0";
    const text = await hoverOnCuda0(doc, (t) => t.includes(expected), `the hover to say "${expected}"`);
    assert.match(text, /sets CUDA_VISIBLE_DEVICES="1"/, `the hover should give the reason: ${text}`);
  });

  test('b. with setSelection(["1"]), hover on "cuda:0" in a file that sets nothing says GPU 1 and "GPU Pilot\'s selection is 1"; the inlay hint says → GPU 1', async () => {
    const api = await getApi();
    await waitForInventory(api);
    const doc = (await openWorkspaceFile("machine_plain.py")).document;
    await api.setSelection(["1"]);
    let restoreHints: (() => Promise<void>) | undefined;
    try {
      assert.deepEqual(api.getSelection(), ["1"]);
      const text = await hoverOnCuda0(
        doc,
        (t) => t.includes("cuda:0 → GPU 1 ·") && t.includes("GPU Pilot's selection is 1"),
        `the hover to say "cuda:0 → GPU 1" because "GPU Pilot's selection is 1"`,
      );
      assert.ok(text.includes("NVIDIA H200 · 00000000:00:07.0"), `GPU 1's name and bus id expected: ${text}`);

      restoreHints = await setWorkspaceSetting("gpuPilot", "inlayHints.physicalDevice", true);
      const full = new vscode.Range(0, 0, doc.lineCount, 0);
      const cuda0 = positionOf(doc, '"cuda:0"');
      let last: Awaited<ReturnType<typeof inlayHintLabels>> = [];
      const hint = await waitFor(
        async () => {
          last = await inlayHintLabels(doc.uri, full);
          return last.find((h) => h.label.trim() === "→ GPU 1");
        },
        "an inlay hint `→ GPU 1`",
        30_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; inlay hints: ${JSON.stringify(last)}`);
      });
      assert.equal(hint.line, cuda0.line, `the hint belongs after "cuda:0": ${JSON.stringify(last)}`);
      assert.equal(
        hint.character,
        cuda0.character + '"cuda:0"'.length,
        `the hint sits right after the literal: ${JSON.stringify(last)}`,
      );
    } finally {
      if (restoreHints) await restoreHints();
      await api.setSelection([]);
    }
  });

  test('c. in a notebook, hover on "cuda:0" in cell 3 reads cell 2\'s CUDA_VISIBLE_DEVICES="1": cuda:0 → GPU 1; the inlay hint in the cell says → GPU 1', async () => {
    const api = await getApi();
    await waitForInventory(api);
    const nb = await vscode.workspace.openNotebookDocument(
      vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, "machine_nb.ipynb"),
    );
    await vscode.window.showNotebookDocument(nb);
    let restoreHints: (() => Promise<void>) | undefined;
    try {
      const cell = nb.cellAt(2).document;
      const text = await hoverOnCuda0(
        cell,
        (t) => t.includes("cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07.0"),
        'the hover in cell 3 to say "cuda:0 → GPU 1"',
      );
      assert.match(
        text,
        /because cell 2, line 4 sets CUDA_VISIBLE_DEVICES="1"/,
        `the hover names the cell and line of the write: ${text}`,
      );
      restoreHints = await setWorkspaceSetting("gpuPilot", "inlayHints.physicalDevice", true);
      const cuda0 = positionOf(cell, '"cuda:0"');
      let last: Awaited<ReturnType<typeof inlayHintLabels>> = [];
      await waitFor(
        async () => {
          last = await inlayHintLabels(cell.uri, new vscode.Range(0, 0, cell.lineCount, 0));
          return (
            last.length === 1 &&
            last[0].label.trim() === "→ GPU 1" &&
            last[0].line === cuda0.line &&
            last[0].character === cuda0.character + '"cuda:0"'.length
          );
        },
        'one inlay hint `→ GPU 1` right after "cuda:0" in cell 3',
        30_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; inlay hints: ${JSON.stringify(last)}`);
      });
    } finally {
      if (restoreHints) await restoreHints();
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    }
  });
});
