// A child whose spawn failed has no pid, but for a moment Node still holds its process handle:
// killing it then signals whatever pid the handle holds, 0 (the caller's whole process group) or
// another process (seen with strace: `kill(0, SIGTERM)` and `kill(3, SIGTERM) = 0` after a path
// that does not exist). In VS Code that group is the extension host's. GPU Pilot must never kill
// a child without a pid: checked by watching every ChildProcess.kill call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChildProcess } from "node:child_process";
import { GpuStream } from "../../../../client/src/gpu/stream";
import { QUERY_GPU_ARGS, runNvidiaSmi } from "../../../../common/src/gpu/nvidiaSmi";
import { ProcessTerminal } from "../../../../client/src/run/processTerminal";

const MISSING = "/nonexistent-gpu-pilot/nvidia-smi";
/** kill() calls on children without a pid (none may happen); the real kill is not called for them. */
const pidless: string[] = [];
const realKill = ChildProcess.prototype.kill;
ChildProcess.prototype.kill = function (this: ChildProcess, ...args: Parameters<ChildProcess["kill"]>) {
  if (this.pid === undefined) {
    pidless.push(`${this.spawnfile} ${String(args[0] ?? "SIGTERM")}`);
    return false;
  }
  return realKill.apply(this, args);
};
test.after(() => {
  ChildProcess.prototype.kill = realKill;
});

test("runNvidiaSmi aborted while a missing nvidia-smi fails to start: no kill of a pid-less child", async () => {
  for (let i = 0; i < 5; i++) {
    const c = new AbortController();
    const p = runNvidiaSmi(MISSING, QUERY_GPU_ARGS, { timeoutMs: 1000, signal: c.signal });
    setImmediate(() => c.abort());
    const r = await p;
    assert.ok(r.kind === "canceled" || r.kind === "missing", r.kind);
  }
  assert.deepEqual(pidless, []);
});

test("GpuStream with a missing nvidia-smi, stopped at once and later: no kill of a pid-less child", async () => {
  for (const wait of [0, 1, 5, 50]) {
    const s = new GpuStream({ path: MISSING, intervalMs: 100, timeoutMs: 1000, backoffInitialMs: 10 });
    s.start();
    await new Promise((r) => setTimeout(r, wait));
    await s.stop();
  }
  assert.deepEqual(pidless, []);
});

test("ProcessTerminal with a program that cannot start: close() and signal() kill nothing", async () => {
  const t = new ProcessTerminal({ command: "/nonexistent-gpu-pilot/python", args: [], cwd: "/", env: {} });
  const closed = new Promise((r) => t.onDidClose(r));
  t.open();
  t.close();
  assert.equal(t.signal("SIGTERM"), false);
  await closed;
  assert.deepEqual(pidless, []);
});
