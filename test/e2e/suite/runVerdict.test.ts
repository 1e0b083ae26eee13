// End-to-end test of the run checks' verdict from the language server (issue 19): on
// examples/finetune_wrong_gpu.py (copied into the e2e workspace) the CUDA_VISIBLE_DEVICES="1" write
// comes after torch.cuda.is_available() initialised CUDA: GPU001 says it has no effect, so the run
// check no longer claims it "replaces the selection"; the machine hover on the write says so too.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { getApi, openWorkspaceFile, waitFor } from "./util";

interface VerdictApi {
  setSelection(ids: string[]): Promise<void>;
  checkRun(uri?: vscode.Uri, launcher?: string): Promise<{ kind: string; message: string }[]>;
}

suite("Run checks from the engine", () => {
  suiteTeardown(async () => {
    await ((await getApi()) as unknown as VerdictApi).setSelection([]);
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  test("q. finetune_wrong_gpu.py: GPU001 on its write, so no 'replaces the selection' check and a hover that says the write has no effect", async () => {
    const api = (await getApi()) as unknown as VerdictApi;
    await api.setSelection(["0"]);
    const editor = await openWorkspaceFile("finetune_wrong_gpu.py");
    const uri = editor.document.uri;
    const line = editor.document
      .getText()
      .split("\n")
      .findIndex((l) => l.startsWith('os.environ["CUDA_VISIBLE_DEVICES"] = "1"'));
    await waitFor(
      () =>
        vscode.languages
          .getDiagnostics(uri)
          .some(
            (d) =>
              String(typeof d.code === "object" ? d.code.value : d.code) === "GPU001" && d.range.start.line === line,
          ),
      "GPU001 on the write",
      30_000,
    );
    // (the fake nvidia-smi's python3 on GPU 0 may add a "busy" warning, which never blocks)
    const findings = (await api.checkRun(uri, "python")).filter((f) => f.kind !== "busy");
    assert.deepEqual(
      findings.map((f) => f.kind),
      [],
      JSON.stringify(findings),
    );
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      "vscode.executeHoverProvider",
      uri,
      new vscode.Position(line, 5),
    );
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value))).join("\n");
    assert.match(text, /has no effect here\*\*: CUDA is already initialised when this line runs \(GPU001\)/);
  });
});
