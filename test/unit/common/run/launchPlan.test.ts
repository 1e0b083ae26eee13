// The one launch planner (common/src/run/plan.ts): the vendor from the inventory (or the tools on the
// run's PATH), the launcher's program, the refusals, with stand-ins for `find` and `scriptProblem`
// (no file system).
import { dirname } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { planLaunch, runVendor, type PlanInput } from "../../../../common/src/run/plan";
import type { FindOptions } from "../../../../common/src/run/which";
import { formatRunResult } from "../../../../common/src/agents/core";

const FILE = "/work/proj/train.py";
const GPUS = [
  { index: 0, uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f" },
  { index: 1, uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130" },
];

/** The interpreter every plan runs with: always there (an absolute path is checked as it is). */
const PYTHON = "/venv/bin/python";

/**
 * A `find` that knows the programs of `tools` (name → absolute path) and {@link PYTHON}, as
 * which.ts does: a bare name when its folder is next to the interpreter or on `pathEnv`, an absolute
 * path as it is. Records each lookup of a bare name (the launcher's program, the vendor's tools).
 */
function finder(tools: Record<string, string>) {
  const asked: Array<{ name: string } & FindOptions> = [];
  const find = (name: string, opts: FindOptions) => {
    if (name.startsWith("/")) return name === PYTHON || Object.values(tools).includes(name) ? name : undefined;
    asked.push({ name, ...opts });
    const path = tools[name];
    const dirs = [...(opts.interpreter ? [dirname(opts.interpreter)] : []), ...(opts.pathEnv ?? "").split(":")];
    return path && dirs.includes(dirname(path)) ? path : undefined;
  };
  return { find, asked };
}

const input = (over: Partial<PlanInput>): PlanInput => ({
  file: FILE,
  cwd: "/work/proj",
  launcher: "python",
  deviceIds: ["1"],
  inventory: { gpus: GPUS },
  interpreter: PYTHON,
  hostEnv: { PATH: "/usr/bin", HOME: "/home/me" },
  find: finder({}).find,
  scriptProblem: (file) => (file === FILE ? undefined : "no such file"),
  ...over,
});

test("an inventory read by amd-smi gives ROCR_VISIBLE_DEVICES alone; one read by nvidia-smi the CUDA variables", () => {
  const amd = planLaunch(input({ inventory: { gpus: GPUS, vendor: "amd" } }));
  assert.ok(amd.ok);
  assert.equal(amd.vendor, "amd");
  assert.deepEqual(amd.spec.env, { ROCR_VISIBLE_DEVICES: "1" });
  assert.deepEqual(amd.spec.unset, [
    "HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
  ]);
  const nv = planLaunch(input({}));
  assert.ok(nv.ok);
  assert.equal(nv.vendor, "nvidia");
  assert.deepEqual(nv.spec.env, { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.deepEqual(nv.spec.unset, []);
  assert.deepEqual([nv.spec.command, ...nv.spec.args], ["/venv/bin/python", FILE]);
});

test("without an inventory the vendor comes from the tools on the run's PATH (gpuPilot.run.env's PATH first)", () => {
  const { find, asked } = finder({ "rocm-smi": "/opt/rocm/bin/rocm-smi" });
  assert.equal(runVendor(undefined, find, "/opt/rocm/bin"), "amd");
  assert.deepEqual(
    asked.map((a) => [a.name, a.pathEnv]),
    [
      ["nvidia-smi", "/opt/rocm/bin"],
      ["amd-smi", "/opt/rocm/bin"],
      ["rocm-smi", "/opt/rocm/bin"],
    ],
  );
  const plan = planLaunch(input({ inventory: undefined, runEnv: { PATH: "/opt/rocm/bin:${env:PATH}" }, find }));
  assert.ok(plan.ok);
  assert.equal(plan.vendor, "amd");
  assert.deepEqual(plan.spec.env, { PATH: "/opt/rocm/bin:/usr/bin", ROCR_VISIBLE_DEVICES: "1" });
  assert.equal(asked.at(-1)?.pathEnv, "/opt/rocm/bin:/usr/bin", "looked up on the expanded run PATH");
  assert.equal(
    runVendor(undefined, finder({}).find, "/usr/bin"),
    "nvidia",
    "no tool at all: nvidia, as before vendors were known",
  );
  assert.equal(
    runVendor({ gpus: GPUS }, find, "/opt/rocm/bin"),
    "nvidia",
    "an inventory without vendor was read by nvidia-smi: no lookup decides",
  );
});

test("the launcher's program: found next to the interpreter or on PATH; torchrun falls back to python -m; docker and srun missing are refused", () => {
  const { find, asked } = finder({ torchrun: "/venv/bin/torchrun" });
  const tr = planLaunch(input({ launcher: "torchrun", deviceIds: ["0", "1"], find }));
  assert.ok(tr.ok);
  assert.deepEqual(
    [tr.spec.command, ...tr.spec.args],
    ["/venv/bin/torchrun", "--standalone", "--nproc_per_node=2", FILE],
  );
  assert.deepEqual(asked[0], { name: "torchrun", pathEnv: "/usr/bin", interpreter: "/venv/bin/python" });
  const fallback = planLaunch(input({ launcher: "torchrun", deviceIds: ["0"] }));
  assert.ok(fallback.ok);
  assert.deepEqual(
    [fallback.spec.command, ...fallback.spec.args],
    ["/venv/bin/python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1", FILE],
  );
  assert.match(
    fallback.spec.notes[0],
    /torchrun was not found on PATH or next to \/venv\/bin\/python: running \/venv\/bin\/python -m torch\.distributed\.run\./,
  );
  assert.deepEqual(planLaunch(input({ launcher: "docker", dockerImage: "pytorch/pytorch" })), {
    ok: false,
    message: "docker was not found on PATH: install it or choose another launcher.",
  });
  assert.deepEqual(planLaunch(input({ launcher: "slurm", runEnv: { PATH: "/nowhere" } })), {
    ok: false,
    message: "srun was not found on PATH (gpuPilot.run.env's PATH): install it or choose another launcher.",
  });
});

test("refusals are messages, never throws: bad gpuPilot.run.env, no GPU, docker on AMD; deepspeed gets indices from the inventory", () => {
  assert.deepEqual(planLaunch(input({ runEnv: { "A B": "x" } })), {
    ok: false,
    message: 'gpuPilot.run.env: "A B" is not a variable name.',
  });
  assert.deepEqual(planLaunch(input({ deviceIds: [] })), { ok: false, message: "No GPU selected." });
  const docker = planLaunch(
    input({
      launcher: "docker",
      dockerImage: "rocm/pytorch",
      inventory: { gpus: GPUS, vendor: "amd" },
      find: finder({ docker: "/usr/bin/docker" }).find,
    }),
  );
  assert.equal(docker.ok, false);
  assert.match((docker as { message: string }).message, /--gpus, which is NVIDIA's/);
  const ds = planLaunch(
    input({
      launcher: "deepspeed",
      deviceIds: [GPUS[1].uuid],
      find: finder({ deepspeed: "/venv/bin/deepspeed" }).find,
    }),
  );
  assert.ok(ds.ok);
  assert.deepEqual(ds.spec.args, ["--include", "localhost:1", FILE]);
  assert.deepEqual(ds.spec.env, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
});

test("the agent tools' run text names the variable the plan set: ROCR_VISIBLE_DEVICES on AMD, CUDA_VISIBLE_DEVICES otherwise", () => {
  const what = { file: FILE, launcher: "python", visibleDevices: "0", command: ["python3", FILE] };
  const end = { exitCode: 0 };
  assert.match(
    formatRunResult({ ...what, vendor: "amd" }, end, "", 60),
    /^Ran \/work\/proj\/train\.py with python on ROCR_VISIBLE_DEVICES=0: exit code 0\.\n/,
  );
  assert.match(
    formatRunResult({ ...what, vendor: "nvidia" }, end, "", 60),
    /^Ran \/work\/proj\/train\.py with python on CUDA_VISIBLE_DEVICES=0 \(CUDA_DEVICE_ORDER=PCI_BUS_ID\): exit code 0\.\n/,
  );
  assert.equal(
    formatRunResult(what, end, "", 60),
    formatRunResult({ ...what, vendor: "nvidia" }, end, "", 60),
    "no vendor: NVIDIA's text, as before",
  );
});

test("a script that is not a regular file and a program to start that is not there are refused, in one sentence for every face", () => {
  assert.deepEqual(planLaunch(input({ file: "/work/proj/absent.py" })), {
    ok: false,
    message: "Cannot run /work/proj/absent.py: no such file.",
  });
  assert.deepEqual(planLaunch(input({ scriptProblem: () => "not a regular file (a folder)" })), {
    ok: false,
    message: `Cannot run ${FILE}: not a regular file (a folder).`,
  });
  // A bare interpreter is looked up on the run's PATH (gpuPilot.run.env's when it sets one), as the start would.
  const { find, asked } = finder({ python3: "/usr/bin/python3" });
  assert.ok(planLaunch(input({ interpreter: "python3", find })).ok);
  assert.deepEqual(asked.at(-1), { name: "python3", pathEnv: "/usr/bin" });
  assert.deepEqual(planLaunch(input({ interpreter: "python3" })), {
    ok: false,
    message: "The Python interpreter python3 was not found on PATH: install Python or choose another interpreter.",
  });
  assert.deepEqual(planLaunch(input({ interpreter: "python3", runEnv: { PATH: "/nowhere" }, find })), {
    ok: false,
    message:
      "The Python interpreter python3 was not found on PATH (gpuPilot.run.env's PATH): install Python or choose another interpreter.",
  });
  assert.deepEqual(planLaunch(input({ interpreter: "/gone/venv/bin/python" })), {
    ok: false,
    message:
      "The Python interpreter /gone/venv/bin/python is not an executable file: install Python or choose another interpreter.",
  });
  // torchrun's module fallback starts the interpreter: the same refusal.
  assert.deepEqual(planLaunch(input({ launcher: "torchrun", interpreter: "python3" })), {
    ok: false,
    message: "The Python interpreter python3 was not found on PATH: install Python or choose another interpreter.",
  });
  // A custom command line's program; a relative one is looked for from the run's folder.
  const seen: string[] = [];
  const custom = (customArgs: string[]) =>
    planLaunch(
      input({
        launcher: "custom",
        customArgs,
        find: (name, opts) => (seen.push(name), finder({}).find(name, opts)),
      }),
    );
  assert.deepEqual(custom(["./run.sh", "${file}"]), {
    ok: false,
    message: "The program ./run.sh is not an executable file: install it or choose another launcher.",
  });
  assert.equal(seen.at(-1), "/work/proj/run.sh");
  assert.ok(custom(["${python}", "${file}"]).ok);
});
