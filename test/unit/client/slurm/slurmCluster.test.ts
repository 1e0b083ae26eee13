/**
 * Against a real single-node Slurm (scripts/slurm-cluster.mjs: slurmctld, slurmd, munged in a temp
 * folder, two fake GPUs, stopped by pid afterwards): the generated job script submitted with
 * `sbatch --parsable` runs, and its output shows CUDA_VISIBLE_DEVICES as Slurm set it; the
 * partition and job queries read the live cluster; a long job is cancelled; the output follower
 * reads a file that does not exist yet. Skipped, with the reason, where Slurm is not installed or
 * the tests do not run as root.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { slurmAvailability, startCluster, waitJob, type Cluster } from "../../../../scripts/slurm-cluster.mjs";
import { jobScript, outputPathFor } from "../../../../client/src/slurm/jobScript";
import {
  cancelJob,
  jobDetails,
  queryJobs,
  queryPartitions,
  resetSqueueProbe,
  submitScript,
} from "../../../../client/src/slurm/cli";
import { followFile } from "../../../../client/src/slurm/follow";

const skip = slurmAvailability() ?? false;
let cluster: Cluster;

before(async () => {
  if (!skip) cluster = await startCluster({ gpus: 2, cpus: 4 });
});
after(async () => {
  await cluster?.stop();
});

/** Writes a Python file and its generated job script into a folder with a space and a quote in its name. */
function prepare(
  name: string,
  program: string,
  over: Partial<Parameters<typeof jobScript>[0]> = {},
): { script: string; dir: string } {
  const dir = path.join(cluster.jobsDir, `it's ${name}`);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.py`);
  fs.writeFileSync(file, program);
  const script = path.join(dir, `${name}.sbatch`);
  fs.writeFileSync(
    script,
    jobScript({
      file,
      python: "python3",
      nodes: 1,
      gpusPerNode: 1,
      time: "5",
      output: outputPathFor(dir),
      launcher: "python",
      ...over,
    }),
  );
  return { script, dir };
}

const PROBE =
  "import os\nprint('CVD=' + os.environ.get('CUDA_VISIBLE_DEVICES', 'unset'), 'ORDER=' + os.environ.get('CUDA_DEVICE_ORDER', 'unset'), 'LOCALID=' + os.environ.get('SLURM_LOCALID', 'unset'), flush=True)\n";

test(
  "generated script → sbatch --parsable → the job's output shows Slurm's CUDA_VISIBLE_DEVICES",
  { skip },
  async () => {
    const { script, dir } = prepare("probe", PROBE, { gpusPerNode: 2 });
    const { jobId } = await submitScript(script, { env: cluster.env });
    assert.match(jobId, /^\d+$/);
    const done = await waitJob(cluster.env, jobId);
    assert.equal(done.get("JobState"), "COMPLETED");
    const details = await jobDetails(jobId, { env: cluster.env });
    assert.equal(details.stdout, path.join(dir, `slurm-probe-${jobId}.out`));
    assert.equal(details.workDir, dir);
    const lines = fs.readFileSync(details.stdout!, "utf8").trim().split("\n").sort();
    // Two tasks (one per GPU), each sees both GPUs of the step, renumbered from 0.
    assert.deepEqual(lines, ["CVD=0,1 ORDER=PCI_BUS_ID LOCALID=0", "CVD=0,1 ORDER=PCI_BUS_ID LOCALID=1"]);
  },
);

test(
  "torchrun script: one task per node gets the rendezvous line's variables (torchrun itself replaced by a stand-in module)",
  { skip },
  async () => {
    // No torch here: a stand-in `torch/distributed/run.py` on PYTHONPATH prints the argv it got.
    const { script, dir } = prepare("ddp", PROBE, { launcher: "torchrun", gpusPerNode: 2 });
    fs.mkdirSync(path.join(dir, "stub", "torch", "distributed"), { recursive: true });
    for (const f of ["torch/__init__.py", "torch/distributed/__init__.py"])
      fs.writeFileSync(path.join(dir, "stub", f), "");
    fs.writeFileSync(
      path.join(dir, "stub", "torch", "distributed", "run.py"),
      "import os, sys\nprint('ARGV=' + ' '.join(sys.argv[1:]), 'CVD=' + os.environ['CUDA_VISIBLE_DEVICES'], flush=True)\n",
    );
    fs.writeFileSync(
      script,
      fs
        .readFileSync(script, "utf8")
        .replace(
          "export CUDA_DEVICE_ORDER=PCI_BUS_ID",
          `export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport PYTHONPATH=${JSON.stringify(path.join(dir, "stub"))}`,
        ),
    );
    const { jobId } = await submitScript(script, { env: cluster.env });
    assert.equal((await waitJob(cluster.env, jobId)).get("JobState"), "COMPLETED");
    const out = fs.readFileSync((await jobDetails(jobId, { env: cluster.env })).stdout!, "utf8").trim();
    assert.equal(
      out,
      `ARGV=--nnodes 1 --nproc_per_node 2 --rdzv_id ${jobId} --rdzv_backend c10d --rdzv_endpoint ${cluster.nodeName}:29400 ${path.join(dir, "ddp.py")} CVD=0,1`,
    );
  },
);

test(
  "queries on the live cluster: partition GPUs total/free, the user's jobs; scancel of a long job",
  { skip },
  async () => {
    resetSqueueProbe();
    const { script, dir } = prepare("long", "import time\nprint('started', flush=True)\ntime.sleep(300)\n");
    const { jobId } = await submitScript(script, { env: cluster.env });
    await waitJob(cluster.env, jobId, { states: ["RUNNING"] });
    const parts = await queryPartitions({ env: cluster.env });
    assert.deepEqual(
      parts.map((p) => [p.partition, p.isDefault, p.gpus, p.gpusUsed, p.gpusFree]),
      [["gpu", true, 2, 1, 1]],
    );
    const { jobs, source } = await queryJobs({ env: cluster.env });
    assert.equal(source, "json");
    const mine = jobs.find((j) => String(j.id) === jobId);
    assert.ok(mine, `job ${jobId} in ${JSON.stringify(jobs.map((j) => j.id))}`);
    assert.deepEqual(
      [mine.state, mine.gpusPerNode, mine.nodes, mine.timeLimitMinutes, mine.name],
      ["RUNNING", 1, cluster.nodeName, 5, "long"],
    );
    // The follower reads the output as it is written.
    const seen: string[] = [];
    const f = followFile(path.join(dir, `slurm-long-${jobId}.out`), { intervalMs: 100, onData: (t) => seen.push(t) });
    for (let i = 0; i < 100 && !seen.join("").includes("started"); i++) await new Promise((r) => setTimeout(r, 100));
    await f.stop();
    assert.equal(seen.join(""), "started\n");
    await cancelJob(jobId, { env: cluster.env });
    assert.equal((await waitJob(cluster.env, jobId, { timeoutMs: 20_000 })).get("JobState"), "CANCELLED");
    const after = (await queryJobs({ env: cluster.env })).jobs.find((j) => String(j.id) === jobId);
    assert.equal(after?.state, "CANCELLED");
  },
);

test("Slurm's refusals arrive as its own message", { skip }, async () => {
  const { script } = prepare("toomany", PROBE, { gpusPerNode: 3 });
  await assert.rejects(
    submitScript(script, { env: cluster.env }),
    /sbatch --parsable .*: sbatch: error: .*(Requested node configuration is not available|Invalid generic resource)/,
  );
  const { script: s2 } = prepare("nopart", PROBE, { partition: "nosuch" });
  await assert.rejects(submitScript(s2, { env: cluster.env }), /invalid partition specified: nosuch/i);
});
