// Launch building for "Run Active File on Selected GPUs": argument array and environment only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildLaunch, describeExit, LaunchError } from "../../client/src/run/launch";

const base = { interpreter: "/home/me/.venv/bin/python", file: "/work/proj/train.py", cwd: "/work/proj" };

test("buildLaunch: interpreter + [file], CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER", () => {
  assert.deepEqual(buildLaunch({ ...base, deviceIds: ["1"] }), {
    command: "/home/me/.venv/bin/python",
    args: ["/work/proj/train.py"],
    cwd: "/work/proj",
    env: { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
    title: "train.py on GPU 1",
  });
  const two = buildLaunch({ ...base, deviceIds: ["0", "1", "0"] });
  assert.equal(two.env.CUDA_VISIBLE_DEVICES, "0,1");
  assert.equal(two.title, "train.py on GPU 0,1");
});

test("buildLaunch keeps file names with spaces and shell characters as one argument", () => {
  const file = "/work/my proj/it's $(weird) `x`; rm -rf.py";
  const spec = buildLaunch({ ...base, file, cwd: "/work/my proj", deviceIds: ["0"] });
  assert.deepEqual(spec.args, [file]);
  assert.equal(spec.cwd, "/work/my proj");
});

test("buildLaunch accepts GPU and MIG UUIDs", () => {
  const uuid = "GPU-6486822f-842c-1320-f829-e4155c0d2130";
  assert.equal(buildLaunch({ ...base, deviceIds: [uuid] }).env.CUDA_VISIBLE_DEVICES, uuid);
  const mig = "MIG-1f3e4d5c-0000-1111-2222-333344445555";
  assert.equal(buildLaunch({ ...base, deviceIds: [mig] }).env.CUDA_VISIBLE_DEVICES, mig);
  assert.equal(buildLaunch({ ...base, interpreter: "python3", deviceIds: ["0"] }).command, "python3");
});

test("buildLaunch refuses bad device ids, nothing selected, and mixed kinds", () => {
  for (const deviceIds of [["1,2"], ["0", "$(id)"], ["1 "+"2"], ["-1"], ["GPU-123"]]) {
    assert.throws(() => buildLaunch({ ...base, deviceIds }), LaunchError, JSON.stringify(deviceIds));
  }
  assert.throws(() => buildLaunch({ ...base, deviceIds: [] }), /No GPU selected/);
  assert.throws(
    () => buildLaunch({ ...base, deviceIds: ["0", "GPU-6486822f-842c-1320-f829-e4155c0d2130"] }),
    /Mixes GPU indices and UUIDs/,
  );
});

test("buildLaunch refuses relative paths and unusable interpreters", () => {
  assert.throws(() => buildLaunch({ ...base, file: "train.py", deviceIds: ["0"] }), /Not an absolute file path/);
  assert.throws(() => buildLaunch({ ...base, cwd: ".", deviceIds: ["0"] }), /Not an absolute folder path/);
  assert.throws(() => buildLaunch({ ...base, interpreter: " ", deviceIds: ["0"] }), /Not a usable Python interpreter/);
  assert.throws(() => buildLaunch({ ...base, interpreter: "python\nrm", deviceIds: ["0"] }), LaunchError);
});

test("describeExit: success, failure, unknown", () => {
  assert.deepEqual(describeExit("t.py on GPU 1", 0), { ok: true, message: "t.py on GPU 1: finished (exit code 0)." });
  assert.deepEqual(describeExit("t.py on GPU 1", 3), { ok: false, message: "t.py on GPU 1: failed with exit code 3." });
  assert.equal(describeExit("t.py on GPU 1", undefined).ok, false);
});
