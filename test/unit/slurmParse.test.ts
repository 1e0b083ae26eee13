/**
 * The Slurm output parsers on real captures (test/fixtures/slurm/: Slurm 22.05.8, four fake GPUs,
 * see measured.md) and on the shapes documented for later versions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers";
import { parseGres, parseSinfoNodes, partitionGpus, parseSqueueJson } from "../../client/src/slurm/parse";

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
  assert.deepEqual(nodes, [{ node: "gpunode1", partition: "gpu", isDefault: true, gpus: 4, gpusUsed: 2, types: ["a100"], state: "mix" }]);
  assert.deepEqual(partitionGpus(nodes), [{ partition: "gpu", isDefault: true, nodes: 1, gpus: 4, gpusUsed: 2, gpusFree: 2, types: ["a100"] }]);
});

test("partitionGpus sums nodes per partition; a down or drained node offers no free GPU", () => {
  const text = "n1|gpu*|gpu:a100:4|gpu:a100:1(IDX:0)|mix|\nn2|gpu*|gpu:a100:4|gpu:0|drain|\nn3|debug|gpu:2|gpu:0|idle|\nn4|gpu*|gpu:a100:4|gpu:0|down*|\n";
  assert.deepEqual(partitionGpus(parseSinfoNodes(text)).map((p) => [p.partition, p.nodes, p.gpus, p.gpusUsed, p.gpusFree]), [["gpu", 3, 12, 1, 3], ["debug", 1, 2, 0, 2]]);
});

test("parseSinfoNodes names the line it cannot read", () => {
  assert.throws(() => parseSinfoNodes("n1|gpu*|gpu:4|gpu:0|idle|\nPARTITION AVAIL\n"), /sinfo line 2: expected 5 fields/);
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
  assert.deepEqual({ ...hold, submitTime: null, startTime: null }, {
    id: 4, name: "hold", state: "RUNNING", partition: "gpu", user: "root", gpusPerNode: 2, gresDetail: ["gpu:a100:2(IDX:0-1)"],
    nodes: "gpunode1", nodeCount: 1, reason: null, timeLimitMinutes: 10, submitTime: null, startTime: null, output: null,
  });
  assert.equal(hold.startTime, 1796144264);
  const pend = jobs.find((j) => j.id === 6)!;
  assert.deepEqual([pend.state, pend.reason, pend.gpusPerNode, pend.startTime, pend.nodes], ["PENDING", "Resources", 4, null, ""]);
  const typed = jobs.find((j) => j.id === 1)!;
  assert.deepEqual([typed.state, typed.reason, typed.gpusPerNode, typed.timeLimitMinutes, typed.output], ["FAILED", "NonZeroExitCode", 2, null, "/tmp/sj/typed.out"]);
});

test("parseSqueueJson: later versions' number objects and state lists; clear errors", () => {
  const later = JSON.stringify({ jobs: [{ job_id: 7, name: "x", job_state: ["RUNNING"], time_limit: { set: true, infinite: false, number: 30 }, start_time: { set: true, infinite: false, number: 5 }, tres_per_node: "gres/gpu:2" }], errors: [] });
  const [j] = parseSqueueJson(later);
  assert.deepEqual([j.id, j.state, j.timeLimitMinutes, j.startTime, j.gpusPerNode], [7, "RUNNING", 30, 5, 2]);
  assert.throws(() => parseSqueueJson("squeue: error: Invalid user"), /printed no JSON/);
  assert.throws(() => parseSqueueJson("{}"), /no "jobs" list/);
  assert.throws(() => parseSqueueJson(JSON.stringify({ jobs: [], errors: [{ error: "Unable to contact slurm controller" }] })), /squeue reported: Unable to contact slurm controller/);
});
