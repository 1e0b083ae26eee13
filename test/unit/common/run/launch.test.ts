// Launch building for "Run Active File on Selected GPUs": argument arrays and environments of every
// launcher, exactly (common/src/run/launch.ts has no vscode import).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildLaunch,
  deepspeedIndices,
  describeExit,
  expandCustomArgs,
  expandEnv,
  LaunchError,
  LAUNCHERS,
  runEnvironment,
  splitArgs,
  visibleDevicesValue,
} from "../../../../common/src/run/launch";

const PY = "/home/me/.venv/bin/python";
const FILE = "/work/proj/train.py";
const base = { interpreter: PY, file: FILE, cwd: "/work/proj" };
const SEL = { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
const UUID0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const UUID1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";
const GPUS = [
  { index: 0, uuid: UUID0 },
  { index: 1, uuid: UUID1 },
];
/** What deepspeed, docker and srun remove from the inherited environment. */
const UNSET = ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"];

test("python: interpreter + [file], CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER", () => {
  assert.deepEqual(buildLaunch({ ...base, deviceIds: ["1"] }), {
    launcher: "python",
    command: PY,
    args: [FILE],
    cwd: "/work/proj",
    env: { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
    unset: [],
    visibleDevices: "1",
    title: "train.py on GPU 1",
    notes: [],
  });
  const two = buildLaunch({ ...base, deviceIds: ["0", "1", "0"], scriptArgs: ["--epochs", "3"] });
  assert.deepEqual(two.args, [FILE, "--epochs", "3"]);
  assert.deepEqual(two.env, SEL);
  assert.equal(two.title, "train.py on GPU 0,1");
});

test("torchrun: found program, and the python -m torch.distributed.run fallback", () => {
  const found = buildLaunch({
    ...base,
    launcher: "torchrun",
    program: "/home/me/.venv/bin/torchrun",
    deviceIds: ["0", "1"],
    scriptArgs: ["--lr", "1e-4"],
  });
  assert.equal(found.command, "/home/me/.venv/bin/torchrun");
  assert.deepEqual(found.args, ["--standalone", "--nproc_per_node=2", FILE, "--lr", "1e-4"]);
  assert.deepEqual(found.env, SEL);
  assert.equal(found.title, "train.py on GPU 0,1 (torchrun)");
  assert.deepEqual(found.notes, []);

  const fallback = buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["1"], nproc: 3 });
  assert.equal(fallback.command, PY);
  assert.deepEqual(fallback.args, ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=3", FILE]);
  assert.match(
    fallback.notes[0],
    /torchrun was not found .* running \/home\/me\/\.venv\/bin\/python -m torch\.distributed\.run/,
  );
});

test("accelerate: launch --num_processes --gpu_ids, and python -m accelerate.commands.launch", () => {
  const found = buildLaunch({ ...base, launcher: "accelerate", program: "/usr/bin/accelerate", deviceIds: ["0", "1"] });
  assert.equal(found.command, "/usr/bin/accelerate");
  assert.deepEqual(found.args, ["launch", "--num_processes=2", "--gpu_ids=0,1", FILE]);
  assert.deepEqual(found.env, SEL);
  const fallback = buildLaunch({ ...base, launcher: "accelerate", deviceIds: [UUID1] });
  assert.equal(fallback.command, PY);
  assert.deepEqual(fallback.args, [
    "-m",
    "accelerate.commands.launch",
    "--num_processes=1",
    `--gpu_ids=${UUID1}`,
    FILE,
  ]);
  assert.deepEqual(fallback.env, { CUDA_VISIBLE_DEVICES: UUID1, CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
});

test("deepspeed: deepspeed --include localhost:<indices>, UUIDs translated, CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER removed, CUDA_DEVICE_ORDER=PCI_BUS_ID set", () => {
  const found = buildLaunch({
    ...base,
    launcher: "deepspeed",
    program: "/usr/bin/deepspeed",
    deviceIds: ["0", "1"],
    gpus: GPUS,
    scriptArgs: ["--deepspeed_config", "ds.json"],
  });
  assert.equal(found.command, "/usr/bin/deepspeed");
  assert.deepEqual(found.args, ["--include", "localhost:0,1", FILE, "--deepspeed_config", "ds.json"]);
  assert.deepEqual(found.env, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.deepEqual(found.unset, UNSET);
  assert.equal(found.title, "train.py on GPU 0,1 (deepspeed)");
  assert.deepEqual(found.notes, []);

  const byUuid = buildLaunch({ ...base, launcher: "deepspeed", deviceIds: [UUID1], gpus: GPUS });
  assert.equal(byUuid.command, PY);
  assert.deepEqual(byUuid.args, ["-m", "deepspeed.launcher.runner", "--include", "localhost:1", FILE]);
  assert.equal(byUuid.title, "train.py on GPU 1 (deepspeed)");
  // A program path with '=' is just a path now (no env in front to read it as an assignment).
  const eq = buildLaunch({
    ...base,
    launcher: "deepspeed",
    program: "/opt/a=b/deepspeed",
    deviceIds: ["1"],
    gpus: GPUS,
  });
  assert.equal(eq.command, "/opt/a=b/deepspeed");
  assert.deepEqual(eq.notes, []);

  assert.throws(
    () =>
      buildLaunch({
        ...base,
        launcher: "deepspeed",
        deviceIds: ["GPU-00000000-0000-0000-0000-000000000000"],
        gpus: GPUS,
      }),
    /not a GPU of this machine/,
  );
  assert.throws(
    () => deepspeedIndices(["MIG-1f3e4d5c-0000-1111-2222-333344445555"], GPUS),
    /whole GPUs, not the MIG instance/,
  );
  // gpuPilot.run.env cannot sneak CUDA_VISIBLE_DEVICES in either.
  const env = buildLaunch({
    ...base,
    launcher: "deepspeed",
    deviceIds: ["1"],
    gpus: GPUS,
    extraEnv: { CUDA_VISIBLE_DEVICES: "0", FOO: "1" },
  });
  assert.deepEqual(env.env, { FOO: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.match(env.notes[0], /sets CUDA_VISIBLE_DEVICES; ignored/);
  const whole = runEnvironment({ CUDA_VISIBLE_DEVICES: "3", CUDA_DEVICE_ORDER: "FASTEST_FIRST", HOME: "/h" }, env);
  assert.deepEqual(whole, { HOME: "/h", PYTHONUNBUFFERED: "1", FOO: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
});

test("runEnvironment: the inherited environment less VS Code's own variables and `unset`, then the run's; nothing expanded", () => {
  const parent = {
    HOME: "/home/me",
    PATH: "/usr/bin",
    CUDA_VISIBLE_DEVICES: "5",
    ELECTRON_RUN_AS_NODE: "1",
    VSCODE_IPC_HOOK: "/tmp/x.sock",
    VSCODE_IPC_HOOK_CLI: "/tmp/cli.sock",
    VSCODE_NLS_CONFIG: "{}",
    UNDEF: undefined,
    TOKEN: "${env:HOME}",
  };
  assert.deepEqual(runEnvironment(parent, { env: { CUDA_VISIBLE_DEVICES: "0,1", X: "${command:evil}" }, unset: [] }), {
    HOME: "/home/me",
    PATH: "/usr/bin",
    CUDA_VISIBLE_DEVICES: "0,1",
    VSCODE_IPC_HOOK_CLI: "/tmp/cli.sock",
    TOKEN: "${env:HOME}",
    PYTHONUNBUFFERED: "1",
    X: "${command:evil}",
  });
  assert.deepEqual(
    runEnvironment({ PYTHONUNBUFFERED: "0" }, { env: {}, unset: [] }),
    { PYTHONUNBUFFERED: "0" },
    "the user's PYTHONUNBUFFERED wins",
  );
  assert.deepEqual(runEnvironment({}, { env: { PYTHONUNBUFFERED: "" }, unset: [] }), { PYTHONUNBUFFERED: "" });
  assert.deepEqual(
    runEnvironment({ CUDA_VISIBLE_DEVICES: "5", CUDA_DEVICE_ORDER: "FASTEST_FIRST" }, { env: {}, unset: UNSET }),
    { PYTHONUNBUFFERED: "1" },
  );
});

test("custom: each template element is one argument, placeholders replaced inside elements", () => {
  const spec = buildLaunch({
    ...base,
    launcher: "custom",
    deviceIds: ["0", "1"],
    scriptArgs: ["--then", "me"],
    customArgs: [
      "${python}",
      "-m",
      "torch.distributed.run",
      "--nproc_per_node=${count}",
      "${file}",
      "--gpus=${gpus}",
      "a b; $(rm -rf /)",
    ],
  });
  assert.equal(spec.command, PY);
  assert.deepEqual(spec.args, [
    "-m",
    "torch.distributed.run",
    "--nproc_per_node=2",
    FILE,
    "--gpus=0,1",
    "a b; $(rm -rf /)",
    "--then",
    "me",
  ]);
  assert.deepEqual(spec.env, SEL);
  assert.equal(spec.title, "train.py on GPU 0,1 (custom)");
  assert.throws(
    () => buildLaunch({ ...base, launcher: "custom", deviceIds: ["0"], customArgs: [] }),
    /customArgs is empty/,
  );
  assert.throws(
    () => expandCustomArgs(["${python}", "${home}"], { file: FILE, gpus: "0", count: "1", python: PY }),
    /Unknown placeholder \$\{home\}/,
  );
});

test('docker: --gpus "device=<ids>" as one argument (Docker reads it as CSV), folder mounted at the same path, no CUDA env', () => {
  const spec = buildLaunch({
    ...base,
    launcher: "docker",
    program: "/usr/local/bin/docker",
    deviceIds: ["0", "1"],
    dockerImage: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    scriptArgs: ["--x"],
  });
  assert.equal(spec.command, "/usr/local/bin/docker");
  assert.deepEqual(spec.args, [
    "run",
    "--rm",
    "--gpus",
    '"device=0,1"',
    "-v",
    "/work/proj:/work/proj",
    "-w",
    "/work/proj",
    "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "python",
    FILE,
    "--x",
  ]);
  assert.deepEqual(spec.env, {}, "nothing passed into the container");
  assert.deepEqual(spec.unset, UNSET);
  assert.deepEqual(spec.notes, []);
  const bare = buildLaunch({ ...base, launcher: "docker", deviceIds: [UUID1], dockerImage: "img" });
  assert.equal(bare.command, "docker");
  assert.deepEqual(bare.args, [
    "run",
    "--rm",
    "--gpus",
    `"device=${UUID1}"`,
    "-v",
    "/work/proj:/work/proj",
    "-w",
    "/work/proj",
    "img",
    "python",
    FILE,
  ]);
  assert.throws(() => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"] }), /Set gpuPilot\.run\.dockerImage/);
  assert.throws(
    () => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"], dockerImage: "--privileged" }),
    /Not a Docker image reference/,
  );
  assert.throws(
    () => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"], dockerImage: "img; rm -rf /" }),
    /Not a Docker image reference/,
  );
  assert.throws(
    () =>
      buildLaunch({
        ...base,
        cwd: "/a:b",
        file: "/a:b/t.py",
        launcher: "docker",
        deviceIds: ["0"],
        dockerImage: "img",
      }),
    /holds ':'/,
  );
});

test("slurm: srun --gpus=<n> <python> <file>, a count without a selection, no CUDA_VISIBLE_DEVICES", () => {
  const spec = buildLaunch({
    ...base,
    launcher: "slurm",
    program: "/usr/bin/srun",
    deviceIds: ["0", "1"],
    scriptArgs: ["--x"],
  });
  assert.equal(spec.command, "/usr/bin/srun");
  assert.deepEqual(spec.args, ["--gpus=2", PY, FILE, "--x"]);
  assert.deepEqual(spec.env, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.deepEqual(spec.unset, UNSET);
  assert.equal(spec.title, "train.py via srun (2 GPUs)");
  const count = buildLaunch({ ...base, launcher: "slurm", deviceIds: [], gpuCount: 4 });
  assert.equal(count.command, "srun");
  assert.deepEqual(count.args, ["--gpus=4", PY, FILE]);
  assert.throws(() => buildLaunch({ ...base, launcher: "slurm", deviceIds: [] }), /no GPU count/);
});

test("every launcher keeps file names with spaces and shell characters as one argument", () => {
  const file = "/work/my proj/it's $(weird) `x`; rm -rf.py";
  for (const launcher of LAUNCHERS) {
    const spec = buildLaunch({
      ...base,
      launcher,
      file,
      cwd: "/work/my proj",
      deviceIds: ["0"],
      gpus: GPUS,
      dockerImage: "img",
      customArgs: ["${python}", "${file}"],
    });
    assert.ok(spec.args.includes(file), `${launcher}: ${JSON.stringify(spec.args)}`);
    assert.equal(
      spec.unset.length > 0,
      ["deepspeed", "docker", "slurm"].includes(launcher),
      `${launcher} removes the selection's variables: ${JSON.stringify(spec.unset)}`,
    );
    assert.equal(spec.cwd, "/work/my proj");
  }
});

test("extra environment: merged under the selection, ${env:NAME} expanded, bad names refused", () => {
  const env = expandEnv(
    { PATH: "/opt/bin:${env:PATH}", RECORD: "/tmp/r.json", EMPTY: "${env:NOPE}" },
    { PATH: "/usr/bin:/bin" },
  );
  assert.deepEqual(env, { PATH: "/opt/bin:/usr/bin:/bin", RECORD: "/tmp/r.json", EMPTY: "" });
  const spec = buildLaunch({ ...base, deviceIds: ["1"], extraEnv: env });
  assert.deepEqual(spec.env, {
    PATH: "/opt/bin:/usr/bin:/bin",
    RECORD: "/tmp/r.json",
    EMPTY: "",
    CUDA_VISIBLE_DEVICES: "1",
    CUDA_DEVICE_ORDER: "PCI_BUS_ID",
  });
  assert.throws(() => expandEnv({ "A B": "x" }, {}), /not a variable name/);
  assert.throws(() => expandEnv({ A: 1 }, {}), /must be a string/);
  assert.throws(() => expandEnv({ A: "a\0b" }, {}), /without NUL/);
});

test("visibleDevicesValue: digits, commas and GPU-/MIG- UUIDs only", () => {
  assert.equal(visibleDevicesValue(["0", "1"]), "0,1");
  assert.equal(visibleDevicesValue([UUID0, UUID1]), `${UUID0},${UUID1}`);
  const mig = "MIG-1f3e4d5c-0000-1111-2222-333344445555";
  assert.equal(visibleDevicesValue([mig]), mig);
  for (const deviceIds of [["1,2"], ["0", "$(id)"], ["1 2"], ["-1"], ["GPU-123"], ["0;ls"]]) {
    assert.throws(() => buildLaunch({ ...base, deviceIds }), LaunchError, JSON.stringify(deviceIds));
  }
  assert.throws(() => buildLaunch({ ...base, deviceIds: [] }), /No GPU selected/);
  assert.throws(() => buildLaunch({ ...base, deviceIds: ["0", UUID1] }), /Mixes GPU indices and UUIDs/);
});

test("refuses relative paths, unusable interpreters and process counts", () => {
  assert.throws(() => buildLaunch({ ...base, file: "train.py", deviceIds: ["0"] }), /Not an absolute file path/);
  assert.throws(() => buildLaunch({ ...base, cwd: ".", deviceIds: ["0"] }), /Not an absolute folder path/);
  assert.throws(() => buildLaunch({ ...base, interpreter: " ", deviceIds: ["0"] }), /Not a usable Python interpreter/);
  assert.throws(() => buildLaunch({ ...base, interpreter: "python\nrm", deviceIds: ["0"] }), LaunchError);
  assert.throws(
    () => buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["0"], nproc: 1.5 }),
    /Not a number of processes/,
  );
  assert.throws(
    () => buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["0"], nproc: -2 }),
    /Not a number of processes/,
  );
  assert.throws(() => buildLaunch({ ...base, deviceIds: ["0"], scriptArgs: ["a\0b"] }), /script argument/);
});

test("splitArgs: shell-like words, quotes, no expansion", () => {
  assert.deepEqual(splitArgs(""), []);
  assert.deepEqual(splitArgs("  --epochs 3   --lr=1e-4 "), ["--epochs", "3", "--lr=1e-4"]);
  assert.deepEqual(splitArgs(`--name 'my run' --tag "a \\"b\\" c" x\\ y`), [
    "--name",
    "my run",
    "--tag",
    'a "b" c',
    "x y",
  ]);
  assert.deepEqual(splitArgs("$HOME *.py ; rm -rf / | cat"), ["$HOME", "*.py", ";", "rm", "-rf", "/", "|", "cat"]);
  assert.deepEqual(splitArgs("'' \"\""), ["", ""]);
  assert.throws(() => splitArgs("'open"), /Unterminated '/);
  assert.throws(() => splitArgs('"open'), /Unterminated "/);
});

test("describeExit: success, failure, unknown", () => {
  assert.deepEqual(describeExit("t.py on GPU 1", 0), { ok: true, message: "t.py on GPU 1: finished (exit code 0)." });
  assert.deepEqual(describeExit("t.py on GPU 1", 3), { ok: false, message: "t.py on GPU 1: failed with exit code 3." });
  assert.equal(describeExit("t.py on GPU 1", undefined).ok, false);
  assert.deepEqual(describeExit("t.py on GPU 1", undefined, "SIGINT"), {
    ok: false,
    message: "t.py on GPU 1: stopped by SIGINT.",
  });
});
