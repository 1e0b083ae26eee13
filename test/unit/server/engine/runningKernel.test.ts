/**
 * The notebook lint with the running kernel's state (issue 42 item 2), engine side: GPU001 from
 * what the kernel reports whatever the cells' order says, nothing when the kernel has not
 * initialised CUDA (or only a framework that does not read the variable), the static lint when the
 * state is unknown; the hover's "cuda:0" follows the kernel's own CUDA_VISIBLE_DEVICES; the
 * notification's shape check; the status bar's words.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { initEngine } from "../../../../server/src/engine/lint";
import { lintNotebook, type CellInput } from "../../../../server/src/engine/notebook";
import { analyzePython } from "../../../../server/src/engine/lint";
import { machineHover, machineModel } from "../../../../server/src/engine/machineHelp";
import {
  checkRunningKernelParams,
  factsOfProbe,
  kernelGpusText,
  type RunningKernelFacts,
} from "../../../../common/src/kernel/runningKernel";
import { parseKernelProbe, PROBE_MARKER } from "../../../../common/src/kernel/probe";

const code = (text: string): CellInput => ({ kind: "code", text });
/** Cell 0 writes CUDA_VISIBLE_DEVICES before cell 1 imports torch: statically in order. */
const CELLS = [
  code('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nos.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"'),
  code('import torch\nx = torch.zeros(2, device="cuda:0")'),
];

const kernel = (over: Partial<RunningKernelFacts> = {}): RunningKernelFacts => ({
  initialisedBy: ["torch"],
  cudaVisibleDevices: "0",
  cudaDeviceOrder: "PCI_BUS_ID",
  rocrVisibleDevices: null,
  launcherDevices: "0",
  pid: 4242,
  ...over,
});

test("a kernel that initialised CUDA: the write in the first cell gets GPU001 with the kernel's reason and a restart on its GPU", async () => {
  await initEngine();
  assert.deepEqual(
    lintNotebook(CELLS, {}).diagnostics.filter((d) => d.code === "GPU001"),
    [],
    "in order: statically fine",
  );
  const r = lintNotebook(CELLS, { runningKernel: kernel() }).diagnostics.filter((d) => d.code === "GPU001");
  // XLA_PYTHON_CLIENT_PREALLOCATE is read by JAX only: torch's CUDA does not freeze it.
  assert.equal(r.length, 1);
  const d = r[0];
  assert.equal(d.cell, 0);
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 40 } });
  assert.equal(d.severity, "error");
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set here, but it has no effect in the running kernel: CUDA was initialised there (by torch, as the kernel reports) (the kernel stays on the GPUs it started with: CUDA_VISIBLE_DEVICES=0). Restart the kernel, then run this cell before any CUDA call",
  );
  assert.deepEqual(d.kernelRestart, { variable: "CUDA_VISIBLE_DEVICES", devices: ["1"] });
});

test("JAX initialised: the XLA variable is frozen too; both frameworks are named", async () => {
  await initEngine();
  const r = lintNotebook(CELLS, {
    runningKernel: kernel({ initialisedBy: ["torch", "jax"], cudaVisibleDevices: null }),
  }).diagnostics.filter((d) => d.code === "GPU001");
  assert.deepEqual(
    r.map((d) => [d.cell, d.range.start.line]),
    [
      [0, 1],
      [0, 2],
    ],
  );
  assert.match(
    r[0].message,
    /\(by torch and JAX, as the kernel reports\) \(the kernel stays on the GPUs it started with: CUDA_VISIBLE_DEVICES=unset, every GPU\)/,
  );
  assert.match(
    r[1].message,
    /^XLA_PYTHON_CLIENT_PREALLOCATE is set here, but it has no effect in the running kernel: CUDA was initialised there \(by JAX, as the kernel reports\)\. Restart/,
  );
  assert.deepEqual(r[1].kernelRestart, { variable: "XLA_PYTHON_CLIENT_PREALLOCATE", devices: null });
});

test("a kernel that has not initialised CUDA, or no kernel state: no running-kernel finding; a static late write is reported once", async () => {
  await initEngine();
  assert.deepEqual(
    lintNotebook(CELLS, { runningKernel: kernel({ initialisedBy: [] }) }).diagnostics.filter(
      (d) => d.code === "GPU001",
    ),
    [],
  );
  const late = [code("import torch\ntorch.cuda.init()"), code('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"')];
  const stat = lintNotebook(late, {}).diagnostics.filter((d) => d.code === "GPU001");
  assert.equal(stat.length, 1);
  assert.equal(stat[0].kernelRestart, undefined, "no kernel known: nothing to restart");
  assert.match(stat[0].message, /after CUDA was initialised by/);
  const withKernel = lintNotebook(late, { runningKernel: kernel() }).diagnostics.filter((d) => d.code === "GPU001");
  assert.equal(withKernel.length, 1, "not reported twice");
  assert.match(withKernel[0].message, /after CUDA was initialised by/);
  assert.deepEqual(withKernel[0].kernelRestart, { variable: "CUDA_VISIBLE_DEVICES", devices: ["1"] });
});

test("a plain file never reads a running kernel", async () => {
  await initEngine();
  const { lintPython } = await import("../../../../server/src/engine/lint");
  const r = lintPython('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n', {
    runningKernel: kernel(),
  });
  assert.deepEqual(
    r.diagnostics.filter((d) => d.code === "GPU001"),
    [],
  );
});

test('hover on "cuda:0" in a notebook names the physical GPU of the kernel\'s CUDA_VISIBLE_DEVICES', async () => {
  await initEngine();
  const gpus = [0, 1, 2].map((i) => ({
    index: i,
    uuid: `GPU-0000000${i}-0000-0000-0000-000000000000`,
    name: "NVIDIA H100",
    pciBusId: `00000000:0${i}:00.0`,
    memoryTotalMiB: 81559,
    memoryFreeMiB: 80000,
  }));
  const text = 'import torch\nx = torch.zeros(2, device="cuda:0")\n';
  const model = analyzePython(text, {});
  try {
    const at = { line: 1, character: 28 };
    const where = (l: number) => `cell 1, line ${l + 1}`;
    const without = machineHover(machineModel(model), at, { gpus, selection: [] }, where, new Set(), true)!;
    assert.match(without.markdown, /^\*\*cuda:0 → GPU 0 · NVIDIA H100 · 00000000:00:00.0/);
    const h = machineHover(
      machineModel(model),
      at,
      { gpus, selection: [] },
      where,
      new Set(),
      true,
      kernel({ cudaVisibleDevices: "2" }),
    )!;
    assert.match(h.markdown, /^\*\*cuda:0 → GPU 2 · NVIDIA H100 · 00000000:02:00.0/);
    assert.match(
      h.markdown,
      /because the running kernel \(pid 4242\) reports CUDA_VISIBLE_DEVICES="2", and torch initialised CUDA there\./,
    );
  } finally {
    model.tree.delete();
  }
  // Bare "cuda": torch's current device as the kernel reports it (set_device(1) ran there).
  const bare = analyzePython('import torch\ny = torch.ones(1, device="cuda")\n', {});
  try {
    const h = machineHover(
      machineModel(bare),
      { line: 1, character: 27 },
      { gpus, selection: [] },
      (l) => `line ${l + 1}`,
      new Set(),
      true,
      kernel({ cudaVisibleDevices: "0,2", torchCurrent: 1 }),
    )!;
    assert.match(h.markdown, /^\*\*cuda:1 → GPU 2 · NVIDIA H100/);
    assert.match(h.markdown, /the running kernel's torch reports cuda:1/);
  } finally {
    bare.tree.delete();
  }
});

test("the notification's params are checked; probe reports become facts; the status bar's words", () => {
  const line = `${PROBE_MARKER}${JSON.stringify({
    pid: 7,
    env: {
      CUDA_VISIBLE_DEVICES: "1",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      ROCR_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      GPU_PILOT_KERNEL_DEVICES: "1",
    },
    frameworks: {
      torch: { imported: true, initialised: true, devices: 1, current: 0 },
      jax: { imported: false, initialised: false, devices: null },
      tensorflow: { imported: false, initialised: false, devices: null },
      cupy: { imported: true, initialised: null, devices: null },
    },
  })}`;
  const facts = factsOfProbe(parseKernelProbe(line)!);
  assert.deepEqual(facts, {
    initialisedBy: ["torch"],
    cudaVisibleDevices: "1",
    cudaDeviceOrder: "PCI_BUS_ID",
    rocrVisibleDevices: null,
    launcherDevices: "1",
    torchCurrent: 0,
    pid: 7,
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "file:///nb.ipynb", kernel: facts }), {
    value: { notebook: "file:///nb.ipynb", kernel: facts },
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "file:///nb.ipynb", kernel: null }), {
    value: { notebook: "file:///nb.ipynb", kernel: null },
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "", kernel: null }), {
    problem: "params.notebook must be a non-empty string (a notebook URI)",
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "x", kernel: { ...facts, initialisedBy: ["mxnet"] } }), {
    problem: "params.kernel.initialisedBy must list frameworks of torch, jax, tensorflow, cupy",
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "x", kernel: { ...facts, cudaVisibleDevices: 1 } }), {
    problem: "params.kernel.cudaVisibleDevices must be a string or null",
  });
  assert.deepEqual(checkRunningKernelParams({ notebook: "x", kernel: { ...facts, pid: "7" } }), {
    problem: "params.kernel.pid must be an integer",
  });
  assert.deepEqual(checkRunningKernelParams(null), { problem: "params must be an object" });
  assert.equal(kernelGpusText("1"), "Kernel: GPU 1");
  assert.equal(kernelGpusText("0,1"), "Kernel: GPUs 0,1");
  assert.equal(kernelGpusText(null), "Kernel: all GPUs");
  assert.equal(kernelGpusText(""), "Kernel: no GPU");
});
