// End-to-end test of the GPU History panel (issue 12) in a real VS Code with the fake nvidia-smi:
// `gpuPilot.showHistory` opens a webview panel that holds the nvidia-smi stream, is sent the history
// (a ring per GPU fed by the streamed ticks, loop.txt's numbers) and reports back what it drew; hidden
// and shown again (not retained), it is sent the whole history again; closed, it lets the stream go.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { getApi, openWorkspaceFile, waitFor } from "./util";
import type { HistoryPanelState } from "../../../client/src/gpu/historyPanel";


interface HistoryApi {
  getHistoryPanelState(): HistoryPanelState;
  getMonitorStatus(): { streaming: boolean; streamPid: number | undefined; notices: string[] };
}

async function historyApi(): Promise<HistoryApi> {
  const api = (await getApi()) as unknown as HistoryApi;
  assert.equal(typeof api.getHistoryPanelState, "function", "the API has no getHistoryPanelState");
  return api;
}

suite("GPU history panel", () => {
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
    await waitFor(() => api.getMonitorStatus().streaming, "the nvidia-smi stream to run while the panel is open", 20_000);
    const drawn = await waitFor(() => {
      const s = api.getHistoryPanelState();
      // (the history may be full already: the dashboard streams while visible; wait for appends too)
      return s.samplesSent >= 6 && s.samplesDrawn >= 4 && s.gpusDrawn === 2 && s.messagesSent > s.historiesSent ? s : undefined;
    }, "the webview to report drawing samples of both GPUs, then appends", 60_000);
    assert.ok(drawn.visible, JSON.stringify(drawn));
    assert.ok(drawn.historiesSent >= 1 && drawn.messagesSent > drawn.historiesSent, `whole history then appends: ${JSON.stringify(drawn)}`);
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
    const after = await waitFor(() => {
      const s = api.getHistoryPanelState();
      return s.visible && s.historiesSent > before.historiesSent && s.drawReports > before.drawReports + 1 && s.samplesDrawn >= before.samplesDrawn ? s : undefined;
    }, "the whole history to be sent again and drawn", 60_000);
    assert.equal(after.gpusDrawn, 2, JSON.stringify(after));
  });

  test("l. closing the editors closes the panel", async () => {
    const api = await historyApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    await waitFor(() => !api.getHistoryPanelState().open, "the panel to close", 20_000);
  });
});
