import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, manifestDocExampleTest, lintManifestCode } from "./manifestFixtureCheck";

manifestFixtureTests("GPU043");
manifestDocExampleTest("GPU043", "jobscript");

test("GPU043 message and ranges: the -e word, with --gpus as the related place", () => {
  const [d] = lintManifestCode(
    '#!/bin/bash\ndocker run --rm \\\n  --gpus "device=${CUDA_VISIBLE_DEVICES:-all}" \\\n  --env CUDA_VISIBLE_DEVICES \\\n  img pytest\n',
    "jobscript",
    "GPU043",
  );
  assert.equal(
    d.message,
    "docker run passes the host's CUDA_VISIBLE_DEVICES into a container that sees only the GPUs of --gpus device=${CUDA_VISIBLE_DEVICES:-all}, numbered from 0 there: the host's ids name other GPUs or none (CUDA finds no device); drop the -e, the container already sees the selected GPUs",
  );
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [3, 8, 28]);
  assert.equal(d.related?.[0].range.start.line, 2);
  const [lit] = lintManifestCode(
    "docker run --gpus '\"device=2,3\"' -e CUDA_VISIBLE_DEVICES=0,3 img\n",
    "jobscript",
    "GPU043",
  );
  assert.match(
    lit.message,
    /sets CUDA_VISIBLE_DEVICES=0,3 in a container that has 2 GPUs \(--gpus "device=2,3"\), numbered 0\.\.1 there: 3 names no GPU inside/,
  );
});

test("GPU043: a script without a launcher or #SBATCH is read when it runs a container with --gpus", () => {
  assert.equal(lintManifestCode("docker run --gpus 1 -e CUDA_VISIBLE_DEVICES img\n", "jobscript", "GPU043").length, 1);
  assert.deepEqual(lintManifestCode("echo docker run --gpus 1 -e CUDA_VISIBLE_DEVICES\n", "jobscript", "GPU043"), []);
});
