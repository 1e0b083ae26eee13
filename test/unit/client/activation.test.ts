// Activation (issue 44, one bundle per process): activate() (client/src/extension.ts, ctx.ts)
// registers every command, view, provider, the status bar item and the agent tools with their real
// code, no stand-ins; what is heavy (the language client, dist/lsp.js in the extension, and the
// first nvidia-smi query) waits for the event loop's next turn. With the stand-in `vscode` module.
import {
  commands as vscodeCommands,
  EventEmitter,
  FakeDocument,
  FakeTreeView,
  languages,
  lm,
  recorded,
  settings,
  Uri,
  window,
  workspace,
  FakeLanguageClient,
  fakeExtensionContext,
} from "../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activate, deactivate, type GpuPilotApi, type GpuPilotTestApi } from "../../../client/src/extension";
import { commands } from "../../../client/src/commands";
import { GpuDashboard } from "../../../client/src/gpu/dashboard";
import { RunCodeLensProvider } from "../../../client/src/run/codeLens";
import { SubmitCodeLensProvider } from "../../../client/src/slurm/submit";
import { SlurmTreeProvider } from "../../../client/src/slurm/view";
import { TOOL } from "../../../common/src/agents/toolNames";
import { ROOT } from "../support/root";

// activate() returns the test hooks of client/src/api.ts only with GPU_PILOT_TEST_HOOKS=1 (publicApi.ts).
process.env.GPU_PILOT_TEST_HOOKS = "1";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const extRoot = mkdtempSync(join(tmpdir(), "gpu-pilot-activation-"));
mkdirSync(join(extRoot, "dist"), { recursive: true });
writeFileSync(join(extRoot, "dist", "server.js"), "// stand-in\n");
test.after(() => rmSync(extRoot, { recursive: true, force: true }));

const context = () => fakeExtensionContext(extRoot);

/** activate() with the fake nvidia-smi; returns the API, the context and the views it created. */
function start(): {
  api: GpuPilotApi;
  ctx: ReturnType<typeof context>;
  gpuView: FakeTreeView;
  slurmView: FakeTreeView;
} {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  FakeLanguageClient.instances.length = 0;
  recorded.treeViews.length = 0;
  recorded.statusItems.length = 0;
  languages.codeLensProviders.length = 0;
  const ctx = context();
  const api = activate(ctx as never) as GpuPilotTestApi;
  const view = (id: string) => recorded.treeViews.find((v) => v.id === id) ?? assert.fail(`no view ${id}`);
  return { api, ctx, gpuView: view("gpuPilot.gpus"), slurmView: view("gpuPilot.slurm") };
}

async function stop(ctx: ReturnType<typeof context>): Promise<void> {
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
}

test("activate() registers the commands, views, dashboard, CodeLens providers, agent tools and status bar item with their real code, and starts the language client and the first query only a turn later", async () => {
  const { api, ctx, gpuView, slurmView } = start();
  try {
    assert.deepEqual(
      [...vscodeCommands.registered.keys()].filter((k) => k.startsWith("gpuPilot.")).sort(),
      Object.keys(commands).sort(),
    );
    // The views' providers are the real ones (no stand-in between VS Code and them).
    assert.equal(gpuView.options.treeDataProvider, api.gpuTreeProvider);
    assert.equal(gpuView.options.manageCheckboxStateManually, true);
    assert.ok(slurmView.options.treeDataProvider instanceof SlurmTreeProvider);
    assert.ok(window.webviewViews.get("gpuPilot.dashboard") instanceof GpuDashboard);
    assert.deepEqual(
      languages.codeLensProviders.map((p) => p.provider.constructor),
      [SubmitCodeLensProvider, RunCodeLensProvider],
      "the Slurm submit and the run CodeLens",
    );
    const tools = api.getAgentTools();
    assert.deepEqual(tools.registered, Object.values(TOOL));
    for (const name of Object.values(TOOL)) assert.equal(lm.tools.get(name), tools.tools[name], name);
    const item = recorded.statusItems.find((i) => i.id === "gpuPilot.selection") ?? assert.fail("no status bar item");
    assert.equal(item.text, "$(circuit-board) GPU: none");
    assert.equal(item.shown, true);
    // Nothing heavy during activate(): no language client, no query yet.
    assert.equal(FakeLanguageClient.instances.length, 0);
    assert.equal(api.getLanguageClientTimings(), undefined);
    assert.equal(api.getNvidiaSmiState().state, "unknown");
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(FakeLanguageClient.instances.length, 1, "the language client a turn later");
    const t = api.getLanguageClientTimings();
    assert.ok(t && t.loadMs >= 0 && t.constructMs >= 0, JSON.stringify(t));
    await api.refresh();
    assert.equal(api.getInventory()?.gpus.length, 2);
  } finally {
    await stop(ctx);
  }
});

test("what VS Code asks at once answers from the real providers: the GPU view's rows and the status bar follow the monitor", async () => {
  const { api, ctx, gpuView } = start();
  try {
    const provider = gpuView.options.treeDataProvider as typeof api.gpuTreeProvider;
    let changes = 0;
    provider.onDidChangeTreeData?.(() => changes++);
    const first = provider.getChildren() as unknown[];
    assert.equal((provider.getTreeItem(first[0]) as { label?: unknown }).label, "Reading nvidia-smi...");
    await api.setSelection(["0"]);
    await api.refresh();
    assert.ok(changes > 0);
    assert.deepEqual(
      (provider.getChildren() as { kind: string }[]).map((r) => r.kind),
      ["gpu", "gpu"],
    );
    const item = recorded.statusItems.find((i) => i.id === "gpuPilot.selection")!;
    assert.match(item.text, /^\$\(circuit-board\) GPU 0 · \d+% · /);
  } finally {
    await stop(ctx);
  }
});

test("the Slurm view, the dashboard and the CodeLens providers answer during activation's turn", async () => {
  const { api, ctx, slurmView } = start();
  try {
    // Slurm view: the provider's rows (no sinfo here: whatever it shows, the API's rows are the same).
    const provider = slurmView.options.treeDataProvider as SlurmTreeProvider;
    const labels: unknown[] = [];
    const walk = (nodes: unknown[]) => {
      for (const n of nodes) {
        labels.push((provider.getTreeItem(n as never) as { label?: unknown }).label);
        walk(provider.getChildren(n as never) as unknown[]);
      }
    };
    walk(provider.getChildren() as unknown[]);
    assert.ok(labels.length > 0);
    assert.deepEqual(
      labels,
      api.getSlurmState().rows.map((r) => r.label),
      "depth first, as the API's rows",
    );
    const visibility = new EventEmitter<void>();
    const view = {
      visible: true,
      webview: {
        options: {} as unknown,
        html: "",
        cspSource: "vscode-resource:",
        asWebviewUri: (u: unknown) => u,
        postMessage: () => Promise.resolve(true),
        onDidReceiveMessage: new EventEmitter<unknown>().event,
      },
      onDidChangeVisibility: visibility.event,
      onDidDispose: new EventEmitter<void>().event,
    };
    (window.webviewViews.get("gpuPilot.dashboard") as GpuDashboard).resolveWebviewView(view as never);
    assert.equal(api.getDashboardState().resolved, true);
    assert.match(view.webview.html, /dashboard\.js/);
    const [submit, run] = languages.codeLensProviders;
    assert.deepEqual(run.selector, [
      { language: "python", scheme: "file" },
      { language: "python", scheme: "untitled" },
    ]);
    let changed = 0;
    (run.provider.onDidChangeCodeLenses as (l: () => void) => unknown)(() => changed++);
    const doc = new FakeDocument(Uri.file("/w/train.py"), "python");
    doc.text = 'import torch\n\nif __name__ == "__main__":\n    print(1)\n';
    const lenses = await (run.provider.provideCodeLenses(doc) as Promise<{ command?: { command: string } }[]>);
    assert.deepEqual(
      lenses.map((l) => l.command?.command),
      ["gpuPilot.runActiveFile"],
    );
    await api.setSelection(["1"]);
    assert.ok(changed > 0, "the run CodeLens refreshes on a selection change");
    const job = new FakeDocument(Uri.file("/w/job.sbatch"), "shellscript");
    job.text = "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n";
    const submitted = submit.provider.provideCodeLenses(job) as { command?: { command: string } }[];
    assert.deepEqual(
      submitted.map((l) => l.command?.command),
      workspace.isTrusted ? ["gpuPilot.slurm.submit"] : [],
    );
  } finally {
    await stop(ctx);
  }
});

test("a command run during activation's turn runs (gpuPilot.refreshGpus)", async () => {
  const { api, ctx } = start();
  try {
    await vscodeCommands.executeCommand("gpuPilot.refreshGpus");
    assert.equal(api.getInventory()?.gpus.length, 2);
  } finally {
    await stop(ctx);
  }
});

test("after deactivate() the next turn starts nothing", async () => {
  const { api, ctx } = start();
  await stop(ctx);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(FakeLanguageClient.instances.length, 0);
  assert.equal(api.getNvidiaSmiState().state, "unknown");
});

test("the registered command ids are commands.ts's handlers and package.json's commands", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { commands: { command: string }[] };
  };
  assert.deepEqual(Object.keys(commands).sort(), manifest.contributes.commands.map((c) => c.command).sort());
});
