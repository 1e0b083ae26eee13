import assert from "node:assert/strict";
import { test } from "node:test";
import { lint as lintAll, lintCode, applyFix } from "../helpers";
import type { LintOptions } from "../../../server/src/engine/lint";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU002");

/** These tests are about the timing rules; later rules (GPU006's device-order hint, GPU008, GPU010) have their own tests. */
const lint = (text: string, options: LintOptions = {}) => lintAll(text, { select: ["GPU001", "GPU002", "GPU003", "GPU004"], ...options });

test("GPU002 is information on the write (the program works as written), naming the import", async () => {
  const src = 'import os\nimport torch as th\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = th.ones(4, device="cuda")\n';
  const [d] = await lintCode(src, "GPU002");
  assert.equal(d.severity, "information");
  assert.equal(d.range.start.line, 3);
  assert.match(d.message, /`import torch as th` \(line 2\)/);
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch as th\n\nx = th.ones(4, device="cuda")\n');
  assert.deepEqual(await lint(fixed), []);
});

test("GPU002 fix for a multi-line update keeps it whole", async () => {
  const src = 'import torch\nimport os\nos.environ.update({\n    "CUDA_VISIBLE_DEVICES": "0",\n})\n';
  const [d] = await lintCode(src, "GPU002");
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nos.environ.update({\n    "CUDA_VISIBLE_DEVICES": "0",\n})\nimport torch\nimport os\n');
});

test("putenv is GPU015's business, not GPU002's", async () => {
  const src = 'import os\nimport torch\nos.putenv("CUDA_VISIBLE_DEVICES", "1")\n';
  assert.deepEqual(await lintCode(src, "GPU002"), []);
});
