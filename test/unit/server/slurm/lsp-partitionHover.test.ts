/**
 * The partition hover over the protocol: the language server runs the fake sinfo
 * (test/fixtures/bin/sinfo, replaying a capture of Slurm 22.05.8 with 3 of 4 GPUs in use) found
 * first on its PATH.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { DidOpenTextDocumentNotification, HoverRequest } from "vscode-languageserver-protocol/node";
import { ROOT } from "../../support/helpers";
import { useLanguageServer } from "../../support/lspHarness";

// Before the harness starts the server (it inherits this environment).
process.env.PATH = `${join(ROOT, "test", "fixtures", "bin")}${delimiter}${process.env.PATH}`;
process.env.FAKE_SINFO_MODE = "busy";
const lsp = useLanguageServer();

test("hovering #SBATCH --partition=gpu in a job script shows the partition's free GPUs", async () => {
  await lsp.ready;
  const uri = pathToFileURL("/tmp/gpu-pilot-hover/train.sbatch").href;
  const text = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:2\nsrun python train.py\n";
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "shellscript", version: 1, text },
  });
  const hover = await lsp.conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 1, character: 12 },
  });
  assert.equal(
    (hover!.contents as { value: string }).value,
    "**Slurm partition GPUs** (sinfo, just now)\n\n- `gpu`: **1 of 4 GPUs free**, 3 in use; 1 node",
  );
  assert.deepEqual(hover!.range, { start: { line: 1, character: 8 }, end: { line: 1, character: 23 } });
  assert.equal(
    await lsp.conn.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 2, character: 12 } }),
    null,
  );
});
