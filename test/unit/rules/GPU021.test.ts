import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";

manifestFixtureTests("GPU021");
manifestDocExampleTest("GPU021", "jobscript");

test("GPU021: job-script kinds: .sbatch/.slurm always, .sh/.bash and shellscript by content", async () => {
  const { manifestKindOf } = await import("../../../server/src/engine/manifests/files");
  for (const n of ["train.sbatch", "job.SLURM", "run.sh", "x/run.bash"])
    assert.equal(manifestKindOf(n), "jobscript", n);
  assert.equal(manifestKindOf("/x/job.sbatch", "plaintext"), "jobscript");
  assert.equal(manifestKindOf("/x/run", "shellscript"), "jobscript");
  assert.equal(manifestKindOf("/x/run.sh", "python"), null);
  // A shell script without #SBATCH lines is no job script: nothing is reported.
  assert.deepEqual(
    lintManifestCode("#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\n# --gres=gpu:1 #SBATCH\n", "jobscript", "GPU021"),
    [],
  );
});

test("GPU021: the message names the value and points at the GPU request", () => {
  const d = lintManifestCode("#!/bin/bash\n#SBATCH --gpus=2\nexport CUDA_VISIBLE_DEVICES=4,5\n", "jobscript", "GPU021");
  assert.equal(d.length, 1);
  assert.match(d[0].message, /^exports CUDA_VISIBLE_DEVICES=4,5 in a job script that asks Slurm for GPUs/);
  assert.deepEqual(d[0].range, { start: { line: 2, character: 7 }, end: { line: 2, character: 31 } });
  assert.equal(d[0].related?.[0].range.start.line, 1);
  assert.equal(d[0].severity, "warning");
});

test("GPU021: # noqa on the line suppresses it; --gres=gpu:0 asks for no GPU", () => {
  assert.deepEqual(
    lintManifestCode("#SBATCH --gres=gpu:1\nexport CUDA_VISIBLE_DEVICES=0  # noqa: GPU021\n", "jobscript", "GPU021"),
    [],
  );
  assert.deepEqual(
    lintManifestCode("#SBATCH --gres=gpu:0\nexport CUDA_VISIBLE_DEVICES=0\n", "jobscript", "GPU021"),
    [],
  );
});

test("GPU021: a prefix on srun is information (Slurm sets the step's value itself, measured)", () => {
  const d = lintManifestCode("#SBATCH --gres=gpu:2\nCUDA_VISIBLE_DEVICES=1 srun python t.py\n", "jobscript", "GPU021");
  assert.equal(d.length, 1);
  assert.equal(d[0].severity, "information");
  assert.match(d[0].message, /^CUDA_VISIBLE_DEVICES=1 before srun has no effect/);
});

test("GPU021: the noqa edit goes at the end of a shell line, never after a continuation backslash", async () => {
  const { manifestNoqaEdit } = await import("../../../server/src/engine/manifests/noqa");
  const { applyEdits } = await import("../../../server/src/engine/fixes");
  const text = "#SBATCH --gres=gpu:1\nexport CUDA_VISIBLE_DEVICES=0\nCUDA_VISIBLE_DEVICES=1 python a.py \\\n  --x 1\n";
  const fixed = applyEdits(text, [manifestNoqaEdit(text, "jobscript", 1, "GPU021")!]);
  assert.equal(
    fixed,
    "#SBATCH --gres=gpu:1\nexport CUDA_VISIBLE_DEVICES=0  # noqa: GPU021\nCUDA_VISIBLE_DEVICES=1 python a.py \\\n  --x 1\n",
  );
  assert.deepEqual(
    lintManifestCode(fixed, "jobscript", "GPU021").map((d) => d.range.start.line),
    [2],
  );
  assert.equal(manifestNoqaEdit(text, "jobscript", 2, "GPU021"), null);
});

// Ecosystem (karpathy/llm.c scripts/multi_node/*.sbatch): `export CUDA_VISIBLE_DEVICES=0,...,7`,
// then only shell utilities (make, scp, echo) in the batch step and the training binary under srun.
// Slurm sets the step's value itself (measured), so the export does nothing: information, as the
// srun prefix, not a warning that the batch script's commands pick other GPUs.
test("GPU021: an export followed only by srun steps and shell utilities has no effect: information", () => {
  const script =
    "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\nmake train USE_CUDNN=1\nexport CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\nfor h in $(scontrol show hostnames); do scp bin $h:bin; done\necho start\nsrun -l bash -c './bin -pr $SLURM_PROCID'\necho done\n";
  const d = lintManifestCode(script, "jobscript", "GPU021");
  assert.equal(d.length, 1);
  assert.equal(d[0].severity, "information");
  assert.equal(d[0].range.start.line, 4);
  assert.match(
    d[0].message,
    /^exports CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 but no command of the batch step after it runs a program that uses GPUs/,
  );
  // A python (or any other program) run in the batch step after the export keeps the warning.
  const batch = script.replace("echo done\n", "python eval.py\n");
  assert.equal(lintManifestCode(batch, "jobscript", "GPU021")[0].severity, "warning");
  const binary = script.replace("echo done\n", "./bin --eval\n");
  assert.equal(lintManifestCode(binary, "jobscript", "GPU021")[0].severity, "warning");
  // With no srun after it either, the export is read as the batch step's own setting: warning.
  assert.equal(
    lintManifestCode("#SBATCH --gres=gpu:2\nexport CUDA_VISIBLE_DEVICES=0\necho hi\n", "jobscript", "GPU021")[0]
      .severity,
    "warning",
  );
});
