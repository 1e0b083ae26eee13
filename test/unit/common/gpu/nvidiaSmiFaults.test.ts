// nvidia-smi faults (issue 9), each against a fake executable written here: missing, not executable,
// exit codes with their messages, killed by a signal, garbage, "GPU is lost", [N/A] / [Not Supported]
// fields, and a 10-second hang that must not block the event loop. Uses common/src/gpu/nvidiaSmi.ts
// as the GPU view does (runNvidiaSmi, queryInventory). No timing assertions beyond "not before the
// configured timeout".
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  describeExitCode,
  MAX_OUTPUT_BYTES,
  queryInventory,
  QUERY_GPU_ARGS,
  runNvidiaSmi,
} from "../../../../common/src/gpu/nvidiaSmi";

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-smi-faults-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

let fakes = 0;
/** Writes an executable node script; `body` sees `args` (the argument string) and `apps` (a compute-apps query). */
function fake(body: string): string {
  const path = join(tmp, `nvidia-smi-${++fakes}`);
  writeFileSync(
    path,
    `#!/usr/bin/env node\n"use strict";\nconst args = process.argv.slice(2).join(" ");\nconst apps = args.includes("--query-compute-apps");\n${body}\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** One captured H200 line (test/fixtures/nvidia-smi/h200x2/query_gpu_nounits.csv), fields replaceable. */
function gpuLine(index: number, replace: Record<number, string> = {}): string {
  const f = [
    String(index),
    index === 0 ? "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f" : "GPU-6486822f-842c-1320-f829-e4155c0d2130",
    "NVIDIA H200",
    index === 0 ? "00000000:00:06.0" : "00000000:00:07.0",
    "580.159.04",
    "143771",
    "0",
    "143156",
    "0",
    "0",
    "35",
    "109.44",
    "700.00",
    "[N/A]",
    "Default",
    "Disabled",
    "Enabled",
    "435",
    "1980",
    "P0",
  ];
  for (const [k, v] of Object.entries(replace)) f[Number(k)] = v;
  return f.join(", ");
}

const EXIT_MESSAGES: Record<number, string> = {
  2: "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.",
  3: "This operation is not supported on this GPU.",
  4: "Insufficient Permissions",
  6: "No devices were found",
  8: "The GPU's external power cables are not properly attached.",
  9: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
  10: "NVIDIA driver detected an interrupt issue with a GPU.",
  12: "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
  13: "Function not implemented",
  14: "infoROM is corrupted at gpu 0000:03:00.0",
  15: "Unable to determine the device handle for GPU 00000000:00:07.0: GPU is lost.  Reboot the system to recover this GPU",
  255: "Failed to initialize NVML: Unknown Error",
  42: "something unexpected",
};

test("missing: nvidia-smi not found (ENOENT), by path and as a bare name", async () => {
  const r = await queryInventory({ path: join(tmp, "no-such-nvidia-smi"), timeoutMs: 10_000 });
  assert.equal(r.kind, "missing");
  if (r.kind === "missing") assert.equal(r.code, "ENOENT");
  assert.equal(
    (await runNvidiaSmi("gpu-pilot-no-such-nvidia-smi", QUERY_GPU_ARGS, { timeoutMs: 10_000 })).kind,
    "missing",
  );
});

test("missing: nvidia-smi without the executable bit (EACCES)", async () => {
  const path = fake('process.stdout.write("0\\n");');
  chmodSync(path, 0o644);
  const r = await queryInventory({ path, timeoutMs: 10_000 });
  assert.equal(r.kind, "missing");
  if (r.kind === "missing") {
    assert.equal(r.code, "EACCES");
    assert.match(r.message, /is not executable/);
  }
});

for (const [code, message] of Object.entries(EXIT_MESSAGES).map(([c, m]) => [Number(c), m] as const)) {
  test(`failed: exit ${code} with nvidia-smi's message (${message.slice(0, 40)}...)`, async () => {
    const stream = code === 255 ? "stderr" : "stdout";
    const path = fake(`process.${stream}.write(${JSON.stringify(message + "\n\n")}); process.exitCode = ${code};`);
    const r = await runNvidiaSmi(path, QUERY_GPU_ARGS, { timeoutMs: 10_000 });
    assert.equal(r.kind, "failed");
    if (r.kind !== "failed") return;
    assert.equal(r.exitCode, code);
    assert.equal(r.message, message.replace(/\s+$/, ""));
    assert.equal(r.explanation, describeExitCode(code));
    assert.match(r.explanation, code === 42 ? /failed with exit code 42/ : new RegExp(`exit ${code}`));
    const inv = await queryInventory({ path, timeoutMs: 10_000 });
    assert.equal(inv.kind, "failed", "the GPU view shows the failure, not an empty list");
  });
}

test("failed: a non-zero exit without output is explained by its code", async () => {
  const r = await runNvidiaSmi(fake("process.exitCode = 9;"), QUERY_GPU_ARGS, { timeoutMs: 10_000 });
  assert.equal(r.kind, "failed");
  if (r.kind === "failed") assert.equal(r.message, describeExitCode(9));
});

test("failed: killed by a signal (exit code null, the signal named)", async () => {
  const r = await runNvidiaSmi(fake('process.kill(process.pid, "SIGKILL");'), QUERY_GPU_ARGS, { timeoutMs: 10_000 });
  assert.equal(r.kind, "failed");
  if (r.kind === "failed") {
    assert.equal(r.exitCode, null);
    assert.equal(r.signal, "SIGKILL");
    assert.match(r.message, /SIGKILL/);
  }
});

test("garbage: exit 0 with output that is not nvidia-smi CSV", async () => {
  const r = await queryInventory({
    path: fake('process.stdout.write("<html><body>502 Bad Gateway</body></html>\\nindex;uuid;name\\n");'),
    timeoutMs: 10_000,
  });
  assert.equal(r.kind, "garbage");
  if (r.kind === "garbage") assert.match(r.message, /GPU list could not be read/);
});

test("garbage: binary output (NUL bytes) and output over the size cap", async () => {
  const binary = await runNvidiaSmi(
    fake("process.stdout.write(Buffer.from([0x30, 0x2c, 0x00, 0xff, 0xfe]));"),
    QUERY_GPU_ARGS,
    { timeoutMs: 10_000 },
  );
  assert.equal(binary.kind, "garbage");
  const huge = await runNvidiaSmi(
    fake(`process.stdout.write("x".repeat(${MAX_OUTPUT_BYTES + 1024}));`),
    QUERY_GPU_ARGS,
    { timeoutMs: 10_000 },
  );
  assert.equal(huge.kind, "garbage");
  if (huge.kind === "garbage") assert.match(huge.message, /more than/);
});

test("GPU is lost: the lost GPU's line is a problem, the other GPU is still listed (exit 15)", async () => {
  const path = fake(
    `if (apps) { process.exitCode = 0; } else { process.stdout.write(${JSON.stringify(`${gpuLine(0)}\n${EXIT_MESSAGES[15]}\n`)}); process.exitCode = 15; }`,
  );
  const r = await queryInventory({ path, timeoutMs: 10_000 });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.deepEqual(
    r.inventory.gpus.map((g) => g.index),
    [0],
  );
  assert.ok(
    r.inventory.problems.some((p) => /GPU is lost/.test(p)),
    JSON.stringify(r.inventory.problems),
  );
});

test("GPU is lost: [GPU is lost] in a required field drops that row; in other fields it is null", async () => {
  const csv = `${gpuLine(0, { 5: "[GPU is lost]", 10: "[GPU is lost]", 14: "[GPU is lost]" })}\n${gpuLine(1, { 1: "[GPU is lost]" })}\n`;
  const r = await queryInventory({
    path: fake(`process.stdout.write(apps ? "" : ${JSON.stringify(csv)});`),
    timeoutMs: 10_000,
  });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.deepEqual(
    r.inventory.gpus.map((g) => [g.index, g.memoryTotalMiB, g.temperatureC, g.computeMode]),
    [[0, null, null, null]],
  );
  assert.equal(r.inventory.problems.length, 1);
  assert.match(r.inventory.problems[0], /uuid/);
});

test("[N/A] and [Not Supported] fields become null, never NaN", async () => {
  const csv = `${gpuLine(0, { 4: "[N/A]", 6: "[Not Supported]", 8: "[N/A]", 9: "[Not Supported]", 11: "[N/A]", 12: "[Not Supported]", 13: "[N/A]", 15: "[N/A]", 17: "[Not Supported]", 19: "[N/A]" })}\n`;
  const appsCsv = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f, 00000000:00:06.0, 582, python3, [N/A]\n";
  const r = await queryInventory({
    path: fake(`process.stdout.write(apps ? ${JSON.stringify(appsCsv)} : ${JSON.stringify(csv)});`),
    timeoutMs: 10_000,
  });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const g = r.inventory.gpus[0];
  assert.deepEqual(
    [
      g.driverVersion,
      g.memoryUsedMiB,
      g.utilizationGpuPercent,
      g.utilizationMemoryPercent,
      g.powerDrawW,
      g.powerLimitW,
      g.fanSpeedPercent,
      g.migMode,
      g.clockSmMHz,
      g.pstate,
    ],
    [null, null, null, null, null, null, null, null, null, null],
  );
  assert.equal(g.memoryTotalMiB, 143771);
  for (const v of Object.values(g)) assert.ok(!(typeof v === "number" && Number.isNaN(v)));
  assert.deepEqual(
    r.inventory.apps.map((a) => [a.pid, a.usedMemoryMiB]),
    [[582, null]],
  );
  assert.deepEqual(r.inventory.problems, []);
});

test("a 10-second hang does not block the event loop and resolves as a timeout after the configured timeout", async () => {
  const pidFile = join(tmp, "hang.pid");
  const path = fake(
    `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 10_000);`,
  );
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
  }, 10);
  // Long enough for the fake (a Node process) to start and write its pid on a loaded 2-core CI
  // machine: at 500 ms it was sometimes killed before it wrote it.
  const timeoutMs = 2000;
  const started = performance.now();
  try {
    const pending = queryInventory({ path, timeoutMs });
    // The query is in flight: the loop keeps turning while it waits.
    const before = ticks;
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (ticks >= before + 5) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    const r = await pending;
    const elapsed = performance.now() - started;
    assert.equal(r.kind, "timeout");
    if (r.kind === "timeout") {
      assert.equal(r.ms, timeoutMs);
      assert.match(r.message, /did not answer within 2000 ms/);
    }
    assert.ok(elapsed >= timeoutMs - 5, `resolved after ${elapsed} ms, before the ${timeoutMs} ms timeout`);
    assert.ok(ticks > before, "the interval kept firing during the query");
  } finally {
    clearInterval(timer);
  }
  // The hanging process was killed.
  assert.ok(existsSync(pidFile));
  const pid = Number(readFileSync(pidFile, "utf8"));
  assert.throws(
    () => process.kill(pid, 0),
    (e: NodeJS.ErrnoException) => e.code === "ESRCH",
  );
});
