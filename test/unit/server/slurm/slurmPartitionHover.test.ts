/**
 * The partition hover of job scripts: the option under the cursor, sinfo run through execa (the
 * fake test/fixtures/bin/sinfo replays real captures of Slurm 22.05.8), the 30 s cache, and calm
 * messages when sinfo is absent, slow or failing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { ROOT } from "../../support/helpers";
import {
  partitionAt,
  partitionHover,
  PartitionGpuCache,
  runSinfo,
  SINFO_CACHE_MS,
} from "../../../../server/src/slurm/partitionHover";

const SCRIPT =
  "#!/bin/bash\n#SBATCH --job-name=t\n#SBATCH --partition=gpu\n#SBATCH -p gpu,debug --gres=gpu:2\n\nsrun python train.py\n";
const FAKE_BIN = join(ROOT, "test", "fixtures", "bin");

/** Runs `fn` with the fake sinfo first on PATH (or no sinfo at all) and FAKE_SINFO_* set. */
async function withSinfo<T>(
  env: Record<string, string | undefined>,
  fn: () => Promise<T>,
  path = `${FAKE_BIN}${delimiter}${process.env.PATH}`,
): Promise<T> {
  const saved = {
    PATH: process.env.PATH,
    FAKE_SINFO_MODE: process.env.FAKE_SINFO_MODE,
    FAKE_SINFO_LOG: process.env.FAKE_SINFO_LOG,
  };
  process.env.PATH = path;
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

test("partitionAt: --partition=NAME and -p NAME,NAME2 on #SBATCH lines; elsewhere nothing", () => {
  assert.deepEqual(partitionAt(SCRIPT, { line: 2, character: 14 }), {
    names: ["gpu"],
    range: { start: { line: 2, character: 8 }, end: { line: 2, character: 23 } },
  });
  assert.deepEqual(partitionAt(SCRIPT, { line: 3, character: 12 })?.names, ["gpu", "debug"]);
  assert.equal(partitionAt(SCRIPT, { line: 3, character: 26 }), null, "on --gres");
  assert.equal(partitionAt(SCRIPT, { line: 1, character: 12 }), null, "on --job-name");
  assert.equal(partitionAt(SCRIPT, { line: 5, character: 3 }), null, "on a command");
  assert.equal(partitionAt("srun -p gpu python t.py\n", { line: 0, character: 6 }), null, "not an #SBATCH line");
});

test("partition hover: free and total GPUs from sinfo (captured idle, busy and typed outputs)", async () => {
  await withSinfo({ FAKE_SINFO_MODE: "idle" }, async () => {
    const h = await partitionHover(SCRIPT, { line: 2, character: 12 }, new PartitionGpuCache());
    assert.deepEqual(h?.range, { start: { line: 2, character: 8 }, end: { line: 2, character: 23 } });
    assert.equal(
      h?.markdown,
      "**Slurm partition GPUs** (sinfo, just now)\n\n- `gpu`: **4 of 4 GPUs free**, 0 in use; 1 node",
    );
  });
  await withSinfo({ FAKE_SINFO_MODE: "busy" }, async () => {
    const h = await partitionHover(SCRIPT, { line: 3, character: 12 }, new PartitionGpuCache());
    assert.equal(
      h?.markdown,
      "**Slurm partition GPUs** (sinfo, just now)\n\n- `gpu`: **1 of 4 GPUs free**, 3 in use; 1 node\n- `debug`: sinfo lists no partition of this name",
    );
  });
  await withSinfo({ FAKE_SINFO_MODE: "typed" }, async () => {
    const h = await partitionHover(SCRIPT, { line: 2, character: 12 }, new PartitionGpuCache());
    assert.equal(
      h?.markdown,
      "**Slurm partition GPUs** (sinfo, just now)\n\n- `gpu`: **2 of 4 GPUs free** (a100), 2 in use; 1 node",
    );
  });
});

test("partition hover: sinfo runs once per partition list in 30 s, with an argument array", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-sinfo-"));
  const log = join(dir, "calls.jsonl");
  try {
    await withSinfo({ FAKE_SINFO_MODE: "idle", FAKE_SINFO_LOG: log }, async () => {
      let t = 1_000_000;
      const cache = new PartitionGpuCache(runSinfo, () => t);
      await partitionHover(SCRIPT, { line: 2, character: 12 }, cache, () => t);
      t += 10_000;
      const again = await partitionHover(SCRIPT, { line: 2, character: 12 }, cache, () => t);
      assert.match(again!.markdown, /\(sinfo, 10 s ago\)/);
      t += SINFO_CACHE_MS; // older than 30 s: asked again
      await partitionHover(SCRIPT, { line: 2, character: 12 }, cache, () => t);
      const calls = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.deepEqual(calls, [
        ["-N", "-h", "-O", "NodeList:|,Partition:|,Gres:|,GresUsed:|,StateCompact:|", "--partition=gpu"],
        ["-N", "-h", "-O", "NodeList:|,Partition:|,Gres:|,GresUsed:|,StateCompact:|", "--partition=gpu"],
      ]);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("partition hover: calm messages when sinfo is absent, fails (captured: no controller) or hangs", async () => {
  const empty = mkdtempSync(join(tmpdir(), "gpu-pilot-nosinfo-"));
  try {
    const absent = await withSinfo(
      {},
      () => partitionHover(SCRIPT, { line: 2, character: 12 }, new PartitionGpuCache()),
      empty,
    );
    assert.equal(
      absent?.markdown,
      "**Slurm partition `gpu`**: GPUs unknown: sinfo is not on PATH (no Slurm client commands on this machine).",
    );
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
  const failed = await withSinfo({ FAKE_SINFO_MODE: "fail" }, () =>
    partitionHover(SCRIPT, { line: 2, character: 12 }, new PartitionGpuCache()),
  );
  assert.equal(
    failed?.markdown,
    "**Slurm partition `gpu`**: GPUs unknown: sinfo failed (exit 1): slurm_load_partitions: Unable to contact slurm controller (connect failure).",
  );
  const hung = await withSinfo({ FAKE_SINFO_MODE: "hang" }, () =>
    partitionHover(SCRIPT, { line: 2, character: 12 }, new PartitionGpuCache(runSinfo, Date.now, SINFO_CACHE_MS, 300)),
  );
  assert.equal(hung?.markdown, "**Slurm partition `gpu`**: GPUs unknown: sinfo did not answer within 0.3 s.");
});
