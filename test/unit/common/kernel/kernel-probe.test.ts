/**
 * The running-kernel probe (common/src/kernel/probe.ts, issue 42 item 2's core) in a real Jupyter
 * kernel (Debian's ipykernel and jupyter_client): without torch it reports nothing imported; with
 * torch imported (Debian's python3-torch, a CPU build) it reports torch imported and CUDA not
 * initialised, and leaves CUDA uninitialised, imports nothing and leaves no name behind. The parser
 * takes only the probe's shape.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { installKernel } from "../../../../common/src/kernel/kernelspec";
import {
  cudaInitialised,
  KERNEL_PROBE_SOURCE,
  parseKernelProbe,
  PROBE_MARKER,
} from "../../../../common/src/kernel/probe";
import { kernelEnvironmentOf } from "../../../../common/src/kernel/pythonProbe";
import { factsOfProbe } from "../../../../common/src/kernel/runningKernel";
import { readKernelStarts } from "../../../../common/src/kernel/startRecord";

const python = ["/usr/bin/python3", "python3"].find(
  (p) => spawnSync(p, ["-c", "import ipykernel, jupyter_client"], { timeout: 30_000, stdio: "ignore" }).status === 0,
);
const skip = python
  ? false
  : "no python3 with ipykernel and jupyter_client (Debian: apt-get install python3-ipykernel python3-jupyter-client)";
const hasTorch =
  python !== undefined && spawnSync(python, ["-c", "import torch"], { timeout: 60_000, stdio: "ignore" }).status === 0;

/** Starts kernel argv[1], runs each cell of the JSON list argv[2] (no history), prints the list of their stdout texts as JSON. */
const DRIVER = `import json, sys
from jupyter_client.manager import KernelManager
km = KernelManager(kernel_name=sys.argv[1])
km.start_kernel()
kc = km.client()
kc.start_channels()
outs = []
try:
    kc.wait_for_ready(timeout=90)
    for code in json.loads(sys.argv[2]):
        out = []
        hook = lambda m: out.append(m["content"].get("text", "")) if m["msg_type"] == "stream" and m["content"].get("name") == "stdout" else None
        reply = kc.execute_interactive(code, timeout=120, store_history=False, output_hook=hook)
        assert reply["content"]["status"] == "ok", reply["content"]
        outs.append("".join(out))
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
print(json.dumps(outs))
`;

/** What the kernel's own sys.modules and globals say after the probe: names that would show a side effect. */
const AFTER =
  "import sys; print(sorted(k for k in ('torch', 'jax', 'tensorflow', 'cupy') if k in sys.modules), '__gpu_pilot_probe' in globals())";

/** The kernelspec folder of the last {@link runCells}. */
let lastKernelDir = "";

async function runCells(cells: string[]): Promise<string[]> {
  const { execa } = await import("execa");
  const dir = mkdtempSync(join(tmpdir(), "gp-probe-"));
  const env = { ...process.env, JUPYTER_DATA_DIR: join(dir, "data"), JUPYTER_RUNTIME_DIR: join(dir, "runtime") };
  lastKernelDir = installKernel({
    dataDir: env.JUPYTER_DATA_DIR,
    name: "gp-probe",
    env: await kernelEnvironmentOf(python!),
    selection: { kind: "pinned", devices: ["1"], vendor: "nvidia" },
  }).dir;
  const r = await execa(python!, ["-c", DRIVER, "gp-probe", JSON.stringify(cells)], {
    env,
    extendEnv: false,
    timeout: 240_000,
    maxBuffer: 1024 * 1024,
    stdin: "ignore",
    reject: false,
  });
  assert.equal(r.exitCode, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as string[];
}

test(
  "probe in a real kernel without torch: nothing imported, the GPU Pilot launcher's variables seen, no trace left",
  { skip, timeout: 300_000 },
  async () => {
    const [probeOut, after] = await runCells([KERNEL_PROBE_SOURCE, AFTER]);
    const p = parseKernelProbe(probeOut);
    assert.ok(p, probeOut);
    assert.deepEqual(p.env, {
      CUDA_VISIBLE_DEVICES: "1",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      ROCR_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      GPU_PILOT_KERNEL_DEVICES: "1",
    });
    for (const f of ["torch", "jax", "tensorflow", "cupy"] as const)
      assert.deepEqual(p.frameworks[f], { imported: false, initialised: false, devices: null }, f);
    assert.equal(cudaInitialised(p), false);
    assert.equal(after.trim(), "[] False");
    // What the editor makes of it (the status bar, gpuPilot/runningKernel), and the launcher's record of this start.
    assert.deepEqual(factsOfProbe(p), {
      initialisedBy: [],
      cudaVisibleDevices: "1",
      cudaDeviceOrder: "PCI_BUS_ID",
      rocrVisibleDevices: null,
      launcherDevices: "1",
      pid: p.pid,
    });
    assert.deepEqual(
      readKernelStarts(lastKernelDir).map((s) => [s.applied, s.variable, s.visible]),
      [["1", "CUDA_VISIBLE_DEVICES", "1"]],
      "the record of the kernel started (its process is gone: a later start prunes it)",
    );
    assert.equal(readKernelStarts(lastKernelDir)[0].pid, p.pid, "the launcher's pid is the kernel's (execve)");
  },
);

test(
  "probe in a real kernel with torch imported (CPU build): torch imported, CUDA not initialised, and still not after the probe",
  {
    skip:
      skip ||
      (hasTorch ? false : "torch is not installed for that interpreter (Debian: apt-get install python3-torch)"),
    timeout: 300_000,
  },
  async () => {
    const [, probeOut, after, still] = await runCells([
      "import torch",
      KERNEL_PROBE_SOURCE,
      AFTER,
      "print(torch.cuda.is_initialized())",
    ]);
    const p = parseKernelProbe(probeOut);
    assert.ok(p, probeOut);
    assert.deepEqual(p.frameworks.torch, { imported: true, initialised: false, devices: null });
    assert.deepEqual(p.frameworks.jax, { imported: false, initialised: false, devices: null });
    assert.equal(cudaInitialised(p), false);
    assert.equal(after.trim(), "['torch'] False");
    assert.equal(still.trim(), "False");
  },
);

test("parser: the probe's line among other output; anything else is no report", () => {
  const ok = {
    pid: 7,
    env: { CUDA_VISIBLE_DEVICES: "1" },
    frameworks: {
      torch: { imported: true, initialised: true, devices: 2, current: 0 },
      jax: { imported: false, initialised: false, devices: null },
      tensorflow: { imported: true, initialised: false, devices: null },
      cupy: { imported: true, initialised: null, devices: null },
    },
  };
  const p = parseKernelProbe(`noise\n${PROBE_MARKER}${JSON.stringify(ok)}\n`);
  assert.deepEqual(p, ok);
  assert.equal(cudaInitialised(p!), true);
  assert.equal(parseKernelProbe("nothing"), undefined);
  assert.equal(parseKernelProbe(`${PROBE_MARKER}{`), undefined);
  assert.equal(parseKernelProbe(`${PROBE_MARKER}${JSON.stringify({ ...ok, pid: "7" })}`), undefined);
  assert.equal(
    parseKernelProbe(`${PROBE_MARKER}${JSON.stringify({ ...ok, frameworks: { ...ok.frameworks, cupy: undefined } })}`),
    undefined,
  );
  assert.equal(
    parseKernelProbe(
      `${PROBE_MARKER}${JSON.stringify({ ...ok, frameworks: { ...ok.frameworks, torch: { imported: true, initialised: "yes", devices: null } } })}`,
    ),
    undefined,
  );
  assert.equal(
    parseKernelProbe(`${PROBE_MARKER}${JSON.stringify({ ...ok, env: { CUDA_VISIBLE_DEVICES: 1 } })}`),
    undefined,
  );
});
