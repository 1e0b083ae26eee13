import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";

const TWO = { machine: { gpuCount: 2, uuids: [] } };
const ONE = { machine: { gpuCount: 1, uuids: [] } };

manifestFixtureTests("GPU045", TWO);

const SCRIPT =
  "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=1\n\nfor pred_len in 96 192 336 720; do\n  python -u run.py --gpu 0 --pred_len $pred_len\ndone\n";

test("GPU045: an exported id the machine lacks, for the Python a loop starts: warning on the export, once", () => {
  const [d, ...rest] = lintManifestCode(SCRIPT, "jobscript", "GPU045", ONE);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 7 }, end: { line: 1, character: 29 } });
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES="1": GPU 1 does not exist on this machine (1 GPU: 0..0); CUDA stops parsing there, so no GPU is visible: the Python started on line 5 inherits it (exported on line 2)',
  );
  const [inline] = lintManifestCode("CUDA_VISIBLE_DEVICES=0,3,1 python train.py\n", "jobscript", "GPU045", TWO);
  assert.equal(
    inline.message,
    'CUDA_VISIBLE_DEVICES="0,3,1": GPU 3 does not exist on this machine (2 GPUs: 0..1); CUDA stops parsing there, so only 0 stays visible and 1 is dropped: the Python started on line 1 gets it inline',
  );
  // UUIDs are compared when the inventory gives them.
  const uuids = { machine: { gpuCount: 1, uuids: ["GPU-aaaa-1111"] } };
  assert.equal(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=GPU-bbbb\npython t.py\n", "jobscript", "GPU045", uuids).length,
    1,
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=GPU-aaaa\npython t.py\n", "jobscript", "GPU045", uuids),
    [],
  );
});

test("GPU045: silent with the fixed id, an unknown machine, no Python after the export, a job script, or deepspeed", () => {
  assert.deepEqual(lintManifestCode(SCRIPT.replace("=1", "=0"), "jobscript", "GPU045", ONE), []);
  assert.deepEqual(lintManifestCode(SCRIPT, "jobscript", "GPU045"), []);
  assert.deepEqual(lintManifestCode(SCRIPT, "jobscript", "GPU045", TWO), []);
  assert.deepEqual(
    lintManifestCode("python warmup.py\nexport CUDA_VISIBLE_DEVICES=3\n./bench\n", "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("#!/bin/bash\n#SBATCH --gres=gpu:4\n" + SCRIPT.slice(12), "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=3\ndeepspeed train.py\n", "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=3\nenv -i python train.py\n", "jobscript", "GPU045", ONE),
    [],
  );
});

const COMPOSE =
  'services:\n  whisperlive:\n    build: ./services/WhisperLive\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              device_ids: ["3"]\n              capabilities: [gpu]\n';

test("GPU045: a compose reservation's device_ids beyond the machine: warning on the id, naming the service and the toolkit's error", () => {
  const [d, ...rest] = lintManifestCode(COMPOSE, "compose", "GPU045", ONE);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 8, character: 27 }, end: { line: 8, character: 30 } });
  assert.equal(
    d.message,
    'device_ids of service "whisperlive" names host GPU 3, which this machine does not have (1 GPU: 0..0): Docker hands the ids to the NVIDIA Container Toolkit, which refuses to start the container ("nvidia-container-cli: device error: 3: unknown device"); use an id that nvidia-smi lists here, or reserve by count (count: 1) instead',
  );
  // Each missing id of a list, a MIG index of a missing GPU, ints, and ids joined by a comma in one entry.
  const many = COMPOSE.replace('["3"]', '["0", "2", "5:1", 4, "1,6"]');
  assert.deepEqual(
    lintManifestCode(many, "compose", "GPU045", TWO).map((x) => /names (.*?), which/.exec(x.message)![1]),
    ["host GPU 2", "MIG device 5:1 of host GPU 5", "host GPU 4", "host GPU 6"],
  );
  // UUIDs are compared when the inventory gives them (a prefix of a machine's UUID is one of its GPUs).
  const uuids = { machine: { gpuCount: 1, uuids: ["GPU-aaaa-1111"] } };
  const byUuid = (id: string) => lintManifestCode(COMPOSE.replace('"3"', `"${id}"`), "compose", "GPU045", uuids);
  assert.match(byUuid("GPU-bbbb")[0].message, /names GPU-bbbb, which none of this machine's GPU UUIDs starts with/);
  assert.equal(byUuid("MIG-GPU-bbbb/1/0").length, 1);
  assert.deepEqual(byUuid("GPU-aaaa"), []);
  assert.deepEqual(byUuid("MIG-GPU-aaaa-1111/1/0"), []);
});

test("GPU045: silent on compose ids the machine has, with an unknown machine, interpolation, counts, MIG UUIDs, UUIDs without an inventory's, and non-GPU requests", () => {
  assert.deepEqual(lintManifestCode(COMPOSE, "compose", "GPU045"), []);
  const silent = [
    COMPOSE.replace('"3"', '"0"'),
    COMPOSE.replace('"3"', '"${GPU_ID}"'),
    COMPOSE.replace('"3"', '"${GPU_ID:-3}"'),
    COMPOSE.replace('"3"', '"MIG-4f3e2d1c-aaaa-bbbb-cccc-0123456789ab"'),
    COMPOSE.replace('"3"', '"GPU-bbbb"'),
    COMPOSE.replace('device_ids: ["3"]', "count: 4"),
    COMPOSE.replace("driver: nvidia", "driver: other").replace("capabilities: [gpu]", "capabilities: [tpu]"),
  ];
  for (const text of silent) assert.deepEqual(lintManifestCode(text, "compose", "GPU045", ONE), [], text);
  // A YAML file that is not a compose file is not read.
  assert.deepEqual(lintManifestCode(COMPOSE, "yaml", "GPU045", ONE), []);
});

test("GPU045: docker run --gpus device= with a host id the machine lacks: warning on the --gpus value; counts, all, variables and job scripts are not judged", () => {
  const [d, ...rest] = lintManifestCode(
    "#!/bin/bash\ndocker run --rm --gpus '\"device=0,2\"' img python t.py\n",
    "jobscript",
    "GPU045",
    TWO,
  );
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range, { start: { line: 1, character: 23 }, end: { line: 1, character: 37 } });
  assert.equal(
    d.message,
    '--gpus "device=0,2" asks for host GPU 2, which this machine does not have (2 GPUs: 0..1): the NVIDIA Container Toolkit refuses to start the container ("nvidia-container-cli: device error: 2: unknown device"); use an id that nvidia-smi lists here, or a count (--gpus 1)',
  );
  assert.equal(lintManifestCode("docker run --gpus=device=1 img\n", "jobscript", "GPU045", ONE).length, 1);
  assert.equal(
    lintManifestCode("sudo docker container run --gpus device=3 img\n", "jobscript", "GPU045", TWO).length,
    1,
  );
  const silent = [
    "docker run --gpus device=1 img\n",
    "docker run --gpus all img\n",
    "docker run --gpus 4 img\n",
    'docker run --gpus "device=$GPU" img\n',
    // unquoted, `device=0,5` is the device 0 and a count of 5 (Docker reads the value as CSV)
    "docker run --gpus device=0,5 img\n",
    // the image's own command line is not docker's options
    "docker run img --gpus device=7\n",
    "#!/bin/bash\n#SBATCH --gres=gpu:8\ndocker run --gpus device=5 img\n",
  ];
  for (const text of silent) assert.deepEqual(lintManifestCode(text, "jobscript", "GPU045", TWO), [], text);
  assert.deepEqual(lintManifestCode("docker run --gpus device=3 img\n", "jobscript", "GPU045"), []);
});
