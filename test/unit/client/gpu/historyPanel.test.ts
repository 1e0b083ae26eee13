// The GPU History panel (client/src/gpu/historyPanel.ts) over the fake nvidia-smi's stream, with a
// stand-in webview panel: the history survives the stream stopping (the GPU view hidden, the panel
// hidden or closed) and the panel posts the whole of it, old samples included, when shown again.
import {
  FakeTreeView,
  FakeWebviewPanel,
  memento,
  recorded,
  settings,
  Uri,
  window,
} from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { HISTORY_TITLE, HistoryPanel, type ToWebview, validFromWebview } from "../../../../client/src/gpu/historyPanel";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");

function setup() {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  settings.set("nvidiaSmiTimeoutMs", 5000);
  settings.set("refreshIntervalMs", 250);
  recorded.messages.length = 0;
  const monitor = new GpuMonitor({ proc: { procRoot: "/nonexistent-proc", ownUid: 1000, ownUser: "me" } });
  const view = new FakeTreeView("gpuPilot.gpus", { treeDataProvider: {} });
  monitor.followVisibility(view as never);
  const panel = new HistoryPanel(Uri.file("/ext") as never, monitor, new SelectionStore(memento()), () => undefined);
  return { monitor, view, panel };
}

const histories = (p: FakeWebviewPanel) =>
  p.posted.filter((m): m is Extract<ToWebview, { type: "history" }> => (m as ToWebview).type === "history");
const timesOf = (m: Extract<ToWebview, { type: "history" }>) => m.snapshot.gpus[0]?.at ?? [];

test("hidden views stop the stream; shown again, the panel posts the old samples too (the history is kept)", async () => {
  const { monitor, view, panel } = setup();
  view.setVisible(true);
  await until(() => monitor.history.length >= 6, "six streamed samples");
  // The side bar switches to the Explorer (the GPU view is hidden) and the panel is closed: nothing holds the stream.
  view.setVisible(false);
  await monitor.stopStreaming();
  assert.equal(monitor.isStreaming, false, "the stream stops with the views hidden");
  const kept = monitor.history.snapshot().gpus[0].at;
  assert.ok(kept.length >= 6, `${kept.length} samples kept`);
  await new Promise((r) => setTimeout(r, 600));

  // The user opens the panel (the stream starts again) and its page asks for the history.
  panel.show();
  const fake = window.webviewPanels.at(-1) as FakeWebviewPanel;
  // One spelling wherever the panel's name shows (the heading read "GPU history" under a "GPU History" tab).
  assert.equal(HISTORY_TITLE, "GPU History");
  assert.equal(fake.title, "GPU History", "the editor tab");
  assert.match(fake.webview.html, /<title>GPU History<\/title>/);
  assert.match(fake.webview.html, /<h1>GPU History<\/h1>/);
  assert.doesNotMatch(fake.webview.html, /GPU history/);
  await until(() => monitor.isStreaming && monitor.history.length >= kept.length + 2, "new samples after the restart");
  fake.receive({ type: "ready" });
  const first = histories(fake).at(-1);
  assert.ok(first, "a whole history was posted");
  assert.deepEqual(
    timesOf(first).slice(0, kept.length),
    kept,
    "the samples from before the stream stopped are posted, oldest first",
  );
  assert.ok(timesOf(first).length >= kept.length + 2, "and the new ones after them");
  assert.equal(first.snapshot.gpus.length, 2);

  // Hidden (another editor tab: the page is discarded) with the GPU view hidden, then revealed.
  fake.setVisible(false);
  const before = timesOf(first).length;
  await new Promise((r) => setTimeout(r, 600));
  fake.setVisible(true);
  fake.receive({ type: "ready" });
  const again = histories(fake).at(-1);
  assert.ok(again && again !== first, "shown again: the whole history again");
  assert.deepEqual(timesOf(again).slice(0, kept.length), kept, "still the old samples");
  assert.ok(timesOf(again).length > before, "plus those streamed while hidden (the panel holds the stream)");
  panel.dispose();
  await monitor.stopStreaming();
  monitor.dispose();
});

test("a run is posted with the GPUs it was given (lower case; an unknown MIG instance dropped), for its markers", async () => {
  const { monitor, panel: plain } = setup();
  plain.dispose(); // (setup's panel has no run)
  const run = {
    file: "/p/train.py",
    launcher: "python" as const,
    command: "python3",
    args: [],
    cwd: "/p",
    env: {},
    unset: [],
    interpreterSource: "default" as const,
    title: "train.py on GPU 1",
    startedAt: 1_000,
    gpus: ["GPU-ABC", "MIG-not-here"],
  };
  const panel = new HistoryPanel(Uri.file("/ext") as never, monitor, new SelectionStore(memento()), () => run);
  panel.show();
  const fake = window.webviewPanels.at(-1) as FakeWebviewPanel;
  fake.receive({ type: "ready" });
  const h = histories(fake).at(-1);
  assert.deepEqual(h?.runs, [{ title: "train.py on GPU 1", file: "train.py", startedAt: 1_000, gpus: ["gpu-abc"] }]);
  panel.dispose();
  await monitor.stopStreaming();
  monitor.dispose();
});

test("the webview's messages are checked: junk is dropped, counts are whole and not negative", () => {
  assert.equal(validFromWebview(null), undefined);
  assert.equal(validFromWebview({ type: "run", command: "rm" }), undefined);
  assert.deepEqual(validFromWebview({ type: "ready", extra: 1 }), { type: "ready" });
  assert.deepEqual(validFromWebview({ type: "drawn", samples: -3, gpus: "2", axes: [{ uuid: 1 }, "x"] }), {
    type: "drawn",
    samples: 0,
    gpus: 0,
    axes: [],
  });
  const all = {
    series: ["GPU 0", "GPU 1"],
    memory: [0, 280.8],
    memoryUnit: "GiB",
    runLabels: ["▶ a.py"],
    hoverLabels: [],
  };
  const axes = { uuid: "GPU-1", runLabels: ["▶ a.py", "■ a.py"], runLabelRows: [0, 1] };
  assert.deepEqual(validFromWebview({ type: "drawn", samples: 12.7, gpus: 2, axes: [axes], all }), {
    type: "drawn",
    samples: 12,
    gpus: 2,
    axes: [axes],
    all,
  });
  assert.deepEqual(validFromWebview({ type: "drawn", samples: 1, gpus: 1, all: { series: "x" } }), {
    type: "drawn",
    samples: 1,
    gpus: 1,
    axes: [],
  });
});
