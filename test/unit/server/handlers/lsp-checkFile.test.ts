// `gpuPilot/checkFile` (the agent tool gpu-pilot_checkFile asks the language server; the client
// bundles no parser): the open editor's text wins over the file on disk; closed files are read
// from disk; notebooks give 1-based cells; bad params and missing files are `ok: false`.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DidOpenTextDocumentNotification, type ProtocolConnection } from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";
import { CheckFileRequest, type CheckFileResult } from "../../../../common/src/lsp/protocol";
import { ROOT } from "../../support/helpers";

const lsp = useLanguageServer();
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
});

const LATE =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
const EARLY = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n';
const check = (path: unknown) => conn.sendRequest(CheckFileRequest.type, { path } as never) as Promise<CheckFileResult>;

test("a file on disk: GPU001 with 1-based line and column, its safe fix and documentation URL", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-check-"));
  const file = join(dir, "late.py");
  writeFileSync(file, LATE);
  const r = await check(file);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.source, "disk");
  const gpu001 = r.findings.filter((f) => f.code === "GPU001");
  assert.equal(gpu001.length, 1);
  assert.equal(gpu001[0].severity, "error");
  assert.equal(gpu001[0].line, 6);
  assert.equal(gpu001[0].column, 1);
  assert.equal(gpu001[0].fix?.safe, true);
  assert.match(gpu001[0].fix!.title, /CUDA_VISIBLE_DEVICES/);
  assert.ok(gpu001[0].fix!.edits.length >= 1);
  assert.match(gpu001[0].url!, /GPU001/);
});

test("an open document: its (unsaved) text, not the file on disk", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-check-"));
  const file = join(dir, "edited.py");
  writeFileSync(file, LATE);
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: pathToFileURL(file).href, languageId: "python", version: 1, text: EARLY },
  });
  const r = await check(file);
  assert.ok(r.ok);
  assert.equal(r.source, "editor");
  assert.deepEqual(
    r.findings.filter((f) => f.code === "GPU001"),
    [],
  );
});

test("a notebook on disk: findings carry their 1-based cell", async () => {
  const r = await check(join(ROOT, "examples", "notebook.ipynb"));
  assert.ok(r.ok);
  const gpu001 = r.findings.find((f) => f.code === "GPU001");
  assert.equal(gpu001?.cell, 3);
});

test("missing file, folder, relative path and bad params: ok false with the reason", async () => {
  const missing = await check("/nonexistent/x.py");
  assert.deepEqual(missing, {
    ok: false,
    path: "/nonexistent/x.py",
    error: "cannot read /nonexistent/x.py: no such file",
  });
  const folder = await check(ROOT);
  assert.equal(folder.ok, false);
  assert.match((folder as { error: string }).error, /not a regular file \(a folder\)/);
  const relative = await check("x.py");
  assert.equal(relative.ok, false);
  assert.match((relative as { error: string }).error, /is not an absolute path/);
  const bad = await check(42);
  assert.equal(bad.ok, false);
  assert.match((bad as { error: string }).error, /params\.path must be a non-empty string/);
});
