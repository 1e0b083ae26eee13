/**
 * The running kernel reaches the language server (issue 42 item 2): the built server (dist/server.js,
 * `node esbuild.mjs`) over stdio gets `gpuPilot/runningKernel` as the client sends it. A kernel that
 * initialised CUDA gives GPU001 on a cell that writes CUDA_VISIBLE_DEVICES first, with the action
 * "Restart kernel on GPU 1" (the client's command and its arguments); a kernel that has not, or no
 * state (no access, the probe timed out), gives the static lint; a malformed notification changes
 * nothing; the hover on "cuda:0" names the GPU of the kernel's CUDA_VISIBLE_DEVICES.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { pathToFileURL } from "node:url";
import {
  CodeActionRequest,
  DidOpenNotebookDocumentNotification,
  HoverRequest,
  NotebookCellKind,
  type Diagnostic,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";
import { InventoryNotification } from "../../../../common/src/lsp/protocol";
import {
  RESTART_KERNEL_COMMAND,
  RUNNING_KERNEL_METHOD,
  type RunningKernelFacts,
} from "../../../../common/src/kernel/runningKernel";

const lsp = useLanguageServer();
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
});

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
const TORCH_ON_0: RunningKernelFacts = {
  initialisedBy: ["torch"],
  cudaVisibleDevices: "0",
  cudaDeviceOrder: "PCI_BUS_ID",
  rocrVisibleDevices: null,
  launcherDevices: "0",
  pid: 31337,
};

/** Waits until the cell's newest publication satisfies `ok` (5 s at most). */
async function cellDiagnostics(uri: string, ok: (d: Diagnostic[]) => boolean): Promise<Diagnostic[]> {
  const t0 = Date.now();
  for (;;) {
    const list = lsp.published.get(uri);
    const last = list?.at(-1)?.diagnostics;
    if (last && ok(last)) return last;
    if (Date.now() - t0 > 5000) assert.fail(`no matching diagnostics for ${uri}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("GPU001 from the running kernel on the first cell, 'Restart kernel on GPU 1', and back to the static lint", async () => {
  const path = "/tmp/running-kernel.ipynb";
  const nb = pathToFileURL(path).href;
  const cell = (i: number) => `vscode-notebook-cell:${path}#cell${i}`;
  const texts = [
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    'import torch\nx = torch.ones(1, device="cuda:0")',
  ];
  await conn.sendNotification(DidOpenNotebookDocumentNotification.type, {
    notebookDocument: {
      uri: nb,
      notebookType: "jupyter-notebook",
      version: 1,
      cells: texts.map((_, i) => ({ kind: NotebookCellKind.Code, document: cell(i) })),
    },
    cellTextDocuments: texts.map((text, i) => ({ uri: cell(i), languageId: "python", version: 1, text })),
  });
  assert.deepEqual(
    (await cellDiagnostics(cell(0), () => true)).filter((d) => d.code === "GPU001"),
    [],
    "statically in order",
  );

  await conn.sendNotification(RUNNING_KERNEL_METHOD, { notebook: nb, kernel: TORCH_ON_0 });
  const [d] = await cellDiagnostics(cell(0), (ds) => ds.some((x) => x.code === "GPU001"));
  assert.equal(d.code, "GPU001");
  assert.equal(d.severity, 1);
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 40 } });
  assert.match(
    String(d.message),
    /^CUDA_VISIBLE_DEVICES is set here, but it has no effect in the running kernel: CUDA was initialised there \(by torch, as the kernel reports\)/,
  );
  const actions = (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: cell(0) },
    range: d.range,
    context: { diagnostics: [d] },
  })) as Array<{ title: string; command?: { command: string; arguments: unknown[] } }>;
  const restart = actions.find((a) => a.title === "Restart kernel on GPU 1");
  assert.ok(restart, JSON.stringify(actions.map((a) => a.title)));
  assert.deepEqual(restart.command, {
    title: "Restart kernel on GPU 1",
    command: RESTART_KERNEL_COMMAND,
    arguments: [nb, ["1"]],
  });

  // The hover on "cuda:0" in cell 1: the cell's write has no effect, the kernel's CUDA_VISIBLE_DEVICES=0 decides.
  await conn.sendNotification(InventoryNotification.type, { gpus: H200X2, selection: [] });
  await new Promise((r) => setTimeout(r, 200));
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: cell(1) },
    position: { line: 1, character: 26 },
  });
  assert.match((hover!.contents as { value: string }).value, /^\*\*cuda:0 → GPU 0 · NVIDIA H200 · 00000000:00:06\.0/);
  assert.match(
    (hover!.contents as { value: string }).value,
    /the running kernel \(pid 31337\) reports CUDA_VISIBLE_DEVICES="0", and torch initialised CUDA there/,
  );

  // A malformed notification is ignored: the finding stays.
  await conn.sendNotification(RUNNING_KERNEL_METHOD, {
    notebook: nb,
    kernel: { ...TORCH_ON_0, initialisedBy: "torch" },
  });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(
    lsp.published
      .get(cell(0))!
      .at(-1)!
      .diagnostics.filter((x) => x.code === "GPU001").length,
    1,
  );

  // CUDA not initialised in the kernel: no finding; no state (the probe timed out): the static lint.
  await conn.sendNotification(RUNNING_KERNEL_METHOD, { notebook: nb, kernel: { ...TORCH_ON_0, initialisedBy: [] } });
  await cellDiagnostics(cell(0), (ds) => !ds.some((x) => x.code === "GPU001"));
  await conn.sendNotification(RUNNING_KERNEL_METHOD, { notebook: nb, kernel: TORCH_ON_0 });
  await cellDiagnostics(cell(0), (ds) => ds.some((x) => x.code === "GPU001"));
  await conn.sendNotification(RUNNING_KERNEL_METHOD, { notebook: nb, kernel: null });
  await cellDiagnostics(cell(0), (ds) => !ds.some((x) => x.code === "GPU001"));
  const hover2 = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri: cell(1) },
    position: { line: 1, character: 26 },
  });
  assert.match(
    (hover2!.contents as { value: string }).value,
    /^\*\*cuda:0 → GPU 1 · NVIDIA H200/,
    "statically the cell's write decides",
  );
});
