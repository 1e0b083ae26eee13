// Issue 46 items 1 and 3: a committed pyproject.toml with many bad keys gives ONE warning per file
// (it gave one window/showMessageRequest per key: 30,000 pop-ups), and a client that answers that
// request with an error (minimal clients reply MethodNotFound) does not end the server (the
// request's promise had no .catch: Node ends a process on an unhandled rejection).
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  ErrorCodes,
  ResponseError,
  ShowMessageRequest,
  type ShowMessageRequestParams,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";

const lsp = useLanguageServer();
const asked: ShowMessageRequestParams[] = [];
before(async () => {
  await lsp.ready;
  // As a minimal client does: no such method.
  lsp.conn.onRequest(ShowMessageRequest.type, (params) => {
    asked.push(params);
    throw new ResponseError(ErrorCodes.MethodNotFound, "Unhandled method window/showMessageRequest");
  });
});

const LATE =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
const codes = (ds: Array<{ code?: unknown }>) => ds.map((d) => d.code);

test("5,000 unknown severity keys: one warning for the file; answered with an error, the server lints on", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-cfgproblems-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(
    join(dir, "pyproject.toml"),
    "[tool.gpu-pilot.severity]\n" + Array.from({ length: 5000 }, (_, i) => `GPX${i} = "error"\n`).join(""),
  );
  const first = pathToFileURL(join(dir, "a.py")).href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: first, languageId: "python", version: 1, text: LATE },
  });
  await lsp.diagnosticsFor(first, (d) => codes(d).includes("GPU001"));
  // The warning is sent before the diagnostics, on the same stream: it has arrived by now.
  assert.equal(asked.length, 1, asked.map((a) => a.message).join("\n"));
  assert.match(
    asked[0].message,
    /line 2: \[tool\.gpu-pilot\] severity: unknown rule code GPX0 \(and more: other problems in the GPU Pilot output\)/,
  );
  // The server is still there after the error answer: a second document of the same project is
  // linted (its problems, the same, are not shown again).
  const second = pathToFileURL(join(dir, "b.py")).href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: second, languageId: "python", version: 1, text: LATE },
  });
  await lsp.diagnosticsFor(second, (d) => codes(d).includes("GPU001"));
  assert.equal(asked.length, 1);
});
