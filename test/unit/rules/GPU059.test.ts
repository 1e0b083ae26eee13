import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";
import { ruleByCode } from "../../../server/src/engine/rules/index";

const PREVIEW = { preview: true };

manifestFixtureTests("GPU059", PREVIEW);

const SCRIPT =
  '#!/bin/bash\n# usage: bash run_360.sh <gpu_id> <scene_dir> <output_dir>\nexport CUDA_VISIBLE_DEVICES=$1\nscene=$2\nout=$3\n\npython train.py --source_path "$scene" --model_path "$out"\n';

const lint = (text: string) => lintManifestCode(text, "jobscript", "GPU059", PREVIEW);

test("GPU059: export CUDA_VISIBLE_DEVICES=$1 before python: warning on the assignment, naming the argument and the command's line, with a ${1?...} fix (not safe: a run without the argument now stops)", () => {
  const [d, ...rest] = lint(SCRIPT);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 7 }, end: { line: 2, character: 30 } });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES=$1 takes argument 1 of the script, and nothing checks that it was given: run without it, CUDA_VISIBLE_DEVICES is set to an empty string, which hides every GPU from the python on line 7 (CUDA finds no device). Give a default (${1:-0}) or stop when it is missing (${1?...}, or a test of $#)",
  );
  assert.equal(d.fix?.title, "Fail with a message when argument 1 is missing (${1?...})");
  assert.equal(d.fix?.safe, false);
  const fixed = applyEdits(SCRIPT, d.fix!.edits);
  assert.equal(fixed, SCRIPT.replace("=$1\n", "=${1?argument 1 missing: the GPU ids for CUDA_VISIBLE_DEVICES}\n"));
  assert.deepEqual(lint(fixed), []);
});

test("GPU059: the forms it reads: ${N}, quotes, later arguments, a command's own prefix, a variable holding the argument, an export after a bare assignment", () => {
  const found = (text: string) =>
    lint(text).map(
      (d) => `${d.range.start.line + 1}: ${/^(\S+) takes argument (\d+)/.exec(d.message)!.slice(1).join(" ")}`,
    );
  assert.deepEqual(found('export CUDA_VISIBLE_DEVICES="${2}"\naccelerate launch train.py\n'), [
    '1: CUDA_VISIBLE_DEVICES="${2}" 2',
  ]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=$3 nohup python -u t.py > log &\n"), ["1: CUDA_VISIBLE_DEVICES=$3 3"]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=${12} python t.py\n"), ["1: CUDA_VISIBLE_DEVICES=${12} 12"]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=$1\nexport CUDA_VISIBLE_DEVICES\npython t.py\n"), [
    "1: CUDA_VISIBLE_DEVICES=$1 1",
  ]);
  assert.deepEqual(found("declare -x CUDA_VISIBLE_DEVICES=$1\nmain() { python t.py; }\nmain\n"), [
    "1: CUDA_VISIBLE_DEVICES=$1 1",
  ]);
  // PoinTr's scripts/train.sh: the argument through a variable.
  const [via] = lint(
    "#!/usr/bin/env bash\n\nset -x\nGPUS=$1\n\nPY_ARGS=${@:2}\n\nCUDA_VISIBLE_DEVICES=${GPUS} python main.py ${PY_ARGS}\n",
  );
  assert.match(
    via.message,
    /^CUDA_VISIBLE_DEVICES=\$\{GPUS\} takes argument 1 of the script through GPUS=\$1 \(line 4\), /,
  );
  assert.deepEqual(
    via.related?.map((r) => [r.range.start.line, r.message]),
    [[3, "argument 1"]],
  );
  // The fix writes ${1?...} where the argument is read: the variable's assignment.
  assert.equal(via.fix?.edits[0].newText, "${1?argument 1 missing: the GPU ids for CUDA_VISIBLE_DEVICES}");
  assert.deepEqual(via.fix?.edits[0].range, { start: { line: 3, character: 5 }, end: { line: 3, character: 7 } });
  // A loop or a subshell sees the script's arguments.
  assert.deepEqual(found("for DS in A B; do\n  CUDA_VISIBLE_DEVICES=$1 python g.py --DS $DS\ndone\n"), [
    "2: CUDA_VISIBLE_DEVICES=$1 1",
  ]);
  assert.deepEqual(found("( export CUDA_VISIBLE_DEVICES=$1; python t.py )\n"), ["1: CUDA_VISIBLE_DEVICES=$1 1"]);
  assert.deepEqual(
    found("export GPU=$2\nCUDA_VISIBLE_DEVICES=$GPU python t.py\nCUDA_VISIBLE_DEVICES=$GPU python u.py\n"),
    ["2: CUDA_VISIBLE_DEVICES=$GPU 2"],
  );
  // Reported once, for the first Python after it.
  assert.equal(lint("export CUDA_VISIBLE_DEVICES=$1\npython a.py\npython b.py\n").length, 1);
});

test("GPU059: silent with a default, a check, set -u, an option parser, a branch, a function's own $1, or no Python after it", () => {
  const silent = [
    // defaults, or a required-argument expansion
    "export CUDA_VISIBLE_DEVICES=${1:-0}\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=${1-}\npython t.py\n",
    'export CUDA_VISIBLE_DEVICES="${1:?usage: run.sh GPU}"\npython t.py\n',
    "export CUDA_VISIBLE_DEVICES=${1?}\npython t.py\n",
    // a check before the Python starts (also after the export)
    '[ -z "$1" ] && { echo "usage: run.sh GPU"; exit 1; }\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n',
    "if [ $# -lt 1 ]; then echo usage; exit 1; fi\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    'export CUDA_VISIBLE_DEVICES=$1\nif [ -n "$1" ]; then python t.py; fi\n',
    "if [[ $# -ne 1 ]]; then\n  exit 1\nfi\ngpu=$1\nexport CUDA_VISIBLE_DEVICES=${gpu}\npython main.py\n",
    'GPU=$1\n[ -z "$GPU" ] && exit 1\nCUDA_VISIBLE_DEVICES=$GPU python t.py\n',
    ': "${1:?usage: run.sh GPU}"\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n',
    "(( $# )) || exit 1\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    // bash stops at the unset parameter
    "set -euo pipefail\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    "set -o nounset\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    "#!/bin/bash -eu\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    // an option parser, or new positional parameters
    'while [[ "$#" -gt 0 ]]; do case $1 in --gpu) g=$2; shift ;; esac; shift; done\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n',
    'while getopts "g:" o; do :; done\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n',
    "set -- 0 data\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    // a branch, a function (its own $1)
    'if [ "$MODE" = gpu ]; then\n  export CUDA_VISIBLE_DEVICES=$1\nelse\n  export CUDA_VISIBLE_DEVICES=0\nfi\npython t.py\n',
    'cudavis() {\n  export CUDA_VISIBLE_DEVICES="$1"\n}\ncudavis 0\npython t.py\n',
    "function run {\n  CUDA_VISIBLE_DEVICES=$1 python t.py\n}\nrun 0\n",
    // replaced, unset or cleared before the Python, or no Python at all
    "export CUDA_VISIBLE_DEVICES=$1\nexport CUDA_VISIBLE_DEVICES=0\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=$1\nunset CUDA_VISIBLE_DEVICES\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=$1\nenv -i python t.py\n",
    "export CUDA_VISIBLE_DEVICES=$1\nCUDA_VISIBLE_DEVICES=0 python t.py\n",
    "export CUDA_VISIBLE_DEVICES=$1\n./bench --size 4\n",
    "python t.py\nexport CUDA_VISIBLE_DEVICES=$1\n",
    // a bare assignment never exported (GPU054's case), single quotes, $0, other values
    "CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES='$1'\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=$0\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=$1,$2\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES=$GPU\npython t.py\n",
    // a variable assigned twice, or inside a branch
    "GPU=$1\nGPU=${GPU:-0}\nexport CUDA_VISIBLE_DEVICES=$GPU\npython t.py\n",
    "if true; then GPU=$1; fi\nexport CUDA_VISIBLE_DEVICES=$GPU\npython t.py\n",
    // a Slurm job that asks for GPUs: GPU021's finding
    "#!/bin/bash\n#SBATCH --gres=gpu:1\nexport CUDA_VISIBLE_DEVICES=$1\npython t.py\n",
    // srun gives its GPU step its own value
    "export CUDA_VISIBLE_DEVICES=$1\nsrun python t.py\n",
  ];
  for (const text of silent) assert.deepEqual(lint(text), [], text);
});

test("GPU059 is in the default set (measured on public scripts: 29 of 29 true), its fix unsafe", () => {
  assert.equal(ruleByCode("GPU059")?.meta.preview, undefined);
  const [d] = lintManifestCode(SCRIPT, "jobscript", "GPU059");
  assert.equal(d.code, "GPU059");
  assert.equal(d.severity, "warning");
});
