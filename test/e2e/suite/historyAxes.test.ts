// End-to-end test of the GPU History panel's axes (issue 19): the memory chart runs from 0 to the
// GPU's memory.total (143771 MiB = 140.4 GiB on the recorded H200s), never scaled to the data; every
// memory tick is in one unit (GiB); utilisation runs 0..100 %; each chart fills the panel's width.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { getApi, waitFor } from "./util";
import type { HistoryPanelState } from "../../../client/src/gpu/historyPanel";

suite("GPU history axes", () => {
  suiteTeardown(async () => {
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  test("p. memory axis 0..the GPU's total in GiB only, utilisation 0..100 %, charts at full width", async () => {
    const api = (await getApi()) as unknown as { getHistoryPanelState(): HistoryPanelState };
    await vscode.commands.executeCommand("gpuPilot.showHistory");
    const state = await waitFor(() => {
      const s = api.getHistoryPanelState();
      return s.axes?.length === 2 && s.samplesDrawn >= 2 && s.axes.every((a) => a.memoryTicks.length > 0) ? s : undefined;
    }, "the webview to report the axes of both GPUs", 60_000);
    for (const a of state.axes) {
      assert.deepEqual(a.utilization, [0, 100], `utilisation axis of ${a.uuid}`);
      assert.equal(a.memoryUnit, "GiB");
      assert.equal(a.memory[0], 0);
      assert.equal(a.memory[1], 143771 / 1024, `memory axis to the total (the data is a few GiB at most): ${JSON.stringify(a)}`);
      assert.ok(a.memoryTicks.every((t) => / GiB$/.test(t)), `one unit on the memory axis: ${a.memoryTicks.join(", ")}`);
      assert.ok(a.width >= a.availableWidth - 40 && a.width > 300, `full width: ${a.width} of ${a.availableWidth} px`);
    }
  });
});
