// The dashboard card's sparkline paths (client/src/gpu/sparkline.ts): a GPU at 0 % the whole time
// draws a flat line on the baseline, clear of the box's bottom edge (at 3 px from it the line read as
// the box's border, and the box as an empty plot); 100 % keeps clear of the top edge.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SPARK_BOX, SPARK_INSET, sparkBaseline, sparkPath, sparkY } from "../../../../client/src/gpu/sparkline";

test("sparkY: 0 at the baseline, the scale's top below the box's top edge, values clamped", () => {
  assert.deepEqual(SPARK_BOX, { width: 200, height: 28 });
  assert.equal(sparkY(0, 100), 22, "0 %: 6 units above the bottom edge (28)");
  assert.equal(sparkY(100, 100), 4, "100 %: 4 units below the top edge");
  assert.equal(sparkY(50, 100), 13);
  assert.equal(sparkY(0.5, 1), 13, "memory on its 0..1 scale alike");
  assert.equal(sparkY(-5, 100), 22);
  assert.equal(sparkY(250, 100), 4);
  assert.ok(SPARK_INSET.bottom >= 5 && SPARK_INSET.top >= 4, "more than a stroke's width from either edge");
});

test("a flat series at 0 % is a line along the baseline across the whole box; gaps and lone samples as before", () => {
  assert.equal(sparkBaseline(), "M0 22.0 L200 22.0");
  const idle = sparkPath([0, 0, 0, 0, 0], 100);
  assert.equal(idle, "M0.0 22.0 L50.0 22.0 L100.0 22.0 L150.0 22.0 L200.0 22.0", "idle reads as data on the baseline");
  assert.equal(sparkPath([100, 100, 100], 100), "M0.0 4.0 L100.0 4.0 L200.0 4.0");
  assert.equal(sparkPath([], 100), "", "no samples: nothing but the baseline");
  assert.equal(sparkPath([null, null], 100), "");
  // A gap where a slice has no sample; a lone sample as a short dash around its slice.
  assert.equal(sparkPath([0, 50, null, 100, null], 1 * 100), "M0.0 22.0 L50.0 13.0 M125.0 4.0 L175.0 4.0");
  assert.equal(sparkPath([0.5], 1), "M100.0 13.0 L200.0 13.0", "one sample: a dash at the right end (now)");
});
