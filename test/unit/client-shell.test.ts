// The split of the client (issue 20, load time): activate() (client/src/shell.ts) registers every
// command, view, provider and the status bar with stand-ins and loads no features; the features
// (client/src/features.ts, dist/features.js in the extension) come a turn later, or at once when a
// stand-in is asked first, and then answer through the stand-ins. With the stand-in `vscode` module.
import {
  commands as vscodeCommands,
  EventEmitter,
  FakeDocument,
  FakeTreeView,
  languages,
  recorded,
  settings,
  Uri,
  window,
  workspace,
  FakeLanguageClient,
} from "./client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activate, deactivate, type GpuPilotApi, type GpuPilotTestApi } from "../../client/src/extension";
import { commands } from "../../client/src/commands";
import { COMMAND_IDS, LateMonitor } from "../../client/src/shell";
import { createAgentTools } from "../../client/src/agents/lmTools";
import { lateTools, type AgentTool } from "../../client/src/agents/register";
import { PREPARED_TOOLS, TOOL, type ToolName } from "../../common/src/agents/toolNames";
import { LateTreeProvider } from "../../client/src/views";
import type { Inventory } from "../../common/src/gpu/nvidiaSmi";

// activate() returns the test hooks of client/src/api.ts only with GPU_PILOT_TEST_HOOKS=1 (publicApi.ts).
process.env.GPU_PILOT_TEST_HOOKS = "1";

const ROOT = join(__dirname, "..", "..");
const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const extRoot = mkdtempSync(join(tmpdir(), "gpu-pilot-shell-"));
mkdirSync(join(extRoot, "dist"), { recursive: true });
writeFileSync(join(extRoot, "dist", "server.js"), "// stand-in\n");
test.after(() => rmSync(extRoot, { recursive: true, force: true }));

function context() {
  const data = new Map<string, unknown>();
  return {
    subscriptions: [] as { dispose(): unknown }[],
    workspaceState: {
      get: (key: string) => data.get(key),
      update: (key: string, value: unknown) => {
        data.set(key, value);
        return Promise.resolve();
      },
    },
    asAbsolutePath: (p: string) => join(extRoot, p),
    extension: { packageJSON: { version: "0.1.0" } },
    extensionPath: extRoot,
    extensionUri: Uri.file(extRoot),
  };
}

/** activate() with the fake nvidia-smi; returns the API, the context and the views and item it created. */
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
  const ctx = context();
  const api = activate(ctx as never) as GpuPilotTestApi;
  const view = (id: string) => recorded.treeViews.find((v) => v.id === id) ?? assert.fail(`no view ${id}`);
  return { api, ctx, gpuView: view("gpuPilot.gpus"), slurmView: view("gpuPilot.slurm") };
}

async function stop(ctx: ReturnType<typeof context>): Promise<void> {
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
}

const provider = (v: FakeTreeView) => v.options.treeDataProvider as LateTreeProvider<unknown>;

test("activate() registers the commands, views, dashboard, CodeLens providers and status bar item, and loads the features only a turn later", async () => {
  const { api, ctx, gpuView } = start();
  try {
    assert.equal(api.getFeaturesTimings(), undefined, "no features during activate()");
    assert.deepEqual(
      [...vscodeCommands.registered.keys()].filter((k) => k.startsWith("gpuPilot.")).sort(),
      [...COMMAND_IDS].sort(),
    );
    assert.equal(gpuView.options.manageCheckboxStateManually, true);
    assert.ok(window.webviewViews.has("gpuPilot.dashboard"));
    assert.equal(languages.codeLensProviders.length, 2, "the run and the Slurm submit CodeLens");
    const item = recorded.statusItems.find((i) => i.id === "gpuPilot.selection") ?? assert.fail("no status bar item");
    assert.equal(item.text, "$(circuit-board) GPU: none");
    assert.equal(item.shown, true);
    assert.equal(FakeLanguageClient.instances.length, 0);
    await new Promise((r) => setImmediate(r));
    const t = api.getFeaturesTimings();
    assert.ok(t && t.loadMs >= 0 && t.constructMs > 0, JSON.stringify(t));
  } finally {
    await stop(ctx);
  }
});

test("a stand-in asked before that turn loads the features at once: the GPU view's first getChildren answers as the real provider, then follows its changes; the status bar follows the real monitor", async () => {
  const { api, ctx, gpuView } = start();
  try {
    const late = provider(gpuView);
    let changes = 0;
    late.onDidChangeTreeData(() => changes++);
    const first = late.getChildren() as unknown[];
    assert.notEqual(api.getFeaturesTimings(), undefined, "loaded by getChildren");
    assert.deepEqual(first, api.gpuTreeProvider.getChildren());
    assert.equal((late.getTreeItem(first[0]) as { label?: unknown }).label, "Reading nvidia-smi...");
    await api.setSelection(["0"]);
    await api.refresh();
    assert.ok(changes > 0, "the real provider's onDidChangeTreeData is relayed");
    const rows = late.getChildren() as { kind: string }[];
    assert.deepEqual(
      rows.map((r) => r.kind),
      ["gpu", "gpu"],
    );
    assert.deepEqual(rows, api.gpuTreeProvider.getChildren());
    const item = recorded.statusItems.find((i) => i.id === "gpuPilot.selection")!;
    assert.match(
      item.text,
      /^\$\(circuit-board\) GPU 0 · \d+% · /,
      "the inventory reached the status bar through LateMonitor",
    );
  } finally {
    await stop(ctx);
  }
});

test("the Slurm view's, the dashboard's and the CodeLens stand-ins asked first load the features and answer as the real ones", async () => {
  const { api, ctx, slurmView } = start();
  try {
    // Slurm view: the real provider's rows (no sinfo here: whatever it shows, the stand-in shows the same).
    const late = provider(slurmView);
    const top = late.getChildren() as unknown[];
    assert.notEqual(api.getFeaturesTimings(), undefined, "loaded by the Slurm view's getChildren");
    const labels: unknown[] = [];
    const walk = (nodes: unknown[]) => {
      for (const n of nodes) {
        labels.push((late.getTreeItem(n) as { label?: unknown }).label);
        walk(late.getChildren(n) as unknown[]);
      }
    };
    walk(top);
    assert.ok(labels.length > 0);
    assert.deepEqual(
      labels,
      api.getSlurmState().rows.map((r) => r.label),
      "depth first, as the real provider's rows",
    );
  } finally {
    await stop(ctx);
  }
  const second = start();
  try {
    const visibility = new EventEmitter<void>();
    const posted: unknown[] = [];
    const view = {
      visible: true,
      webview: {
        options: {} as unknown,
        html: "",
        cspSource: "vscode-resource:",
        asWebviewUri: (u: unknown) => u,
        postMessage: (m: unknown) => {
          posted.push(m);
          return Promise.resolve(true);
        },
        onDidReceiveMessage: new EventEmitter<unknown>().event,
      },
      onDidChangeVisibility: visibility.event,
      onDidDispose: new EventEmitter<void>().event,
    };
    assert.equal(second.api.getFeaturesTimings(), undefined);
    (window.webviewViews.get("gpuPilot.dashboard") as { resolveWebviewView(v: unknown): void }).resolveWebviewView(
      view,
    );
    assert.notEqual(second.api.getFeaturesTimings(), undefined, "loaded by resolveWebviewView");
    assert.equal(second.api.getDashboardState().resolved, true, "the real dashboard got the view");
    assert.match(view.webview.html, /dashboard\.js/);
  } finally {
    await stop(second.ctx);
  }
  const third = start();
  try {
    const [run, submit] = [languages.codeLensProviders.at(-1)!, languages.codeLensProviders.at(-2)!];
    assert.deepEqual(run.selector, [
      { language: "python", scheme: "file" },
      { language: "python", scheme: "untitled" },
    ]);
    assert.equal(typeof run.provider.onDidChangeCodeLenses, "function");
    let changed = 0;
    (run.provider.onDidChangeCodeLenses as (l: () => void) => unknown)(() => changed++);
    const doc = new FakeDocument(Uri.file("/w/train.py"), "python");
    doc.text = 'import torch\n\nif __name__ == "__main__":\n    print(1)\n';
    const lenses = await (run.provider.provideCodeLenses(doc) as Promise<
      { command?: { title: string; command: string } }[]
    >);
    assert.notEqual(third.api.getFeaturesTimings(), undefined, "loaded by provideCodeLenses");
    assert.deepEqual(
      lenses.map((l) => l.command?.command),
      ["gpuPilot.runActiveFile"],
    );
    await third.api.setSelection(["1"]);
    assert.ok(changed > 0, "the run CodeLens' refresh on a selection change is relayed");
    const job = new FakeDocument(Uri.file("/w/job.sbatch"), "shellscript");
    job.text = "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n";
    const trusted = workspace.isTrusted;
    const submitted = submit.provider.provideCodeLenses(job) as { command?: { command: string } }[];
    assert.deepEqual(
      submitted.map((l) => l.command?.command),
      trusted ? ["gpuPilot.slurm.submit"] : [],
    );
  } finally {
    await stop(third.ctx);
  }
});

test("a command run during activation's turn loads the features and runs (gpuPilot.refreshGpus)", async () => {
  const { api, ctx } = start();
  try {
    const ran = vscodeCommands.executeCommand("gpuPilot.refreshGpus");
    assert.notEqual(api.getFeaturesTimings(), undefined);
    await ran;
    assert.equal(api.getInventory()?.gpus.length, 2);
  } finally {
    await stop(ctx);
  }
});

test("after deactivate() the next turn loads nothing", async () => {
  const { api, ctx } = start();
  await stop(ctx);
  await new Promise((r) => setImmediate(r));
  assert.equal(api.getFeaturesTimings(), undefined);
});

test("the shell's command ids are commands.ts's handlers and package.json's commands", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { commands: { command: string }[] };
  };
  assert.deepEqual([...COMMAND_IDS].sort(), Object.keys(commands).sort());
  assert.deepEqual([...COMMAND_IDS].sort(), manifest.contributes.commands.map((c) => c.command).sort());
});

test("the agent tools' stand-ins: one per tool, prepareInvocation exactly where the real tool has one, loaded at the first call and forwarded", async () => {
  const real = createAgentTools({} as never);
  assert.deepEqual(Object.keys(real).sort(), Object.values(TOOL).sort());
  assert.deepEqual(
    Object.values(TOOL).filter((n) => typeof real[n].prepareInvocation === "function"),
    [...PREPARED_TOOLS],
  );
  let loads = 0;
  const calls: string[] = [];
  const stub = Object.fromEntries(
    Object.values(TOOL).map((n): [ToolName, AgentTool] => [
      n,
      {
        invoke: (o) => {
          calls.push(`invoke ${n} ${JSON.stringify(o.input)}`);
          return Promise.resolve(`result of ${n}`);
        },
        prepareInvocation: () => {
          calls.push(`prepare ${n}`);
          return Promise.resolve({ invocationMessage: n });
        },
      },
    ]),
  ) as Record<ToolName, AgentTool>;
  const late = lateTools(() => {
    loads++;
    return stub;
  });
  assert.equal(loads, 0);
  for (const n of Object.values(TOOL))
    assert.equal(typeof late[n].prepareInvocation === "function", PREPARED_TOOLS.includes(n), n);
  const none = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) } as never;
  assert.equal(await late[TOOL.listGpus].invoke({ input: { a: 1 } }, none), "result of gpu-pilot_listGpus");
  assert.deepEqual(await late[TOOL.runOnGpus].prepareInvocation!({ input: {} }, none), {
    invocationMessage: TOOL.runOnGpus,
  });
  assert.deepEqual(calls, ['invoke gpu-pilot_listGpus {"a":1}', "prepare gpu-pilot_runOnGpus"]);
  assert.equal(loads, 2);
});

test("LateMonitor: no inventory before a monitor attaches; then the monitor's, and its changes", () => {
  const late = new LateMonitor();
  let fired = 0;
  late.onDidChange(() => fired++);
  assert.equal(late.inventory, undefined);
  const listeners: (() => void)[] = [];
  const inv = { gpus: [], apps: [], problems: [] } as unknown as Inventory;
  const sub = late.attach({
    inventory: inv,
    onDidChange: (l: () => void) => {
      listeners.push(l);
      return { dispose: () => listeners.splice(listeners.indexOf(l), 1) };
    },
  } as never);
  assert.equal(late.inventory, inv);
  assert.equal(fired, 1, "attaching is a change");
  listeners.forEach((l) => l());
  assert.equal(fired, 2);
  sub.dispose();
  assert.equal(listeners.length, 0);
  late.dispose();
});
