// Faults (issue 9): a rule that throws is isolated (the other rules still report, the failure is
// returned for the log), and a crashed language server is restarted a bounded number of times with
// one line in the output channel each time.
import { recorded, settings, FakeLanguageClient } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { lintNotebook } from "../../../../server/src/engine/notebook";
import { ruleByCode } from "../../../../server/src/engine/rules/index";
import type { PythonRule } from "../../../../server/src/engine/rule";
import { restartingErrorHandler } from "../../../../client/src/serverRestart";
import { activate, deactivate, type GpuPilotTestApi } from "../../../../client/src/extension";

// activate() returns the test hooks of client/src/api.ts only with GPU_PILOT_TEST_HOOKS=1 (publicApi.ts).
process.env.GPU_PILOT_TEST_HOOKS = "1";

const SOURCE =
  'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ["CUDA_VISIBLE_DEVICE"] = "0"\n';

/** A rule that reports once, then throws: its report must be dropped with it. */
const THROWING: PythonRule = {
  meta: { ...(ruleByCode("GPU001") as PythonRule).meta, code: "GPU099", name: "throws" },
  check(ctx) {
    ctx.report({ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, message: "half-done" });
    throw new TypeError("boom in a rule");
  },
};

test("a throwing rule is isolated: the other rules still report, the failure is returned", async () => {
  await initEngine();
  const r = lintPython(SOURCE, { rules: [THROWING, ruleByCode("GPU001")!, ruleByCode("GPU007")!] });
  r.tree?.delete();
  assert.deepEqual(r.diagnostics.map((d) => d.code).sort(), ["GPU001", "GPU007"]);
  assert.equal(r.ruleFailures.length, 1);
  assert.equal(r.ruleFailures[0].code, "GPU099");
  assert.match(r.ruleFailures[0].error, /^boom in a rule\n.*TypeError: boom in a rule/s);
  const nb = lintNotebook(
    [
      { kind: "code", text: "import torch\ntorch.cuda.init()" },
      { kind: "code", text: 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"' },
    ],
    { rules: [ruleByCode("GPU001")!, THROWING] },
  );
  assert.deepEqual(
    nb.diagnostics.map((d) => [d.code, d.cell]),
    [["GPU001", 1]],
  );
  assert.deepEqual(
    nb.ruleFailures.map((f) => f.code),
    ["GPU099"],
  );
});

test("a crashed server is restarted up to 4 times in 3 minutes, one output line each, then left stopped", async () => {
  const lines: string[] = [];
  let now = 0;
  const h = restartingErrorHandler(
    { warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
    { now: () => now },
  );
  const actions: number[] = [];
  for (let i = 0; i < 5; i++) {
    actions.push((await h.closed()).action);
    now += 10_000;
  }
  assert.deepEqual(actions, [2, 2, 2, 2, 1], "Restart ×4, then DoNotRestart");
  assert.equal(lines.length, 5);
  assert.match(
    lines[0],
    /^warn The GPU Pilot language server stopped unexpectedly: restarting it \(1 of 4 restarts in 3 minutes\)\.$/,
  );
  assert.match(
    lines[4],
    /^error .*stopped unexpectedly 5 times in 3 minutes: it is not restarted again\. .*GPU Pilot: Restart Server/,
  );
  // Crashes older than the window no longer count.
  now += 3 * 60_000;
  assert.equal((await h.closed()).action, 2);
  assert.equal((await h.closed()).handled, true);
  // Connection errors: continue, then shut down if they keep coming.
  assert.equal((await h.error(new Error("write EPIPE"), undefined, 1)).action, 1);
  assert.equal((await h.error(new Error("write EPIPE"), undefined, 4)).action, 2);
});

test("the extension's language client uses that handler: a server crash is logged once and restarted", async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-restart-"));
  try {
    mkdirSync(join(root, "dist"), { recursive: true });
    writeFileSync(join(root, "dist", "server.js"), "// stand-in\n");
    settings.clear();
    settings.set("nvidiaSmiPath", join(root, "no-nvidia-smi"));
    FakeLanguageClient.instances.length = 0;
    recorded.log.length = 0;
    const data = new Map<string, unknown>();
    const ctx = {
      subscriptions: [] as { dispose(): unknown }[],
      workspaceState: {
        get: (k: string) => data.get(k),
        update: (k: string, v: unknown) => {
          data.set(k, v);
          return Promise.resolve();
        },
        keys: () => [...data.keys()],
      },
      globalState: {
        get: (k: string) => data.get(k),
        update: (k: string, v: unknown) => {
          data.set(k, v);
          return Promise.resolve();
        },
        keys: () => [...data.keys()],
        setKeysForSync: () => undefined,
      },
      asAbsolutePath: (p: string) => join(root, p),
      extension: { packageJSON: { version: "0.1.0" } },
      extensionUri: { fsPath: root },
      extensionPath: root,
    };
    const api = activate(ctx as never) as GpuPilotTestApi;
    const end = Date.now() + 10_000;
    while (!api.isServerRunning()) {
      if (Date.now() > end) assert.fail("the client did not start");
      await new Promise((r) => setTimeout(r, 10));
    }
    const client = FakeLanguageClient.instances[0] as unknown as {
      clientOptions: { errorHandler?: { closed(): { action: number } | Promise<{ action: number }> } };
    };
    assert.ok(client.clientOptions.errorHandler, "clientOptions.errorHandler is set");
    const before = recorded.log.length;
    assert.equal((await client.clientOptions.errorHandler.closed()).action, 2);
    assert.deepEqual(recorded.log.slice(before).filter((l) => /stopped unexpectedly/.test(l)).length, 1);
    await deactivate();
    for (const d of ctx.subscriptions) d.dispose();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
