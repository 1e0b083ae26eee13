import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU031");

test("GPU031 is an error naming the HIP indices outside what ROCR left, and says all GPUs are hidden when none is in range", async () => {
  const [d] = await lintCode(
    'import os\nos.environ["ROCR_VISIBLE_DEVICES"] = "3"\nos.environ["HIP_VISIBLE_DEVICES"] = "1,2"\n',
    "GPU031",
  );
  assert.equal(d.severity, "error");
  assert.match(
    d.message,
    /ROCR_VISIBLE_DEVICES="3" \(line 2\) left, 1 device \(HIP index 0\), so 1, 2 do not exist and no GPU is left/,
  );
  assert.match(d.message, /pytorch\/pytorch#142292/);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 0 });
});

test("GPU031: a HIP index inside the ROCR list, or a ROCR value GPU Pilot cannot read, is not reported", async () => {
  assert.deepEqual(
    await lintCode(
      'import os\nos.environ["ROCR_VISIBLE_DEVICES"] = "4,5,6"\nos.environ["HIP_VISIBLE_DEVICES"] = "0,2"\n',
      "GPU031",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nos.environ["ROCR_VISIBLE_DEVICES"] = "all"\nos.environ["HIP_VISIBLE_DEVICES"] = "3"\n',
      "GPU031",
    ),
    [],
  );
});

test("GPU031: HIP and CUDA_VISIBLE_DEVICES with different values is a warning citing rocm-systems#10473", async () => {
  const [d] = await lintCode(
    'import os\nos.environ["HIP_VISIBLE_DEVICES"] = "0"\nos.environ["CUDA_VISIBLE_DEVICES"] = "0, 1"\n',
    "GPU031",
  );
  assert.equal(d.severity, "warning");
  assert.match(d.message, /ROCm\/rocm-systems#10473/);
  assert.deepEqual(
    await lintCode(
      'import os\nos.environ["HIP_VISIBLE_DEVICES"] = "0,1"\nos.environ["CUDA_VISIBLE_DEVICES"] = "0, 1"\n',
      "GPU031",
    ),
    [],
  );
});
