// The GPU view on an AMD ROCm machine (issue 21): nvidia-smi is not installed, amd-smi is on PATH,
// so the monitor reads the GPUs with amd-smi (the fake in test/fixtures/bin prints published output).
import { settings, recorded } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GpuMonitor, STATE_KEY } from "../../../../client/src/gpu/monitor";
import { ROOT } from "../../support/root";

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-amd-"));
const savedPath = process.env.PATH;
test.after(() => {
  process.env.PATH = savedPath;
  rmSync(tmp, { recursive: true, force: true });
});

test("no nvidia-smi, amd-smi on PATH: the monitor's inventory comes from amd-smi, state ok", async (t) => {
  const nodeDir = dirname(process.execPath);
  if (existsSync(join(nodeDir, "nvidia-smi"))) {
    t.skip("nvidia-smi sits next to node on this machine");
    return;
  }
  symlinkSync(join(ROOT, "test", "fixtures", "bin", "amd-smi"), join(tmp, "amd-smi"));
  process.env.PATH = `${tmp}:${nodeDir}`;
  settings.clear();
  settings.set("nvidiaSmiTimeoutMs", 10_000);
  recorded.messages.length = 0;
  const monitor = new GpuMonitor({});
  try {
    await monitor.refresh();
    assert.equal(monitor.state, "ok");
    assert.equal(recorded.context.get(STATE_KEY), "ok");
    const gpus = monitor.inventory?.gpus ?? [];
    assert.deepEqual(
      gpus.map((g) => [g.index, g.name, g.memoryTotalMiB, g.utilizationGpuPercent]),
      [[0, "AMD Radeon RX 7800 XT", 16368, 2]],
    );
    assert.equal(monitor.isStreaming, false, "AMD: polled, never the nvidia-smi stream");
    assert.equal(monitor.inventory?.vendor, "amd", "the inventory says whose tool read it");
  } finally {
    monitor.dispose();
  }
});

test("no nvidia-smi and no AMD tool: the state stays missing", async () => {
  process.env.PATH = `${join(tmp, "empty")}:${dirname(process.execPath)}`;
  settings.clear();
  const monitor = new GpuMonitor({});
  try {
    await monitor.refresh();
    assert.equal(monitor.state, "missing");
  } finally {
    monitor.dispose();
  }
});
