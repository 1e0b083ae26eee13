// Tree/quick-pick text for the captured H200s, and the language server's inventory params.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseComputeApps, parseQueryGpu, type Gpu } from "../../../../common/src/gpu/nvidiaSmi";
import {
  appLabel,
  appsOf,
  escapeMarkdown,
  gpuDescription,
  gpuLabel,
  gpuTooltipMarkdown,
  loadLevel,
  processRow,
  processUser,
  programName,
  PROGRAM_CHARS,
  processTooltipMarkdown,
  programCommand,
  rowsShowTemperature,
  toInventoryParams,
  UNKNOWN_USER,
} from "../../../../client/src/gpu/present";
import { ROOT } from "../../support/root";

const FIXTURES = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2");
const gpus = parseQueryGpu(readFileSync(join(FIXTURES, "query_gpu_nounits.csv"), "utf8")).rows;
const apps = parseComputeApps(readFileSync(join(FIXTURES, "query_apps_nounits.csv"), "utf8")).rows;

test("labels and descriptions of the captured GPUs", () => {
  assert.equal(gpuLabel(gpus[0]), "GPU 0: NVIDIA H200");
  assert.equal(gpuDescription(gpus[0]), "0% · 0.0/140.4 GiB · 35°C");
  assert.equal(gpuDescription(gpus[1]), "0% · 0.0/140.4 GiB · 36°C");
  assert.equal(
    gpuDescription({ ...gpus[0], utilizationGpuPercent: 12, memoryUsedMiB: 3389 }),
    "12% · 3.3/140.4 GiB · 35°C",
  );
  const unknown: Gpu = { ...gpus[0], utilizationGpuPercent: null, memoryUsedMiB: null, temperatureC: null };
  assert.equal(gpuDescription(unknown), "?% · ?/140.4 GiB · ?°C");
});

test("the tree's rows leave the temperature out on a machine with a GPU 10 or more (the label takes a second digit)", () => {
  assert.equal(gpuDescription(gpus[0], false), "0% · 0.0/140.4 GiB");
  assert.equal(rowsShowTemperature(gpus), true);
  const sixteen = Array.from({ length: 16 }, (_, index) => ({ index }));
  assert.equal(rowsShowTemperature(sixteen.slice(0, 10)), true, "GPU 0 to 9");
  assert.equal(rowsShowTemperature(sixteen), false, "GPU 0 to 15");
  assert.equal(
    rowsShowTemperature([{ index: 0 }, { index: 12 }]),
    false,
    "the index makes the label longer, not the count",
  );
});

test("processes belong to their GPU by UUID", () => {
  assert.deepEqual(
    appsOf(gpus[0], apps).map((a) => a.pid),
    [582],
  );
  assert.deepEqual(appsOf(gpus[1], apps), []);
  assert.equal(appLabel(apps[0]), "pid 582 · python3 · 3.3 GiB");
  assert.equal(appLabel({ ...apps[0], usedMemoryMiB: null }), "pid 582 · python3 · ?");
});

test("loadLevel: the larger of utilization and memory use", () => {
  assert.equal(loadLevel(gpus[0]), "low");
  assert.equal(loadLevel({ ...gpus[0], utilizationGpuPercent: 55 }), "medium");
  assert.equal(loadLevel({ ...gpus[0], memoryUsedMiB: 140000 }), "high");
  assert.equal(loadLevel({ ...gpus[0], utilizationGpuPercent: null, memoryUsedMiB: null }), "unknown");
});

test("tooltip lists UUID, bus id, power with units, and the processes", () => {
  const md = gpuTooltipMarkdown(gpus[0], apps);
  assert.match(md, /\| UUID \| `GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f` \|/);
  assert.match(md, /\| PCI bus id \| `00000000:00:06\.0` \|/);
  assert.match(md, /\| Power \| 109\/700 W \(draw\/cap\) \|/);
  assert.match(md, /\| Fan \| n\/a \|/);
  assert.match(md, /\| Memory used \| 0 MiB of 140\.4 GiB \(139\.8 GiB free\) \|/);
  assert.match(
    md,
    /\| Memory reserved \| 615 MiB by the NVIDIA driver and firmware \(nvidia-smi memory\.reserved: total − used − free\) \|/,
    "used + free is 615 MiB short of the total: the tooltip says where it went",
  );
  assert.match(md, /Compute processes: 582 python3 \(3\.3 GiB\)/);
  assert.match(gpuTooltipMarkdown(gpus[1], apps), /No compute processes\./);
  assert.equal(escapeMarkdown("a_b*[c](d)"), "a\\_b\\*\\[c\\]\\(d\\)");
});

test("toInventoryParams: the protocol shape, null GPUs when nvidia-smi failed", () => {
  assert.deepEqual(toInventoryParams(gpus, ["1"]), {
    gpus: [
      {
        index: 0,
        uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
        name: "NVIDIA H200",
        pciBusId: "00000000:00:06.0",
        memoryTotalMiB: 143771,
        memoryFreeMiB: 143156,
      },
      {
        index: 1,
        uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130",
        name: "NVIDIA H200",
        pciBusId: "00000000:00:07.0",
        memoryTotalMiB: 143771,
        memoryFreeMiB: 143156,
      },
    ],
    selection: ["1"],
  });
  assert.deepEqual(toInventoryParams(null, []), { gpus: null, selection: [] });
});

test("process rows lead with pid and program, whole; memory and user next; the arguments last, where a 300 px side bar cuts", () => {
  const app = {
    gpuUuid: gpus[0].uuid,
    gpuBusId: null,
    pid: 6001,
    processName: "/opt/conda/bin/python",
    usedMemoryMiB: 140544,
  };
  const unknown = {
    pid: 6001,
    uid: null,
    user: "unknown",
    // as procinfo.ts reads a pid it cannot see: nvidia-smi's name, no argv
    commandLine: "/opt/conda/bin/python",
    argv: [],
    own: false,
    workspaceRun: false,
    note: "pid 6001 is not visible in /proc",
  };
  const row = processRow(app, unknown);
  assert.equal(row.description, "137.3 GiB", "an unknown user is left out of the row (the tooltip says why)");
  assert.equal(row.label, "6001 python", "the program without its directory");
  // The 8-GPU replay's jupyter kernel: the label was cut to "7007 jupyter-ker…" to leave room for the
  // description, then the description to "812 MiB · unkn…" at the default 300 px side bar.
  const kernel = { ...app, pid: 7007, processName: "jupyter-kernel", usedMemoryMiB: 812 };
  const kernelRow = processRow(kernel, { ...unknown, pid: 7007, commandLine: "jupyter-kernel" });
  assert.deepEqual(kernelRow, { label: "7007 jupyter-kernel", description: "812 MiB" });
  assert.equal(processUser({ ...unknown }), UNKNOWN_USER, "the dashboard and the picker still say unknown");
  assert.match(
    processTooltipMarkdown(kernel, { ...unknown, pid: 7007, commandLine: "jupyter-kernel" }, gpus[0]),
    /\| User \| unknown \|/,
    "the tooltip keeps the user",
  );
  assert.deepEqual(processRow(kernel, undefined).description, "812 MiB · …", "not read yet: the placeholder stays");
  // With /proc's argv: the program in the label, its arguments after memory, user and the extras.
  const argv = ["/usr/bin/python3.11", "-m", "torch.distributed.run", "--nproc_per_node=8", "train.py"];
  const own = { ...unknown, uid: 1000, user: "alice", commandLine: argv.join(" "), argv, note: undefined };
  assert.deepEqual(processRow(app, own, ["idle 5 min"]), {
    label: "6001 python3.11",
    description: "137.3 GiB · alice · idle 5 min · -m torch.distributed.run --nproc_per_node=8 train.py",
  });
  const long = processRow({ ...app, processName: "/opt/x/a-training-binary-with-a-very-long-name" }, undefined);
  assert.equal(long.label, "6001 a-training-binary-with-…");
  assert.equal(long.label.length, "6001 ".length + PROGRAM_CHARS);
  assert.equal(programName("/usr/bin/python3.11"), "python3.11");
  assert.equal(programCommand("/usr/bin/python3.11 a.py"), "python3.11 a.py");
  assert.equal(programCommand("python3"), "python3");
  assert.match(processTooltipMarkdown(app, unknown, gpus[0]), /^User unknown: pid 6001 is not visible in \/proc\.$/m);
});
