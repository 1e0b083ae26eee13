/**
 * Child process of `npm run bench`: drives the GPU view's data source for N seconds at a 1 s
 * refresh, the way the view does while visible, and prints the CPU time it cost per minute (ms):
 * this process (parsing, timers) plus its nvidia-smi children (read from /proc/self/stat's
 * utime+stime+cutime+cstime, children counted once they have exited and been reaped).
 *   stream: one long-lived `nvidia-smi --query-gpu=... -lms 1000` (client/src/gpu/stream.ts) and
 *           one long-lived `--query-compute-apps=... -lms 5000` (appsStream.ts), as the extension does;
 *   stream-poll: the GPU stream with a fresh compute-apps query every 5th tick (the extension
 *           before issue 45 item 6; still its fallback);
 *   spawn:  one `nvidia-smi --query-gpu=...` process per tick plus compute apps every 5th tick (the
 *           baseline: what the view did before streaming).
 * usage: node --import tsx bench/monitor-cost.ts stream|stream-poll|spawn SECONDS [NVIDIA_SMI_PATH]
 * (FAKE_NVIDIA_SMI_MODE=x8 in the environment: the fake's 8-GPU replay.)
 */
import { readFileSync } from "node:fs";
import { GpuStream } from "../client/src/gpu/stream";
import { runNvidiaSmi, QUERY_GPU_ARGS, QUERY_APPS_ARGS, parseQueryGpu } from "../common/src/gpu/nvidiaSmi";

const [mode, secondsArg, smiArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? "20");
const smi = smiArg ?? "nvidia-smi";
const CLK_TCK = 100; // Linux USER_HZ

/** CPU time of this process and its reaped children, ms (/proc/self/stat fields 14-17). */
function cpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return ((utime + stime + cutime + cstime) * 1000) / CLK_TCK;
}

async function main(): Promise<void> {
  const start = cpuMs();
  const t0 = Date.now();
  let ticks = 0;
  if (mode === "stream" || mode === "stream-poll") {
    const stream = new GpuStream({
      path: smi,
      intervalMs: 1000,
      timeoutMs: 5000,
      processesEvery: 5,
      streamProcesses: mode === "stream",
    });
    stream.on((e) => {
      if (e.kind === "tick") ticks++;
    });
    stream.start();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    await stream.stop();
  } else if (mode === "spawn") {
    for (let i = 0; Date.now() - t0 < seconds * 1000; i++) {
      const tickStart = Date.now();
      const r = await runNvidiaSmi(smi, QUERY_GPU_ARGS, { timeoutMs: 5000 });
      if (r.kind === "ok" && parseQueryGpu(r.stdout).rows.length) ticks++;
      if (i % 5 === 0) await runNvidiaSmi(smi, QUERY_APPS_ARGS, { timeoutMs: 5000 });
      await new Promise((res) => setTimeout(res, Math.max(0, 1000 - (Date.now() - tickStart))));
    }
  } else {
    throw new Error(`mode must be stream, stream-poll or spawn, not ${mode}`);
  }
  const wall = (Date.now() - t0) / 1000;
  const used = cpuMs() - start;
  console.log(JSON.stringify({ mode, seconds: wall, ticks, cpu_ms: used, cpu_ms_per_min: (used / wall) * 60 }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
