import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";
import { isVllmServerImage, parseLaunchLine, vllmServerArgs } from "../../../server/src/engine/launch/commandLine";
import { parseShell } from "../../../server/src/engine/manifests/shell";
import { SourceText } from "../../../server/src/engine/manifests/source";
import { lintNotebook, type CellInput } from "../../../server/src/engine/notebook";
import { initEngine } from "../../../server/src/engine/lint";

manifestFixtureTests("GPU040");
manifestDocExampleTest("GPU040", "jobscript");

const lineOf = (text: string) => {
  const c = parseShell(new SourceText(text)).commands[0];
  return parseLaunchLine(c.words, c.assignments);
};
const two = { machine: { gpuCount: 2, uuids: [] } };

test("GPU040 launch model: launcher, processes and environment of a command line", () => {
  const t = lineOf(
    "CUDA_VISIBLE_DEVICES=0,1 srun --ntasks=1 env -u X NCCL_DEBUG=INFO python3 -u -m torch.distributed.launch --nproc-per-node=4 t.py --lr 1",
  );
  assert.equal(t.launcher, "torchrun");
  assert.equal(t.underSrun, true);
  assert.equal(t.processes?.value, "4");
  assert.deepEqual([...t.inlineEnv.keys()], ["CUDA_VISIBLE_DEVICES", "NCCL_DEBUG"]);
  const a = lineOf(
    "accelerate launch --config-file cfg.yaml --num-machines 2 --num_processes=16 --gpu_ids 0,1,2,3 train.py --num_processes 99",
  );
  assert.deepEqual(
    [a.launcher, a.processes?.value, a.machines?.value, a.gpuIds?.value, a.configFile?.value],
    ["accelerate", "16", "2", "0,1,2,3", "cfg.yaml"],
  );
  const d = lineOf("deepspeed --include localhost:0,1 train.py --num_gpus 8");
  assert.deepEqual([d.launcher, d.processes, d.gpuIds?.value], ["deepspeed", null, "localhost:0,1"]);
  assert.equal(lineOf("python train.py --nproc_per_node 8").launcher, "other");
  assert.equal(lineOf("env -i torchrun --nproc_per_node 2 t.py").clearsEnv, true);
});

test("GPU040 shell script: inline prefix and earlier export are followed; a bare assignment and an expansion are not", () => {
  assert.equal(
    lintManifestCode("CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=4 t.py\n", "jobscript", "GPU040")[0].severity,
    "error",
  );
  const exp = lintManifestCode(
    "export CUDA_VISIBLE_DEVICES=0\ntorchrun --nproc_per_node=2 t.py\n",
    "jobscript",
    "GPU040",
  );
  assert.equal(exp.length, 1);
  assert.equal(exp[0].severity, "warning");
  assert.match(
    exp[0].message,
    /^torchrun starts 2 workers per node \(--nproc_per_node 2, LOCAL_RANK 0\.\.1\) but only 1 GPU is visible to them \(CUDA_VISIBLE_DEVICES="0", exported on line 1\): the worker with LOCAL_RANK 1 has no cuda:LOCAL_RANK/,
  );
  assert.deepEqual(
    lintManifestCode(
      "CUDA_VISIBLE_DEVICES=0\nexport CUDA_VISIBLE_DEVICES\ntorchrun --nproc_per_node=2 t.py\n",
      "jobscript",
      "GPU040",
    ).map((d) => d.range.start.line),
    [2],
  );
  assert.deepEqual(
    lintManifestCode("CUDA_VISIBLE_DEVICES=0\ntorchrun --nproc_per_node=2 t.py\n", "jobscript", "GPU040", two),
    [],
  );
  assert.deepEqual(
    lintManifestCode(
      "export CUDA_VISIBLE_DEVICES=0\nunset CUDA_VISIBLE_DEVICES\ntorchrun --nproc_per_node=2 t.py\n",
      "jobscript",
      "GPU040",
    ),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=$1\ntorchrun --nproc_per_node=2 t.py\n", "jobscript", "GPU040", two),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=0\nenv -i torchrun --nproc_per_node=2 t.py\n", "jobscript", "GPU040"),
    [],
  );
});

test("GPU040 machine count: only for plain shell scripts, and only when the machine is known", () => {
  const text = "torchrun --nproc_per_node=4 t.py\n";
  assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040"), []);
  const d = lintManifestCode(text, "jobscript", "GPU040", two);
  assert.equal(d.length, 1);
  assert.match(d[0].message, /only 2 GPUs are visible to them \(this machine's GPU count\)/);
  assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040", { machine: { gpuCount: 4, uuids: [] } }), []);
  assert.deepEqual(lintManifestCode(`#SBATCH --gres=gpu:8\n${text}`, "jobscript", "GPU040", two), []);
  assert.deepEqual(
    lintManifestCode("deepspeed --include localhost:1,2 t.py\n", "jobscript", "GPU040", two).map((x) =>
      x.message.slice(0, 62),
    ),
    ["deepspeed --include names GPU 2, but only GPUs 0..1 are there "],
  );
});

test("GPU040 Dockerfile: exec and shell forms, ENTRYPOINT + CMD, ENV of the last stage only", () => {
  const d = lintManifestCode(
    'FROM x\nENV CUDA_VISIBLE_DEVICES=0\nCMD ["torchrun", "--nproc_per_node=2", "t.py"]\n',
    "dockerfile",
    "GPU040",
  );
  assert.equal(d.length, 1);
  assert.deepEqual(d[0].range, { start: { line: 2, character: 17 }, end: { line: 2, character: 37 } });
  assert.equal(
    lintManifestCode(
      "FROM x\nENV CUDA_VISIBLE_DEVICES=0\nCMD torchrun --nproc_per_node=2 t.py\n",
      "dockerfile",
      "GPU040",
    ).length,
    1,
  );
  assert.deepEqual(
    lintManifestCode(
      "FROM x\nENV CUDA_VISIBLE_DEVICES=0\nFROM y\nCMD torchrun --nproc_per_node=2 t.py\n",
      "dockerfile",
      "GPU040",
    ),
    [],
  );
  assert.deepEqual(
    lintManifestCode(
      "FROM x\nCMD torchrun --nproc_per_node=2 t.py\nENV CUDA_VISIBLE_DEVICES=0\n",
      "dockerfile",
      "GPU040",
    ),
    [],
  );
});

test("GPU040 compose: count, device_ids and environment; count: all is not read", () => {
  const svc = (extra: string) =>
    `services:\n  t:\n    image: x\n    command: ["torchrun", "--nproc_per_node=4", "t.py"]\n${extra}`;
  const dev = (spec: string) =>
    `    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              ${spec}\n              capabilities: [gpu]\n`;
  assert.equal(lintManifestCode(svc(dev("count: 2")), "compose", "GPU040")[0].severity, "error");
  assert.equal(lintManifestCode(svc(dev('device_ids: ["0", "1", "2"]')), "compose", "GPU040").length, 1);
  assert.deepEqual(lintManifestCode(svc(dev("count: 4")), "compose", "GPU040"), []);
  assert.deepEqual(lintManifestCode(svc(dev("count: all")), "compose", "GPU040"), []);
  assert.equal(
    lintManifestCode(
      svc('    environment:\n      CUDA_VISIBLE_DEVICES: "0,1"\n' + dev("count: 4")),
      "compose",
      "GPU040",
    ).length,
    1,
  );
});

test("GPU040 Kubernetes: command + args, sh -c scripts, the nvidia.com/gpu limit", () => {
  const pod = (cmd: string, limit: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: x\n${cmd}      resources:\n        limits:\n          nvidia.com/gpu: ${limit}\n`;
  const d = lintManifestCode(
    pod('      command: ["sh", "-c", "torchrun --nproc_per_node=8 t.py"]\n', "4"),
    "yaml",
    "GPU040",
  );
  assert.equal(d.length, 1);
  assert.equal(d[0].range.start.line, 8);
  assert.match(d[0].message, /the container's GPU request, nvidia.com\/gpu: 4/);
  assert.deepEqual(
    lintManifestCode(
      pod('      command: ["torchrun"]\n      args: ["--nproc_per_node=4", "t.py"]\n', "4"),
      "yaml",
      "GPU040",
    ),
    [],
  );
  assert.equal(
    lintManifestCode(
      pod('      command: ["torchrun"]\n      args: ["--nproc_per_node=4", "t.py"]\n', "2"),
      "yaml",
      "GPU040",
    ).length,
    1,
  );
  assert.deepEqual(
    lintManifestCode(
      pod('      command: ["torchrun", "--nproc_per_node=4", "t.py"]\n', '"1"').replace('"1"', "1"),
      "yaml",
      "GPU040",
    ).length,
    1,
  );
});

test("GPU040 accelerate: YAML config num_processes per machine vs gpu_ids, and --config_file read next to the script", () => {
  const cfg =
    "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\ngpu_ids: 0,1\nnum_machines: 1\nnum_processes: 4\n";
  const d = lintManifestCode(cfg, "yaml", "GPU040");
  assert.equal(d.length, 1);
  assert.match(d[0].message, /^num_processes: 4 but gpu_ids lists 2 GPUs/);
  assert.deepEqual(lintManifestCode(cfg.replace("num_processes: 4", "num_processes: 2"), "yaml", "GPU040"), []);
  assert.deepEqual(lintManifestCode(cfg.replace("gpu_ids: 0,1", "gpu_ids: all"), "yaml", "GPU040"), []);
  const dir = mkdtempSync(join(tmpdir(), "gp-acc-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "configs"));
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "configs", "two.yaml"), cfg.replace("num_processes: 4", "num_processes: 2"));
  const script =
    "accelerate launch --config_file configs/two.yaml --num_processes 4 train.py\naccelerate launch --config_file configs/two.yaml train.py\n";
  const r = lintManifest(script, "jobscript", {}, { file: join(dir, "scripts", "run.sh") }).diagnostics.filter(
    (x) => x.code === "GPU040",
  );
  assert.deepEqual(
    r.map((x) => x.range.start.line),
    [0],
  );
  assert.match(r[0].message, /--gpu_ids 0,1 from two\.yaml/);
  assert.deepEqual(
    lintManifest(script, "jobscript", {}, {}).diagnostics.filter((x) => x.code === "GPU040"),
    [],
  );
});

test("GPU040 deepspeed: --num_gpus with --include is refused; CUDA_VISIBLE_DEVICES is ignored with --num_gpus", () => {
  const r = lintManifestCode("deepspeed --num_gpus 2 --include localhost:0,1 t.py\n", "jobscript", "GPU040");
  assert.equal(r[0].severity, "error");
  assert.match(r[0].message, /Cannot specify num_nodes\/gpus with include\/exclude/);
  const ign = lintManifestCode("export CUDA_VISIBLE_DEVICES=2,3\ndeepspeed --num_gpus 2 t.py\n", "jobscript", "GPU040");
  assert.deepEqual(
    ign.map((x) => x.range.start.line),
    [1],
  );
  assert.match(ign[0].message, /^deepspeed ignores CUDA_VISIBLE_DEVICES="2,3"/);
  assert.deepEqual(lintManifestCode("export CUDA_VISIBLE_DEVICES=2,3\ndeepspeed t.py\n", "jobscript", "GPU040"), []);
  assert.deepEqual(
    lintManifestCode(
      "export CUDA_VISIBLE_DEVICES=2,3\ndeepspeed --hostfile h --num_gpus 2 t.py\n",
      "jobscript",
      "GPU040",
    ),
    [],
  );
});

test("GPU040: a shell script without #SBATCH gets no job-script finding (GPU021)", () => {
  const d = lintManifest("export CUDA_VISIBLE_DEVICES=0\ntorchrun --nproc_per_node=1 t.py\n", "jobscript").diagnostics;
  assert.deepEqual(d, []);
});

test("GPU040: the launched script writes CUDA_VISIBLE_DEVICES from its own --device option: the ids on the line are the visible GPUs", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-dev-"));
  const py = [
    "import argparse",
    "import os",
    "",
    "parser = argparse.ArgumentParser()",
    'parser.add_argument("--device", default="0", help="cuda device(s), i.e. 0 or 0,1,2,3")',
    'parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int,',
    '                    default=int(os.environ.get("LOCAL_RANK", -1)))',
    "args = parser.parse_args()",
    'os.environ["CUDA_VISIBLE_DEVICES"] = args.device',
    "import torch",
    "",
  ].join("\n");
  writeFileSync(join(dir, "train.py"), py);
  const sh = join(dir, "train.sh");
  const run = (line: string) => lintManifestCode(`#!/bin/bash\n${line}\n`, "jobscript", "GPU040", {}, sh);
  const [d, ...rest] = run("python -m torch.distributed.launch --nproc_per_node 8 train.py --batch 32 --device 0,1");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [1, 35, 53]);
  assert.equal(
    d.message,
    "torchrun starts 8 workers per node (--nproc_per_node 8, LOCAL_RANK 0..7) but only 2 GPUs are visible to them (CUDA_VISIBLE_DEVICES=\"0,1\": train.py sets it from --device 0,1): the 6 workers with LOCAL_RANK 2..7 have no cuda:LOCAL_RANK ('invalid device ordinal' when selected), and ranks sharing a GPU make NCCL fail; start 2 per node",
  );
  assert.equal(d.related?.[0].range.start.character, 74);
  // --device=0,1 and a once-assigned variable are read; the script's write wins over an export.
  assert.equal(run("torchrun --nproc_per_node=4 train.py --device=0,1").length, 1);
  assert.equal(
    run("DEV=0,1,2\nexport CUDA_VISIBLE_DEVICES=0,1,2,3\ntorchrun --nproc_per_node=4 train.py --device $DEV").length,
    1,
  );
  // Fixed, unknown or absent: silent.
  assert.deepEqual(run("python -m torch.distributed.launch --nproc_per_node 2 train.py --device 0,1"), []);
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --device $GPUS"), []);
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --device cuda"), []);
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --batch 32"), []);
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py -- --device 0,1"), []);
  // A script that writes the variable twice, or from something else, is not followed.
  writeFileSync(
    join(dir, "train.py"),
    py.replace("import torch", 'if args.local_rank == -1:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch'),
  );
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --device 0,1"), []);
  writeFileSync(join(dir, "train.py"), py.replace("= args.device", "= args.device.replace(' ', '')"));
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --device 0,1"), []);
  // The option's destination decides: --gpus with dest="device" is the one read.
  writeFileSync(join(dir, "train.py"), py.replace('"--device", default="0"', '"--gpus", dest="device", default="0"'));
  assert.equal(run("torchrun --nproc_per_node 8 train.py --gpus 0,1").length, 1);
  assert.deepEqual(run("torchrun --nproc_per_node 8 train.py --device 0,1"), []);
  // Without a file (an unsaved buffer) nothing is read.
  assert.deepEqual(lintManifestCode("torchrun --nproc_per_node 8 train.py --device 0,1\n", "jobscript", "GPU040"), []);
});

test("GPU040: literals of a file the script sources (source env.sh) and options given through a variable ($EXTRA expands to --multi_gpu) are read; a missing override file and an unsaved buffer are not", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-source-"));
  writeFileSync(
    join(dir, "env.sh.example"),
    'export TRAINING_NUM_PROCESSES=10\nexport TRAINING_NUM_MACHINES=1\nexport EXTRA="--multi_gpu"\n',
  );
  const script =
    '#!/bin/bash\nsource env.sh.example\n[ -f env.sh ] && source env.sh\n\naccelerate launch ${EXTRA} --mixed_precision=bf16 \\\n    --num_processes="${TRAINING_NUM_PROCESSES}" --num_machines="${TRAINING_NUM_MACHINES}" \\\n    train.py --lr 1e-4\n';
  const one = { machine: { gpuCount: 1, uuids: [] } };
  const found = (text: string, file: string | null) =>
    lintManifest(text, "jobscript", one, { file }).diagnostics.filter((x) => x.code === "GPU040");
  const d = found(script, join(dir, "train.sh"));
  assert.equal(d.length, 1);
  assert.equal(d[0].range.start.line, 5);
  assert.match(
    d[0].message,
    /^accelerate launch starts 10 workers per node \(--num_processes 10, LOCAL_RANK 0\.\.9\) but only 1 GPU is visible/,
  );
  // The script's own assignment wins over the sourced one; without the sourced file, or unsaved, nothing is known.
  assert.deepEqual(
    found(
      script.replace("source env.sh.example\n", "source env.sh.example\nTRAINING_NUM_PROCESSES=1\n"),
      join(dir, "train.sh"),
    ),
    [],
  );
  assert.deepEqual(found(script.replace("source env.sh.example", "source missing.sh"), join(dir, "train.sh")), []);
  // A name the script assigns otherwise (twice, or from an expansion) is unknown: the sourced value does not stand in.
  for (const own of ["TRAINING_NUM_PROCESSES=2\nTRAINING_NUM_PROCESSES=3\n", "TRAINING_NUM_PROCESSES=$1\n"])
    assert.deepEqual(
      found(script.replace("source env.sh.example\n", `source env.sh.example\n${own}`), join(dir, "train.sh")),
      [],
      own,
    );
  assert.deepEqual(found(script, null), []);
});

test('GPU040: a launch-options variable whose value expands an earlier literal (ARGS="--nproc_per_node $GPUS_PER_NODE") is read as bash expands it at the assignment', async () => {
  const script = (gpus: string) =>
    `#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\n\nGPUS_PER_NODE=${gpus}\nLAUNCH_ARGS="--nproc_per_node $GPUS_PER_NODE --master_port 6001"\n\ntorchrun $LAUNCH_ARGS finetune.py --fp16 true\n`;
  const [d, ...rest] = lintManifestCode(script("8"), "jobscript", "GPU040");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.match(d.message, /torchrun starts 8 workers per node \(--nproc_per_node 8/);
  assert.match(d.message, /only 2 GPUs are visible to them/);
  assert.deepEqual(lintManifestCode(script("2"), "jobscript", "GPU040"), [], "the corrected count");
  // A name assigned after the options variable, a positional parameter, a command substitution or a
  // single-quoted part is not substituted: nothing is read.
  for (const value of ['"--nproc_per_node $1"', '"--nproc_per_node $(nproc)"', "'--nproc_per_node $GPUS_PER_NODE'"]) {
    const text = script("8").replace('"--nproc_per_node $GPUS_PER_NODE --master_port 6001"', value);
    assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040"), [], value);
  }
  const later = `#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\nLAUNCH_ARGS="--nproc_per_node $GPUS_PER_NODE"\nGPUS_PER_NODE=8\ntorchrun $LAUNCH_ARGS finetune.py\n`;
  assert.deepEqual(lintManifestCode(later, "jobscript", "GPU040"), []);
});

test("GPU040 and GPU045 read a notebook's shell lines as a script: %env reaches later ! lines, a !export or a bare !N=8 reaches none, IPython's {n} stays unknown; findings sit on their cell's line and name cells", async () => {
  await initEngine();
  const cells: CellInput[] = [
    { kind: "code", text: "import torch\nprint(torch.cuda.device_count())\n" },
    { kind: "code", text: "%env CUDA_VISIBLE_DEVICES=0\n" },
    { kind: "code", text: "!pip install accelerate\n!torchrun --nproc_per_node=2 train.py --lr 1e-4\n" },
    { kind: "code", text: "!export N=8\n!CUDA_VISIBLE_DEVICES=3 python train.py\n" },
    {
      kind: "code",
      text: "n = 4\n!torchrun --nproc_per_node={n} train.py\n!N=8\n!torchrun --nproc_per_node=$N train.py\n",
    },
    // Continued on the next line (IPython joins them): read as one command, as the shell reads it.
    { kind: "code", text: "!torchrun --nproc_per_node=4 \\\n    train.py --lr 1e-4\n" },
  ];
  const run = (gpuCount: number | null) =>
    lintNotebook(cells, { machine: { gpuCount, uuids: [] } }).diagnostics.filter(
      (d) => d.code === "GPU040" || d.code === "GPU045",
    );
  const [d, continued, ...rest] = run(null);
  assert.equal(rest.length, 0, "without the machine only the %env export counts");
  assert.deepEqual(
    [continued.code, continued.cell, continued.range.start.line, continued.range.start.character],
    ["GPU040", 5, 0, 10],
  );
  assert.equal(d.code, "GPU040");
  assert.equal(d.cell, 2);
  assert.deepEqual(d.range, { start: { line: 1, character: 10 }, end: { line: 1, character: 28 } });
  assert.match(
    d.message,
    /only 1 GPU is visible to them \(CUDA_VISIBLE_DEVICES="0", set with %env on cell 2, line 1\)/,
  );
  const withMachine = run(2);
  assert.deepEqual(
    withMachine.map((x) => [x.code, x.cell, x.range.start.line, x.range.start.character]),
    [
      ["GPU040", 2, 1, 10],
      ["GPU045", 3, 1, 1],
      ["GPU040", 5, 0, 10],
    ],
  );
  assert.match(withMachine[1].message, /GPU 3 does not exist on this machine \(2 GPUs: 0\.\.1\)/);
  // Without the %env cell the first launch fits two GPUs (the continued one does not).
  const alone = lintNotebook(
    cells.filter((_, i) => i !== 1 && i !== 5),
    { machine: { gpuCount: 2, uuids: [] } },
  ).diagnostics.filter((x) => x.code === "GPU040");
  assert.deepEqual(alone, []);
});

test("GPU040 deepspeed: a CUDA_VISIBLE_DEVICES that lists first the GPUs deepspeed uses instead changes nothing and is not reported", () => {
  const run = (text: string) => lintManifestCode(text, "jobscript", "GPU040");
  assert.deepEqual(run("CUDA_VISIBLE_DEVICES=0,1 deepspeed --num_gpus 2 t.py\n"), []);
  assert.deepEqual(run("export CUDA_VISIBLE_DEVICES=0,1,2,3\ndeepspeed --num_gpus 2 t.py\n"), []);
  assert.deepEqual(run("export CUDA_VISIBLE_DEVICES=2,3\ndeepspeed --include localhost:2,3 t.py\n"), []);
  // `--num_gpus $N` unknown: 0..N-1 may be the first ids of 0,1,2,3 or 0,2, never of 4,5; unknown --include ids may be the same.
  assert.deepEqual(run("export CUDA_VISIBLE_DEVICES=0,1,2,3\ndeepspeed --num_gpus $N t.py\n"), []);
  assert.deepEqual(run("export CUDA_VISIBLE_DEVICES=0,2\ndeepspeed --num_gpus $N t.py\n"), []);
  assert.deepEqual(run("export CUDA_VISIBLE_DEVICES=4,5\ndeepspeed --include localhost:$GPUS t.py\n"), []);
  assert.match(
    run("export CUDA_VISIBLE_DEVICES=4,5\ndeepspeed --exclude localhost:0 t.py\n")[0].message,
    /starts its workers on the GPUs --exclude localhost:0 leaves;/,
  );
  assert.deepEqual(run("CUDA_VISIBLE_DEVICES=1 deepspeed --num_gpus 0 t.py\n"), []);
  const [d, ...rest] = run("CUDA_VISIBLE_DEVICES=4,5 deepspeed --num_gpus $N t.py\n");
  assert.equal(rest.length, 0);
  assert.match(
    d.message,
    /starts its workers on GPUs 0\.\.N-1 \(--num_gpus \$N\); pick the GPUs with --include localhost:4,5 instead$/,
  );
  const [one] = run("CUDA_VISIBLE_DEVICES=1 deepspeed --num_gpus 2 t.py\n");
  assert.match(one.message, /starts its workers on GPUs 0\.\.1 \(--num_gpus 2\)/);
  const [other] = run("CUDA_VISIBLE_DEVICES=0,1 deepspeed --include localhost:1,0 t.py\n");
  assert.match(other.message, /starts its workers on GPUs 1,0 \(--include localhost:1,0\)/);
});

/** A project with a caller script at its root and the deepspeed script it runs; returns the caller's path. */
function deepspeedProject(caller: string, child: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-child-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "examples", "full_multi_gpu"), { recursive: true });
  writeFileSync(join(dir, "examples", "full_multi_gpu", "single_node.sh"), child);
  writeFileSync(join(dir, "run_full_sft.sh"), caller);
  return join(dir, "run_full_sft.sh");
}

const SINGLE_NODE = "#!/bin/bash\n\ndeepspeed --num_gpus 4 ../../src/train.py \\\n    --deepspeed ds.json --fp16\n";

test("GPU040: a caller's CUDA_VISIBLE_DEVICES for a script it runs (bash x.sh) whose deepspeed --num_gpus drops it is reported on the caller's line", () => {
  const caller =
    "#!/bin/bash\n# GPUs 0-3 are taken\ncd examples/full_multi_gpu\nCUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh\n";
  const file = deepspeedProject(caller, SINGLE_NODE);
  const [d, ...rest] = lintManifestCode(caller, "jobscript", "GPU040", {}, file);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 3, character: 0 }, end: { line: 3, character: 48 } });
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES="4,5,6,7" (inline) does not reach the workers of bash single_node.sh: its deepspeed launch (examples/full_multi_gpu/single_node.sh:3) unsets it, as deepspeed does when --num_gpus, --include or --exclude is given, and starts its workers on GPUs 0..3 (--num_gpus 4), not on the visible devices 4,5,6,7 chosen here; name them in that script with --include localhost:4,5,6,7 in place of --num_gpus, or launch it without --num_gpus/--include/--exclude (deepspeed then takes CUDA_VISIBLE_DEVICES as its --include)',
  );
  const child = join(file, "..", "examples", "full_multi_gpu", "single_node.sh");
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 3, character: 0 }, end: { line: 3, character: 28 } },
      message: "CUDA_VISIBLE_DEVICES, which deepspeed unsets",
    },
    {
      range: { start: { line: 2, character: 10 }, end: { line: 2, character: 22 } },
      message: "deepspeed --num_gpus 4: it unsets CUDA_VISIBLE_DEVICES",
      file: child,
    },
  ]);
  // The child is a dependency of the result; linted alone it is correct.
  const r = lintManifest(caller, "jobscript", {}, { file });
  assert.ok(r.deps?.includes(child));
  assert.deepEqual(lintManifestCode(SINGLE_NODE, "jobscript", "GPU040", {}, child), []);
  // An earlier export, `sh`, and the script's own folder as the working directory are followed.
  const exported = `#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=4,5,6,7\ncd "$(dirname "$0")"\nsh examples/full_multi_gpu/single_node.sh --lr 1\n`;
  const [e] = lintManifestCode(exported, "jobscript", "GPU040", {}, deepspeedProject(exported, SINGLE_NODE));
  assert.equal(e.range.start.line, 3);
  assert.match(
    e.message,
    /^CUDA_VISIBLE_DEVICES="4,5,6,7" \(exported on line 2\) does not reach the workers of sh examples/,
  );
  assert.equal(e.related?.[0].range.start.line, 1);
});

test("GPU040: a caller's CUDA_VISIBLE_DEVICES for a deepspeed script is not reported when deepspeed would use those GPUs, the child sets its own, keeps the value, or the child cannot be found", () => {
  const caller = (cvd: string, run = "bash single_node.sh") =>
    `#!/bin/bash\ncd examples/full_multi_gpu\n${cvd} ${run}\n`;
  const silent = (text: string, child = SINGLE_NODE) =>
    assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040", {}, deepspeedProject(text, child)), [], text);
  silent(caller("CUDA_VISIBLE_DEVICES=0,1,2,3"));
  silent(caller("CUDA_VISIBLE_DEVICES=0,1"), SINGLE_NODE.replace("--num_gpus 4", "--num_gpus 2"));
  silent(caller("CUDA_VISIBLE_DEVICES=4,5"), SINGLE_NODE.replace("--num_gpus 4", "--include localhost:4,5"));
  // The child sets, exports, unsets or reads the variable itself, or sources a file that may.
  for (const own of [
    "export CUDA_VISIBLE_DEVICES=0,1,2,3\n",
    "unset CUDA_VISIBLE_DEVICES\n",
    'echo "$CUDA_VISIBLE_DEVICES"\n',
    "source env.sh\n",
  ])
    silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7"), SINGLE_NODE.replace("\n\n", `\n${own}`));
  // deepspeed keeps CUDA_VISIBLE_DEVICES: no --num_gpus/--include/--exclude, or a hostfile.
  silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7"), SINGLE_NODE.replace("--num_gpus 4 ", ""));
  silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7"), SINGLE_NODE.replace("--num_gpus 4", "--hostfile hf --num_gpus 4"));
  // A bare assignment (reaches the child only if exported before), an expansion, a `cd` that is not
  // followed, a path that is not there, `bash -c`, and the child's own commands.
  silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7\n"));
  silent(caller("CUDA_VISIBLE_DEVICES=$GPUS"));
  silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7", "bash missing.sh"));
  silent(caller("CUDA_VISIBLE_DEVICES=4,5,6,7", "bash -c 'bash single_node.sh'"));
  silent(`#!/bin/bash\ncd $WORK\nCUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh\n`);
  silent(`#!/bin/bash\nCUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh\n`);
  // Unsaved (no path): nothing is read.
  assert.deepEqual(lintManifestCode(caller("CUDA_VISIBLE_DEVICES=4,5,6,7"), "jobscript", "GPU040"), []);
});

const RUN_TRAIN = `#!/usr/bin/bash\nset -ex\n\nNGPU=\${NGPU:-"8"}\nLOG_RANK=\${LOG_RANK:-0}\n\ntorchrun --nproc_per_node=\${NGPU} --local-ranks-filter \${LOG_RANK} \\\n    train.py --config llama.toml\n`;

test("GPU040: a caller's CUDA_VISIBLE_DEVICES for a script whose torchrun starts more workers than it lists (the child's NGPU=${NGPU:-\"8\"} default, a literal count) is reported on the caller's line (pytorch/torchtitan#423)", () => {
  const caller = "#!/bin/bash\ncd examples/full_multi_gpu\nCUDA_VISIBLE_DEVICES=2,3 CONFIG=x.toml ./single_node.sh\n";
  const file = deepspeedProject(caller, RUN_TRAIN);
  const [d, ...rest] = lintManifestCode(caller, "jobscript", "GPU040", {}, file);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 2);
  assert.equal(
    d.message,
    `CUDA_VISIBLE_DEVICES="2,3" (inline) leaves 2 GPUs to ./single_node.sh, whose torchrun starts 8 workers per node (--nproc_per_node=\${NGPU} at examples/full_multi_gpu/single_node.sh:7, NGPU defaulting to 8 there and not set here): the 6 workers with LOCAL_RANK 2..7 have no cuda:LOCAL_RANK ('invalid device ordinal' when selected); set NGPU=2 on this line`,
  );
  assert.deepEqual(
    d.related?.map((r) => [r.range.start.line, r.message, r.file ? "child" : "caller"]),
    [
      [2, "the GPUs visible to that script's workers", "caller"],
      [6, "torchrun --nproc_per_node=${NGPU}: 8 workers per node", "child"],
    ],
  );
  // A literal count in the child: the same finding without the default.
  const literal = RUN_TRAIN.replace("${NGPU}", "4");
  const [e] = lintManifestCode(caller, "jobscript", "GPU040", {}, deepspeedProject(caller, literal));
  assert.match(
    e.message,
    /torchrun starts 4 workers per node \(--nproc_per_node=4 at [^)]*:7\): the 2 workers with LOCAL_RANK 2\.\.3 .*; start 2 per node there$/,
  );
});

test("GPU040: a caller's CUDA_VISIBLE_DEVICES for a torchrun script is not reported where the caller sets the count's name, the workers fit, the count is not known, or the launched file picks its own GPUs", () => {
  const caller = (line: string, pre = "") => `#!/bin/bash\ncd examples/full_multi_gpu\n${pre}${line}\n`;
  const silent = (text: string, child = RUN_TRAIN, py?: string) => {
    const file = deepspeedProject(text, child);
    if (py) writeFileSync(join(file, "..", "examples", "full_multi_gpu", "train.py"), py);
    assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040", {}, file), [], `${text}\n${child}`);
  };
  silent(caller("CUDA_VISIBLE_DEVICES=2,3 NGPU=2 ./single_node.sh"));
  silent(caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh", "export NGPU=2\n"));
  silent(caller("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ./single_node.sh"));
  silent(caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"), RUN_TRAIN.replace("${NGPU}", "gpu"));
  silent(
    caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"),
    RUN_TRAIN.replace('NGPU=${NGPU:-"8"}', "NGPU=$(nvidia-smi -L | wc -l)"),
  );
  silent(caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"), RUN_TRAIN + 'NGPU=${NGPU:-"4"}\n');
  // An unknown variable among torchrun's options may hold a later --nproc_per_node.
  silent(caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"), RUN_TRAIN.replace("torchrun ", "torchrun $EXTRA_ARGS "));
  silent(
    caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"),
    RUN_TRAIN.replace("set -ex", "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"),
  );
  silent(
    caller("CUDA_VISIBLE_DEVICES=2,3 ./single_node.sh"),
    RUN_TRAIN,
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
  );
});

/** Runs `f` with HF_HOME set to `home` (accelerate's default config is looked for there). */
function withHfHome<T>(home: string, f: () => T): T {
  const before = process.env.HF_HOME;
  process.env.HF_HOME = home;
  try {
    return f();
  } finally {
    if (before === undefined) delete process.env.HF_HOME;
    else process.env.HF_HOME = before;
  }
}

const MNIST_PY =
  '"""Train on MNIST."""\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # the second GPU\n\nimport torch\nfrom accelerate import Accelerator\n\n\ndef main():\n    accelerator = Accelerator()\n\n\nif __name__ == "__main__":\n    main()\n';

test("GPU040: accelerate launch without a process count or config starts one process per GPU; the launched script's literal CUDA_VISIBLE_DEVICES leaves fewer", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-accdefault-"));
  const hf = mkdtempSync(join(tmpdir(), "gp-gpu040-hf-"));
  writeFileSync(join(dir, "train.py"), MNIST_PY);
  const sh = join(dir, "run_mnist.sh");
  const run = (line: string, gpuCount: number | null = 2) =>
    withHfHome(hf, () =>
      lintManifestCode(
        `#!/bin/bash\n# MNIST\n${line}\n`,
        "jobscript",
        "GPU040",
        { machine: { gpuCount, uuids: [] } },
        sh,
      ),
    );
  const [d, ...rest] = run("accelerate launch train.py config_file=configs/mnist.yaml");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 26 } });
  assert.equal(
    d.message,
    "accelerate launch starts 2 workers per node (no --num_processes and no accelerate config: one per GPU the launcher sees (this machine's GPU count), LOCAL_RANK 0..1) but only 1 GPU is visible to them (CUDA_VISIBLE_DEVICES=\"1\", which train.py:3 sets in each of them before CUDA starts): the worker with LOCAL_RANK 1 has no cuda:LOCAL_RANK ('invalid device ordinal' when selected), and ranks sharing a GPU make NCCL fail; pass --num_processes 1, or choose the GPUs before the launcher (CUDA_VISIBLE_DEVICES=... accelerate launch --num_processes 1 ...) instead of in the script",
  );
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 2, character: 0 }, end: { line: 2, character: 40 } },
      message: "the GPUs visible to this launch",
      file: join(dir, "train.py"),
    },
  ]);
  // The launcher's CUDA_VISIBLE_DEVICES is what it counts (no machine count needed); --multi_gpu starts as many.
  assert.match(
    run("CUDA_VISIBLE_DEVICES=0,1,2 accelerate launch --multi_gpu train.py", null)[0].message,
    /^accelerate launch starts 3 workers per node \(no --num_processes and no accelerate config: one per GPU the launcher sees \(CUDA_VISIBLE_DEVICES="0,1,2", inline\)/,
  );
  // An explicit count is compared with the script's write as well.
  assert.match(run("torchrun --nproc_per_node 2 train.py", null)[0].message, /^torchrun starts 2 workers per node/);
  // Silent: a count or a config given, one GPU, the machine unknown, CPU, a default config on this machine.
  for (const line of [
    "accelerate launch --num_processes 1 train.py",
    "accelerate launch --num_processes=$N train.py",
    "accelerate launch --config_file configs/acc.yaml train.py",
    "accelerate launch --cpu train.py",
    "accelerate launch --gpu_ids 1 train.py",
    "CUDA_VISIBLE_DEVICES=1 accelerate launch train.py",
    "CUDA_VISIBLE_DEVICES=$GPUS accelerate launch train.py",
    "accelerate launch other.py",
    // Options in a variable not known (set by the caller): a --num_processes or --config_file may be among them.
    "accelerate launch $ACCELERATE_ARGS train.py",
    'accelerate launch "${ACCELERATE_ARGS[@]}" train.py',
  ])
    assert.deepEqual(run(line), [], line);
  // Options in an array the script assigns once: read as written on the line.
  assert.match(
    run("ACC=(--multi_gpu --num_processes 2)\naccelerate launch ${ACC[@]} train.py")[0].message,
    /^accelerate launch starts 2 workers per node \(--num_processes 2, LOCAL_RANK 0\.\.1\)/,
  );
  assert.deepEqual(run("accelerate launch train.py", null), []);
  assert.deepEqual(run("accelerate launch train.py", 1), []);
  mkdirSync(join(hf, "accelerate"));
  writeFileSync(join(hf, "accelerate", "default_config.yaml"), "distributed_type: NO\nnum_processes: 1\n");
  assert.deepEqual(run("accelerate launch train.py"), [], "a default config");
});

test("GPU040: the launched script's CUDA_VISIBLE_DEVICES counts only as its one literal top-level write before CUDA starts, or from an option given on the line", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-acclit-"));
  const hf = mkdtempSync(join(tmpdir(), "gp-gpu040-hf-"));
  const sh = join(dir, "run.sh");
  const run = (py: string, line = "accelerate launch train.py") => {
    writeFileSync(join(dir, "train.py"), py);
    return withHfHome(hf, () =>
      lintManifestCode(`#!/bin/bash\n${line}\n`, "jobscript", "GPU040", { machine: { gpuCount: 2, uuids: [] } }, sh),
    );
  };
  const write = 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.equal(run(`import os\n${write}import torch\n`).length, 1);
  assert.equal(run(`import os\nos.environ.update({"CUDA_VISIBLE_DEVICES": "0"})\n`).length, 1);
  assert.deepEqual(run(`import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n`), [], "as many as the processes");
  assert.deepEqual(run(`import os\n${write}${write.replace('"1"', '"0"')}`), [], "two writes");
  assert.deepEqual(run(`import os\nif True:\n    ${write}`), [], "in a block");
  assert.deepEqual(run(`import os\ndef main():\n    ${write}`), [], "in a function");
  assert.deepEqual(run(`import os, torch\ntorch.cuda.init()\n${write}`), [], "after CUDA started");
  assert.deepEqual(run(`import os\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "1")\n`), [], "setdefault");
  assert.deepEqual(run(`import os\nos.environ["CUDA_VISIBLE_DEVICES"] = ""\n`), [], "no GPU at all");
  // From an option: read only when the option is given on the line with a literal value.
  const opt =
    'import argparse, os\np = argparse.ArgumentParser()\np.add_argument("--gpu", default="0")\nargs = p.parse_args()\nos.environ["CUDA_VISIBLE_DEVICES"] = args.gpu\n';
  assert.deepEqual(run(opt), []);
  assert.deepEqual(run(opt, "accelerate launch train.py --gpu $G"), []);
  assert.match(run(opt, "accelerate launch train.py --gpu 1")[0].message, /train\.py sets it from --gpu 1/);
});

test("GPU040: a variable among the launcher's options that the script does not assign once to a literal may hold any option (a later --nproc_per_node, --hostfile): nothing is compared; a known array is read", () => {
  const lint = (text: string) => lintManifestCode(text, "jobscript", "GPU040").map((d) => d.message.slice(0, 40));
  assert.deepEqual(lint("CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 $EXTRA t.py\n"), []);
  assert.deepEqual(lint("CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 t.py $EXTRA\n").length, 1);
  assert.deepEqual(lint("CUDA_VISIBLE_DEVICES=0,1 torchrun ${LAUNCH[@]} --nproc_per_node 4 t.py\n"), []);
  assert.deepEqual(lint("export CUDA_VISIBLE_DEVICES=2,3\ndeepspeed --num_gpus 2 $DS_ARGS t.py\n"), []);
  assert.deepEqual(lint("CUDA_VISIBLE_DEVICES=0,1 torchrun $ARGS_FROM_CALLER t.py\n"), []);
  assert.deepEqual(
    lint("LAUNCH=(\n  --nnodes 1\n  --nproc_per_node 4\n)\nCUDA_VISIBLE_DEVICES=0,1 torchrun ${LAUNCH[@]} t.py\n"),
    ["torchrun starts 4 workers per node (--np"],
  );
  // An array's `$LAUNCH` is its first element, not its list: not read.
  assert.deepEqual(lint("LAUNCH=(--nproc_per_node 4)\nCUDA_VISIBLE_DEVICES=0,1 torchrun $LAUNCH t.py\n"), []);
});

test("GPU040 launch model: vLLM's server (`vllm serve`, the api_server module, the image's arguments) and its parallel sizes", () => {
  const v = lineOf(
    "CUDA_VISIBLE_DEVICES=0 vllm serve org/m -tp 2 --pipeline_parallel_size=3 --data-parallel-size 2 --port 8000",
  );
  assert.deepEqual(
    [v.launcher, v.vllm?.tp?.value, v.vllm?.pp?.value, v.vllm?.dp?.value, v.vllm?.elsewhere, v.script],
    ["vllm", "2", "3", "2", null, null],
  );
  const m = lineOf("python3 -u -m vllm.entrypoints.openai.api_server --model org/m --tensor-parallel-size=4");
  assert.deepEqual([m.launcher, m.vllm?.tp?.value], ["vllm", "4"]);
  assert.equal(lineOf("vllm bench throughput --tensor-parallel-size 2").launcher, "other");
  assert.equal(lineOf("python -m vllm.entrypoints.cli.main bench -tp 2").launcher, "other");
  // Later options win, as in argparse.
  assert.equal(lineOf("vllm serve m -tp 4 --tensor-parallel-size 2").vllm?.tp?.value, "2");
  // What may put the workers on other nodes, or hold options out of sight.
  const away = (s: string) => lineOf(s).vllm?.elsewhere?.value ?? null;
  assert.equal(away("vllm serve m -tp 4 --distributed-executor-backend ray"), "--distributed-executor-backend");
  assert.equal(away("vllm serve m -tp 4 --distributed-executor-backend mp"), null);
  assert.equal(away("vllm serve m -tp 16 --nnodes 2 --node-rank 0"), "--nnodes");
  assert.equal(away("vllm serve m -dp 4 --data-parallel-size-local 2"), "--data-parallel-size-local");
  assert.equal(away("vllm serve m --headless -dp 4"), "--headless");
  assert.equal(away("vllm serve m -tp 2 --config c.yaml"), "--config");
  assert.equal(away("vllm serve m -tp 2 $EXTRA_ARGS"), "$EXTRA_ARGS");
  assert.equal(away("vllm serve m --enforce-eager $EXTRA_ARGS -tp 2"), "$EXTRA_ARGS");
  assert.equal(away("vllm serve $MODEL --port $PORT -tp 2"), null, "the model and an option's value");
  const img = vllmServerArgs(lineOf("x --model m --tensor-parallel-size 2 ${MORE}").words.slice(1));
  assert.deepEqual(
    [img.launcher, img.imageEntrypoint, img.vllm?.tp?.value, img.vllm?.elsewhere?.value],
    ["vllm", "vllm serve", "2", "${MORE}"],
  );
  for (const i of ["vllm/vllm-openai", "vllm/vllm-openai:v0.11.0", "docker.io/vllm/vllm-openai:latest"])
    assert.equal(isVllmServerImage(i), true, i);
  for (const i of ["vllm/vllm-openai-cpu:latest", "myorg/vllm-openai:1", "rocm/vllm:latest", "${IMAGE}"])
    assert.equal(isVllmServerImage(i), false, i);
});

test("GPU040 vLLM: a compose service on vllm/vllm-openai with a folded command is reported on the line of its size, as an error", () => {
  const text =
    "services:\n  llm:\n    image: vllm/vllm-openai:v0.11.0\n    command: >\n      --model /models/m\n      --max-model-len 8192\n      --tensor-parallel-size 2\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n";
  const d = lintManifestCode(text, "compose", "GPU040");
  assert.equal(d.length, 1);
  assert.deepEqual([d[0].range.start.line, d[0].range.start.character, d[0].range.end.character], [6, 6, 30]);
  assert.equal(d[0].severity, "error");
  assert.match(d[0].message, /^the image's vllm serve needs 2 GPUs \(--tensor-parallel-size 2: /);
  assert.match(d[0].message, /World size \(2\) is larger than the number of available GPUs \(1\) in this node/);
  assert.deepEqual(lintManifestCode(text.replace("count: 1", "count: 2"), "compose", "GPU040"), []);
  // An entrypoint of its own replaces the image's server.
  const own = text.replace("    command: >", '    entrypoint: ["python3", "app.py"]\n    command: >');
  assert.deepEqual(lintManifestCode(own, "compose", "GPU040"), []);
});

test("GPU040 vLLM: the machine's GPUs for a plain shell script (a warning), the job's allocation, and silence with a Ray cluster", () => {
  const serve = "vllm serve org/m --tensor-parallel-size 4\n";
  const plain = lintManifestCode(`#!/bin/bash\n${serve}`, "jobscript", "GPU040", two);
  assert.equal(plain.length, 1);
  assert.equal(plain[0].severity, "warning");
  assert.match(plain[0].message, /only 2 GPUs are visible to it \(this machine's GPU count\)/);
  assert.deepEqual(lintManifestCode(`#!/bin/bash\n${serve}`, "jobscript", "GPU040"), [], "machine unknown");
  const job = lintManifestCode(`#!/bin/bash\n#SBATCH --gres=gpu:2\n${serve}`, "jobscript", "GPU040", two);
  assert.match(job[0].message, /the job's allocation, #SBATCH --gres=gpu:2/);
  assert.equal(job[0].severity, "warning");
  assert.deepEqual(
    lintManifestCode(`#!/bin/bash\nray start --head\n${serve}`, "jobscript", "GPU040", two),
    [],
    "a Ray cluster may hold the other GPUs",
  );
  const dp = lintManifestCode("CUDA_VISIBLE_DEVICES=0,1 vllm serve m -tp 2 -dp 2\n", "jobscript", "GPU040");
  assert.match(dp[0].message, /needs 4 GPUs \(-tp 2 -dp 2: .*, for each data-parallel replica\)/);
  assert.match(dp[0].message, /only 1 of the 2 replicas finds theirs/);
});

test("GPU040 vLLM: srun from a plain shell script, old Ray switches, a program name in the image's arguments and comma-joined device_ids are not judged", () => {
  const two = { machine: { gpuCount: 2, uuids: [] } };
  const sh = (line: string) => lintManifestCode(`#!/bin/bash\n${line}\n`, "jobscript", "GPU040", two);
  assert.deepEqual(sh("srun --gres=gpu:8 vllm serve m --tensor-parallel-size 8"), [], "runs on a cluster node");
  assert.deepEqual(sh("python -m vllm.entrypoints.openai.api_server --model m -tp 4 --worker-use-ray"), []);
  assert.equal(sh("python -m vllm.entrypoints.openai.api_server --model m -tp 4").length, 1);
  const compose = (command: string, reservation = "count: 1") =>
    lintManifestCode(
      `services:\n  s:\n    image: vllm/vllm-openai:latest\n    command: ${command}\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              ${reservation}\n              capabilities: [gpu]\n`,
      "compose",
      "GPU040",
    );
  assert.equal(compose('["--model", "m", "-tp", "2"]').length, 1);
  assert.deepEqual(compose('["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "-tp", "2"]'), []);
  assert.deepEqual(compose('["--model", "m", "-tp", "4"]', "device_ids: ['0,1,2,3']"), []);
  assert.equal(compose('["--model", "m", "-tp", "4"]', "device_ids: ['0', '1']").length, 1);
});

test("GPU040 vLLM: docker run of vllm/vllm-openai reads the words after the image as the server's arguments, with --gpus and -e CUDA_VISIBLE_DEVICES", () => {
  const two = { machine: { gpuCount: 2, uuids: [] } };
  const sh = (line: string, options = {}) => lintManifestCode(`#!/bin/bash\n${line}\n`, "jobscript", "GPU040", options);
  const one = sh("docker run --rm --gpus 1 vllm/vllm-openai:latest --model m --tensor-parallel-size 2");
  assert.equal(one.length, 1);
  assert.equal(one[0].severity, "error");
  assert.match(one[0].message, /^the image's vllm serve needs 2 GPUs .* \(the container's GPU request, --gpus 1\)/);
  assert.deepEqual(sh("docker run --gpus all vllm/vllm-openai --model m -tp 4"), [], "machine unknown");
  const all = sh("docker run --gpus all vllm/vllm-openai --model m -tp 4", two);
  assert.equal(all[0].severity, "warning");
  assert.match(all[0].message, /this machine's GPU count/);
  const env = sh("docker run --gpus all -e CUDA_VISIBLE_DEVICES=0 vllm/vllm-openai --model m -tp 2", two);
  assert.match(env[0].message, /CUDA_VISIBLE_DEVICES="0", docker run -e/);
  assert.deepEqual(sh("docker run --gpus all -e CUDA_VISIBLE_DEVICES vllm/vllm-openai --model m -tp 4", two), []);
  assert.deepEqual(sh('docker run --gpus "device=$GPUS" vllm/vllm-openai --model m -tp 4'), []);
  assert.deepEqual(sh("docker run vllm/vllm-openai --model m -tp 4", two), [], "no --gpus");
  assert.deepEqual(sh("docker run --gpus 1 myorg/server --model m -tp 4"), [], "another image");
});

const JOB_ACC =
  "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --gres=gpu:3\n\nsrun accelerate launch check.py\n";

test("GPU040 (preview): accelerate launch in a Slurm GPU job with neither --num_processes nor --config_file takes its count from the node's default accelerate config", () => {
  const preview = { preview: true };
  const [d, ...rest] = lintManifestCode(JOB_ACC, "jobscript", "GPU040", preview);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 5, character: 5 }, end: { line: 5, character: 31 } });
  assert.equal(
    d.message,
    'accelerate launch without --num_processes or --config_file: on the node it takes its process count and gpu_ids from the default accelerate config of the user running the job (~/.cache/huggingface/accelerate/default_config.yaml, where one exists; `accelerate config default` writes the GPU count of the machine it ran on), not from the 3 GPUs this job asks for (#SBATCH --gres=gpu:3), and gpu_ids other than "all" replace the CUDA_VISIBLE_DEVICES Slurm set, so processes may land on GPUs outside the allocation or name devices that are not there; pass --num_processes 3 --gpu_ids all (or --config_file with the project\'s config)',
  );
  assert.equal(d.related?.[0].range.start.line, 3);
  // Not in the default set.
  assert.deepEqual(lintManifestCode(JOB_ACC, "jobscript", "GPU040", {}), []);
  // Without srun too: the batch step runs on the node as well.
  assert.equal(lintManifestCode(JOB_ACC.replace("srun ", ""), "jobscript", "GPU040", preview).length, 1);
  const silent = (text: string) => assert.deepEqual(lintManifestCode(text, "jobscript", "GPU040", preview), [], text);
  silent(JOB_ACC.replace("launch check.py", "launch --num_processes 3 --gpu_ids all check.py"));
  silent(JOB_ACC.replace("launch check.py", "launch --num_processes=3 check.py"));
  silent(JOB_ACC.replace("launch check.py", "launch --config_file acc.yaml check.py"));
  silent(JOB_ACC.replace("launch check.py", "launch --cpu check.py"));
  silent(JOB_ACC.replace("launch check.py", "launch $EXTRA check.py"));
  silent(JOB_ACC.replace("#SBATCH --gres=gpu:3\n", ""));
  silent(JOB_ACC.replace("\nsrun", "\nexport HF_HOME=$PWD/.hf\nsrun"));
  // A plain shell script: the machine's own config is what GPU040 reads there.
  silent(JOB_ACC.replace(/#SBATCH[^\n]*\n/g, ""));
});

/** A project folder with `files` (path -> text) and a `.git`; returns the path of `script` in it. */
function hostfileProject(files: Record<string, string>, script = "run.sh"): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu040-hostfile-"));
  mkdirSync(join(dir, ".git"));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return join(dir, script);
}

const TWO_NODES = "node-a slots=2\nnode-b slots=2\n";
const launchWith = (filter: string, hostfile = "hosts.txt") =>
  `#!/bin/bash\ndeepspeed --hostfile ${hostfile} ${filter} train.py --deepspeed ds.json\n`;
const hostfileFindings = (script: string, files: Record<string, string>, options = {}) =>
  lintManifestCode(script, "jobscript", "GPU040", options, hostfileProject({ "run.sh": script, ...files }));

test("GPU040 deepspeed hostfile: an --include slot beyond a host's slots= is reported where deepspeed is pinned below 0.15.2", () => {
  const script = launchWith("--include=node-a:2,3");
  const file = hostfileProject({ "run.sh": script, "hosts.txt": TWO_NODES });
  const [d, ...rest] = lintManifestCode(script, "jobscript", "GPU040", { libraryPins: { deepspeed: "==0.9.2" } }, file);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 31 }, end: { line: 1, character: 51 } });
  assert.equal(
    d.message,
    "deepspeed --include names slots 2, 3 of host 'node-a', but the hostfile \"hosts.txt\" gives it slots=2 (GPUs 0..1): the pinned deepspeed==0.9.2 (before 0.15.2) stops with \"No slot '2' specified on host 'node-a'\"; let slots= count all of the node's GPUs and pick the ones to use with --include",
  );
  assert.deepEqual(d.related, [
    {
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 14 } },
      message: "node-a: slots=2, GPUs 0..1",
      file: join(file, "..", "hosts.txt"),
    },
  ]);
  // The hostfile is a dependency of the result.
  assert.ok(lintManifest(script, "jobscript", {}, { file }).deps?.includes(join(file, "..", "hosts.txt")));
  // Unpinned (the newest release takes the --include slots as written) or a pin that admits 0.15.2 and later: silent.
  assert.deepEqual(hostfileFindings(script, { "hosts.txt": TWO_NODES }), []);
  assert.deepEqual(hostfileFindings(script, { "hosts.txt": TWO_NODES }, { libraryPins: { deepspeed: ">=0.14" } }), []);
  const below = { libraryPins: { deepspeed: "<0.15" } };
  assert.equal(hostfileFindings(script, { "hosts.txt": TWO_NODES }, below).length, 1);
  // Slots within slots=: silent.
  assert.deepEqual(hostfileFindings(launchWith("--include node-a:0,1@node-b"), { "hosts.txt": TWO_NODES }, below), []);
});

test("GPU040 deepspeed hostfile: an --exclude slot beyond slots= and a host the hostfile lacks are reported in every release", () => {
  const [x] = hostfileFindings(launchWith("--exclude node-b:2"), { "hosts.txt": TWO_NODES });
  assert.equal(
    x.message,
    "deepspeed --exclude names slot 2 of host 'node-b', but the hostfile \"hosts.txt\" gives it slots=2 (GPUs 0..1): deepspeed stops with \"No slot '2' specified on host 'node-b'\"; --exclude can only remove the slots the hostfile lists",
  );
  assert.equal(x.related?.[0].range.start.line, 1);
  const [h, ...rest] = hostfileFindings(launchWith("-i localhost:0,1"), { "hosts.txt": TWO_NODES });
  assert.equal(rest.length, 0);
  assert.equal(
    h.message,
    "deepspeed --include names host 'localhost', which the hostfile \"hosts.txt\" does not list (node-a, node-b): deepspeed stops with \"Hostname 'localhost' not found in hostfile\"; name the hosts as the hostfile does",
  );
  const [e] = hostfileFindings(launchWith("--exclude=node-c"), { "hosts.txt": TWO_NODES });
  assert.match(e.message, /names host 'node-c'/);
});

test("GPU040 deepspeed hostfile: read where deepspeed opens it, silent where that is not certain", () => {
  const pinned = { libraryPins: { deepspeed: "==0.9.2" } };
  const bad = launchWith("--exclude node-b:3", "$HOSTS");
  // A once-assigned variable, `-H`, `--hostfile=`, after a literal `cd`, in the script's own folder.
  assert.equal(hostfileFindings(`HOSTS=hosts.txt\n${bad}`, { "hosts.txt": TWO_NODES }).length, 1);
  assert.equal(
    hostfileFindings(launchWith("--exclude node-b:3", "-H hosts.txt").replace("--hostfile ", ""), {
      "hosts.txt": TWO_NODES,
    }).length,
    1,
  );
  assert.equal(
    hostfileFindings(launchWith("--exclude node-b:3", "").replace("--hostfile ", "--hostfile=hosts.txt"), {
      "hosts.txt": TWO_NODES,
    }).length,
    1,
  );
  const cd = `#!/bin/bash\ncd cfg\n${launchWith("--exclude node-b:3").split("\n")[1]}\n`;
  assert.equal(hostfileFindings(cd, { "cfg/hosts.txt": TWO_NODES }).length, 1);
  assert.deepEqual(hostfileFindings(cd, { "hosts.txt": TWO_NODES }), []);
  const own = launchWith("--exclude node-b:3", '"$(dirname "$0")/hosts.txt"');
  assert.equal(hostfileFindings(own, { "hosts.txt": TWO_NODES }).length, 1);
  // Found up to three folders above the script, as a launched script is.
  assert.equal(
    lintManifestCode(
      bad.replace("$HOSTS", "hosts.txt"),
      "jobscript",
      "GPU040",
      {},
      hostfileProject({ "hosts.txt": TWO_NODES }, "scripts/run.sh"),
    ).length,
    1,
  );
  const silent = (script: string, hosts: string | null, options = pinned) =>
    assert.deepEqual(hostfileFindings(script, hosts === null ? {} : { "hosts.txt": hosts }, options), []);
  // No such file (deepspeed then runs on this node alone), an unknown variable, an absolute path, a `cd` elsewhere.
  silent(launchWith("--include node-a:2"), null);
  silent(bad, TWO_NODES);
  silent(launchWith("--include node-a:2", "/etc/hosts.txt"), TWO_NODES);
  silent(`cd /opt/job\n${launchWith("--include node-a:2")}`, TWO_NODES);
  // The script writes or names the file elsewhere: its text at launch is not known.
  silent(`echo "node-a slots=8" > hosts.txt\n${launchWith("--include node-a:2")}`, TWO_NODES);
  // A hostfile in a form releases read differently, or a host listed twice.
  silent(launchWith("--include node-a:2"), "node-a slots=2 max_slots=2\n");
  silent(launchWith("--include node-a:2"), "node-a slots=2\nnode-a slots=4\n");
  silent(launchWith("--include node-a:2"), "node-a:2\n");
  // A filter that is not literal; `--num_nodes` with a filter (deepspeed refuses that pair first).
  silent(launchWith("--include node-a:$GPU"), TWO_NODES);
  silent(launchWith("--num_nodes 2 --exclude node-b:3"), TWO_NODES);
});
