import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU029");

test("GPU029 is an error pointing at the call that started the backend", async () => {
  const [d] = await lintCode('import jax\nn = jax.device_count()\njax.config.update("jax_platforms", "cpu")\n', "GPU029");
  assert.equal(d.severity, "error");
  assert.match(d.message, /after `jax\.device_count\(\)` \(line 2\) started JAX's backend/);
  assert.match(d.message, /JAX_PLATFORMS=cpu/);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 4 });
});

test("GPU029: import jax and other config updates do not start the backend (measured)", async () => {
  assert.deepEqual(await lintCode('import jax\nimport flax\njax.config.update("jax_enable_x64", True)\njax.config.update("jax_platforms", "cpu")\n', "GPU029"), []);
});
