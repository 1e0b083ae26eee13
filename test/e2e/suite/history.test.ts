// End-to-end test of the GPU History panel (issue 12) in a real VS Code with the fake nvidia-smi:
// `gpuPilot.showHistory` opens a webview panel that holds the nvidia-smi stream, is sent the history
// (a ring per GPU fed by the streamed ticks, loop.txt's numbers) and reports back what it drew; hidden
// and shown again (not retained), it is sent the whole history again; closed, it lets the stream go.
// A run on GPU 1 is marked on GPU 1's chart and on "All GPUs" only, its start and end labels apart
// (issue 45 item 5), each 6 px beside its marker; each GPU has one colour on every chart.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, openWorkspaceFile, outDir, waitFor } from "./util";
import type { HistoryPanelState } from "../../../client/src/gpu/historyPanel";

interface HistoryApi {
  getHistoryPanelState(): HistoryPanelState;
  setSelection(ids: string[]): Promise<void>;
  getInventory(): { gpus: { index: number; uuid: string }[] } | undefined;
  readonly lastRun?: { file: string; exitCode?: number | null; gpus?: string[] };
  getMonitorStatus(): { streaming: boolean; streamPid: number | undefined; notices: string[] };
}

async function historyApi(): Promise<HistoryApi> {
  const api = (await getApi()) as unknown as HistoryApi;
  assert.equal(typeof api.getHistoryPanelState, "function", "the API has no getHistoryPanelState");
  return api;
}

suite("GPU History panel", () => {
  suiteTeardown(async () => {
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  test("j. Show GPU History opens the panel; the streamed samples reach its webview, which draws both GPUs", async () => {
    const api = await historyApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    assert.equal(api.getHistoryPanelState().open, false);
    await vscode.commands.executeCommand("gpuPilot.showHistory");
    const opened = api.getHistoryPanelState();
    assert.ok(opened.open, "the panel is open");
    // The panel holds the stream (even with the GPU view hidden) and the ticks reach the webview.
    await waitFor(
      () => api.getMonitorStatus().streaming,
      "the nvidia-smi stream to run while the panel is open",
      20_000,
    );
    const drawn = await waitFor(
      () => {
        const s = api.getHistoryPanelState();
        // (the history may be full already: the dashboard streams while visible; wait for appends too)
        return s.samplesSent >= 6 && s.samplesDrawn >= 4 && s.gpusDrawn === 2 && s.messagesSent > s.historiesSent
          ? s
          : undefined;
      },
      "the webview to report drawing samples of both GPUs, then appends",
      60_000,
    );
    assert.ok(drawn.visible, JSON.stringify(drawn));
    assert.ok(
      drawn.historiesSent >= 1 && drawn.messagesSent > drawn.historiesSent,
      `whole history then appends: ${JSON.stringify(drawn)}`,
    );
  });

  test("k. hidden and shown again (not retained), the webview is sent the whole history again and draws it", async () => {
    const api = await historyApi();
    if (!api.getHistoryPanelState().open) await vscode.commands.executeCommand("gpuPilot.showHistory");
    // Another editor in the same group hides the panel; its webview is discarded. (A saved file, not
    // an untitled one: closing a dirty editor would ask to save.)
    await openWorkspaceFile("clean.py");
    await waitFor(() => !api.getHistoryPanelState().visible, "the panel to be hidden", 20_000);
    const before = api.getHistoryPanelState();
    assert.ok(before.open, "hidden, not closed");
    await vscode.commands.executeCommand("gpuPilot.showHistory");
    const after = await waitFor(
      () => {
        const s = api.getHistoryPanelState();
        return s.visible &&
          s.historiesSent > before.historiesSent &&
          s.drawReports > before.drawReports + 1 &&
          s.samplesDrawn >= before.samplesDrawn
          ? s
          : undefined;
      },
      "the whole history to be sent again and drawn",
      60_000,
    );
    assert.equal(after.gpusDrawn, 2, JSON.stringify(after));
  });

  test("l. closing the editors closes the panel", async () => {
    const api = await historyApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    await waitFor(() => !api.getHistoryPanelState().open, "the panel to close", 20_000);
  });

  test("m. a run on GPU 1 is marked on GPU 1's chart and All GPUs only; its start and end labels do not overlap", async () => {
    const api = await historyApi();
    const inv = await waitFor(
      () => (api.getInventory()?.gpus.length === 2 ? api.getInventory() : undefined),
      "the inventory",
      20_000,
    );
    const [gpu0, gpu1] = [0, 1].map((i) => inv.gpus.find((g) => g.index === i)!.uuid);
    // A script of its own (the Run tests run launch_target.py on GPUs 0 and 1): it ends at once.
    const file = path.join(outDir(), `history_mark_${process.pid}.py`);
    fs.writeFileSync(file, "print('history mark')\n");
    const config = vscode.workspace.getConfiguration("gpuPilot");
    await config.update("run.launcher", "python", vscode.ConfigurationTarget.Workspace);
    try {
      await api.setSelection(["1"]);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.file(file)), {
        preview: false,
      });
      await vscode.commands.executeCommand("gpuPilot.runActiveFile");
      const run = await waitFor(
        () => (api.lastRun?.file === file && api.lastRun.exitCode !== undefined ? api.lastRun : undefined),
        `the run to end (${JSON.stringify(api.lastRun)})`,
        60_000,
      );
      assert.equal(run.exitCode, 0, JSON.stringify(run));
      assert.deepEqual(run.gpus, [gpu1.toLowerCase()], "the run records the GPU it was given");
      await vscode.commands.executeCommand("gpuPilot.showHistory");
      const name = path.basename(file);
      const labels = [`▶ ${name}`, `■ ${name}`];
      const mine = (l: string[]) => l.filter((x) => x.endsWith(name));
      const state = await waitFor(
        () => {
          const s = api.getHistoryPanelState();
          const a1 = s.axes.find((a) => a.uuid === gpu1);
          return a1 && mine(a1.runLabels).length === 2 && s.all ? s : undefined;
        },
        "GPU 1's chart to draw the run's start and end labels",
        60_000,
      );
      const a0 = state.axes.find((a) => a.uuid === gpu0)!;
      const a1 = state.axes.find((a) => a.uuid === gpu1)!;
      assert.deepEqual(
        mine([...a0.runLabels, ...a0.hoverLabels]),
        [],
        `no marker of the run on GPU 0's chart: ${JSON.stringify(a0)}`,
      );
      assert.deepEqual(mine(a1.runLabels), labels);
      // The run lasted well under the 10 min window's few px per label: its start and end labels
      // are not drawn over each other (the start's left of its line, the end's right of it on one
      // row; near the plot's right edge both go left, stacked on two rows).
      const boxes = a1.runLabels
        .map((l, i) => ({ l, row: a1.runLabelRows[i], at: a1.runLabelAt[i] }))
        .filter((b) => b.l.endsWith(name));
      assert.equal(boxes.length, 2);
      const [b0, b1] = boxes;
      assert.ok(
        b0.row !== b1.row || b0.at.boxRight <= b1.at.boxLeft || b1.at.boxRight <= b0.at.boxLeft,
        `start and end labels apart: ${JSON.stringify(a1)}`,
      );
      assert.deepEqual(
        mine([...state.all!.runLabels, ...state.all!.hoverLabels]).sort(),
        [...labels].sort(),
        `All GPUs marks every run: ${JSON.stringify(state.all)}`,
      );
      // Each label is drawn beside its own marker (it was a label's width left of it: 1.3 min on the
      // 10 min axis): its box starts 6 px right of the line or ends 6 px left of it (historyMarks.ts
      // LABEL_PAD_PX), its text 2 px inside.
      for (const [chart, a] of [
        ["GPU 1", a1],
        ["All GPUs", state.all!],
      ] as const) {
        a.runLabels.forEach((l, i) => {
          const at = a.runLabelAt[i];
          const right = Math.abs(at.boxLeft - (at.marker + 6)) <= 1;
          const left = Math.abs(at.boxRight - (at.marker - 6)) <= 1;
          assert.ok(right || left, `${chart}: ${l} beside its marker: ${JSON.stringify(at)}`);
          assert.ok(
            Math.abs(at.textLeft - (at.boxLeft + 2)) <= 1,
            `${chart}: ${l}'s text in its box: ${JSON.stringify(at)}`,
          );
        });
      }
      // One colour per GPU on every chart: GPU i's line on All GPUs is its own charts' colour.
      assert.deepEqual(
        state.all!.colors,
        [a0, a1].map((a) => a.color.utilization),
        JSON.stringify({ all: state.all!.colors, own: [a0.color, a1.color] }),
      );
      assert.equal(new Set(state.all!.colors).size, 2, "two GPUs, two colours");
      assert.deepEqual(state.all!.series, ["GPU 0", "GPU 1"]);
      assert.equal(state.all!.memoryUnit, "GiB");
      assert.deepEqual(state.all!.memory, [0, (2 * 143771) / 1024], "memory of all: 0..both totals");
      // A line at each memory chart's total, labelled with it.
      assert.equal(state.all!.memoryTotal, "280.8 GiB total");
      assert.deepEqual(
        [a0, a1].map((a) => a.memoryTotal),
        ["140.4 GiB total", "140.4 GiB total"],
      );
    } finally {
      await config.update("run.launcher", undefined, vscode.ConfigurationTarget.Workspace);
      await api.setSelection([]);
      fs.rmSync(file, { force: true });
    }
  });
});
