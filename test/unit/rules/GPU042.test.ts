import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { parseLaunchLine } from "../../../server/src/engine/launch/commandLine";
import { parseShell } from "../../../server/src/engine/manifests/shell";
import { SourceText } from "../../../server/src/engine/manifests/source";

// The fixtures are linted as the files they are: GPU042 reads the script a launch line names beside it.
manifestFixtureTests("GPU042", {}, true);

const lineOf = (text: string) => {
  const c = parseShell(new SourceText(text)).commands[0];
  return parseLaunchLine(c.words, c.assignments);
};

test("GPU042 launch model: the script and its arguments, after the launcher's own options", () => {
  const d = lineOf("deepspeed --num_gpus 2 train.py --include localhost:0 --lr 1");
  assert.deepEqual(
    [d.script?.value, d.scriptArgs.map((w) => w.value)],
    ["train.py", ["--include", "localhost:0", "--lr", "1"]],
  );
  const t = lineOf("python -m torch.distributed.run --nproc-per-node=2 --standalone train.py");
  assert.deepEqual([t.launcher, t.script?.value, t.scriptArgs.length], ["torchrun", "train.py", 0]);
  const c = lineOf("colossalai run --nproc_per_node 4 train.py --epochs 2");
  assert.deepEqual([c.launcher, c.processes?.value, c.script?.value], ["colossalai", "4", "train.py"]);
  // A plain `python x.py` names its script too (GPU052 reads its arguments); GPU042 skips it: no launcher.
  const p = lineOf("python -u train.py --nproc_per_node 2");
  assert.deepEqual([p.launcher, p.script?.value, p.scriptArgs.length], ["other", "train.py", 2]);
  assert.equal(lineOf("python -m pkg.train --gpu 1").script, null);
  assert.equal(lineOf("torchrun --nproc_per_node 2").script, null);
  // A variable among the launcher's options (not known here) when a .py follows it, or an array's:
  // the script is that file, and the options are not all known. Otherwise the variable is the script.
  const v = lineOf("torchrun $DISTRIBUTED_ARGS pretrain.py --nnodes 2");
  assert.deepEqual(
    [v.script?.value, v.scriptArgs.map((w) => w.value), v.unknownOptions, v.processes],
    ["pretrain.py", ["--nnodes", "2"], true, null],
  );
  const a = lineOf('torchrun --standalone "${ARGS[@]}" $SCRIPT');
  assert.deepEqual([a.script?.raw, a.unknownOptions], ["$SCRIPT", true]);
  const s = lineOf("torchrun --nproc_per_node 2 $SCRIPT --lr 1");
  assert.deepEqual([s.script?.raw, s.processes?.value, s.unknownOptions], ["$SCRIPT", "2", undefined]);
});

test("GPU042 message: the option, the script and what the launcher does instead; a script of another folder is found up to three folders above", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu042-"));
  writeFileSync(join(dir, "sft.py"), "import sys\nprint(sys.argv)\n");
  const [d] = lintManifestCode(
    '#!/bin/bash\ndeepspeed sft.py \\\n    --include="localhost:0,1" \\\n    --fp16\n',
    "jobscript",
    "GPU042",
    {},
    join(dir, "scripts", "sft.sh"),
  );
  assert.equal(d.range.start.line, 2);
  assert.equal(
    d.message,
    "--include comes after the script sft.py, so deepspeed passes it to sft.py (which does not name it) instead of reading it: deepspeed uses its defaults (a process on every GPU of the node); write it before sft.py",
  );
  // Without a file (an unsaved buffer) nothing can be read: silent.
  assert.deepEqual(lintManifestCode("deepspeed sft.py --include localhost:0\n", "jobscript", "GPU042"), []);
});

test("GPU042 in a Dockerfile CMD and a compose command", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu042-"));
  writeFileSync(join(dir, "train.py"), "print('x')\n");
  assert.equal(
    lintManifestCode(
      'FROM x\nCMD ["torchrun", "train.py", "--nproc_per_node=2"]\n',
      "dockerfile",
      "GPU042",
      {},
      join(dir, "Dockerfile"),
    ).length,
    1,
  );
  assert.equal(
    lintManifestCode(
      "services:\n  t:\n    command: accelerate launch train.py --gpu_ids 0,1\n",
      "compose",
      "GPU042",
      {},
      join(dir, "compose.yaml"),
    ).length,
    1,
  );
});

test("GPU042 asks the script's code whether it names the option: an identifier or a word of a string (argparse, click, sys.argv, a config attribute) keeps it silent; a comment does not", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu042-"));
  const named = {
    "argparse.py": 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--num-gpus", type=int)\n',
    "click_cli.py": 'import click\n\n\n@click.option("--num_gpus", default=1)\ndef main(num_gpus):\n    pass\n',
    "argv.py": 'import sys\nif "--num_gpus=2" in sys.argv:\n    print("two")\n',
    "attr.py": "def main(cfg):\n    return cfg.num_gpus\n",
  };
  for (const [file, text] of Object.entries(named)) writeFileSync(join(dir, file), text);
  writeFileSync(join(dir, "comment.py"), "# run with deepspeed --num_gpus 2\nprint('x')\n");
  const lint = (script: string) =>
    lintManifestCode(`deepspeed ${script} --num_gpus 2\n`, "jobscript", "GPU042", {}, join(dir, "run.sh")).map(
      (d) => d.range.start.line,
    );
  for (const file of Object.keys(named)) assert.deepEqual(lint(file), [], file);
  assert.deepEqual(lint("comment.py"), [0]);
});
