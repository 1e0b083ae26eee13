import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";

manifestFixtureTests("GPU067", { preview: true });

manifestDocExampleTest("GPU067", "yaml", { preview: true });

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: example/app:1
      securityContext:
        privileged: true
      resources:
        limits:
          nvidia.com/gpu: 2
`;

test("GPU067: a warning on privileged, the limit as related, the unsafe fix removes securityContext's only key", () => {
  const [d, ...rest] = lintManifestCode(POD, "yaml", "GPU067", { preview: true });
  assert.deepEqual(rest, []);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 9, character: 8 }, end: { line: 9, character: 24 } });
  assert.match(
    d.message,
    /^container "c" of Pod "p" is privileged and requests nvidia.com\/gpu: 2: .*not only the 2 allocated/,
  );
  assert.equal(d.related![0].range.start.line, 12);
  assert.equal(d.fix!.safe, false);
  assert.equal(applyManifestFix(POD, "yaml", d), POD.replace("      securityContext:\n        privileged: true\n", ""));
});

test("GPU067: a request of the whole node is silent; with the machine known, compared with its GPU count", () => {
  const whole = POD.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 8");
  assert.deepEqual(lintManifestCode(whole, "yaml", "GPU067", { preview: true }), []);
  const four = { preview: true, machine: { gpuCount: 4, uuids: [] } };
  assert.deepEqual(lintManifestCode(POD.replace("gpu: 2", "gpu: 4"), "yaml", "GPU067", four), []);
  const sixteen = { preview: true, machine: { gpuCount: 16, uuids: [] } };
  assert.equal(lintManifestCode(whole, "yaml", "GPU067", sixteen).length, 1);
});
