import assert from "node:assert/strict";
import { test } from "node:test";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";

const TWO = { machine: { gpuCount: 2, uuids: [] } };
const ONE = { machine: { gpuCount: 1, uuids: [] } };

manifestFixtureTests("GPU045", TWO);

const SCRIPT =
  "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=1\n\nfor pred_len in 96 192 336 720; do\n  python -u run.py --gpu 0 --pred_len $pred_len\ndone\n";

test("GPU045: an exported id the machine lacks, for the Python a loop starts: warning on the export, once", () => {
  const [d, ...rest] = lintManifestCode(SCRIPT, "jobscript", "GPU045", ONE);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 1, character: 7 }, end: { line: 1, character: 29 } });
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES="1": GPU 1 does not exist on this machine (1 GPU: 0..0); CUDA stops parsing there, so no GPU is visible: the Python started on line 5 inherits it (exported on line 2)',
  );
  const [inline] = lintManifestCode("CUDA_VISIBLE_DEVICES=0,3,1 python train.py\n", "jobscript", "GPU045", TWO);
  assert.equal(
    inline.message,
    'CUDA_VISIBLE_DEVICES="0,3,1": GPU 3 does not exist on this machine (2 GPUs: 0..1); CUDA stops parsing there, so only 0 stays visible and 1 is dropped: the Python started on line 1 gets it inline',
  );
  // UUIDs are compared when the inventory gives them.
  const uuids = { machine: { gpuCount: 1, uuids: ["GPU-aaaa-1111"] } };
  assert.equal(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=GPU-bbbb\npython t.py\n", "jobscript", "GPU045", uuids).length,
    1,
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=GPU-aaaa\npython t.py\n", "jobscript", "GPU045", uuids),
    [],
  );
});

test("GPU045: silent with the fixed id, an unknown machine, no Python after the export, a job script, or deepspeed", () => {
  assert.deepEqual(lintManifestCode(SCRIPT.replace("=1", "=0"), "jobscript", "GPU045", ONE), []);
  assert.deepEqual(lintManifestCode(SCRIPT, "jobscript", "GPU045"), []);
  assert.deepEqual(lintManifestCode(SCRIPT, "jobscript", "GPU045", TWO), []);
  assert.deepEqual(
    lintManifestCode("python warmup.py\nexport CUDA_VISIBLE_DEVICES=3\n./bench\n", "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("#!/bin/bash\n#SBATCH --gres=gpu:4\n" + SCRIPT.slice(12), "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=3\ndeepspeed train.py\n", "jobscript", "GPU045", ONE),
    [],
  );
  assert.deepEqual(
    lintManifestCode("export CUDA_VISIBLE_DEVICES=3\nenv -i python train.py\n", "jobscript", "GPU045", ONE),
    [],
  );
});
