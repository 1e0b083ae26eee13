/**
 * The job-script parser's reading of tasks per node, on the layouts measured on a two-node Slurm
 * 22.05.8 cluster (test/fixtures/slurm/ntasks-per-node/measured.md): `--ntasks` takes precedence
 * over `--ntasks-per-node`, which is then a maximum, and srun spreads the tasks over all the nodes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SourceText } from "../../../../../server/src/engine/manifests/source";
import {
  jobScriptFacts,
  launchOf,
  stepTasksPerNode,
  tasksOnEachNode,
} from "../../../../../server/src/engine/manifests/jobscript";

/** The request of a job script with these `#SBATCH` options (one line each) and one command. */
function facts(options: string[], command = "srun python train.py") {
  return jobScriptFacts(new SourceText(`#!/bin/bash\n${options.map((o) => `#SBATCH ${o}\n`).join("")}${command}\n`));
}
const tasks = (...options: string[]) => facts(options).request.tasksPerNode;

test("jobRequest: --ntasks takes precedence over --ntasks-per-node (measured layouts)", () => {
  // One node: srun started one task (SLURM_NTASKS=1), not two.
  assert.equal(tasks("--nodes=1", "--ntasks=1", "--ntasks-per-node=2"), 1);
  assert.equal(tasks("--nodes=1 --ntasks=1 --ntasks-per-node=2"), 1, "on one line");
  assert.equal(tasks("-N 1", "-n 1", "--tasks-per-node=2"), 1, "short options and the old name");
  assert.equal(tasks("--ntasks=1", "--ntasks-per-node=2"), 1, "no --nodes: one node");
  assert.equal(tasks("--ntasks=2", "--ntasks-per-node=2"), 2);
  // Two nodes: the tasks are spread over both.
  assert.equal(tasks("--nodes=2", "--ntasks=2", "--ntasks-per-node=2"), 1);
  assert.equal(tasks("--nodes=2", "--ntasks=4", "--ntasks-per-node=4"), 2);
  assert.equal(tasks("--nodes=2", "--ntasks=6", "--ntasks-per-node=4"), 3);
  assert.equal(tasks("--ntasks=6", "--ntasks-per-node=4"), 3, "the fewest nodes: two, three tasks each");
  assert.equal(tasks("--ntasks=8", "--ntasks-per-node=4"), 4);
  // Not the same on every node (two tasks and one), or refused by sbatch.
  assert.equal(tasks("--nodes=2", "--ntasks=3", "--ntasks-per-node=2"), null);
  assert.equal(tasks("--ntasks=3", "--ntasks-per-node=2"), null);
  assert.equal(tasks("--nodes=1", "--ntasks=2", "--ntasks-per-node=1"), null, "refused");
  assert.equal(tasks("--nodes=2", "--ntasks=5", "--ntasks-per-node=2"), null, "refused");
  // A range: Slurm chose two nodes there.
  assert.equal(tasks("--nodes=1-2", "--ntasks=2", "--ntasks-per-node=2"), null);
});

test("jobRequest: one of the counts alone, as before", () => {
  assert.equal(tasks("--ntasks-per-node=4"), 4);
  assert.equal(tasks("--nodes=2", "--ntasks-per-node=4"), 4);
  assert.equal(tasks("--nodes=2", "--ntasks=8"), 4);
  assert.equal(tasks("--nodes=1", "--ntasks=3"), 3);
  assert.equal(tasks("--nodes=2", "--ntasks=3"), null, "two tasks and one");
  assert.equal(tasks("--ntasks=4"), null, "Slurm picks the nodes");
  assert.equal(tasks("--gres=gpu:4"), null);
  const r = facts(["--nodes=2-4", "--ntasks-per-node=2"]).request;
  assert.equal(r.nodes, 2, "the least count of a range");
  assert.equal(r.nodeCount, null);
});

test("jobRequest: --gpus-per-task gives a node the GPUs of the tasks the allocation holds there", () => {
  // Measured: the batch step of `--nodes=2 --ntasks=2 --ntasks-per-node=2 --gpus-per-task=1` saw two GPUs.
  const r = facts(["--nodes=2", "--ntasks=2", "--ntasks-per-node=2", "--gpus-per-task=1"]).request;
  assert.equal(r.tasksPerNode, 1);
  assert.equal(r.gpusPerNode, 2);
  assert.equal(facts(["--ntasks-per-node=4", "--gpus-per-task=1"]).request.gpusPerNode, 4);
  assert.equal(facts(["--nodes=1", "--ntasks=2", "--gpus-per-task=2"]).request.gpusPerNode, 4);
});

test("tasksOnEachNode", () => {
  assert.equal(tasksOnEachNode(null, 4, null), 4);
  assert.equal(tasksOnEachNode(null, null, 2), null);
  assert.equal(tasksOnEachNode(1, 2, 1), 1);
  assert.equal(tasksOnEachNode(1, 2, 2), null, "fewer tasks than nodes");
  assert.equal(tasksOnEachNode(3, 2, 2), null);
  assert.equal(tasksOnEachNode(4, 2, 2), 2);
  assert.equal(tasksOnEachNode(5, 2, 2), null);
  assert.equal(tasksOnEachNode(4, null, null), null);
  assert.equal(tasksOnEachNode(2, 0, 1), null);
});

test("stepTasksPerNode: srun's own counts against the job's (measured steps)", () => {
  const step = (options: string[], srun: string) => {
    const f = facts(options, `srun ${srun} python train.py`);
    const l = launchOf(f.commands[0]);
    return stepTasksPerNode(l.srun!.options, f.request);
  };
  const twoNodes = ["--nodes=2", "--ntasks-per-node=2"];
  assert.equal(step(twoNodes, "-n 1 --ntasks-per-node=2"), 1, "one task, on one node");
  assert.equal(step(twoNodes, "-n 2"), 1, "spread over the job's two nodes");
  assert.equal(step(twoNodes, "-n 3"), null, "two tasks and one");
  assert.equal(step(twoNodes, "-N 1 -n 2"), 2);
  assert.equal(step(twoNodes, "-n 2 --ntasks-per-node=1"), 1);
  // The step inherits SLURM_NTASKS=4: srun ignored --ntasks-per-node=1 and started two a node.
  assert.equal(step(twoNodes, "--ntasks-per-node=1"), null);
  assert.equal(step(twoNodes, "-N 2 --ntasks-per-node=1"), null, "the same on 22.05.8; other versions differ");
  assert.equal(step(twoNodes, "--ntasks-per-node=2"), 2, "it matches the job's");
  assert.equal(step(twoNodes, ""), 2);
  // A job without a task count: srun's --ntasks-per-node counts.
  assert.equal(step(["--nodes=2", "--gres=gpu:2"], "--ntasks-per-node=1"), 1);
  assert.equal(step(["--nodes=2", "--gres=gpu:2"], "-N 2"), null);
  // One node with two tasks: srun -n 2 --ntasks-per-node=1 started two tasks there.
  assert.equal(step(["--nodes=1", "--ntasks=2"], "-n 2 --ntasks-per-node=1"), 2);
  assert.equal(step(["--nodes=1", "--ntasks=2"], "-n 1 --ntasks-per-node=2"), 1);
  // The job's --ntasks over its --ntasks-per-node reaches the step.
  assert.equal(step(["--nodes=1", "--ntasks=1", "--ntasks-per-node=2"], ""), 1);
  assert.equal(step(["--ntasks=4"], "-n 2"), null, "the job's nodes are Slurm's choice");
  assert.equal(step(["--gres=gpu:4"], "-n 2"), 2, "a job with no count has one node");
});
