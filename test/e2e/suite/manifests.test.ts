// Issue 13: manifests that allocate GPUs, in the real editor. Opening k8s/deployment.yaml (VS Code's
// built-in `yaml` language) shows GPU018 on the GPU request that has no limit, and its quick fix adds
// the limit; k8s/Dockerfile (built-in `dockerfile` language) shows GPU019 on the baked-in
// CUDA_VISIBLE_DEVICES. Polling only, no fixed sleeps.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { applyToText, describeDiagnostics, getApi, gpuDiagnostics, openWorkspaceFile, waitFor } from "./util";
import { revertDirtyWorkspaceDocuments } from "./helpers";

suite("GPU Pilot: container and cluster manifests", () => {
  suiteSetup(async () => {
    await getApi();
  });
  teardown(async () => {
    await revertDirtyWorkspaceDocuments();
  });

  test("a. GPU018 in an opened Deployment manifest, and its quick fix adds the limit", async () => {
    const editor = await openWorkspaceFile("k8s/deployment.yaml");
    const doc = editor.document;
    assert.equal(doc.languageId, "yaml");
    const diag = await waitFor(
      () => gpuDiagnostics(doc.uri, "GPU018")[0],
      `GPU018 on k8s/deployment.yaml (now: ${describeDiagnostics(doc.uri)})`,
      60_000,
    );
    assert.equal(diag.range.start.line + 1, 19, describeDiagnostics(doc.uri));
    assert.equal(diag.range.start.character, 14);
    assert.equal(diag.severity, vscode.DiagnosticSeverity.Error);
    assert.match(diag.message, /container "train" of Deployment "train" without a limit/);

    const title = "Set limits nvidia.com/gpu: 1 (equal to the request)";
    let seen: string[] = [];
    const fix = await waitFor(
      async () => {
        const all =
          (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
            "vscode.executeCodeActionProvider",
            doc.uri,
            diag.range,
            vscode.CodeActionKind.QuickFix.value,
          )) ?? [];
        seen = all.map((a) => a.title);
        return all.find((a): a is vscode.CodeAction => a.title === title && !!(a as vscode.CodeAction).edit);
      },
      `the quick fix "${title}"`,
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; offered: ${JSON.stringify(seen)}`);
    });
    const edits = fix.edit!.get(doc.uri);
    assert.ok(
      applyToText(doc, edits).endsWith(
        "              nvidia.com/gpu: 1\n            limits:\n              nvidia.com/gpu: 1\n",
      ),
      applyToText(doc, edits),
    );
    assert.ok(await vscode.workspace.applyEdit(fix.edit!), "applyEdit failed");
    await waitFor(
      () => gpuDiagnostics(doc.uri, "GPU018").length === 0,
      `GPU018 to go after the fix (now: ${describeDiagnostics(doc.uri)})`,
      30_000,
    );
  });

  test("b. GPU019 in an opened Dockerfile, on the continued ENV line", async () => {
    const editor = await openWorkspaceFile("k8s/Dockerfile");
    const doc = editor.document;
    assert.equal(doc.languageId, "dockerfile");
    const diag = await waitFor(
      () => gpuDiagnostics(doc.uri, "GPU019")[0],
      `GPU019 on k8s/Dockerfile (now: ${describeDiagnostics(doc.uri)})`,
      60_000,
    );
    assert.equal(diag.range.start.line + 1, 3, describeDiagnostics(doc.uri));
    assert.equal(diag.severity, vscode.DiagnosticSeverity.Warning);
  });
});
