// The GPU monitor, tree view and status bar against the fake nvidia-smi, with a stand-in `vscode`
// module (client-fakeVscode.ts, imported first).
import { FakeTreeView, recorded, settings, changeSettings, TreeItemCheckboxState, ThemeIcon, ThemeColor, MarkdownString } from "./client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { GpuMonitor, PROBLEM_KEY, STATE_KEY } from "../../client/src/gpu/monitor";
import { SelectionStore } from "../../client/src/gpu/selection";
import { createGpuTreeView, type GpuTreeNode, GpuTreeProvider } from "../../client/src/gpu/tree";
import { createSelectionStatusBar } from "../../client/src/gpu/statusBar";

const FAKE = join(__dirname, "..", "fixtures", "bin", "nvidia-smi");

function memento() {
  const data = new Map<string, unknown>();
  return {
    get: <T>(key: string) => data.get(key) as T | undefined,
    update: (key: string, value: unknown) => {
      data.set(key, value);
      return Promise.resolve();
    },
  };
}

function setup(mode: string, path = FAKE) {
  process.env.FAKE_NVIDIA_SMI_MODE = mode;
  settings.clear();
  settings.set("nvidiaSmiPath", path);
  settings.set("nvidiaSmiTimeoutMs", 500);
  settings.set("refreshIntervalMs", 250);
  recorded.messages.length = 0;
  const monitor = new GpuMonitor();
  const selection = new SelectionStore(memento());
  const provider = new GpuTreeProvider(monitor, selection);
  return { monitor, selection, provider };
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("ok: two GPUs with live numbers, the process under GPU 0, context keys set", async () => {
  const { monitor, selection, provider } = setup("busy");
  assert.equal(monitor.state, "unknown");
  const loading = provider.getChildren();
  assert.equal(loading.length, 1);
  assert.equal(provider.getTreeItem(loading[0]).label, "Reading nvidia-smi...");

  await monitor.refresh();
  assert.equal(monitor.state, "ok");
  assert.equal(recorded.context.get(STATE_KEY), "ok");
  assert.equal(recorded.context.get(PROBLEM_KEY), "");
  const roots = provider.getChildren();
  const items = roots.map((n) => provider.getTreeItem(n));
  assert.deepEqual(items.map((i) => i.label), ["GPU 0: NVIDIA H200", "GPU 1: NVIDIA H200"]);
  assert.deepEqual(items.map((i) => i.id), ["gpu/GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", "gpu/GPU-6486822f-842c-1320-f829-e4155c0d2130"]);
  assert.deepEqual(items.map((i) => i.description), ["0% · 0/143771 MiB · 35°C", "0% · 0/143771 MiB · 36°C"]);
  assert.equal(items[0].collapsibleState, 2, "GPU 0 has a process: expanded");
  assert.equal(items[1].collapsibleState, 0);
  assert.ok(items[0].tooltip instanceof MarkdownString);
  assert.match((items[0].tooltip as MarkdownString).value, /109\.4 W of 700 W/);
  const icon = items[0].iconPath as ThemeIcon;
  assert.equal(icon.id, "circuit-board");
  assert.equal((icon.color as ThemeColor).id, "charts.green");
  assert.deepEqual(items.map((i) => (i.checkboxState as { state: number }).state), [0, 0]);

  const children = provider.getChildren(roots[0]);
  const child = provider.getTreeItem(children[0]);
  assert.equal(child.label, "pid 582 · python3 · 3380 MiB");
  assert.equal(child.id, "app/GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f/582");
  assert.deepEqual(provider.getChildren(roots[1]), []);

  await selection.set(["1"]);
  const ticked = provider.getChildren().map((n) => (provider.getTreeItem(n).checkboxState as { state: number }).state);
  assert.deepEqual(ticked, [0, 1]);
  assert.deepEqual(recorded.messages, [], "no pop-ups");
  monitor.dispose();
  provider.dispose();
});

test("idle: no process rows", async () => {
  const { monitor, provider } = setup("idle");
  await monitor.refresh();
  const roots = provider.getChildren();
  assert.equal(roots.length, 2);
  assert.deepEqual(provider.getChildren(roots[0]), []);
  monitor.dispose();
});

test("missing nvidia-smi: state missing (the view's welcome content shows), empty tree, logged, no pop-up", async () => {
  const { monitor, provider } = setup("busy", join(__dirname, "no-such-dir", "nvidia-smi"));
  recorded.log.length = 0;
  await monitor.refresh();
  assert.equal(monitor.state, "missing");
  assert.equal(recorded.context.get(STATE_KEY), "missing");
  assert.match(String(recorded.context.get(PROBLEM_KEY)), /nvidia-smi was not found/);
  assert.deepEqual(provider.getChildren(), []);
  assert.equal(monitor.inventory, undefined);
  assert.ok(recorded.log.some((l) => /^warn .*could not be started \(ENOENT\)/.test(l)), recorded.log.join("\n"));
  assert.deepEqual(recorded.messages, []);
  monitor.dispose();
});

test("driver not loaded (exit 9): one calm warning row with nvidia-smi's message", async () => {
  const { monitor, provider } = setup("fail9");
  await monitor.refresh();
  assert.equal(monitor.state, "failed");
  assert.equal(recorded.context.get(STATE_KEY), "failed");
  const rows = provider.getChildren();
  assert.equal(rows.length, 1);
  const item = provider.getTreeItem(rows[0]);
  assert.match(String(item.label), /^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
  assert.match(String(item.tooltip), /the NVIDIA driver is not loaded \(exit 9\)/);
  assert.equal((item.iconPath as ThemeIcon).id, "warning");
  assert.deepEqual(recorded.messages, []);
  monitor.dispose();
});

test("hanging nvidia-smi: killed after gpuPilot.nvidiaSmiTimeoutMs, warning row", async () => {
  const { monitor, provider } = setup("hang");
  const started = Date.now();
  await monitor.refresh();
  assert.ok(Date.now() - started < 5000);
  assert.equal(monitor.state, "failed");
  assert.equal(monitor.failure?.kind, "timeout");
  const item = provider.getTreeItem(provider.getChildren()[0]);
  assert.match(String(item.label), /did not answer within 500 ms/);
  monitor.dispose();
});

test("recovers: failed, then ok after the driver is back", async () => {
  const { monitor, provider } = setup("fail9");
  await monitor.refresh();
  assert.equal(monitor.state, "failed");
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  await monitor.refresh();
  assert.equal(monitor.state, "ok");
  assert.equal(recorded.context.get(PROBLEM_KEY), "");
  assert.equal(provider.getChildren().length, 2);
  monitor.dispose();
});

test("polls only while the view is visible; ticking a checkbox changes the selection", async () => {
  const { monitor, selection } = setup("busy");
  const { view, disposables } = createGpuTreeView(monitor, selection);
  const fakeView = view as unknown as FakeTreeView;
  assert.equal(fakeView.options.manageCheckboxStateManually, true);
  let queries = 0;
  monitor.onDidChange(() => queries++);

  await new Promise((r) => setTimeout(r, 300));
  assert.equal(queries, 0, "hidden view: no polling");

  fakeView.setVisible(true);
  await until(() => queries >= 3, "three polls while visible");
  fakeView.setVisible(false);
  await new Promise((r) => setTimeout(r, 600)); // let a poll in flight finish
  const afterHide = queries;
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(queries, afterHide, "no polling after the view was hidden");

  const provider = fakeView.options.treeDataProvider as GpuTreeProvider;
  const [gpu0, gpu1] = provider.getChildren() as GpuTreeNode[];
  fakeView.checkbox.fire({ items: [[gpu1, TreeItemCheckboxState.Checked]] });
  await until(() => selection.get().length === 1, "selection after ticking GPU 1");
  assert.deepEqual(selection.get(), ["1"]);
  fakeView.checkbox.fire({ items: [[gpu0, TreeItemCheckboxState.Checked]] });
  await until(() => selection.get().length === 2, "selection after ticking GPU 0");
  assert.deepEqual(selection.get(), ["0", "1"]);
  fakeView.checkbox.fire({ items: [[gpu1, TreeItemCheckboxState.Unchecked]] });
  await until(() => selection.get().length === 1, "selection after unticking GPU 1");
  assert.deepEqual(selection.get(), ["0"]);

  for (const d of disposables) d.dispose();
  monitor.dispose();
});

test("a settings change of nvidiaSmiPath triggers a refresh", async () => {
  const { monitor } = setup("busy", join(__dirname, "no-such-dir", "nvidia-smi"));
  await monitor.refresh();
  assert.equal(monitor.state, "missing");
  settings.set("nvidiaSmiPath", FAKE);
  changeSettings(["gpuPilot.nvidiaSmiPath"]);
  await until(() => monitor.state === "ok", "state ok after the path change");
  monitor.dispose();
});

test("status bar: selection text, tooltip, and a warning for GPUs that are not there", async () => {
  const { monitor, selection } = setup("busy");
  recorded.statusItems.length = 0;
  const disposables = createSelectionStatusBar(selection, monitor);
  const item = recorded.statusItems[0];
  assert.ok(item.shown);
  assert.equal(item.command, "gpuPilot.selectGpus");
  assert.equal(item.text, "$(circuit-board) GPU: none");
  await selection.set(["1"]);
  assert.equal(item.text, "$(circuit-board) GPU 1");
  assert.match(String(item.tooltip), /CUDA_VISIBLE_DEVICES=1/);
  await monitor.refresh();
  await selection.set(["0", "3"]);
  assert.equal(item.text, "$(circuit-board) GPU 0,3");
  assert.match(String(item.tooltip), /Not on this machine: 3/);
  assert.equal((item.backgroundColor as ThemeColor).id, "statusBarItem.warningBackground");
  for (const d of disposables) d.dispose();
  monitor.dispose();
});
