// AMD's tools parsed into the GPU view's records, on reduced copies of published output
// (test/fixtures/amd-smi/README.md gives each file's source).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { amdNumber, parseAmdSmi, parseRocmSmi } from "../../../../common/src/amdSmi/parse";
import { ROOT } from "../../support/root";

const fx = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "amd-smi", name), "utf8");

test("amd-smi metric, array form (W7700): utilisation from gfx_activity and umc_activity, the rest unknown", () => {
  const { rows, problems } = parseAmdSmi(fx("metric-usage-w7700.json"));
  assert.deepEqual(problems, []);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].index, 0);
  assert.equal(rows[0].utilizationGpuPercent, 42);
  assert.equal(rows[0].utilizationMemoryPercent, 1);
  assert.equal(rows[0].memoryTotalMiB, null);
  assert.equal(rows[0].name, "AMD GPU");
  assert.equal(rows[0].uuid, "AMD-GPU-0");
});

test("amd-smi metric + static, gpu_data form (RX 7800 XT): name, MiB, hotspot temperature, free computed", () => {
  const { rows, problems } = parseAmdSmi(fx("metric-gpu-data-rx7800xt.json"), fx("static-gpu-data-rx7800xt.json"));
  assert.deepEqual(problems, []);
  const g = rows[0];
  assert.equal(g.name, "AMD Radeon RX 7800 XT");
  assert.equal(g.memoryTotalMiB, 16368);
  assert.equal(g.memoryUsedMiB, 14569);
  assert.equal(g.memoryFreeMiB, 1799);
  assert.equal(g.utilizationGpuPercent, 2);
  assert.equal(g.temperatureC, 41);
});

test("amd-smi static + list (Phoenix3): PCI address, driver, UUID from list; a 0 W limit reads unknown", () => {
  const metric = JSON.stringify([
    {
      gpu: 0,
      power: { socket_power: { value: 20, unit: "W" } },
      clock: { gfx_0: { clk: { value: 14, unit: "MHz" }, max_clk: { value: 2482, unit: "MHz" } } },
    },
  ]);
  const { rows } = parseAmdSmi(metric, fx("static-phoenix3.json"), fx("list-phoenix3.json"));
  const g = rows[0];
  assert.equal(g.name, "Phoenix3");
  assert.equal(g.pciBusId, "0000:65:00.0");
  assert.equal(g.driverVersion, "7.0.14-17-pve");
  assert.equal(g.uuid, "00ff1900-0000-1000-8000-000000000000");
  assert.equal(g.powerDrawW, 20);
  assert.equal(g.powerLimitW, null);
  assert.equal(g.clockSmMHz, 14);
  assert.equal(g.clockMaxSmMHz, 2482);
});

test("amd-smi: every value N/A gives nulls, never NaN; usage given as a bare N/A string is fine", () => {
  const { rows, problems } = parseAmdSmi(fx("metric-watch-na.json"));
  assert.deepEqual(problems, []);
  for (const [k, v] of Object.entries(rows[0]))
    if (typeof v === "number" && k !== "index") assert.ok(!Number.isNaN(v), k);
  assert.equal(rows[0].powerDrawW, null);
  assert.equal(rows[0].clockSmMHz, null);
  assert.equal(rows[0].utilizationGpuPercent, null);
});

test("amd-smi: text instead of JSON, or JSON of another shape, is a problem, not a throw", () => {
  const bad = parseAmdSmi("WARNING: No AMD GPUs specified\n");
  assert.equal(bad.rows.length, 0);
  assert.match(bad.problems[0].reason, /amd-smi metric did not print JSON/);
  const shape = parseAmdSmi('{"devices": []}');
  assert.match(shape.problems[0].reason, /neither a list of GPUs nor/);
  const side = parseAmdSmi(fx("metric-usage-w7700.json"), "not json");
  assert.equal(side.rows.length, 1);
  assert.match(side.problems[0].reason, /amd-smi static did not print JSON/);
});

test("amdNumber: value objects, bare numbers, numeric strings, memory units to MiB", () => {
  assert.equal(amdNumber({ value: 3, unit: "%" }), 3);
  assert.equal(amdNumber("N/A"), null);
  assert.equal(amdNumber({ value: 2, unit: "GB" }, true), 2048);
  assert.equal(amdNumber({ value: 1073741824, unit: "B" }, true), 1024);
  assert.equal(amdNumber({ value: 5, unit: "furlongs" }, true), null);
});

test("rocm-smi --showallinfo (780M): use, edge temperature, socket power, sclk, PCI bus; no UUID for N/A", () => {
  const { rows, problems } = parseRocmSmi(fx("rocm-smi-780m.json"));
  assert.deepEqual(problems, []);
  const g = rows[0];
  assert.equal(g.name, "Phoenix3");
  assert.equal(g.utilizationGpuPercent, 19);
  assert.equal(g.temperatureC, 31);
  assert.equal(g.powerDrawW, 7.222);
  assert.equal(g.clockSmMHz, 800);
  assert.equal(g.pciBusId, "0000:C4:00.0");
  assert.equal(
    g.uuid,
    "PCI-0000:C4:00.0",
    "no Unique ID: keyed by PCI address, which the launcher refuses as a device id",
  );
});

test("rocm-smi (RX 7900 XT): VRAM bytes to MiB, Card Series as the name; older lower-case (c) keys (fan, average power)", () => {
  const g = parseRocmSmi(fx("rocm-smi-rx7900xt.json")).rows[0];
  assert.equal(g.name, "Radeon RX 7900 XT");
  assert.equal(g.memoryTotalMiB, 20464);
  assert.equal(g.memoryUsedMiB, 27);
  assert.equal(g.memoryFreeMiB, 20437);
  const old = parseRocmSmi(fx("rocm-smi-fan-lowercase.json")).rows[0];
  assert.equal(old.temperatureC, 77);
  assert.equal(old.fanSpeedPercent, 45);
  assert.equal(old.powerDrawW, 222);
});

test("rocm-smi: a Unique ID becomes the GPU- UUID ROCR_VISIBLE_DEVICES takes; cards in order; no card is a problem", () => {
  const { rows } = parseRocmSmi(
    JSON.stringify({ card1: { "Unique ID": "0x5F2A3B1C0D9E8F7A" }, card0: {}, system: { "Driver version": "6.8.5" } }),
  );
  assert.deepEqual(
    rows.map((r) => r.index),
    [0, 1],
  );
  assert.equal(rows[1].uuid, "GPU-5f2a3b1c0d9e8f7a");
  assert.equal(rows[0].driverVersion, "6.8.5");
  assert.match(parseRocmSmi("{}").problems[0].reason, /listed no card/);
  assert.match(parseRocmSmi("[1]").problems[0].reason, /not an object of cards/);
});

test("queryAmdInventory runs the fake amd-smi (metric, static, list) and joins them; a failed list is a problem line", async () => {
  const { queryAmdInventory } = await import("../../../../common/src/gpu/amdSmi");
  const tool = { name: "amd-smi" as const, path: join(ROOT, "test", "fixtures", "bin", "amd-smi") };
  const ok = await queryAmdInventory(tool, { timeoutMs: 10_000 });
  assert.equal(ok.kind, "ok");
  if (ok.kind !== "ok") return;
  assert.equal(ok.inventory.gpus[0].name, "AMD Radeon RX 7800 XT");
  assert.equal(ok.inventory.gpus[0].memoryUsedMiB, 14569);
  assert.equal(ok.inventory.gpus[0].uuid, "00ff1900-0000-1000-8000-000000000000");
  assert.deepEqual(ok.inventory.apps, []);
  assert.equal(ok.inventory.vendor, "amd", "runs planned on it get ROCR_VISIBLE_DEVICES");
  const nolist = await queryAmdInventory(tool, { timeoutMs: 10_000, env: { FAKE_AMD_SMI_MODE: "nolist" } });
  assert.equal(nolist.kind, "ok");
  if (nolist.kind === "ok")
    assert.match(nolist.inventory.problems[0], /^amd-smi list unavailable: amd-smi: list failed/);
  const text = await queryAmdInventory(tool, { timeoutMs: 10_000, env: { FAKE_AMD_SMI_MODE: "text" } });
  assert.equal(text.kind, "garbage");
  if (text.kind === "garbage")
    assert.match(text.message, /^amd-smi's GPU list could not be read: amd-smi metric did not print JSON/);
  const missing = await queryAmdInventory({ name: "rocm-smi", path: "/nonexistent/rocm-smi" }, { timeoutMs: 5_000 });
  assert.equal(missing.kind, "missing");
  assert.doesNotMatch(missing.kind === "missing" ? missing.message : "", /nvidia-smi/);
});
