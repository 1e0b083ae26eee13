import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { listIds } from "../../../server/src/engine/rules/GPU071-loop-hard-coded-visible-devices";

const PREVIEW = { preview: true };
manifestFixtureTests("GPU071", PREVIEW);

const LOOP =
  "#!/bin/bash\nnum_workers=8\nfor ((gpu_id = 0; gpu_id < num_workers; gpu_id++)); do\n  CUDA_VISIBLE_DEVICES=${gpu_id} python -m server --port $((30000 + gpu_id)) &\ndone\nwait\n";

test("GPU071: a loop counter over hard-coded ids as CUDA_VISIBLE_DEVICES, the caller's value never read", () => {
  const [d, ...rest] = lintManifestCode(LOOP, "jobscript", "GPU071", PREVIEW, "/p/launch.sh");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "information", "the machine unknown: information");
  assert.deepEqual(d.range, { start: { line: 3, character: 2 }, end: { line: 3, character: 32 } });
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES=${gpu_id} gives each process of the loop `for ((gpu_id = 0; gpu_id < num_workers; gpu_id++)) with num_workers=8` (line 3) one of the hard-coded GPU ids 0..7, and the script never reads the CUDA_VISIBLE_DEVICES it was started with: a caller that picks GPUs (CUDA_VISIBLE_DEVICES=2,3 bash launch.sh) still gets 8 processes on GPUs 0..7; on a machine with fewer GPUs, a process given an id it lacks sees no GPU (CUDA stops parsing at an id that does not exist); take the ids from the caller\'s value, e.g. IFS=, read -r -a gpus <<< "${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}"',
  );
  assert.equal(d.related?.[0].range.start.line, 2);
  // With a known machine: the ids it lacks are named; none when it has them all.
  const two = { ...PREVIEW, machine: { gpuCount: 2, uuids: [] } };
  const onTwo = lintManifestCode(LOOP, "jobscript", "GPU071", two, "/p/launch.sh")[0];
  assert.match(onTwo.message, /this machine has 2 GPUs, so the processes given 2\.\.7 see no GPU/);
  assert.equal(onTwo.severity, "warning", "a machine that lacks ids: a warning");
  const eight = { ...PREVIEW, machine: { gpuCount: 8, uuids: [] } };
  const onEight = lintManifestCode(LOOP, "jobscript", "GPU071", eight, "/p/launch.sh")[0];
  assert.doesNotMatch(onEight.message, /fewer GPUs/);
  assert.equal(onEight.severity, "information");
  // A preview rule: nothing without --preview.
  assert.deepEqual(lintManifestCode(LOOP, "jobscript", "GPU071", {}, "/p/launch.sh"), []);
});

test("GPU071: silent when the script reads, sets otherwise or unsets the variable, or the bound is not literal", () => {
  const silent = (text: string) => assert.deepEqual(lintManifestCode(text, "jobscript", "GPU071", PREVIEW), []);
  silent(LOOP.replace("num_workers=8\n", 'echo "$CUDA_VISIBLE_DEVICES"\nnum_workers=8\n'));
  silent(LOOP.replace("num_workers=8\n", "export CUDA_VISIBLE_DEVICES=0,1\nnum_workers=8\n"));
  silent(LOOP.replace("num_workers=8\n", "unset CUDA_VISIBLE_DEVICES\nnum_workers=8\n"));
  silent(LOOP.replace("num_workers=8\n", "num_workers=$1\n"));
  silent(LOOP.replace("num_workers=8\n", "num_workers=8\nnum_workers=4\n"));
  // After the loop's `done`: not in its body.
  silent("#!/bin/bash\nfor i in 0 1; do\n  echo $i\ndone\nCUDA_VISIBLE_DEVICES=$i python x.py\n");
});

test("GPU071: the lists a for loop's ids are read from", () => {
  assert.deepEqual(listIds("0 1 2 3"), [0, 1, 2, 3]);
  assert.deepEqual(listIds("{2..4}"), [2, 3, 4]);
  assert.deepEqual(listIds("$(seq 3)"), [1, 2, 3]);
  assert.deepEqual(listIds("`seq 0 1`"), [0, 1]);
  assert.deepEqual(listIds("$(seq 0 $((N - 1)))", new Map([["N", "2"]])), [0, 1]);
  assert.deepEqual(listIds("$(seq 0 $N)", new Map([["N", "1"]])), [0, 1]);
  assert.equal(listIds("$(seq 0 $((N - 1)))"), null);
  assert.equal(listIds("$GPUS"), null);
  assert.equal(listIds("a b"), null);
});
