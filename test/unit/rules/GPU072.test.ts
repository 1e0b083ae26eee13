import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { manifestKindOf } from "../../../server/src/engine/manifests/files";
import { csvFields } from "../../../server/src/engine/rules/GPU072-docker-gpus-device-list-split";
import { manifestNoqaLines } from "../../../server/src/engine/manifests/noqa";

manifestFixtureTests("GPU072");
manifestDocExampleTest("GPU072", "devcontainer");

test("devcontainer.json files are told apart by path, whatever the editor's language", () => {
  for (const p of [
    "/w/.devcontainer/devcontainer.json",
    "/w/.devcontainer.json",
    "/w/.devcontainer/gpu/devcontainer.json",
    ".devcontainer/devcontainer.json",
  ]) {
    assert.equal(manifestKindOf(p), "devcontainer", p);
    assert.equal(manifestKindOf(p, "jsonc"), "devcontainer", p);
  }
  for (const p of [
    "/w/devcontainer.json",
    "/w/config/devcontainer.json",
    "/w/.devcontainer/other.json",
    "devcontainer.json",
  ])
    assert.equal(manifestKindOf(p), null, p);
});

test("csvFields reads --gpus values as Go's encoding/csv does", () => {
  assert.deepEqual(csvFields("device=2,3"), ["device=2", "3"]);
  assert.deepEqual(csvFields('"device=2,3"'), ["device=2,3"]);
  assert.deepEqual(csvFields('"device=2,3",driver=nvidia'), ["device=2,3", "driver=nvidia"]);
  assert.deepEqual(csvFields('"a""b"'), ['a"b']);
  assert.deepEqual(csvFields("device=2,"), ["device=2", ""]);
  assert.equal(csvFields('device="2,3"'), null);
  assert.equal(csvFields('"device=2,3'), null);
  assert.equal(csvFields('"device=2,3"x'), null);
});

const devcontainer = (args: string) => `{\n  "image": "img",\n  "runArgs": [${args}]\n}\n`;

test("GPU072 in runArgs: error on the value, the safe fix quotes it as JSON", () => {
  const src = devcontainer('"--gpus", "device=2,3"');
  const [d] = lintManifestCode(src, "devcontainer", "GPU072");
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range, { start: { line: 2, character: 24 }, end: { line: 2, character: 36 } });
  assert.match(d.message, /cannot set both Count and DeviceIDs/);
  assert.equal(d.fix!.safe, true);
  assert.equal(applyManifestFix(src, "devcontainer", d), devcontainer('"--gpus", "\\"device=2,3\\""'));
  const inline = devcontainer('"--gpus=device=2,3"');
  const [e] = lintManifestCode(inline, "devcontainer", "GPU072");
  assert.equal(applyManifestFix(inline, "devcontainer", e), devcontainer('"--gpus=\\"device=2,3\\""'));
});

test("GPU072 in a shell script: the fix wraps the value in single quotes; a bare 0 gives the first GPU only", () => {
  const src = "#!/bin/bash\ndocker run --gpus=device=2,0 img\n";
  const [d] = lintManifestCode(src, "jobscript", "GPU072");
  assert.match(d.message, /count is 0, so the container gets GPU 2 only/);
  assert.equal(applyManifestFix(src, "jobscript", d), "#!/bin/bash\ndocker run --gpus='\"device=2,0\"' img\n");
  const other = lintManifestCode("docker run --gpus device=0,1,capabilities=compute img\n", "jobscript", "GPU072");
  assert.equal(other.length, 1);
  assert.equal(other[0].fix, undefined);
  assert.match(other[0].message, /--gpus '"device=0,1",capabilities=compute'/);
  assert.match(
    lintManifestCode("docker run --gpus device=GPU-a,GPU-b img\n", "jobscript", "GPU072")[0].message,
    /invalid count/,
  );
});

test("GPU072 stays silent on podman, expansions and a quoted list; // noqa in devcontainer.json", () => {
  for (const line of [
    "podman run --gpus device=0,1 img",
    'docker run --gpus "device=$IDS,1" img',
    "docker run --gpus '\"device=0,1\"' img",
  ])
    assert.deepEqual(lintManifestCode(`${line}\n`, "jobscript", "GPU072"), [], line);
  const src = devcontainer('"--gpus", "device=2,3" // noqa: GPU072\n');
  assert.deepEqual(lintManifestCode(src, "devcontainer", "GPU072"), []);
  assert.deepEqual([...manifestNoqaLines(src, "devcontainer").keys()], [2]);
});
