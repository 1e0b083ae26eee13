import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { cudaRequired } from "../../../server/src/engine/launch/cudaRequired";

const PREVIEW = { preview: true };

// The fixtures are linted as the files they are: GPU060 reads the script a launch line names beside it.
manifestFixtureTests("GPU060", PREVIEW, true);

/** A folder holding `files`; returns the path of `name` in it. */
function folderWith(files: Record<string, string>): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), "gpu060-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return (name) => join(dir, name);
}

const NEEDS = [
  "import argparse",
  "import torch",
  "parser = argparse.ArgumentParser()",
  'parser.add_argument("--device", default="cuda")',
  "args = parser.parse_args()",
  'device = torch.device("cuda")',
  "model = torch.nn.Linear(4, 4).to(device)",
  "",
].join("\n");
const JOB = "#!/bin/bash\n#SBATCH --partition=a2\n#SBATCH --nodes=1\n\nsrun python train.py --epochs 3\n";

test("GPU060: srun of a file that needs CUDA in a job without a GPU request: warning on the srun line, the CUDA line named, related on the file", () => {
  const at = folderWith({ "train.py": NEEDS });
  const [d, ...rest] = lintManifestCode(JOB, "jobscript", "GPU060", PREVIEW, at("job.sbatch"));
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 4, character: 0 }, end: { line: 4, character: 20 } });
  assert.equal(
    d.message,
    'srun starts train.py, which chooses a CUDA device unconditionally (train.py:6: `torch.device("cuda")`), but the job asks Slurm for no GPU (no --gpus, --gres=gpu, --gpus-per-node or --gpus-per-task in the #SBATCH lines or on srun): where GPUs are GRES and devices are constrained (cgroup.conf ConstrainDevices=yes), the step sees no GPU even on a GPU node; ask for them, e.g. #SBATCH --gpus-per-node=1',
  );
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 4, character: 12 }, end: { line: 4, character: 20 } },
      message: 'train.py:6 needs CUDA: torch.device("cuda")',
    },
  ]);
  // A preview rule: nothing without --preview.
  assert.deepEqual(lintManifestCode(JOB, "jobscript", "GPU060", {}, at("job.sbatch")), []);
});

test("GPU060: any GPU request, on #SBATCH lines (even after the first command) or srun/salloc, silences it", () => {
  const at = folderWith({ "train.py": NEEDS });
  const body = "srun python train.py\n";
  for (const request of [
    "#SBATCH --gpus=1\n",
    "#SBATCH -G 2\n",
    "#SBATCH --gres=gpu:v100:2\n",
    "#SBATCH --gres=gpu\n",
    "#SBATCH --gpus-per-node=a100:4\n",
    "#SBATCH --gpus-per-task=1\n",
    "#SBATCH --gpus-per-socket=1\n",
    "#SBATCH --tres-per-task=gres/gpu:1\n",
  ]) {
    const text = `#!/bin/bash\n#SBATCH --nodes=1\n${request}\n${body}`;
    assert.deepEqual(lintManifestCode(text, "jobscript", "GPU060", PREVIEW, at("job.sh")), [], request);
  }
  for (const line of [
    "srun --gres=gpu:1 python train.py\n",
    "srun -G1 python train.py\n",
    "srun --gpus 1 python train.py\n",
    "salloc --gpus=1\nsrun python train.py\n",
    "echo start\n#SBATCH --gpus=1\nsrun python train.py\n",
    "srun $EXTRA python train.py\n",
  ]) {
    const text = `#!/bin/bash\n#SBATCH --nodes=1\n\n${line}`;
    assert.deepEqual(lintManifestCode(text, "jobscript", "GPU060", PREVIEW, at("job.sh")), [], line);
  }
  // `--gpus=0` asks for none; the value of a named option that expands a variable asks for none either.
  const zero = "#!/bin/bash\n#SBATCH --gpus=0\n\nsrun --jobid $SLURM_JOB_ID python train.py\n";
  assert.equal(lintManifestCode(zero, "jobscript", "GPU060", PREVIEW, at("job.sh")).length, 1);
});

test("GPU060: silent for conditional CUDA use, an unreadable or non-.py program, and a script that is no job script", () => {
  const at = folderWith({
    "train.py": NEEDS,
    "cond.py":
      'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\nmodel = torch.nn.Linear(4, 4).to(device)\n',
    "guarded.py": "import torch\nif torch.cuda.is_available():\n    torch.cuda.set_device(0)\n",
  });
  const job = (cmd: string) => `#!/bin/bash\n#SBATCH --nodes=1\n\n${cmd}\n`;
  for (const cmd of [
    "srun python cond.py",
    "srun python guarded.py",
    "srun python missing.py",
    "python -m train",
    "srun ./run.sh",
  ])
    assert.deepEqual(lintManifestCode(job(cmd), "jobscript", "GPU060", PREVIEW, at("job.sh")), [], cmd);
  // A shell script without #SBATCH lines is no job script.
  assert.deepEqual(
    lintManifestCode("#!/bin/bash\nsrun python train.py\n", "jobscript", "GPU060", PREVIEW, at("run.sh")),
    [],
  );
  // The batch step itself (plain python) is reported too, with its own wording.
  const [d] = lintManifestCode(job("python3 train.py"), "jobscript", "GPU060", PREVIEW, at("job.sh"));
  assert.match(d.message, /^The batch step runs train\.py, which chooses a CUDA device unconditionally \(train\.py:6:/);
});

test("GPU060: cudaRequired reads the started path only, outside conditions", () => {
  assert.deepEqual(cudaRequired("import torch\nassert torch.cuda.is_available()\n"), {
    line: 1,
    code: "assert torch.cuda.is_available()",
    kind: "stops",
  });
  assert.deepEqual(cudaRequired('import sys, torch\nif not torch.cuda.is_available():\n    sys.exit("need a GPU")\n'), {
    line: 1,
    code: "if not torch.cuda.is_available():",
    kind: "stops",
  });
  // A warning only is no requirement.
  assert.equal(cudaRequired('import torch\nif not torch.cuda.is_available():\n    print("slow")\n'), null);
  // Functions called from the __main__ block are followed one level; others are not.
  const main =
    'import torch\n\ndef main():\n    x = torch.zeros(2, device="cuda")\n\nif __name__ == "__main__":\n    main()\n';
  assert.deepEqual(cudaRequired(main), { line: 3, code: 'torch.zeros(2, device="cuda")', kind: "uses" });
  assert.equal(cudaRequired(main.replace("    main()", "    pass")), null);
  assert.equal(cudaRequired("import torch\n\ndef helper(m):\n    return m.cuda()\n"), null);
  // try/except and else branches are conditional; argparse defaults are no use.
  assert.equal(
    cudaRequired("import torch\ntry:\n    torch.cuda.set_device(0)\nexcept RuntimeError:\n    pass\n"),
    null,
  );
  assert.equal(
    cudaRequired('import argparse\np = argparse.ArgumentParser()\np.add_argument("--device", default="cuda")\n'),
    null,
  );
  assert.deepEqual(cudaRequired("import torch\ntorch.cuda.set_device(1)\n"), {
    line: 1,
    code: "torch.cuda.set_device(1)",
    kind: "uses",
  });
  // A method called on a torch call's result puts work on CUDA too (a false negative before
  // 2026-12-07: every call path starting with `torch.` was skipped); torch.cuda's own queries do not.
  assert.deepEqual(cudaRequired("import torch\nfrom torch import nn\nnet = nn.Linear(4, 4).cuda()\n"), {
    line: 2,
    code: "nn.Linear(4, 4).cuda()",
    kind: "uses",
  });
  assert.deepEqual(cudaRequired('import torch\nx = torch.ones(1).to("cuda:0")\n'), {
    line: 1,
    code: 'torch.ones(1).to("cuda:0")',
    kind: "uses",
  });
  assert.equal(cudaRequired('import torch\nx = torch.ones(1).to("cpu")\nn = torch.cuda.device_count()\n'), null);
  // A CUDA torch.device alone starts nothing: it is named as a choice.
  assert.deepEqual(cudaRequired('import torch\ndev = torch.device("cuda")\n'), {
    line: 1,
    code: 'torch.device("cuda")',
    kind: "chooses",
  });
});
