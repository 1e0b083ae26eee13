import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU027");

test("GPU027 warns on JAX_PLATFORMS=gpu with the measured jax 0.11 failure; the fix (not safe) names cuda", async () => {
  const src = 'import os\nos.environ["JAX_PLATFORMS"] = "gpu,cpu"\nimport jax\n';
  const [d] = await lintCode(src, "GPU027");
  assert.equal(d.severity, "warning");
  assert.match(d.message, /Unable to initialize backend 'rocm'/);
  assert.equal(d.fix?.safe, false);
  assert.equal(applyFix(src, d), 'import os\nos.environ["JAX_PLATFORMS"] = "cuda,cpu"\nimport jax\n');
  assert.deepEqual(await lintCode(applyFix(src, d), "GPU027"), []);
});

test('GPU027 on jax.config.update("jax_platforms", "gpu") sits on the call', async () => {
  const [d] = await lintCode('import jax\njax.config.update("jax_platforms", "gpu")\n', "GPU027");
  assert.deepEqual(d.range, { start: { line: 1, character: 0 }, end: { line: 1, character: 41 } });
  assert.match(d.message, /^jax_platforms="gpu"/);
});
