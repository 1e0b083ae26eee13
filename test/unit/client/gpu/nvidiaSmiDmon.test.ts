// nvidia-smi dmon with GPM metrics (client/src/gpu/dmon.ts) on the real H200 captures of
// test/fixtures/nvidia-smi/h200-gpm (driver 580.159.04), and the "busy but idle" tracker
// (client/src/gpu/activity.ts) fed with them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dmonActivity, dmonArgs, DmonReader, parseDmon } from "../../../../client/src/gpu/dmon";
import { ActivityTracker, isBusyButIdle, PROBE_SAMPLES } from "../../../../client/src/gpu/activity";
import { ROOT } from "../../support/root";

const DIR = join(ROOT, "test", "fixtures", "nvidia-smi", "h200-gpm");
const capture = (name: string) => readFileSync(join(DIR, name), "utf8");

test("dmonArgs: -s u, the GPM ids, the delay in whole seconds", () => {
  assert.deepEqual(dmonArgs(1), ["dmon", "-s", "u", "--gpm-metrics", "2,3,5", "-d", "1"]);
  assert.deepEqual(dmonArgs(0.25).slice(-1), ["1"]);
  assert.deepEqual(dmonArgs(2.4, [1, 2]), ["dmon", "-s", "u", "--gpm-metrics", "1,2", "-d", "2"]);
});

test("full matmul capture: columns by header name, '-' for the first two samples, SM activity 95 % from the fifth", () => {
  const p = parseDmon(capture("dmon-full.txt"));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.columns, [
    "gpu",
    "sm",
    "mem",
    "enc",
    "dec",
    "jpg",
    "ofa",
    "gract",
    "smutil",
    "smocc",
    "mmaact",
    "dram",
    "fp16",
  ]);
  assert.deepEqual(p.gpmColumns, ["gract", "smutil", "smocc", "mmaact", "dram", "fp16"]);
  assert.equal(p.samples.length, 8);
  assert.deepEqual(
    p.samples.map((s) => s.index),
    [0, 0, 0, 0, 0, 0, 0, 0],
  );
  assert.deepEqual(
    p.samples.map((s) => s.values.smutil),
    [undefined, undefined, 0, 0, 96, 95, 95, 95],
  );
  assert.deepEqual(
    p.samples.map((s) => s.values.sm),
    [0, 0, 0, 100, 99, 99, 99, 99],
  );
  assert.deepEqual(dmonActivity(p.samples[5]), {
    gpuUtilPercent: 99,
    smActivityPercent: 95,
    smOccupancyPercent: 14,
    tensorActivityPercent: 92,
  });
  assert.equal(p.samples[5].values.dram, 17);
  assert.equal(p.samples[5].values.mem, 24);
  assert.equal(p.samples[0].line, 3);
});

test("spin capture: GPU-Util 100 with SM activity 0 (busy but idle)", () => {
  const p = parseDmon(capture("dmon-spin.txt"));
  assert.deepEqual(
    p.samples.slice(2).map((s) => [s.values.sm, s.values.smutil, s.values.gract]),
    [
      [100, 0, 63],
      [100, 0, 99],
      [100, 0, 99],
      [100, 0, 99],
      [100, 0, 99],
      [100, 0, 99],
    ],
  );
});

test("60 s capture: the repeated header is read again, 61 samples, GPM values from the second", () => {
  const p = parseDmon(capture("dmon-60s.txt"));
  assert.deepEqual(p.problems, []);
  assert.equal(p.samples.length, 61);
  assert.equal(p.samples[0].values.smutil, undefined);
  assert.equal(p.samples[1].values.smutil, 0);
  assert.equal(p.samples.at(-1)?.line, 65);
});

test("header-driven: another column order and an unsupported id (id=99 prints '-')", () => {
  const text = [
    "# gpu      id=99     smutil     sm",
    "# Idx      GPM:%      GPM:%      %",
    "    0          -         42     97",
    "    1          -          -      -",
  ].join("\n");
  const p = parseDmon(text);
  assert.deepEqual(p.gpmColumns, ["id=99", "smutil"]);
  assert.deepEqual(
    p.samples.map((s) => [s.index, s.values["id=99"], s.values.smutil, s.values.sm]),
    [
      [0, undefined, 42, 97],
      [1, undefined, undefined, undefined],
    ],
  );
});

test("unreadable lines are problems with their line numbers, never thrown", () => {
  const r = new DmonReader();
  assert.equal(r.push("    0  1  2").kind, "problem", "data before the header");
  r.push("# gpu sm smutil");
  r.push("# Idx % GPM:%");
  const wrong = r.push("    0  1");
  assert.equal(wrong.kind, "problem");
  assert.match(wrong.kind === "problem" ? wrong.problem.reason : "", /2 columns where the header names 3/);
  const text = r.push("Failed to initialize NVML: Unknown");
  assert.equal(text.kind, "problem");
  const garbage = r.push("    0  x  1");
  assert.match(garbage.kind === "problem" ? garbage.problem.reason : "", /column sm: "x" is neither a number nor -/);
  assert.equal(r.push("").kind, "blank");
  const ok = r.push("    3  50  7");
  assert.deepEqual(ok.kind === "sample" ? [ok.sample.index, ok.sample.values, ok.sample.line] : undefined, [
    3,
    { sm: 50, smutil: 7 },
    8,
  ]);
});

function track(name: string): ActivityTracker {
  const t = new ActivityTracker();
  const p = parseDmon(capture(name));
  for (const s of p.samples) t.push(s, p.gpmColumns);
  return t;
}

test("busy but idle: on for the spin capture, off for the full and the idle captures", () => {
  assert.deepEqual(
    track("dmon-spin.txt")
      .gpuList()
      .map((g) => [g.index, g.support, g.busyButIdle, g.latest?.smActivityPercent]),
    [[0, "supported", true, 0]],
  );
  assert.deepEqual(
    track("dmon-full.txt")
      .gpuList()
      .map((g) => [g.support, g.busyButIdle, g.latest?.smActivityPercent, g.latest?.tensorActivityPercent]),
    [["supported", false, 95, 92]],
  );
  assert.deepEqual(
    track("dmon-idle.txt")
      .gpuList()
      .map((g) => [g.support, g.busyButIdle, g.latest?.smActivityPercent]),
    [["supported", false, 0]],
  );
});

test("isBusyButIdle: needs the last 3 samples with both numbers, all at >= 80 % util and <= 5 % SM activity", () => {
  const s = (u: number | undefined, a: number | undefined) => ({
    gpuUtilPercent: u,
    smActivityPercent: a,
    smOccupancyPercent: undefined,
    tensorActivityPercent: undefined,
  });
  assert.equal(isBusyButIdle([s(100, 0), s(100, 0)]), false, "two samples are not enough");
  assert.equal(
    isBusyButIdle([s(100, 0), s(100, undefined), s(80, 5), s(100, 0)]),
    true,
    "'-' samples are skipped; the bounds are inclusive",
  );
  assert.equal(isBusyButIdle([s(100, 0), s(100, 0), s(79, 0)]), false);
  assert.equal(isBusyButIdle([s(100, 0), s(100, 6), s(100, 0)]), false);
  assert.equal(isBusyButIdle([s(100, 90), s(100, 0), s(100, 0), s(100, 0)]), true, "only the last three count");
});

test("a GPU whose first 3 samples carry no GPM value is unsupported; one value makes it supported", () => {
  const p = parseDmon(
    ["# gpu sm smutil", "# Idx % GPM:%", "0 90 -", "1 0 -", "0 90 -", "1 0 -", "0 90 -", "1 0 4"].join("\n"),
  );
  const t = new ActivityTracker();
  for (const s of p.samples.slice(0, 2 * PROBE_SAMPLES - 1)) t.push(s, p.gpmColumns);
  assert.deepEqual(
    t.gpuList().map((g) => g.support),
    ["unsupported", "probing"],
  );
  assert.equal(t.allUnsupported, false);
  t.push(p.samples[5], p.gpmColumns);
  assert.deepEqual(
    t.gpuList().map((g) => g.support),
    ["unsupported", "supported"],
  );
});
