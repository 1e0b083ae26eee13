// Running nvidia-smi: the fake executable test/fixtures/bin/nvidia-smi replays the real captures,
// plus missing / non-executable / hanging / failing programs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  FORCE_KILL_AFTER_MS,
  queryInventory,
  QUERY_GPU_ARGS,
  runNvidiaSmi,
} from "../../../../common/src/gpu/nvidiaSmi";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const FIXTURES = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

/** errors.txt: `--- title` sections, each ending with `rc=N`. */
function capturedErrors(): Map<string, { output: string; rc: number }> {
  const out = new Map<string, { output: string; rc: number }>();
  for (const section of fixture("errors.txt").split(/^--- /m).filter(Boolean)) {
    const [title, ...rest] = section.split("\n");
    const body = rest.join("\n");
    const rc = /^rc=(\d+)$/m.exec(body);
    assert.ok(rc, `rc in ${title}`);
    out.set(title.trim(), { output: body.slice(0, rc.index).trim(), rc: Number(rc[1]) });
  }
  return out;
}

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-smi-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("ok: the fake replays the captured GPU query byte for byte", async () => {
  const r = await runNvidiaSmi(FAKE, QUERY_GPU_ARGS, { timeoutMs: 10_000 });
  assert.deepEqual(r, { kind: "ok", stdout: fixture("query_gpu_nounits.csv") });
});

test("queryInventory combines the GPU and process queries (busy: the python3 process on GPU 0)", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000 });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const { gpus, apps, problems, takenAt } = r.inventory;
  assert.deepEqual(problems, []);
  assert.deepEqual(
    gpus.map((g) => [g.index, g.uuid]),
    [
      [0, "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f"],
      [1, "GPU-6486822f-842c-1320-f829-e4155c0d2130"],
    ],
  );
  assert.deepEqual(apps, [
    {
      gpuUuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
      gpuBusId: "00000000:00:06.0",
      pid: 582,
      processName: "python3",
      usedMemoryMiB: 3380,
    },
  ]);
  assert.ok(Math.abs(takenAt - Date.now()) < 60_000);
});

test("queryInventory: idle mode has no processes", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "idle" } });
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.equal(r.inventory.gpus.length, 2);
    assert.deepEqual(r.inventory.apps, []);
  }
});

test("failed, exit 2: a bogus field, with nvidia-smi's own message (as captured in errors.txt)", async () => {
  const captured = capturedErrors().get("bogus field");
  assert.deepEqual(captured, { output: 'Field "bogus.field" is not a valid field to query.', rc: 2 });
  const r = await runNvidiaSmi(FAKE, ["--query-gpu=index,bogus.field", "--format=csv,noheader,nounits"], {
    timeoutMs: 10_000,
  });
  assert.equal(r.kind, "failed");
  if (r.kind !== "failed") return;
  assert.equal(r.exitCode, 2);
  assert.equal(r.message, 'Field "bogus.field" is not a valid field to query.');
  assert.match(r.explanation, /invalid argument/);
});

test("failed, exit 6: a bad -i index says 'No devices were found' (as captured)", async () => {
  const captured = capturedErrors().get("bad index");
  assert.deepEqual(captured, { output: "No devices were found", rc: 6 });
  const r = await runNvidiaSmi(FAKE, [...QUERY_GPU_ARGS, "-i", "7"], { timeoutMs: 10_000 });
  assert.equal(r.kind, "failed");
  if (r.kind !== "failed") return;
  assert.equal(r.exitCode, 6);
  assert.equal(r.message, "No devices were found");
  assert.match(r.explanation, /no devices were found/);
});

test("the fake honours -i and ignores CUDA_VISIBLE_DEVICES like the real one (errors.txt)", async () => {
  const captured = capturedErrors().get("CVD ignored");
  assert.deepEqual(captured, { output: "0\n1", rc: 0 });
  const all = await runNvidiaSmi(FAKE, ["--query-gpu=index", "--format=csv,noheader,nounits"], {
    timeoutMs: 10_000,
    env: { CUDA_VISIBLE_DEVICES: "1" },
  });
  assert.deepEqual(all, { kind: "ok", stdout: "0\n1\n" });
  const one = await runNvidiaSmi(FAKE, ["--query-gpu=index,uuid", "--format=csv,noheader,nounits", "-i=1"], {
    timeoutMs: 10_000,
  });
  assert.deepEqual(one, { kind: "ok", stdout: "1, GPU-6486822f-842c-1320-f829-e4155c0d2130\n" });
  const list = await runNvidiaSmi(FAKE, ["-L"], { timeoutMs: 10_000 });
  assert.deepEqual(list, { kind: "ok", stdout: fixture("nvsmi_L.txt") });
});

test("failed, exit 9: driver not loaded (FAKE_NVIDIA_SMI_MODE=fail9), in queryInventory too", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "fail9" } });
  assert.equal(r.kind, "failed");
  if (r.kind !== "failed") return;
  assert.equal(r.exitCode, 9);
  assert.match(r.message, /^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\./);
  assert.match(r.explanation, /driver is not loaded/);
});

test("timeout: a hanging nvidia-smi is killed and reported long before it would finish", async () => {
  const started = Date.now();
  const r = await runNvidiaSmi(FAKE, QUERY_GPU_ARGS, { timeoutMs: 300, env: { FAKE_NVIDIA_SMI_MODE: "hang" } });
  const took = Date.now() - started;
  assert.equal(r.kind, "timeout");
  if (r.kind === "timeout") {
    assert.equal(r.ms, 300);
    assert.match(r.message, /did not answer within 300 ms/);
  }
  assert.ok(took < 300 + FORCE_KILL_AFTER_MS + 3000, `took ${took} ms (the fake hangs 60 s)`);
});

test("timeout: a program that ignores SIGTERM is killed with SIGKILL", async () => {
  const stubborn = join(tmp, "stubborn-smi");
  writeFileSync(stubborn, "#!/usr/bin/env node\nprocess.on('SIGTERM', () => {});\nsetTimeout(() => {}, 60000);\n");
  chmodSync(stubborn, 0o755);
  const started = Date.now();
  const r = await runNvidiaSmi(stubborn, ["-L"], { timeoutMs: 300 });
  assert.equal(r.kind, "timeout");
  assert.ok(Date.now() - started < 300 + FORCE_KILL_AFTER_MS + 3000);
});

test("canceled: aborting the signal kills the call", async () => {
  const controller = new AbortController();
  const started = Date.now();
  const pending = runNvidiaSmi(FAKE, ["-L"], {
    timeoutMs: 30_000,
    signal: controller.signal,
    env: { FAKE_NVIDIA_SMI_MODE: "hang" },
  });
  setTimeout(() => controller.abort(), 100);
  const r = await pending;
  assert.equal(r.kind, "canceled");
  assert.ok(Date.now() - started < 5000);
  const already = await runNvidiaSmi(FAKE, ["-L"], { timeoutMs: 30_000, signal: controller.signal });
  assert.equal(already.kind, "canceled");
});

test("missing: no such executable (ENOENT), by path and as a bare name not on PATH", async () => {
  const r = await runNvidiaSmi(join(tmp, "no-such-nvidia-smi"), ["-L"], { timeoutMs: 10_000 });
  assert.equal(r.kind, "missing");
  if (r.kind === "missing") {
    assert.equal(r.code, "ENOENT");
    assert.match(r.message, /no-such-nvidia-smi was not found/);
  }
  const bare = await runNvidiaSmi("gpu-pilot-no-such-program", ["-L"], { timeoutMs: 10_000 });
  assert.equal(bare.kind, "missing");
  const inv = await queryInventory({ path: join(tmp, "no-such-nvidia-smi"), timeoutMs: 10_000 });
  assert.equal(inv.kind, "missing");
});

test("missing: a file without the executable bit, and a directory (EACCES)", async () => {
  const plain = join(tmp, "nvidia-smi-not-executable");
  copyFileSync(FAKE, plain);
  chmodSync(plain, 0o644);
  const r = await runNvidiaSmi(plain, ["-L"], { timeoutMs: 10_000 });
  assert.equal(r.kind, "missing");
  if (r.kind === "missing") {
    assert.equal(r.code, "EACCES");
    assert.match(r.message, /is not executable/);
  }
  const dir = await runNvidiaSmi(tmp, ["-L"], { timeoutMs: 10_000 });
  assert.equal(dir.kind, "missing");
});

test("garbage: output with no usable GPU line (FAKE_NVIDIA_SMI_DIR)", async () => {
  const dir = join(tmp, "garbage-fixtures");
  mkdirSync(dir, { recursive: true });
  for (const f of ["query_gpu_units.csv", "query_apps_units.csv", "query_apps_nounits.csv"]) {
    copyFileSync(join(FIXTURES, f), join(dir, f));
  }
  writeFileSync(join(dir, "query_gpu_nounits.csv"), "%%% this is not csv %%%\n\u00ff\u00fe\n");
  // The fake derives -i matching from the GPU capture; the query itself replays the garbage.
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_DIR: dir } });
  assert.equal(r.kind, "garbage");
  if (r.kind === "garbage") {
    assert.match(r.message, /could not be read: expected 20 fields, found 1/);
    assert.equal(r.sample, "%%% this is not csv %%%");
  }
});

test("garbage: binary output (NUL bytes)", async () => {
  const binary = join(tmp, "binary-smi");
  writeFileSync(binary, "#!/usr/bin/env node\nprocess.stdout.write('0, GPU\\u0000\\u0001');\n");
  chmodSync(binary, 0o755);
  const r = await runNvidiaSmi(binary, ["-L"], { timeoutMs: 10_000 });
  assert.equal(r.kind, "garbage");
});

test("a partly bad GPU list keeps the good GPUs and lists the problem", async () => {
  const dir = join(tmp, "partial-fixtures");
  mkdirSync(dir, { recursive: true });
  for (const f of ["query_gpu_units.csv", "query_apps_units.csv", "query_apps_nounits.csv"]) {
    copyFileSync(join(FIXTURES, f), join(dir, f));
  }
  writeFileSync(
    join(dir, "query_gpu_nounits.csv"),
    fixture("query_gpu_nounits.csv").split("\n")[0] + "\nUnable to determine the device handle for GPU 1\n",
  );
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_DIR: dir } });
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.deepEqual(
      r.inventory.gpus.map((g) => g.index),
      [0],
    );
    assert.deepEqual(r.inventory.problems, ["GPU query line 2: expected 20 fields, found 1"]);
  }
});

test("a failing process query only adds a problem", async () => {
  const dir = join(tmp, "no-apps-fixtures");
  mkdirSync(dir, { recursive: true });
  for (const f of ["query_gpu_units.csv", "query_gpu_nounits.csv"]) copyFileSync(join(FIXTURES, f), join(dir, f));
  // query_apps_*.csv missing: the fake crashes (non-zero exit) on the process query only
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_DIR: dir } });
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.equal(r.inventory.gpus.length, 2);
    assert.deepEqual(r.inventory.apps, []);
    assert.equal(r.inventory.problems.length, 1);
    assert.match(r.inventory.problems[0], /^Process list unavailable: /);
  }
});

test("exit codes 2, 6, 9, 12, 15, 255 (FAKE_NVIDIA_SMI_MODE=fail<N>): nvidia-smi's message and the documented meaning", async () => {
  const cases: [number, RegExp, RegExp][] = [
    [2, /^Invalid combination of input arguments/, /invalid argument/],
    [6, /^No devices were found$/, /no devices were found/],
    [9, /^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/, /driver is not loaded/],
    [12, /^NVIDIA-SMI couldn't find libnvidia-ml\.so library/, /NVML shared library/],
    [15, /GPU is lost/, /fallen off the bus/],
    [255, /^Failed to initialize NVML: Unknown Error$/, /internal or driver error/],
  ];
  for (const [code, message, explanation] of cases) {
    const r = await runNvidiaSmi(FAKE, QUERY_GPU_ARGS, {
      timeoutMs: 10_000,
      env: { FAKE_NVIDIA_SMI_MODE: `fail${code}` },
    });
    assert.equal(r.kind, "failed", `fail${code}`);
    if (r.kind !== "failed") continue;
    assert.equal(r.exitCode, code);
    assert.match(r.message, message, `fail${code}`);
    assert.match(r.explanation, explanation, `fail${code}`);
  }
});

test("lost (constructed): exit 15 with GPU 0's line kept and GPU 1's device error as a problem", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "lost" } });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.deepEqual(
    r.inventory.gpus.map((g) => g.index),
    [0],
  );
  assert.deepEqual(r.inventory.problems, ["GPU 00000000:00:07.0: GPU is lost. Reboot the system to recover this GPU"]);
  assert.deepEqual(
    r.inventory.apps.map((a) => a.pid),
    [582],
  );
  // exit 9's text has no GPU line: not salvaged
  const nine = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "fail9" } });
  assert.equal(nine.kind, "failed");
});

test("MIG (constructed): queryInventory adds the MIG devices of nvidia-smi -L when a GPU has MIG enabled", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "mig" } });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.deepEqual(
    r.inventory.gpus.map((g) => [g.index, g.migMode, g.utilizationGpuPercent]),
    [
      [0, "Enabled", null],
      [1, "Disabled", 0],
    ],
  );
  assert.deepEqual(
    r.inventory.mig?.map((m) => m.uuid),
    [
      "MIG-4f1c2a9e-7b3d-5e8a-9c41-2d6b8e0f1a37",
      "MIG-a83e5d10-2c6f-5b94-8e17-6f0d3c9b2e58",
      "MIG-0b9d7e42-5a1c-58f3-b6e2-91c4d7a3f086",
    ],
  );
  assert.deepEqual(r.inventory.problems, []);
  const plain = await queryInventory({ path: FAKE, timeoutMs: 10_000 });
  assert.deepEqual(plain.kind === "ok" ? plain.inventory.mig : undefined, [], "no -L call without MIG");
});

test("garbage mode (constructed): the GPU query is unreadable", async () => {
  const r = await queryInventory({ path: FAKE, timeoutMs: 10_000, env: { FAKE_NVIDIA_SMI_MODE: "garbage" } });
  assert.equal(r.kind, "garbage");
  if (r.kind === "garbage") assert.equal(r.sample, "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>");
});
