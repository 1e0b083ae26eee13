import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU032");

test("GPU032 warns on PYTORCH_ENABLE_MPS_FALLBACK after an aliased torch import and points at it", async () => {
  const [d] = await lintCode(
    'import os\nimport torch as th\nos.environ.setdefault("PYTORCH_ENABLE_MPS_FALLBACK", "1")\n',
    "GPU032",
  );
  assert.equal(d.severity, "warning");
  assert.match(d.message, /after `import torch as th` \(line 2\)/);
  assert.match(d.message, /MPS Environment Variables/);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 0 });
});

test("GPU032: the ZE_AFFINITY_MASK card.tile check is preview only, and silent in COMPOSITE mode", async () => {
  const src = 'import os\nos.environ["ZE_AFFINITY_MASK"] = "0.0,0.1"\n';
  assert.deepEqual(await lintCode(src, "GPU032"), []);
  const [d] = await lintCode(src, "GPU032", { preview: true });
  assert.match(d.message, /card\.tile form \(0\.0, 0\.1\).*the default when ZE_FLAT_DEVICE_HIERARCHY is unset/);
  assert.deepEqual(
    await lintCode('import os\nos.environ["ZE_FLAT_DEVICE_HIERARCHY"] = "composite"\n' + src.slice(10), "GPU032", {
      preview: true,
    }),
    [],
  );
});
