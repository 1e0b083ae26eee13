import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { parseQuantity } from "../../../server/src/engine/rules/GPU018-k8s-gpu-resources";
import { fixAllManifest } from "../../../server/src/engine/manifests/lintManifest";
import { applyEdits } from "../../../server/src/engine/fixes";

manifestFixtureTests("GPU018");
manifestDocExampleTest("GPU018", "yaml");

const pod = (resources: string) => `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: pytorch/pytorch:latest
      resources:
${resources}`;

test("parseQuantity reads Kubernetes quantities", () => {
  assert.equal(parseQuantity("1"), 1);
  assert.equal(parseQuantity("500m"), 0.5);
  assert.equal(parseQuantity("1000m"), 1);
  assert.equal(parseQuantity("1e3"), 1000);
  assert.equal(parseQuantity("2Ki"), 2048);
  assert.equal(parseQuantity(".5"), 0.5);
  assert.equal(parseQuantity("one"), null);
  assert.equal(parseQuantity(""), null);
});

test("GPU018 request without a limit: error on the request, safe fix adds the limit beside requests", () => {
  const src = pod("        requests:\n          nvidia.com/gpu: 2\n          cpu: 1\n");
  const [d] = lintManifestCode(src, "yaml", "GPU018");
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range, { start: { line: 10, character: 10 }, end: { line: 10, character: 27 } });
  assert.match(d.message, /container "c" of Pod "p" without a limit/);
  assert.equal(d.fix!.safe, true);
  assert.equal(
    applyManifestFix(src, "yaml", d),
    pod(
      "        requests:\n          nvidia.com/gpu: 2\n          cpu: 1\n        limits:\n          nvidia.com/gpu: 2\n",
    ),
  );
});

test("GPU018 request without a GPU limit: the fix adds it to the existing limits (block and flow)", () => {
  const block = pod("        limits:\n          cpu: 1\n        requests:\n          nvidia.com/gpu: 1\n");
  const [b] = lintManifestCode(block, "yaml", "GPU018");
  assert.equal(
    applyManifestFix(block, "yaml", b),
    pod(
      "        limits:\n          cpu: 1\n          nvidia.com/gpu: 1\n        requests:\n          nvidia.com/gpu: 1\n",
    ),
  );
  const flow = pod("        limits: {cpu: 1}\n        requests: {nvidia.com/gpu: 1}\n");
  const [f] = lintManifestCode(flow, "yaml", "GPU018");
  assert.equal(
    applyManifestFix(flow, "yaml", f),
    pod("        limits: {cpu: 1, nvidia.com/gpu: 1}\n        requests: {nvidia.com/gpu: 1}\n"),
  );
});

test("GPU018 request differs from limit: unsafe fix sets the request to the limit, related points at the limit", () => {
  const src = pod("        limits:\n          nvidia.com/gpu: 4\n        requests:\n          nvidia.com/gpu: 2\n");
  const [d] = lintManifestCode(src, "yaml", "GPU018");
  assert.equal(d.range.start.line, 12);
  assert.equal(d.related?.[0].range.start.line, 10);
  assert.equal(d.fix!.safe, false);
  assert.equal(
    applyEdits(src, d.fix!.edits),
    pod("        limits:\n          nvidia.com/gpu: 4\n        requests:\n          nvidia.com/gpu: 4\n"),
  );
});

test("GPU018 fraction: whole GPUs in limits and requests alike (unsafe)", () => {
  const src = pod(
    '        limits:\n          nvidia.com/gpu: "0.5"\n        requests:\n          nvidia.com/gpu: 0.5\n',
  );
  const ds = lintManifestCode(src, "yaml", "GPU018");
  assert.equal(ds.length, 1);
  assert.match(ds[0].message, /not a whole number of GPUs/);
  assert.equal(
    applyManifestFix(src, "yaml", ds[0]),
    pod("        limits:\n          nvidia.com/gpu: 1\n        requests:\n          nvidia.com/gpu: 1\n"),
  );
  assert.deepEqual(
    lintManifestCode(pod("        limits:\n          nvidia.com/gpu: 1000m\n"), "yaml", "GPU018"),
    [],
    "1000m is one whole GPU",
  );
});

test("GPU018 leaves templated values and non-Kubernetes YAML alone; compose files are not Kubernetes", () => {
  assert.deepEqual(
    lintManifestCode(pod("        requests:\n          nvidia.com/gpu: ${GPUS}\n"), "yaml", "GPU018"),
    [],
  );
  const notK8s = "resources:\n  requests:\n    nvidia.com/gpu: 1\n";
  assert.deepEqual(lintManifestCode(notK8s, "yaml", "GPU018"), []);
  assert.deepEqual(lintManifestCode(pod("        requests:\n          nvidia.com/gpu: 1\n"), "compose", "GPU018"), []);
});

test("GPU018 positions are UTF-16 and CRLF files keep CRLF in fixes", () => {
  const src = pod("        requests:\n          nvidia.com/gpu: 1\n")
    .replace("name: p", 'name: "p😀"')
    .replace(/\n/g, "\r\n");
  const [d] = lintManifestCode(src, "yaml", "GPU018");
  assert.equal(d.range.start.line, 10);
  assert.match(d.message, /Pod "p😀"/);
  const fixed = fixAllManifest(src, "yaml", {});
  assert.equal(fixed.applied, 1);
  assert.ok(
    fixed.text.endsWith("          nvidia.com/gpu: 1\r\n        limits:\r\n          nvidia.com/gpu: 1\r\n"),
    JSON.stringify(fixed.text),
  );
});

test("GPU018 severity, select/ignore and noqa go through the same options as Python rules", () => {
  const src = pod("        requests:\n          nvidia.com/gpu: 1\n");
  assert.equal(lintManifestCode(src, "yaml", "GPU018", { severity: { GPU018: "warning" } })[0].severity, "warning");
  assert.deepEqual(lintManifestCode(src, "yaml", "GPU018", { ignore: ["GPU018"] }), []);
  assert.deepEqual(lintManifestCode(src, "yaml", "GPU018", { select: ["GPU019"] }), []);
  assert.equal(lintManifestCode(src, "yaml", "GPU018", { select: ["GPU01"] }).length, 1);
  assert.deepEqual(lintManifestCode(src.replace("gpu: 1\n", "gpu: 1  # noqa\n"), "yaml", "GPU018"), []);
});
