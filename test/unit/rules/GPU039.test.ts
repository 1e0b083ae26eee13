import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyFix, lintCode, projectTree } from "../support/helpers";
import { initEngine, lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU039");

const SRC = 'import os\nimport torch\n\nrank = int(os.environ["RANK"])\ntorch.cuda.set_device(rank)\n';

test("GPU039: set_device(rank) with rank read from RANK: a preview warning at the argument, the source as related information, the LOCAL_RANK fix", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU039"), [], "preview: off by default");
  const [d, ...rest] = await lintCode(SRC, "GPU039", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 4, character: 22 }, end: { line: 4, character: 26 } });
  assert.equal(
    d.message,
    'rank is the global rank (os.environ["RANK"], line 4) used as a CUDA device (torch.cuda.set_device()): on the second node of a job with 8 GPUs a node the ranks are 8 to 15, and cuda:8 does not exist there (invalid device ordinal); use the local rank: int(os.environ["LOCAL_RANK"]) (torchrun sets it), or rank % torch.cuda.device_count()',
  );
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 3, character: 11 }, end: { line: 3, character: 29 } },
      message: 'the global rank is read here: os.environ["RANK"]',
    },
  ]);
  assert.equal(d.fix?.safe, false);
  assert.equal(d.fix?.title, 'Use int(os.environ["LOCAL_RANK"]) as the device');
  const fixed = applyFix(SRC, d);
  assert.equal(fixed, SRC.replace("set_device(rank)", 'set_device(int(os.environ["LOCAL_RANK"]))'));
  assert.deepEqual(await lintCode(fixed, "GPU039", { preview: true }), []);
});

test("GPU039: the fix keeps the read's form (.get with its default, the quotes) and is offered only for RANK read directly", async () => {
  const get = "import os\nimport torch\nr = int(os.environ.get('RANK', 0))\nx = torch.zeros(1).to(r)\n";
  const [g] = await lintCode(get, "GPU039", { preview: true });
  assert.equal(applyFix(get, g), get.replace(".to(r)", ".to(int(os.environ.get('LOCAL_RANK', 0)))"));
  // In an f-string the read must not reuse the string's quote: no fix there.
  const f = 'import os\nimport torch\nr = int(os.environ["RANK"])\nd = torch.device(f"cuda:{r}")\n';
  const [fs] = await lintCode(f, "GPU039", { preview: true });
  assert.equal(fs.range.start.line, 3);
  assert.equal(fs.fix, undefined);
  const fSingle = f.replace('f"cuda:{r}"', "f'cuda:{r}'");
  assert.equal(
    applyFix(fSingle, (await lintCode(fSingle, "GPU039", { preview: true }))[0]),
    fSingle.replace("{r}", '{int(os.environ["LOCAL_RANK"])}'),
  );
  // get_rank(), SLURM_PROCID, argparse defaults: reported without a fix, with the matching advice.
  const [a] = await lintCode(
    "import torch\nimport torch.distributed as dist\ntorch.cuda.set_device(dist.get_rank())\n",
    "GPU039",
    { preview: true },
  );
  assert.equal(a.fix, undefined);
  assert.match(
    a.message,
    /^dist\.get_rank\(\) is the global rank used as a CUDA device \(torch\.cuda\.set_device\(\)\)/,
  );
  const [s] = await lintCode(
    'import os\nimport torch\ntorch.cuda.set_device(int(os.environ["SLURM_PROCID"]))\n',
    "GPU039",
    { preview: true },
  );
  assert.match(s.message, /use the local rank: int\(os\.environ\["SLURM_LOCALID"\]\) \(srun sets it\)$/);
  assert.equal(s.fix, undefined);
  const [acc] = await lintCode(
    "import torch\nfrom accelerate import Accelerator\naccelerator = Accelerator()\nm = torch.nn.Linear(1, 1).cuda(accelerator.process_index)\n",
    "GPU039",
    { preview: true },
  );
  assert.match(acc.message, /use the local rank: accelerator\.local_process_index$/);
});

test("GPU039: every device slot (set_device, torch.device, .to, .cuda, device_ids, output_device, device_id, device=, device strings)", async () => {
  const head =
    "import torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nr = dist.get_rank()\n";
  const lines = [
    "torch.cuda.set_device(r)",
    "torch.cuda.device(r)",
    "torch.device(r)",
    'torch.device("cuda", r)',
    "m.to(r)",
    "m.to(device=r)",
    "m.cuda(r)",
    "DDP(m, device_ids=[r])",
    "DDP(m, device_ids=[0], output_device=r)",
    'dist.init_process_group("nccl", device_id=r)',
    "torch.zeros(1, device=r)",
    'f"cuda:{r}"',
    '"cuda:" + str(r)',
    '"cuda:{}".format(r)',
    '"cuda:%d" % r',
  ];
  const ds = await lintCode(head + lines.join("\n") + "\n", "GPU039", { preview: true });
  assert.deepEqual(
    ds.map((d) => d.range.start.line - 4),
    lines.map((_, i) => i),
  );
});

test("GPU039: silent for the local rank, rank % device_count(), parameters (mp.spawn workers), other functions' names, and unknown values", async () => {
  const silent = [
    'import os\nimport torch\ntorch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n',
    "import torch\nimport torch.distributed as dist\ntorch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())\n",
    "import torch\nimport torch.distributed as dist\nrank = dist.get_rank()\ndef worker(rank, world_size):\n    torch.cuda.set_device(rank)\n",
    "import torch\nimport torch.distributed as dist\ndef a():\n    r = dist.get_rank()\ndef b(r):\n    torch.cuda.set_device(r)\n",
    "import torch\nfrom utils import rank\ntorch.cuda.set_device(rank)\n",
    'import torch\nimport torch.distributed as dist\nrank = dist.get_rank()\nx = torch.zeros(1).to(torch.float16)\nprint(f"rank {rank}")\n',
  ];
  for (const code of silent) assert.deepEqual(await lintCode(code, "GPU039", { preview: true }), [], code);
});

test("GPU039 in the default set: the program reads its local rank too, and passes the global rank as the device", async () => {
  const src = [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "",
    "def main():",
    '    dist.init_process_group("nccl")',
    '    local_rank = int(os.environ["LOCAL_RANK"])',
    '    rank = int(os.environ["RANK"])',
    "    torch.cuda.set_device(rank)",
    "",
    "main()",
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(src, "GPU039");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 8);
  assert.deepEqual(
    d.related?.map((r) => [r.range.start.line, r.message]),
    [
      [7, 'the global rank is read here: os.environ["RANK"]'],
      [6, 'the local rank is read here: os.environ["LOCAL_RANK"]'],
    ],
  );
  // The fix uses the name the program keeps its local rank in.
  assert.equal(d.fix?.title, "Use local_rank as the device");
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(src, d);
  assert.equal(fixed, src.replace("set_device(rank)", "set_device(local_rank)"));
  assert.deepEqual(await lintCode(fixed, "GPU039", { preview: true }), []);
});

test("GPU039 default set: SLURM_LOCALID and Accelerate's local_process_index count as local rank reads; a local read in another function offers the LOCAL_RANK read instead of its name", async () => {
  const slurm =
    'import os\nimport torch\nlocal = int(os.environ["SLURM_LOCALID"])\nrank = int(os.environ["SLURM_PROCID"])\nx = torch.zeros(1).to(rank)\n';
  const [s] = await lintCode(slurm, "GPU039");
  assert.equal(s.range.start.line, 4);
  assert.equal(s.fix?.title, "Use local as the device");
  const acc =
    "import torch\nfrom accelerate import Accelerator\nacc = Accelerator()\nprint(acc.local_process_index)\ntorch.cuda.set_device(acc.process_index)\n";
  assert.equal((await lintCode(acc, "GPU039")).length, 1);
  const elsewhere =
    'import os\nimport torch\ndef helper():\n    return int(os.environ["LOCAL_RANK"])\ndef main():\n    rank = int(os.environ["RANK"])\n    torch.cuda.set_device(rank)\n';
  const [e] = await lintCode(elsewhere, "GPU039");
  assert.equal(e.fix?.title, 'Use int(os.environ["LOCAL_RANK"]) as the device');
  // Without any local rank read the finding stays in preview (single-node tests on the ecosystem corpus).
  assert.deepEqual(
    await lintCode(
      "import torch\nimport torch.distributed as dist\ntorch.cuda.set_device(dist.get_rank())\n",
      "GPU039",
    ),
    [],
  );
});

test("GPU039 follows a returned tuple element by element: a swapped unpacking in this file, and one of another project module's function", async () => {
  const same = [
    "import os",
    "import torch",
    "",
    "def envs():",
    '    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"])',
    "",
    "rank, local_rank = envs()",
    "torch.cuda.set_device(local_rank)",
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(same, "GPU039");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 7);
  assert.match(d.message, /^local_rank is the global rank \(os\.environ\["RANK"\], line 5\)/);
  // The first local-rank read of the file is the one inside envs(): named as it reads.
  assert.match(d.message, /use the local rank: os\.environ\["LOCAL_RANK"\], which this file reads on line 5$/);
  // The right order is silent.
  assert.deepEqual(
    await lintCode(same.replace("rank, local_rank = envs()", "local_rank, rank = envs()"), "GPU039"),
    [],
  );
});

test("GPU039 with the project: get_envs() in envs.py returns (local_rank, rank, world_size); train.py unpacks it swapped", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-rank-tuple-"));
  writeFileSync(
    join(dir, "envs.py"),
    'import os\n\n\ndef get_envs():\n    local_rank = int(os.getenv("LOCAL_RANK", -1))\n    rank = int(os.getenv("RANK", -1))\n    return local_rank, rank, int(os.getenv("WORLD_SIZE", 1))\n',
  );
  const train =
    "import torch\nfrom envs import get_envs\n\n\ndef main(args):\n    args.rank, args.local_rank, args.world_size = get_envs()\n    torch.cuda.set_device(args.local_rank)\n";
  writeFileSync(join(dir, "train.py"), train);
  const project = new ProjectIndex().lookupFor(join(dir, "train.py"), lookupOptions({}));
  const r = lintPython(train, { project, select: ["GPU039"] });
  r.tree?.delete();
  assert.equal(r.diagnostics.length, 1);
  const [d] = r.diagnostics;
  assert.equal(d.range.start.line, 6);
  assert.equal(d.severity, "warning");
  assert.match(
    d.message,
    /^args\.local_rank is the global rank \(get_envs\(\), line 6: it returns RANK there, read at envs\.py:6\)/,
  );
  assert.equal(d.related?.[0].message, "the global rank comes from here: get_envs() (read at envs.py:6)");
  // Unpacked in the order it is returned: silent; the file read by the lookup is a dependency (re-lint when envs.py changes).
  const ok = lintPython(train.replace("args.rank, args.local_rank", "args.local_rank, args.rank"), {
    project,
    select: ["GPU039"],
  });
  ok.tree?.delete();
  assert.deepEqual(ok.diagnostics, []);
  assert.ok([...project.deps()].some((f) => f.endsWith("envs.py")));
});

test("GPU039 follows an argument into the callee's device slot: a function of this file, and one of another project module", () => {
  const same = [
    "import os",
    "import torch.distributed as dist",
    "",
    'LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))',
    'RANK = int(os.getenv("RANK", -1))',
    "",
    "def zero_first(local_rank):",
    "    dist.barrier(device_ids=[local_rank])",
    "",
    "def load():",
    "    zero_first(RANK)",
    "    zero_first(local_rank=LOCAL_RANK)",
    "",
  ].join("\n");
  const r = lintPython(same, { select: ["GPU039"] });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => d.range.start.line),
    [10],
  );
  const [d] = r.diagnostics;
  assert.match(
    d.message,
    /^RANK is the global rank \(os\.getenv\("RANK", -1\), line 5\) used as a CUDA device \(passed as local_rank to zero_first\(\), which uses it in device_ids=\[…\] \(line 8\)\)/,
  );
  // The module-level LOCAL_RANK is the fix's name (the function reads the global).
  assert.equal(d.fix?.title, "Use LOCAL_RANK as the device");

  const dir = mkdtempSync(join(tmpdir(), "gp-rank-arg-"));
  writeFileSync(
    join(dir, "torch_utils.py"),
    "import torch.distributed as dist\n\n\ndef zero_first(local_rank: int):\n    if local_rank not in {-1, 0}:\n        dist.barrier(device_ids=[local_rank])\n",
  );
  const trainer =
    'import os\nfrom torch_utils import zero_first\n\nRANK = int(os.getenv("RANK", -1))\nLOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))\n\n\ndef build():\n    zero_first(RANK)\n';
  writeFileSync(join(dir, "trainer.py"), trainer);
  const project = new ProjectIndex().lookupFor(join(dir, "trainer.py"), lookupOptions({}));
  const p = lintPython(trainer, { project, select: ["GPU039"] });
  p.tree?.delete();
  assert.equal(p.diagnostics.length, 1);
  assert.match(
    p.diagnostics[0].message,
    /passed as local_rank to zero_first\(\), which uses it in device_ids=\[…\] \(torch_utils\.py:6\)/,
  );
  assert.ok([...project.deps()].some((f) => f.endsWith("torch_utils.py")));
  // A parameter the callee rebinds, or uses only after arithmetic, is not followed.
  const rebinds = lintPython(
    same.replace("def zero_first(local_rank):", "def zero_first(local_rank):\n    local_rank = 0"),
    { select: ["GPU039"] },
  );
  rebinds.tree?.delete();
  assert.deepEqual(rebinds.diagnostics, []);
});

test("GPU039 default set: a local rank read from a copy of the environment (a dict comprehension over the launcher's names) counts, and the fix uses its name", async () => {
  const src = [
    "import os",
    "import torch",
    "",
    "def setup():",
    '    env = {name: os.environ[name] for name in ("MASTER_ADDR", "RANK", "LOCAL_RANK", "WORLD_SIZE")}',
    '    rank = int(env["RANK"])',
    '    gpu = int(env["LOCAL_RANK"])',
    "    torch.cuda.set_device(rank)",
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(src, "GPU039");
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range, { start: { line: 7, character: 26 }, end: { line: 7, character: 30 } });
  assert.deepEqual(d.related?.[1], {
    range: { start: { line: 6, character: 14 }, end: { line: 6, character: 31 } },
    message: 'the local rank is read here: env["LOCAL_RANK"]',
  });
  assert.equal(d.fix?.title, "Use gpu as the device");
  assert.deepEqual(await lintCode(applyFix(src, d), "GPU039", { preview: true }), []);
  // A key of the copy that is not a local rank, or a dict that is no copy of the environment, is no local read.
  for (const other of ['gpu = int(env["WORLD_SIZE"])', 'gpu = int({"LOCAL_RANK": "0"}["LOCAL_RANK"])'])
    assert.deepEqual(await lintCode(src.replace('gpu = int(env["LOCAL_RANK"])', other), "GPU039"), [], other);
});

const TP_INIT = [
  "import os",
  "import torch",
  "import torch.distributed as dist",
  "",
  "",
  "def init_distributed():",
  '    rank = int(os.environ.get("RANK", "0"))',
  '    dist.init_process_group(backend="nccl")',
  "    torch.cuda.set_device(rank)",
  '    return torch.device(f"cuda:{rank}")',
  "",
  "",
  "def other():",
  "    torch.cuda.set_device(dist.get_rank())",
  "",
].join("\n");

test("GPU039 default set: the device chosen in the function that calls init_process_group (the program's own setup); elsewhere, in test modules, and where every launch says one node: preview", async () => {
  const found = await lintCode(TP_INIT, "GPU039");
  assert.deepEqual(
    found.map((d) => d.range.start.line),
    [8, 9],
    "the two slots beside init_process_group; other() has no init beside it",
  );
  assert.doesNotMatch(found[0].message, /several nodes/);
  assert.deepEqual(
    (await lintCode(TP_INIT, "GPU039", { preview: true })).map((d) => d.range.start.line),
    [8, 9, 13],
  );
  // pytest's test modules are one-node runs by design.
  assert.deepEqual(await lintCode(TP_INIT, "GPU039", { testModule: true }), []);
  // Every launch the project writes down says one node: --standalone in a README.
  const one = { script: "/p/README.md", line: 4, nodes: "one" as const, from: "--standalone", documented: true };
  assert.deepEqual(await lintCode(TP_INIT, "GPU039", { launchNodes: [one] }), []);
  // One that does not say (torchrun's default) keeps the finding.
  const unsaid = { ...one, nodes: null, from: "no --nnodes" };
  assert.equal((await lintCode(TP_INIT, "GPU039", { launchNodes: [one, unsaid] })).length, 2);
  // A module-level init beside a module-level device counts too; `from torch.distributed import init_process_group` as well.
  const flat =
    "import torch\nfrom torch.distributed import init_process_group, get_rank\ninit_process_group('nccl')\ntorch.cuda.set_device(get_rank())\n";
  assert.deepEqual(
    (await lintCode(flat, "GPU039")).map((d) => d.range.start.line),
    [3],
  );
  // Another library's init_process_group (not torch.distributed's) does not count.
  const other =
    "import torch\nimport torch.distributed as dist\nfrom mylib import init_process_group\ninit_process_group()\ntorch.cuda.set_device(dist.get_rank())\n";
  assert.deepEqual(await lintCode(other, "GPU039"), []);
});

test("GPU039 default set: a file the project starts on several nodes (a job script's #SBATCH --nodes=2, torchrun --nnodes=2), named in the message", async () => {
  const src =
    "import torch\nimport torch.distributed as dist\n\ndef setup():\n    torch.cuda.set_device(dist.get_rank())\n";
  assert.deepEqual(await lintCode(src, "GPU039"), [], "no init beside it, no local rank: preview");
  const several = {
    script: "/p/jobs/train.sbatch",
    line: 5,
    nodes: "several" as const,
    from: "#SBATCH --nodes=2",
    documented: false,
  };
  const [d, ...rest] = await lintCode(src, "GPU039", { launchNodes: [several] });
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 4);
  assert.match(
    d.message,
    /invalid device ordinal\); train\.sbatch:6 starts this file on several nodes \(#SBATCH --nodes=2\); use the local rank/,
  );
  // Even in a test module: the launch says it runs on several nodes.
  assert.equal((await lintCode(src, "GPU039", { launchNodes: [several], testModule: true })).length, 1);
});

test("GPU039 with the project: a README that documents the file's launch as --standalone keeps gate (3) silent, and the README becomes a dependency of the lint", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu039-docs-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "code"));
  const file = join(dir, "code", "demo.py");
  writeFileSync(file, TP_INIT);
  const lintWith = () => {
    clearSlurmLaunchCache(); // folder listings are kept 5 s (slurmLaunch.ts LISTING_TTL_MS)
    const lookup = new ProjectIndex().lookupFor(file, lookupOptions({}));
    const found = lintPython(TP_INIT, { select: ["GPU039"], project: lookup }).diagnostics;
    return { lines: found.map((d) => d.range.start.line), deps: [...lookup.deps()] };
  };
  assert.deepEqual(lintWith(), { lines: [8, 9], deps: [] }, "no document: gate (3) reports");
  writeFileSync(
    join(dir, "NOTES.md"),
    "Run it from code/:\n\n```bash\ntorchrun --standalone --nproc_per_node=2 demo.py\n```\n",
  );
  assert.deepEqual(lintWith(), { lines: [], deps: [join(dir, "NOTES.md")] });
  // A second documented launch that does not say one node: the finding is back.
  writeFileSync(
    join(dir, "NOTES.md"),
    "```bash\ntorchrun --standalone --nproc_per_node=2 demo.py\n```\n\n```bash\ntorchrun --nproc_per_node=8 code/demo.py\n```\n",
  );
  assert.deepEqual(lintWith().lines, [8, 9]);
});

test("GPU039: a torch.cuda device query with the global rank (get_device_properties(rank)) is a device slot too", async () => {
  const src =
    "import torch\nimport torch.distributed as dist\n\ndef setup():\n    dist.init_process_group('nccl')\n    r = dist.get_rank()\n    print(torch.cuda.get_device_properties(r).name)\n";
  const [d, ...rest] = await lintCode(src, "GPU039");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.match(d.message, /\(torch\.cuda\.get_device_properties\(\)\)/);
});

test("GPU039 with the project: a document in another branch of the tree, or above the project's root, names another demo.py: the finding stays", () => {
  const outer = mkdtempSync(join(tmpdir(), "gp-gpu039-docs-outer-"));
  const dir = join(outer, "proj");
  mkdirSync(join(dir, ".git"), { recursive: true });
  mkdirSync(join(dir, "code"));
  mkdirSync(join(dir, "other"));
  const file = join(dir, "code", "demo.py");
  writeFileSync(file, TP_INIT);
  const standalone = "```bash\ntorchrun --standalone --nproc_per_node=2 demo.py\n```\n";
  writeFileSync(join(dir, "other", "NOTES.md"), standalone);
  writeFileSync(join(outer, "NOTES.md"), standalone);
  clearSlurmLaunchCache();
  const lookup = new ProjectIndex().lookupFor(file, lookupOptions({}));
  const found = lintPython(TP_INIT, { select: ["GPU039"], project: lookup }).diagnostics;
  assert.deepEqual(
    found.map((d) => d.range.start.line),
    [8, 9],
  );
});

test("GPU039: device_map values (a dict literal, one assigned to the name passed, a bare rank) and transformers.pipeline(device=) are device slots", async () => {
  const head = "from accelerate import Accelerator\nfrom transformers import AutoModelForCausalLM, pipeline\n";
  const cases: Array<[string, number, number, string]> = [
    [
      'm = AutoModelForCausalLM.from_pretrained("m", device_map={"": Accelerator().process_index})\n',
      2,
      62,
      'device_map={"": …}',
    ],
    [
      'def load():\n    device_map = {"": Accelerator().process_index}\n    return AutoModelForCausalLM.from_pretrained("m", device_map=device_map)\n',
      3,
      22,
      'device_map={"": …}',
    ],
    [
      'm = AutoModelForCausalLM.from_pretrained("m", device_map=Accelerator().process_index)\n',
      2,
      57,
      'device_map={"": …}',
    ],
    ['p = pipeline("text-generation", model="m", device=Accelerator().process_index)\n', 2, 50, "pipeline(device=…)"],
  ];
  for (const [body, line, character, form] of cases) {
    const ds = await lintCode(head + body, "GPU039", { preview: true });
    assert.equal(ds.length, 1, body);
    assert.deepEqual(ds[0].range.start, { line, character }, body);
    assert.ok(ds[0].message.includes(`used as a CUDA device (${form})`), ds[0].message);
  }
  // The local index, a string device, "auto" and a name bound to something else stay silent.
  for (const body of [
    'm = AutoModelForCausalLM.from_pretrained("m", device_map={"": Accelerator().local_process_index})\n',
    'm = AutoModelForCausalLM.from_pretrained("m", device_map="auto")\n',
    'dm = "auto"\nm = AutoModelForCausalLM.from_pretrained("m", device_map=dm)\n',
    'p = pipeline("text-generation", model="m", device="cuda:0")\n',
    'def load(dm):\n    return AutoModelForCausalLM.from_pretrained("m", device_map=dm)\n',
  ])
    assert.deepEqual(await lintCode(head + body, "GPU039", { preview: true }), [], body);
});

test("GPU039: a rank passed to a class of the file whose constructor hands it to a library device parameter (sglang's load_model) is reported at the argument, in the default set beside init_process_group", async () => {
  const src = [
    "import torch.distributed as dist",
    "from sglang.bench_one_batch import load_model",
    "",
    "class Generator:",
    "    def __init__(self, server_args, port_args, tp_rank):",
    "        self.runner, _ = load_model(server_args, port_args, tp_rank)",
    "",
    "def main(server_args, port_args):",
    '    dist.init_process_group(backend="nccl")',
    "    Generator(server_args, port_args, tp_rank=dist.get_rank())",
    "    Generator(server_args, port_args, dist.get_rank())",
    "",
  ].join("\n");
  const ds = await lintCode(src, "GPU039");
  assert.deepEqual(
    ds.map((d) => [d.range.start.line, d.range.start.character]),
    [
      [9, 46],
      [9 + 1, 38],
    ],
  );
  assert.ok(
    ds[0].message.startsWith(
      "dist.get_rank() is the global rank used as a CUDA device (passed as tp_rank to Generator(), which uses it in load_model(tp_rank=…) (line 6))",
    ),
    ds[0].message,
  );
  // `self` is not an argument: a rank in the first position does not reach tp_rank; the local rank is fine.
  const shifted = src
    .replace("tp_rank=dist.get_rank())", "tp_rank=0)")
    .replace("Generator(server_args, port_args, dist.get_rank())", "Generator(dist.get_rank(), port_args, 0)");
  assert.deepEqual(await lintCode(shifted, "GPU039", { preview: true }), []);
  const local = src.replaceAll("dist.get_rank()", "dist.get_node_local_rank()");
  assert.deepEqual(await lintCode(local, "GPU039", { preview: true }), []);
});

test("GPU039: a rank bound in one branch of try/except or if/else, with an integer fallback in the other, is still the global rank after the statement", async () => {
  const tryForm = [
    "import torch",
    "import torch.distributed as dist",
    "",
    "def setup():",
    "    try:",
    '        dist.init_process_group("nccl")',
    "        rank = dist.get_rank()",
    "    except Exception:",
    "        rank = 0",
    '    torch.cuda.set_device(torch.device(f"cuda:{rank}"))',
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(tryForm, "GPU039", { preview: true });
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range.start, { line: 9, character: 47 });
  assert.equal(d.fix, undefined, "two bindings reach the use: no fix");
  const ifForm = tryForm
    .replace("    try:\n", "    if dist.is_available():\n")
    .replace("    except Exception:\n", "    else:\n");
  assert.equal((await lintCode(ifForm, "GPU039", { preview: true })).length, 1);
  // Branches that disagree (a local rank in the other) and a use inside the except branch stay silent.
  assert.deepEqual(
    await lintCode(tryForm.replace("rank = 0", 'rank = int(__import__("os").environ["LOCAL_RANK"])'), "GPU039", {
      preview: true,
    }),
    [],
  );
  const inside = tryForm.replace(
    '    torch.cuda.set_device(torch.device(f"cuda:{rank}"))',
    "        torch.cuda.set_device(rank)",
  );
  assert.deepEqual(await lintCode(inside, "GPU039", { preview: true }), []);
});

test('GPU039 follows a function that a package\'s __init__.py re-exports (from .prepare import prepare_moe) to its module, whose torch.device(f"{device_type}:{rank}") takes the rank as an ordinal', () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-rank-reexport-"));
  mkdirSync(join(dir, "pkg", "utils"), { recursive: true });
  writeFileSync(join(dir, "pkg", "__init__.py"), "");
  writeFileSync(
    join(dir, "pkg", "utils", "__init__.py"),
    'from .prepare import prepare_moe\n\n__all__ = ["prepare_moe"]\n',
  );
  writeFileSync(
    join(dir, "pkg", "utils", "prepare.py"),
    'import torch\n\n\ndef prepare_moe(model, rank=None, device_type="cuda"):\n    device = torch.device(f"{device_type}:{rank}")\n    return model.to(device)\n',
  );
  const plugin =
    "import torch\nfrom .utils import prepare_moe\n\n\ndef augment(model):\n    rank = torch.distributed.get_rank()\n    return prepare_moe(model, rank=rank)\n";
  writeFileSync(join(dir, "pkg", "plugin.py"), plugin);
  const project = new ProjectIndex().lookupFor(join(dir, "pkg", "plugin.py"), lookupOptions({}));
  const r = lintPython(plugin, { project, select: ["GPU039"], preview: true });
  r.tree?.delete();
  assert.equal(r.diagnostics.length, 1);
  assert.deepEqual(r.diagnostics[0].range.start, { line: 6, character: 35 });
  assert.match(
    r.diagnostics[0].message,
    /passed as rank to prepare_moe\(\), which uses it in torch\.device\(\) \(utils\/prepare\.py:5\)/,
  );
  assert.ok(
    [...project.deps()].some((f) => f.endsWith(join("utils", "__init__.py"))),
    "the re-exporting module is a dependency",
  );
  // A host:port string is not a device: only torch.device()'s argument is read this way.
  const other = lintPython('import torch\nrank = torch.distributed.get_rank()\naddr = f"{host}:{rank}"\n', {
    select: ["GPU039"],
    preview: true,
  });
  other.tree?.delete();
  assert.deepEqual(other.diagnostics, []);
});

test("GPU039: DeepSpeed's get_accelerator().set_device(rank) is a device slot; beside deepspeed.init_distributed() (which calls init_process_group) it is in the default set, elsewhere preview", async () => {
  const head =
    'import os\nimport deepspeed\nfrom deepspeed.accelerator import get_accelerator\n\n\ndef setup():\n    rank = int(os.environ["RANK"])\n    get_accelerator().set_device(rank)\n';
  const [d] = await lintCode(`${head}    deepspeed.init_distributed()\n`, "GPU039");
  assert.deepEqual(d.range.start, { line: 7, character: 33 });
  assert.match(
    d.message,
    /^rank is the global rank \(os\.environ\["RANK"\], line 7\) used as a CUDA device \(set_device\(device_index=…\)\)/,
  );
  assert.deepEqual(
    await lintCode(head, "GPU039"),
    [],
    "no local rank, no launch, no process-group setup: preview only",
  );
  assert.equal((await lintCode(head, "GPU039", { preview: true })).length, 1);
  // The fixed form: the local rank.
  assert.deepEqual(
    await lintCode(
      `${head.replace('os.environ["RANK"]', 'os.environ["LOCAL_RANK"]')}    deepspeed.init_distributed()\n`,
      "GPU039",
      { preview: true },
    ),
    [],
  );
});

test("GPU039 with the project: a pydantic field whose default_factory is another module's function returning RANK, read as self.global_rank in a validator, is the global rank; LOCAL_RANK's factory is not", () => {
  const dir = projectTree({
    "dist_env.py":
      'import os\n\n\ndef get_local_rank() -> int:\n    return int(os.environ.get("LOCAL_RANK", 0))\n\n\ndef get_global_rank() -> int:\n    return int(os.environ.get("RANK", 0))\n',
  });
  const config = (field: string) =>
    `import deepspeed\nfrom deepspeed.accelerator import get_accelerator\nfrom pydantic import BaseModel, Field, model_validator\n\nfrom dist_env import get_global_rank, get_local_rank\n\n\nclass TrainerConfig(BaseModel):\n    local_rank: int = Field(default_factory=get_local_rank)\n    global_rank: int = Field(default_factory=get_global_rank)\n\n    @model_validator(mode="after")\n    def init_dist(self):\n        get_accelerator().set_device(self.${field})\n        deepspeed.init_distributed()\n        return self\n`;
  const run = (text: string) => {
    const project = new ProjectIndex().lookupFor(join(dir, "trainer_config.py"), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU039"] });
    r.tree?.delete();
    return { found: r.diagnostics, deps: [...project.deps()] };
  };
  const { found, deps } = run(config("global_rank"));
  assert.equal(found.length, 1);
  assert.deepEqual(found[0].range.start, { line: 13, character: 37 });
  assert.match(
    found[0].message,
    /^self\.global_rank is the global rank \(get_global_rank, line 10: it returns RANK there, read at dist_env\.py:9\) used as a CUDA device/,
  );
  assert.ok(
    deps.some((f) => f.endsWith("dist_env.py")),
    "the module read becomes a dependency",
  );
  assert.deepEqual(run(config("local_rank")).found, []);
});

test("GPU039: a dataclass field's default and a plain class attribute reach self.x; a method's own later assignment wins", async () => {
  const dc =
    'import os\nfrom dataclasses import dataclass, field\nimport torch\nimport torch.distributed as dist\n\n\n@dataclass\nclass Env:\n    rank: int = field(default=int(os.environ["RANK"]))\n\n    def bind(self):\n        dist.init_process_group("nccl")\n        torch.cuda.set_device(self.rank)\n';
  const [d] = await lintCode(dc, "GPU039");
  assert.equal(d.range.start.line, 12);
  const attr = dc.replace(
    '    rank: int = field(default=int(os.environ["RANK"]))',
    '    rank = int(os.environ["RANK"])',
  );
  assert.equal((await lintCode(attr, "GPU039")).length, 1);
  const rebound = dc.replace(
    "        torch.cuda.set_device(self.rank)",
    '        self.rank = int(os.environ["LOCAL_RANK"])\n        torch.cuda.set_device(self.rank)',
  );
  assert.deepEqual(await lintCode(rebound, "GPU039", { preview: true }), []);
});

test("GPU039: vLLM's parallel_config.rank (also through a name bound to it) and TensorRT-LLM's mapping.rank are global ranks; a mapping outside TensorRT-LLM code and the local_rank beside them are not", async () => {
  const found = async (src: string) =>
    (await lintCode(src, "GPU039", { preview: true })).map((d) => d.message.split(" is the global rank")[0]);
  assert.deepEqual(
    await found(
      'import torch\n\n\ndef make(vllm_config):\n    pc = vllm_config.parallel_config\n    return torch.device(f"cuda:{pc.rank}")\n',
    ),
    ["pc.rank"],
  );
  assert.deepEqual(
    await found("import torch\n\n\ndef make(cfg):\n    torch.cuda.set_device(cfg.parallel_config.rank)\n"),
    ["cfg.parallel_config.rank"],
  );
  assert.deepEqual(
    await found(
      'import torch\nfrom tensorrt_llm.mapping import Mapping\n\n\ndef make(model_config):\n    return f"cuda:{model_config.mapping.rank}"\n',
    ),
    ["model_config.mapping.rank"],
  );
  assert.deepEqual(await found('import torch\n\n\ndef make(cfg):\n    return f"cuda:{cfg.mapping.rank}"\n'), []);
  assert.deepEqual(
    await found(
      'import torch\nfrom tensorrt_llm.mapping import Mapping\n\n\ndef make(m):\n    return f"cuda:{m.mapping.local_rank}"\n',
    ),
    [],
  );
});

test("GPU039 gate (4): vLLM's ParallelConfig.rank as a device outside test modules is in the default set, with the vLLM reason and torch.cuda.current_device() as the local device", async () => {
  const src =
    'import torch\n\n\ndef build_cache(vllm_config, blocks):\n    parallel_config = vllm_config.parallel_config\n    device = torch.device(f"cuda:{parallel_config.rank}")\n    return torch.empty(blocks, device=device)\n';
  const [d, ...rest] = await lintCode(src, "GPU039");
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range, { start: { line: 5, character: 34 }, end: { line: 5, character: 54 } });
  assert.equal(
    d.message,
    'parallel_config.rank is the global rank used as a CUDA device (f"cuda:{…}"): on the second node of a job with 8 GPUs a node the ranks are 8 to 15, and cuda:8 does not exist there (invalid device ordinal); vLLM documents ParallelConfig.rank as the global rank of a deployment that may span nodes; its workers\' GPU is their local_rank; use the local rank: torch.cuda.current_device() (the vLLM worker has already made its GPU on this node the current device)',
  );
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 5, character: 34 }, end: { line: 5, character: 54 } },
      message: "the global rank is read here: parallel_config.rank",
    },
  ]);
  assert.equal(d.fix, undefined, "no local-rank name to offer");
  // The same code in a test module: a single-node test, preview only.
  assert.deepEqual(await lintCode(src, "GPU039", { testModule: true }), []);
  assert.equal((await lintCode(src, "GPU039", { testModule: true, preview: true })).length, 1);
  // The fixed form (the worker's current device) and the rank modulo the node's GPUs: nothing.
  for (const fixed of [
    src.replace('f"cuda:{parallel_config.rank}"', '"cuda", torch.cuda.current_device()'),
    src.replace("parallel_config.rank}", "parallel_config.rank % torch.cuda.device_count()}"),
  ])
    assert.deepEqual(await lintCode(fixed, "GPU039", { preview: true }), []);
});

test("GPU039: a parameter annotated with vLLM's ParallelConfig holds the global rank (default set, gate 4); another library's ParallelConfig and an unannotated parameter do not", async () => {
  const src = (imp: string, ann: string) =>
    `import torch\n${imp}\n\n\ndef init_engine(model_config, parallel_config${ann}):\n    torch.cuda.set_device(parallel_config.rank)\n`;
  const vllm = await lintCode(src("from vllm.config import ParallelConfig", ": ParallelConfig"), "GPU039");
  assert.deepEqual(
    vllm.map((d) => [d.range.start.line, d.message.split(" is the global rank")[0]]),
    [[5, "parallel_config.rank"]],
  );
  assert.equal(
    (await lintCode(src("from vllm.config import ParallelConfig", ': "ParallelConfig"'), "GPU039")).length,
    1,
    "a string annotation resolves through the file's imports",
  );
  for (const [imp, ann] of [
    ["from sarathi.config import ParallelConfig", ": ParallelConfig"],
    ["from vllm.config import ParallelConfig", ""],
  ])
    assert.deepEqual(await lintCode(src(imp, ann), "GPU039", { preview: true }), [], `${imp} / '${ann}'`);
});

test("GPU039: TensorRT-LLM's mapping.rank and a parallel_config in a file that names neither library stay preview (not gate 4), each with its own local device", async () => {
  const trt =
    'import torch\nfrom tensorrt_llm._torch.model_config import ModelConfig\n\n\nclass VisionTower(torch.nn.Module):\n    def __init__(self, model_config: ModelConfig):\n        super().__init__()\n        self.device = f"cuda:{model_config.mapping.rank}"\n';
  assert.deepEqual(await lintCode(trt, "GPU039"), []);
  const [t] = await lintCode(trt, "GPU039", { preview: true });
  assert.match(
    t.message,
    /; use the local rank: model_config\.mapping\.local_rank \(rank % gpus_per_node\), or torch\.cuda\.current_device\(\)$/,
  );
  const other = "import torch\n\n\ndef place(cfg):\n    torch.cuda.set_device(cfg.parallel_config.rank)\n";
  assert.deepEqual(await lintCode(other, "GPU039"), []);
  const [o] = await lintCode(other, "GPU039", { preview: true });
  assert.match(o.message, /; use the local rank: the process's index on its node, or torch\.cuda\.current_device\(\)$/);
});

test("GPU039: a test module that reads its local rank is preview (single-node tests set and read LOCAL_RANK in a helper); a launch on several nodes still makes it default", async () => {
  const src =
    'import os\nimport torch\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\nrank = int(os.environ["RANK"])\ntorch.cuda.set_device(rank)\n';
  // Outside tests the local-rank read puts it in the default set (gate 1).
  const [d] = await lintCode(src, "GPU039");
  assert.deepEqual(d.range, { start: { line: 5, character: 22 }, end: { line: 5, character: 26 } });
  // In a test module: preview only.
  assert.deepEqual(await lintCode(src, "GPU039", { testModule: true }), []);
  assert.equal((await lintCode(src, "GPU039", { testModule: true, preview: true })).length, 1);
  // A job script that starts the test on several nodes: default again, and the message says why.
  const several = {
    script: "/proj/slurm/test.sbatch",
    line: 4,
    nodes: "several" as const,
    from: "#SBATCH --nodes=2",
    documented: false,
  };
  const [t, ...rest] = await lintCode(src, "GPU039", { testModule: true, launchNodes: [several] });
  assert.equal(rest.length, 0);
  assert.match(
    t.message,
    /test\.sbatch:5 starts this file on several nodes \(#SBATCH --nodes=2\); use the local rank: os\.environ\["LOCAL_RANK"\], which this file reads on line 4$/,
  );
});

test("GPU039: a method of the same class called on cls or self gives its return value; a device_map written into a dict that the call gets as **kwargs is a device slot (huggingface/trl#515)", async () => {
  const src = [
    "import torch",
    "from accelerate import Accelerator",
    "from transformers import AutoModelForCausalLM",
    "",
    "",
    "class ValueHead:",
    "    @classmethod",
    "    def _device(cls):",
    '        return Accelerator().process_index if torch.cuda.is_available() else "cpu"',
    "",
    "    @classmethod",
    "    def load(cls, name, **kwargs):",
    "        device = cls._device()",
    '        kwargs["device_map"] = {"": device}',
    "        return AutoModelForCausalLM.from_pretrained(name, **kwargs)",
    "",
    "    def reload(self, name, **kwargs):",
    '        kwargs["device_map"] = {"": self._device()}',
    "        kwargs = {}",
    "        return AutoModelForCausalLM.from_pretrained(name, **kwargs)",
    "",
    "    def again(self, name):",
    '        options = {"device_map": "auto"}',
    '        options["device_map"] = {"": self._device()}',
    "        return AutoModelForCausalLM.from_pretrained(name, **options)",
    "",
    "    def other(self, helper, name):",
    '        return AutoModelForCausalLM.from_pretrained(name, device_map={"": helper._device()})',
    "",
  ].join("\n");
  const found = (await lintCode(src, "GPU039", { preview: true })).map((d) => [
    d.range.start.line + 1,
    d.message.split(" is ")[0],
  ]);
  // load(): the classmethod's value, "cpu" deciding nothing (a literal, as an integer literal);
  // again(): the entry written after the dict literal. reload() rebinds kwargs after the entry; other()
  // calls _device on another object (not this class's receiver): silent.
  assert.deepEqual(found, [
    [14, "device"],
    [24, "self._device()"],
  ]);
  assert.deepEqual(await lintCode(src, "GPU039"), [], "no gate holds: preview only");
  // The same with the local index: silent.
  assert.deepEqual(
    await lintCode(src.replaceAll("process_index", "local_process_index"), "GPU039", { preview: true }),
    [],
  );
});

test("GPU039: DeepSpeed's deepspeed.comm.get_rank() is the global rank (beside deepspeed.init_distributed(): default set); get_local_rank() and get_rank(group) are not", async () => {
  const src = (call: string) =>
    `import deepspeed\nimport torch\nfrom deepspeed import comm as dist\n\nif __name__ == "__main__":\n    deepspeed.init_distributed()\n    torch.cuda.set_device(${call})\n`;
  const [d, ...rest] = await lintCode(src("dist.get_rank()"), "GPU039");
  assert.equal(rest.length, 0);
  assert.deepEqual([d.range.start.line, d.message.split(" is ")[0]], [6, "dist.get_rank()"]);
  assert.deepEqual(await lintCode(src("dist.get_local_rank()"), "GPU039", { preview: true }), []);
  assert.deepEqual(await lintCode(src("dist.get_rank(group)"), "GPU039", { preview: true }), []);
  assert.equal((await lintCode(src("deepspeed.comm.get_rank()"), "GPU039")).length, 1);
});

test("GPU039 gate (2) end to end: torchrun's options in a variable the script assigns once to a literal (--nnodes 2) start the file on several nodes; one the script does not assign says nothing", async () => {
  const { jobScriptsAround, launchNodesIn } = await import("../../../server/src/engine/slurmLaunch");
  const src =
    "import torch\nimport torch.distributed as dist\n\ndef setup():\n    torch.cuda.set_device(dist.get_rank())\n";
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu039-vars-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(join(dir, "pretrain.py"), src);
  const lintWith = async (script: string) => {
    writeFileSync(join(dir, "launch.sh"), script);
    clearSlurmLaunchCache();
    const launchNodes = launchNodesIn(join(dir, "pretrain.py"), jobScriptsAround(dir, [dir]));
    return (await lintCode(src, "GPU039", { launchNodes })).map((d) => d.message.replace(/^.*; (launch\.sh)/, "$1"));
  };
  assert.deepEqual(
    await lintWith(
      'NODES=2\nWORLD="--nproc_per_node 8 --nnodes $NODES --node_rank $NODE_RANK"\ntorchrun $WORLD pretrain.py --lr 1\n',
    ),
    [],
    "--node_rank $NODE_RANK is not known: so is WORLD",
  );
  const [d, ...rest] = await lintWith(
    "NODES=2\nWORLD=(--nproc_per_node 8 --nnodes $NODES)\ntorchrun ${WORLD[@]} pretrain.py\n",
  );
  assert.equal(rest.length, 0);
  assert.match(
    d,
    /^launch\.sh:3 starts this file on several nodes \(--nnodes=2 \(in \$\{WORLD\[@\]\}\)\); use the local rank/,
  );
  assert.equal((await lintWith('WORLD="--nnodes 2 --nproc_per_node 8"\ntorchrun $WORLD pretrain.py\n')).length, 1);
  // Not known (set by the caller, or assigned twice): silent, as for a torchrun without --nnodes.
  assert.deepEqual(await lintWith("torchrun $DISTRIBUTED_ARGS pretrain.py\n"), []);
  assert.deepEqual(
    await lintWith('WORLD="--nnodes 2"\n[ -n "$ONE" ] && WORLD="--standalone"\ntorchrun $WORLD pretrain.py\n'),
    [],
  );
});

test("GPU039 with the project: a helper module that a file started on several nodes uses (torchrun --nnodes=2 train.py, which imports it) is in the default set, named in the message; not when the launch says one node, nothing started imports it, or it is a test module", async () => {
  await initEngine();
  const helper =
    'import torch\nimport torch.distributed as dist\n\n\ndef get_device_name():\n    if dist.is_initialized():\n        rank = dist.get_rank()\n        return f"cuda:{rank}"\n    return "cuda"\n';
  const train =
    'import torch\nfrom helpers.device_utils import get_device_name\n\n\ndef main():\n    model = torch.nn.Linear(4, 4).to(get_device_name())\n\n\nif __name__ == "__main__":\n    main()\n';
  const run = (launch: string, trainText = train, helperPath = "helpers/device_utils.py") => {
    const dir = projectTree({
      "helpers/__init__.py": "",
      [helperPath]: helper,
      "train.py": trainText,
      "launch.sh": `#!/bin/bash\n${launch}\n`,
    });
    clearSlurmLaunchCache();
    const file = join(dir, helperPath);
    const { options } = resolveLintOptions(file, {});
    const project = new ProjectIndex().lookupFor(file, lookupOptions({}));
    return lintPython(helper, { ...options, select: ["GPU039"], project }).diagnostics;
  };
  const [d, ...rest] = run("torchrun --nnodes=2 --nproc_per_node=8 --node_rank=$NODE_RANK train.py");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 7);
  assert.match(
    d.message,
    /; train\.py, which launch\.sh:2 starts on several nodes \(--nnodes=2\), uses this module \(train\.py:6\); use the local rank/,
  );
  assert.deepEqual(run("torchrun --standalone --nproc_per_node=8 train.py"), []);
  assert.deepEqual(
    run("torchrun --nnodes=2 --nproc_per_node=8 train.py", "import torch\n\nprint(torch.cuda.device_count())\n"),
    [],
  );
  const testTrain = train.replace("helpers.device_utils", "helpers.test_device_utils");
  assert.equal(run("torchrun --nnodes=2 --nproc_per_node=8 train.py", testTrain, "helpers/device_utils.py").length, 0);
  assert.deepEqual(
    run("torchrun --nnodes=2 --nproc_per_node=8 train.py", testTrain, "helpers/test_device_utils.py"),
    [],
  );
  // The same test module's finding without the launch is preview too (it was never default).
  assert.equal(run("torchrun --nnodes=2 --nproc_per_node=8 train.py").length, 1);
});

test("GPU039 with the project: in a helper module used by a file started on several nodes, only code that file runs counts: a function it calls (or that one it calls calls), not one only another file calls, nor the module's __main__ block", async () => {
  await initEngine();
  // utils.py: pick_gpu() (global rank as device) is called by warmup(); seed_all() touches no device.
  const utils =
    'import torch\nimport torch.distributed as dist\n\n\ndef seed_all(n):\n    torch.manual_seed(n)\n\n\ndef pick_gpu():\n    return torch.device("cuda", dist.get_rank())\n\n\ndef warmup():\n    return torch.ones(1, device=pick_gpu())\n\n\nif __name__ == "__main__":\n    x = torch.zeros(1).to(dist.get_rank())\n';
  const messages = (pretrain: string) => {
    const dir = projectTree({
      "utils.py": utils,
      "pretrain.py": pretrain,
      "bench.py": "from utils import pick_gpu\n\nprint(pick_gpu())\n",
      "multi.sh": "#!/bin/bash\ntorchrun --nnodes=2 --nproc_per_node=4 pretrain.py\n",
      "one.sh": "#!/bin/bash\ntorchrun --nproc_per_node=4 bench.py\n",
    });
    clearSlurmLaunchCache();
    const file = join(dir, "utils.py");
    const { options } = resolveLintOptions(file, {});
    const project = new ProjectIndex().lookupFor(file, lookupOptions({}));
    return lintPython(utils, { ...options, select: ["GPU039"], project }).diagnostics.map(
      (d) => `${d.range.start.line + 1}: ${/uses this module \(([^)]*)\)/.exec(d.message)?.[1] ?? "-"}`,
    );
  };
  // pretrain.py only seeds: pick_gpu runs on one node only (bench.py), the __main__ block never.
  assert.deepEqual(messages("from utils import seed_all\n\nseed_all(0)\n"), []);
  // pretrain.py calls warmup(), which calls pick_gpu(): the device runs on several nodes.
  assert.deepEqual(messages("import utils\n\nutils.seed_all(0)\nutils.warmup()\n"), ["10: pretrain.py:4"]);
  // Calling pick_gpu() itself counts too; an import alone runs none of the functions.
  assert.deepEqual(messages("from utils import pick_gpu\n\nd = pick_gpu()\n"), ["10: pretrain.py:3"]);
  assert.deepEqual(messages("import utils\n"), []);
});

test("GPU039 gate (3) through the files that use a module: a setup helper whose every user the project starts on one node only (--standalone, --nnodes=1) is preview; a user started without a node count or on several nodes, a user's document that says otherwise, another file started on several nodes, or no launch of a user at all keep the finding", async () => {
  await initEngine();
  // common/dist_setup.py: the program's distributed setup, with the global rank as the device.
  const helper =
    'import torch\nimport torch.distributed as dist\n\n\ndef setup_ddp():\n    dist.init_process_group("nccl")\n    rank = dist.get_rank()\n    torch.cuda.set_device(rank)\n    return rank\n';
  const trainer =
    'from common.dist_setup import setup_ddp\n\n\ndef run():\n    rank = setup_ddp()\n    print(rank)\n\n\nif __name__ == "__main__":\n    run()\n';
  const lines = (files: Record<string, string>, preview = false) => {
    const dir = projectTree({ "common/__init__.py": "", "common/dist_setup.py": helper, ...files });
    clearSlurmLaunchCache();
    const file = join(dir, "common/dist_setup.py");
    const { options } = resolveLintOptions(file, {});
    const project = new ProjectIndex().lookupFor(file, lookupOptions({}));
    return lintPython(helper, { ...options, preview, select: ["GPU039"], project }).diagnostics.map(
      (d) => d.range.start.line + 1,
    );
  };
  const pretrain = { "pretrain.py": trainer };
  // No launch of any file: gate (3) reports, as before.
  assert.deepEqual(lines(pretrain), [8]);
  // The one user, started only with --standalone (a script in a subfolder): one node, the rank is the local rank.
  const standalone = {
    ...pretrain,
    "scripts/pretrain.sh": "#!/bin/bash\ntorchrun --standalone --nproc_per_node=8 pretrain.py\n",
  };
  assert.deepEqual(lines(standalone), []);
  assert.deepEqual(lines(standalone, true), [8], "still a preview finding");
  // Two users, each started on one node (--nnodes=1, and a one-node Slurm job).
  const two = {
    ...standalone,
    "finetune.py": trainer,
    "jobs/finetune.sbatch":
      "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\nsrun torchrun --nnodes=1 --nproc_per_node=4 finetune.py\n",
  };
  assert.deepEqual(lines(two), []);
  // A user started without a node count (torchrun's default says nothing): the finding stays.
  assert.deepEqual(lines({ ...two, "run_ft.sh": "#!/bin/bash\ntorchrun --nproc_per_node=4 finetune.py\n" }), [8]);
  // A user started on several nodes: gate (2) names it.
  assert.deepEqual(
    lines({ ...two, "run_ft.sh": "#!/bin/bash\ntorchrun --nnodes=2 --nproc_per_node=4 finetune.py\n" }),
    [8],
  );
  // A user's README documents a two-node launch.
  assert.deepEqual(
    lines({ ...standalone, "README.md": "```bash\ntorchrun --nnodes=2 --nproc_per_node=8 pretrain.py\n```\n" }),
    [8],
  );
  // Another file started on several nodes, which the reach does not tie to this module: not one node for sure.
  assert.deepEqual(
    lines({ ...standalone, "bench.py": "print(1)\n", "bench.sh": "#!/bin/bash\ntorchrun --nnodes=4 bench.py\n" }),
    [8],
  );
  // The file started on one node does not run the setup (it imports another module): no user seen, the finding stays.
  assert.deepEqual(
    lines({
      "pretrain.py": "import torch\n\nprint(torch.cuda.device_count())\n",
      "scripts/pretrain.sh": "#!/bin/bash\ntorchrun --standalone pretrain.py\n",
    }),
    [8],
  );
});
