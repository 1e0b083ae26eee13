import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";

manifestFixtureTests("GPU024");
manifestDocExampleTest("GPU024", "jobscript");

test("GPU024: the fix uses SLURM_GPUS_ON_NODE", () => {
  const text = "#SBATCH --gpus-per-node=h100:8\ntorchrun --nproc_per_node=$SLURM_GPUS_PER_NODE t.py\n";
  const [d] = lintManifestCode(text, "jobscript", "GPU024");
  const fixed = applyManifestFix(text, "jobscript", d);
  assert.equal(applyEdits(text, d.fix!.edits), fixed);
  assert.equal(fixed, "#SBATCH --gpus-per-node=h100:8\ntorchrun --nproc_per_node=$SLURM_GPUS_ON_NODE t.py\n");
  assert.match(d.message, /here it is "h100:8"/);
});
