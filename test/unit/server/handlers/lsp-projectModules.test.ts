// The language server follows imports of the project's own modules (python/project.ts): a write
// after importing a module that initialises CUDA is GPU001; an edit of that module (open, unsaved)
// or a change of it on disk (workspace/didChangeWatchedFiles) lints the importer again.
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

const codes = (ds: Array<{ code?: unknown }>) => ds.map((d) => d.code);
const MAIN = 'import os\nimport gpu_setup\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
const INIT = "import torch\n\ntorch.cuda.init()\n";

test("an open module's unsaved edit reaches the importer's diagnostics, both ways", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-project-"));
  writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'demo'\n");
  writeFileSync(join(dir, "gpu_setup.py"), INIT);
  const main = pathToFileURL(join(dir, "main.py")).href;
  const mod = pathToFileURL(join(dir, "gpu_setup.py")).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: main, languageId: "python", version: 1, text: MAIN },
  });
  const first = await lsp.diagnosticsFor(main, (d) => codes(d).includes("GPU001"));
  assert.match(
    String(first.find((d) => d.code === "GPU001")!.message),
    /import gpu_setup \(line 2: it runs torch\.cuda\.init\(\) at gpu_setup\.py:3\)/,
  );
  // The module is opened and its init removed, unsaved: the importer is linted again.
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: mod, languageId: "python", version: 1, text: INIT },
  });
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri: mod, version: 2 },
    contentChanges: [{ text: "import torch\n\nX = 1\n" }],
  });
  const cleared = await lsp.diagnosticsFor(main, (d) => !codes(d).includes("GPU001"));
  assert.deepEqual(codes(cleared), []);
  // And put back.
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri: mod, version: 3 },
    contentChanges: [{ text: INIT }],
  });
  await lsp.diagnosticsFor(main, (d) => codes(d).includes("GPU001"));
});

test("a module changed on disk (the watcher's notification) lints the importer again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-project-"));
  writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'demo'\n");
  const modPath = join(dir, "gpu_setup.py");
  writeFileSync(modPath, "X = 1\n");
  const main = pathToFileURL(join(dir, "main.py")).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: main, languageId: "python", version: 1, text: MAIN },
  });
  await lsp.diagnosticsFor(main, (d) => d.length === 0);
  writeFileSync(modPath, INIT);
  await conn.sendNotification(DidChangeWatchedFilesNotification.type, {
    changes: [{ uri: pathToFileURL(modPath).href, type: FileChangeType.Changed }],
  });
  const after = await lsp.diagnosticsFor(main, (d) => codes(d).includes("GPU001"));
  assert.equal(after.filter((d) => d.code === "GPU001").length, 1);
});

test("GPU039 in the editor: a device beside init_process_group is reported until a Markdown document beside the file documents its launch as --standalone (a watched change of the document lints it again)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-gpu039-docs-"));
  writeFileSync(join(dir, "pyproject.toml"), "[project]\nname = 'demo'\n");
  const text =
    "import torch\nimport torch.distributed as dist\n\n\ndef main():\n    dist.init_process_group('nccl')\n    torch.cuda.set_device(dist.get_rank())\n";
  writeFileSync(join(dir, "demo.py"), text);
  const uri = pathToFileURL(join(dir, "demo.py")).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  const first = await lsp.diagnosticsFor(uri, (d) => codes(d).includes("GPU039"));
  assert.equal(first.find((d) => d.code === "GPU039")!.range.start.line, 6);
  const notes = join(dir, "NOTES.md");
  writeFileSync(notes, "Run it on one node:\n\n```bash\ntorchrun --standalone --nproc_per_node=2 demo.py\n```\n");
  await new Promise((r) => setTimeout(r, 5100)); // the job-script search keeps a folder's listing 5 s (slurmLaunch.ts LISTING_TTL_MS)
  await conn.sendNotification(DidChangeWatchedFilesNotification.type, {
    changes: [{ uri: pathToFileURL(notes).href, type: FileChangeType.Created }],
  });
  const after = await lsp.diagnosticsFor(uri, (d) => !codes(d).includes("GPU039"));
  assert.deepEqual(codes(after), []);
});
