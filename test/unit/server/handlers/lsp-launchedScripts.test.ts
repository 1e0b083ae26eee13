// The launch rules of a shell script and of a notebook's `!` lines read the Python script a launch
// line starts (GPU052: does `--gpu 3` reach CUDA there?). The language server lints such a document
// again when that script changes: an edit of it open in the editor (its unsaved text is what is
// read), its close (back to the disk's text), or a change on disk (workspace/didChangeWatchedFiles).
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  DidOpenNotebookDocumentNotification,
  FileChangeType,
  NotebookCellKind,
  type Diagnostic,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";

const lsp = useLanguageServer();
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
});

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);
const has052 = (ds: Diagnostic[]) => codes(ds).includes("GPU052");
const TRAIN = [
  "import argparse",
  "import torch",
  "",
  "p = argparse.ArgumentParser()",
  'p.add_argument("--gpu", type=int, default=0)',
  "args = p.parse_args()",
  "torch.cuda.set_device(args.gpu)",
  "",
].join("\n");
/** The same script without the line that hands `--gpu` to CUDA: GPU052 has nothing to say. */
const NO_DEVICE = TRAIN.replace("torch.cuda.set_device(args.gpu)\n", "");
const LAUNCH = "CUDA_VISIBLE_DEVICES=0 python train.py --gpu 3";
const MESSAGE =
  /^--gpu gives train\.py CUDA device 3 \(torch\.cuda\.set_device\(\) at train\.py:7\), but CUDA_VISIBLE_DEVICES=0 \(given inline\) leaves one device visible to it \(ordinal 0\)/;

/** A folder with train.py on disk; the paths and URIs of train.py and of `name` beside it. */
function project(name: string) {
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-launched-"));
  const train = join(dir, "train.py");
  writeFileSync(train, TRAIN);
  return {
    train,
    trainUri: pathToFileURL(train).href,
    path: join(dir, name),
    uri: pathToFileURL(join(dir, name)).href,
  };
}

/** Opens train.py in the editor as it is on disk, then changes its text (unsaved) to `text`. */
async function editTrain(uri: string, version: number, text: string): Promise<void> {
  if (version === 2)
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text: TRAIN },
    });
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version },
    contentChanges: [{ text }],
  });
}

/** train.py written on disk with `text`, and the watcher's notification of it. */
async function writeTrain(path: string, text: string): Promise<void> {
  writeFileSync(path, text);
  await conn.sendNotification(DidChangeWatchedFilesNotification.type, {
    changes: [{ uri: pathToFileURL(path).href, type: FileChangeType.Changed }],
  });
}

async function openRunSh(uri: string): Promise<void> {
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "shellscript", version: 1, text: `#!/bin/bash\n${LAUNCH}\n` },
  });
  const first = await lsp.diagnosticsFor(uri, has052);
  assert.deepEqual(codes(first), ["GPU052"]);
  assert.deepEqual(first[0].range.start, { line: 1, character: 39 });
  assert.match(String(first[0].message), MESSAGE);
}

test("run.sh: an unsaved edit of the open train.py lints it again from the edited text; the close goes back to the disk's", async () => {
  const p = project("run.sh");
  await openRunSh(p.uri);
  await editTrain(p.trainUri, 2, NO_DEVICE);
  assert.deepEqual(await lsp.diagnosticsFor(p.uri, (d) => !has052(d)), []);
  await editTrain(p.trainUri, 3, TRAIN);
  assert.match(String((await lsp.diagnosticsFor(p.uri, has052))[0].message), MESSAGE);
  await editTrain(p.trainUri, 4, NO_DEVICE);
  await lsp.diagnosticsFor(p.uri, (d) => !has052(d));
  // Closed without saving: the disk's train.py, which hands --gpu to CUDA, is read again.
  await conn.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri: p.trainUri } });
  assert.match(String((await lsp.diagnosticsFor(p.uri, has052))[0].message), MESSAGE);
});

test("run.sh: train.py changed on disk (the watcher's notification) lints it again", async () => {
  const p = project("run.sh");
  await openRunSh(p.uri);
  await writeTrain(p.train, NO_DEVICE);
  assert.deepEqual(await lsp.diagnosticsFor(p.uri, (d) => !has052(d)), []);
  await writeTrain(p.train, TRAIN);
  assert.match(String((await lsp.diagnosticsFor(p.uri, has052))[0].message), MESSAGE);
});

/** Opens a notebook beside train.py whose second cell launches it; the URI of that cell. */
async function openNotebook(path: string): Promise<string> {
  const cell = (i: number) => `vscode-notebook-cell:${path}#cell${i}`;
  const texts = ["import os", `!${LAUNCH}`];
  await conn.sendNotification(DidOpenNotebookDocumentNotification.type, {
    notebookDocument: {
      uri: pathToFileURL(path).href,
      notebookType: "jupyter-notebook",
      version: 1,
      cells: texts.map((_, i) => ({ kind: NotebookCellKind.Code, document: cell(i) })),
    },
    cellTextDocuments: texts.map((text, i) => ({ uri: cell(i), languageId: "python", version: 1, text })),
  });
  const first = await lsp.diagnosticsFor(cell(1), has052);
  assert.deepEqual(codes(first), ["GPU052"]);
  assert.deepEqual(first[0].range.start, { line: 0, character: 40 });
  assert.match(String(first[0].message), MESSAGE);
  return cell(1);
}

test("a notebook's `!python train.py --gpu 3` line: linted again on an unsaved edit of train.py and on a change on disk", async () => {
  const p = project("launch.ipynb");
  const cell = await openNotebook(p.path);
  await editTrain(p.trainUri, 2, NO_DEVICE);
  assert.deepEqual(await lsp.diagnosticsFor(cell, (d) => !has052(d)), []);
  await conn.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri: p.trainUri } });
  await lsp.diagnosticsFor(cell, has052);
  await writeTrain(p.train, NO_DEVICE);
  assert.deepEqual(await lsp.diagnosticsFor(cell, (d) => !has052(d)), []);
});
