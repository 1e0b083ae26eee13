// Parsers of nvidia-smi's CSV query output, on real output captured from 2 x H200
// (test/fixtures/nvidia-smi/h200x2, copied unchanged from the shared fixtures).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  describeExitCode,
  isPlaceholder,
  parseComputeApps,
  parseDeviceError,
  parseListGpus,
  parseQueryGpu,
  QUERY_APPS_ARGS,
  QUERY_APPS_FIELDS,
  QUERY_GPU_ARGS,
  QUERY_GPU_FIELDS,
} from "../../../../common/src/gpu/nvidiaSmi";
import { ROOT } from "../../support/root";

const FIXTURES = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

test("the GPU query asks for exactly the fields of the captured query_gpu_nounits.csv", () => {
  const readme = fixture("README.md");
  const captured = /`nvidia-smi --query-gpu=([^ ]+) --format=csv`/.exec(readme);
  assert.ok(captured, "README names the captured query");
  assert.equal(captured[1], QUERY_GPU_FIELDS.join(","));
  assert.deepEqual(QUERY_GPU_ARGS, [`--query-gpu=${captured[1]}`, "--format=csv,noheader,nounits"]);
  assert.deepEqual(QUERY_APPS_ARGS, [
    "--query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_memory",
    "--format=csv,noheader,nounits",
  ]);
  assert.equal(QUERY_APPS_FIELDS.length, 5);
});

test("parseQueryGpu reads both H200s with exact values", () => {
  const { rows, problems } = parseQueryGpu(fixture("query_gpu_nounits.csv"));
  assert.deepEqual(problems, []);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0], {
    index: 0,
    uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:06.0",
    driverVersion: "580.159.04",
    memoryTotalMiB: 143771,
    memoryUsedMiB: 0,
    memoryFreeMiB: 143156,
    utilizationGpuPercent: 0,
    utilizationMemoryPercent: 0,
    temperatureC: 35,
    powerDrawW: 109.44,
    powerLimitW: 700,
    fanSpeedPercent: null,
    computeMode: "Default",
    migMode: "Disabled",
    persistenceMode: "Enabled",
    clockSmMHz: 435,
    clockMaxSmMHz: 1980,
    pstate: "P0",
  });
  assert.deepEqual(rows[1], {
    index: 1,
    uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:07.0",
    driverVersion: "580.159.04",
    memoryTotalMiB: 143771,
    memoryUsedMiB: 0,
    memoryFreeMiB: 143156,
    utilizationGpuPercent: 0,
    utilizationMemoryPercent: 0,
    temperatureC: 36,
    powerDrawW: 100.99,
    powerLimitW: 700,
    fanSpeedPercent: null,
    computeMode: "Default",
    migMode: "Disabled",
    persistenceMode: "Enabled",
    clockSmMHz: 345,
    clockMaxSmMHz: 1980,
    pstate: "P0",
  });
});

test("the GPU list agrees with nvidia-smi -L", () => {
  const { rows } = parseQueryGpu(fixture("query_gpu_nounits.csv"));
  const listed = fixture("nvsmi_L.txt")
    .trim()
    .split("\n")
    .map((l) => {
      const m = /^GPU (\d+): (.+) \(UUID: (GPU-[0-9a-f-]+)\)$/.exec(l);
      assert.ok(m, l);
      return { index: Number(m[1]), name: m[2], uuid: m[3] };
    });
  assert.deepEqual(
    rows.map((g) => ({ index: g.index, name: g.name, uuid: g.uuid })),
    listed,
  );
});

test("no field is ever NaN: placeholders become null", () => {
  const line =
    "0, GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, NVIDIA H200, 00000000:00:06.0, [N/A], [N/A], [Not Supported], " +
    "[Unknown Error], [GPU is lost], [Insufficient Permissions], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]";
  const { rows, problems } = parseQueryGpu(line);
  assert.deepEqual(problems, []);
  const gpu = rows[0];
  for (const [key, value] of Object.entries(gpu)) {
    assert.ok(!Number.isNaN(value), `${key} is NaN`);
    if (!["index", "uuid", "name", "pciBusId", "lost"].includes(key)) assert.equal(value, null, key);
  }
  assert.equal(gpu.lost, true, "a [GPU is lost] field marks the GPU lost");
  assert.equal(
    parseQueryGpu(fixture("query_gpu_nounits.csv")).rows[0].lost,
    undefined,
    "a healthy GPU has no lost flag",
  );
  assert.ok(isPlaceholder("[N/A]"));
  assert.ok(isPlaceholder("[GPU is lost]"));
  assert.ok(isPlaceholder("N/A"));
  assert.ok(!isPlaceholder("0"));
});

test("the units variant is rejected with a clear reason, line by line", () => {
  const { rows, problems } = parseQueryGpu(fixture("query_gpu_units.csv"));
  assert.equal(rows.length, 0);
  assert.equal(problems.length, 3);
  assert.equal(problems[0].line, 1);
  assert.match(problems[0].reason, /header line.*noheader,nounits/);
  assert.equal(problems[1].line, 2);
  assert.match(
    problems[1].reason,
    /memory\.total is "143771 MiB": units in the output; query with --format=csv,noheader,nounits/,
  );
  assert.equal(problems[2].line, 3);

  const apps = parseComputeApps(fixture("query_apps_units.csv"));
  assert.equal(apps.rows.length, 0);
  assert.match(apps.problems[0].reason, /header line/);
  assert.match(apps.problems[1].reason, /used_memory is "3380 MiB": units in the output/);
});

test("garbage lines are reported, good lines are kept", () => {
  const good = fixture("query_gpu_nounits.csv").trim().split("\n");
  const csv = [
    good[0],
    "Unable to determine the device handle for GPU0000:00:08.0: Unknown Error",
    "2, GPU-x, NVIDIA H200, 00000000:00:08.0, 580.159.04, lots, 0, 0, 0, 0, 30, 100, 700, [N/A], Default, Disabled, Enabled, 1, 1, P0",
    "three, GPU-y, NVIDIA H200, 00000000:00:09.0, 580.159.04, 1, 0, 0, 0, 0, 30, 100, 700, [N/A], Default, Disabled, Enabled, 1, 1, P0",
    "4, [GPU is lost], [GPU is lost], 00000000:00:0A.0, [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost]",
    "",
    good[1],
  ].join("\r\n");
  const { rows, problems } = parseQueryGpu(csv);
  assert.deepEqual(
    rows.map((g) => g.index),
    [0, 1],
  );
  assert.deepEqual(
    problems.map((p) => [p.line, p.reason]),
    [
      [2, "GPU 0000:00:08.0: Unknown Error"],
      [3, 'memory.total is "lots", expected a number in MiB'],
      [4, 'index is "three", expected a whole number'],
      [5, 'uuid is "[GPU is lost]"'],
    ],
  );
  assert.equal(problems[0].text, "Unable to determine the device handle for GPU0000:00:08.0: Unknown Error");
  assert.deepEqual(
    problems[0].device,
    { busId: "0000:00:08.0", message: "Unknown Error" },
    "nvidia-smi's per-device error line is recognised",
  );
});

test("empty output parses to nothing, without problems", () => {
  assert.deepEqual(parseQueryGpu(""), { rows: [], problems: [] });
  assert.deepEqual(parseQueryGpu("\n\n"), { rows: [], problems: [] });
  assert.deepEqual(parseComputeApps(""), { rows: [], problems: [] });
});

test("parseComputeApps reads the captured python3 process on GPU 0", () => {
  const { rows, problems } = parseComputeApps(fixture("query_apps_nounits.csv"));
  assert.deepEqual(problems, []);
  assert.deepEqual(rows, [
    {
      gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
      gpuBusId: "00000000:00:06.0",
      pid: 582,
      processName: "python3",
      usedMemoryMiB: 3380,
    },
  ]);
  const gpus = parseQueryGpu(fixture("query_gpu_nounits.csv")).rows;
  assert.equal(gpus.find((g) => g.uuid === rows[0].gpuUuid)?.index, 0);
});

test("parseComputeApps: a process name containing ', ' stays whole; [N/A] memory is null", () => {
  const csv = [
    "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, 9001, /opt/my, odd, dir/python, 12",
    "GPU-6486822f-842c-1320-f829-e4155c0d2130, 00000000:00:07.0, 9002, python3, [N/A]",
  ].join("\n");
  const { rows, problems } = parseComputeApps(csv);
  assert.deepEqual(problems, []);
  assert.equal(rows[0].processName, "/opt/my, odd, dir/python");
  assert.equal(rows[0].usedMemoryMiB, 12);
  assert.equal(rows[1].usedMemoryMiB, null);
});

test("parseComputeApps reports bad lines and skips 'No running processes found'", () => {
  const csv = [
    "No running processes found",
    "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, pid?, python3, 5",
    "garbage",
    "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, 582, python3, 3380",
  ].join("\n");
  const { rows, problems } = parseComputeApps(csv);
  assert.deepEqual(
    rows.map((a) => a.pid),
    [582],
  );
  assert.deepEqual(
    problems.map((p) => [p.line, p.reason]),
    [
      [2, 'pid is "pid?", expected a whole number'],
      [3, "expected 5 fields, found 1"],
    ],
  );
});

test("describeExitCode gives a human sentence for each documented exit code", () => {
  assert.match(describeExitCode(2), /invalid argument/);
  assert.match(describeExitCode(3), /not available/);
  assert.match(describeExitCode(4), /permission/);
  assert.match(describeExitCode(6), /no devices were found/);
  assert.match(describeExitCode(8), /power cables/);
  assert.match(describeExitCode(9), /driver is not loaded/);
  assert.match(describeExitCode(12), /NVML shared library/);
  assert.match(describeExitCode(15), /fallen off the bus/);
  assert.match(describeExitCode(255), /internal or driver error/);
  assert.match(describeExitCode(42), /exit code 42/);
});

test("parseListGpus: the captured -L, and MIG device lines under their GPU (constructed from NVIDIA's documented format)", () => {
  const plain = parseListGpus(fixture("nvsmi_L.txt"));
  assert.deepEqual(
    plain.gpus.map((g) => [g.index, g.name, g.uuid]),
    [
      [0, "NVIDIA H200", "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f"],
      [1, "NVIDIA H200", "GPU-6486822f-842c-1320-f829-e4155c0d2130"],
    ],
  );
  assert.deepEqual(plain.mig, []);
  assert.deepEqual(plain.problems, []);
  const mig = parseListGpus(
    readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2-mig", "nvsmi_L.txt"), "utf8"),
  );
  assert.deepEqual(mig.mig, [
    {
      gpuIndex: 0,
      gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
      profile: "3g.71gb",
      device: 0,
      uuid: "MIG-4f1c2a9e-7b3d-5e8a-9c41-2d6b8e0f1a37",
    },
    {
      gpuIndex: 0,
      gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
      profile: "2g.35gb",
      device: 1,
      uuid: "MIG-a83e5d10-2c6f-5b94-8e17-6f0d3c9b2e58",
    },
    {
      gpuIndex: 0,
      gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
      profile: "1g.18gb",
      device: 2,
      uuid: "MIG-0b9d7e42-5a1c-58f3-b6e2-91c4d7a3f086",
    },
  ]);
  // The line shape of the brief / NVIDIA's guide without padding, and garbage
  const odd = parseListGpus(
    "GPU 0: A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n  MIG 1g.5gb Device 0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)\nwhat is this\n",
  );
  assert.deepEqual(
    odd.mig.map((m) => [m.profile, m.device]),
    [["1g.5gb", 0]],
  );
  assert.deepEqual(
    odd.problems.map((p) => [p.line, p.reason]),
    [[3, "not a GPU or MIG device line"]],
  );
  const orphan = parseListGpus("  MIG 1g.18gb Device 0: (UUID: MIG-0b9d7e42-5a1c-58f3-b6e2-91c4d7a3f086)\n");
  assert.equal(orphan.problems[0].reason, "MIG device line before any GPU line");
});

test("parseDeviceError: nvidia-smi's per-device error line, with and without the space", () => {
  assert.deepEqual(
    parseDeviceError(
      "Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system to recover this GPU",
    ),
    {
      busId: "0000:03:00.0",
      message: "GPU is lost. Reboot the system to recover this GPU",
    },
  );
  assert.deepEqual(parseDeviceError("Unable to determine the device handle for GPU0000:17:00.0: Unknown Error"), {
    busId: "0000:17:00.0",
    message: "Unknown Error",
  });
  assert.equal(parseDeviceError("Unable to determine the device handle for GPU 1"), undefined);
  const faults = parseQueryGpu(
    readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "faults", "lost_query_gpu_nounits.csv"), "utf8"),
  );
  assert.deepEqual(
    faults.rows.map((g) => g.index),
    [0],
  );
  assert.equal(faults.problems[0].reason, "GPU 00000000:00:07.0: GPU is lost. Reboot the system to recover this GPU");
});

test("the constructed [N/A] / [Not Supported] fixture parses to nulls, never NaN, and marks the lost GPU", () => {
  const { rows, problems } = parseQueryGpu(
    readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "faults", "na_query_gpu_nounits.csv"), "utf8"),
  );
  assert.deepEqual(problems, []);
  assert.equal(rows[0].memoryUsedMiB, null);
  assert.equal(rows[0].temperatureC, null);
  assert.equal(rows[0].powerDrawW, null);
  assert.equal(rows[0].pstate, null);
  assert.equal(rows[0].lost, undefined);
  assert.equal(rows[1].lost, true);
  assert.equal(rows[1].memoryUsedMiB, 4);
  for (const g of rows) for (const v of Object.values(g)) assert.ok(!Number.isNaN(v));
});
