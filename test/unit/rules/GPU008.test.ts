import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

/** Preview on: these tests document every check of the rule, preview ones too (ecosystemPatterns.test.ts tests the default set). */
const PREVIEW = { preview: true } as const;

fixtureTests("GPU008");

const C21 =
  "import threading\nimport torch\n\n\ndef worker():\n    torch.cuda.set_device(1)\n    print(torch.cuda.current_device())\n\n\nt = threading.Thread(target=worker)\nt.start()\n";

test("GPU008 in a thread target is a warning on the call, pointing at the thread start", async () => {
  const [d] = await lintCode(C21, "GPU008", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 5, character: 4 }, end: { line: 5, character: 28 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /runs in thread function `worker` \(started at line 10\)/);
  assert.match(d.message, /other threads stay on device 0/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 9, character: 4 }, end: { line: 9, character: 35 } });
});

test("GPU008 fix scopes the device with `with torch.cuda.device(n):`; re-linting is clean", async () => {
  const [d] = await lintCode(C21, "GPU008", PREVIEW);
  assert.equal(d.fix?.title, "Use `with torch.cuda.device(1):` for the rest of the block");
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(C21, d);
  assert.equal(
    fixed,
    "import threading\nimport torch\n\n\ndef worker():\n    with torch.cuda.device(1):\n        print(torch.cuda.current_device())\n\n\nt = threading.Thread(target=worker)\nt.start()\n",
  );
  assert.deepEqual(await lint(fixed, PREVIEW), []);
});

test("GPU008 fix keeps a trailing comment and blank lines, and refuses to indent multi-line strings", async () => {
  const src =
    "import torch\n\n\ndef run(gpu):\n    torch.cuda.set_device(gpu)  # pick the GPU\n\n    x = torch.ones(1).cuda()\n    return x\n";
  const [d] = await lintCode(src, "GPU008", PREVIEW);
  assert.equal(
    applyFix(src, d),
    "import torch\n\n\ndef run(gpu):\n    with torch.cuda.device(gpu):  # pick the GPU\n\n        x = torch.ones(1).cuda()\n        return x\n",
  );
  const doc = 'import torch\n\n\ndef run(gpu):\n    torch.cuda.set_device(gpu)\n    print("""a\nb""")\n';
  const [d2] = await lintCode(doc, "GPU008", PREVIEW);
  assert.equal(d2.fix, undefined);
});

test("GPU008 outside threads is information, with no fix at module level", async () => {
  const src = 'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nimport torch\ntorch.cuda.set_device(1)\n';
  const [d] = await lintCode(src, "GPU008", PREVIEW);
  assert.equal(d.severity, "information");
  assert.deepEqual(d.range, { start: { line: 3, character: 0 }, end: { line: 3, character: 24 } });
  assert.match(d.message, /PyTorch discourages/);
  assert.match(d.message, /CUDA_VISIBLE_DEVICES at launch/);
  assert.equal(d.fix, undefined);
});

test("GPU008 never fires on the distributed pattern (c15)", async () => {
  const c15 =
    'import os\nimport torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\ntorch.cuda.set_device(local_rank)\ndist.init_process_group("nccl")\nnet = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])\n';
  assert.deepEqual(await lintCode(c15, "GPU008", PREVIEW), []);
  const args =
    "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--local_rank', type=int)\nargs = p.parse_args()\ntorch.cuda.set_device(args.local_rank)\n";
  assert.deepEqual(await lintCode(args, "GPU008", PREVIEW), []);
});

test("GPU008 resolves aliases: `from torch.cuda import set_device`", async () => {
  const src =
    "from torch.cuda import set_device\nimport threading\n\ndef w():\n    set_device(1)\n    print(1)\n\nthreading.Thread(target=w).start()\n";
  const [d] = await lintCode(src, "GPU008", PREVIEW);
  assert.equal(d.severity, "warning");
  assert.equal(d.fix, undefined, "no name for torch.cuda in the file to write `with ...device(1):`");
});

const TRAIN_ON_GPU1 =
  'import torch\nfrom transformers import Trainer, TrainingArguments\n\ntorch.cuda.set_device(1)\nargs = TrainingArguments(output_dir="out")\ntrainer = Trainer(model=None, args=args)\n';

test("GPU008 default set: set_device(1) then TrainingArguments, which sets cuda:0 again (transformers#23410)", async () => {
  const [d, ...rest] = await lintCode(TRAIN_ON_GPU1, "GPU008");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 3, character: 0 }, end: { line: 3, character: 24 } });
  assert.match(d.message, /is undone by `TrainingArguments\(\.\.\.\)` \(line 5\)/);
  assert.match(d.message, /CUDA_VISIBLE_DEVICES=1/);
  assert.equal(d.fix, undefined);
  assert.deepEqual(d.related?.[0].range, { start: { line: 4, character: 7 }, end: { line: 4, character: 24 } });
});

test("GPU008 training arguments: the device forms, TRL's configurations, a function and the __main__ guard", async () => {
  for (const dev of ['"cuda:2"', 'torch.device("cuda", 1)', 'torch.device("cuda:3")']) {
    const src = TRAIN_ON_GPU1.replace("set_device(1)", `set_device(${dev})`);
    assert.equal((await lintCode(src, "GPU008")).length, 1, dev);
  }
  const trl =
    'import torch\nfrom trl import SFTConfig, SFTTrainer\n\n\ndef main():\n    torch.cuda.set_device(1)\n    with open("cfg") as f:\n        cfg = SFTConfig(output_dir=f.read())\n    SFTTrainer(model="m", args=cfg).train()\n';
  assert.equal((await lintCode(trl, "GPU008"))[0]?.range.start.line, 5);
  const guard =
    'import torch\nimport transformers\n\ntorch.cuda.set_device(1)\nif __name__ == "__main__":\n    args = transformers.Seq2SeqTrainingArguments(output_dir="o")\n';
  assert.equal((await lintCode(guard, "GPU008")).length, 1);
});

test("GPU008 training arguments: silent where the reset is not certain", async () => {
  const silent = [
    // ordinal 0, or a variable
    TRAIN_ON_GPU1.replace("set_device(1)", "set_device(0)"),
    TRAIN_ON_GPU1.replace("set_device(1)", "set_device(gpu)"),
    // CPU training, DeepSpeed, or ** that may hold either
    TRAIN_ON_GPU1.replace('output_dir="out"', 'output_dir="out", use_cpu=True'),
    TRAIN_ON_GPU1.replace('output_dir="out"', 'output_dir="out", no_cuda=flag'),
    TRAIN_ON_GPU1.replace('output_dir="out"', 'output_dir="out", deepspeed="ds.json"'),
    TRAIN_ON_GPU1.replace('output_dir="out"', "**cfg"),
    // built before the set_device, in another branch, in a conditional expression, in another function
    'import torch\nfrom transformers import TrainingArguments\n\nargs = TrainingArguments(output_dir="out")\ntorch.cuda.set_device(1)\n',
    'import torch\nfrom transformers import TrainingArguments\n\nif fast:\n    torch.cuda.set_device(1)\nelse:\n    args = TrainingArguments(output_dir="out")\n',
    'import torch\nfrom transformers import TrainingArguments\n\ntorch.cuda.set_device(1)\nargs = TrainingArguments(output_dir="o") if train else None\n',
    'import torch\nfrom transformers import TrainingArguments\n\ntorch.cuda.set_device(1)\n\n\ndef build():\n    return TrainingArguments(output_dir="o")\n',
    // a distributed program: the arguments take the local rank (another check's business)
    'import os\nimport torch\nfrom transformers import TrainingArguments\n\ntorch.cuda.set_device(1)\nrank = int(os.environ["LOCAL_RANK"])\nargs = TrainingArguments(output_dir="o")\n',
    // another library's TrainingArguments
    'import torch\nfrom mylib import TrainingArguments\n\ntorch.cuda.set_device(1)\nargs = TrainingArguments(output_dir="o")\n',
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU008"), [], src);
});
