// `[tool.gpu-pilot] gpus` and `inventory`: the machine in pre-commit and CI (config.ts, options.ts
// configMachine); `--gpus`/`--inventory` win in the CLI (cli.ts machineFor).
import assert from "node:assert/strict";
import { test } from "node:test";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadProjectConfig } from "../../../../server/src/engine/config";
import { resolveLintOptions } from "../../../../server/src/engine/options";
import { main } from "../../../../server/src/cli";
import { ROOT } from "../../support/helpers";

const INVENTORY = join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_gpu_nounits.csv");

/** A repository folder with this pyproject.toml and a Python file that selects GPU 3. */
function project(pyproject: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-machine-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(join(dir, "pyproject.toml"), pyproject);
  writeFileSync(join(dir, "t.py"), 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\n');
  writeFileSync(join(dir, "run.sh"), "#!/bin/bash\ntorchrun --nproc_per_node=4 train.py\n");
  return dir;
}

async function check(
  args: string[],
): Promise<{ code: number; out: Array<{ code: string; message: string }>; err: string }> {
  let out = "";
  let err = "";
  const code = await main(["check", "--no-cache", "--format", "json", ...args], {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
    stdin: async () => "",
  });
  return { code, out: JSON.parse(out || "[]"), err };
}

test("gpus: a whole number from 0 to 1024; anything else is a configuration problem with its line", () => {
  const ok = loadProjectConfig(join(project("[tool.gpu-pilot]\ngpus = 2\n"), "pyproject.toml"));
  assert.deepEqual([ok.config?.gpus, ok.problems], [2, []]);
  for (const bad of ["-1", "2.5", '"2"', "1025", "true"]) {
    const r = loadProjectConfig(join(project(`[tool.gpu-pilot]\nselect = ["GPU"]\ngpus = ${bad}\n`), "pyproject.toml"));
    assert.equal(r.config?.gpus, undefined, bad);
    assert.equal(r.problems.length, 1, bad);
    assert.equal(r.problems[0].line, 3);
    assert.match(r.problems[0].message, /^\[tool\.gpu-pilot\] gpus must be a whole number from 0 to 1024/);
  }
  const inv = loadProjectConfig(join(project("[tool.gpu-pilot]\ninventory = 7\n"), "pyproject.toml"));
  assert.match(inv.problems[0].message, /inventory must be the path of an nvidia-smi CSV file/);
});

test("the options carry the config's machine: inventory (relative to the pyproject) wins over gpus; a bad inventory is a problem", () => {
  const dir = project('[tool.gpu-pilot]\ngpus = 8\ninventory = "ci/gpus.csv"\n');
  mkdirSync(join(dir, "ci"));
  copyFileSync(INVENTORY, join(dir, "ci", "gpus.csv"));
  const r = resolveLintOptions(join(dir, "t.py"), {});
  assert.equal(r.options.machine?.gpuCount, 2);
  assert.equal(r.options.machine?.uuids.length, 2);
  assert.deepEqual(r.problems, []);
  const gpusOnly = resolveLintOptions(join(project("[tool.gpu-pilot]\ngpus = 4\n"), "t.py"), {});
  assert.deepEqual(gpusOnly.options.machine, { gpuCount: 4, uuids: [] });
  const missing = resolveLintOptions(join(project('[tool.gpu-pilot]\ninventory = "nope.csv"\n'), "t.py"), {});
  assert.equal(missing.options.machine, undefined);
  assert.match(missing.problems[0].message, /inventory .*nope\.csv not read: no such file/);
  assert.equal(
    resolveLintOptions(join(project('[tool.gpu-pilot]\nselect = ["GPU"]\n'), "t.py"), {}).options.machine,
    undefined,
  );
});

test("GPU017 and GPU040 fire from [tool.gpu-pilot] gpus alone; --gpus and --inventory on the command line win", async () => {
  const dir = project("[tool.gpu-pilot]\ngpus = 2\n");
  const alone = await check(["--select", "GPU017,GPU040", dir]);
  assert.deepEqual(alone.out.map((d) => d.code).sort(), ["GPU017", "GPU040"]);
  assert.match(
    alone.out.find((d) => d.code === "GPU017")!.message,
    /GPU 3 does not exist on this machine \(2 GPUs: 0\.\.1\)/,
  );
  assert.equal(alone.code, 1);
  assert.deepEqual((await check(["--select", "GPU017,GPU040", "--gpus", "8", dir])).out, []);
  assert.deepEqual(
    (
      await check([
        "--select",
        "GPU017,GPU040",
        "--inventory",
        INVENTORY,
        join(project("[tool.gpu-pilot]\ngpus = 8\n"), "t.py"),
      ])
    ).out.map((d) => d.code),
    ["GPU017"],
  );
  assert.deepEqual(
    (await check(["--select", "GPU017,GPU040", join(project('[tool.gpu-pilot]\nselect = ["GPU"]\n'), "t.py")])).out,
    [],
  );
  const bad = await check(["--select", "GPU017", join(project("[tool.gpu-pilot]\ngpus = -2\n"), "t.py")]);
  assert.match(bad.err, /pyproject\.toml:2: \[tool\.gpu-pilot\] gpus must be a whole number/);
  assert.deepEqual(bad.out, []);
});

test("--gpus auto asks this machine's nvidia-smi (the fake on PATH replays the 2 x H200 capture); without one the machine stays unknown and a note says so", async () => {
  const dir = project("[tool.gpu-pilot]\n");
  const saved = process.env.PATH;
  try {
    process.env.PATH = `${join(ROOT, "test", "fixtures", "bin")}:${saved}`;
    const auto = await check(["--select", "GPU017,GPU040", "--gpus", "auto", dir]);
    assert.deepEqual(auto.out.map((d) => d.code).sort(), ["GPU017", "GPU040"], auto.err);
    assert.match(auto.out.find((d) => d.code === "GPU017")!.message, /\(2 GPUs: 0\.\.1\)/);
    assert.equal(auto.err, "");
    // With workers (one per 250 files: 302 files give two) the machine reaches them too: GPU017 in the same file.
    for (let i = 0; i < 300; i++) writeFileSync(join(dir, `m${i}.py`), "x = 1\n");
    const many = await check(["--select", "GPU017", "--gpus", "auto", "--statistics", dir]);
    assert.deepEqual(
      many.out.map((d) => d.code),
      ["GPU017"],
      many.err,
    );
    assert.match(many.err, /; 2 workers/);
    // No nvidia-smi on PATH (a CI runner without GPUs): a note, no machine checks, no failure.
    process.env.PATH = mkdtempSync(join(tmpdir(), "gp-nopath-"));
    const none = await check(["--select", "GPU017,GPU040", "--gpus", "auto", join(dir, "t.py")]);
    assert.deepEqual(none.out, []);
    assert.equal(none.code, 0);
    assert.match(
      none.err,
      /^gpu-pilot: --gpus auto: .*nvidia-smi.*; the checks that need the machine's GPUs \(GPU017, GPU040, GPU045\) stay off\n$/,
    );
  } finally {
    process.env.PATH = saved;
  }
  const bad = await check(["--gpus", "many", dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--gpus must be a whole number from 0 to 4096 or auto, not "many"/);
});
