import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

/** Preview on: these tests document every check of the rule, preview ones too (ecosystemPatterns.test.ts tests the default set). */
const PREVIEW = { preview: true } as const;

fixtureTests("GPU011");

const C14 =
  'import torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\ndist.init_process_group("nccl")\nnet = DDP(torch.nn.Linear(4, 4).cuda())\n';

test("GPU011 sits on init_process_group, is a warning and says what NCCL then does", async () => {
  const [d] = await lintCode(C14, "GPU011", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 4, character: 0 }, end: { line: 4, character: 31 } });
  assert.equal(d.severity, "warning");
  assert.match(
    d.message,
    /is followed by `torch\.nn\.Linear\(4, 4\)\.cuda\(\)` \(line 6\) with no torch\.cuda\.set_device\(local_rank\) before it/,
  );
  assert.match(d.message, /GPU 0 in every rank/);
});

test("GPU011 fix inserts set_device(LOCAL_RANK) (and `import os`); re-linting is clean", async () => {
  const [d] = await lintCode(C14, "GPU011", PREVIEW);
  assert.equal(d.fix?.title, 'Insert torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before init_process_group');
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(C14, d);
  assert.equal(
    fixed,
    'import os\nimport torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\ntorch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\ndist.init_process_group("nccl")\nnet = DDP(torch.nn.Linear(4, 4).cuda())\n',
  );
  assert.deepEqual(await lint(fixed, PREVIEW), []);
});

test("GPU011 fix reuses an existing local_rank variable and keeps `from __future__` first", async () => {
  const src =
    'from __future__ import annotations\nimport os\nimport torch\nimport torch.distributed as dist\nlocal_rank = int(os.environ["LOCAL_RANK"])\ndist.init_process_group(backend="nccl")\ndist.barrier()\n';
  const [d] = await lintCode(src, "GPU011", PREVIEW);
  assert.equal(
    applyFix(src, d),
    'from __future__ import annotations\nimport os\nimport torch\nimport torch.distributed as dist\nlocal_rank = int(os.environ["LOCAL_RANK"])\ntorch.cuda.set_device(local_rank)\ndist.init_process_group(backend="nccl")\ndist.barrier()\n',
  );
  const noOs =
    'from __future__ import annotations\nimport torch\nimport torch.distributed as dist\ndist.init_process_group("nccl")\nx = torch.ones(1).cuda()\n';
  const [d2] = await lintCode(noOs, "GPU011", PREVIEW);
  assert.ok(applyFix(noOs, d2).startsWith("from __future__ import annotations\nimport os\nimport torch\n"));
});

test("GPU011 constant devices in a DDP file are warnings (preview) with a local_rank fix", async () => {
  const src =
    'import os\nimport torch\nimport torch.distributed as dist\nlocal_rank = int(os.environ["LOCAL_RANK"])\ntorch.cuda.set_device(0)\ndist.init_process_group("nccl")\nx = torch.ones(1, device="cuda:0")\n';
  const [a, b] = await lintCode(src, "GPU011", PREVIEW);
  assert.equal(a.severity, "warning");
  assert.deepEqual(a.range, { start: { line: 4, character: 0 }, end: { line: 4, character: 24 } });
  assert.match(
    a.message,
    /`torch\.cuda\.set_device\(0\)` is a constant device in a distributed script \(init_process_group at line 6\)/,
  );
  assert.deepEqual(b.range, { start: { line: 6, character: 25 }, end: { line: 6, character: 33 } });
  const fixedA = applyFix(src, a);
  assert.ok(fixedA.includes("torch.cuda.set_device(local_rank)\n"));
  const fixedB = applyFix(src, b);
  assert.ok(fixedB.includes('x = torch.ones(1, device=f"cuda:{local_rank}")\n'));
  assert.deepEqual(await lintCode(applyFix(fixedA, (await lintCode(fixedA, "GPU011", PREVIEW))[0]), "GPU011"), []);
});

test("GPU011 LOCAL_RANK without default is information only where no env:// process group is created", async () => {
  const src = 'import os\nrank = int(os.environ["LOCAL_RANK"])\n';
  const [d] = await lintCode(src, "GPU011", PREVIEW);
  assert.equal(d.severity, "information");
  assert.deepEqual(d.range, { start: { line: 1, character: 11 }, end: { line: 1, character: 35 } });
  assert.match(d.message, /KeyError: 'LOCAL_RANK'/);
  assert.equal(applyFix(src, d), 'import os\nrank = int(os.environ.get("LOCAL_RANK", "0"))\n');
  const tcp =
    src +
    'import torch.distributed as dist\ndist.init_process_group("gloo", init_method="tcp://10.0.0.1:23456", rank=rank, world_size=2)\n';
  assert.equal(
    (await lintCode(tcp, "GPU011", PREVIEW)).length,
    1,
    "an explicit tcp:// rendezvous does not need torchrun",
  );
});

test("GPU011 LOCAL_RANK: a file with a SLURM_LOCALID fallback (srun sets no LOCAL_RANK) is not reported", async () => {
  const plain = 'import os\nrank = int(os.environ["LOCAL_RANK"])\n';
  const slurm =
    'import os\nif "SLURM_LOCALID" in os.environ:\n    rank = int(os.environ["SLURM_LOCALID"])\nelse:\n    rank = int(os.environ["LOCAL_RANK"])\n';
  const codes = async (src: string) => (await lint(src, { preview: true })).filter((d) => d.code === "GPU011").length;
  assert.equal(await codes(plain), 1);
  assert.equal(await codes(slurm), 0);
});

// Issue 23 item 4: under srun the local rank is SLURM_LOCALID (srun sets no LOCAL_RANK; measured,
// test/fixtures/slurm/python-launch/measured.md). A DDP script that takes its device from it is right.
test("GPU011: SLURM_LOCALID is a valid local rank for set_device and device_ids (preview on: nothing)", async () => {
  const src = [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "from torch.nn.parallel import DistributedDataParallel as DDP",
    "",
    'local_rank = int(os.environ["SLURM_LOCALID"])',
    'rank = int(os.environ["SLURM_PROCID"])',
    'world_size = int(os.environ["SLURM_NTASKS"])',
    "torch.cuda.set_device(local_rank)",
    'dist.init_process_group("nccl", rank=rank, world_size=world_size)',
    "model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])",
    'x = torch.zeros(2, device=f"cuda:{local_rank}")',
    "",
  ].join("\n");
  assert.deepEqual(await lintCode(src, "GPU011", { preview: true }), []);
  // With init before set_device and a barrier between: still reported (the device is the current one, GPU 0).
  const late = src
    .replace("torch.cuda.set_device(local_rank)\n", "")
    .replace("model = DDP", "dist.barrier()\ntorch.cuda.set_device(local_rank)\nmodel = DDP");
  assert.equal((await lintCode(late, "GPU011")).length, 1);
});

test("GPU011 (preview): a constant device in the other branch of the `if` that creates the process group (the single-process path) is not reported; in the same branch it is", async () => {
  const src = (device: string) =>
    `import torch\nimport torch.distributed as dist\n\n\ndef main(local_rank):\n    if local_rank != -1:\n        torch.cuda.set_device(local_rank)\n        dist.init_process_group(backend="nccl")\n${device}\n    return device\n`;
  const elseBranch = src('    else:\n        device = torch.device("cuda:0")');
  assert.deepEqual(await lintCode(elseBranch, "GPU011", { preview: true }), []);
  const sameBranch = src('        device = torch.device("cuda:0")');
  assert.deepEqual(
    (await lintCode(sameBranch, "GPU011", { preview: true })).map((d) => d.range.start.line),
    [8],
  );
});

/** A setup helper that creates the process group, and its caller that then works on the current device. */
const helperProgram = (callerBefore: string, between = "") =>
  [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "",
    "def setup_dist():",
    '    dist.init_process_group(backend="nccl")',
    "    return dist.get_rank()",
    "",
    "def choose_gpu():",
    '    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    "",
    "def main():",
    ...(callerBefore ? [`    ${callerBefore}`] : []),
    "    rank = setup_dist()",
    ...(between ? [`    ${between}`] : []),
    "    model = torch.nn.Linear(4, 4).cuda()",
    "    dist.barrier()",
    "",
    'if __name__ == "__main__":',
    "    main()",
    "",
  ].join("\n");

test("GPU011 (preview) follows a setup helper back to its caller: the init in the helper, the current-device work after the call", async () => {
  assert.deepEqual(await lintCode(helperProgram(""), "GPU011"), [], "preview only: the default set is silent");
  const found = await lintCode(helperProgram(""), "GPU011", PREVIEW);
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.severity]),
    [[5, "warning"]],
  );
  assert.match(
    found[0].message,
    /is followed, after `setup_dist\(\)` returns \(line 13\), by `torch\.nn\.Linear\(4, 4\)\.cuda\(\)` \(line 14\) with no torch\.cuda\.set_device/,
  );
  assert.deepEqual(
    found[0].related?.map((r) => [r.range.start.line, r.message]),
    [
      [12, "the function that creates the process group returns here"],
      [13, "runs on the current device (GPU 0 in every rank)"],
    ],
  );
});

test("GPU011 leaves the helper's caller alone where a device is chosen: before the call, by a function of the file between, or in the helper", async () => {
  const quiet = async (text: string, why: string) =>
    assert.deepEqual(
      await lintCode(text, "GPU011", PREVIEW).then((ds) => ds.filter((d) => d.severity === "warning")),
      [],
      why,
    );
  await quiet(helperProgram('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))'), "set_device before the call");
  await quiet(helperProgram("", "choose_gpu()"), "a function of the file that calls set_device, between");
  await quiet(helperProgram("", "utils.pick_device(rank)"), "a callee whose name speaks of devices, between");
  const inHelper = helperProgram("").replace(
    "    return dist.get_rank()",
    '    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n    return dist.get_rank()',
  );
  await quiet(inHelper, "the helper sets the device before it returns");
  const viaWrapper = helperProgram("").replace(
    "    return dist.get_rank()",
    "    platform.set_device(dist.get_rank())\n    return dist.get_rank()",
  );
  await quiet(
    viaWrapper,
    "the helper sets the device through a platform wrapper (AReaL's current_platform.set_device)",
  );
  const deep = helperProgram("", "engine = build_engine(rank)").replace(
    "def main():",
    "def build_engine(rank):\n    engine = Engine()\n    engine.bind_gpu(rank)\n    return engine\n\ndef main():",
  );
  await quiet(deep, "a function of the file between that calls something that may choose the device");
  const explicit = helperProgram("")
    .replace(".cuda()", ".to(f\"cuda:{os.environ['LOCAL_RANK']}\")")
    .replace("    dist.barrier()\n", "");
  await quiet(explicit, "the caller names its device");
});

test("GPU011 (preview) still follows a setup helper past a function of the file that only moves a module with .cuda()", async () => {
  const text = helperProgram("", "net = build_net()").replace(
    "def main():",
    "def build_net():\n    return torch.nn.Linear(2, 2).cuda()\n\ndef main():",
  );
  const found = await lintCode(text, "GPU011", PREVIEW);
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.severity]),
    [[5, "warning"]],
  );
});

/** The DDP tutorial's shape: ddp_setup() creates the group, main() then builds a Trainer whose constructor does the CUDA work. */
const trainerProgram = (initBody: string, mainBefore = "") =>
  [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "from torch.nn.parallel import DistributedDataParallel as DDP",
    "",
    "def ddp_setup():",
    '    dist.init_process_group(backend="nccl")',
    "",
    "class Trainer:",
    "    def __init__(self, model):",
    ...initBody.split("\n").map((l) => `        ${l}`),
    "",
    "def main():",
    "    ddp_setup()",
    ...(mainBefore ? [`    ${mainBefore}`] : []),
    "    trainer = Trainer(torch.nn.Linear(4, 4))",
    "",
    'if __name__ == "__main__":',
    "    main()",
    "",
  ].join("\n");

test("GPU011 (preview) follows the setup helper's caller into a constructor of the file that works on the current device", async () => {
  const text = trainerProgram("self.model = DDP(model.cuda())");
  assert.deepEqual(await lintCode(text, "GPU011"), [], "preview only: the default set is silent");
  const found = await lintCode(text, "GPU011", PREVIEW);
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.severity]),
    [[6, "warning"]],
  );
  assert.match(
    found[0].message,
    /is followed, after `ddp_setup\(\)` returns \(line 14\), by `Trainer\(torch\.nn\.Linear\(4, 4\)\)` \(line 15\), which runs `model\.cuda\(\)` \(line 11\) with no torch\.cuda\.set_device/,
  );
  assert.deepEqual(
    found[0].related?.map((r) => [r.range.start.line, r.message]),
    [
      [13, "the function that creates the process group returns here"],
      [14, "this call runs the work below"],
      [10, "runs on the current device (GPU 0 in every rank)"],
    ],
  );
  const fn = text
    .replace("class Trainer:\n    def __init__(self, model):\n", "def build(model):\n")
    .replace(/^ {8}/m, "    ")
    .replace("Trainer(", "build(");
  assert.equal((await lintCode(fn, "GPU011", PREVIEW)).length, 1, "a module function of the file, too");
});

test("GPU011 (preview) stays silent in the constructor where the device is chosen or named, or the work is not in its own body", async () => {
  const quiet = async (text: string, why: string) => assert.deepEqual(await lintCode(text, "GPU011", PREVIEW), [], why);
  await quiet(
    trainerProgram('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\nself.model = DDP(model.cuda())'),
    "the constructor sets the device first",
  );
  // DDP with device_ids and a module on that device: ProcessGroupNCCL takes a collective's device
  // from its tensors, so this is not work on the current device (the rule's page says why).
  await quiet(
    trainerProgram('k = int(os.environ["LOCAL_RANK"])\nself.model = DDP(model.to(k), device_ids=[k])'),
    "explicit device and device_ids",
  );
  await quiet(
    trainerProgram("def later(m):\n    return m.cuda()\nself.later = later"),
    "a function nested in the constructor, which may never run",
  );
  await quiet(
    trainerProgram("self.model = DDP(model.cuda())", "pick_gpu()"),
    "a call between that may choose the device",
  );
});

/** A settings dataclass whose gpu_id keeps its default while the setup writes the local rank to another attribute. */
const attributeProgram = (rankTarget: string, build = "Settings()", extra = "") =>
  [
    "import os",
    "from dataclasses import dataclass",
    "import torch",
    "import torch.distributed as dist",
    "",
    "@dataclass",
    "class Settings:",
    "    gpu_id: int = 0",
    "    seed: int = 1",
    "",
    "def setup(cfg):",
    '    dist.init_process_group("nccl")',
    `    cfg.${rankTarget} = int(os.environ["LOCAL_RANK"])`,
    ...(extra ? [`    ${extra}`] : []),
    "    return cfg",
    "",
    "class Runner:",
    "    def __init__(self, cfg):",
    "        self.cfg = cfg",
    "        torch.cuda.set_device(self.cfg.gpu_id)",
    '        self.device = torch.device("cuda", self.cfg.gpu_id)',
    "",
    `Runner(setup(${build}))`,
    "",
  ].join("\n");

test("GPU011 (preview) reports a device read from a dataclass field that only holds its default while the local rank went to another attribute", async () => {
  const text = attributeProgram("gpu");
  assert.deepEqual(await lintCode(text, "GPU011"), [], "preview only");
  const found = (await lintCode(text, "GPU011", PREVIEW)).filter((d) => /only ever holds its default/.test(d.message));
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.severity]),
    [[18, "warning"]],
    "one finding per field, at its first read",
  );
  assert.match(
    found[0].message,
    /`torch\.cuda\.set_device\(self\.cfg\.gpu_id\)` reads `self\.cfg\.gpu_id`, which only ever holds its default 0 \(line 8\): the local rank is written to `cfg\.gpu` \(line 13\)/,
  );
});

test("GPU011 (preview) leaves a defaulted field alone where something may set it", async () => {
  const quiet = async (text: string, why: string) =>
    assert.deepEqual(
      (await lintCode(text, "GPU011", PREVIEW)).filter((d) => /only ever holds its default/.test(d.message)),
      [],
      why,
    );
  await quiet(attributeProgram("gpu_id"), "the local rank goes to the field read");
  await quiet(attributeProgram("gpu", "Settings(gpu_id=1)"), "built with arguments");
  await quiet(attributeProgram("gpu", "Settings(**load())"), "built from a mapping");
  await quiet(attributeProgram("gpu", "Settings()", "cfg.gpu_id = cfg.gpu"), "assigned in the file");
  await quiet(attributeProgram("gpu", "Settings()", 'setattr(cfg, "gpu_id", 1)'), "named in a string");
  await quiet(attributeProgram("gpu", "HfArgumentParser(Settings).parse()"), "filled by a parser");
  await quiet(attributeProgram("gpu").replace("    cfg.gpu =", "    other.gpu ="), "the rank goes to another object");
  await quiet(attributeProgram("gpu").replace('    dist.init_process_group("nccl")\n', ""), "no process group");
});
