// Issue 3: GPU Pilot lints Jupyter notebooks opened as notebooks (not as JSON text). The notebook is
// a copy of the shared case c20_notebook.ipynb; VS Code's built-in `vscode.ipynb` extension provides
// the `jupyter-notebook` serializer (no Jupyter extension needed), and the language client syncs the
// cells through LSP notebook synchronisation; diagnostics arrive per cell document.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as path from "node:path";
import * as vscode from "vscode";
import { codeOf, describeDiagnostics, EXTENSION_ID, getApi, gpuDiagnostics, waitFor } from "./util";
import { wsUri } from "./helpers";

/** Every cell's diagnostics, for failure messages. */
function describeCells(nb: vscode.NotebookDocument): string {
  return nb
    .getCells()
    .map(
      (c) =>
        `cell ${c.index + 1} (${c.kind === vscode.NotebookCellKind.Code ? "code" : "markup"}, ` +
        `${c.document.languageId}, ${c.document.uri.scheme}): ${describeDiagnostics(c.document.uri)}`,
    )
    .join("; ");
}

suite("GPU Pilot: notebooks", () => {
  test("c20_notebook.ipynb opened as a notebook: GPU001 in cell 2 (line 2), GPU014 in cell 3 (line 1), no GPU002", async () => {
    await getApi();
    const uri = wsUri("c20_notebook.ipynb");
    let nb: vscode.NotebookDocument;
    try {
      nb = await vscode.workspace.openNotebookDocument(uri);
    } catch (e) {
      const ipynb = vscode.extensions.getExtension("vscode.ipynb");
      throw new Error(
        `openNotebookDocument(${uri.fsPath}) failed: ${(e as Error).message}; ` +
          `built-in vscode.ipynb: ${ipynb ? `present (active: ${ipynb.isActive}, kind: ${ipynb.extensionKind})` : "absent"}`,
      );
    }
    await vscode.window.showNotebookDocument(nb);
    assert.equal(nb.notebookType, "jupyter-notebook");
    assert.equal(nb.cellCount, 3, `3 cells expected, got ${nb.cellCount}`);
    for (const c of nb.getCells()) assert.equal(c.document.languageId, "python", `cell ${c.index + 1} language`);
    const cell2 = nb.cellAt(1).document;
    const cell3 = nb.cellAt(2).document;
    try {
      const gpu001 = await waitFor(() => gpuDiagnostics(cell2.uri, "GPU001")[0], "GPU001 in cell 2", 60_000);
      assert.equal(gpu001.range.start.line, 1, `GPU001 on row 2 of cell 2: ${describeCells(nb)}`);
      // The fix is checked for syntax errors when it is offered (the server's lint leaves that to the
      // code action, as for a Python file): it is offered, and it edits cell 1 and cell 2.
      let seen = "[]";
      await waitFor(
        async () => {
          const all =
            (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
              "vscode.executeCodeActionProvider",
              cell2.uri,
              gpu001.range,
              vscode.CodeActionKind.QuickFix.value,
            )) ?? [];
          const actions = all.filter((a): a is vscode.CodeAction => typeof (a as vscode.Command).command !== "string");
          seen = JSON.stringify(
            actions.map((a) => ({
              title: a.title,
              cells: a.edit
                ?.entries()
                .map(([u]) => nb.getCells().findIndex((c) => c.document.uri.toString() === u.toString()) + 1),
            })),
          );
          return actions.find((a) => {
            const cells = new Set(a.edit?.entries().map(([u]) => u.toString()) ?? []);
            return cells.has(nb.cellAt(0).document.uri.toString()) && cells.has(cell2.uri.toString());
          });
        },
        "GPU001's quick fix editing cells 1 and 2",
        30_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; code actions: ${seen}`);
      });
      const gpu014 = await waitFor(() => gpuDiagnostics(cell3.uri, "GPU014")[0], "GPU014 in cell 3", 30_000);
      assert.equal(gpu014.range.start.line, 0, `GPU014 on row 1 of cell 3: ${describeCells(nb)}`);
      // expected.json forbids GPU002 here: the write comes after is_available(), which is GPU001's case.
      const gpu002 = nb.getCells().flatMap((c) => gpuDiagnostics(c.document.uri).filter((d) => codeOf(d) === "GPU002"));
      assert.equal(gpu002.length, 0, `no GPU002 expected: ${describeCells(nb)}`);
      assert.equal(
        gpuDiagnostics(nb.cellAt(0).document.uri).filter((d) => codeOf(d) === "GPU001").length,
        0,
        `GPU001 belongs to cell 2 only: ${describeCells(nb)}`,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; cells: ${describeCells(nb)}`);
    } finally {
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    }
  });

  test("a markdown cell first (test/cases/notebook.ipynb): the message's cell number is VS Code's (among all cells), as the CLI says: (cell 2, line 2)", async () => {
    await getApi();
    const repo = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    const nb = await vscode.workspace.openNotebookDocument(
      vscode.Uri.file(path.join(repo, "test", "cases", "notebook.ipynb")),
    );
    await vscode.window.showNotebookDocument(nb);
    try {
      assert.deepEqual(
        nb.getCells().map((c) => c.kind),
        [
          vscode.NotebookCellKind.Markup,
          vscode.NotebookCellKind.Code,
          vscode.NotebookCellKind.Code,
          vscode.NotebookCellKind.Code,
        ],
      );
      const write = nb.cellAt(2);
      const gpu001 = await waitFor(() => gpuDiagnostics(write.document.uri, "GPU001")[0], "GPU001 in cell 3", 60_000);
      assert.equal(gpu001.range.start.line, 1, describeCells(nb));
      // torch.zeros(1).cuda() is line 2 of the cell VS Code shows as cell 2 (index 1, after the markdown cell).
      assert.match(nb.cellAt(1).document.lineAt(1).text, /^torch\.zeros\(1\)\.cuda\(\)/);
      assert.equal(
        gpu001.message,
        "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by .cuda() (cell 2, line 2): it has no effect in this process (the program stays on the GPUs it already saw)",
      );
      assert.equal(gpu001.relatedInformation?.[0].location.uri.toString(), nb.cellAt(1).document.uri.toString());
    } catch (e) {
      throw new Error(`${(e as Error).message}; cells: ${describeCells(nb)}`);
    } finally {
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    }
  });
});
