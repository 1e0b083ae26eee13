// The one units policy of the GPU side (common/src/gpu/units.ts): GiB with one decimal from 1 GiB
// up, MiB below; `?` for what nvidia-smi did not report; one free-memory number for tree and picker.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseQueryGpu } from "../../../../common/src/gpu/nvidiaSmi";
import {
  fraction,
  formatFree,
  formatMemoryPair,
  formatMiB,
  formatPercent,
  formatPower,
  formatTemperature,
  freeMemoryMiB,
  levelOf,
  memoryBreakdown,
  reservedMemoryMiB,
  shortGpuName,
} from "../../../../common/src/gpu/units";
import { ROOT } from "../../support/root";

const gpus = parseQueryGpu(
  readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_gpu_nounits.csv"), "utf8"),
).rows;

test("formatMiB: MiB below 1 GiB, GiB with one decimal from 1 GiB up, ? when unknown", () => {
  assert.equal(formatMiB(0), "0 MiB");
  assert.equal(formatMiB(4), "4 MiB");
  assert.equal(formatMiB(1023), "1023 MiB");
  assert.equal(formatMiB(1024), "1.0 GiB");
  assert.equal(formatMiB(3380), "3.3 GiB");
  assert.equal(formatMiB(143771), "140.4 GiB");
  assert.equal(formatMiB(143156), "139.8 GiB");
  // One decimal below 1000 GiB and above: the dashboard's free memory and the notebook hover's alike.
  assert.equal(formatMiB(139776), "136.5 GiB");
  assert.equal(formatMiB(999.94 * 1024), "999.9 GiB");
  assert.equal(formatMiB(1123.2 * 1024), "1123.2 GiB");
  assert.equal(formatMiB(null), "?");
  assert.equal(formatMiB(Number.NaN), "?");
  assert.equal(formatMiB(-5), "0 MiB");
});

test("formatMemoryPair: the pair in its total's unit (the tree's rows keep their length at 300 px)", () => {
  assert.equal(formatMemoryPair(3389, 143771), "3.3/140.4 GiB");
  assert.equal(formatMemoryPair(0, 143771), "0.0/140.4 GiB");
  assert.equal(formatMemoryPair(812, 143771), "0.8/140.4 GiB");
  // GPU 6 of the 8-GPU fixture: "13% · 915 MiB/140.4 GiB · 38°C" was cut at 300 px.
  assert.equal(formatMemoryPair(915, 143771), "0.9/140.4 GiB");
  assert.equal(formatMemoryPair(4, 143771), "0.0/140.4 GiB");
  assert.equal(formatMemoryPair(12, 900), "12/900 MiB");
  assert.equal(formatMemoryPair(null, 143771), "?/140.4 GiB");
  assert.equal(formatMemoryPair(3389, null), "3.3 GiB/?");
  assert.equal(formatMemoryPair(null, null), "?/?");
});

test("percent, temperature, power: whole numbers, ? when unknown", () => {
  assert.equal(formatPercent(12.4), "12%");
  assert.equal(formatPercent(null), "?%");
  assert.equal(formatTemperature(35), "35°C");
  assert.equal(formatTemperature(null), "?°C");
  assert.equal(formatPower(109.43, 700), "109/700 W");
  assert.equal(formatPower(null, 700), "?/700 W");
});

test("free memory is nvidia-smi's memory.free, never total - used (the captured H200: 143156, not 143771 - 0)", () => {
  assert.equal(gpus[0].memoryTotalMiB, 143771);
  assert.equal(gpus[0].memoryUsedMiB, 0);
  assert.equal(freeMemoryMiB(gpus[0]), 143156);
  assert.equal(formatFree(gpus[0]), "139.8 GiB free");
  assert.equal(formatFree({ memoryFreeMiB: null }), "? free");
});

test("fraction, levels and short names", () => {
  assert.equal(fraction(3389, 143771)?.toFixed(4), "0.0236");
  assert.equal(fraction(5, 0), null);
  assert.equal(fraction(200, 100), 1);
  assert.equal(fraction(null, 100), null);
  assert.deepEqual(
    [levelOf(0), levelOf(49.9), levelOf(50), levelOf(89), levelOf(90), levelOf(null)],
    ["low", "low", "medium", "medium", "high", "unknown"],
  );
  assert.equal(shortGpuName("NVIDIA H200"), "H200");
  assert.equal(shortGpuName("Tesla V100-SXM2-16GB"), "Tesla V100-SXM2-16GB");
});

test("reserved memory (issue 45): total − used − free, as nvidia-smi's memory.reserved of the same capture", () => {
  // The recorded H200s (query_gpu_nounits.csv): 143771 total, 0 used, 143156 free.
  assert.deepEqual(
    gpus.map((g) => reservedMemoryMiB(g)),
    [615, 615],
  );
  // The same machine's `nvidia-smi -q -x` prints the field itself (fb_memory_usage/reserved); each
  // field is rounded on its own, so the difference may be a MiB or two off it.
  for (const xml of ["nvsmi_qx.xml", "nvsmi_qx_busy.xml"]) {
    const text = readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", xml), "utf8");
    for (const block of text.match(/<fb_memory_usage>[\s\S]*?<\/fb_memory_usage>/g) ?? []) {
      const mib = (tag: string) => Number(new RegExp(`<${tag}>(\\d+) MiB</${tag}>`).exec(block)?.[1]);
      const derived = reservedMemoryMiB({
        memoryTotalMiB: mib("total"),
        memoryUsedMiB: mib("used"),
        memoryFreeMiB: mib("free"),
      });
      assert.equal(mib("reserved"), 616, `${xml}: nvidia-smi's reserved`);
      assert.ok(
        derived !== null && Math.abs(derived - mib("reserved")) <= 2,
        `${xml}: ${derived} vs ${mib("reserved")}`,
      );
    }
  }
  assert.equal(reservedMemoryMiB({ memoryTotalMiB: 100, memoryUsedMiB: null, memoryFreeMiB: 50 }), null);
  assert.equal(
    reservedMemoryMiB({ memoryTotalMiB: 100, memoryUsedMiB: 60, memoryFreeMiB: 50 }),
    null,
    "negative: not a reserve",
  );
});

test("memoryBreakdown: used + free + reserved = total, in words for the tooltips", () => {
  assert.equal(
    memoryBreakdown({ memoryTotalMiB: 143771, memoryUsedMiB: 3389, memoryFreeMiB: 139767 }),
    "3.3 GiB used + 136.5 GiB free + 615 MiB reserved by the NVIDIA driver and firmware (nvidia-smi memory.reserved) = 140.4 GiB total",
  );
  assert.equal(
    memoryBreakdown({ memoryTotalMiB: 143771, memoryUsedMiB: null, memoryFreeMiB: 139767 }),
    "? used, 136.5 GiB free of 140.4 GiB",
  );
});
