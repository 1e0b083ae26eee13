import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";

manifestFixtureTests("GPU022");
manifestDocExampleTest("GPU022", "jobscript");

test("GPU022: plain python with fewer tasks per node than GPUs is a preview finding", () => {
  const text =
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\nsrun python train.py\npython train.py --epochs 1\n";
  assert.deepEqual(lintManifestCode(text, "jobscript", "GPU022"), []);
  const d = lintManifestCode(text, "jobscript", "GPU022", { preview: true });
  assert.deepEqual(
    d.map((x) => x.range.start.line),
    [4, 5],
  );
  assert.match(d[0].message, /^srun starts 1 Python process per node on 4 GPUs per node/);
  assert.match(d[1].message, /^the batch script starts one Python process on 4 GPUs per node/);
});

test("GPU022: srun's own --ntasks-per-node decides; the torchrun count is compared to --gres", () => {
  const d = lintManifestCode(
    "#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\nsrun --ntasks-per-node=8 torchrun --nproc-per-node=8 t.py\n",
    "jobscript",
    "GPU022",
  );
  assert.equal(d.length, 1);
  assert.match(d[0].message, /^srun starts 8 tasks per node here and each runs its own torchrun/);
  const n = lintManifestCode(
    "#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\ntorchrun --nproc-per-node 16 t.py\n",
    "jobscript",
    "GPU022",
  );
  assert.match(
    n[0].message,
    /torchrun starts 16 workers per node but the job asks Slurm for 8 GPUs per node: workers beyond the GPUs/,
  );
});

test("GPU022: a bare $SRUN_ARGS among srun's options is skipped; `srun $ARGS bash -c ...` is not read", () => {
  const head = "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n#SBATCH --gres=gpu:4\n";
  assert.equal(
    lintManifestCode(
      `${head}srun $SRUN_ARGS --jobid $SLURM_JOB_ID torchrun --nproc_per_node 4 t.py\n`,
      "jobscript",
      "GPU022",
    ).length,
    1,
  );
  assert.deepEqual(
    lintManifestCode(`${head}srun $SRUN_ARGS bash -c "torchrun --nproc_per_node 4 t.py"\n`, "jobscript", "GPU022"),
    [],
  );
});

test("GPU022's preview check reads the started script: silent where one process spreads its work (nn.DataParallel, device_map, mp.spawn, vLLM's tensor_parallel_size, Ray); reported where it does not (DistributedDataParallel needs a process per GPU), or the script cannot be read", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu022-"));
  const scripts: Record<string, string> = {
    "dp.py": "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(4, 4).cuda())\n",
    "big.py":
      'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("x", device_map="auto")\n',
    "spawn.py": "import torch.multiprocessing as mp\n\ndef work(i):\n    pass\n\nmp.spawn(work, nprocs=4)\n",
    "serve.py": 'from vllm import LLM\nLLM("m", tensor_parallel_size=4)\n',
    "actors.py": "import ray\nray.init()\n",
    "ddp.py":
      "import torch.nn.parallel as p\n# DataParallel would be wrong here\nm = p.DistributedDataParallel(None)\n",
  };
  for (const [name, text] of Object.entries(scripts)) writeFileSync(join(dir, name), text);
  const job = (script: string) =>
    `#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:4\npython ${script}\n`;
  const found = (script: string) =>
    lintManifestCode(job(script), "jobscript", "GPU022", { preview: true }, join(dir, "job.sbatch")).length;
  for (const s of ["dp.py", "big.py", "spawn.py", "serve.py", "actors.py"]) assert.equal(found(s), 0, s);
  assert.equal(found("ddp.py"), 1, "a comment naming DataParallel does not count");
  assert.equal(found("missing.py"), 1);
  assert.equal(
    lintManifestCode(job("dp.py"), "jobscript", "GPU022", { preview: true }).length,
    1,
    "an unsaved job script reads nothing",
  );
});

test("GPU022: torchrun's options in a variable the script assigns once to a literal are compared; one not known may hold a later --nproc_per_node (silent), and `python $X x.py` may start torch's launcher (silent)", () => {
  const job = (lines: string) =>
    `#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n${lines}\n`;
  const lines = (text: string, preview = false) =>
    lintManifestCode(job(text), "jobscript", "GPU022", { preview }).map((d) => [
      d.range.start.line,
      d.range.start.character,
      d.range.end.character,
      d.message.slice(0, 48),
    ]);
  // The option's words came from $WORKERS: the finding sits on it.
  assert.deepEqual(lines('PER=8\nWORKERS="--nproc_per_node $PER"\ntorchrun $WORKERS train.py'), [
    [6, 9, 17, "torchrun starts 8 workers per node but the job a"],
  ]);
  assert.deepEqual(lines('WORKERS=(--nnodes 1 --nproc_per_node 2)\ntorchrun "${WORKERS[@]}" train.py').length, 1);
  assert.deepEqual(lines('WORKERS="--nproc_per_node 4"\ntorchrun $WORKERS train.py'), []);
  assert.deepEqual(lines("torchrun --nproc_per_node 8 $EXTRA train.py"), []);
  assert.deepEqual(lines("srun python $PYFLAGS train.py", true), []);
  assert.equal(lines("srun python -u train.py", true).length, 1);
});
