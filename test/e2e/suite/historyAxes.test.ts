// End-to-end test of the GPU History panel's axes (issue 19): the memory chart runs from 0 to the
// GPU's memory.total (143771 MiB = 140.4 GiB on the recorded H200s), never scaled to the data; every
// memory tick is in one unit (GiB); utilisation runs 0..100 %; each chart fills the panel's width;
// time runs over the whole 10 min window ending now, labelled -10 min ... now.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { getApi, waitFor } from "./util";
import type { HistoryPanelState } from "../../../client/src/gpu/historyPanel";

suite("GPU History axes", () => {
  suiteTeardown(async () => {
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  test("p. memory axis 0..the GPU's total in GiB only, utilisation 0..100 %, time over the 10 min window, charts at full width", async () => {
    const api = (await getApi()) as unknown as { getHistoryPanelState(): HistoryPanelState };
    await vscode.commands.executeCommand("gpuPilot.showHistory");
    const state = await waitFor(
      () => {
        const s = api.getHistoryPanelState();
        return s.axes?.length === 2 && s.samplesDrawn >= 2 && s.axes.every((a) => a.memoryTicks.length > 0)
          ? s
          : undefined;
      },
      "the webview to report the axes of both GPUs",
      60_000,
    );
    for (const a of state.axes) {
      assert.deepEqual(a.utilization, [0, 100], `utilisation axis of ${a.uuid}`);
      assert.equal(a.memoryUnit, "GiB");
      assert.equal(a.memory[0], 0);
      assert.equal(
        a.memory[1],
        143771 / 1024,
        `memory axis to the total (the data is a few GiB at most): ${JSON.stringify(a)}`,
      );
      assert.ok(
        a.memoryTicks.every((t) => / GiB$/.test(t)),
        `one unit on the memory axis: ${a.memoryTicks.join(", ")}`,
      );
      assert.equal(a.memoryTotal, "140.4 GiB total", "a line at the total, labelled");
      assert.ok(a.width >= a.availableWidth - 40 && a.width > 300, `full width: ${a.width} of ${a.availableWidth} px`);
      // The time axis spans the whole gpuPilot.history.minutes window (default 10) ending at the
      // newest sample, not the few seconds of samples there are; ticks in whole minutes back from now.
      assert.equal(a.time[1] - a.time[0], 600, `time axis of 10 min: ${JSON.stringify(a.time)}`);
      assert.ok(Math.abs(a.time[1] * 1000 - Date.now()) < 30_000, `time axis ends now: ${a.time[1]}`);
      assert.deepEqual(a.timeTicks, ["-10 min", "-8 min", "-6 min", "-4 min", "-2 min", "now"]);
      // With the cursor off the charts the legends give the newest sample (they said "n/a").
      assert.equal(a.legend.utilization.length, 2, JSON.stringify(a.legend));
      assert.match(a.legend.utilization[0], /^latest \d{1,2}:\d{2}:\d{2}/, JSON.stringify(a.legend));
      // Bare numbers: the unit is in the chart's title and on its axis, not on every legend entry.
      assert.match(a.legend.utilization[1], /^\d{1,3}$/, JSON.stringify(a.legend));
      assert.match(a.legend.memory[1], /^\d+\.\d$/, JSON.stringify(a.legend));
      // The areas are the lines' colours at 13 % (the selected GPU's was no colour: `${theme value with alpha}22`).
      for (const f of [a.fill.utilization, a.fill.memory])
        assert.match(f, /^rgba\(\d+, \d+, \d+, 0\.13\)$/, JSON.stringify(a.fill));
    }
  });
});
