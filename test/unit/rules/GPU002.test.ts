import assert from "node:assert/strict";
import { test } from "node:test";
import { lint as lintAll, lintCode, applyFix } from "../support/helpers";
import type { LintOptions } from "../../../server/src/engine/lint";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU002");

/** These tests are about the timing rules; later rules (GPU006's device-order hint, GPU008, GPU010) have their own tests. */
const lint = (text: string, options: LintOptions = {}) =>
  lintAll(text, { select: ["GPU001", "GPU002", "GPU003", "GPU004"], ...options });

test("GPU002 is information on the write (the program works as written), naming the import", async () => {
  const src =
    'import os\nimport torch as th\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = th.ones(4, device="cuda")\n';
  assert.deepEqual(await lintCode(src, "GPU002"), [], "works as written: hygiene, preview only");
  const [d] = await lintCode(src, "GPU002", { preview: true });
  assert.equal(d.severity, "information");
  assert.equal(d.range.start.line, 3);
  assert.match(d.message, /`import torch as th` \(line 2\)/);
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch as th\n\nx = th.ones(4, device="cuda")\n',
  );
  assert.deepEqual(await lint(fixed), []);
});

test("GPU002 fix for a multi-line update keeps it whole", async () => {
  const src = 'import torch\nimport os\nos.environ.update({\n    "CUDA_VISIBLE_DEVICES": "0",\n})\n';
  const [d] = await lintCode(src, "GPU002", { preview: true });
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    'import os\nos.environ.update({\n    "CUDA_VISIBLE_DEVICES": "0",\n})\nimport torch\nimport os\n',
  );
});

test("putenv is GPU015's business, not GPU002's", async () => {
  const src = 'import os\nimport torch\nos.putenv("CUDA_VISIBLE_DEVICES", "1")\n';
  assert.deepEqual(await lintCode(src, "GPU002"), []);
});

test("GPU002 in the default set: an unmeasured GPU library between the framework import and the write", async () => {
  // vllm brings torch but is neither measured nor catalogued: its import may initialise CUDA.
  const src =
    'import os\nimport torch\nfrom vllm import LLM\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nllm = LLM("m")\n';
  const [d] = await lintCode(src, "GPU002");
  assert.equal(d.severity, "information");
  assert.equal(d.range.start.line, 3);
  assert.match(d.message, /it works only if `vllm` \(imported on line 3\) does not initialise CUDA/);
});

test("GPU002 names the framework import itself when it is an unmeasured GPU library", async () => {
  const src = 'import os\nfrom diffusers import StableDiffusionPipeline\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const [d] = await lintCode(src, "GPU002");
  assert.match(d.message, /it works only if `diffusers` \(imported on line 2\)/);
  assert.ok(!/measured/.test(d.message), "no measurement is claimed for diffusers");
});

test("GPU002 leaves to preview a write behind a library with no known GPU code, or behind measured ones only", async () => {
  // gymnasium is no GPU library and not catalogued: preview names it; the default set is silent.
  const gym = 'import os\nimport torch\nimport gymnasium\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(await lintCode(gym, "GPU002"), []);
  const [p] = await lintCode(gym, "GPU002", { preview: true });
  assert.match(p.message, /works only if `gymnasium`/);
  // transformers and timm are measured lazy at import (initCatalogue.json); hypothesis has no CUDA code.
  const measured =
    'import os\nimport torch\nimport transformers\nimport timm\nimport hypothesis\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(await lintCode(measured, "GPU002"), []);
  const [m] = await lintCode(measured, "GPU002", { preview: true });
  assert.match(m.message, /it works today \(importing torch leaves CUDA uninitialised, measured\)/);
});

test("GPU002 says TensorFlow's import laziness is documented, not measured", async () => {
  const src = 'import os\nimport tensorflow as tf\nos.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"\n';
  const [d] = await lintCode(src, "GPU002", { preview: true });
  assert.match(d.message, /importing tensorflow leaves CUDA uninitialised, documented/);
});
