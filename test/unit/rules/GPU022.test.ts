import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";

manifestFixtureTests("GPU022");
manifestDocExampleTest("GPU022", "jobscript");

/** A folder holding `files` (name → text), for job scripts whose started Python files are read. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu022-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** A one-GPU PyTorch training script. */
const ONE_GPU = "import torch\nmodel = torch.nn.Linear(4, 4).cuda()\n";

test("GPU022: plain python with fewer tasks per node than GPUs is a preview finding", () => {
  const dir = project({ "train.py": ONE_GPU });
  const text =
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\nsrun python train.py\npython train.py --epochs 1\n";
  const file = join(dir, "job.sbatch");
  assert.deepEqual(lintManifestCode(text, "jobscript", "GPU022", {}, file), []);
  const d = lintManifestCode(text, "jobscript", "GPU022", { preview: true }, file);
  assert.deepEqual(
    d.map((x) => x.range.start.line),
    [4, 5],
  );
  assert.match(d[0].message, /^srun starts 1 Python process per node on 4 GPUs per node/);
  assert.match(
    d[1].message,
    /^the batch script starts one Python process on 4 GPUs per node: a process per GPU needs --ntasks-per-node=4/,
  );
});

test("GPU022: a batch-step python in a job with a task per GPU is told to start with srun", () => {
  const dir = project({ "train.py": ONE_GPU });
  const d = lintManifestCode(
    "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:8\npython train.py\n",
    "jobscript",
    "GPU022",
    { preview: true },
    join(dir, "job.sbatch"),
  );
  assert.equal(d.length, 1);
  assert.match(
    d[0].message,
    /the job has 8 tasks per node, but the batch script runs this command once, not once per task: for a process per GPU, start it with srun/,
  );
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

test("GPU022's preview check reads the started script: silent where one process spreads its work (nn.DataParallel, device_map, mp.spawn, vLLM's tensor_parallel_size, Ray) or the script cannot be read; reported where it does not (DistributedDataParallel needs a process per GPU)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu022-"));
  const scripts: Record<string, string> = {
    "dp.py": "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(4, 4).cuda())\n",
    "big.py":
      'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("x", device_map="auto")\n',
    "spawn.py": "import torch.multiprocessing as mp\n\ndef work(i):\n    pass\n\nmp.spawn(work, nprocs=4)\n",
    "serve.py": 'from vllm import LLM\nLLM("m", tensor_parallel_size=4)\n',
    "actors.py": "import ray\nray.init()\n",
    "ddp.py":
      "import torch.nn.parallel as p\n# DataParallel would be wrong here\nm = p.DistributedDataParallel(None).cuda()\n",
    "keras_multi.py":
      "from keras.utils import multi_gpu_model\nfrom keras.models import Model\nm = multi_gpu_model(Model(), gpus=4)\n",
    "mirrored.py": "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n",
  };
  for (const [name, text] of Object.entries(scripts)) writeFileSync(join(dir, name), text);
  const job = (script: string) =>
    `#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:4\npython ${script}\n`;
  const found = (script: string) =>
    lintManifestCode(job(script), "jobscript", "GPU022", { preview: true }, join(dir, "job.sbatch")).length;
  for (const s of ["dp.py", "big.py", "spawn.py", "serve.py", "actors.py", "keras_multi.py", "mirrored.py"])
    assert.equal(found(s), 0, s);
  assert.equal(found("ddp.py"), 1, "a comment naming DataParallel does not count");
  assert.equal(found("missing.py"), 0, "a script that is not there: what it does is not seen");
  assert.equal(found("$WORK/train.py"), 0, "a path the script cannot resolve");
  assert.equal(
    lintManifestCode(job("ddp.py"), "jobscript", "GPU022", { preview: true }).length,
    0,
    "an unsaved job script reads nothing",
  );
});

test("GPU022: torchrun's options in a variable the script assigns once to a literal are compared; one not known may hold a later --nproc_per_node (silent), and `python $X x.py` may start torch's launcher (silent)", () => {
  const job = (lines: string) =>
    `#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n${lines}\n`;
  const dir = project({ "train.py": ONE_GPU });
  const lines = (text: string, preview = false) =>
    lintManifestCode(job(text), "jobscript", "GPU022", { preview }, join(dir, "job.sbatch")).map((d) => [
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

test("GPU022's preview check follows the started script's project imports one level: CUDA named there, or a spreading name, counts; a program naming no CUDA is not reported", () => {
  const dir = project({
    "main.py": "from trainer import Trainer\nTrainer().fit()\n",
    "trainer.py": "import torch\nclass Trainer:\n    def fit(self):\n        torch.nn.Linear(4, 4).cuda()\n",
    "main_dp.py": "from dp_trainer import run\nrun()\n",
    "dp_trainer.py": "import torch\ndef run():\n    torch.nn.DataParallel(torch.nn.Linear(4, 4)).cuda()\n",
    "prepare.py": "import datasets\nfrom helpers import save\nsave(datasets.load_dataset('x'))\n",
    "helpers.py": "import json\ndef save(d):\n    json.dump(d, open('o', 'w'))\n",
    "upload.py": "from transformers import HfArgumentParser\nHfArgumentParser(()).parse_args_into_dataclasses()\n",
    "search.py": "import torch\nfrom nas.main import run\nrun()\n",
    "nas/main.py": "from nas.workers import start\ndef run():\n    start()\n",
  });
  const found = (script: string) =>
    lintManifestCode(
      `#SBATCH --nodes=1\n#SBATCH --gres=gpu:2\npython ${script}\n`,
      "jobscript",
      "GPU022",
      { preview: true },
      join(dir, "job.sbatch"),
    ).length;
  assert.equal(found("main.py"), 1, "CUDA used in the imported trainer module");
  assert.equal(found("main_dp.py"), 0, "DataParallel in the imported module");
  assert.equal(found("prepare.py"), 0, "no GPU framework: a data-preparation step");
  assert.equal(found("upload.py"), 0, "transformers' argument parser alone does no GPU work");
  assert.equal(found("search.py"), 0, "no CUDA named within one level: how it uses the GPUs is not seen");
});

test("GPU022's preview check: a package at the project's root that a script in a subfolder imports is read (its device_map spreads the model); detectron2's launch starts a process per GPU, and a JAX process drives every GPU it sees: silent", () => {
  const dir = project({
    "pkg/__init__.py": "",
    "pkg/loader.py":
      "from transformers import AutoModelForCausalLM\ndef load(p):\n    return AutoModelForCausalLM.from_pretrained(p, device_map='auto')\n",
    "pkg/plain.py": "import torch\ndef load():\n    return torch.nn.Linear(4, 4)\n",
    "tools/answer.py": "import torch\nfrom pkg.loader import load\nm = load('m')\nx = torch.zeros(2).cuda()\n",
    "tools/single.py": "import torch\nfrom pkg.plain import load\nload().cuda()\n",
    "tools/det.py":
      "import torch\nfrom detectron2.engine import launch\ndef main(a):\n    torch.zeros(1).cuda()\nlaunch(main, 4, args=(1,))\n",
    "tools/rel.py": "import torch\nfrom .loader import load\nload('m')\nx = torch.zeros(2).cuda()\n",
    "pkg/torch_side.py": "import torch\ndef to_gpu(x):\n    return x.cuda()\n",
    "tools/jax_run.py": "import jax\nfrom pkg.torch_side import to_gpu\nprint(jax.device_count())\n",
  });
  const found = (script: string) =>
    lintManifestCode(
      `#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:4\npython ${script}\n`,
      "jobscript",
      "GPU022",
      { preview: true },
      join(dir, "job.sbatch"),
    ).length;
  assert.equal(found("tools/answer.py"), 0, "device_map in the root package's module");
  assert.equal(found("tools/single.py"), 1, "the root package's module spreads nothing: one process, one GPU");
  assert.equal(found("tools/det.py"), 0, "detectron2's launch starts a process per GPU");
  assert.equal(found("tools/rel.py"), 1, "a relative import is looked for beside the script only (no tools/loader.py)");
  assert.equal(found("tools/jax_run.py"), 0, "a JAX program: one process drives the GPUs it sees");
});

test("GPU022's preview check: Hugging Face's Trainer in one process spreads over the visible GPUs (nn.DataParallel): silent", () => {
  const dir = project({
    "hf.py":
      "import torch\nfrom transformers import Trainer, TrainingArguments\nTrainer(args=TrainingArguments('o')).train()\n",
    "sft.py": "import torch\nfrom trl import SFTConfig, SFTTrainer\nSFTTrainer(args=SFTConfig('o')).train()\n",
  });
  for (const s of ["hf.py", "sft.py"])
    assert.deepEqual(
      lintManifestCode(
        `#SBATCH --gres=gpu:4\npython ${s}\n`,
        "jobscript",
        "GPU022",
        { preview: true },
        join(dir, "job.sbatch"),
      ),
      [],
      s,
    );
});

test("GPU022's preview check: Lightning in the batch step starts its own processes unless Slurm's task count is set (SLURM_NTASKS); under srun it takes Slurm's tasks", () => {
  const dir = project({
    "fit.py": "import lightning as L\ntrainer = L.Trainer(accelerator='gpu', devices=2, strategy='ddp')\n",
  });
  const found = (head: string, line = "python fit.py") =>
    lintManifestCode(
      `${head}#SBATCH --gres=gpu:2\n${line}\n`,
      "jobscript",
      "GPU022",
      { preview: true },
      join(dir, "job.sbatch"),
    ).length;
  assert.equal(found("#SBATCH --nodes=1\n"), 0, "no task count: SLURM_NTASKS unset, Lightning starts its own");
  assert.equal(found("#SBATCH --ntasks=1\n"), 1, "SLURM_NTASKS=1: Lightning runs one process");
  assert.equal(found("#SBATCH -n 1\n"), 1);
  assert.equal(found("#SBATCH --ntasks-per-node=1\n"), 1);
  assert.equal(found("#SBATCH --ntasks=1\nunset SLURM_NTASKS\n"), 0, "the script unsets it");
  assert.equal(found("#SBATCH --ntasks=1\n#SBATCH --job-name=interactive\n"), 0, "Lightning's interactive mode");
  assert.equal(found("#SBATCH --nodes=1\n", "srun --ntasks=1 python fit.py"), 1, "an srun step has SLURM_NTASKS");
});

test("GPU022's preview check: silent where the script picks the process's GPUs (CUDA_VISIBLE_DEVICES) or runs the command in the background", () => {
  const dir = project({ "infer.py": ONE_GPU });
  const found = (body: string) =>
    lintManifestCode(
      `#SBATCH --nodes=1\n#SBATCH --gres=gpu:2\n${body}`,
      "jobscript",
      "GPU022",
      { preview: true },
      join(dir, "job.sbatch"),
    ).length;
  assert.equal(
    found(
      "CUDA_VISIBLE_DEVICES=0 python infer.py --part 0 > a.log 2>&1 &\nCUDA_VISIBLE_DEVICES=1 python infer.py --part 1 &\nwait\n",
    ),
    0,
  );
  assert.equal(found("python infer.py --part 0 > a.log 2>&1 &\npython infer.py --part 1 &\nwait\n"), 0);
  assert.equal(found("export CUDA_VISIBLE_DEVICES=0\npython infer.py\n"), 0);
  assert.equal(found("export CUDA_VISIBLE_DEVICES=$GPUS\npython infer.py\n"), 0);
  assert.equal(found("export CUDA_VISIBLE_DEVICES=0,1\npython infer.py\n"), 1, "every GPU of the job listed");
  assert.equal(found("python infer.py && echo done\n"), 1, "&& is not the background");
  assert.equal(found("python infer.py \\\n  --part 0 2>&1 | tee log\n"), 1);
});

test("GPU022's preview check: a program that loops over the visible GPUs putting work on each spreads it itself (Numba's cuda.gpus, select_device, CuPy's Device, torch's devices in range(device_count())): silent; a loop that only asks about each GPU, or puts work on a fixed one, is not", () => {
  const scripts: Record<string, string> = {
    "numba_with.py":
      "from numba import cuda\n\ndef main():\n    gpus = cuda.gpus\n    for dev in gpus:\n        with dev:\n            a = cuda.to_device([1.0])\n",
    "numba_select.py":
      "from numba import cuda\nfor i in range(len(cuda.gpus)):\n    cuda.select_device(i)\n    a = cuda.to_device([1.0])\n    cuda.close()\n",
    "numba_index.py":
      "import numba.cuda as nc\nfor k, _ in enumerate(nc.list_devices()):\n    with nc.gpus[k]:\n        x = nc.device_array(4)\n",
    "cupy_device.py":
      "import cupy as cp\nn = cp.cuda.runtime.getDeviceCount()\nfor i in range(n):\n    with cp.cuda.Device(i):\n        x = cp.ones(4)\n",
    "torch_fstring.py":
      'import torch\n\nclass Runner:\n    def __init__(self):\n        self.n_gpu = torch.cuda.device_count()\n\n    def run(self):\n        for i in range(self.n_gpu):\n            torch.ones(4).to(torch.device(f"cuda:{i}"))\n',
    "torch_to.py": "import torch\nparts = [torch.nn.Linear(4, 4).to(i) for i in range(torch.cuda.device_count())]\n",
    "torch_set.py":
      "import torch\nfor i in range(0, torch.cuda.device_count()):\n    torch.cuda.set_device(i)\n    torch.ones(4).cuda()\n",
    "torch_names.py":
      "import torch\nfor i in range(torch.cuda.device_count()):\n    print(torch.cuda.get_device_name(i))\nmodel = torch.nn.Linear(4, 4).cuda()\n",
    "torch_fixed.py": 'import torch\nfor i in range(torch.cuda.device_count()):\n    torch.ones(4).to("cuda:0")\n',
    "torch_other_range.py":
      'import torch\nn = 4\nfor i in range(n):\n    torch.ones(4).to(f"cuda:{i}")\nm = torch.cuda.device_count()\n',
    "numba_list_only.py":
      "from numba import cuda\nfor dev in cuda.gpus:\n    print(dev.name)\nx = cuda.to_device([1.0])\n",
  };
  const dir = project(scripts);
  const job = (script: string) =>
    `#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:2\npython ${script}\n`;
  const found = (script: string) =>
    lintManifestCode(job(script), "jobscript", "GPU022", { preview: true }, join(dir, "job.sbatch")).length;
  for (const s of [
    "numba_with.py",
    "numba_select.py",
    "numba_index.py",
    "cupy_device.py",
    "torch_fstring.py",
    "torch_to.py",
    "torch_set.py",
  ])
    assert.equal(found(s), 0, s);
  for (const s of ["torch_names.py", "torch_fixed.py", "torch_other_range.py", "numba_list_only.py"])
    assert.equal(found(s), 1, s);
});

test("GPU022's preview check: a loop over the visible GPUs in a project module the started script imports counts too", () => {
  const dir = project({
    "train.py": "import torch\nfrom helpers import place\nmodel = torch.nn.Linear(4, 4).cuda()\nplace(model)\n",
    "helpers.py":
      'import torch\n\ndef place(model):\n    return [model.to(f"cuda:{i}") for i in range(torch.cuda.device_count())]\n',
  });
  const d = lintManifestCode(
    "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:2\npython train.py\n",
    "jobscript",
    "GPU022",
    { preview: true },
    join(dir, "job.sbatch"),
  );
  assert.deepEqual(d, []);
});

test("GPU022: a launcher that expects several machines, started in the batch script of a multi-node job without srun, runs on the first node only (an error); srun, --standalone, a one-node job or an elastic minimum of one are silent", () => {
  const head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n";
  const lint = (body: string, nodes = head) => lintManifestCode(nodes + body, "jobscript", "GPU022", {});
  const d = lint("torchrun --nnodes 2 --nproc_per_node 4 train.py\n");
  assert.equal(d.length, 1);
  assert.equal(d[0].severity, "error");
  assert.equal(d[0].range.start.line, 4);
  assert.match(
    d[0].message,
    /^torchrun expects 2 machines \(--nnodes 2\), but it is a command of the batch script, which Slurm runs once, on the first of the job's 2 nodes/,
  );
  assert.equal(d[0].related?.[0]?.message, "the job's nodes");
  assert.equal(lint("python -m torch.distributed.run --nnodes=$SLURM_NNODES --nproc_per_node 4 t.py\n").length, 1);
  assert.match(lint("NN=2\ntorchrun --nnodes=$NN t.py\n")[0]?.message ?? "", /expects 2 machines \(--nnodes \$NN\)/);
  for (const body of [
    "srun torchrun --nnodes 2 --nproc_per_node 4 train.py\n",
    "torchrun --standalone --nnodes 2 train.py\n",
    "torchrun --nnodes 1:2 train.py\n",
    "torchrun --nnodes $N train.py\n",
    "torchrun $ARGS train.py\n",
    "torchrun --nproc_per_node 4 train.py\n",
  ])
    assert.deepEqual(lint(body), [], body);
  assert.deepEqual(lint("torchrun --nnodes 2 t.py\n", "#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n"), []);
  assert.deepEqual(lint("torchrun --nnodes 2 t.py\n", "#SBATCH --gres=gpu:4\n"), [], "no node count in the script");
});

test("GPU022: the multi-machine launch is silent where another command may start it on the other nodes (srun, ssh, pdsh, MPI) or runs a command held in a variable", () => {
  const head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n";
  const lint = (body: string) => lintManifestCode(head + body, "jobscript", "GPU022", {});
  const launch = "torchrun --nnodes 2 --node_rank 0 t.py &\n";
  for (const other of [
    "ssh node2 torchrun --nnodes 2 --node_rank 1 t.py\n",
    "pdsh -w node2 'torchrun --nnodes 2 --node_rank 1 t.py'\n",
    "H=$(srun --ntasks=1 hostname)\n",
    "mpirun -np 2 hostname\n",
    'bash -c "ssh node2 echo"\n',
    "$SECOND_NODE_CMD\n",
    'eval "$CMD"\n',
  ])
    assert.deepEqual(lint(launch + other), [], other);
  assert.equal(lint(launch + "wait\n").length, 1);
});

test("GPU022: accelerate launch on several machines in the batch step is reported where it runs torchrun there (--multi_gpu, FSDP, DeepSpeed's standard launcher, from flags or its config file); DeepSpeed's default pdsh launcher and a launch of unknown kind are not", () => {
  const dir = project({
    "cfg/zero2.yaml":
      "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_multinode_launcher: standard\n  zero_stage: 2\nnum_machines: 2\nnum_processes: 8\n",
    "cfg/pdsh.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_machines: 2\n",
    "cfg/fsdp.yaml": "distributed_type: FSDP\nnum_machines: 3\nnum_processes: 12\n",
    "cfg/one.yaml": "distributed_type: MULTI_GPU\nnum_machines: 1\n",
  });
  const head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n";
  const lint = (body: string) => lintManifestCode(head + body, "jobscript", "GPU022", {}, join(dir, "job.slurm"));
  const flags = lint("accelerate launch --multi_gpu --num_machines 2 --num_processes 8 --machine_rank 0 train.py\n");
  assert.equal(flags.length, 1);
  assert.match(
    flags[0].message,
    /^accelerate launch expects 2 machines \(--num_machines 2\), .*srun --ntasks-per-node=1 bash -c 'accelerate launch --machine_rank \$SLURM_NODEID \.\.\.'/,
  );
  assert.equal(lint("accelerate launch --config_file cfg/zero2.yaml --num_machines 2 train.py\n").length, 1);
  assert.match(
    lint("accelerate launch --config_file cfg/fsdp.yaml train.py\n")[0]?.message ?? "",
    /expects 3 machines \(num_machines: 3 in cfg\/fsdp\.yaml\)/,
  );
  assert.equal(
    lint("accelerate launch --use_deepspeed --deepspeed_multinode_launcher standard --num_machines 2 t.py\n").length,
    1,
  );
  for (const body of [
    "accelerate launch --use_deepspeed --num_machines 2 t.py\n",
    "accelerate launch --config_file cfg/pdsh.yaml t.py\n",
    "accelerate launch --config_file cfg/one.yaml t.py\n",
    "accelerate launch --num_machines 2 --num_processes 8 t.py\n",
    "accelerate launch --config_file cfg/missing.yaml --num_machines 2 t.py\n",
    "accelerate launch --multi_gpu --num_machines 2 --cpu t.py\n",
    "srun accelerate launch --multi_gpu --num_machines 2 t.py\n",
    "srun bash -c 'accelerate launch --multi_gpu --num_machines 2 --machine_rank $SLURM_NODEID t.py'\n",
  ])
    assert.deepEqual(lint(body), [], body);
});

test("GPU022: --ntasks takes precedence over --ntasks-per-node (test/fixtures/slurm/ntasks-per-node/measured.md)", () => {
  const dir = project({ "train.py": ONE_GPU });
  const found = (options: string, line = "srun python train.py") =>
    lintManifestCode(
      `#!/bin/bash\n${options
        .split(" ")
        .map((o) => `#SBATCH ${o}\n`)
        .join("")}${line}\n`,
      "jobscript",
      "GPU022",
      { preview: true },
      join(dir, "job.sbatch"),
    ).map((d) => d.message);
  // One node, two GPUs, --ntasks=1 beside --ntasks-per-node=2: srun starts one task (measured).
  const [m] = found("--nodes=1 --ntasks=1 --ntasks-per-node=2 --gres=gpu:2");
  assert.match(
    m,
    /^srun starts 1 Python process per node on 2 GPUs per node: the job's --ntasks=1 takes precedence over its --ntasks-per-node=2, which is then only a maximum per node \(sbatch\(1\)\): for a process per GPU, drop --ntasks or make it the GPUs of all the nodes;/,
  );
  assert.deepEqual(found("--nodes=1 --ntasks-per-node=2 --gres=gpu:2"), [], "the fix: no --ntasks");
  assert.deepEqual(found("--nodes=1 --ntasks=2 --ntasks-per-node=2 --gres=gpu:2"), []);
  // Two nodes: two tasks spread one a node over four GPUs per node.
  assert.match(
    found("--nodes=2 --ntasks=2 --ntasks-per-node=4 --gres=gpu:4")[0],
    /^srun starts 1 Python process per node on 4 GPUs per node: the job's --ntasks=2 takes precedence over its --ntasks-per-node=4/,
  );
  assert.deepEqual(found("--nodes=2 --ntasks=8 --ntasks-per-node=4 --gres=gpu:4"), []);
  // Three tasks on two nodes: two and one, not the same on each node; not reported.
  assert.deepEqual(found("--nodes=2 --ntasks=3 --ntasks-per-node=2 --gres=gpu:2"), []);
  // The step's own count decides; an --ntasks-per-node under the GPUs keeps its own fix text.
  assert.deepEqual(found("--nodes=1 --ntasks=1 --ntasks-per-node=2 --gres=gpu:2", "srun -n 2 python train.py"), []);
  assert.match(
    found("--nodes=1 --ntasks=1 --ntasks-per-node=1 --gres=gpu:2")[0],
    /: a process per GPU needs --ntasks-per-node=2 /,
  );
});

test("GPU022: srun torchrun in a job whose --ntasks leaves one task a node is right; srun's --ntasks-per-node that the job's task count overrides is not read", () => {
  const torchrun = (head: string, srun = "srun") =>
    lintManifestCode(
      `#!/bin/bash\n${head}#SBATCH --gres=gpu:4\n${srun} torchrun --nproc_per_node=4 t.py\n`,
      "jobscript",
      "GPU022",
    ).map((d) => d.message);
  // Measured: one task, on one node.
  assert.deepEqual(torchrun("#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=4\n"), []);
  assert.deepEqual(torchrun("#SBATCH --nodes=2\n#SBATCH --ntasks=2\n#SBATCH --ntasks-per-node=4\n"), []);
  assert.match(
    torchrun("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n")[0] ?? "",
    /^srun starts 4 tasks per node here/,
  );
  // The step inherits SLURM_NTASKS=8, and srun ignored a --ntasks-per-node=1 that does not match
  // it (measured, with a warning); what it starts then is not claimed.
  assert.deepEqual(torchrun("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n", "srun --ntasks-per-node=1"), []);
  assert.deepEqual(torchrun("#SBATCH --nodes=2\n", "srun --ntasks-per-node=1"), [], "no task count: honoured");
  assert.match(torchrun("#SBATCH --nodes=2\n", "srun --ntasks-per-node=2")[0] ?? "", /^srun starts 2 tasks per node/);
});

/**
 * GPU022's findings on a job script asking 4 GPUs (`head`'s `#SBATCH` lines first, then `line`)
 * that starts fit.py, a Lightning program made of `program` then `trainer.fit(None)`, beside `extra` files.
 */
function lightningJob(head: string, program: string, line = "srun python fit.py", extra: Record<string, string> = {}) {
  const dir = project({ "fit.py": `import lightning as L\n${program}\ntrainer.fit(None)\n`, ...extra });
  return lintManifestCode(
    `#!/bin/bash\n${head}#SBATCH --gres=gpu:4\n${line}\n`,
    "jobscript",
    "GPU022",
    {},
    join(dir, "job.sbatch"),
  );
}

test("GPU022's Lightning check (default set): devices or num_nodes other than the job's --ntasks-per-node or --nodes, where Lightning 2.1's Slurm check raises", () => {
  const run = lightningJob;
  const one = "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n";
  const d = run(one, "trainer = L.Trainer(accelerator='gpu', devices=4)");
  assert.equal(d.length, 1);
  assert.equal(d[0].severity, "error");
  assert.equal(d[0].range.start.line, 4);
  assert.match(
    d[0].message,
    /Trainer gets devices=4 but the job asks for --ntasks-per-node=1: .*ValueError\("You set `devices=4`/,
  );
  assert.equal(
    run(one, "trainer = L.Trainer(devices=4)", "python fit.py").length,
    1,
    "the batch step has the variables too",
  );
  assert.equal(run(one, "trainer = L.Trainer()").length, 1, "devices not given: all 4 GPUs");
  assert.equal(run(one, "trainer = L.Trainer(devices=[0, 1])").length, 1);
  assert.equal(run("#SBATCH --ntasks-per-node=4\n", "trainer = L.Trainer(devices=4)").length, 0, "matching");
  assert.equal(run("#SBATCH --ntasks-per-node=4\n", "trainer = L.Trainer(devices='auto')").length, 0);
  assert.equal(run(one, "trainer = L.Trainer(devices=1)").length, 0, "one device, one node: no DDP launcher, no check");
  assert.equal(
    run(one, "trainer = L.Trainer(devices=4, strategy='fsdp')").length,
    0,
    "FSDP has no launcher under Slurm",
  );
  assert.equal(run(one, "trainer = L.Trainer(devices=4, strategy='ddp_spawn')").length, 0);
  assert.equal(run(one, "trainer = L.Trainer(devices=4, plugins=[env])").length, 0, "a cluster environment of its own");
  assert.equal(run(one, "trainer = L.Trainer(**cfg)").length, 0);
  assert.equal(run(one, "trainer = L.Trainer(devices=cfg.n)").length, 0, "devices not known");
  assert.equal(run(`${one}#SBATCH --job-name=bash\n`, "trainer = L.Trainer(devices=4)").length, 0, "interactive mode");
  assert.equal(
    run(one, "trainer = L.Trainer(devices=4)", "srun -n 4 python fit.py").length,
    0,
    "a layout of the step's own",
  );
  const fourByTwo = "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n";
  assert.match(
    run(fourByTwo, "trainer = L.Trainer(devices=4)")[0]?.message ?? "",
    /gets num_nodes=1 \(the default\) but the job asks for --nodes=2/,
  );
  assert.equal(run(fourByTwo, "trainer = L.Trainer(devices=4, num_nodes=2)").length, 0);
  assert.equal(run(`${one}export PL_TRAINER_DEVICES=1\n`, "trainer = L.Trainer()").length, 0, "Lightning's defaults");
  assert.equal(run(one, "trainer = L.Trainer()", "PL_TRAINER_DEVICES=1 srun python fit.py").length, 0);
  // devices=None is unknown; more tasks than GPUs with the GPU accelerator and DDP named cannot match.
  const many = "#SBATCH --ntasks-per-node=48\n";
  assert.equal(
    run(many, "trainer = L.Trainer(accelerator='gpu', devices=n, strategy='ddp')", "python fit.py").length,
    1,
  );
  assert.equal(run(many, "trainer = L.Trainer(accelerator='gpu', devices=n)", "python fit.py").length, 0);
  // Values from argparse options on the command line, else their defaults.
  const parsed =
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--gpus', type=int, default=1)\nargs = p.parse_args()\ntrainer = L.Trainer(devices=args.gpus)";
  assert.equal(run(one, parsed, "srun python fit.py --gpus 4").length, 1);
  assert.equal(run(one, parsed, "srun python fit.py --gpus=1").length, 0);
  assert.equal(run(one, parsed).length, 0, "the default, one device");
  // Pins: below 2.1 Lightning has no such check (silent); 2.1 or later, or unpinned, it has.
  const program = "trainer = L.Trainer(devices=4)";
  assert.equal(run(one, program, undefined, { "requirements.txt": "pytorch-lightning==1.9.5\n" }).length, 0);
  assert.equal(run(one, program, undefined, { "requirements.txt": "lightning>=2.0,<2.1\n" }).length, 0);
  assert.equal(
    run(one, program, undefined, { "environment.yml": "dependencies:\n  - pytorch-lightning=1.8.6\n" }).length,
    0,
  );
  assert.equal(run(one, program, undefined, { "requirements.txt": "lightning>=2.2\ntorch\n" }).length, 1);
  const poetry = '[tool.poetry.dependencies]\npython = "^3.9"\npytorch-lightning = "1.9.0"\n';
  assert.equal(run(one, program, undefined, { "pyproject.toml": poetry }).length, 0, "Poetry's exact pin");
  // setup.py's install_requires (read from its syntax tree) and setup.cfg's.
  const setupPy =
    'from setuptools import setup\n\nsetup(name="x", install_requires=["torch", "pytorch-lightning==1.9.5"])\n';
  assert.equal(run(one, program, undefined, { "setup.py": setupPy }).length, 0, "setup.py");
  assert.equal(
    run(one, program, undefined, { "setup.py": setupPy.replace("==1.9.5", ">=2.2") }).length,
    1,
    "setup.py, 2.2 or later",
  );
  const cfg = "[options]\ninstall_requires =\n    torch\n    lightning<2.1\n";
  assert.equal(run(one, program, undefined, { "setup.cfg": cfg }).length, 0, "setup.cfg");
  // Fabric validates in `launch()`.
  const fabric = "fabric = L.Fabric(accelerator='cuda', devices=4)";
  assert.equal(run(one, `${fabric}\nfabric.launch()`).length, 1);
  assert.equal(run(one, fabric).length, 0);
});

test("GPU022's Lightning one-task check (default set): srun of a --ntasks=1 job starts one task, and Lightning trains in it on one of its devices", () => {
  const run = lightningJob;
  const below = "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=4\n";
  const d = run(below, "trainer = L.Trainer()");
  assert.equal(d.length, 1);
  assert.equal(d[0].severity, "error");
  assert.equal(d[0].range.start.line, 5);
  assert.ok(!(d[0] as { preview?: boolean }).preview, "in the default set");
  assert.match(
    d[0].message,
    /^srun starts one task here \(the job's --ntasks=1 takes precedence over its --ntasks-per-node=4, then only a maximum per node\), .*Trainer gets devices "auto" \(here the job's 4 GPUs per node\), passes Lightning's Slurm check, and trains in that one process \(world size 1\) on one GPU, the first of its 4 devices, leaving 3 of the job's 4 GPUs idle; .* made for 4 processes, so that process trains on 1\/4 of each epoch's data; for a process per GPU drop --ntasks=1 \(keep --ntasks-per-node=4\)$/,
  );
  assert.equal(d[0].related?.[0].range.start.line, 2, "the --ntasks=1 line");
  assert.equal(run(below, "trainer = L.Trainer(devices=4)").length, 1);
  assert.equal(run(below, "trainer = L.Trainer(devices=-1, accelerator='gpu', strategy='ddp')").length, 1);
  assert.equal(run(below.replace("--ntasks=1", "-n 1"), "trainer = L.Trainer(devices='auto')").length, 1);
  const alone = "#SBATCH --ntasks=1\n";
  assert.match(
    run(alone, "trainer = L.Trainer(devices=2)")[0]?.message ?? "",
    /^srun starts one task here \(the job's --ntasks=1\), .*devices=2, .*on one GPU, the first of its 2 devices, leaving 3 of the job's 4 GPUs idle; .*trains on half of each epoch's data; for a process per GPU ask for --ntasks-per-node=2 instead of --ntasks=1$/,
  );
  assert.match(
    run(below, "trainer = L.Trainer(devices=2)")[0]?.message ?? "",
    /ValueError\("You set `devices=2`/,
    "devices other than --ntasks-per-node: Lightning's ValueError (the mismatch check)",
  );
  // Silences: one device, the CPU, other strategies, several nodes, another step layout or GPUs, more
  // devices than the task sees, the job's own environment, a pin before 1.8.
  assert.equal(run(below, "trainer = L.Trainer(devices=1)").length, 0, "one device: one process is right");
  assert.equal(run(alone, "trainer = L.Trainer(devices=8)").length, 0, "more devices than GPUs: another error");
  assert.equal(run(below, "trainer = L.Trainer(accelerator='cpu', devices=4)").length, 0);
  assert.equal(run(below, "trainer = L.Trainer(strategy='fsdp')").length, 0);
  assert.equal(run(below, "trainer = L.Trainer(strategy='ddp_spawn')").length, 0);
  assert.equal(run(below, "trainer = L.Trainer(plugins=[env])").length, 0);
  assert.equal(run(below, "trainer = L.Trainer(devices=n)").length, 0, "devices not known");
  assert.match(
    run(below, "trainer = L.Trainer()", "python fit.py")[0]?.message ?? "",
    /^the batch script runs this command once, as the job's one task \(--ntasks=1: SLURM_NTASKS=1, over its --ntasks-per-node=4\), .*drop --ntasks=1 \(keep --ntasks-per-node=4\) and start the program with srun$/,
    "the batch step: SLURM_NTASKS=1 there too",
  );
  assert.equal(run(below, "trainer = L.Trainer()", "python fit.py &").length, 0, "in the background");
  assert.equal(run(below, "trainer = L.Trainer()", "srun -n 1 python fit.py").length, 0, "a layout of its own");
  assert.equal(run(below, "trainer = L.Trainer()", "srun --gres=gpu:1 python fit.py").length, 0);
  assert.equal(run(below, "trainer = L.Trainer()", "CUDA_VISIBLE_DEVICES=0 srun python fit.py").length, 0);
  assert.equal(run(`${below}export CUDA_VISIBLE_DEVICES=0\n`, "trainer = L.Trainer()").length, 0);
  assert.equal(run(`${below}#SBATCH --gpus-per-task=4\n`, "trainer = L.Trainer(devices=4)").length, 0);
  assert.equal(run(below.replace("--nodes=1", "--nodes=2"), "trainer = L.Trainer(num_nodes=2)").length, 0);
  assert.equal(run(alone, "trainer = L.Trainer(num_nodes=2)").length, 0);
  assert.equal(run(below.replace("--ntasks=1", "--ntasks=2"), "trainer = L.Trainer()").length, 0);
  assert.equal(run(`${below}#SBATCH --job-name=interactive\n`, "trainer = L.Trainer()").length, 0);
  assert.equal(run(`${below}export SLURM_NTASKS=4\n`, "trainer = L.Trainer()").length, 0);
  const pinned = (pin: string) => run(below, "trainer = L.Trainer()", undefined, { "requirements.txt": pin }).length;
  assert.equal(pinned("pytorch-lightning==1.7.7\n"), 0, "1.7: its own processes where SLURM_NTASKS differs");
  assert.equal(pinned("pytorch-lightning<1.8\n"), 0);
  assert.equal(pinned("pytorch-lightning==1.9.5\n"), 1, "1.8 to 2.0: Slurm's tasks, no check");
  assert.equal(pinned("lightning>=2.0\n"), 1);
  // Fabric: with launch() (its launcher), not without.
  assert.equal(run(below, "fabric = L.Fabric(accelerator='cuda')\nfabric.launch()").length, 1);
  assert.equal(run(below, "fabric = L.Fabric(accelerator='cuda')").length, 0);
});

test("GPU022's Lightning check reads the program's own settings from its syntax tree: a comment or an unrelated string does not silence it", () => {
  const run = (program: string, line = "srun python fit.py --gpus 4") =>
    lintManifestCode(
      "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n" + line + "\n",
      "jobscript",
      "GPU022",
      {},
      join(project({ "fit.py": `import os\nimport lightning as L\n${program}\ntrainer.fit(None)\n` }), "job.sbatch"),
    ).length;
  const trainer = "trainer = L.Trainer(devices=4)";
  assert.equal(run(trainer), 1);
  // A cluster environment of its own (any `...Environment(...)` call), not one named in a comment or a string.
  assert.equal(run(`env = L.pytorch.plugins.environments.SLURMEnvironment(auto_requeue=False)\n${trainer}`), 0);
  assert.equal(run(`# SLURMEnvironment(auto_requeue=False) is chosen by Lightning\n${trainer}`), 1);
  assert.equal(run(`print("SLURMEnvironment() detected")\n${trainer}`), 1);
  assert.equal(
    run(`class Cluster(L.fabric.plugins.ClusterEnvironment):\n    pass\n${trainer}`),
    0,
    "a class of its own",
  );
  // Slurm's variables in os.environ: a SLURM_ key, or one not written out, changed; other keys are not.
  assert.equal(run(`os.environ["SLURM_NTASKS_PER_NODE"] = "4"\n${trainer}`), 0);
  assert.equal(run(`del os.environ["SLURM_NTASKS"]\n${trainer}`), 0, "a deletion");
  assert.equal(run(`os.environ.pop("SLURM_JOB_NAME", None)\n${trainer}`), 0);
  assert.equal(run(`for k, v in env.items():\n    os.environ[k] = v\n${trainer}`), 0, "a key not written out");
  assert.equal(run(`os.environ.update(env)\n${trainer}`), 0, "keys not known");
  assert.equal(run(`os.environ.update({"NCCL_DEBUG": "INFO"}, OMP_NUM_THREADS="1")\n${trainer}`), 1);
  assert.equal(run(`os.environ["MASTER_PORT"] = "12910"\nn = os.environ["SLURM_NTASKS"]\n${trainer}`), 1);
  assert.equal(run(`# os.environ["SLURM_NTASKS"] = "4"\n${trainer}`), 1);
  // Lightning's defaults named in the code (a string or a name), not in a comment.
  assert.equal(run(`os.environ.setdefault("PL_TRAINER_DEVICES", "1")\n${trainer}`), 0);
  assert.equal(run(`os.environ.update(LT_DEVICES="1")\n${trainer}`), 0);
  assert.equal(run(`# PL_TRAINER_DEVICES can override devices\n${trainer}`), 1);
  // Fabric validates in a `launch()` call; one in a comment is not a call.
  const fabric = "fabric = L.Fabric(accelerator='cuda', devices=4)\ntrainer = fabric";
  assert.equal(run(`${fabric}\nfabric.launch(main)`), 1);
  assert.equal(run(`${fabric}\n# fabric.launch() runs the check`), 0);
  // argparse defaults changed by `set_defaults()` are not read; the word in a comment changes nothing.
  const parsed =
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--gpus', type=int, default=1)\nargs = p.parse_args()\ntrainer = L.Trainer(devices=args.gpus)";
  assert.equal(run(parsed.replace("args = ", "p.set_defaults(gpus=2)\nargs = ")), 0);
  assert.equal(run(parsed.replace("args = ", "# p.set_defaults(gpus=2)\nargs = ")), 1);
});

test("GPU022's Lightning check: devices beyond the job's GPUs per node are refused when the Trainer is built (MisconfigurationException), not by the Slurm check", () => {
  const head = "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n";
  const [d, ...rest] = lightningJob(head, "trainer = L.Trainer(accelerator='gpu', devices=8)");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.match(d.message, /gets devices=8 but each task sees the job's 4 GPUs per node/);
  assert.match(
    d.message,
    /MisconfigurationException \("You requested gpu: \[0, 1, 2, 3, 4, 5, 6, 7\] But your machine only has: \[0, 1, 2, 3\]"/,
  );
  assert.match(d.message, /give it devices=4/);
  assert.doesNotMatch(d.message, /ValueError/);
  // Within the job's GPUs, the Slurm check's ValueError as before.
  assert.match(lightningJob(head, "trainer = L.Trainer(accelerator='gpu', devices=2)")[0].message, /ValueError/);
});
