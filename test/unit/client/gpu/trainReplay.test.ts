// The stand-in nvidia-smi's `train` mode (issue 45: the README's History picture from a real-length
// run): one GPU replays test/fixtures/nvidia-smi/h200-train, a real training run on an H200
// (verify/train/train.py, captured by verify/train/capture.sh), between the start and the end of
// the script that writes and removes FAKE_NVIDIA_SMI_TRAIN_FLAG.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseComputeApps, parseQueryGpu } from "../../../../common/src/gpu/nvidiaSmi";
import { parseDmon } from "../../../../client/src/gpu/dmon";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const DIR = join(ROOT, "test", "fixtures", "nvidia-smi", "h200-train");
const GPU_QUERY =
  "--query-gpu=index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,fan.speed,compute_mode,mig.mode.current,persistence_mode,clocks.sm,clocks.max.sm,pstate";

/** The capture's GPU samples: timestamp, util %, used, free, reserved MiB. */
function loop(): { at: string; util: number; used: number; free: number; reserved: number }[] {
  return readFileSync(join(DIR, "loop.csv"), "utf8")
    .trim()
    .split("\n")
    .map((l) => l.split(", "))
    .map((f) => ({ at: f[0], util: Number(f[2]), used: Number(f[3]), free: Number(f[4]), reserved: Number(f[5]) }));
}

test("the capture: a run that starts, trains and ends, with nvidia-smi's memory.reserved beside used and free", () => {
  const samples = loop();
  assert.ok(samples.length >= 140, `${samples.length} samples of 1 s`);
  const memory = readFileSync(join(DIR, "memory.csv"), "utf8");
  assert.match(memory, /NVIDIA H200, 580\.159\.04, 143771 MiB, 616 MiB, 0 MiB, 143156 MiB/);
  for (const s of samples) {
    assert.equal(s.reserved, 616, `${s.at}: the driver's reserve does not change`);
    // used + free + reserved = total, each rounded on its own by nvidia-smi
    assert.ok(Math.abs(s.used + s.free + s.reserved - 143771) <= 2, `${s.at}: ${s.used} + ${s.free} + ${s.reserved}`);
  }
  const log = readFileSync(join(DIR, "train.log"), "utf8");
  const start = Number(/ START (\d+)/.exec(log)?.[1]);
  const end = Number(/ END (\d+)/.exec(log)?.[1]);
  assert.equal(Math.round((end - start) / 1000), 104, "the run lasted 104 s");
  const at = (s: { at: string }) => Date.parse(s.at.replace(/^(\d+)\/(\d+)\/(\d+) /, "$1-$2-$3T") + "Z");
  const before = samples.filter((s) => at(s) < start);
  const during = samples.filter((s) => at(s) > start + 15_000 && at(s) < end);
  const after = samples.filter((s) => at(s) > end + 2000);
  assert.ok(before.length >= 19 && after.length >= 15, `${before.length} samples before, ${after.length} after`);
  assert.ok(
    before.every((s) => s.used === 0 && s.util === 0),
    "idle before the run",
  );
  assert.ok(
    during.every((s) => s.used === 38477),
    "the run held 37.6 GiB while it trained",
  );
  assert.ok(during.filter((s) => s.util === 100).length >= 50, "100 % while it trained");
  assert.ok(during.filter((s) => s.util === 0).length >= 10, "with pauses (the checkpoints)");
  assert.ok(
    after.every((s) => s.used === 0 && s.util === 0),
    "idle again after the run",
  );
  const dmon = parseDmon(readFileSync(join(DIR, "dmon.txt"), "utf8"));
  assert.deepEqual(dmon.problems, [], "GPU Pilot's dmon reader reads the whole capture");
  assert.ok(
    dmon.samples.some((s) => s.values.smutil === 94),
    "SM activity 94 % while it trained",
  );
});

function run(env: Record<string, string>, args: string[]): string {
  return execFileSync(FAKE, args, { env: { ...process.env, ...env }, encoding: "utf8" });
}

test("the fake's train mode: GPU 1 idle, then the run's samples from the flag's time with its pid listed, then idle", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-train-"));
  const flag = join(dir, "running");
  const env = { FAKE_NVIDIA_SMI_MODE: "spin,train", FAKE_NVIDIA_SMI_TRAIN_FLAG: flag };
  const gpu1 = () => parseQueryGpu(run(env, [GPU_QUERY, "--format=csv,noheader,nounits"])).rows[1];
  const apps = () =>
    parseComputeApps(
      run(env, [
        "--query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_memory",
        "--format=csv,noheader,nounits",
      ]),
    ).rows;
  try {
    let g = gpu1();
    assert.deepEqual([g.utilizationGpuPercent, g.memoryUsedMiB, g.memoryFreeMiB], [0, 0, 143156], "no run: idle");
    assert.deepEqual(
      apps().map((a) => a.pid),
      [582],
      "no run: only GPU 0's process",
    );
    // The run started 20 s ago: the capture's sample 20 s after the run's start.
    writeFileSync(flag, "4242\n");
    const now = Date.now() / 1000;
    utimesSync(flag, now - 20, now - 20);
    g = gpu1();
    assert.deepEqual(
      [g.utilizationGpuPercent, g.memoryUsedMiB, g.memoryFreeMiB, g.temperatureC! > 55],
      [100, 38477, 143771 - 615 - 38477, true],
      "training: 100 %, 37.6 GiB, the GPU's own 615 MiB reserve kept",
    );
    assert.deepEqual(
      apps()
        .filter((a) => a.gpuUuid === g.uuid)
        .map((a) => [a.pid, a.processName, a.usedMemoryMiB]),
      [[4242, "python3", 38468]],
      "the run's pid, with the memory nvidia-smi listed for it",
    );
    // Still running long after the capture's end: its last sample holds.
    utimesSync(flag, now - 500, now - 500);
    assert.equal(gpu1().memoryUsedMiB, 38477);
    rmSync(flag);
    assert.deepEqual([gpu1().utilizationGpuPercent, gpu1().memoryUsedMiB], [0, 0], "ended: idle again");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
