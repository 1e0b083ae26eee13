/**
 * The Slurm output parsers on real captures (test/fixtures/slurm/: Slurm 22.05.8, four fake GPUs,
 * see measured.md) and on the shapes documented for later versions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../support/helpers";
import {
  parseGres,
  parseSinfoNodes,
  partitionGpus,
  parseSqueueJson,
  parseSqueueFormat,
  parseSlurmDuration,
} from "../../../../common/src/slurm/parse";

const capture = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "slurm", name), "utf8");

test("parseGres: typed, untyped, with indexes, lists, other GRES and (null)", () => {
  assert.deepEqual(parseGres("gpu:a100:4"), { count: 4, types: ["a100"] });
  assert.deepEqual(parseGres("gpu:a100:2(IDX:0-1)"), { count: 2, types: ["a100"] });
  assert.deepEqual(parseGres("gpu:2(IDX:0,2),nvme:1"), { count: 2, types: [] });
  assert.deepEqual(parseGres("gpu:a100:2,gpu:v100:1"), { count: 3, types: ["a100", "v100"] });
  assert.deepEqual(parseGres("gres:gpu:4"), { count: 4, types: [] });
  assert.deepEqual(parseGres("gpu"), { count: 1, types: [] });
  assert.deepEqual(parseGres("(null)"), { count: 0, types: [] });
  assert.throws(() => parseGres("gpu:a100:x"), /no whole GPU count/);
});

test("sinfo -N -O capture (typed GRES, a 2-GPU job running): 4 GPUs, 2 used, 2 free", () => {
  const nodes = parseSinfoNodes(capture("sinfo-N-O-typed.txt"));
  assert.deepEqual(nodes, [
    { node: "gpunode1", partition: "gpu", isDefault: true, gpus: 4, gpusUsed: 2, types: ["a100"], state: "mix" },
  ]);
  assert.deepEqual(partitionGpus(nodes), [
    { partition: "gpu", isDefault: true, nodes: 1, gpus: 4, gpusUsed: 2, gpusFree: 2, types: ["a100"] },
  ]);
});

test("partitionGpus sums nodes per partition; a down or drained node offers no free GPU", () => {
  const text =
    "n1|gpu*|gpu:a100:4|gpu:a100:1(IDX:0)|mix|\nn2|gpu*|gpu:a100:4|gpu:0|drain|\nn3|debug|gpu:2|gpu:0|idle|\nn4|gpu*|gpu:a100:4|gpu:0|down*|\n";
  assert.deepEqual(
    partitionGpus(parseSinfoNodes(text)).map((p) => [p.partition, p.nodes, p.gpus, p.gpusUsed, p.gpusFree]),
    [
      ["gpu", 3, 12, 1, 3],
      ["debug", 1, 2, 0, 2],
    ],
  );
});

test("parseSinfoNodes names the line it cannot read", () => {
  assert.throws(
    () => parseSinfoNodes("n1|gpu*|gpu:4|gpu:0|idle|\nPARTITION AVAIL\n"),
    /sinfo line 2: expected 5 fields/,
  );
  assert.throws(() => parseSinfoNodes("n1|gpu*|gpu:a100:x|gpu:0|idle|\n"), /sinfo line 1: GRES item/);
});

test("the untyped sinfo -O capture (one line per partition) reads with the same GRES parser", () => {
  const [part, gres, used, state] = capture("sinfo-O-untyped.txt").trim().split("|");
  assert.deepEqual([part, parseGres(gres).count, parseGres(used).count, state], ["gpu*", 4, 1, "mix"]);
});

test("squeue --json capture (Slurm 22.05.8): running, pending and finished jobs", () => {
  const jobs = parseSqueueJson(capture("squeue-json-22.05.json"));
  assert.equal(jobs.length, 6);
  const hold = jobs.find((j) => j.id === 4)!;
  assert.deepEqual(
    { ...hold, submitTime: null, startTime: null },
    {
      id: 4,
      name: "hold",
      state: "RUNNING",
      partition: "gpu",
      user: "root",
      gpusPerNode: 2,
      gpusPerJob: null,
      gpusPerTask: null,
      gresDetail: ["gpu:a100:2(IDX:0-1)"],
      nodes: "gpunode1",
      nodeCount: 1,
      reason: null,
      timeLimitMinutes: 10,
      submitTime: null,
      startTime: null,
      endTime: 1796144864,
      output: null,
    },
  );
  assert.equal(hold.startTime, 1796144264);
  const pend = jobs.find((j) => j.id === 6)!;
  assert.deepEqual(
    [pend.state, pend.reason, pend.gpusPerNode, pend.startTime, pend.nodes],
    ["PENDING", "Resources", 4, null, ""],
  );
  const typed = jobs.find((j) => j.id === 1)!;
  assert.deepEqual(
    [typed.state, typed.reason, typed.gpusPerNode, typed.timeLimitMinutes, typed.output],
    ["FAILED", "NonZeroExitCode", 2, null, "/tmp/sj/typed.out"],
  );
});

test("parseSqueueJson: later versions' number objects and state lists; clear errors", () => {
  const later = JSON.stringify({
    jobs: [
      {
        job_id: 7,
        name: "x",
        job_state: ["RUNNING"],
        time_limit: { set: true, infinite: false, number: 30 },
        start_time: { set: true, infinite: false, number: 5 },
        tres_per_node: "gres/gpu:2",
      },
    ],
    errors: [],
  });
  const [j] = parseSqueueJson(later);
  assert.deepEqual([j.id, j.state, j.timeLimitMinutes, j.startTime, j.gpusPerNode], [7, "RUNNING", 30, 5, 2]);
  assert.throws(() => parseSqueueJson("squeue: error: Invalid user"), /printed no JSON/);
  assert.throws(() => parseSqueueJson("{}"), /no "jobs" list/);
  assert.throws(
    () => parseSqueueJson(JSON.stringify({ jobs: [], errors: [{ error: "Unable to contact slurm controller" }] })),
    /squeue reported: Unable to contact slurm controller/,
  );
});

test("squeue --json capture with --gpus and --gpus-per-task: tres_per_job and tres_per_task", () => {
  const jobs = parseSqueueJson(capture("squeue-json-tres-22.05.json"));
  const by = (name: string) => jobs.find((j) => j.name === name)!;
  assert.deepEqual([by("hold").gpusPerNode, by("hold").gpusPerJob, by("hold").gpusPerTask], [1, null, null]);
  assert.deepEqual([by("wide").gpusPerNode, by("wide").gpusPerJob, by("wide").timeLimitMinutes], [null, 2, 1440]);
  assert.deepEqual([by("pertask").gpusPerTask, by("pertask").state, by("pertask").reason], [1, "PENDING", "Priority"]);
});

test("squeue format-string capture (the fallback without --json)", () => {
  const jobs = parseSqueueFormat(capture("squeue-format-22.05.txt"));
  assert.deepEqual(
    jobs.map((j) => [j.id, j.name, j.state, j.gpusPerNode, j.nodes, j.reason, j.timeLimitMinutes, j.runTimeSeconds]),
    [
      [1, "probe_env", "COMPLETED", 2, "gpunode1", null, 5, 0],
      [3, "wide", "PENDING", null, "", "Resources", 1440, 0],
      [4, "pertask", "PENDING", null, "", "Priority", null, 0],
      [2, "hold", "RUNNING", 1, "gpunode1", null, 10, 1],
    ],
  );
  assert.throws(() => parseSqueueFormat("1|x|RUNNING\n"), /squeue line 1: expected 11 fields/);
});

test("parseSlurmDuration: squeue's forms", () => {
  assert.equal(parseSlurmDuration("0:05"), 5);
  assert.equal(parseSlurmDuration("10:00"), 600);
  assert.equal(parseSlurmDuration("2:03:04"), 7384);
  assert.equal(parseSlurmDuration("1-00:00:00"), 86400);
  assert.equal(parseSlurmDuration("UNLIMITED"), null);
  assert.equal(parseSlurmDuration("INVALID"), null);
});
