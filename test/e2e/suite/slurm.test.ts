/// <reference types="mocha" />
// Issue 23 against a real Slurm: the runner (run.mjs) starts a single-node cluster with two fake GPUs
// (scripts/slurm-cluster.mjs) and passes SLURM_CONF to the extension host. Submit → view → output →
// cancel, through the command, the Slurm view's provider and the output follower. Skipped (with the
// runner's reason) where Slurm is not installed or the runner is not root.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, waitFor } from "./util";
import { skipWithReason } from "./skipReason";
import { setWorkspaceSetting, wsUri } from "./helpers";

interface SlurmRow {
  label: string;
  description: string;
  contextValue: string;
}
interface SlurmApi {
  getSlurmState(): {
    available: boolean;
    visible: boolean;
    rows: SlurmRow[];
    snapshot: { polls: number; jobsError: string | null };
    submitted: Array<{
      jobId: string;
      output: string | null;
      tail: { text: string; dropped: number };
      state: string | null;
      done: boolean;
    }>;
  };
  refreshSlurm(): Promise<void>;
  submitToSlurm(
    uri: vscode.Uri,
    opts?: { ask?: boolean; submit?: boolean },
  ): Promise<{ jobId?: string; script?: string } | undefined>;
  cancelSlurmJob(id: string): Promise<boolean>;
}

suite("Slurm (issue 23): submit, view, output, cancel on a real single-node Slurm", function () {
  this.timeout(120_000);
  const restore: Array<() => Promise<void>> = [];
  let api: SlurmApi;

  suiteSetup(async function () {
    if (process.env.GPU_PILOT_E2E_SLURM_SKIP) skipWithReason(this, process.env.GPU_PILOT_E2E_SLURM_SKIP);
    assert.ok(process.env.SLURM_CONF, "the runner passes SLURM_CONF to the extension host");
    api = (await getApi()) as unknown as SlurmApi;
    restore.push(await setWorkspaceSetting("gpuPilot.slurm", "time", "5"));
  });
  suiteTeardown(async () => {
    for (const r of restore.reverse()) await r();
  });

  test("the Slurm view is offered (sinfo on PATH), polls while visible, and lists the partition's GPUs", async () => {
    const s = api.getSlurmState();
    assert.equal(s.available, true);
    await vscode.commands.executeCommand("gpuPilot.slurm.focus");
    await waitFor(() => api.getSlurmState().visible, "the Slurm view visible");
    const rows: SlurmRow[] = await waitFor(() => {
      const r = api.getSlurmState().rows;
      return r.some((x) => x.contextValue === "slurmPartition") ? r : null;
    }, "a partition row from the view's own poll");
    assert.deepEqual(
      rows.filter((r) => r.contextValue === "slurmPartition").map((r) => `${r.label} | ${r.description}`),
      ["gpu (default) | 2 of 2 GPUs free · 1 node"],
    );
  });

  test("submit a Python file: the job script beside it, sbatch, the output shows CUDA_VISIBLE_DEVICES as Slurm set it", async () => {
    restore.push(await setWorkspaceSetting("gpuPilot.slurm", "gpusPerNode", 2));
    const r = await api.submitToSlurm(wsUri("slurm/probe_gpus.py"), { ask: false, submit: true });
    assert.ok(r?.jobId, `a job id (got ${JSON.stringify(r)})`);
    assert.equal(r.script, path.join(path.dirname(wsUri("slurm/probe_gpus.py").fsPath), "probe_gpus.sbatch"));
    const text = fs.readFileSync(r.script, "utf8");
    for (const line of [
      "#SBATCH --ntasks-per-node=2",
      "#SBATCH --gpus-per-node=2",
      "#SBATCH --time=5",
      "export CUDA_DEVICE_ORDER=PCI_BUS_ID",
    ])
      assert.ok(text.split("\n").includes(line), `${line} in\n${text}`);
    assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, r.script, "the script is open for editing");
    assert.equal(
      api.getSlurmState().visible,
      true,
      "the side bar still shows GPU Pilot's Slurm view after the script opened",
    );
    const job = await waitFor(
      () => api.getSlurmState().submitted.find((j) => j.jobId === r.jobId && j.done),
      `job ${r.jobId} followed to its end`,
      60_000,
    );
    assert.equal(job.state, "COMPLETED");
    assert.equal(job.output, path.join(path.dirname(r.script), `slurm-probe_gpus-${r.jobId}.out`));
    assert.deepEqual(job.tail.text.trim().split("\n").sort(), [
      "task 0: CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID",
      "task 1: CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID",
    ]);
    await api.refreshSlurm();
    const rows = api.getSlurmState().rows;
    const row = rows.find((x) => x.label === `${r.jobId} probe_gpus`);
    assert.ok(row, `the job in the view: ${JSON.stringify(rows)}`);
    assert.equal(row.description, "COMPLETED");
    // GPUs, elapsed/limit and nodes are the rows under the job.
    const details = rows.slice(rows.indexOf(row) + 1, rows.indexOf(row) + 4).map((x) => `${x.label} ${x.description}`);
    assert.equal(details[0], "GPUs 2 GPUs/node", JSON.stringify(details));
    assert.match(details[1], /^Time 0:00:0\d \/ 0:05:00$/);
    assert.equal(details[2], "Nodes gpunode1");
    assert.equal(row.contextValue, "slurmJob.done");
  });

  test("a file that reads LOCAL_RANK without a default, launcher not set: the job script runs torchrun (the language server's runFacts)", async () => {
    const file = wsUri("slurm/ddp_strict.py").fsPath;
    fs.writeFileSync(file, 'import os\nlocal_rank = int(os.environ["LOCAL_RANK"])\nprint(local_rank)\n');
    try {
      const r = await api.submitToSlurm(vscode.Uri.file(file), { ask: false });
      assert.ok(r?.script, JSON.stringify(r));
      const text = fs.readFileSync(r.script, "utf8");
      assert.ok(text.split("\n").includes("#SBATCH --ntasks-per-node=1"), text);
      assert.match(text, /^srun \S+ -m torch\.distributed\.run --nnodes "\$SLURM_NNODES" --nproc_per_node 2 /m);
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
      fs.rmSync(r.script, { force: true });
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  test("a long job: RUNNING in the view, its output followed live; Cancel's modal declined cancels nothing; scancel ends it", async () => {
    restore.push(await setWorkspaceSetting("gpuPilot.slurm", "gpusPerNode", 1));
    const r = await api.submitToSlurm(wsUri("slurm/long_train.py"), { ask: false, submit: true });
    assert.ok(r?.jobId);
    const id = r.jobId;
    const live = await waitFor(
      () => api.getSlurmState().submitted.find((j) => j.jobId === id && j.tail.text.includes("step 1\n")),
      "the long job's output streaming in",
      60_000,
    );
    assert.match(live.tail.text, /^training on CUDA_VISIBLE_DEVICES=0\n/);
    await api.refreshSlurm();
    const rows = api.getSlurmState().rows;
    const row = rows.find((x) => x.label === `${id} long_train`);
    assert.ok(row && row.description === "RUNNING", JSON.stringify(row));
    // GPUs, elapsed/limit and nodes are the rows under the job (the job row stays short at 300 px).
    const details = rows.slice(rows.indexOf(row) + 1, rows.indexOf(row) + 4).map((x) => `${x.label} ${x.description}`);
    assert.equal(details[0], "GPUs 1 GPU/node", JSON.stringify(details));
    assert.match(details[1], /^Time 0:00:\d\d \/ 0:05:00$/);
    assert.equal(details[2], "Nodes gpunode1");
    assert.equal(row.contextValue, "slurmJob.active");
    assert.ok(
      rows.some((x) => x.label === "gpu (default)" && x.description === "1 of 2 GPUs free · 1 node"),
      JSON.stringify(rows),
    );
    // Open Output opens the file Slurm writes.
    const opened = await vscode.commands.executeCommand<string | undefined>("gpuPilot.slurm.openOutput", id);
    assert.equal(opened, live.output);
    assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, live.output);
    // The command asks first; the test workbench declines modals: nothing is cancelled.
    assert.equal(await vscode.commands.executeCommand("gpuPilot.slurm.cancel", id), false);
    await api.refreshSlurm();
    assert.ok(
      api
        .getSlurmState()
        .rows.find((x) => x.label === `${id} long_train`)
        ?.description.startsWith("RUNNING"),
    );
    assert.equal(await api.cancelSlurmJob(id), true);
    const ended = await waitFor(
      () => api.getSlurmState().submitted.find((j) => j.jobId === id && j.done),
      "the cancelled job followed to its end",
      60_000,
    );
    assert.equal(ended.state, "CANCELLED");
    await api.refreshSlurm();
    assert.match(api.getSlurmState().rows.find((x) => x.label === `${id} long_train`)?.description ?? "", /^CANCELLED/);
  });
});
