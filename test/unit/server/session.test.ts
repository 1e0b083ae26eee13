/**
 * The language server's Session (server/src/session.ts, issue 44 step 4): one OpenDocument per
 * text document or notebook URI holds what the server keeps between a lint and the requests after
 * it. Documents are synced through the Session's TextDocuments/NotebookDocuments over a stand-in
 * connection and linted by the server's own lint functions (handlers/diagnostics.ts); a close drops
 * every piece (each field of the entry empty, the kept analysis disposed of: its tree deleted) and a reopened document
 * starts clean. A notebook owns its cells' state; the kept analyses stay bounded across documents.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Connection, PublishDiagnosticsParams } from "vscode-languageserver/node";
import { initEngine } from "../../../server/src/engine/lint";
import { Session, OpenDocument } from "../../../server/src/session";
import { ServerContext } from "../../../server/src/handlers/context";
import { lintNotebookDocument, lintTextDocument } from "../../../server/src/handlers/diagnostics";
import { ChangeBacklog } from "../../../server/src/scheduling";
import type { ModuleTrees } from "../../../server/src/engine/python/moduleTrees";
import type { RunningKernelFacts } from "../../../common/src/kernel/runningKernel";

type Handler = (params: unknown) => unknown;

/** A stand-in connection: the sync handlers the Session registers, and what the server sends. */
function fakeConnection() {
  const handlers = new Map<string, Handler>();
  const on = (name: string) => (h: Handler) => {
    handlers.set(name, h);
    return {
      dispose() {
        /* nothing */
      },
    };
  };
  const sent: PublishDiagnosticsParams[] = [];
  const quiet = () => undefined;
  const connection = {
    onDidOpenTextDocument: on("open"),
    onDidChangeTextDocument: on("change"),
    onDidCloseTextDocument: on("close"),
    onWillSaveTextDocument: on("willSave"),
    onWillSaveTextDocumentWaitUntil: on("willSaveWaitUntil"),
    onDidSaveTextDocument: on("save"),
    notebooks: {
      synchronization: {
        onDidOpenNotebookDocument: on("notebookOpen"),
        onDidChangeNotebookDocument: on("notebookChange"),
        onDidSaveNotebookDocument: on("notebookSave"),
        onDidCloseNotebookDocument: on("notebookClose"),
      },
    },
    console: { log: quiet, warn: quiet, error: quiet, info: quiet },
    tracer: { log: quiet },
    window: { showWarningMessage: quiet },
    sendDiagnostics: async (p: PublishDiagnosticsParams) => {
      sent.push(p);
    },
  } as unknown as Connection;
  const send = async (name: string, params: unknown) => {
    await handlers.get(name)!(params);
  };
  return { connection, send, sent };
}

/** A session synced over a stand-in connection, with the server's context (a tree limit of `treeLimit`). */
function setUp(treeLimit?: number) {
  const session = new Session(treeLimit);
  const fake = fakeConnection();
  session.listen(fake.connection);
  const ctx = new ServerContext(fake.connection, session, new ChangeBacklog());
  return { session, ctx, ...fake };
}

/** Marks `tree` so a test sees its delete() (the WebAssembly memory freed), and still frees it. */
function watchDelete(tree: ModuleTrees): { deleted: boolean } {
  const seen = { deleted: false };
  const del = tree.delete.bind(tree);
  tree.delete = () => {
    seen.deleted = true;
    del();
  };
  return seen;
}

/** The fields of an entry that hold something (the URI aside; `cells` when it has any). */
function filled(d: OpenDocument): string[] {
  return Object.entries(d)
    .filter(([k, v]) => k !== "uri" && (k === "cells" ? (v as Map<string, unknown>).size > 0 : v !== undefined))
    .map(([k]) => k)
    .sort();
}

const PY =
  'import torch\ntorch.cuda.is_available()\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = torch.ones(1, device="cuda:0")\n';
const GPUS = [
  {
    index: 0,
    uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:06.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
  {
    index: 1,
    uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:07.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
];

before(async () => {
  await initEngine();
});

test("open, a lint stored in the document's OpenDocument, close drops every piece and disposes of the analysis (its tree deleted), reopen starts clean", async () => {
  const { session, ctx, send, sent } = setUp();
  session.inventory = { gpus: GPUS, selection: [] };
  const uri = "file:///tmp/gpu-pilot-session-test/train.py";
  await send("open", { textDocument: { uri, languageId: "python", version: 1, text: PY } });
  assert.equal(session.get(uri), undefined, "nothing kept before the first lint");

  const outcome = lintTextDocument(ctx, session.documents.get(uri)!);
  assert.equal(outcome.current(), true);
  outcome.commit();
  outcome.dispose?.();
  const open = session.get(uri)!;
  assert.ok(open instanceof OpenDocument);
  assert.deepEqual(filled(open), ["analysis", "fixes", "noEffect", "options", "projectDeps"]);
  assert.equal(open.analysis!.version, 1);
  assert.ok(open.analysis!.model, "the machine model is kept with GPUs in the inventory");
  const analysis = open.analysis!.analysis;
  assert.ok(analysis.facts && analysis.probe && analysis.nesting, "what the next lint continues from");
  assert.deepEqual([...open.noEffect!.lines], [3], "GPU001 on line 4");
  assert.deepEqual(open.noEffect!.version, 1);
  assert.ok(
    [...open.fixes!.keys()].some((k) => k.startsWith("GPU001@3:")),
    [...open.fixes!.keys()].join(),
  );
  assert.equal(session.trees.treeOf(uri, 1), analysis.trees);
  assert.deepEqual(
    sent.map((p) => [p.uri, p.version, p.diagnostics.some((d) => d.code === "GPU001")]),
    [[uri, 1, true]],
  );

  const tree = watchDelete(analysis.trees);
  await send("close", { textDocument: { uri } });
  session.close(uri);
  assert.equal(tree.deleted, true, "the kept tree is deleted");
  assert.deepEqual(
    [analysis.facts, analysis.probe, analysis.nesting],
    [undefined, undefined, undefined],
    "the analysis is disposed of",
  );
  assert.deepEqual(filled(open), [], "every field of the closed entry is empty");
  assert.equal(session.get(uri), undefined);
  assert.equal(session.size, 0);
  assert.equal(session.trees.size, 0);
  assert.equal(session.documents.get(uri), undefined);

  await send("open", { textDocument: { uri, languageId: "python", version: 1, text: "import os\n" } });
  assert.equal(session.get(uri), undefined, "a reopened document starts with nothing kept");
  lintTextDocument(ctx, session.documents.get(uri)!).commit();
  const again = session.get(uri)!;
  assert.notEqual(again, open);
  assert.equal(again.fixes!.size, 0);
  assert.deepEqual([...again.noEffect!.lines], []);
});

test("a YAML manifest keeps its parse for the next lint; close drops it", async () => {
  const { session, ctx, send } = setUp();
  const uri = "file:///tmp/gpu-pilot-session-test/compose.yaml";
  const text =
    "services:\n  train:\n    image: pytorch/pytorch:latest\n    environment:\n      - CUDA_VISIBLE_DEVICES=1\n";
  await send("open", { textDocument: { uri, languageId: "yaml", version: 1, text } });
  lintTextDocument(ctx, session.documents.get(uri)!).commit();
  const open = session.get(uri)!;
  assert.deepEqual(filled(open), ["fixes", "noEffect", "options", "yaml"]);
  const yaml = open.yaml;
  assert.equal(open.takeYaml(), yaml);
  assert.equal(open.yaml, undefined, "taken by the next lint");
  open.yaml = yaml;
  session.close(uri);
  assert.deepEqual(filled(open), []);
  assert.equal(session.size, 0);
});

test("a shell script keeps the files its launch rules read (launchDeps) while it reads some; close drops them", async () => {
  const { session, ctx, send } = setUp();
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-session-launch-"));
  writeFileSync(join(dir, "train.py"), "import torch\n");
  const uri = pathToFileURL(join(dir, "run.sh")).href;
  const text = "CUDA_VISIBLE_DEVICES=0 python train.py --gpu 3\n";
  await send("open", { textDocument: { uri, languageId: "shellscript", version: 1, text } });
  lintTextDocument(ctx, session.documents.get(uri)!).commit();
  const open = session.get(uri)!;
  assert.deepEqual(filled(open), ["fixes", "launchDeps", "noEffect", "options"]);
  assert.deepEqual([...open.launchDeps!], [join(dir, "train.py")]);
  // A version that launches nothing reads nothing: none are kept.
  await send("change", { textDocument: { uri, version: 2 }, contentChanges: [{ text: "echo done\n" }] });
  lintTextDocument(ctx, session.documents.get(uri)!).commit();
  assert.equal(open.launchDeps, undefined);
  await send("change", { textDocument: { uri, version: 3 }, contentChanges: [{ text }] });
  lintTextDocument(ctx, session.documents.get(uri)!).commit();
  assert.equal(session.get(uri)!.launchDeps?.size, 1);
  session.close(uri);
  assert.deepEqual(filled(open), []);
});

test("a notebook owns its cells' state: a removed cell drops its own, the notebook's close drops all and disposes of the analysis", async () => {
  const { session, ctx, send, sent } = setUp();
  const path = "/tmp/gpu-pilot-session-test/nb.ipynb";
  const nb = `file://${path}`;
  const cell = (i: number) => `vscode-notebook-cell:${path}#cell${i}`;
  const texts = [
    "import torch\ntorch.cuda.is_available()",
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "y = 1",
  ];
  // The running kernel's facts may come before the notebook opens: the entry is made for them.
  const kernel: RunningKernelFacts = {
    initialisedBy: ["torch"],
    cudaVisibleDevices: "0",
    cudaDeviceOrder: "PCI_BUS_ID",
    rocrVisibleDevices: null,
    launcherDevices: "0",
    pid: 1,
  };
  session.ensure(nb).kernel = kernel;
  await send("notebookOpen", {
    notebookDocument: {
      uri: nb,
      notebookType: "jupyter-notebook",
      version: 1,
      cells: texts.map((_, i) => ({ kind: 2, document: cell(i) })),
    },
    cellTextDocuments: texts.map((text, i) => ({ uri: cell(i), languageId: "python", version: 1, text })),
  });
  const outcome = lintNotebookDocument(ctx, session.notebooks.getNotebookDocument(nb)!);
  outcome.commit();
  const open = session.get(nb)!;
  assert.deepEqual(filled(open), ["analysis", "cells", "kernel", "noEffect", "projectDeps"]);
  assert.ok(open.analysis!.analysis.cells?.size, "the joined cells are kept for the next lint");
  for (let i = 0; i < 3; i++) assert.equal(session.get(cell(i)), undefined, "a cell is no OpenDocument of its own");
  assert.deepEqual([...open.cells.keys()], [cell(0), cell(1), cell(2)]);
  const c1 = session.cellOf(cell(1))!;
  assert.ok(
    [...c1.fixes.keys()].some((k) => k.startsWith("GPU001@1:")),
    [...c1.fixes.keys()].join(),
  );
  assert.ok(
    [...c1.restarts.values()].some((r) => r.notebook === nb),
    "the running kernel's GPU001 offers a restart",
  );
  assert.ok(c1.published?.includes("GPU001"));
  assert.deepEqual(
    sent.map((p) => p.uri),
    [cell(0), cell(1), cell(2)],
  );

  // The same diagnostics again: no cell is published again.
  lintNotebookDocument(ctx, session.notebooks.getNotebookDocument(nb)!).commit();
  assert.equal(sent.length, 3);

  // Cell 2 leaves the notebook: its state goes, the others' stay.
  await send("notebookChange", {
    notebookDocument: { uri: nb, version: 2 },
    change: { cells: { structure: { array: { start: 2, deleteCount: 1 }, didClose: [{ uri: cell(2) }] } } },
  });
  session.close(cell(2));
  assert.deepEqual([...open.cells.keys()], [cell(0), cell(1)]);
  assert.equal(session.get(nb), open);

  const analysis = open.analysis!.analysis;
  const tree = watchDelete(analysis.trees);
  session.close(nb);
  assert.equal(tree.deleted, true);
  assert.equal(analysis.cells, undefined);
  assert.deepEqual(filled(open), []);
  assert.equal(session.cellOf(cell(1)), undefined);
  assert.equal(session.size, 0);
  assert.equal(session.trees.size, 0);
  // The cells' own closes (which follow the notebook's) find nothing left.
  for (const u of [cell(0), cell(1)]) session.close(u);
  assert.equal(session.size, 0);
});

test("the kept analyses stay bounded across documents: the least recently linted entry loses its analysis (its tree deleted), keeps the rest", async () => {
  const { session, ctx, send } = setUp(2);
  const uris = ["a", "b", "c"].map((n) => `file:///tmp/gpu-pilot-session-test/${n}.py`);
  const seen: Array<{ deleted: boolean }> = [];
  for (const uri of uris) {
    await send("open", { textDocument: { uri, languageId: "python", version: 1, text: PY } });
    lintTextDocument(ctx, session.documents.get(uri)!).commit();
    seen.push(watchDelete(session.get(uri)!.analysis!.analysis.trees));
  }
  assert.equal(session.trees.size, 2);
  assert.deepEqual(
    seen.map((s) => s.deleted),
    [true, false, false],
  );
  assert.equal(session.get(uris[0])!.analysis, undefined);
  assert.ok(session.get(uris[0])!.fixes, "the rest of its state stays");
  // An edit reaches the kept tree (incremental parsing) through the Session's sync.
  await send("change", {
    textDocument: { uri: uris[2], version: 2 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "\n" }],
  });
  assert.equal(session.get(uris[2])!.analysis!.unedited, false);
  assert.equal(session.trees.treeOf(uris[2], 2), undefined, "an edited tree is not the parse of the new version");
  for (const uri of uris) session.close(uri);
  assert.deepEqual(
    seen.map((s) => s.deleted),
    [true, true, true],
  );
  assert.equal(session.size, 0);
});

test("options are kept for open text documents only, and a setting change forgets them everywhere", async () => {
  const { session, ctx, send } = setUp();
  const uri = "file:///tmp/gpu-pilot-session-test/opts.py";
  ctx.lintOptions("file:///tmp/gpu-pilot-session-test/not-open.py");
  assert.equal(session.size, 0, "a URI that is not open keeps nothing");
  await send("open", { textDocument: { uri, languageId: "python", version: 1, text: "x = 1\n" } });
  ctx.lintOptions(uri);
  assert.ok(session.get(uri)!.options);
  session.forgetOptions();
  assert.equal(session.get(uri)!.options, undefined);
  session.close(uri);
  assert.equal(session.size, 0);
});
