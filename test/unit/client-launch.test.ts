// Launch building for "Run Active File on Selected GPUs": argument arrays and environments of every
// launcher, exactly (client/src/run/launch.ts has no vscode import).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildLaunch, deepspeedIndices, describeExit, expandCustomArgs, expandEnv, LaunchError, LAUNCHERS, splitArgs, visibleDevicesValue,
} from "../../client/src/run/launch";

const PY = "/home/me/.venv/bin/python";
const FILE = "/work/proj/train.py";
const base = { interpreter: PY, file: FILE, cwd: "/work/proj" };
const SEL = { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
const UUID0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const UUID1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";
const GPUS = [{ index: 0, uuid: UUID0 }, { index: 1, uuid: UUID1 }];
const ENV = "/usr/bin/env";
/** `env` removing the selection's variables VS Code adds to task processes, then setting `assign`. */
const UNSET = (...assign: string[]) => ["-u", "CUDA_VISIBLE_DEVICES", "-u", "CUDA_DEVICE_ORDER", ...assign];

test("python: interpreter + [file], CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER", () => {
  assert.deepEqual(buildLaunch({ ...base, deviceIds: ["1"] }), {
    launcher: "python",
    command: PY,
    args: [FILE],
    cwd: "/work/proj",
    env: { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
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
  const found = buildLaunch({ ...base, launcher: "torchrun", program: "/home/me/.venv/bin/torchrun", deviceIds: ["0", "1"], scriptArgs: ["--lr", "1e-4"] });
  assert.equal(found.command, "/home/me/.venv/bin/torchrun");
  assert.deepEqual(found.args, ["--standalone", "--nproc_per_node=2", FILE, "--lr", "1e-4"]);
  assert.deepEqual(found.env, SEL);
  assert.equal(found.title, "train.py on GPU 0,1 (torchrun)");
  assert.deepEqual(found.notes, []);

  const fallback = buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["1"], nproc: 3 });
  assert.equal(fallback.command, PY);
  assert.deepEqual(fallback.args, ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=3", FILE]);
  assert.match(fallback.notes[0], /torchrun was not found .* running \/home\/me\/\.venv\/bin\/python -m torch\.distributed\.run/);
});

test("accelerate: launch --num_processes --gpu_ids, and python -m accelerate.commands.launch", () => {
  const found = buildLaunch({ ...base, launcher: "accelerate", program: "/usr/bin/accelerate", deviceIds: ["0", "1"] });
  assert.equal(found.command, "/usr/bin/accelerate");
  assert.deepEqual(found.args, ["launch", "--num_processes=2", "--gpu_ids=0,1", FILE]);
  assert.deepEqual(found.env, SEL);
  const fallback = buildLaunch({ ...base, launcher: "accelerate", deviceIds: [UUID1] });
  assert.equal(fallback.command, PY);
  assert.deepEqual(fallback.args, ["-m", "accelerate.commands.launch", "--num_processes=1", `--gpu_ids=${UUID1}`, FILE]);
  assert.deepEqual(fallback.env, { CUDA_VISIBLE_DEVICES: UUID1, CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
});

test("deepspeed: env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER CUDA_DEVICE_ORDER=PCI_BUS_ID deepspeed --include localhost:<indices>, UUIDs translated", () => {
  const found = buildLaunch({ ...base, launcher: "deepspeed", program: "/usr/bin/deepspeed", envProgram: ENV, deviceIds: ["0", "1"], gpus: GPUS, scriptArgs: ["--deepspeed_config", "ds.json"] });
  assert.equal(found.command, ENV);
  assert.deepEqual(found.args, [...UNSET("CUDA_DEVICE_ORDER=PCI_BUS_ID"), "/usr/bin/deepspeed", "--include", "localhost:0,1", FILE, "--deepspeed_config", "ds.json"]);
  assert.deepEqual(found.env, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.equal("CUDA_VISIBLE_DEVICES" in found.env, false);
  assert.equal(found.title, "train.py on GPU 0,1 (deepspeed)");
  assert.deepEqual(found.notes, []);

  const byUuid = buildLaunch({ ...base, launcher: "deepspeed", envProgram: "/bin/env", deviceIds: [UUID1], gpus: GPUS });
  assert.equal(byUuid.command, "/bin/env");
  assert.deepEqual(byUuid.args, [...UNSET("CUDA_DEVICE_ORDER=PCI_BUS_ID"), PY, "-m", "deepspeed.launcher.runner", "--include", "localhost:1", FILE]);
  assert.equal(byUuid.title, "train.py on GPU 1 (deepspeed)");

  // No env: run directly, and say what it may inherit.
  const direct = buildLaunch({ ...base, launcher: "deepspeed", program: "/usr/bin/deepspeed", deviceIds: ["1"], gpus: GPUS });
  assert.equal(direct.command, "/usr/bin/deepspeed");
  assert.deepEqual(direct.args, ["--include", "localhost:1", FILE]);
  assert.match(direct.notes[0], /Neither \/usr\/bin\/env nor \/bin\/env was found: deepspeed runs directly and may inherit CUDA_VISIBLE_DEVICES/);
  // env would read a program path with '=' as an assignment: run directly.
  const eq = buildLaunch({ ...base, launcher: "deepspeed", program: "/opt/a=b/deepspeed", envProgram: ENV, deviceIds: ["1"], gpus: GPUS });
  assert.equal(eq.command, "/opt/a=b/deepspeed");
  assert.deepEqual(eq.args, ["--include", "localhost:1", FILE]);
  assert.match(eq.notes[0], /holds '=', which env would read as a variable assignment/);
  assert.throws(() => buildLaunch({ ...base, launcher: "deepspeed", envProgram: "env", deviceIds: ["1"], gpus: GPUS }), /Not an absolute env program path/);

  assert.throws(() => buildLaunch({ ...base, launcher: "deepspeed", deviceIds: ["GPU-00000000-0000-0000-0000-000000000000"], gpus: GPUS }), /not a GPU of this machine/);
  assert.throws(() => deepspeedIndices(["MIG-1f3e4d5c-0000-1111-2222-333344445555"], GPUS), /whole GPUs, not the MIG instance/);
  // gpuPilot.run.env cannot sneak CUDA_VISIBLE_DEVICES in either.
  const env = buildLaunch({ ...base, launcher: "deepspeed", envProgram: ENV, deviceIds: ["1"], gpus: GPUS, extraEnv: { CUDA_VISIBLE_DEVICES: "0", FOO: "1" } });
  assert.deepEqual(env.env, { FOO: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.deepEqual(env.args, [...UNSET("CUDA_DEVICE_ORDER=PCI_BUS_ID"), PY, "-m", "deepspeed.launcher.runner", "--include", "localhost:1", FILE]);
  assert.match(env.notes[0], /sets CUDA_VISIBLE_DEVICES; ignored/);
});

test("custom: each template element is one argument, placeholders replaced inside elements", () => {
  const spec = buildLaunch({
    ...base, launcher: "custom", deviceIds: ["0", "1"], scriptArgs: ["--then", "me"],
    customArgs: ["${python}", "-m", "torch.distributed.run", "--nproc_per_node=${count}", "${file}", "--gpus=${gpus}", "a b; $(rm -rf /)"],
  });
  assert.equal(spec.command, PY);
  assert.deepEqual(spec.args, ["-m", "torch.distributed.run", "--nproc_per_node=2", FILE, "--gpus=0,1", "a b; $(rm -rf /)", "--then", "me"]);
  assert.deepEqual(spec.env, SEL);
  assert.equal(spec.title, "train.py on GPU 0,1 (custom)");
  assert.throws(() => buildLaunch({ ...base, launcher: "custom", deviceIds: ["0"], customArgs: [] }), /customArgs is empty/);
  assert.throws(() => expandCustomArgs(["${python}", "${home}"], { file: FILE, gpus: "0", count: "1", python: PY }), /Unknown placeholder \$\{home\}/);
});

test("docker: --gpus \"device=<ids>\" as one argument (Docker reads it as CSV), folder mounted at the same path, no CUDA env", () => {
  const spec = buildLaunch({ ...base, launcher: "docker", program: "/usr/local/bin/docker", envProgram: ENV, deviceIds: ["0", "1"], dockerImage: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", scriptArgs: ["--x"] });
  assert.equal(spec.command, ENV);
  assert.deepEqual(spec.args, [
    ...UNSET(), "/usr/local/bin/docker",
    "run", "--rm", "--gpus", "\"device=0,1\"", "-v", "/work/proj:/work/proj", "-w", "/work/proj",
    "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "python", FILE, "--x",
  ]);
  assert.deepEqual(spec.env, {}, "nothing passed into the container");
  assert.deepEqual(spec.notes, []);
  const bare = buildLaunch({ ...base, launcher: "docker", envProgram: ENV, deviceIds: [UUID1], dockerImage: "img" });
  assert.equal(bare.command, ENV);
  assert.deepEqual(bare.args, [...UNSET(), "docker", "run", "--rm", "--gpus", `"device=${UUID1}"`, "-v", "/work/proj:/work/proj", "-w", "/work/proj", "img", "python", FILE]);
  const direct = buildLaunch({ ...base, launcher: "docker", deviceIds: [UUID1], dockerImage: "img" });
  assert.equal(direct.command, "docker");
  assert.equal(direct.args[3], `"device=${UUID1}"`);
  assert.match(direct.notes[0], /docker runs directly/);
  assert.throws(() => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"] }), /Set gpuPilot\.run\.dockerImage/);
  assert.throws(() => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"], dockerImage: "--privileged" }), /Not a Docker image reference/);
  assert.throws(() => buildLaunch({ ...base, launcher: "docker", deviceIds: ["0"], dockerImage: "img; rm -rf /" }), /Not a Docker image reference/);
  assert.throws(() => buildLaunch({ ...base, cwd: "/a:b", file: "/a:b/t.py", launcher: "docker", deviceIds: ["0"], dockerImage: "img" }), /holds ':'/);
});

test("slurm: env -u ... srun --gpus=<n> <python> <file>, a count without a selection, no CUDA_VISIBLE_DEVICES", () => {
  const spec = buildLaunch({ ...base, launcher: "slurm", program: "/usr/bin/srun", envProgram: ENV, deviceIds: ["0", "1"], scriptArgs: ["--x"] });
  assert.equal(spec.command, ENV);
  assert.deepEqual(spec.args, [...UNSET("CUDA_DEVICE_ORDER=PCI_BUS_ID"), "/usr/bin/srun", "--gpus=2", PY, FILE, "--x"]);
  assert.deepEqual(spec.env, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.equal(spec.title, "train.py via srun (2 GPUs)");
  const count = buildLaunch({ ...base, launcher: "slurm", envProgram: ENV, deviceIds: [], gpuCount: 4 });
  assert.equal(count.command, ENV);
  assert.deepEqual(count.args, [...UNSET("CUDA_DEVICE_ORDER=PCI_BUS_ID"), "srun", "--gpus=4", PY, FILE]);
  const direct = buildLaunch({ ...base, launcher: "slurm", deviceIds: [], gpuCount: 4 });
  assert.equal(direct.command, "srun");
  assert.deepEqual(direct.args, ["--gpus=4", PY, FILE]);
  assert.throws(() => buildLaunch({ ...base, launcher: "slurm", deviceIds: [] }), /no GPU count/);
});

test("every launcher keeps file names with spaces and shell characters as one argument", () => {
  const file = "/work/my proj/it's $(weird) `x`; rm -rf.py";
  for (const launcher of LAUNCHERS) {
    const spec = buildLaunch({
      ...base, launcher, file, cwd: "/work/my proj", deviceIds: ["0"], gpus: GPUS, dockerImage: "img", customArgs: ["${python}", "${file}"], envProgram: ENV,
    });
    assert.ok(spec.args.includes(file), `${launcher}: ${JSON.stringify(spec.args)}`);
    assert.equal(spec.command === ENV, ["deepspeed", "docker", "slurm"].includes(launcher), `${launcher} through env: ${spec.command}`);
    assert.equal(spec.cwd, "/work/my proj");
  }
});

test("extra environment: merged under the selection, ${env:NAME} expanded, bad names refused", () => {
  const env = expandEnv({ PATH: "/opt/bin:${env:PATH}", RECORD: "/tmp/r.json", EMPTY: "${env:NOPE}" }, { PATH: "/usr/bin:/bin" });
  assert.deepEqual(env, { PATH: "/opt/bin:/usr/bin:/bin", RECORD: "/tmp/r.json", EMPTY: "" });
  const spec = buildLaunch({ ...base, deviceIds: ["1"], extraEnv: env });
  assert.deepEqual(spec.env, { PATH: "/opt/bin:/usr/bin:/bin", RECORD: "/tmp/r.json", EMPTY: "", CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
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
  assert.throws(() => buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["0"], nproc: 1.5 }), /Not a number of processes/);
  assert.throws(() => buildLaunch({ ...base, launcher: "torchrun", deviceIds: ["0"], nproc: -2 }), /Not a number of processes/);
  assert.throws(() => buildLaunch({ ...base, deviceIds: ["0"], scriptArgs: ["a\0b"] }), /script argument/);
});

test("splitArgs: shell-like words, quotes, no expansion", () => {
  assert.deepEqual(splitArgs(""), []);
  assert.deepEqual(splitArgs("  --epochs 3   --lr=1e-4 "), ["--epochs", "3", "--lr=1e-4"]);
  assert.deepEqual(splitArgs(`--name 'my run' --tag "a \\"b\\" c" x\\ y`), ["--name", "my run", "--tag", 'a "b" c', "x y"]);
  assert.deepEqual(splitArgs("$HOME *.py ; rm -rf / | cat"), ["$HOME", "*.py", ";", "rm", "-rf", "/", "|", "cat"]);
  assert.deepEqual(splitArgs("'' \"\""), ["", ""]);
  assert.throws(() => splitArgs("'open"), /Unterminated '/);
  assert.throws(() => splitArgs('"open'), /Unterminated "/);
});

test("describeExit: success, failure, unknown", () => {
  assert.deepEqual(describeExit("t.py on GPU 1", 0), { ok: true, message: "t.py on GPU 1: finished (exit code 0)." });
  assert.deepEqual(describeExit("t.py on GPU 1", 3), { ok: false, message: "t.py on GPU 1: failed with exit code 3." });
  assert.equal(describeExit("t.py on GPU 1", undefined).ok, false);
});
