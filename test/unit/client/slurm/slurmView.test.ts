/**
 * The Slurm view: row texts from the real captures (present.ts), the back-off, and the tree
 * provider (view.ts, with the stand-in vscode module) against a real single-node Slurm — rows for
 * the partition and a running job — and against a controller that does not answer: a calm message
 * row, the failure counted, the old rows kept, no notification. The live parts are skipped, with
 * the reason, where Slurm is not installed or the tests do not run as root.
 */
import { FakeTreeView, recorded } from "../../support/client-fakeVscode";
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../support/helpers";
import { slurmAvailability, startCluster, waitJob, type Cluster } from "../../../../scripts/slurm-cluster.mjs";
import { parseSinfoNodes, parseSqueueFormat, parseSqueueJson, partitionGpus } from "../../../../common/src/slurm/parse";
import {
  backoffSeconds,
  elapsedSeconds,
  failureRow,
  formatDuration,
  isActive,
  jobDetailRows,
  jobGpus,
  jobRow,
  notConfiguredRow,
  partitionRow,
} from "../../../../client/src/slurm/present";
import type { SlurmJob } from "../../../../common/src/slurm/parse";

/** A job's row description, then its detail rows, as `state | GPUs: .. | Time: .. | Nodes: ..`. */
const shown = (j: SlurmJob, now: number) =>
  [jobRow(j, now).description, ...jobDetailRows(j, now).map((d) => `${d.label}: ${d.description}`)].join(" | ");
import { createSlurmTreeView, SlurmTreeProvider } from "../../../../client/src/slurm/view";
import { submitScript } from "../../../../client/src/slurm/cli";

const capture = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "slurm", name), "utf8");

test("partition rows from the typed sinfo capture", () => {
  const [p] = partitionGpus(parseSinfoNodes(capture("sinfo-N-O-typed.txt")));
  assert.deepEqual(partitionRow(p), {
    label: "gpu (default)",
    description: "2 of 4 GPUs free · 1 node · a100",
    tooltip: "Partition gpu: 4 GPUs on 1 node, 2 in use, 2 free on nodes that take jobs (sinfo Gres/GresUsed)",
  });
});

test("job rows from the squeue --json capture: running, pending, finished", () => {
  const jobs = parseSqueueJson(capture("squeue-json-22.05.json"));
  const by = (id: number) => jobs.find((j) => j.id === id)!;
  // Job 4 started at 1796144264 with a 10-minute limit; 65 s later:
  assert.equal(
    shown(by(4), 1796144264 + 65),
    "RUNNING | GPUs: 2 GPUs/node | Time: 0:01:05 / 0:10:00 | Nodes: gpunode1",
  );
  assert.equal(jobRow(by(4), 1796144264 + 65).label, "4 hold");
  assert.equal(shown(by(6), 1796144300), "PENDING (Resources) | GPUs: 4 GPUs/node | Time: - / 0:10:00 | Nodes: 1 node");
  // A finished job's elapsed time stops at its end (1 s), whenever it is looked at.
  assert.equal(elapsedSeconds(by(2), 1796149999), 1);
  assert.equal(
    shown(by(1), 1796149999),
    "FAILED (NonZeroExitCode) | GPUs: 2 GPUs/node | Time: 0:00:00 / no limit | Nodes: gpunode1",
  );
  assert.deepEqual(
    jobs.map((j) => isActive(j.state)),
    [false, false, false, true, false, true],
  );
});

test("job rows from the format-string capture and the --gpus/--gpus-per-task forms", () => {
  const jobs = parseSqueueFormat(capture("squeue-format-22.05.txt"));
  assert.equal(shown(jobs[3], 0), "RUNNING | GPUs: 1 GPU/node | Time: 0:00:01 / 0:10:00 | Nodes: gpunode1");
  const tres = parseSqueueJson(capture("squeue-json-tres-22.05.json"));
  assert.deepEqual(tres.map((j) => `${j.name}: ${jobGpus(j)}`).sort(), [
    "hold: 1 GPU/node",
    "pertask: 1 GPU/task",
    "probe_env: 2 GPUs/node",
    "wide: 2 GPUs",
  ]);
  assert.equal(
    shown(
      tres.find((j) => j.name === "wide")!,
      0,
    ),
    "PENDING (Resources) | GPUs: 2 GPUs | Time: - / 1-00:00:00 | Nodes: 1 node",
  );
});

test("formatDuration, back-off and the failure row", () => {
  assert.deepEqual(
    [formatDuration(0), formatDuration(65), formatDuration(3600), formatDuration(90061)],
    ["0:00:00", "0:01:05", "1:00:00", "1-01:01:01"],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((f) => backoffSeconds(30, f)),
    [30, 60, 120, 240, 480, 600],
  );
  assert.equal(backoffSeconds(5, 0), 30, "never more often than every 30 s");
  assert.equal(backoffSeconds(900, 2), 900, "a setting above 10 minutes is kept, not cut");
  assert.deepEqual(failureRow("squeue", "squeue --me --json did not answer within 2 s", 60), {
    label: "squeue failed",
    description: "squeue --me --json did not answer within 2 s — next try in 60 s",
    tooltip:
      "squeue --me --json did not answer within 2 s — next try in 60 s\nThe view keeps polling, less often after each failure (GPU Pilot: Refresh Slurm tries now).",
  });
  // A failing command: Slurm's words first (the 300 px side bar showed only the command line), the whole message in the tooltip.
  const msg =
    "sinfo -N -h -O NodeList:|,Partition:|: sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host";
  const row = failureRow("sinfo", msg, 60);
  assert.equal(row.description, "resolve_ctls_from_dns_srv: res_nsearch error: Unknown host — next try in 60 s");
  assert.ok(row.tooltip.startsWith(`${msg} — next try in 60 s\n`));
  assert.equal(
    failureRow("sinfo", "sinfo is not installed or not on PATH", null).description,
    "sinfo is not installed or not on PATH",
  );
  // Slurm's programs without any configuration (Debian's slurm-wlm, no slurm.conf, no DNS SRV record):
  // runSlurm keeps the `fatal:` line, and the row says what it means.
  const fatal = "sinfo -N -h -O NodeList:|: sinfo: fatal: Could not establish a configuration source";
  const none = failureRow("sinfo", fatal, 60);
  assert.equal(none.label, "Slurm not configured");
  assert.equal(none.description, "no slurm.conf");
  assert.match(none.tooltip!, /next try in 60 s/);
  assert.ok(none.tooltip.startsWith(`${fatal} — next try in 60 s\n`), none.tooltip);
});

const skip = slurmAvailability() ?? false;
let cluster: Cluster;
before(async () => {
  if (!skip) cluster = await startCluster({ gpus: 2, cpus: 4 });
});
after(async () => {
  await cluster?.stop();
});

test(
  "the tree provider on a live cluster: the partition and a running job; then the controller is gone: a calm row",
  { skip },
  async () => {
    const script = path.join(cluster.jobsDir, "sleeper.sbatch");
    fs.writeFileSync(
      script,
      "#!/bin/bash\n#SBATCH --job-name=sleeper\n#SBATCH --gpus-per-node=1\n#SBATCH --time=5\nsleep 300\n",
    );
    const { jobId } = await submitScript(script, { env: cluster.env, cwd: cluster.jobsDir });
    await waitJob(cluster.env, jobId, { states: ["RUNNING"] });
    let env: NodeJS.ProcessEnv = cluster.env;
    const provider = new SlurmTreeProvider({ pollSeconds: () => 30, timeoutMs: () => 3000 }, () => ({ env }));
    await provider.refresh();
    const rows = provider
      .rows()
      .map((r) => `${r.label} | ${r.description.replace(/0:00:0\d/, "0:00:0X")} | ${r.contextValue}`);
    assert.deepEqual(rows, [
      "Partitions | 1 | slurmGroup.partitions",
      "gpu (default) | 1 of 2 GPUs free · 1 node | slurmPartition",
      "My jobs | 1 active | slurmGroup.jobs",
      `${jobId} sleeper | RUNNING | slurmJob.active`,
      "GPUs | 1 GPU/node | slurmJobDetail",
      "Time | 0:00:0X / 0:05:00 | slurmJobDetail",
      "Nodes | gpunode1 | slurmJobDetail",
    ]);
    assert.equal(provider.snapshot.failures, 0);
    // A configuration whose controller port nobody listens on: sinfo and squeue fail or time out.
    const dead = path.join(cluster.base, "etc", "dead.conf");
    fs.writeFileSync(dead, fs.readFileSync(cluster.conf, "utf8").replace(/^SlurmctldPort=\d+$/m, "SlurmctldPort=9"));
    env = { SLURM_CONF: dead };
    const notesBefore = recorded.messages.length;
    await provider.refresh();
    const after = provider.rows();
    assert.equal(provider.snapshot.failures, 1);
    const msg = after.filter((r) => r.contextValue === "slurmMessage").map((r) => r.label);
    assert.deepEqual(msg, ["sinfo failed", "squeue failed"]);
    assert.match(after.find((r) => r.label === "squeue failed")!.description, /— next try in 60 s$/);
    assert.ok(
      after.some((r) => r.label === `${jobId} sleeper`),
      "the last known jobs stay shown",
    );
    assert.equal(recorded.messages.length, notesBefore, "no notification");
    provider.dispose();
  },
);

test("the view polls only while visible: nothing while hidden, one query when shown, none after it is hidden again", async () => {
  // No Slurm on this PATH: each query fails at once (the failure row is what shows).
  const savedPath = process.env.PATH;
  process.env.PATH = "/nonexistent";
  try {
    const { provider, view, disposables } = createSlurmTreeView({ pollSeconds: () => 30, timeoutMs: () => 2000 });
    const fake = view as unknown as FakeTreeView;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(provider.snapshot.polls, 0, "hidden: no query");
    fake.setVisible(true);
    for (let i = 0; i < 50 && provider.snapshot.polls === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(provider.snapshot.polls, 1);
    assert.equal(provider.snapshot.failures, 1);
    assert.equal(provider.snapshot.jobsError, "squeue is not installed or not on PATH");
    assert.equal(provider.poller.isActive, true);
    fake.setVisible(false);
    assert.equal(provider.poller.isActive, false, "hidden again: polling stops");
    for (const d of disposables) d.dispose();
  } finally {
    process.env.PATH = savedPath;
  }
});

test("no Slurm configuration: the view says so once, not under Partitions and again under My jobs", async () => {
  // Stand-ins for Debian's slurm-wlm 22.05 on a machine with no slurm.conf and no DNS SRV record:
  // the DNS lookup errors, then the fatal line, exit 1 (present.ts NO_CONFIGURATION).
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-pilot-noconf-"));
  for (const program of ["sinfo", "squeue"])
    fs.writeFileSync(
      path.join(bin, program),
      `#!/bin/sh\necho "${program}: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host" >&2\n` +
        `echo "${program}: fatal: Could not establish a configuration source" >&2\nexit 1\n`,
      { mode: 0o755 },
    );
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}/nonexistent`;
  try {
    const provider = new SlurmTreeProvider({ pollSeconds: () => 30, timeoutMs: () => 5000 });
    assert.deepEqual(provider.rows(), [{ label: "Asking Slurm...", description: "", contextValue: "slurmMessage" }]);
    const fired: unknown[] = [];
    provider.onDidChangeTreeData((e) => fired.push(e));
    await provider.refresh();
    assert.match(provider.snapshot.partitionsError ?? "", /fatal: Could not establish a configuration source$/);
    assert.match(provider.snapshot.jobsError ?? "", /fatal: Could not establish a configuration source$/);
    const rows = provider.rows();
    assert.deepEqual(
      rows.map((r) => `${r.label} | ${r.description}`),
      ["Slurm not configured | no slurm.conf"],
      "one row for the view, no groups",
    );
    assert.equal(rows.filter((r) => r.label === "Slurm not configured").length, 1);
    assert.deepEqual(fired, [undefined], "the root refreshed (its shape changed), once");
    provider.dispose();
  } finally {
    process.env.PATH = savedPath;
    fs.rmSync(bin, { recursive: true, force: true });
  }
});

test("notConfiguredRow: only where both queries say there is no configuration", () => {
  const fatal = (p: string) => `${p} -h: ${p}: fatal: Could not establish a configuration source`;
  assert.deepEqual(notConfiguredRow(fatal("sinfo"), fatal("squeue"), 60), failureRow("sinfo", fatal("sinfo"), 60));
  assert.equal(notConfiguredRow(fatal("sinfo"), fatal("squeue"), 60)!.label, "Slurm not configured");
  assert.equal(notConfiguredRow(fatal("sinfo"), null, null), undefined, "squeue answered: the groups stay");
  assert.equal(notConfiguredRow(fatal("sinfo"), "squeue --me --json did not answer within 2 s", 60), undefined);
  assert.equal(notConfiguredRow(null, null, null), undefined);
});
