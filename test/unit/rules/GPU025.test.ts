import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";

manifestFixtureTests("GPU025");
manifestDocExampleTest("GPU025", "jobscript");

test("GPU025: --gpus N and --devices N are counts; literal variables are followed", () => {
  assert.deepEqual(
    lintManifestCode("#SBATCH --gres=gpu:2\npython t.py --gpus 8 --devices 4\n", "jobscript", "GPU025"),
    [],
  );
  const d = lintManifestCode("#SBATCH --gres=gpu:2\nIDS=0,1,2\npython t.py --gpu-ids $IDS\n", "jobscript", "GPU025");
  assert.equal(d.length, 1);
  assert.match(
    d[0].message,
    /^GPU id 2 is not among the job's GPUs: the job asks Slurm for 2 GPUs per node, which CUDA numbers 0\.\.1/,
  );
});
