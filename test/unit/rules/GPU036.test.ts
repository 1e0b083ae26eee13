import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { SRUN_ONE_GPU_PER_TASK, TORCHRUN } from "../support/slurmLaunches";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";

fixtureTests("GPU036", { preview: true, slurm: [SRUN_ONE_GPU_PER_TASK] });

const SRC =
  'import os\nimport torch\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\ntorch.cuda.set_device(local_rank)\n';

test("GPU036: srun python, no LOCAL_RANK: warning naming the job script, fix reads SLURM_LOCALID", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU036", { slurm: [SRUN_ONE_GPU_PER_TASK] });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 3, character: 17 }, end: { line: 3, character: 41 } });
  assert.equal(
    d.message,
    "os.environ[\"LOCAL_RANK\"] raises KeyError: 'LOCAL_RANK': the job script train.sbatch (line 6) starts this file with `srun python`, and Slurm sets SLURM_LOCALID, not LOCAL_RANK (measured on Slurm 22.05; only torchrun sets LOCAL_RANK); read SLURM_LOCALID, or start the file with torchrun",
  );
  assert.equal(applyFix(SRC, d), SRC.replace('os.environ["LOCAL_RANK"]', 'os.environ["SLURM_LOCALID"]'));
});

test("GPU036: silent without a launch, under torchrun, when the job script sets LOCAL_RANK, and for .get with a default", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU036"), []);
  assert.deepEqual(await lintCode(SRC, "GPU036", { slurm: [TORCHRUN] }), []);
  assert.deepEqual(await lintCode(SRC, "GPU036", { slurm: [{ ...SRUN_ONE_GPU_PER_TASK, setsLocalRank: true }] }), []);
  assert.deepEqual(
    await lintCode(SRC.replace('os.environ["LOCAL_RANK"]', 'os.environ.get("LOCAL_RANK", "0")'), "GPU036", {
      slurm: [SRUN_ONE_GPU_PER_TASK],
    }),
    [],
  );
  // A file that sets LOCAL_RANK itself before reading it.
  const own = SRC.replace("local_rank = ", 'os.environ["LOCAL_RANK"] = "0"\nlocal_rank = ');
  assert.deepEqual(await lintCode(own, "GPU036", { slurm: [SRUN_ONE_GPU_PER_TASK] }), []);
  // The batch step: one process with no LOCAL_RANK either (measured).
  const [b] = await lintCode(SRC, "GPU036", {
    slurm: [{ ...SRUN_ONE_GPU_PER_TASK, launcher: "batch", processesPerNode: 1 }],
  });
  assert.match(b.message, /starts this file with `python` as the batch step/);
});

test("GPU036 end to end: the job script beside the file is found through resolveLintOptions; GPU011's preview LOCAL_RANK check steps aside", async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu036-"));
  try {
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, "slurm"));
    writeFileSync(join(root, "train.py"), SRC);
    writeFileSync(
      join(root, "slurm", "train.sbatch"),
      "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n#SBATCH --gres=gpu:2\n\nsrun python train.py\n",
    );
    clearSlurmLaunchCache();
    const { options } = resolveLintOptions(join(root, "train.py"), {}, "editorOnly");
    assert.deepEqual(
      options.slurm?.map((l) => [l.launcher, l.line, l.gpusPerProcess, l.processesPerNode]),
      [["srun", 5, 2, 2]],
    );
    const all = await lintCode(SRC, "GPU036", { ...options, preview: true });
    assert.equal(all.length, 1);
    assert.deepEqual(await lintCode(SRC, "GPU011", { ...options, preview: true }), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
