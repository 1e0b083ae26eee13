// activate(): commands, the language client's options, the gpuPilot/inventory notification, restart,
// and the API, with stand-ins for `vscode` and vscode-languageclient (client-fakeVscode.ts, first).
import {
  changeSettings,
  commands,
  fakeExtensionContext,
  FakeLanguageClient,
  recorded,
  settings,
} from "../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activate, deactivate, type GpuPilotApi, type GpuPilotTestApi } from "../../../client/src/extension";
import { InvalidDeviceIdError } from "../../../common/src/gpu/selection";
import { Ctx } from "../../../client/src/ctx";
import { Uri } from "../support/client-fakeVscode";
import { ROOT } from "../support/root";
import { until } from "../support/until";

// activate() returns the test hooks of client/src/api.ts only with GPU_PILOT_TEST_HOOKS=1 (publicApi.ts).
process.env.GPU_PILOT_TEST_HOOKS = "1";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const extRoot = mkdtempSync(join(tmpdir(), "gpu-pilot-ext-"));
test.after(() => rmSync(extRoot, { recursive: true, force: true }));

const context = (root: string) => fakeExtensionContext(root);

function fresh() {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  FakeLanguageClient.instances.length = 0;
  FakeLanguageClient.failStart = false;
  recorded.log.length = 0;
}

const inventoryOf = (c: FakeLanguageClient) =>
  c.notifications
    .filter((n) => n.method === "gpuPilot/inventory")
    .map((n) => n.params as { gpus: { index: number }[] | null; selection: string[] });

/** package.json's default for gpuPilot.eagerInitModules (the init catalogue's list: frameworkTable.test.ts), which the client sends unchanged. */
const EAGER_DEFAULT = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
  }
).contributes.configuration.properties["gpuPilot.eagerInitModules"].default as string[];

test("activate: registers exactly the commands of package.json, starts the server, sends the inventory", async () => {
  fresh();
  mkdirSync(join(extRoot, "dist"), { recursive: true });
  writeFileSync(join(extRoot, "dist", "server.js"), "// stand-in\n");
  const ctx = context(extRoot);
  const api: GpuPilotApi = activate(ctx as never) as GpuPilotTestApi;

  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { commands: { command: string }[] };
  };
  assert.deepEqual([...commands.registered.keys()].sort(), manifest.contributes.commands.map((c) => c.command).sort());

  await until(() => api.isServerRunning(), "the client to run");
  const client = FakeLanguageClient.instances[0];
  assert.equal(client.id, "gpuPilot");
  assert.deepEqual(client.serverOptions, {
    run: {
      module: join(extRoot, "dist", "server.js"),
      transport: 1,
      options: {
        execArgv: ["--max-semi-space-size=1", "--expose-gc"],
        env: { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2" },
      },
    },
    debug: {
      module: join(extRoot, "dist", "server.js"),
      transport: 1,
      options: {
        execArgv: ["--max-semi-space-size=1", "--expose-gc", "--inspect=6009"],
        env: { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2" },
      },
    },
  });
  assert.deepEqual(client.clientOptions.documentSelector, [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
    { scheme: "file", language: "dockerfile" },
    { scheme: "file", language: "dockercompose" },
    { scheme: "file", language: "yaml" },
    { scheme: "file", language: "shellscript" },
    { scheme: "file", pattern: "**/*.{sbatch,slurm}" },
    {
      scheme: "file",
      pattern: "**/{.devcontainer.json,.devcontainer/devcontainer.json,.devcontainer/*/devcontainer.json}",
    },
    { scheme: "file", pattern: "**/{.env,.env.*,*.env}" },
  ]);
  assert.deepEqual(client.clientOptions.initializationOptions, {
    eagerInitModules: EAGER_DEFAULT,
    select: [],
    ignore: [],
    severity: {},
    configurationPreference: "editorFirst",
    inlayHints: false,
    maxFileSizeKB: 2048,
    preview: null,
    targetTorch: null,
  });

  await api.refresh();
  await until(() => inventoryOf(client).some((p) => p.gpus !== null), "an inventory with GPUs");
  const first = inventoryOf(client).find((p) => p.gpus !== null)!;
  assert.deepEqual(
    first.gpus!.map((g) => g.index),
    [0, 1],
  );
  assert.deepEqual(first.selection, []);
  assert.equal(api.getInventory()?.gpus.length, 2);
  assert.deepEqual(api.getNvidiaSmiState(), { state: "ok", problem: "" });

  await api.setSelection(["1", "0"]);
  assert.deepEqual(api.getSelection(), ["0", "1"], "stored in index order");
  await until(() => inventoryOf(client).at(-1)?.selection.length === 2, "the selection sent");
  const count = inventoryOf(client).length;
  await api.refresh();
  assert.equal(inventoryOf(client).length, count, "unchanged inventory is not sent again");
  await assert.rejects(api.setSelection(["0; reboot"]), InvalidDeviceIdError);

  await commands.executeCommand("gpuPilot.clearSelection");
  assert.deepEqual(api.getSelection(), []);

  // restart: the old client stops, a new one starts and gets the inventory
  await commands.executeCommand("gpuPilot.restartServer");
  assert.equal(client.stopped, true);
  const second = FakeLanguageClient.instances[1];
  assert.ok(second.isRunning());
  await until(() => inventoryOf(second).length > 0, "inventory sent to the new client");

  // lint settings go to the running server without a restart
  settings.set("lint.ignore", ["gpu002", "bogus"]);
  settings.set("lint.severity", { GPU001: "warning", GPU9: "error" });
  changeSettings(["gpuPilot.lint.ignore", "gpuPilot.lint"]);
  const sent = second.notifications.filter((n) => n.method === "gpuPilot/settings");
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].params, {
    eagerInitModules: EAGER_DEFAULT,
    select: [],
    ignore: ["GPU002"],
    severity: { GPU001: "warning" },
    configurationPreference: "editorFirst",
    inlayHints: false,
    maxFileSizeKB: 2048,
    preview: null,
    targetTorch: null,
  });
  assert.equal(FakeLanguageClient.instances.length, 2, "no restart for lint settings");
  settings.delete("lint.ignore");
  settings.delete("lint.severity");

  // a setting the server reads at start restarts it with the new value
  settings.set("eagerInitModules", ["my_cuda_lib"]);
  changeSettings(["gpuPilot.eagerInitModules"]);
  await until(
    () => FakeLanguageClient.instances.length === 3 && FakeLanguageClient.instances[2].isRunning(),
    "a third client",
  );
  assert.deepEqual(FakeLanguageClient.instances[2].clientOptions.initializationOptions, {
    eagerInitModules: ["my_cuda_lib"],
    select: [],
    ignore: [],
    severity: {},
    configurationPreference: "editorFirst",
    inlayHints: false,
    maxFileSizeKB: 2048,
    preview: null,
    targetTorch: null,
  });
  assert.equal(second.stopped, true);

  assert.equal(api.lastRun, undefined);
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
  assert.equal(FakeLanguageClient.instances[2].stopped, true);
  assert.equal(commands.registered.size, 0, "all commands were in context.subscriptions");
});

test("nvidia-smi failing: the server gets gpus null", async () => {
  fresh();
  process.env.FAKE_NVIDIA_SMI_MODE = "fail9";
  const ctx = context(extRoot);
  const api = activate(ctx as never) as GpuPilotTestApi;
  await until(() => api.isServerRunning(), "the client to run");
  await api.refresh();
  const client = FakeLanguageClient.instances[0];
  await until(() => inventoryOf(client).length > 0, "an inventory");
  assert.ok(inventoryOf(client).every((p) => p.gpus === null));
  assert.equal(api.getNvidiaSmiState().state, "failed");
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
});

test("a missing dist/server.js is logged, not thrown; GPUs still work; restart retries", async () => {
  fresh();
  const empty = mkdtempSync(join(tmpdir(), "gpu-pilot-noserver-"));
  const ctx = context(empty);
  const api = activate(ctx as never) as GpuPilotTestApi;
  await api.refresh();
  await until(() => recorded.log.some((l) => l.includes("Language server not found")), "the log line");
  assert.equal(FakeLanguageClient.instances.length, 0);
  assert.equal(api.isServerRunning(), false);
  assert.equal(api.getInventory()?.gpus.length, 2);

  mkdirSync(join(empty, "dist"));
  writeFileSync(join(empty, "dist", "server.js"), "// built now\n");
  await commands.executeCommand("gpuPilot.restartServer");
  assert.equal(api.isServerRunning(), true);
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
  rmSync(empty, { recursive: true, force: true });
});

test("a server that fails to start is logged; the extension keeps working", async () => {
  fresh();
  FakeLanguageClient.failStart = true;
  const ctx = context(extRoot);
  const api = activate(ctx as never) as GpuPilotTestApi;
  await until(() => recorded.log.some((l) => l.includes("could not be started")), "the log line");
  assert.equal(api.isServerRunning(), false);
  await api.setSelection(["0"]);
  assert.deepEqual(api.getSelection(), ["0"]);
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
});

test("runFacts (the checks before a run ask the server): the answer, or ok false with the reason when the server is down, fails, answers nonsense or too late", async () => {
  fresh();
  const empty = mkdtempSync(join(tmpdir(), "gpu-pilot-facts-"));
  const ctx = new Ctx(context(empty) as never);
  const uri = Uri.file("/w/train.py") as never;
  try {
    await ctx.startServer(); // no dist/server.js: not started
    assert.deepEqual(await ctx.runFacts(uri, "x = 1\n"), {
      ok: false,
      error: "the GPU Pilot language server is not running (see GPU Pilot: Show Output)",
    });

    mkdirSync(join(empty, "dist"));
    writeFileSync(join(empty, "dist", "server.js"), "// built now\n");
    const facts = {
      distributedReads: [],
      envInitProcessGroup: [],
      visibleDevicesWrites: [{ line: 1, value: "2", text: "w", noEffect: null }],
    };
    FakeLanguageClient.answer = (method) =>
      method === "gpuPilot/runFacts" ? Promise.resolve({ ok: true, facts }) : Promise.reject(new Error(method));
    const starting = ctx.startServer();
    const asked = ctx.runFacts(uri, "import os\n"); // asked while the server starts: waits for it
    await starting;
    assert.deepEqual(await asked, { ok: true, facts });
    assert.deepEqual(FakeLanguageClient.instances[0].requests, [
      { method: "gpuPilot/runFacts", params: { uri: "file:///w/train.py", text: "import os\n" } },
    ]);

    FakeLanguageClient.answer = () => Promise.reject(new Error("Request gpuPilot/runFacts failed with message: boom"));
    assert.deepEqual(await ctx.runFacts(uri, ""), {
      ok: false,
      error: "the language server could not analyse it: Request gpuPilot/runFacts failed with message: boom",
    });
    FakeLanguageClient.answer = () => Promise.resolve({ ok: true, facts: { distributedReads: "no" } });
    assert.deepEqual(await ctx.runFacts(uri, ""), {
      ok: false,
      error: "the answer is not run facts (distributedReads, envInitProcessGroup, visibleDevicesWrites)",
    });
    FakeLanguageClient.answer = () => new Promise(() => undefined);
    assert.deepEqual(await ctx.runFacts(uri, "", 50), {
      ok: false,
      error: "the language server did not answer within 0.05 s",
    });
  } finally {
    FakeLanguageClient.answer = (method) => Promise.reject(new Error(`Unhandled method ${method}`));
    await ctx.dispose();
    for (const d of ctx.extCtx.subscriptions) d.dispose();
    rmSync(empty, { recursive: true, force: true });
  }
});

test("startServer(true), as activate() calls it: no language client before the next turn of the event loop; runFacts and checkFile asked before then wait for it and get the server's answer", async () => {
  fresh();
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-later-"));
  mkdirSync(join(root, "dist"));
  writeFileSync(join(root, "dist", "server.js"), "// stand-in\n");
  const ctx = new Ctx(context(root) as never);
  const facts = { distributedReads: [], envInitProcessGroup: [], visibleDevicesWrites: [] };
  FakeLanguageClient.answer = (method, params) =>
    method === "gpuPilot/runFacts"
      ? Promise.resolve({ ok: true, facts })
      : Promise.resolve({ ok: true, path: (params as { path: string }).path, findings: [] });
  try {
    const started = ctx.startServer(true);
    const asked = ctx.runFacts(Uri.file("/w/train.py") as never, "import os\n");
    const checked = ctx.checkFile("/w/train.py");
    await Promise.resolve();
    assert.equal(
      FakeLanguageClient.instances.length,
      0,
      "the language client is constructed in a later turn, not at once",
    );
    assert.equal(ctx.languageClientTimings(), undefined);
    assert.equal(ctx.isServerRunning(), false);
    await started;
    assert.equal(FakeLanguageClient.instances.length, 1);
    assert.deepEqual(await asked, { ok: true, facts });
    assert.deepEqual(await checked, { ok: true, path: "/w/train.py", findings: [] });
    const t = ctx.languageClientTimings();
    assert.ok(t && t.loadMs >= 0 && t.constructMs >= 0, JSON.stringify(t));
  } finally {
    FakeLanguageClient.answer = (method) => Promise.reject(new Error(`Unhandled method ${method}`));
    await ctx.dispose();
    for (const d of ctx.extCtx.subscriptions) d.dispose();
    rmSync(root, { recursive: true, force: true });
  }
});
