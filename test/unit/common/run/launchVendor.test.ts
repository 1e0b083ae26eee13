// The launcher on an AMD ROCm machine (issue 21): ROCR_VISIBLE_DEVICES alone, and how the vendor is found.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildLaunch, LaunchError, runEnvironment } from "../../../../common/src/run/launch";
import { detectVendor } from "../../../../common/src/gpu/vendor";

const PY = "/opt/venv/bin/python";
const FILE = "/work/proj/train.py";
const base = { interpreter: PY, file: FILE, cwd: "/work/proj", vendor: "amd" as const };

test("amd python: ROCR_VISIBLE_DEVICES alone; inherited CUDA/HIP/GPU_DEVICE_ORDINAL selection removed", () => {
  const spec = buildLaunch({ ...base, deviceIds: ["2", "3"] });
  assert.equal(spec.command, PY);
  assert.deepEqual(spec.args, [FILE]);
  assert.deepEqual(spec.env, { ROCR_VISIBLE_DEVICES: "2,3" });
  assert.deepEqual(spec.unset, [
    "HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
  ]);
  const env = runEnvironment(
    {
      HIP_VISIBLE_DEVICES: "5",
      CUDA_VISIBLE_DEVICES: "0",
      ROCR_VISIBLE_DEVICES: "7",
      GPU_DEVICE_ORDINAL: "1",
      HOME: "/home/me",
    },
    spec,
  );
  assert.deepEqual(env, { HOME: "/home/me", PYTHONUNBUFFERED: "1", ROCR_VISIBLE_DEVICES: "2,3" });
});

test("amd: gpuPilot.run.env's ROCm selection variables are dropped with a note; other variables kept", () => {
  const spec = buildLaunch({
    ...base,
    deviceIds: ["0"],
    extraEnv: { HIP_VISIBLE_DEVICES: "1", HSA_OVERRIDE_GFX_VERSION: "11.0.0" },
  });
  assert.deepEqual(spec.env, { HSA_OVERRIDE_GFX_VERSION: "11.0.0", ROCR_VISIBLE_DEVICES: "0" });
  assert.match(spec.notes[0], /gpuPilot\.run\.env sets HIP_VISIBLE_DEVICES; ignored/);
});

test("amd torchrun and accelerate: ROCR_VISIBLE_DEVICES, and accelerate without --gpu_ids", () => {
  const tr = buildLaunch({ ...base, launcher: "torchrun", program: "/opt/venv/bin/torchrun", deviceIds: ["0", "1"] });
  assert.deepEqual(tr.args, ["--standalone", "--nproc_per_node=2", FILE]);
  assert.deepEqual(tr.env, { ROCR_VISIBLE_DEVICES: "0,1" });
  const acc = buildLaunch({
    ...base,
    launcher: "accelerate",
    program: "/opt/venv/bin/accelerate",
    deviceIds: ["1", "2"],
  });
  assert.deepEqual(acc.args, ["launch", "--num_processes=2", FILE]);
  assert.deepEqual(acc.env, { ROCR_VISIBLE_DEVICES: "1,2" });
});

test("amd docker is refused with the reason; nvidia (the default) is unchanged", () => {
  assert.throws(
    () => buildLaunch({ ...base, launcher: "docker", dockerImage: "rocm/pytorch", deviceIds: ["0"] }),
    (e: unknown) => e instanceof LaunchError && /--gpus, which is NVIDIA's/.test(e.message),
  );
  const nv = buildLaunch({ ...base, vendor: "nvidia", deviceIds: ["1"] });
  assert.deepEqual(nv.env, { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  assert.deepEqual(nv.unset, []);
});

test("detectVendor: nvidia-smi wins; amd-smi before rocm-smi; nothing found is nvidia", () => {
  const on =
    (...names: string[]) =>
    (n: string) =>
      names.includes(n) ? `/usr/bin/${n}` : undefined;
  assert.deepEqual(detectVendor(on("nvidia-smi", "rocm-smi")), { vendor: "nvidia" });
  assert.deepEqual(detectVendor(on("rocm-smi", "amd-smi")), {
    vendor: "amd",
    amdTool: { name: "amd-smi", path: "/usr/bin/amd-smi" },
  });
  assert.deepEqual(detectVendor(on("rocm-smi")), {
    vendor: "amd",
    amdTool: { name: "rocm-smi", path: "/usr/bin/rocm-smi" },
  });
  assert.deepEqual(detectVendor(on()), { vendor: "nvidia" });
});
