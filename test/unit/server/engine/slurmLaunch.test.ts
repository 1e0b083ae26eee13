import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  slurmLaunchesOf,
  clearSlurmLaunchCache,
  jobScriptsAround,
  launchNodesIn,
  documentedLaunchNodes,
  rankArgLaunchesIn,
  DOC_PYTHON_WORDS,
} from "../../../../server/src/engine/slurmLaunch";

/** A throw-away project: files by relative path; a .git folder marks its root. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-slurm-"));
  mkdirSync(join(root, ".git"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  clearSlurmLaunchCache();
  return root;
}

test("slurmLaunchesOf: srun python with --gpus-per-task in a slurm/ folder beside the code", () => {
  const root = project({
    "train.py": "print(1)\n",
    "slurm/train.sbatch":
      "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=1\n\nsrun python -u train.py --lr 1e-3\n",
  });
  try {
    const [l, ...rest] = slurmLaunchesOf(join(root, "train.py"));
    assert.equal(rest.length, 0);
    assert.deepEqual(
      { ...l, script: l.script.slice(root.length) },
      {
        script: "/slurm/train.sbatch",
        line: 5,
        launcher: "srun",
        gpusPerProcess: 1,
        gpusFrom: "#SBATCH --gpus-per-task=1",
        processesPerNode: 4,
        setsLocalRank: false,
        asksForGpus: true,
      },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: batch-step python, torchrun, srun --gres, $VAR/ paths, -m modules; other files are not matched", () => {
  const root = project({
    "src/pkg/train.py": "",
    "src/eval.py": "",
    "other/eval.py": "",
    "jobs/a.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:4\nROOT=/home/me/proj\npython $ROOT/src/eval.py\n",
    "jobs/b.sh":
      "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\nsrun --ntasks-per-node=1 torchrun --nnodes 2 --nproc_per_node 8 src/pkg/train.py\npython -u -m torch.distributed.run --nproc_per_node 8 src/pkg/train.py\n",
    "jobs/c.sbatch":
      "#!/bin/bash\n#SBATCH --gres=gpu:4\ncd src\nsrun -n 2 --gres=gpu:2 python -m pkg.train\nexport LOCAL_RANK=$SLURM_LOCALID\n",
    "run_local.sh": "python src/eval.py\n",
  });
  try {
    const eval_ = slurmLaunchesOf(join(root, "src/eval.py"));
    assert.deepEqual(
      eval_.map((l) => [l.launcher, l.gpusPerProcess, l.gpusFrom, l.processesPerNode]),
      [["batch", 4, "#SBATCH --gres=gpu:4", 1]],
    );
    const train = slurmLaunchesOf(join(root, "src/pkg/train.py")).sort((a, b) => a.script.localeCompare(b.script));
    assert.deepEqual(
      train.map((l) => [
        l.script.slice(root.length),
        l.launcher,
        l.gpusPerProcess,
        l.processesPerNode,
        l.setsLocalRank,
      ]),
      [
        ["/jobs/b.sh", "torchrun", null, null, false],
        ["/jobs/b.sh", "torchrun", 8, null, false],
      ],
    );
    // `cd src` then `python -m pkg.train`: the module is src/pkg/train.py only relative to src,
    // which the lookup does not follow (it joins the path to the job script's folder and its
    // ancestors): not matched rather than guessed.
    assert.deepEqual(slurmLaunchesOf(join(root, "other/eval.py")), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: python -m names pkg/mod.py from the project root; LOCAL_RANK set by the script is noted", () => {
  const root = project({
    "pkg/train.py": "",
    "c.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:4\nexport LOCAL_RANK=0\nsrun -n 2 --gres=gpu:2 python -m pkg.train\n",
  });
  try {
    assert.deepEqual(
      slurmLaunchesOf(join(root, "pkg/train.py")).map((l) => [
        l.launcher,
        l.gpusPerProcess,
        l.gpusFrom,
        l.processesPerNode,
        l.setsLocalRank,
      ]),
      [["srun", 2, "srun --gres=gpu:2", 2, true]],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: an srun step's processes per node take --ntasks over --ntasks-per-node (test/fixtures/slurm/ntasks-per-node/measured.md)", () => {
  const job = (head: string, srun = "srun") =>
    `#!/bin/bash\n${head}#SBATCH --gpus-per-node=4\n${srun} python main.py\n`;
  const root = project({
    "main.py": "print(1)\n",
    "a.sbatch": job("#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=4\n"),
    "b.sbatch": job("#SBATCH --nodes=2\n#SBATCH --ntasks=4\n#SBATCH --ntasks-per-node=4\n"),
    "c.sbatch": job("#SBATCH --nodes=2\n#SBATCH --ntasks=3\n#SBATCH --ntasks-per-node=2\n"),
    "d.sbatch": job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n", "srun --ntasks-per-node=1"),
    "e.sbatch": job("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n", "srun -n 2"),
    "f.sbatch": job("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n"),
  });
  try {
    const got = slurmLaunchesOf(join(root, "main.py"))
      .map((l) => [l.script.slice(root.length + 1), l.processesPerNode])
      .sort();
    assert.deepEqual(got, [
      ["a.sbatch", 1],
      ["b.sbatch", 2],
      ["c.sbatch", null],
      ["d.sbatch", null],
      ["e.sbatch", 1],
      ["f.sbatch", 4],
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: a job script that sets CUDA_VISIBLE_DEVICES, prefixes the command with it, exports it through srun or passes Slurm's GPU list on is noted", () => {
  const job = (body: string) => `#!/bin/bash\n#SBATCH --gres=gpu:2\n${body}`;
  const root = project({
    "a/run.py": "",
    "a/job.sbatch": job("export CUDA_VISIBLE_DEVICES=0,1\npython run.py\n"),
    "b/run.py": "",
    "b/job.sbatch": job("CUDA_VISIBLE_DEVICES=1 python run.py\n"),
    "c/run.py": "",
    "c/job.sbatch": job("srun --export=ALL,CUDA_VISIBLE_DEVICES=0 python run.py\n"),
    "d/run.py": "",
    "d/job.sbatch": job('python run.py --gpu "$CUDA_VISIBLE_DEVICES"\n'),
    "e/run.py": "",
    "e/job.sbatch": job("srun python run.py --gpus ${SLURM_JOB_GPUS}\n"),
    "f/run.py": "",
    "f/job.sbatch": job("python run.py --gpu 0\nCUDA_VISIBLE_DEVICES=3 python other.py\n"),
    "g/run.py": "",
    "g/job.sbatch": job("python run.py --note '$CUDA_VISIBLE_DEVICES'\n"),
    "h/run.py": "",
    "h/job.sbatch": job("gpu=$CUDA_VISIBLE_DEVICES\npython run.py --gpu ${gpu}\n"),
    "i/run.py": "",
    "i/job.sbatch": job("gpu=0\nids=$CUDA_VISIBLE_DEVICES\npython run.py --gpu $gpu\n"),
  });
  try {
    const sets = (dir: string) => slurmLaunchesOf(join(root, dir, "run.py")).map((l) => l.setsVisibleDevices ?? false);
    // h: through a variable assigned from it.
    for (const dir of ["a", "b", "c", "d", "e", "h"]) assert.deepEqual(sets(dir), [true], dir);
    // Another command's prefix, a single-quoted word (no expansion), or a variable that holds a
    // literal leaves this launch alone.
    for (const dir of ["f", "g", "i"]) assert.deepEqual(sets(dir), [false], dir);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: the search stops at the repository root and three levels up", () => {
  const outer = mkdtempSync(join(tmpdir(), "gpu-pilot-slurm-outer-"));
  try {
    writeFileSync(join(outer, "x.sbatch"), "#!/bin/bash\n#SBATCH --gres=gpu:1\nsrun python repo/train.py\n");
    mkdirSync(join(outer, "repo", ".git"), { recursive: true });
    writeFileSync(join(outer, "repo", "train.py"), "");
    clearSlurmLaunchCache();
    assert.deepEqual(slurmLaunchesOf(join(outer, "repo", "train.py")), []);
  } finally {
    rmSync(outer, { recursive: true, force: true });
  }
});

test("jobScriptsAround lists the files of at most 256 subfolders of a folder (a home folder or /tmp with thousands)", () => {
  const names = Array.from({ length: 300 }, (_, i) => `d${String(i).padStart(3, "0")}`);
  const files: Record<string, string> = { "train.py": "" };
  for (const n of names) files[`${n}/run.sh`] = "python ../train.py\n";
  const root = project(files);
  const { scripts } = jobScriptsAround(root, [root]);
  // Listing order is the file system's: 256 of the 300 subfolders' scripts, whichever they are.
  assert.equal(scripts.length, 256);
  assert.ok(scripts.every((s) => /\/d[0-9]{3}\/run\.sh$/.test(s.script)));
});

test("the CLI's optionsResolver (job scripts found once per folder, shared folders once per run) gives every file the launches slurmLaunchesOf gives it", async () => {
  const { optionsResolver } = await import("../../../../server/src/engine/options");
  const root = project({
    "src/pkg/train.py": "",
    "src/pkg/util.py": "",
    "src/eval.py": "",
    "other/eval.py": "",
    "deep/a/b/c/d/run.py": "",
    "train.py": "",
    "jobs/a.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:4\nROOT=/home/me/proj\npython $ROOT/src/eval.py\n",
    "jobs/b.sh":
      "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\nsrun --ntasks-per-node=1 torchrun --nnodes 2 --nproc_per_node 8 src/pkg/train.py\n",
    "slurm/train.sbatch":
      "#!/bin/bash\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=1\nsrun python -u train.py\n",
    "deep/a/job.sbatch": "#!/bin/bash\n#SBATCH --gpus=2\nsrun python b/c/d/run.py\n",
    "src/plain.sh": "echo no python here\n",
  });
  try {
    const resolve = optionsResolver({}, "filesystemFirst");
    const files = [
      "src/pkg/train.py",
      "src/pkg/util.py",
      "src/eval.py",
      "other/eval.py",
      "deep/a/b/c/d/run.py",
      "train.py",
    ].map((f) => join(root, f));
    let launched = 0;
    for (const f of files) {
      const want = slurmLaunchesOf(f);
      launched += want.length ? 1 : 0;
      assert.deepEqual(resolve(f).options.slurm ?? [], want, f);
    }
    assert.equal(launched, 4, "the eval.py of src/, pkg/train.py, train.py and the deep run.py are launched");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("slurmLaunchesOf: srun --accel-bind=g and --gpu-bind leave the GPUs per task unknown (the node's topology decides), except --gpu-bind=none without a per-task request", () => {
  const job = (srun: string) =>
    `#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=4\n\nsrun ${srun} python -u main.py\n`;
  const root = project({
    "main.py": "print(1)\n",
    "a.sbatch": job("--cpu_bind=v --accel-bind=gn"),
    "b.sbatch": job("--accel-bind v"),
    "c.sbatch": job("--gpu-bind=closest"),
    "d.sbatch": job("--accel-bind=n"),
    // `none` binds nothing: every task sees the step's GPUs, as without the option; with a per-task
    // request it turns that binding off (not followed).
    "e.sbatch": job("--gpu-bind=none"),
    "f.sbatch": job("--gpu-bind=verbose,none"),
    "g.sbatch": job("--gpus-per-task=1 --gpu-bind=none"),
  });
  try {
    const got = slurmLaunchesOf(join(root, "main.py"))
      .map((l) => [l.script.slice(root.length + 1), l.gpusPerProcess])
      .sort();
    assert.deepEqual(got, [
      ["a.sbatch", null],
      ["b.sbatch", 4],
      ["c.sbatch", null],
      ["d.sbatch", 4],
      ["e.sbatch", 4],
      ["f.sbatch", 4],
      ["g.sbatch", null],
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("launchNodesIn and documentedLaunchNodes: node counts from torchrun's --nnodes/--standalone, srun and #SBATCH --nodes; Markdown shell blocks matched by the end of the path", () => {
  const root = project({
    "debug/code/demo.py": "",
    "train/run.py": "",
    "debug/notes.md": [
      "# Hangs",
      "",
      "Run it from `code/`:",
      "",
      "```bash",
      "$ torchrun --standalone --nproc_per_node=2 demo.py",
      "```",
      "",
      "```python",
      "# torchrun --nnodes=4 demo.py (Python, not read)",
      "```",
      "",
      "```console",
      "$ srun -N 2 python ../train/run.py",
      "torchrun --nnodes=8 demo.py is output here, not a command",
      "```",
      "",
    ].join("\n"),
    "train/jobs/two.sbatch":
      "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc_per_node 8 train/run.py\n",
    // Outside srun in a job of one node: that node, whatever the launcher says (URS's shape).
    "train/jobs/one.sbatch":
      "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gpus-per-node=2\npython -m torch.distributed.launch --nproc_per_node=2 train/run.py\n",
    "train/local.sh":
      "torchrun --nproc_per_node 8 run.py\ntorchrun --nnodes=1:4 --nproc_per_node 8 run.py\ntorchrun --nnodes $NNODES run.py\n",
    "README.md": "```sh\ntorchrun --nnodes=1 --nproc-per-node=4 train/run.py\n```\n",
  });
  try {
    const around = (f: string) => jobScriptsAround(join(root, f, ".."), [root]);
    const both = (f: string) => [
      ...launchNodesIn(join(root, f), around(f)),
      ...documentedLaunchNodes(join(root, f), around(f)).launches,
    ];
    const rel = (ls: ReturnType<typeof launchNodesIn>) =>
      ls
        .map((l) => ({ ...l, script: l.script.slice(root.length + 1) }))
        .sort((a, b) => (a.script + a.line).localeCompare(b.script + b.line));
    assert.deepEqual(rel(both("debug/code/demo.py")), [
      { script: "debug/notes.md", line: 5, nodes: "one", from: "--standalone", documented: true },
    ]);
    assert.deepEqual(rel(both("train/run.py")), [
      // ../train/run.py from debug/: a document's path may also be relative to its own folder.
      { script: "debug/notes.md", line: 13, nodes: "several", from: "srun --nodes=2", documented: true },
      { script: "README.md", line: 1, nodes: "one", from: "--nnodes=1", documented: true },
      {
        script: "train/jobs/one.sbatch",
        line: 3,
        nodes: "one",
        from: "#SBATCH --nodes=1",
        documented: false,
        args: [],
      },
      {
        script: "train/jobs/two.sbatch",
        line: 3,
        nodes: "several",
        from: "#SBATCH --nodes=2",
        documented: false,
        args: [],
      },
      { script: "train/local.sh", line: 0, nodes: null, from: "no --nnodes", documented: false, args: [] },
      { script: "train/local.sh", line: 1, nodes: "several", from: "--nnodes=1:4", documented: false, args: [] },
      { script: "train/local.sh", line: 2, nodes: null, from: "--nnodes=$NNODES", documented: false, args: [] },
    ]);
    // The Slurm rules and launchNodesIn read scripts only: no launch from a document there.
    assert.equal(slurmLaunchesOf(join(root, "debug/code/demo.py")).length, 0);
    assert.equal(launchNodesIn(join(root, "debug/code/demo.py"), around("debug/code/demo.py")).length, 0);
    // The documents read (they name a launcher) are what the result depends on.
    assert.deepEqual(
      documentedLaunchNodes(join(root, "train/run.py"), around("train/run.py"))
        .read.map((d) => d.slice(root.length + 1))
        .sort(),
      ["README.md", "debug/notes.md"],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("documentedLaunchNodes: a document that is a FIFO, too large, or no Markdown the parser can read gives no launch and no error", () => {
  const root = project({ "x.py": "", "big.md": "```sh\ntorchrun --nnodes=2 x.py\n```\n" + "a".repeat(600 * 1024) });
  try {
    spawnSync("mkfifo", [join(root, "pipe.md")]);
    // The large document is a dependency (an edit could shrink it); the FIFO is not (never read).
    assert.deepEqual(documentedLaunchNodes(join(root, "x.py"), jobScriptsAround(root, [root])), {
      launches: [],
      read: [join(root, "big.md")],
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("documentedLaunchNodes: fenced blocks inside list items and block quotes, ~~~ fences, and indented code (not read) give their own lines", () => {
  const root = project({
    "x.py": "",
    "GUIDE.md": [
      "1. Single node:", // 0
      "", // 1
      "   ```bash", // 2
      "   torchrun --standalone --nproc_per_node=8 x.py", // 3
      "   ```", // 4
      "", // 5
      "> Two nodes:", // 6
      ">", // 7
      "> ~~~sh", // 8
      "> torchrun --nnodes=2 --nproc_per_node=8 x.py", // 9
      "> ~~~", // 10
      "", // 11
      "    torchrun --nnodes=3 x.py", // 12: indented code, not a fenced block
      "",
    ].join("\n"),
  });
  try {
    assert.deepEqual(
      documentedLaunchNodes(join(root, "x.py"), jobScriptsAround(root, [root])).launches.map((l) => [
        l.line,
        l.nodes,
        l.from,
      ]),
      [
        [3, "one", "--standalone"],
        [9, "several", "--nnodes=2"],
      ],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("launchNodesIn and slurmLaunchesOf: a variable among torchrun's options, assigned once to a literal (a string or an array), is read as the options it splits into", () => {
  const root = project({
    "pretrain.py": "",
    "finetune.py": "",
    "serve.py": "",
    "eval.py": "",
    // A string whose value expands names known when it is assigned, continued over lines.
    "run_string.sh": [
      "#!/bin/bash",
      "NODES=2",
      "PER_NODE=4",
      'LAUNCH_OPTS="--nproc_per_node $PER_NODE \\',
      '    --nnodes $NODES"',
      "torchrun $LAUNCH_OPTS pretrain.py --lr 1e-4",
      "",
    ].join("\n"),
    // An array, with a comment inside its list, expanded quoted and unquoted.
    "run_array.sh": [
      "#!/bin/bash",
      "WORLD=(",
      "  --nnodes 1   # one machine",
      "  --nproc_per_node 8",
      ")",
      'torchrun "${WORLD[@]}" finetune.py',
      "python -m torch.distributed.run ${WORLD[@]} eval.py",
      "",
    ].join("\n"),
    // An empty literal expands to no word at all; `--standalone` from a literal is read.
    "run_misc.sh": ['EXTRA=""', 'SOLO="--standalone"', "torchrun $EXTRA $SOLO serve.py", ""].join("\n"),
  });
  try {
    const nodes = (f: string) =>
      launchNodesIn(join(root, f), jobScriptsAround(root, [root])).map((l) => [
        l.script.slice(root.length + 1),
        l.line,
        l.nodes,
        l.from,
      ]);
    assert.deepEqual(nodes("pretrain.py"), [["run_string.sh", 5, "several", "--nnodes=2 (in $LAUNCH_OPTS)"]]);
    assert.deepEqual(nodes("finetune.py"), [["run_array.sh", 5, "one", '--nnodes=1 (in "${WORLD[@]}")']]);
    assert.deepEqual(nodes("eval.py"), [["run_array.sh", 6, "one", "--nnodes=1 (in ${WORLD[@]})"]]);
    assert.deepEqual(nodes("serve.py"), [["run_misc.sh", 2, "one", "--standalone (in $SOLO)"]]);
    // A torchrun line in a plain shell script is a launch of its file; its options are known.
    const [l] = slurmLaunchesOf(join(root, "pretrain.py"));
    assert.equal(l.launcher, "torchrun");
    assert.equal(l.unknownOptions, undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("launchNodesIn and slurmLaunchesOf: a variable among the launcher's options that is not known matches the script after it, and the launch says nothing of its options", () => {
  const root = project({
    "pretrain.py": "",
    "tasks/main.py": "",
    "tools/serve.py": "",
    "plain.py": "",
    "jobs/multi.sbatch": [
      "#!/bin/bash",
      "#SBATCH --nodes=2",
      "#SBATCH --gpus-per-node=8",
      // Assigned twice: not known.
      'ARGS="--nnodes 1"',
      'if [ -n "$BIG" ]; then ARGS="--nnodes 2"; fi',
      "srun torchrun $ARGS pretrain.py",
      "",
    ].join("\n"),
    // Set by the caller; a computed value; an array of unknown elements.
    "tasks/run.sh": [
      "python -m torch.distributed.launch $DISTRIBUTED_ARGS ./main.py --task x",
      'ARGS="--nproc_per_node $(nvidia-smi -L | wc -l)"',
      "torchrun $ARGS ../tools/serve.py",
      "OPTS=(--nnodes $NNODES)",
      'torchrun "${OPTS[@]}" ../tools/serve.py',
      // `+=` appends: assigned twice.
      'MORE="--nnodes 1"',
      'MORE+=" --nnodes 2"',
      "torchrun $MORE ../tools/serve.py",
      "",
    ].join("\n"),
    // `python $X file.py`: $X may start torch's launcher, so this is no plain python launch.
    "jobs/plain.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:1\nsrun python $PYFLAGS plain.py\n",
    // A variable taken for the program, as before: the options before it are known.
    "jobs/script.sh": "torchrun --standalone $TRAIN_SCRIPT --lr 1\n",
  });
  try {
    const around = jobScriptsAround(root, [root]);
    const nodes = (f: string) =>
      launchNodesIn(join(root, f), around).map((l) => [l.script.slice(root.length + 1), l.line, l.nodes, l.from]);
    assert.deepEqual(nodes("pretrain.py"), [["jobs/multi.sbatch", 5, null, "options not known"]]);
    assert.deepEqual(nodes("tasks/main.py"), [["tasks/run.sh", 0, null, "options not known"]]);
    assert.deepEqual(nodes("tools/serve.py"), [
      ["tasks/run.sh", 2, null, "options not known"],
      ["tasks/run.sh", 4, null, "options not known"],
      ["tasks/run.sh", 7, null, "options not known"],
    ]);
    assert.deepEqual(nodes("plain.py"), []);
    const [l] = slurmLaunchesOf(join(root, "pretrain.py"));
    assert.deepEqual([l.launcher, l.unknownOptions, l.passesLocalRankArg], ["torchrun", true, undefined]);
    // torch.distributed.launch with options not known: --use_env may be among them.
    const [m] = slurmLaunchesOf(join(root, "tasks/main.py"));
    assert.deepEqual([m.launcher, m.unknownOptions, m.passesLocalRankArg], ["torchrun", true, undefined]);
    assert.deepEqual(rankArgLaunchesIn(around), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("rankArgLaunchesIn and slurmLaunchesOf: torch.distributed.launch with its options in a known variable passes the local rank unless --use_env is among them", () => {
  const root = project({
    "a.py": "",
    "b.py": "",
    "run.sh": [
      'ARGS_A="--nproc_per_node 2"',
      'ARGS_B="--nproc_per_node 2 --use_env"',
      "python -m torch.distributed.launch $ARGS_A a.py",
      "python -m torch.distributed.launch $ARGS_B b.py",
      "",
    ].join("\n"),
  });
  try {
    const around = jobScriptsAround(root, [root]);
    assert.deepEqual(
      rankArgLaunchesIn(around).map((l) => [l.file.slice(root.length + 1), l.line]),
      [["a.py", 2]],
    );
    assert.equal(slurmLaunchesOf(join(root, "a.py"))[0].passesLocalRankArg, true);
    assert.equal(slurmLaunchesOf(join(root, "b.py"))[0].passesLocalRankArg, undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("launchNodesIn and documentedLaunchNodes mark a launch that starts the program with CUDA_VISIBLE_DEVICES set: on the command, or exported before it in the same script or block", () => {
  const root = project({
    "eval/score.py": "",
    // One start per line, each read on its own: inline, exported, assigned then exported, plain.
    "eval/inline.sh": "CUDA_VISIBLE_DEVICES=2,3 python score.py --n 8\n",
    "eval/exported.sh": "export CUDA_VISIBLE_DEVICES=0\ncd eval && python3 -u score.py\n",
    "eval/late.sh": "CUDA_VISIBLE_DEVICES=1\nexport CUDA_VISIBLE_DEVICES\npython score.py\n",
    // A bare assignment does not reach the program; an unset undoes an export.
    "eval/bare.sh": "CUDA_VISIBLE_DEVICES=1\npython score.py\n",
    "eval/unset.sh": "export CUDA_VISIBLE_DEVICES=1\nunset CUDA_VISIBLE_DEVICES\npython score.py\n",
    // A README that names no launcher: its python lines are read only when asked to.
    "README.md": "```bash\nCUDA_VISIBLE_DEVICES=0 python eval/score.py\n```\n\n```bash\npython eval/score.py\n```\n",
  });
  try {
    const file = join(root, "eval/score.py");
    const around = jobScriptsAround(join(root, "eval"), [root]);
    const marked = (ls: ReturnType<typeof launchNodesIn>) =>
      ls.map((l) => [l.script.slice(root.length + 1), !!l.setsVisibleDevices]).sort();
    assert.deepEqual(marked(launchNodesIn(file, around)), [
      ["eval/bare.sh", false],
      ["eval/exported.sh", true],
      ["eval/inline.sh", true],
      ["eval/late.sh", true],
      ["eval/unset.sh", false],
    ]);
    assert.deepEqual(documentedLaunchNodes(file, around).launches, [], "no launcher named: not read by default");
    assert.deepEqual(marked(documentedLaunchNodes(file, around, DOC_PYTHON_WORDS).launches), [
      ["README.md", false],
      ["README.md", true],
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('slurmLaunchesOf: srun [shifter ...] bash -c "...; python train.py" starts train.py; LOCAL_RANK from a sourced file is noted; strings that may change the GPUs are not read', () => {
  const job = (cmd: string) =>
    `#!/bin/bash\n#SBATCH --ntasks-per-node 4\n#SBATCH --gpus-per-task 1\n\nsrun -u shifter -V /data:/data --image=img:1 \\\n    ${cmd}\n`;
  const files = {
    "train.py": "print(1)\n",
    "vars.sh": "export RANK=$SLURM_PROCID\nexport LOCAL_RANK=$SLURM_LOCALID\n",
    "plain.sh": "export MASTER_PORT=29500\n",
    "gpus.sh": "export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID\n",
  };
  const launches = (cmd: string) => {
    const root = project({ ...files, "submit.sh": job(cmd) });
    try {
      return slurmLaunchesOf(join(root, "train.py")).map((l) => ({ ...l, script: l.script.slice(root.length) }));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
  const [l, ...rest] = launches('bash -c "\n    source vars.sh\n    python train.py ${args}\n    "');
  assert.equal(rest.length, 0);
  assert.deepEqual(l, {
    script: "/submit.sh",
    line: 4,
    launcher: "srun",
    gpusPerProcess: 1,
    gpusFrom: "#SBATCH --gpus-per-task=1",
    processesPerNode: 4,
    setsLocalRank: true,
    asksForGpus: true,
  });
  assert.equal(launches("bash -c 'source plain.sh; python train.py'")[0]?.setsLocalRank, false);
  assert.equal(launches("bash -lc 'python train.py'").length, 0); // `-lc` is not read
  assert.equal(launches("/bin/sh -c 'python -u train.py'").length, 1);
  // A string or sourced file that names CUDA_VISIBLE_DEVICES, changes folder, sources what cannot be read: not read.
  assert.deepEqual(launches("bash -c 'export CUDA_VISIBLE_DEVICES=$SLURM_LOCALID; python train.py'"), []);
  assert.deepEqual(launches("bash -c 'source gpus.sh; python train.py'"), []);
  assert.deepEqual(launches("bash -c 'source missing.sh; python train.py'"), []);
  assert.deepEqual(launches("bash -c 'source $ENV_FILE; python train.py'"), []);
  assert.deepEqual(launches("bash -c 'cd sub; python train.py'"), []);
  assert.deepEqual(launches("bash -c 'CUDA_LAUNCH_BLOCKING=1 python train.py'"), []);
});

test("launchNodesIn: the words a script passes after the file, where none expands", () => {
  const root = project({
    "train.py": "",
    "run.sh": 'python train.py --data ./d --gpu_ids "0"\npython -u train.py $EXTRA\npython train.py\n',
  });
  try {
    const launches = launchNodesIn(join(root, "train.py"), jobScriptsAround(root, [root]));
    assert.deepEqual(
      launches.map((l) => [l.line, l.args]),
      [
        [0, ["--data", "./d", "--gpu_ids", "0"]],
        [1, undefined],
        [2, []],
      ],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
