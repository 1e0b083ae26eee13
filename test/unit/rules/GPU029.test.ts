import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU029");

test("GPU029 is an error pointing at the call that started the backend", async () => {
  const [d] = await lintCode(
    'import jax\nn = jax.device_count()\njax.config.update("jax_platforms", "cpu")\n',
    "GPU029",
  );
  assert.equal(d.severity, "error");
  assert.match(d.message, /after `jax\.device_count\(\)` \(line 2\) started JAX's backend/);
  assert.match(d.message, /JAX_PLATFORMS=cpu/);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 4 });
});

test("GPU029: import jax and other config updates do not start the backend (measured)", async () => {
  assert.deepEqual(
    await lintCode(
      'import jax\nimport flax\njax.config.update("jax_enable_x64", True)\njax.config.update("jax_platforms", "cpu")\n',
      "GPU029",
    ),
    [],
  );
});

test("GPU029 in a helper the module never calls: the backend started earlier in the same body, also when a caller inlines it", async () => {
  const helper =
    'def pick(cpu):\n    import jax\n    try:\n        ok = bool(jax.devices("gpu"))\n    except RuntimeError:\n        ok = False\n    if cpu and not ok:\n        jax.config.update("jax_platforms", "cpu")\n    return jax.devices()[0]\n';
  const [d] = await lintCode(helper, "GPU029");
  assert.equal(d.range.start.line, 7);
  assert.match(d.message, /^jax_platforms is set after `jax\.devices\(\)` \(line 4\) started JAX's backend/);
  const viaCaller =
    'def init(device):\n    return _cpu(device)\n\ndef _cpu(device):\n    import jax\n    jax.devices()\n    jax.config.update("jax_platforms", "cpu")\n';
  assert.deepEqual(
    (await lintCode(viaCaller, "GPU029")).map((x) => x.range.start.line),
    [6],
  );
  const before =
    'def pick():\n    import jax\n    jax.config.update("jax_platforms", "cpu")\n    return jax.devices()[0]\n';
  assert.deepEqual(await lintCode(before, "GPU029"), []);
});

test("GPU029: the older jax_platform_name after the backend started (measured: no effect, jax 0.11.2 on an H100); the message names jax_default_device, which does move later arrays", async () => {
  const src =
    'import jax\nimport jax.numpy as jnp\n\nx = jnp.ones(3)\njax.config.update("jax_platform_name", "cpu")\ny = jnp.zeros(3)\n';
  const [d, ...rest] = await lintCode(src, "GPU029");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range.start, { line: 4, character: 0 });
  assert.match(
    d.message,
    /^jax_platform_name is set after `.+` \(line 4\) started JAX's backend: the default platform is already chosen, so this has no effect \(measured: new arrays stay on the GPU and jax\.default_backend\(\) still says gpu\); set it before the first JAX call, or move later work with jax\.config\.update\("jax_default_device", jax\.devices\("cpu"\)\[0\]\)$/,
  );
  // Before the backend starts it works (measured): silent.
  assert.deepEqual(
    await lintCode(
      'import jax\njax.config.update("jax_platform_name", "cpu")\nimport jax.numpy as jnp\nx = jnp.ones(3)\n',
      "GPU029",
    ),
    [],
  );
});
