// Issue 43 item 2, the editor: Fix All (source.fixAll.gpuPilot, also on save) applies only the safe
// fixes; the unsafe ones come only from their own kind (command gpuPilot.applyUnsafeFixes), which a
// broader request (source, source.fixAll) never returns.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  CodeActionRequest,
  type CodeAction,
  type CodeActionKind,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";
import { UNSAFE_FIXES_KIND } from "../../../../common/src/lsp/commandIds";

const lsp = useLanguageServer();
before(() => lsp.ready);

/** GPU001 (a safe fix: move the write above `import torch`) and GPU007 (an unsafe fix: the misspelled name). */
const SRC =
  'import os\nimport torch\n\nuse_gpu = torch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\nos.environ["CUDA_VISIBLE_DEVICE"] = "1"\n';

async function actionsFor(uri: string, only: CodeActionKind[]): Promise<CodeAction[]> {
  const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  return (await lsp.conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range,
    context: { diagnostics: [], only },
  })) as CodeAction[];
}
const newText = (a: CodeAction | undefined, uri: string): string | undefined => a?.edit?.changes?.[uri]?.[0]?.newText;

test("Fix All is safe only; the unsafe kind applies every fix; source and source.fixAll never return the unsafe action", async () => {
  assert.deepEqual((lsp.init.capabilities.codeActionProvider as { codeActionKinds?: string[] }).codeActionKinds, [
    "quickfix",
    "source.fixAll.gpuPilot",
    UNSAFE_FIXES_KIND,
  ]);
  const uri = pathToFileURL("/tmp/gp-unsafe/a.py").href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: SRC },
  });
  await lsp.diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU001") && d.some((x) => x.code === "GPU007"));
  const safe = await actionsFor(uri, ["source.fixAll.gpuPilot"]);
  assert.equal(safe.length, 1);
  assert.equal(
    newText(safe[0], uri),
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\nimport torch\n\nuse_gpu = torch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICE"] = "1"\n',
  );
  const unsafe = await actionsFor(uri, [UNSAFE_FIXES_KIND]);
  assert.equal(unsafe.length, 1);
  assert.equal(unsafe[0].kind, UNSAFE_FIXES_KIND);
  assert.equal(unsafe[0].title, "GPU Pilot: Apply all fixes, unsafe ones included");
  // The rename (unsafe), after which the renamed write is late too and moves up (safe).
  assert.equal(
    newText(unsafe[0], uri),
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\nuse_gpu = torch.cuda.is_available()\n',
  );
  for (const only of [["source"], ["source.fixAll"]]) {
    const got = await actionsFor(uri, only);
    assert.deepEqual(
      got.map((a) => a.kind),
      ["source.fixAll.gpuPilot"],
      only[0],
    );
    assert.equal(newText(got[0], uri), newText(safe[0], uri), only[0]);
  }
});

test("only unsafe fixes: Fix All offers nothing, the unsafe command the rename", async () => {
  const uri = pathToFileURL("/tmp/gp-unsafe/b.py").href;
  const text = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICE"] = "1"\nimport torch\n';
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  await lsp.diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU007"));
  assert.deepEqual(await actionsFor(uri, ["source.fixAll.gpuPilot"]), []);
  const [unsafe] = await actionsFor(uri, [UNSAFE_FIXES_KIND]);
  assert.equal(newText(unsafe, uri), text.replace('DEVICE"', 'DEVICES"'));
});
