import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

const TWO_H200 = {
  gpuCount: 2,
  uuids: ["GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", "GPU-6486822f-842c-1320-f829-e4155c0d2130"],
};
fixtureTests("GPU017", { machine: TWO_H200 });

test("GPU017 is off when the machine is unknown", async () => {
  assert.deepEqual(await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "7"\n', "GPU017"), []);
});

test("GPU017 explains what CUDA keeps (ground truth: parsing stops at a missing id)", async () => {
  const [d] = await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,7,0"\n', "GPU017", {
    machine: TWO_H200,
  });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /GPU 7 does not exist on this machine \(2 GPUs: 0\.\.1\)/);
  assert.match(d.message, /only 1 stays visible and 0 is dropped/);
});

test("GPU017 matches UUIDs and unique UUID prefixes against the inventory", async () => {
  const ok = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "GPU-6486822f-842c"\n';
  assert.deepEqual(await lintCode(ok, "GPU017", { machine: TWO_H200 }), []);
  const bad = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "GPU-00000000"\n';
  assert.equal((await lintCode(bad, "GPU017", { machine: TWO_H200 })).length, 1);
});
