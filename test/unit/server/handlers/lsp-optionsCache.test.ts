// The language server keeps each open document's resolved options (pyproject.toml, torch pin, job
// scripts) between keystrokes, and resolves them again after a watched file changes
// (workspace/didChangeWatchedFiles: the client watches pyproject.toml, requirements, environment
// files and job scripts) or a setting changes.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";

const lsp = useLanguageServer();
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
});

const LATE =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
const codes = (ds: Array<{ code?: unknown }>) => ds.map((d) => d.code);

test("options are kept per document until a watched file changes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-options-"));
  const pyproject = join(dir, "pyproject.toml");
  writeFileSync(pyproject, "[tool.gpu-pilot]\nignore = []\n");
  const uri = pathToFileURL(join(dir, "train.py")).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: LATE },
  });
  await lsp.diagnosticsFor(uri, (d) => codes(d).includes("GPU001"));
  // The pyproject now ignores GPU001; an edit alone does not re-read it (kept options) ...
  writeFileSync(pyproject, '[tool.gpu-pilot]\nignore = ["GPU001"]\n');
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "# edited\n" },
    ],
  });
  const edited = await lsp.diagnosticsFor(uri, (d) => d.some((x) => x.range.start.line === 6));
  assert.ok(codes(edited).includes("GPU001"), JSON.stringify(edited));
  // ... the watcher's notification does.
  await conn.sendNotification(DidChangeWatchedFilesNotification.type, {
    changes: [{ uri: pathToFileURL(pyproject).href, type: FileChangeType.Changed }],
  });
  const after = await lsp.diagnosticsFor(uri, (d) => !codes(d).includes("GPU001"));
  assert.deepEqual(
    codes(after).filter((c) => c === "GPU001"),
    [],
  );
});

test("a document its pyproject excludes (extend-exclude) is published with no diagnostics; a watched pyproject change brings them back", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-exclude-"));
  const pyproject = join(dir, "pyproject.toml");
  writeFileSync(pyproject, '[tool.gpu-pilot]\nextend-exclude = ["third_party"]\n');
  const vendored = pathToFileURL(join(dir, "third_party", "lib.py")).href;
  const own = pathToFileURL(join(dir, "train.py")).href;
  for (const uri of [vendored, own])
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text: LATE },
    });
  await lsp.diagnosticsFor(own, (d) => codes(d).includes("GPU001"));
  assert.deepEqual(await lsp.diagnosticsFor(vendored, () => true), []);
  writeFileSync(pyproject, "[tool.gpu-pilot]\n");
  await conn.sendNotification(DidChangeWatchedFilesNotification.type, {
    changes: [{ uri: pathToFileURL(pyproject).href, type: FileChangeType.Changed }],
  });
  await lsp.diagnosticsFor(vendored, (d) => codes(d).includes("GPU001"));
});
