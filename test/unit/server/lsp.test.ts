/** Starts the built language server as a process and talks LSP to it over stdio. */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  CodeActionRequest,
  type ProtocolConnection,
  DidOpenNotebookDocumentNotification,
  NotebookCellKind,
  HoverRequest,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../support/lspHarness";
import { InventoryNotification, SettingsNotification } from "../../../common/src/lsp/protocol";

const lsp = useLanguageServer();
const { published } = lsp;
const diagnosticsFor = lsp.diagnosticsFor;
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
  assert.ok(lsp.init.capabilities.codeActionProvider);
});

/** The two H200s of test/fixtures/nvidia-smi/h200x2 as the client's inventory notification sends them. */
const H200X2 = [
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

/** Opens a notebook of `cells` at version 1; returns the URI of cell `i`. */
async function openNotebook(
  path: string,
  cells: ReadonlyArray<{ kind: NotebookCellKind; languageId: string; text: string; executionOrder?: number }>,
): Promise<(i: number) => string> {
  const cell = (i: number) => `vscode-notebook-cell:${path}#cell${i}`;
  await conn.sendNotification(DidOpenNotebookDocumentNotification.type, {
    notebookDocument: {
      uri: pathToFileURL(path).href,
      notebookType: "jupyter-notebook",
      version: 1,
      cells: cells.map((c, i) => ({
        kind: c.kind,
        document: cell(i),
        ...(c.executionOrder ? { executionSummary: { executionOrder: c.executionOrder } } : {}),
      })),
    },
    cellTextDocuments: cells.map((c, i) => ({ uri: cell(i), languageId: c.languageId, version: 1, text: c.text })),
  });
  return cell;
}
const code = (text: string) => ({ kind: NotebookCellKind.Code, languageId: "python", text });

const C01 =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nmodel = torch.nn.Linear(8, 8).cuda()\n';

test("didOpen gives GPU001 with code, source, doc link and related information", async () => {
  const uri = pathToFileURL("/tmp/gpu pilot/c01.py").href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: C01 },
  });
  const diags = await diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU001"));
  const gpu001 = diags.filter((x) => x.code === "GPU001");
  assert.equal(gpu001.length, 1);
  const d = gpu001[0];
  assert.equal(d.code, "GPU001");
  assert.equal(d.source, "gpu-pilot");
  assert.equal(d.severity, 1);
  assert.deepEqual(d.range, { start: { line: 5, character: 0 }, end: { line: 5, character: 40 } });
  assert.match(d.codeDescription!.href, /docs\/rules\/GPU001\.md$/);
  assert.equal(d.relatedInformation?.[0].location.uri, uri);
  assert.equal(d.relatedInformation?.[0].location.range.start.line, 3);

  const actions = await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d] },
  });
  type Action = {
    title: string;
    kind: string;
    isPreferred?: boolean;
    edit?: {
      changes: Record<string, Array<{ newText: string; range: { start: { line: number; character: number } } }>>;
    };
    command?: { command: string; arguments: string[] };
  };
  const list = actions as Action[];
  const move = list.find((a) => a.title.startsWith("Move"))!;
  assert.equal(move.kind, "quickfix");
  assert.equal(move.isPreferred, true);
  assert.equal(move.title, "Move the CUDA_VISIBLE_DEVICES write above `import torch`");
  assert.equal(move.edit!.changes[uri][0].newText, 'os.environ["CUDA_VISIBLE_DEVICES"] = "2"\n');
  const noqa = list.find((a) => a.title === "Disable GPU001 for this line")!;
  assert.deepEqual(noqa.edit!.changes[uri][0], {
    range: { start: { line: 5, character: 40 }, end: { line: 5, character: 40 } },
    newText: "  # noqa: GPU001",
  });
  const doc = list.find((a) => a.title === "Show documentation for GPU001")!;
  assert.deepEqual(doc.command, {
    title: "Show documentation for GPU001",
    command: "gpuPilot.showRuleDoc",
    arguments: ["GPU001"],
  });

  const fixAll = (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [], only: ["source.fixAll.gpuPilot"] },
  })) as Action[];
  assert.equal(fixAll.length, 1);
  assert.equal(fixAll[0].kind, "source.fixAll.gpuPilot");
  assert.equal(
    fixAll[0].edit!.changes[uri][0].newText,
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nmodel = torch.nn.Linear(8, 8).cuda()\n',
  );
});

test("noqa suppresses, and hovering a code in a noqa comment shows the rule's doc", async () => {
  const uri = pathToFileURL("/tmp/noqa.py").href;
  const text = 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # noqa: GPU001\n';
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  assert.deepEqual(
    (await diagnosticsFor(uri, () => true)).filter((x) => x.code === "GPU001"),
    [],
  );
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 52 },
  });
  const value = (hover!.contents as { value: string }).value;
  assert.match(value, /\*\*GPU001\*\* `env-after-cuda-init`/);
  assert.match(value, /Why is this bad\?/);
  assert.deepEqual(hover!.range, { start: { line: 3, character: 50 }, end: { line: 3, character: 56 } });
});

test("an incremental edit that fixes the file clears the diagnostics", async () => {
  const uri = pathToFileURL("/tmp/edit.py").href;
  // vllm between the import and the write keeps GPU002 in the default set (its import is not measured).
  const text = 'import os\nimport torch\nimport vllm\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  await diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU001"));
  // Delete line 4 (`torch.cuda.init()`): nothing initialises CUDA any more, so GPU001 becomes GPU002.
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 3, character: 0 }, end: { line: 4, character: 0 } }, text: "" }],
  });
  const after = await diagnosticsFor(
    uri,
    (d) => d.some((x) => x.code === "GPU002") && !d.some((x) => x.code === "GPU001"),
  );
  assert.equal(after.find((x) => x.code === "GPU002")!.range.start.line, 3);
});

test("notebook cells are linted as one program", async () => {
  const cell = await openNotebook("/tmp/nb.ipynb", [
    code("import torch\nprint(torch.cuda.is_available())"),
    code('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"'),
  ]);
  const d = await diagnosticsFor(cell(1), (x) => x.length > 0);
  assert.equal(d[0].code, "GPU001");
  assert.equal(d[0].range.start.line, 1);
  assert.equal(d[0].relatedInformation?.[0].location.uri, cell(0));
  // The lint leaves the fix's syntax check to the code action (lazyFixValidation), which checks
  // the notebook's joined cells (cellFixParsesCleanly): the fix is offered, its edits in both cells.
  const actions = (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: cell(1) },
    range: d[0].range,
    context: { diagnostics: [d[0]] },
  })) as Array<{ title: string; isPreferred?: boolean; edit?: { changes: Record<string, unknown[]> } }>;
  const fix = actions.find((a) => a.edit && !a.title.startsWith("Disable") && !a.title.startsWith("Fix all"));
  assert.ok(fix, JSON.stringify(actions.map((a) => a.title)));
  assert.deepEqual(Object.keys(fix.edit!.changes).sort(), [cell(0), cell(1)].sort(), fix.title);
});

test("GPU050 in the editor: the cells' execution order as the client syncs it (executionSummary) replays a re-run environment cell after the cell that started CUDA", async () => {
  const cell = await openNotebook("/tmp/nb-rerun.ipynb", [
    { ...code("import os\nimport torch"), executionOrder: 1 },
    { ...code('os.environ["CUDA_VISIBLE_DEVICES"] = "1"'), executionOrder: 5 },
    { ...code('x = torch.ones(1, device="cuda")'), executionOrder: 4 },
  ]);
  const d = await diagnosticsFor(cell(1), (x) => x.some((y) => y.code === "GPU050"));
  const found = d.filter((x) => x.code === "GPU050");
  assert.equal(found.length, 1);
  assert.equal(found[0].severity, 2);
  assert.match(
    String(found[0].message),
    /^In the order the cells last ran \(cell 2 last ran as In \[5\], after cell 3 \(In \[4\]\)/,
  );
  assert.equal(found[0].relatedInformation?.[0].location.uri, cell(2));
});

test("notebook cells are numbered as VS Code shows them, markdown cells counted (as the CLI does): every cell is synced, GPU001 in cell 3 says (cell 2, line 2)", async () => {
  // A `cells` filter (e.g. python only) makes the language client drop the markdown cells, and the
  // server would count code cells only ("cell 1, line 2" where VS Code and the CLI say cell 2).
  assert.deepEqual(lsp.init.capabilities.notebookDocumentSync, {
    notebookSelector: [{ notebook: { notebookType: "jupyter-notebook" } }],
  });
  // test/cases/notebook.ipynb's cells.
  const cell = await openNotebook("/tmp/md-first.ipynb", [
    { kind: NotebookCellKind.Markup, languageId: "markdown", text: "# Pick a GPU in a notebook" },
    code("import torch\ntorch.zeros(1).cuda()"),
    code('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"'),
  ]);
  const d = await diagnosticsFor(cell(2), (x) => x.some((y) => y.code === "GPU001"));
  const gpu001 = d.find((x) => x.code === "GPU001")!;
  assert.equal(gpu001.range.start.line, 1);
  assert.equal(
    gpu001.message,
    "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by .cuda() (cell 2, line 2): it has no effect in this process (the program stays on the GPUs it already saw)",
  );
  assert.equal(gpu001.relatedInformation?.[0].location.uri, cell(1));
  assert.deepEqual(published.get(cell(0))?.at(-1)?.diagnostics ?? [], [], "the markdown cell is not linted as Python");
});

test("the inventory notification is accepted and triggers a re-lint", async () => {
  const uri = pathToFileURL("/tmp/inv.py").href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: "import torch\n" },
  });
  await diagnosticsFor(uri, () => true);
  const before = published.get(uri)!.length;
  await conn.sendNotification(InventoryNotification.type, { gpus: [], selection: [] });
  await diagnosticsFor(uri, () => published.get(uri)!.length > before);
});

test("machine-aware hover over the protocol: the inventory notification drives it", async () => {
  const uri = pathToFileURL("/tmp/hover.py").href;
  const text =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\nx = torch.ones(1, device="cuda:0")\n';
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  await diagnosticsFor(uri, () => true);
  await conn.sendNotification(InventoryNotification.type, {
    gpus: H200X2,
    selection: [],
  });
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 28 },
  });
  assert.match((hover!.contents as { value: string }).value, /cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07\.0/);
  // The hover is answered from the last lint's model only while that model is of the document's
  // version: right after an edit (before its lint) and after its lint, it describes the new text.
  const text0 = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 28 },
  });
  assert.deepEqual(text0, hover, "asked again at the same version");
  await conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 3, character: 31 }, end: { line: 3, character: 32 } }, text: "1" }],
  });
  const early = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 28 },
  });
  assert.match((early!.contents as { value: string }).value, /cuda:1 → no such device/);
  await diagnosticsFor(uri, () => published.get(uri)!.some((p) => p.version === 2));
  const late = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 28 },
  });
  assert.deepEqual(late, early);
});

test("notebook cells get the machine hover, inlay hints and 'Use the selected GPUs' of the whole notebook: a write in one cell maps \"cuda:0\" in a later one", async () => {
  const { InlayHintRequest } = await import("vscode-languageserver-protocol/node");
  await conn.sendNotification(InventoryNotification.type, { gpus: H200X2, selection: ["0"] });
  const cell = await openNotebook("/tmp/machine-nb.ipynb", [
    { kind: NotebookCellKind.Markup, languageId: "markdown", text: "# Train on GPU 1" },
    code('import os\n%env OTHER=1\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"'),
    code('import torch\nx = torch.ones(1, device="cuda:0")\ny = x.to("cuda:1")'),
  ]);
  await diagnosticsFor(cell(2), () => true);
  // Cell 3, line 2: "cuda:0" is the first visible GPU, GPU 1, because cell 2's line 3 made only GPU 1 visible.
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: cell(2) },
    position: { line: 1, character: 28 },
  });
  const value = (hover!.contents as { value: string }).value;
  assert.match(value, /cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07\.0/);
  assert.match(value, /because cell 2, line 3 sets CUDA_VISIBLE_DEVICES="1"/);
  assert.deepEqual(
    hover!.range,
    { start: { line: 1, character: 25 }, end: { line: 1, character: 33 } },
    "the string's range in the cell",
  );
  // The write's own hover, in cell 2.
  const write = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: cell(1) },
    position: { line: 2, character: 5 },
  });
  assert.match((write!.contents as { value: string }).value, /makes 1 GPU visible, renumbered from 0/);
  assert.equal(write!.range?.start.line, 2);
  // Nothing device-related in the markdown cell, nor on cell 3's import line.
  assert.equal(
    await conn.sendRequest(HoverRequest.type, { textDocument: { uri: cell(0) }, position: { line: 0, character: 3 } }),
    null,
  );
  assert.equal(
    await conn.sendRequest(HoverRequest.type, { textDocument: { uri: cell(2) }, position: { line: 0, character: 3 } }),
    null,
  );
  // Inlay hints (the client sends the setting gpuPilot.inlayHints) of cell 3 only, at the ends of its
  // strings, in the cell's own lines; a range past the cell's end gives no hint of another cell.
  await conn.sendNotification(SettingsNotification.type, { inlayHints: true });
  const hints = await conn.sendRequest(InlayHintRequest.type, {
    textDocument: { uri: cell(2) },
    range: { start: { line: 0, character: 0 }, end: { line: 99, character: 0 } },
  });
  assert.deepEqual(
    hints?.map((h) => ({ position: h.position, label: h.label })),
    [
      { position: { line: 1, character: 33 }, label: " → GPU 1" },
      { position: { line: 2, character: 17 }, label: " → no such GPU" },
    ],
  );
  const none = await conn.sendRequest(InlayHintRequest.type, {
    textDocument: { uri: cell(1) },
    range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } },
  });
  assert.deepEqual(none, []);
  // "Use the selected GPUs" on the write, in cell 2's coordinates.
  const actions = (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: cell(1) },
    range: { start: { line: 2, character: 40 }, end: { line: 2, character: 40 } },
    context: { diagnostics: [] },
  })) as Array<{ title: string; edit?: { changes: Record<string, Array<{ range: unknown; newText: string }>> } }>;
  const use = actions.find((a) => a.title === "Use the selected GPUs (0)");
  assert.ok(use, JSON.stringify(actions.map((a) => a.title)));
  assert.deepEqual(use.edit!.changes[cell(1)], [
    { range: { start: { line: 2, character: 38 }, end: { line: 2, character: 39 } }, newText: "0" },
  ]);
  // A write after CUDA initialised in an earlier cell (GPU001) has no effect: its hover says so, and
  // "cuda:0" after it is the kernel's first GPU. GPU Pilot's selection (now GPU 1) reaches terminals
  // and runs, not notebook kernels: a .py file would map "cuda:0" to GPU 1, the notebook does not.
  await conn.sendNotification(InventoryNotification.type, { gpus: H200X2, selection: ["1"] });
  const late = await openNotebook("/tmp/machine-nb-late.ipynb", [
    code("import torch\ntorch.cuda.init()"),
    code('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = torch.ones(1, device="cuda:0")'),
  ]);
  await diagnosticsFor(late(1), (d) => d.some((x) => x.code === "GPU001"));
  const noEffect = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: late(1) },
    position: { line: 1, character: 5 },
  });
  assert.match((noEffect!.contents as { value: string }).value, /has no effect here/);
  const after = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: late(1) },
    position: { line: 2, character: 28 },
  });
  const afterText = (after!.contents as { value: string }).value;
  assert.match(afterText, /cuda:0 → GPU 0 ·/);
  assert.match(
    afterText,
    /because cell 2, line 2 sets CUDA_VISIBLE_DEVICES only after CUDA initialised \(no effect: GPU001\), so its kernel sees every GPU it was started with/,
  );
  assert.doesNotMatch(afterText, /selection is 1/);
});

test("an inventory that changes only the GPUs' free memory lints nothing again; a change of the GPUs does", async () => {
  // The client sends the inventory at every change of free memory (each second of a training run
  // while the GPU view is visible): each used to lint every open document again and publish it.
  const uri = pathToFileURL("/tmp/inv-free.py").href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: 'import torch\nx = torch.ones(1, device="cuda:1")\n' },
  });
  await diagnosticsFor(uri, () => true);
  const gpu = (index: number, uuid: string, free: number) => ({
    index,
    uuid,
    name: "NVIDIA H200",
    pciBusId: `00000000:00:0${6 + index}.0`,
    memoryTotalMiB: 143771,
    memoryFreeMiB: free,
  });
  const a = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    b = "GPU-6486822f-842c-1320-f829-e4155c0d2130";
  await conn.sendNotification(InventoryNotification.type, {
    gpus: [gpu(0, a, 143156), gpu(1, b, 143156)],
    selection: [],
  });
  await new Promise((r) => setTimeout(r, 300));
  const settled = published.get(uri)!.length;
  for (const free of [120000, 90000, 143156])
    await conn.sendNotification(InventoryNotification.type, {
      gpus: [gpu(0, a, free), gpu(1, b, free - 1000)],
      selection: ["0"],
    });
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(published.get(uri)!.length, settled, "free memory and the selection do not change a finding");
  await conn.sendNotification(InventoryNotification.type, { gpus: [gpu(0, a, 143156)], selection: [] });
  await diagnosticsFor(uri, () => published.get(uri)!.length > settled);
});

test("a finding's related place in another file (GPU040: the deepspeed line of the script a shell script runs) gets that file's URI", async () => {
  const { mkdtempSync, mkdirSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-child-"));
  mkdirSync(join(dir, "scripts"));
  const child = join(dir, "scripts", "single_node.sh");
  writeFileSync(child, "#!/bin/bash\ndeepspeed --num_gpus 4 train.py\n");
  const uri = pathToFileURL(join(dir, "run.sh")).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: {
      uri,
      languageId: "shellscript",
      version: 1,
      text: "#!/bin/bash\nCUDA_VISIBLE_DEVICES=4,5,6,7 bash scripts/single_node.sh\n",
    },
  });
  const diags = await diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU040"));
  const d = diags.find((x) => x.code === "GPU040")!;
  assert.equal(d.range.start.line, 1);
  assert.deepEqual(
    d.relatedInformation?.map((r) => [r.location.uri, r.location.range.start.line]),
    [
      [uri, 1],
      [pathToFileURL(child).href, 1],
    ],
  );
});
