import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU038");

test("GPU038: CUDA_VISIBLE_DEVICES from SLURM_LOCALID directly or through a variable; the message names the variable", async () => {
  const direct = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]\n';
  const [d] = await lintCode(direct, "GPU038");
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 1);
  assert.match(d.message, /^CUDA_VISIBLE_DEVICES is set from SLURM_LOCALID, a task number, not a GPU id: /);
  const viaProcid =
    'import os\nrank = int(os.environ["SLURM_PROCID"])\nos.environ["CUDA_VISIBLE_DEVICES"] = str(rank % 8)\n';
  assert.match((await lintCode(viaProcid, "GPU038"))[0].message, /set from SLURM_PROCID/);
});

test("GPU038: silent for literal values, values chosen from CUDA_VISIBLE_DEVICES, and files that read no Slurm task number", async () => {
  assert.deepEqual(
    await lintCode('import os\nr = os.environ["SLURM_LOCALID"]\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', "GPU038"),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nr = int(os.environ["SLURM_LOCALID"])\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"].split(",")[r]\n',
      "GPU038",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nr = int(os.environ["LOCAL_RANK"])\nos.environ["CUDA_VISIBLE_DEVICES"] = str(r)\n',
      "GPU038",
    ),
    [],
  );
});
