import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { DISTRIBUTED_LAUNCH, TORCHRUN } from "../support/slurmLaunches";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { pinsTorchBelow20 } from "../../../server/src/engine/config";

fixtureTests("GPU044", { preview: true, slurm: [DISTRIBUTED_LAUNCH] });

const SRC =
  'import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", default=0, type=int)\nargs = parser.parse_args()\nprint(args.local_rank)\n';

test("GPU044: --local_rank alone under torch.distributed.launch: warning on the option string, naming the launch; the fix adds --local-rank", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 3, character: 20 }, end: { line: 3, character: 34 } });
  assert.equal(
    d.message,
    'run.sh (line 4) starts this file with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, but the parser declares only --local_rank: parse_args() exits in every worker with "error: unrecognized arguments: --local-rank=<rank>" (PyTorch\'s launcher documentation); accept both spellings, or start with torchrun and read LOCAL_RANK',
  );
  const fixed = applyFix(SRC, d);
  assert.equal(fixed, SRC.replace('"--local_rank",', '"--local_rank", "--local-rank",'));
  assert.deepEqual(await lintCode(fixed, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] }), []);
  // The fix keeps the quote style.
  const single = SRC.replace('"--local_rank"', "'--local_rank'");
  const [s] = await lintCode(single, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] });
  assert.equal(applyFix(single, s), single.replace("'--local_rank',", "'--local_rank', '--local-rank',"));
});

test("GPU044: silent without such a launch, under torchrun or --use-env, on torch < 2.0, with both spellings, and with parse_known_args", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU044"), []);
  assert.deepEqual(await lintCode(SRC, "GPU044", { slurm: [TORCHRUN] }), []);
  assert.deepEqual(
    await lintCode(SRC, "GPU044", { slurm: [{ ...DISTRIBUTED_LAUNCH, passesLocalRankArg: false }] }),
    [],
  );
  assert.deepEqual(await lintCode(SRC, "GPU044", { slurm: [DISTRIBUTED_LAUNCH], torchBelow20: true }), []);
  assert.deepEqual(
    await lintCode(SRC.replace('"--local_rank",', '"--local_rank", "--local-rank",'), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
  assert.deepEqual(
    await lintCode(SRC.replace("parser.parse_args()", "parser.parse_known_args()[0]"), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
  assert.deepEqual(
    await lintCode(SRC.replace("parser.parse_args()", "parser.parse_args(argv)"), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
});

test("GPU044 torch pins: below 2.0 only", () => {
  assert.deepEqual(["==1.13.1", "<2.0", ">=1.10,<1.14", "~=1.12.0", "==1.8.1+cu111"].map(pinsTorchBelow20), [
    true,
    true,
    true,
    true,
    true,
  ]);
  assert.deepEqual(["", ">=1.13", "==2.0.1", ">=2.1", "<2.5"].map(pinsTorchBelow20), [
    false,
    false,
    false,
    false,
    false,
  ]);
});

test("GPU044 end to end: the shell script beside the file is found; --use-env, torchrun and a torch<2.0 pin keep it silent", async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu044-"));
  try {
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, "train.py"), SRC);
    const run = async (script: string, requirements?: string, target?: string) => {
      writeFileSync(join(root, "run.sh"), `#!/bin/bash\nNUM=$1\nshift\n${script}\n`);
      if (requirements !== undefined) writeFileSync(join(root, "requirements.txt"), requirements);
      else rmSync(join(root, "requirements.txt"), { force: true });
      clearSlurmLaunchCache();
      const { options } = resolveLintOptions(
        join(root, "train.py"),
        target ? { targetTorch: target } : {},
        "editorOnly",
      );
      return (await lintCode(SRC, "GPU044", options)).map((d) => d.range.start.line);
    };
    assert.deepEqual(await run('python3 -m torch.distributed.launch --nproc_per_node=$NUM train.py "$@"'), [3]);
    assert.deepEqual(await run("python -m torch.distributed.launch --use_env --nproc_per_node 2 train.py"), []);
    assert.deepEqual(await run("python -m torch.distributed.run --nproc_per_node 2 train.py"), []);
    assert.deepEqual(await run("torchrun --nproc_per_node 2 train.py"), []);
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", "torch==1.12.1\n"),
      [],
    );
    assert.deepEqual(await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", "torch>=1.13\n"), [3]);
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", undefined, "1.13"),
      [],
    );
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", undefined, "2.1"),
      [3],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('GPU044: a launch of "$(dirname "$0")/train.py" (mmocr\'s tools/dist_train.sh) starts the train.py beside the script, not one elsewhere', async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu044-dirname-"));
  try {
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, "tools"));
    const line = (path: string) =>
      `#!/usr/bin/env bash\npython -m torch.distributed.launch --nproc_per_node="$2" \\\n    ${path} "$1" --launcher pytorch\n`;
    const at = async (file: string) => {
      clearSlurmLaunchCache();
      const { options } = resolveLintOptions(join(root, file), {}, "editorOnly");
      return (await lintCode(SRC, "GPU044", options)).map((d) => d.range.start.line);
    };
    for (const form of [
      '"$(dirname "$0")/train.py"',
      "$(dirname $0)/train.py",
      '"$(dirname "${BASH_SOURCE[0]}")/train.py"',
      "`dirname $0`/train.py",
    ]) {
      writeFileSync(join(root, "tools", "dist_train.sh"), line(form));
      assert.deepEqual(await at("tools/train.py"), [3], form);
      assert.deepEqual(await at("train.py"), [], `${form}: the root's train.py is another file`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
