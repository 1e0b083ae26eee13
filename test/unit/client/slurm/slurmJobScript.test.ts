/**
 * The job-script generator (client/src/slurm/jobScript.ts): exact text for both launchers and both
 * GPU options, safe quoting of hostile paths (checked by running bash on the generated step words),
 * refused values, and no finding from the project's own job-script rules (GPU021-GPU025, preview
 * included) through the engine's lint.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import {
  bashQuote,
  isSlurmTime,
  jobNameFor,
  jobScript,
  JobScriptError,
  outputPathFor,
  sbatchQuote,
  type JobScriptSpec,
} from "../../../../client/src/slurm/jobScript";
import { lintManifest } from "../../../../server/src/engine/manifests/lintManifest";

const base: JobScriptSpec = {
  file: "/home/ada/proj/train.py",
  python: "/home/ada/venv/bin/python",
  partition: "gpu",
  nodes: 1,
  gpusPerNode: 2,
  time: "01:00:00",
  output: outputPathFor("/home/ada/proj"),
  launcher: "python",
};

test("jobScript: plain python, one task per GPU, --gpus-per-node, exact text", () => {
  assert.equal(
    jobScript({ ...base, args: ["--epochs", "3"] }),
    [
      "#!/bin/bash",
      "# Written by GPU Pilot for train.py. Edit freely, then submit (sbatch).",
      "#SBATCH --job-name=train",
      "#SBATCH --partition=gpu",
      "#SBATCH --nodes=1",
      "#SBATCH --ntasks-per-node=2",
      "#SBATCH --gpus-per-node=2",
      "#SBATCH --time=01:00:00",
      "#SBATCH --output=/home/ada/proj/slurm-%x-%j.out",
      "#SBATCH --chdir=/home/ada/proj",
      "",
      "# Slurm sets CUDA_VISIBLE_DEVICES for the job and for each srun step, numbered from 0: do not set it here.",
      "export CUDA_DEVICE_ORDER=PCI_BUS_ID",
      "",
      "# One task per GPU (2 per node); each task reads SLURM_LOCALID / SLURM_PROCID to pick its GPU.",
      "srun /home/ada/venv/bin/python /home/ada/proj/train.py --epochs 3",
      "",
    ].join("\n"),
  );
});

test("jobScript: torchrun, one task per node, rendezvous on the first node, --gres", () => {
  const s = jobScript({
    ...base,
    launcher: "torchrun",
    nodes: 4,
    gpusPerNode: 8,
    gpuOption: "gres",
    partition: undefined,
    time: "",
  });
  const lines = s.split("\n");
  assert.ok(lines.includes("#SBATCH --nodes=4"));
  assert.ok(lines.includes("#SBATCH --ntasks-per-node=1"));
  assert.ok(lines.includes("#SBATCH --gres=gpu:8"));
  assert.ok(!s.includes("--partition"), "no partition: the cluster's default");
  assert.ok(!s.includes("--time"), "no time: the partition's default");
  assert.ok(lines.includes(`head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)`));
  assert.ok(
    lines.includes(
      `srun /home/ada/venv/bin/python -m torch.distributed.run --nnodes "$SLURM_NNODES" --nproc_per_node 8 --rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$head_node:29400" /home/ada/proj/train.py`,
    ),
  );
  assert.ok(!/CUDA_VISIBLE_DEVICES=/.test(s));
  assert.ok(lines.includes("export CUDA_DEVICE_ORDER=PCI_BUS_ID"));
});

test("jobScript: no finding from the job-script rules (GPU021-GPU025, preview too) for every launcher and GPU option", () => {
  for (const launcher of ["python", "torchrun"] as const) {
    for (const gpuOption of ["gpus-per-node", "gres"] as const) {
      for (const [nodes, gpus] of [
        [1, 1],
        [1, 4],
        [2, 8],
      ]) {
        const text = jobScript({
          ...base,
          launcher,
          gpuOption,
          nodes,
          gpusPerNode: gpus,
          file: "/srv/it's a $dir/train job.py",
          output: outputPathFor("/srv/it's a $dir"),
        });
        const r = lintManifest(text, "jobscript", { preview: true });
        assert.deepEqual(r.ruleFailures, []);
        assert.deepEqual(
          r.diagnostics.map((d) => `${d.code}:${d.range.start.line}: ${d.message}`),
          [],
          `${launcher} ${gpuOption} ${nodes}x${gpus}:\n${text}`,
        );
      }
    }
  }
});

test("jobScript: the lint does see a CUDA_VISIBLE_DEVICES export added to a generated script (the check above can fail)", () => {
  const text = jobScript(base).replace(
    "export CUDA_DEVICE_ORDER=PCI_BUS_ID",
    "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0,1",
  );
  assert.deepEqual(
    lintManifest(text, "jobscript").diagnostics.map((d) => d.code),
    ["GPU021"],
  );
});

test("bashQuote: bash reads back the very words, whatever they hold", () => {
  const words = [
    "/tmp/a b/c.py",
    "it's",
    "$HOME",
    "`id`",
    "$(id)",
    'a"b',
    "back\\slash",
    "*",
    "",
    "-x",
    "ü/日本.py",
    "!event",
  ];
  const out = execFileSync("bash", ["-c", `printf '%s\\0' ${words.map(bashQuote).join(" ")}`], { encoding: "utf8" });
  assert.deepEqual(out.split("\0").slice(0, -1), words);
  assert.equal(bashQuote("/plain/path.py"), "/plain/path.py");
  assert.equal(bashQuote("it's"), `'it'\\''s'`);
});

test("sbatchQuote and outputPathFor: spaces and quotes are double-quoted, % in the folder doubled", () => {
  assert.equal(sbatchQuote("/a/b/slurm-%j.out"), "/a/b/slurm-%j.out");
  assert.equal(sbatchQuote('/a b/"x"\\y'), '"/a b/\\"x\\"\\\\y"');
  assert.equal(outputPathFor("/data/100%/run"), "/data/100%%/run/slurm-%x-%j.out");
  assert.equal(outputPathFor("/data/", "out-%j.txt"), "/data/out-%j.txt");
});

test("jobNameFor and isSlurmTime", () => {
  assert.equal(jobNameFor("/x/my train (v2).py"), "my_train__v2_");
  assert.equal(jobNameFor("/x/finetune.py"), "finetune");
  for (const t of ["30", "30:00", "2:00:00", "1-12", "1-12:30", "1-12:30:00"]) assert.ok(isSlurmTime(t), t);
  for (const t of ["1h", "2:00:00:00", "", "-1", "1:2:3:4", "ab"]) assert.ok(!isSlurmTime(t), t);
});

test("jobScript: refused values name their field and say why", () => {
  const bad = (over: Partial<JobScriptSpec>, field: string, re: RegExp) => {
    assert.throws(
      () => jobScript({ ...base, ...over }),
      (e: unknown) => e instanceof JobScriptError && e.field === field && re.test(e.message),
    );
  };
  bad({ nodes: 0 }, "nodes", /whole number of at least 1, got 0/);
  bad({ gpusPerNode: 1.5 }, "gpusPerNode", /got 1.5/);
  bad({ time: "2h" }, "time", /not one of sbatch's forms/);
  bad({ partition: "gpu;rm -rf" }, "partition", /not a Slurm partition name/);
  bad({ file: "train.py" }, "file", /absolute path/);
  bad({ output: "out.txt" }, "output", /absolute path/);
  bad({ file: "/a/b\nc.py" }, "file", /line break/);
  bad({ args: ["ok", "x\ny"] }, "args[1]", /line break/);
});
