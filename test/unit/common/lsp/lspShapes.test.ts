// The language server checks the shape of what the client sends (issue 18, item 12): settings at
// start and in gpuPilot/settings, and gpuPilot/inventory. A key of the wrong shape is dropped (a
// warning in the server's log), a malformed inventory is ignored; linting goes on as before.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DidOpenTextDocumentNotification } from "vscode-languageserver-protocol/node";
import {
  checkEditorSettings,
  checkInventoryParams,
  InventoryNotification,
  SettingsNotification,
} from "../../../../common/src/lsp/protocol";
import { useLanguageServer } from "../../support/lspHarness";

const GPU = {
  index: 0,
  uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
  name: "NVIDIA H200",
  pciBusId: "00000000:00:06.0",
  memoryTotalMiB: 143771,
  memoryFreeMiB: null,
};

test("checkInventoryParams: the protocol shape, or a problem in words", () => {
  assert.deepEqual(checkInventoryParams({ gpus: [GPU], selection: ["0"] }), {
    value: { gpus: [GPU], selection: ["0"] },
  });
  assert.deepEqual(checkInventoryParams({ gpus: null, selection: [] }), { value: { gpus: null, selection: [] } });
  assert.deepEqual(checkInventoryParams(null), { problem: "not an object" });
  assert.deepEqual(checkInventoryParams({ gpus: "x", selection: [] }), {
    problem: "gpus is neither null nor an array",
  });
  assert.deepEqual(checkInventoryParams({ gpus: [{ ...GPU, index: -1 }], selection: [] }), {
    problem: "gpus[0] is not a GPU (index, uuid, name, pciBusId, memoryTotalMiB, memoryFreeMiB)",
  });
  assert.ok("problem" in checkInventoryParams({ gpus: [{ ...GPU, memoryTotalMiB: "big" }], selection: [] }));
  assert.deepEqual(checkInventoryParams({ gpus: [], selection: "0" }), {
    problem: "selection is not an array of strings",
  });
});

test("checkEditorSettings: well-formed keys kept, others dropped and named", () => {
  const good = {
    select: ["GPU001"],
    ignore: [],
    eagerInitModules: ["mylib"],
    severity: { GPU001: "error" },
    configurationPreference: "editorOnly",
    inlayHints: false,
    maxFileSizeKB: 0,
  };
  assert.deepEqual(checkEditorSettings(good), { value: good, problems: [] });
  assert.deepEqual(checkEditorSettings(undefined), { value: {}, problems: [] });
  assert.deepEqual(checkEditorSettings("x"), { value: {}, problems: ["the settings are not an object"] });
  const bad = checkEditorSettings({
    select: "X",
    ignore: [1],
    severity: { GPU001: "fatal" },
    configurationPreference: "mine",
    inlayHints: "yes",
    maxFileSizeKB: -1,
    other: 1,
  });
  assert.deepEqual(bad.value, {});
  assert.deepEqual(bad.problems, [
    "select is not an array of strings",
    "ignore is not an array of strings",
    "severity is not an object of severities (error, warning, information, hint)",
    "configurationPreference is not editorFirst, filesystemFirst or editorOnly",
    "inlayHints is not true or false",
    "maxFileSizeKB is not a number of KB ≥ 0",
  ]);
});

const lsp = useLanguageServer();

test("language server: malformed settings and inventory are ignored, linting goes on", async () => {
  await lsp.ready;
  // A string select would be read character by character ("X": no rule enabled) if trusted.
  await lsp.conn.sendNotification(SettingsNotification.method, { select: "X", severity: [1] });
  await lsp.conn.sendNotification(InventoryNotification.method, { gpus: { length: 1 }, selection: 5 });
  const uri = "file:///tmp/gp-shapes/a.py";
  const text = 'import torch\ntorch.cuda.init()\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  const diags = await lsp.diagnosticsFor(uri, (d) => d.length > 0);
  assert.ok(
    diags.some((d) => d.code === "GPU001"),
    JSON.stringify(diags.map((d) => d.code)),
  );
});
