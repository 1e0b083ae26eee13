// Issue 18 item 3: the light bulb's quick-fix request no longer runs a whole fix-all. A client
// that resolves edits (VS Code does) gets "Fix all" without its edit, and codeAction/resolve
// computes it when chosen. Cost is measured in bench/fix-scaling.ts, never here.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  CodeActionRequest,
  CodeActionResolveRequest,
  type CodeAction,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";

const lsp = useLanguageServer({ textDocument: { codeAction: { resolveSupport: { properties: ["edit"] } } } });
before(() => lsp.ready);

const SRC =
  'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,0"\n';

test("quick fixes carry a lazy 'Fix all'; resolving it gives the same edit as source.fixAll", async () => {
  assert.equal((lsp.init.capabilities.codeActionProvider as { resolveProvider?: boolean }).resolveProvider, true);
  const uri = pathToFileURL("/tmp/gp-resolve/a.py").href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: SRC },
  });
  const diags = await lsp.diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU001"));
  const d = diags.find((x) => x.code === "GPU001")!;
  const actions = (await lsp.conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d] },
  })) as CodeAction[];
  const lazy = actions.find((a) => a.title === "Fix all auto-fixable GPU Pilot problems");
  assert.ok(lazy, JSON.stringify(actions.map((a) => a.title)));
  assert.equal(lazy.edit, undefined, "no edit computed on the light-bulb request");
  assert.deepEqual(lazy.data, { gpuPilotFixAll: uri });
  const resolved = await lsp.conn.sendRequest(CodeActionResolveRequest.type, lazy);
  const eager = (await lsp.conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [], only: ["source.fixAll.gpuPilot"] },
  })) as CodeAction[];
  assert.equal(eager.length, 1);
  assert.deepEqual(resolved.edit, eager[0].edit);
  const text = resolved.edit!.changes![uri][0].newText;
  assert.match(text, /^import os\nos\.environ\["CUDA_VISIBLE_DEVICES"\] = "1"\n/);
});
