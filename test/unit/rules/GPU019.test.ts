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
import { manifestNoqaEdit } from "../../../server/src/engine/manifests/noqa";

manifestFixtureTests("GPU019");
manifestDocExampleTest("GPU019", "dockerfile");

test("GPU019 Dockerfile ENV K=V alone: warning on the pair, the unsafe fix removes the instruction", () => {
  const src = 'FROM pytorch/pytorch:latest\nENV CUDA_VISIBLE_DEVICES=1\nCMD ["python"]\n';
  const [d] = lintManifestCode(src, "dockerfile", "GPU019");
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 4 }, end: { line: 1, character: 26 } });
  assert.match(d.message, /baked into the image/);
  assert.equal(d.fix!.safe, false);
  assert.equal(applyEdits(src, d.fix!.edits), 'FROM pytorch/pytorch:latest\nCMD ["python"]\n');
  assert.equal(fixAllManifest(src, "dockerfile", {}).applied, 0, "an unsafe fix never runs in fix-all");
});

test("GPU019 Dockerfile continuations: only the variable goes, the other pairs and the instruction stay", () => {
  const first = "FROM x\nENV CUDA_VISIBLE_DEVICES=0 \\\n    OTHER=1\n";
  assert.equal(
    applyManifestFix(first, "dockerfile", lintManifestCode(first, "dockerfile", "GPU019")[0]),
    "FROM x\nENV OTHER=1\n",
  );
  const last = 'FROM x\nENV A="x y" \\\n    CUDA_VISIBLE_DEVICES=0\nRUN true\n';
  const [d] = lintManifestCode(last, "dockerfile", "GPU019");
  assert.deepEqual(d.range.start, { line: 2, character: 4 });
  assert.equal(applyManifestFix(last, "dockerfile", d), 'FROM x\nENV A="x y"\nRUN true\n');
  const spaced = "FROM x\nENV CUDA_VISIBLE_DEVICES 0\n";
  assert.equal(applyManifestFix(spaced, "dockerfile", lintManifestCode(spaced, "dockerfile", "GPU019")[0]), "FROM x\n");
  const multi = "FROM x\nENV CUDA_VISIBLE_DEVICES=0 \\\n    A=1\n";
  assert.equal(
    applyManifestFix(
      multi.replace(/\n/g, "\r\n"),
      "dockerfile",
      lintManifestCode(multi.replace(/\n/g, "\r\n"), "dockerfile", "GPU019")[0],
    ),
    "FROM x\r\nENV A=1\r\n",
  );
});

test("GPU019 Dockerfile noqa: a comment line above the instruction; the action adds or extends it", () => {
  const src = "FROM x\n  ENV CUDA_VISIBLE_DEVICES=0 \\\n      A=1\n";
  const [d] = lintManifestCode(src, "dockerfile", "GPU019");
  const edit = manifestNoqaEdit(src, "dockerfile", d.range.start.line, "GPU019")!;
  const suppressed = applyEdits(src, [edit]);
  assert.equal(suppressed, "FROM x\n  # noqa: GPU019\n  ENV CUDA_VISIBLE_DEVICES=0 \\\n      A=1\n");
  assert.deepEqual(lintManifestCode(suppressed, "dockerfile", "GPU019"), []);
  const other = "FROM x\n# noqa: GPU018\nENV CUDA_VISIBLE_DEVICES=0\n";
  assert.equal(lintManifestCode(other, "dockerfile", "GPU019").length, 1);
  assert.equal(
    applyEdits(other, [manifestNoqaEdit(other, "dockerfile", 2, "GPU019")!]),
    "FROM x\n# noqa: GPU018, GPU019\nENV CUDA_VISIBLE_DEVICES=0\n",
  );
  assert.equal(manifestNoqaEdit(suppressed, "dockerfile", 1, "GPU019"), null);
});

test("GPU019 compose: list and mapping forms; removing the only entry removes `environment`", () => {
  const list = "services:\n  a:\n    image: i\n    environment:\n      - CUDA_VISIBLE_DEVICES=1\n      - B=2\n";
  const [l] = lintManifestCode(list, "compose", "GPU019");
  assert.deepEqual(l.range, { start: { line: 4, character: 8 }, end: { line: 4, character: 30 } });
  assert.equal(applyManifestFix(list, "compose", l), "services:\n  a:\n    image: i\n    environment:\n      - B=2\n");
  const only = 'services:\n  a:\n    environment:\n      CUDA_VISIBLE_DEVICES: "1"\n    image: i\n';
  const [m] = lintManifestCode(only, "compose", "GPU019");
  assert.equal(applyManifestFix(only, "compose", m), "services:\n  a:\n    image: i\n");
  const flow = "services:\n  a:\n    image: i\n    environment: [A=1, CUDA_VISIBLE_DEVICES=0]\n";
  assert.equal(
    applyManifestFix(flow, "compose", lintManifestCode(flow, "compose", "GPU019")[0]),
    "services:\n  a:\n    image: i\n    environment: [A=1]\n",
  );
});

test("GPU019 compose and pod env: the YAML noqa action appends to the line", () => {
  const src = 'services:\n  a:\n    image: i\n    environment:\n      CUDA_VISIBLE_DEVICES: "1"   # pinned\n';
  const [d] = lintManifestCode(src, "compose", "GPU019");
  const edit = manifestNoqaEdit(src, "compose", d.range.start.line, "GPU019")!;
  assert.equal(
    applyEdits(src, [edit]),
    'services:\n  a:\n    image: i\n    environment:\n      CUDA_VISIBLE_DEVICES: "1"   # pinned  # noqa: GPU019\n',
  );
  assert.deepEqual(lintManifestCode(applyEdits(src, [edit]), "compose", "GPU019"), []);
});

test("GPU019 pod env: the `- name:` item is removed with its value line; the only entry takes `env:` with it", () => {
  const pod = (env: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: i\n${env}      resources:\n        limits:\n          nvidia.com/gpu: 1\n`;
  const two = pod(
    '      env:\n        - name: CUDA_VISIBLE_DEVICES\n          value: "2"\n        - name: A\n          value: b\n',
  );
  const [d] = lintManifestCode(two, "yaml", "GPU019");
  assert.deepEqual(d.range.start, { line: 9, character: 10 });
  assert.match(d.message, /container "c" of Pod "p"/);
  assert.equal(applyManifestFix(two, "yaml", d), pod("      env:\n        - name: A\n          value: b\n"));
  const one = pod('      env:\n        - name: CUDA_VISIBLE_DEVICES\n          value: "2"\n');
  assert.equal(applyManifestFix(one, "yaml", lintManifestCode(one, "yaml", "GPU019")[0]), pod(""));
});

test("GPU019: NVIDIA_VISIBLE_DEVICES=all in a Kubernetes container that requests GPUs replaces the allocation; without a GPU limit (a monitoring DaemonSet), or with a limit of 0, it is left alone", () => {
  const pod = (limit: string | null) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: app\n      image: example/app:1\n      env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: all\n${limit === null ? "" : `      resources:\n        limits:\n          nvidia.com/gpu: ${limit}\n`}`;
  const [d, ...rest] = lintManifestCode(pod("2"), "yaml", "GPU019");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 9);
  assert.equal(
    d.message,
    'NVIDIA_VISIBLE_DEVICES=all is set for container "app" of Pod "p", which requests nvidia.com/gpu: 2: the device plugin passes the GPUs it allocated in this same variable (its default envvar strategy), and the container\'s own value takes their place, so the container sees every GPU of the node, also those allocated to other pods; remove it, the limit alone gives the container its GPUs',
  );
  assert.equal(d.fix?.safe, false);
  assert.deepEqual(lintManifestCode(pod(null), "yaml", "GPU019"), []);
  assert.deepEqual(lintManifestCode(pod("0"), "yaml", "GPU019"), []);
  // A compose service with a GPU reservation: not judged (how Docker merges the two is not established).
  const compose =
    "services:\n  app:\n    image: example/app:1\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n";
  assert.deepEqual(lintManifestCode(compose, "compose", "GPU019"), []);
});

test("GPU019: CUDA_VISIBLE_DEVICES whose first entry is no GPU id (all, none, a word) hides every GPU and says so", () => {
  const compose = (value: string) =>
    lintManifestCode(
      `services:\n  a:\n    image: i\n    environment:\n      CUDA_VISIBLE_DEVICES: ${value}\n`,
      "compose",
      "GPU019",
    ).map((d) => d.message);
  assert.deepEqual(compose("all"), [
    'CUDA_VISIBLE_DEVICES=all is set for service "a": `all` is not a GPU id (`all` is a value of NVIDIA_VISIBLE_DEVICES, the NVIDIA container toolkit\'s variable that picks the GPUs a container gets, not of CUDA_VISIBLE_DEVICES); CUDA takes indices or GPU-/MIG- UUIDs and makes visible only the devices listed before the first entry that is not one, here none: CUDA in the container finds no GPU; remove it: without it CUDA sees every GPU the container was given (reserve them with deploy.resources.reservations.devices (device_ids or count))',
  ]);
  assert.match(compose('"ALL"')[0], /`ALL` is not a GPU id \(`all` is a value of NVIDIA_VISIBLE_DEVICES/);
  assert.match(compose('"all,0"')[0], /`all` is not a GPU id/);
  const none = compose("none")[0];
  assert.match(none, /`none` is not a GPU id \(`none` is a value of NVIDIA_VISIBLE_DEVICES/);
  assert.match(
    none,
    /; if the container is meant to have no GPU, say so where it is started \(no GPU allocated, or NVIDIA_VISIBLE_DEVICES=none\); otherwise remove it and reserve them/,
  );
  const word = compose("gpu0")[0];
  assert.match(word, /^CUDA_VISIBLE_DEVICES=gpu0 is set for service "a": `gpu0` is not a GPU id; CUDA takes indices/);
  assert.doesNotMatch(word, /NVIDIA_VISIBLE_DEVICES/);
  assert.match(compose('"cuda:0"')[0], /`cuda:0` is not a GPU id;/);
  // Ids keep the host-id message; so does a value the analysis cannot read (compose interpolation).
  for (const v of ['"1"', '"0,all"', "GPU-8932f937", "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/2", '"${GPUS}"'])
    assert.match(compose(v)[0], /a host id here picks another GPU or none/, v);
  // Values that hide every GPU on purpose stay silent, as before; so does NVIDIA_VISIBLE_DEVICES=all.
  assert.deepEqual(compose('""'), []);
  assert.deepEqual(compose('"-1"'), []);
  assert.deepEqual(
    lintManifestCode(
      "services:\n  a:\n    image: i\n    environment:\n      NVIDIA_VISIBLE_DEVICES: all\n",
      "compose",
      "GPU019",
    ),
    [],
  );
  // A Dockerfile ENV and a pod env get the same reading.
  const [env] = lintManifestCode("FROM x\nENV CUDA_VISIBLE_DEVICES=all\n", "dockerfile", "GPU019");
  assert.match(env.message, /^CUDA_VISIBLE_DEVICES=all is baked into the image \(ENV\): `all` is not a GPU id/);
  assert.match(env.message, /\(allocate GPUs at run time with docker run --gpus/);
});
