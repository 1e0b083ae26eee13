import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";
import { fixAllManifest } from "../../../server/src/engine/manifests/lintManifest";
import { manifestKindOf } from "../../../server/src/engine/manifests/files";

manifestFixtureTests("GPU020");
manifestDocExampleTest("GPU020", "compose");

const service = (device: string) => `services:
  train:
    image: pytorch/pytorch:latest
    deploy:
      resources:
        reservations:
          devices:
${device}`;

test("compose files are told apart by name (and by VS Code's dockercompose language id)", () => {
  for (const n of [
    "compose.yaml",
    "compose.yml",
    "compose.prod.yaml",
    "docker-compose.yml",
    "docker-compose.override.yaml",
    "my-docker-compose.yml",
  ])
    assert.equal(manifestKindOf(n), "compose", n);
  for (const n of ["Dockerfile", "dockerfile", "Dockerfile.dev", "train.Dockerfile", "Containerfile"])
    assert.equal(manifestKindOf(n), "dockerfile", n);
  for (const n of ["deployment.yaml", "k8s/pod.yml", "/a/b/values.yaml"]) assert.equal(manifestKindOf(n), "yaml", n);
  for (const n of ["train.py", "nb.ipynb", "README.md", "compose.json"]) assert.equal(manifestKindOf(n), null, n);
  assert.equal(manifestKindOf("/x/stack.yaml", "dockercompose"), "compose");
  assert.equal(manifestKindOf("/x/compose.yaml", "yaml"), "compose");
  assert.equal(manifestKindOf("/x/Dockerfile", "python"), null);
});

test("GPU020 count with device_ids: error on count; the unsafe fix keeps device_ids", () => {
  const src = service(
    '            - driver: nvidia\n              count: 1\n              device_ids: ["1"]\n              capabilities: [gpu]\n',
  );
  const [d] = lintManifestCode(src, "compose", "GPU020");
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range, { start: { line: 8, character: 14 }, end: { line: 8, character: 22 } });
  assert.equal(d.related?.[0].range.start.line, 9);
  assert.equal(d.fix!.safe, false);
  assert.equal(
    applyEdits(src, d.fix!.edits),
    service('            - driver: nvidia\n              device_ids: ["1"]\n              capabilities: [gpu]\n'),
  );
  const first = service('            - count: 1\n              device_ids: ["1"]\n              capabilities: [gpu]\n');
  assert.equal(
    applyManifestFix(first, "compose", lintManifestCode(first, "compose", "GPU020")[0]),
    service('            - device_ids: ["1"]\n              capabilities: [gpu]\n'),
  );
  const flow = service('            - {count: 1, device_ids: ["1"], capabilities: [gpu]}\n');
  assert.equal(
    applyManifestFix(flow, "compose", lintManifestCode(flow, "compose", "GPU020")[0]),
    service('            - {device_ids: ["1"], capabilities: [gpu]}\n'),
  );
});

test("GPU020 missing or empty capabilities: the safe fix adds capabilities: [gpu]; fix-all applies it", () => {
  const src = service("            - driver: nvidia\n              count: 2\n");
  const [d] = lintManifestCode(src, "compose", "GPU020");
  assert.equal(d.fix!.safe, true);
  const fixed = service("            - driver: nvidia\n              count: 2\n              capabilities: [gpu]\n");
  assert.equal(applyManifestFix(src, "compose", d), fixed);
  assert.deepEqual(fixAllManifest(src, "compose", {}), { text: fixed, applied: 1 });
  const empty = service("            - count: 2\n              capabilities:\n");
  assert.equal(
    applyManifestFix(empty, "compose", lintManifestCode(empty, "compose", "GPU020")[0]),
    service("            - count: 2\n              capabilities: [gpu]\n"),
  );
});

test("GPU020 count as a string: a number is information with a safe fix; anything else but all is an error", () => {
  const numeric = service('            - count: "2"\n              capabilities: [gpu]\n');
  const [n] = lintManifestCode(numeric, "compose", "GPU020");
  assert.equal(n.severity, "information");
  assert.equal(
    applyManifestFix(numeric, "compose", n),
    service("            - count: 2\n              capabilities: [gpu]\n"),
  );
  const ids = service("            - count: 0,1\n              capabilities: [gpu]\n");
  const [e] = lintManifestCode(ids, "compose", "GPU020");
  assert.equal(e.severity, "error");
  assert.match(e.message, /use device_ids/);
  assert.equal(e.fix, undefined);
  assert.equal(
    lintManifestCode(service("            - count: 1.5\n              capabilities: [gpu]\n"), "compose", "GPU020")
      .length,
    1,
  );
  assert.deepEqual(
    lintManifestCode(service("            - count: ALL\n              capabilities: [gpu]\n"), "compose", "GPU020"),
    [],
  );
});

test("GPU020 reads every document of a compose file and nothing of other YAML", () => {
  const src = service("            - count: 1\n") + "---\n" + service("            - count: 2\n");
  assert.deepEqual(
    lintManifestCode(src, "compose", "GPU020").map((d) => d.range.start.line),
    [7, 16],
  );
  assert.deepEqual(lintManifestCode(src, "yaml", "GPU020"), []);
});
