// What scripts/screenshot.mjs logs about each shot (scripts/screenshotLog.mjs). A fresh user's 8-GPU
// run logged "tree rows" with four GPUs, read before any shot while the dashboard's pane shared the
// side bar (the tree renders only the rows in view), and "side bar: 220 px wide" beside the side bar
// shots, though that width is the editor shots', which leave the side bar out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fakeGpuCount, gpuList, sidebarLine, treeShotLine } from "../../../scripts/screenshotLog.mjs";

test("the stand-in nvidia-smi's GPUs by mode: x16, x8, else the recorded 2 (train is added to any)", () => {
  assert.deepEqual(
    ["x16,train", "x8", "x8,train", "spin,train", "busy", "idle"].map(fakeGpuCount),
    [16, 8, 8, 2, 2, 2],
  );
});

test("GPU lists join runs of consecutive indices", () => {
  assert.equal(gpuList([3, 0, 1, 2]), "GPU 0-3");
  assert.equal(gpuList([4, 5]), "GPU 4, 5");
  assert.equal(gpuList([0, 2, 3, 4, 7]), "GPU 0, 2-4, 7");
  assert.equal(gpuList([6]), "GPU 6");
});

test("the side bar line names the shots its width is for, and says when they leave the side bar out", () => {
  assert.equal(
    sidebarLine(300, ["tree", "dashboard", "processes", "Slurm"], true),
    "side bar: 300 px wide (the tree, dashboard, processes, Slurm shots: they show it)",
  );
  assert.equal(
    sidebarLine(220, ["problem", "history"], false),
    "side bar: 220 px wide (narrowed for the problem, history shots: they leave it out)",
  );
  assert.equal(
    sidebarLine(220, ["notebook"], false),
    "side bar: 220 px wide (narrowed for the notebook shot: it leaves it out)",
  );
});

test("the tree shot line names the shot, its GPUs in view and those below the fold", () => {
  const four = ["GPU 0", "python3", "GPU 1", "GPU 2", "train.py", "GPU 3"];
  assert.equal(
    treeShotLine("screenshot-tree-8.png", four, 8),
    `tree shot screenshot-tree-8.png: 6 rows in view, GPU 0-3 of 8; GPU 4-7 below the pane's fold, not in the shot: ${JSON.stringify(four)}`,
  );
  const all = ["GPU 0", "GPU 1"];
  assert.equal(
    treeShotLine("screenshot-tree.png", all, 2),
    `tree shot screenshot-tree.png: 2 rows in view, GPU 0, 1 of 2 (every GPU): ${JSON.stringify(all)}`,
  );
  // A real nvidia-smi: the count is not known, the line names what is in view.
  assert.equal(
    treeShotLine("screenshot-tree.png", all, null),
    `tree shot screenshot-tree.png: 2 rows in view, GPU 0, 1: ${JSON.stringify(all)}`,
  );
  assert.equal(
    treeShotLine("screenshot-tree.png", ["Reading nvidia-smi..."], 2),
    `tree shot screenshot-tree.png: 1 row in view, no GPU row of 2: ["Reading nvidia-smi..."]`,
  );
});
