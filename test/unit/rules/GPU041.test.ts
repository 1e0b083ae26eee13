import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU041");

test("GPU041 warns on JAX_PLATFORMS after import jax, names the import and the source, and moves the write above it", async () => {
  const src = 'import os\nimport jax\n\nos.environ["JAX_PLATFORMS"] = "cpu"\nprint(jax.devices())\n';
  const [d, ...rest] = await lintCode(src, "GPU041");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual([d.range.start.line, d.related?.[0].range.start.line], [3, 1]);
  assert.match(d.message, /^JAX_PLATFORMS is set after `import jax` \(line 2\): JAX read it when it was imported/);
  assert.match(d.message, /jax\/_src\/config\.py/);
  assert.equal(d.fix?.title, "Move the JAX_PLATFORMS write above `import jax`");
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n\nprint(jax.devices())\n');
  assert.deepEqual(await lintCode(fixed, "GPU041"), []);
});

test("GPU041: the deprecated JAX_PLATFORM_NAME too; a torch import alone, a write before jax, putenv and other variables are not it", async () => {
  const [d] = await lintCode(
    'import os\nfrom jax import numpy as jnp\nos.environ["JAX_PLATFORM_NAME"] = "cpu"\n',
    "GPU041",
  );
  assert.match(d.message, /^JAX_PLATFORM_NAME is set after `from jax import numpy as jnp` \(line 2\)/);
  for (const src of [
    'import os\nimport torch\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n',
    'import os\nos.environ["JAX_PLATFORMS"] = "cpu"\nimport jax\n',
    'import os\nimport jax\nos.putenv("JAX_PLATFORMS", "cpu")\n',
    'import os\nimport jax\nos.environ["JAX_ENABLE_X64"] = "1"\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU041"), [], src);
});

test("GPU041 follows a module function called after the import", async () => {
  const viaFunction = 'import os\nimport jax\ndef force_cpu():\n    os.environ["JAX_PLATFORMS"] = "cpu"\nforce_cpu()\n';
  assert.deepEqual(
    (await lintCode(viaFunction, "GPU041")).map((d) => d.range.start.line),
    [3],
  );
});
