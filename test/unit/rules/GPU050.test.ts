import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixtureTests } from "./fixtureCheck";
import { initEngine } from "../../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook, type CellInput } from "../../../server/src/engine/notebook";

fixtureTests("GPU050", {});

const FIXTURES = join(__dirname, "..", "..", "fixtures", "rules", "GPU050");

test("GPU050: a configuration cell saved with a higher execution count than the cell that started TensorFlow: a warning naming both cells and counts, GPU012's reason, the cell's own place", async () => {
  await initEngine();
  const cells = cellsOfIpynb(readFileSync(join(FIXTURES, "tf_config_cell_rerun.ipynb"), "utf8"));
  assert.deepEqual(
    cells.map((c) => c.executionCount),
    [undefined, 1, 4, 3],
  );
  const { diagnostics } = lintNotebook(cells, {});
  const found = diagnostics.filter((d) => d.code === "GPU050");
  assert.equal(found.length, 1);
  const [d] = found;
  assert.equal(d.severity, "warning");
  assert.equal(d.cell, 2);
  assert.deepEqual(d.range.start, { line: 1, character: 0 });
  assert.match(
    d.message,
    /^In the order the cells last ran \(cell 3 last ran as In \[4\], after cell 4 \(In \[3\]\); saved execution counts\): tf\.config\.set_logical_device_configuration\(\.\.\.\) runs after TensorFlow initialised its devices at `tf\.device\(logical\[0\]\.name\)` \(cell 4, line 1\): .*; restart the kernel and run the cells in order$/,
  );
  assert.deepEqual(
    d.related?.map((r) => [r.cell, r.range.start.line]),
    [[3, 0]],
  );
  // In the cells' own order the notebook is right: no GPU012 there.
  assert.deepEqual(
    diagnostics.filter((x) => x.code === "GPU012"),
    [],
  );
});

test("GPU050: silent when the counts follow the cells, are missing, repeat (several sessions), or the rule is off", async () => {
  await initEngine();
  for (const name of ["in_order.ipynb", "cleared_outputs.ipynb", "repeated_counts.ipynb"]) {
    const cells = cellsOfIpynb(readFileSync(join(FIXTURES, name), "utf8"));
    assert.deepEqual(
      lintNotebook(cells, {}).diagnostics.filter((d) => d.code === "GPU050"),
      [],
      name,
    );
  }
  const rerun = cellsOfIpynb(readFileSync(join(FIXTURES, "visible_devices_cell_rerun.ipynb"), "utf8"));
  assert.equal(lintNotebook(rerun, {}).diagnostics.filter((d) => d.code === "GPU050").length, 1);
  assert.deepEqual(
    lintNotebook(rerun, { ignore: ["GPU050"] }).diagnostics.filter((d) => d.code === "GPU050"),
    [],
  );
  // A cell that never ran is not part of the replay, and a count of 0 or a non-integer is no count.
  const cells: CellInput[] = [
    { kind: "code", text: "import os\nimport torch\n", executionCount: 2 },
    { kind: "code", text: 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n', executionCount: 1 },
    { kind: "code", text: 'x = torch.ones(1, device="cuda")\n' },
  ];
  assert.deepEqual(
    lintNotebook(cells, {}).diagnostics.filter((d) => d.code === "GPU050"),
    [],
  );
});
