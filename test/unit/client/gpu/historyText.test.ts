// The GPU History panel's words (client/src/gpu/historyText.ts): the summary line under the heading
// and the charts' legends.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  gpuLegendLabel,
  historySummary,
  LEGEND_LABELS,
  legendValue,
  memoryChartTitle,
  runsMarkedText,
} from "../../../../client/src/gpu/historyText";

test("the summary counts runs in words: 1 run marked, 2 runs marked (it said 1 run(s) marked)", () => {
  assert.equal(runsMarkedText(1), "1 run marked (▶ start, ■ end) on the GPUs it used");
  assert.equal(runsMarkedText(2), "2 runs marked (▶ start, ■ end) on the GPUs they used");
  assert.equal(runsMarkedText(0), "0 runs marked (▶ start, ■ end) on the GPUs they used");
  assert.equal(
    historySummary({ gpus: 2, minutes: 4, samples: 220, capacity: 240, runs: 1 }),
    "Last 4 min · 220 of 240 samples per GPU · 1 run marked (▶ start, ■ end) on the GPUs it used · hover a chart for its values",
  );
  assert.doesNotMatch(historySummary({ gpus: 8, minutes: 4, samples: 1, capacity: 240, runs: 3 }), /\(s\)/);
  assert.match(historySummary({ gpus: 0, minutes: 4, samples: 0, capacity: 240, runs: 0 }), /^No samples yet/);
});

test("the legends give bare numbers under unit-free labels: the unit is said once, in the title and on the axis", () => {
  // All 8 GPUs' utilisation legend: `GPU 0: 100`, ... (it was `GPU 0: 100%`, `GPU 1: 0%`, ... eight times).
  const values = [100, 0, 3, 0, 47, 100, 22, 0];
  assert.deepEqual(
    values.map((v, i) => `${gpuLegendLabel(i)}: ${legendValue(v, "%")}`),
    ["GPU 0: 100", "GPU 1: 0", "GPU 2: 3", "GPU 3: 0", "GPU 4: 47", "GPU 5: 100", "GPU 6: 22", "GPU 7: 0"],
  );
  // A GPU's own charts: `Utilisation: 100` and `Memory used: 3.3` (it was `Memory used (GiB, of 140.4 GiB): 3.3 GiB`).
  assert.equal(`${LEGEND_LABELS.utilization}: ${legendValue(99.6, "%")}`, "Utilisation: 100");
  assert.equal(`${LEGEND_LABELS.memory}: ${legendValue(3389 / 1024, "GiB")}`, "Memory used: 3.3");
  assert.equal(`${LEGEND_LABELS.allMemory}: ${legendValue(348.44, "GiB")}`, "All GPUs: 348.4");
  assert.equal(legendValue(812.4, "MiB"), "812");
  assert.equal(legendValue(0, "GiB"), "0.0");
  for (const v of [null, undefined, NaN]) assert.equal(legendValue(v, "%"), "n/a");
  for (const label of [...Object.values(LEGEND_LABELS), gpuLegendLabel(15)])
    assert.doesNotMatch(label, /%|GiB|MiB|\(/, `no unit in the label ${label}`);
});

test("the memory charts' titles give the unit once; the total is the label of the line at the top of the axis", () => {
  assert.equal(memoryChartTitle("GiB"), "Memory used (GiB)");
  assert.equal(memoryChartTitle("MiB"), "Memory used (MiB)");
  assert.equal(memoryChartTitle("GiB", true), "Memory used by all GPUs (GiB)");
});
