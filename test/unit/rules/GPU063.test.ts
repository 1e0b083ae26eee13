import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { SRUN_ONE_GPU_PER_TASK, SRUN_NO_GPUS, TORCHRUN } from "../support/slurmLaunches";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { ruleByCode } from "../../../server/src/engine/rules";

fixtureTests("GPU063", { preview: true, slurm: [SRUN_ONE_GPU_PER_TASK] });

const PREVIEW = { preview: true };
const SRC = [
  "import argparse",
  "import os",
  "",
  "def main():",
  "    parser = argparse.ArgumentParser()",
  '    parser.add_argument("--gpu", default="0")',
  "    args = parser.parse_args()",
  '    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu',
  "    import torch",
  "",
  'if __name__ == "__main__":',
  "    main()",
  "",
].join("\n");

test("GPU063: an unconditional write under srun in a GPU job: warning on the write, related on the job script's line", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU063", { ...PREVIEW, slurm: [SRUN_ONE_GPU_PER_TASK] });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 7, character: 4 }, end: { line: 7, character: 49 } });
  assert.equal(
    d.message,
    'os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu replaces the GPU ids Slurm set: the job script train.sbatch (line 6) starts this file with `srun python` in a job that asks for GPUs, and Slurm sets CUDA_VISIBLE_DEVICES to the job\'s GPUs on the node (measured on Slurm 22.05: a job given GPUs 2 and 3 got 2,3), so this names GPUs of the node instead (without device cgroups another job\'s GPU, with them an id that may not exist); keep Slurm\'s value (write only when "SLURM_JOB_ID" not in os.environ) or choose among its ids',
  );
  assert.deepEqual(d.related, [
    {
      file: "/proj/slurm/train.sbatch",
      range: { start: { line: 5, character: 0 }, end: { line: 5, character: 0 } },
      message: "train.sbatch:6 starts this file in a job that asks Slurm for GPUs",
    },
  ]);
  // Under torchrun in the job the wording names it.
  const [t] = await lintCode(SRC, "GPU063", { ...PREVIEW, slurm: [{ ...TORCHRUN, asksForGpus: true }] });
  assert.match(t.message, /starts this file with torchrun in a job that asks for GPUs/);
  // A preview rule: nothing without --preview.
  assert.deepEqual(await lintCode(SRC, "GPU063", { slurm: [SRUN_ONE_GPU_PER_TASK] }), []);
  assert.equal(ruleByCode("GPU063")?.meta.preview, true);
});

test("GPU063: silent without a launch, in a job that asks for no GPU, and where the file may leave Slurm's value alone", async () => {
  const gpu = { ...PREVIEW, slurm: [SRUN_ONE_GPU_PER_TASK] };
  assert.deepEqual(await lintCode(SRC, "GPU063", PREVIEW), []);
  assert.deepEqual(await lintCode(SRC, "GPU063", { ...PREVIEW, slurm: [SRUN_NO_GPUS] }), []);
  for (const [what, text] of [
    ["a SLURM_ read", SRC.replace("    import torch", '    print(os.environ.get("SLURM_JOB_ID"))\n    import torch')],
    [
      "an `in` test",
      SRC.replace("    os.environ", '    if "SLURM_JOB_ID" in os.environ:\n        pass\n    os.environ'),
    ],
    ["a branch", SRC.replace("    os.environ", "    if args.gpu:\n        os.environ")],
    ["a rank", SRC.replace("args.gpu\n", 'os.environ["LOCAL_RANK"]\n')],
    ["mpi4py", SRC.replace("import os\n", "import os\nfrom mpi4py import MPI\n")],
    [
      "setdefault",
      SRC.replace(
        'os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu',
        'os.environ.setdefault("CUDA_VISIBLE_DEVICES", args.gpu)',
      ),
    ],
    ["an uncalled function", SRC.replace("    main()", "    pass")],
  ])
    assert.deepEqual(await lintCode(text, "GPU063", gpu), [], what);
});

test("GPU063: a write in the body of the `__main__` block runs whenever the file is started; one in its `else` or a block inside it does not", async () => {
  const gpu = { ...PREVIEW, slurm: [SRUN_ONE_GPU_PER_TASK] };
  const main = (body: string) =>
    [
      "import argparse",
      "import os",
      "",
      'if __name__ == "__main__":',
      "    args = argparse.ArgumentParser().parse_args()",
      body,
      "",
    ].join("\n");
  const [d, ...rest] = await lintCode(main('    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu'), "GPU063", gpu);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  for (const body of [
    '    if args.gpu:\n        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu',
    '    pass\nelse:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
  ])
    assert.deepEqual(await lintCode(main(body), "GPU063", gpu), [], body);
});

test("GPU063: an if/else (or if/elif/else) that writes in every branch replaces Slurm's value on every path; one with a branch that keeps it does not", async () => {
  const gpu = { ...PREVIEW, slurm: [SRUN_ONE_GPU_PER_TASK] };
  const lines = async (text: string) => (await lintCode(text, "GPU063", gpu)).map((d) => d.range.start.line);
  const branches = (body: string) => SRC.replace('    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', body);
  const W = (indent: string, value: string) => `${indent}os.environ["CUDA_VISIBLE_DEVICES"] = ${value}`;
  // Reported: each branch's write, in a function the file calls and in the `__main__` body.
  assert.deepEqual(
    await lines(
      branches(["    if args.gpu:", W("        ", "args.gpu"), "    else:", W("        ", '"0"')].join("\n")),
    ),
    [8, 10],
  );
  const elifs = [
    "    if args.gpu:",
    W("        ", "args.gpu"),
    "    elif args.all:",
    W("        ", '"0,1,2,3"'),
    "    else:",
    W("        ", '"0"'),
  ];
  assert.deepEqual(await lines(branches(elifs.join("\n"))), [8, 10, 12]);
  const inner = [
    "    if args.gpu:",
    "        if args.one:",
    W("            ", '"0"'),
    "        else:",
    W("            ", "args.gpu"),
    "    else:",
    W("        ", '"0"'),
  ];
  assert.deepEqual(await lines(branches(inner.join("\n"))), [9, 11, 13]);
  const main = [
    "import os",
    'if __name__ == "__main__":',
    "    if os.cpu_count() > 8:",
    W("        ", '"0,1"'),
    "    else:",
    W("        ", '"0"'),
    "",
  ];
  assert.deepEqual(await lines(main.join("\n")), [3, 5]);
  // A read after the if/else reads the file's own value.
  const read = branches(
    [
      "    if args.gpu:",
      W("        ", "args.gpu"),
      "    else:",
      W("        ", '"0"'),
      '    print(os.environ["CUDA_VISIBLE_DEVICES"])',
    ].join("\n"),
  );
  assert.deepEqual(await lines(read), [8, 10]);
  // Silent: no else; an elif without else; a branch that writes nothing, hides the GPUs or keeps a set value;
  // a read in the else before its write; an if/else inside a loop or inside another if without else.
  for (const body of [
    ["    if args.gpu:", W("        ", "args.gpu")],
    ["    if args.gpu:", W("        ", "args.gpu"), "    elif args.all:", W("        ", '"0,1"')],
    [
      "    if args.gpu:",
      W("        ", "args.gpu"),
      "    elif args.all:",
      "        pass",
      "    else:",
      W("        ", '"0"'),
    ],
    ["    if args.gpu:", W("        ", "args.gpu"), "    else:", W("        ", '""')],
    [
      "    if args.gpu:",
      W("        ", "args.gpu"),
      "    else:",
      '        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")',
    ],
    [
      "    if args.gpu:",
      W("        ", "args.gpu"),
      "    else:",
      '        print(os.environ.get("CUDA_VISIBLE_DEVICES"))',
      W("        ", '"0"'),
    ],
    [
      "    for _ in range(1):",
      "        if args.gpu:",
      W("            ", "args.gpu"),
      "        else:",
      W("            ", '"0"'),
    ],
    [
      "    if args.set:",
      "        if args.gpu:",
      W("            ", "args.gpu"),
      "        else:",
      W("            ", '"0"'),
    ],
  ])
    assert.deepEqual(await lines(branches(body.join("\n"))), [], body.join("\n"));
});

test("GPU063: a read of CUDA_VISIBLE_DEVICES after the write reads the file's own value; one before it may keep Slurm's", async () => {
  const gpu = { ...PREVIEW, slurm: [SRUN_ONE_GPU_PER_TASK] };
  const after = SRC.replace("    import torch", '    print(os.environ["CUDA_VISIBLE_DEVICES"])\n    import torch');
  assert.deepEqual(
    (await lintCode(after, "GPU063", gpu)).map((d) => d.range.start.line),
    [7],
  );
  const before = SRC.replace("    os.environ", '    print(os.environ.get("CUDA_VISIBLE_DEVICES"))\n    os.environ');
  assert.deepEqual(await lintCode(before, "GPU063", gpu), []);
});

test("GPU063: silent where the job script already decides CUDA_VISIBLE_DEVICES for the command (GPU021 reports the script)", async () => {
  assert.deepEqual(
    await lintCode(SRC, "GPU063", { ...PREVIEW, slurm: [{ ...SRUN_ONE_GPU_PER_TASK, setsVisibleDevices: true }] }),
    [],
  );
  // Another launch of the file that leaves the variable to Slurm is still reported.
  const both = [
    { ...SRUN_ONE_GPU_PER_TASK, setsVisibleDevices: true },
    { ...SRUN_ONE_GPU_PER_TASK, line: 9 },
  ];
  const [d] = await lintCode(SRC, "GPU063", { ...PREVIEW, slurm: both });
  assert.match(d.message, /train\.sbatch \(line 10\)/);
});

test("GPU063 end to end: the job script beside the file is found, its #SBATCH or srun GPU request read", async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu063-"));
  try {
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, "launch.py"), SRC);
    const job = (lines: string) => writeFileSync(join(root, "job.sbatch"), `#!/bin/bash\n${lines}`);
    const lint = async () => {
      clearSlurmLaunchCache();
      const { options } = resolveLintOptions(join(root, "launch.py"), {}, "editorOnly");
      return (await lintCode(SRC, "GPU063", { ...options, preview: true })).map((d) => d.range.start.line);
    };
    job("#SBATCH --gres=gpu:1\n\nsrun python launch.py --gpu 0\n");
    assert.deepEqual(await lint(), [7]);
    job("#SBATCH --ntasks=1\n\nsrun --gpus-per-task=1 python launch.py\n");
    assert.deepEqual(await lint(), [7]);
    // No GPU asked for, or only through a variable: silent.
    job("#SBATCH --ntasks=1\n\nsrun python launch.py\n");
    assert.deepEqual(await lint(), []);
    job("#SBATCH --ntasks=1\n\nsrun --gres=$GRES python launch.py\n");
    assert.deepEqual(await lint(), []);
    // The job script sets the variable before the file runs, or hands Slurm's value to it: silent.
    job("#SBATCH --gres=gpu:4\nexport CUDA_VISIBLE_DEVICES=0,1,2,3\npython launch.py --gpu 0,1,2,3\n");
    assert.deepEqual(await lint(), []);
    job('#SBATCH --gres=gpu:1\nsrun python launch.py --gpu "$CUDA_VISIBLE_DEVICES"\n');
    assert.deepEqual(await lint(), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
