// The GPU History panel's words (client/src/gpu/historyText.ts): the summary line under the heading.
import { test } from "node:test";
import assert from "node:assert/strict";
import { historySummary, runsMarkedText } from "../../../../client/src/gpu/historyText";

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
