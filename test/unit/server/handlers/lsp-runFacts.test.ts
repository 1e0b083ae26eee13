// `gpuPilot/runFacts` (the checks before a run ask the language server; the client bundles no
// parser): the engine's facts about the text sent, GPU001's verdict on each CUDA_VISIBLE_DEVICES
// write, the document's pyproject settings (eager-init modules), and `ok: false` with the reason
// for bad params and a text over the size limit.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type ProtocolConnection } from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../support/lspHarness";
import { checkRunFactsResult, RunFactsRequest, type RunFactsResult } from "../../../../common/src/lsp/protocol";

const lsp = useLanguageServer();
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
});

const ask = (params: unknown) => conn.sendRequest(RunFactsRequest.type, params as never) as Promise<RunFactsResult>;
const DDP =
  'import os\nimport torch\nimport torch.distributed as dist\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\ndist.init_process_group(backend="nccl")\n';
const LATE =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';

test("the facts of the text sent: launcher-set reads, env:// init_process_group, a write before CUDA initialises (takes effect)", async () => {
  const r = await ask({ uri: "file:///w/ddp.py", text: `${DDP}os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\n` });
  assert.deepEqual(r, {
    ok: true,
    facts: {
      distributedReads: [{ variable: "LOCAL_RANK", line: 4, withDefault: false, text: 'os.environ["LOCAL_RANK"]' }],
      envInitProcessGroup: [{ line: 5, text: 'dist.init_process_group(backend="nccl")' }],
      visibleDevicesWrites: [],
    },
  });
  const early = await ask({
    uri: "file:///w/early.py",
    text: 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n',
  });
  assert.ok(early.ok);
  assert.deepEqual(early.facts.visibleDevicesWrites, [
    { line: 1, value: "2", text: 'os.environ["CUDA_VISIBLE_DEVICES"] = "2"', noEffect: null },
  ]);
  assert.deepEqual(checkRunFactsResult(early), early, "the client's shape check keeps a real answer");
});

test("a write after CUDA initialisation: GPU001's verdict, also under # noqa (a suppressed finding changes nothing CUDA does)", async () => {
  const message =
    "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch.cuda.is_available() (line 4): it has no effect in this process (the program stays on the GPUs it already saw)";
  for (const text of [LATE, LATE.replace('= "2"\n', '= "2"  # noqa: GPU001\n')]) {
    const r = await ask({ uri: "file:///w/late.py", text });
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(
      r.facts.visibleDevicesWrites.map((w) => [w.line, w.value, w.noEffect]),
      [[5, "2", message]],
    );
  }
});

test("the document's pyproject: [tool.gpu-pilot] eager-init-modules makes an import initialise CUDA", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-runfacts-"));
  writeFileSync(join(dir, "pyproject.toml"), '[tool.gpu-pilot]\neager-init-modules = ["mylab.gpu"]\n');
  const text = 'import os\nimport mylab.gpu\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const there = await ask({ uri: pathToFileURL(join(dir, "train.py")).href, text });
  assert.ok(there.ok, JSON.stringify(there));
  assert.match(
    there.facts.visibleDevicesWrites[0].noEffect ?? "",
    /^CUDA_VISIBLE_DEVICES is set after CUDA was initialised by .*mylab\.gpu/,
  );
  const elsewhere = await ask({ uri: "untitled:Untitled-1", text });
  assert.ok(elsewhere.ok);
  assert.equal(elsewhere.facts.visibleDevicesWrites[0].noEffect, null, "no pyproject: mylab.gpu is an ordinary import");
});

test("bad params and a text over gpuPilot.maxFileSizeKB's default: ok false with the reason", async () => {
  assert.deepEqual(await ask({ uri: "file:///w/a.py" }), {
    ok: false,
    error: "params must be { uri: string, text: string }",
  });
  assert.deepEqual(await ask(null), { ok: false, error: "params must be { uri: string, text: string }" });
  const big = await ask({ uri: "file:///w/big.py", text: "x = 1\n".repeat(400_000) });
  assert.equal(big.ok, false);
  assert.match(!big.ok ? big.error : "", /KB/);
});

test("checkRunFactsResult: what the client accepts from a peer", () => {
  assert.deepEqual(checkRunFactsResult({ ok: false, error: "down" }), { ok: false, error: "down" });
  assert.deepEqual(checkRunFactsResult(null), { ok: false, error: "the answer is not an object" });
  const bad = {
    ok: false,
    error: "the answer is not run facts (distributedReads, envInitProcessGroup, visibleDevicesWrites)",
  };
  assert.deepEqual(checkRunFactsResult({ ok: true, facts: { distributedReads: [], envInitProcessGroup: [] } }), bad);
  assert.deepEqual(
    checkRunFactsResult({
      ok: true,
      facts: {
        distributedReads: [],
        envInitProcessGroup: [],
        visibleDevicesWrites: [{ line: -1, text: "", value: null, noEffect: null }],
      },
    }),
    bad,
  );
  assert.deepEqual(
    checkRunFactsResult({
      ok: true,
      facts: {
        distributedReads: [],
        envInitProcessGroup: [],
        visibleDevicesWrites: [{ line: 1, text: "x", value: 3, noEffect: null }],
      },
    }),
    bad,
  );
});
