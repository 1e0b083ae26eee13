import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { cudaImage } from "../../../server/src/engine/rules/GPU066-cuda-image-without-gpu-request";

manifestFixtureTests("GPU066", { preview: true });

manifestDocExampleTest("GPU066", "yaml", { preview: true });

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      command: ["sleep", "infinity"]
`;

test("GPU066: a warning on the image, naming the container, with the unsafe fix that adds an env", () => {
  const [d, ...rest] = lintManifestCode(POD, "yaml", "GPU066", { preview: true });
  assert.deepEqual(rest, []);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 7, character: 13 }, end: { line: 7, character: 48 } });
  assert.match(d.message, /^container "c" of Pod "p" requests no GPU .* sets NVIDIA_VISIBLE_DEVICES=all/);
  assert.equal(d.fix!.safe, false);
  assert.equal(
    applyManifestFix(POD, "yaml", d),
    POD + "      env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: void\n",
  );
});

test("GPU066: the fix appends to an existing env list at its indentation", () => {
  const src = POD + "      env:\n      - name: A\n        value: b\n";
  const [d] = lintManifestCode(src, "yaml", "GPU066", { preview: true });
  assert.equal(applyManifestFix(src, "yaml", d), src + "      - name: NVIDIA_VISIBLE_DEVICES\n        value: void\n");
});

test("GPU066: which images are known to set NVIDIA_VISIBLE_DEVICES=all", () => {
  for (const yes of [
    "nvidia/cuda:12.4.1-base-ubuntu22.04",
    "nvcr.io/nvidia/cuda:12.1.0-runtime-ubuntu22.04",
    "registry.acme.org/mirror/nvidia/cuda:11.8.0-devel-ubuntu22.04",
    "pytorch/pytorch",
    "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime@sha256:abc",
    "vllm/vllm-openai:v0.6.3",
    "rayproject/ray:2.40.0-py311-cu121",
    "rayproject/ray:nightly-gpu",
    "rayproject/ray-ml:2.9.0-py310-gpu",
  ])
    assert.ok(cudaImage(yes), yes);
  for (const no of [
    "rayproject/ray:2.40.0-py311",
    "rayproject/ray",
    "rayproject/ray-ml:2.9.0-py310-cpu",
    "nvidia/cudagl:11.4.2-base",
    "python:3.12",
    "nvcr.io/nvidia/pytorch:24.05-py3",
  ])
    assert.ok(!cudaImage(no), no);
});
