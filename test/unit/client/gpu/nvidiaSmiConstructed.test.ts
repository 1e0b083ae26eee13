// The constructed many-GPU fixtures (test/fixtures/nvidia-smi/h200x8, h200x16) as the stand-in
// nvidia-smi (test/fixtures/bin/nvidia-smi) prints them must be physically consistent: a GPU's
// memory.used is never smaller than the sum of its compute processes' used_memory, neither in the
// one-shot GPU query nor in any sample of the streamed one (loop.txt), which the screenshots show.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");

function run(mode: string, args: string[]): string {
  return execFileSync(FAKE, args, { encoding: "utf8", env: { ...process.env, FAKE_NVIDIA_SMI_MODE: mode } });
}

/** `lines` lines of the streamed GPU query (index, uuid, memory.used, memory.total, memory.free), then kills it. */
function stream(mode: string, lines: number): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      FAKE,
      ["--query-gpu=index,uuid,memory.used,memory.total,memory.free", "--format=csv,noheader,nounits", "-lms", "2"],
      { env: { ...process.env, FAKE_NVIDIA_SMI_MODE: mode } },
    );
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      text += d;
      const rows = text.split("\n").filter((l) => l.trim() !== "");
      if (rows.length >= lines && text.endsWith("\n")) {
        child.kill();
        resolve(rows.slice(0, lines).map((l) => l.split(", ")));
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== null) reject(new Error(`the stand-in exited ${code} before ${lines} lines`));
    });
  });
}

/** Sum of used_memory (MiB) per GPU UUID of the one-shot process query. */
function appMemory(mode: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const l of run(mode, ["--query-compute-apps=gpu_uuid,pid,used_memory", "--format=csv,noheader,nounits"])
    .split("\n")
    .filter((x) => x.trim() !== "")) {
    const [uuid, , mib] = l.split(", ");
    sums.set(uuid, (sums.get(uuid) ?? 0) + Number(mib));
  }
  return sums;
}

for (const [mode, gpus] of [
  ["x8", 8],
  ["x16", 16],
] as const) {
  test(`${mode}: every GPU's memory.used >= the sum of its processes' used_memory (one-shot and all 60 streamed samples)`, async () => {
    const apps = appMemory(mode);
    assert.ok(apps.size > 0, "the fixture has processes");
    const oneShot = run(mode, [
      "--query-gpu=index,uuid,memory.used,memory.total,memory.free",
      "--format=csv,noheader,nounits",
    ])
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.split(", "));
    assert.equal(oneShot.length, gpus);
    // loop.txt has 60 ticks; one more round checks the replay wraps around consistently too
    const streamed = await stream(mode, gpus * 61);
    const bad: string[] = [];
    for (const [i, [index, uuid, used, total, free]] of [...oneShot, ...streamed].entries()) {
      const sample = i < gpus ? "one-shot" : `sample ${Math.floor((i - gpus) / gpus)}`;
      const procs = apps.get(uuid) ?? 0;
      if (Number(used) < procs) bad.push(`GPU ${index} ${sample}: memory.used ${used} < processes ${procs}`);
      if (Number(free) < 0 || Number(used) + Number(free) > Number(total))
        bad.push(`GPU ${index} ${sample}: used ${used} + free ${free} against total ${total}`);
    }
    assert.deepEqual(bad, []);
  });
}
