import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";
import { STARTUP_VARIABLES } from "../../../server/src/engine/frameworks";

manifestFixtureTests("GPU054", {});

const SCRIPT = "#!/bin/bash\nmachine_rank=0\nCUDA_VISIBLE_DEVICES=3\n\naccelerate launch --num_processes 1 train.py\n";

test("GPU054: a bare CUDA_VISIBLE_DEVICES assignment before accelerate launch: warning on the assignment, naming the command's line, with an export fix (not safe) that leaves nothing to report", () => {
  const [d, ...rest] = lintManifestCode(SCRIPT, "jobscript", "GPU054");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 22 } });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES=3 is assigned without export, so it is a variable of this shell: the accelerate launch on line 5 gets it only if the caller had already exported CUDA_VISIBLE_DEVICES; otherwise it runs on every GPU the caller's environment leaves visible. Write `export CUDA_VISIBLE_DEVICES=3`, or put it before the command, on the command's line",
  );
  assert.equal(d.fix?.title, "Export CUDA_VISIBLE_DEVICES");
  assert.equal(d.fix?.safe, false);
  const fixed = applyEdits(SCRIPT, d.fix!.edits);
  assert.equal(fixed, SCRIPT.replace("\nCUDA_VISIBLE_DEVICES=3", "\nexport CUDA_VISIBLE_DEVICES=3"));
  assert.deepEqual(lintManifestCode(fixed, "jobscript", "GPU054"), []);
});

test("GPU054: silent where the value reaches the program or is not meant for it", () => {
  const silent = [
    // exported before the command that starts Python, or with declare -x
    "CUDA_VISIBLE_DEVICES=3\nexport CUDA_VISIBLE_DEVICES\npython t.py\n",
    "export CUDA_VISIBLE_DEVICES\nCUDA_VISIBLE_DEVICES=3\npython t.py\n",
    "CUDA_VISIBLE_DEVICES=3\ndeclare -x CUDA_VISIBLE_DEVICES\npython t.py\n",
    // set -o allexport
    "set -o allexport\nCUDA_VISIBLE_DEVICES=3\npython t.py\n",
    // the script reads the value itself
    "CUDA_VISIBLE_DEVICES=3\nCUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES} python t.py\n",
    "CUDA_VISIBLE_DEVICES=3\npython t.py --gpus $CUDA_VISIBLE_DEVICES\n",
    // no Python after it, or only Python with its own value
    "CUDA_VISIBLE_DEVICES=3\n./bench --size 4\n",
    "python t.py\nCUDA_VISIBLE_DEVICES=3\n",
    "CUDA_VISIBLE_DEVICES=3\nCUDA_VISIBLE_DEVICES=1 python t.py\n",
    // not a startup variable
    "GPU=3\npython t.py --gpu $GPU\nNCCL_DEBUG=INFO\npython t.py\n",
    // a batch job: the scheduler's variable is already exported
    "#!/bin/bash\n#SBATCH --gres=gpu:2\nCUDA_VISIBLE_DEVICES=1\npython t.py\n",
    "#!/bin/bash\n#PBS -l select=1:ngpus=2\nCUDA_VISIBLE_DEVICES=1\npython t.py\n",
    // a sourced file between them may export it
    "CUDA_VISIBLE_DEVICES=3\nsource ./env.sh\npython t.py\n",
    // a job step's helper: the scheduler's variable is already exported
    "#!/bin/bash\nCUDA_VISIBLE_DEVICES=$SLURM_STEP_GPUS\npython t.py\n",
    "#!/bin/bash\necho job ${SLURM_JOB_ID}\nCUDA_VISIBLE_DEVICES=0\npython t.py\n",
    // programs that are not a catalogued GPU package's console script, or not its GPU subcommands
    "CUDA_VISIBLE_DEVICES=0\nmy-trainer cfg.yaml\n",
    "CUDA_VISIBLE_DEVICES=0\nswift build -c release\n",
    "CUDA_VISIBLE_DEVICES=0\nvllm --version\n",
    "CUDA_VISIBLE_DEVICES=0\njupyter kernelspec list\n",
  ];
  for (const text of silent) assert.deepEqual(lintManifestCode(text, "jobscript", "GPU054"), [], text);
});

test("GPU054: each startup variable, each launcher, and `&&` after the assignment", () => {
  const lines = (text: string) => lintManifestCode(text, "jobscript", "GPU054").map((d) => d.range.start.line);
  assert.deepEqual(lines("CUDA_DEVICE_ORDER=PCI_BUS_ID && torchrun --nproc_per_node 2 t.py\n"), [0]);
  assert.deepEqual(lines("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\ndeepspeed t.py\n"), [0]);
  assert.deepEqual(lines("XLA_PYTHON_CLIENT_MEM_FRACTION=.5\n/usr/bin/python3.11 t.py\n"), [0]);
  // a Python environment's activation exports none of them
  assert.deepEqual(lines("CUDA_VISIBLE_DEVICES=3\nsource .venv/bin/activate\npython t.py\n"), [0]);
  // an export written after the command comes too late for it
  assert.deepEqual(lines("CUDA_VISIBLE_DEVICES=0\npython a.py\nexport CUDA_VISIBLE_DEVICES=1\npython b.py\n"), [0]);
  // Python's runners and an interpreter held in a variable
  assert.deepEqual(lines("XLA_PYTHON_CLIENT_PREALLOCATE=false\nuv run scripts/train.py\n"), [0]);
  assert.deepEqual(lines("PY=/opt/env/bin/python3\nCUDA_VISIBLE_DEVICES=0\n$PY train.py\n"), [1]);
  // under a scheduler, only CUDA_VISIBLE_DEVICES is the scheduler's
  assert.deepEqual(
    lines("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nsrun python t.py --job $SLURM_JOB_ID\n"),
    [0],
  );
  const [x] = lintManifestCode("XLA_PYTHON_CLIENT_PREALLOCATE=false\npython t.py\n", "jobscript", "GPU054");
  assert.match(
    x.message,
    /the python on line 2 gets it only if the caller had already exported XLA_PYTHON_CLIENT_PREALLOCATE; otherwise it runs without it\. Write `export XLA_PYTHON_CLIENT_PREALLOCATE=false`, or put it before the command, on the command's line$/,
  );
  const [same] = lintManifestCode("CUDA_VISIBLE_DEVICES=3 && python t.py\n", "jobscript", "GPU054");
  assert.match(same.message, /or drop the `&&`\/`;` after it so that it prefixes the command$/);
});

test("GPU054 for every startup variable: the shell prefilter reads each such script", () => {
  for (const v of STARTUP_VARIABLES)
    assert.deepEqual(
      lintManifestCode(`${v}=1\npython t.py\n`, "jobscript", "GPU054").map((d) => d.range.start.line),
      [0],
      v,
    );
});

test("GPU054: a GPU package's console script starts Python (llamafactory-cli, nnUNetv2_train, vllm serve, swift sft, jupyter lab), named as written", () => {
  const found = (text: string) =>
    lintManifestCode(text, "jobscript", "GPU054").map((d) =>
      / the (.+?) on line (\d+)/.exec(d.message)?.slice(1).join(" @ "),
    );
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=0\nllamafactory-cli train cfg.yaml\n"), ["llamafactory-cli @ 2"]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\n/opt/env/bin/nnUNetv2_train 4 3d_fullres 0\n"), [
    "nnUNetv2_train @ 2",
  ]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=2,3\necho start\nvllm serve org/model -tp 2\n"), ["vllm serve @ 3"]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=0\nswift sft --model m\n"), ["swift sft @ 2"]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\njupyter lab --no-browser\n"), ["jupyter lab @ 2"]);
  assert.deepEqual(found("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nfairseq-train data-bin --arch t\n"), [
    "fairseq-train @ 2",
  ]);
});

test("GPU054: a project shell script run as a new shell (bash scripts/train.sh, ./run.sh) that starts Python counts as the command; not when it sets or reads the name itself, starts no Python, is a batch job, is sourced, or the file is unsaved", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu054-child-"));
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "scripts", "train.sh"), "#!/bin/bash\ncd src\ntorchrun --nproc_per_node 2 train.py\n");
  writeFileSync(join(dir, "scripts", "own.sh"), "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=${GPUS:-0}\npython t.py\n");
  writeFileSync(join(dir, "scripts", "reads.sh"), '#!/bin/bash\necho "on $CUDA_VISIBLE_DEVICES"\npython t.py\n');
  writeFileSync(join(dir, "scripts", "prep.sh"), "#!/bin/bash\nmkdir -p data\nwget -q https://example.org/x.tar\n");
  writeFileSync(join(dir, "scripts", "job.sh"), "#!/bin/bash\n#SBATCH --gres=gpu:2\npython t.py\n");
  const file = join(dir, "run.sh");
  const found = (text: string, at: string | undefined = file) =>
    lintManifestCode(text, "jobscript", "GPU054", {}, at).map((d) => ({
      line: d.range.start.line,
      via: / the (.+?) on line \d+/.exec(d.message)?.[1],
    }));
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=2,3\nbash scripts/train.sh --epochs 3\n"), [
    { line: 0, via: "bash scripts/train.sh (which starts torchrun)" },
  ]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=2,3\n./scripts/train.sh\n"), [
    { line: 0, via: "./scripts/train.sh (which starts torchrun)" },
  ]);
  // Found from a script one folder down as well (run from the project's root).
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\nsh -x scripts/train.sh\n", join(dir, "scripts", "go.sh")), [
    { line: 0, via: "sh -x scripts/train.sh (which starts torchrun)" },
  ]);
  const silent = [
    "CUDA_VISIBLE_DEVICES=1\nbash scripts/own.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nbash scripts/reads.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nbash scripts/prep.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nbash scripts/job.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nbash scripts/missing.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nbash -c 'scripts/train.sh'\n",
    "CUDA_VISIBLE_DEVICES=1\nsource scripts/train.sh\n",
    "CUDA_VISIBLE_DEVICES=1\nexport CUDA_VISIBLE_DEVICES\nbash scripts/train.sh\n",
    "CUDA_VISIBLE_DEVICES=1 bash scripts/train.sh\n",
  ];
  for (const text of silent) assert.deepEqual(found(text), [], text);
  assert.deepEqual(lintManifestCode("CUDA_VISIBLE_DEVICES=1\nbash scripts/train.sh\n", "jobscript", "GPU054"), []);
  // The script's literal `cd` commands move where the child is looked for (launch/child.ts).
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\ncd scripts\nbash train.sh\n"), [
    { line: 0, via: "bash train.sh (which starts torchrun)" },
  ]);
  assert.deepEqual(found('CUDA_VISIBLE_DEVICES=1\ncd "$(dirname "$0")"/scripts && ./train.sh\n'), [
    { line: 0, via: "./train.sh (which starts torchrun)" },
  ]);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\ncd scripts\ncd ..\nbash train.sh\n"), []);
  assert.deepEqual(found("CUDA_VISIBLE_DEVICES=1\ncd $WORK\nbash scripts/train.sh\n"), []);
});
