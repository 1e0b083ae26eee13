// The History panel's run markers and "All GPUs" chart (client/src/gpu/historyMarks.ts, issue 45
// item 5): markers only on the GPUs a run was given, labels that never overlap, every GPU on one chart.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  combineGpus,
  hoveredMark,
  layoutMarkLabels,
  marksForGpu,
  type MarkLabelOptions,
} from "../../client/src/gpu/historyMarks";
import type { GpuSeries } from "../../client/src/gpu/history";

const G0 = "GPU-aaaa0000";
const G1 = "GPU-bbbb1111";

test("a run's markers go only on the charts of the GPUs it was given; a run with unknown GPUs on none", () => {
  const runs = [
    { file: "a.py", gpus: ["gpu-aaaa0000"] },
    { file: "b.py", gpus: ["gpu-bbbb1111"] },
    { file: "both.py", gpus: ["gpu-aaaa0000", "gpu-bbbb1111"] },
    { file: "slurm.py", gpus: [] },
  ];
  assert.deepEqual(
    marksForGpu(runs, G0).map((r) => r.file),
    ["a.py", "both.py"],
  );
  assert.deepEqual(
    marksForGpu(runs, G1).map((r) => r.file),
    ["b.py", "both.py"],
  );
  assert.deepEqual(marksForGpu(runs, "GPU-cccc2222"), []);
});

const OPTS: MarkLabelOptions = { plotLeft: 0, plotRight: 1000, pad: 4, gap: 6, maxRows: 3 };

/** True when the drawn labels' boxes (left..left+width, one row each) overlap anywhere. */
function overlaps(labels: { x: number; width: number }[], slots: ReturnType<typeof layoutMarkLabels>): boolean {
  const drawn = slots.map((s, i) => ({ ...s, right: s.left + labels[i].width })).filter((s) => s.visible);
  return drawn.some((a, i) => drawn.some((b, j) => i !== j && a.row === b.row && a.left < b.right && b.left < a.right));
}

test("a short run's start and end labels go on two rows (they were drawn over each other)", () => {
  // ▶ train.py at x 100 and ■ train.py at x 102 (a 2 s run), 80 px labels.
  const labels = [
    { x: 100, width: 80 },
    { x: 102, width: 80 },
  ];
  const slots = layoutMarkLabels(labels, OPTS);
  assert.deepEqual(slots, [
    { visible: true, row: 0, left: 104 },
    { visible: true, row: 1, left: 106 },
  ]);
  assert.equal(overlaps(labels, slots), false);
});

test("labels far enough apart share row 0; the gap is honoured", () => {
  // 104..184, then the second starts at 190 = 184 + 6: same row; at 189 it would not be.
  assert.deepEqual(
    layoutMarkLabels(
      [
        { x: 100, width: 80 },
        { x: 186, width: 50 },
      ],
      OPTS,
    ).map((s) => s.row),
    [0, 0],
  );
  assert.deepEqual(
    layoutMarkLabels(
      [
        { x: 100, width: 80 },
        { x: 185, width: 50 },
      ],
      OPTS,
    ).map((s) => s.row),
    [0, 1],
  );
});

test("a label that would leave the plot goes left of its line, clamped to the plot's left edge", () => {
  const slots = layoutMarkLabels(
    [
      { x: 980, width: 80 },
      { x: 30, width: 80 },
    ],
    { ...OPTS, plotLeft: 50 },
  );
  assert.equal(slots[0].left, 980 - 4 - 80);
  assert.equal(slots[1].left, 50, "x 30 + 4 is left of the plot: clamped to 50");
});

test("more close labels than rows: the extra ones are hover-only, and no drawn labels overlap", () => {
  const labels = [0, 1, 2, 3, 4].map((i) => ({ x: 200 + i, width: 90 }));
  const slots = layoutMarkLabels(labels, OPTS);
  assert.deepEqual(
    slots.map((s) => s.visible),
    [true, true, true, false, false],
  );
  assert.deepEqual(
    slots.filter((s) => s.visible).map((s) => s.row),
    [0, 1, 2],
  );
  assert.equal(overlaps(labels, slots), false);
  // A later label with room again goes back to row 0.
  const more = [...labels, { x: 400, width: 90 }];
  const s2 = layoutMarkLabels(more, OPTS);
  assert.deepEqual(s2[5], { visible: true, row: 0, left: 404 });
});

test("many random markers never give overlapping drawn labels", () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let n = 0; n < 200; n++) {
    const labels = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => ({
      x: rand() * 1000,
      width: 20 + rand() * 120,
    }));
    assert.equal(overlaps(labels, layoutMarkLabels(labels, OPTS)), false, JSON.stringify(labels));
  }
});

test("the hover shows the hidden label nearest the cursor within reach", () => {
  const xs = [100, 103, 106, 300];
  const visible = [true, false, false, true];
  assert.equal(hoveredMark(xs, visible, 104, 8), 1);
  assert.equal(hoveredMark(xs, visible, 106, 8), 2);
  assert.equal(hoveredMark(xs, visible, 100, 2), -1, "the one at 100 is drawn; 103 is 3 px away");
  assert.equal(hoveredMark(xs, visible, 300, 8), -1, "drawn labels need no hover");
});

function gpu(
  uuid: string,
  at: number[],
  util: (number | null)[],
  mem: (number | null)[],
  total: number | null,
): GpuSeries {
  return { uuid, index: 0, name: "H200", memoryTotalMiB: total, at, utilizationPercent: util, memoryUsedMiB: mem };
}

test("All GPUs: each GPU's utilisation on one time axis and the memory of all added up", () => {
  const c = combineGpus([
    gpu(G0, [1000, 2000, 3000], [10, 20, 30], [100, 200, 300], 143771),
    gpu(G1, [2000, 3000, 4000], [50, null, 70], [1000, 1000, 1024], 143771),
  ]);
  assert.deepEqual(c.at, [1000, 2000, 3000, 4000]);
  assert.deepEqual(c.utilizationPercent, [
    [10, 20, 30, null],
    [null, 50, null, 70],
  ]);
  // At 1000 and 4000 one GPU has no sample: no sum (a partial sum would read as a drop).
  assert.deepEqual(c.memoryUsedMiB, [null, 1200, 1300, null]);
  assert.equal(c.memoryTotalMiB, 287542);
});

test("All GPUs: a GPU without memory.total gives no total; no GPUs give nothing", () => {
  assert.equal(combineGpus([gpu(G0, [1], [1], [1], 80), gpu(G1, [1], [1], [2], null)]).memoryTotalMiB, null);
  assert.deepEqual(combineGpus([gpu(G0, [1], [1], [null], 80), gpu(G1, [1], [1], [2], 80)]).memoryUsedMiB, [null]);
  assert.deepEqual(combineGpus([]), { at: [], utilizationPercent: [], memoryUsedMiB: [], memoryTotalMiB: null });
});
