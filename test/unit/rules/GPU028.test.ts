import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU028");

test("GPU028 on the old name alone is a preview information, with a rename fix that is not safe", async () => {
  const src = 'import os\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".5"\n';
  assert.deepEqual(await lintCode(src, "GPU028"), [], "not in the default set (ecosystem: jax's own tests)");
  const [d] = await lintCode(src, "GPU028", { preview: true });
  assert.equal(d.severity, "information");
  assert.match(d.message, /deprecated in favour of XLA_CLIENT_MEM_FRACTION/);
  assert.equal(d.fix?.safe, false);
  assert.equal(applyFix(src, d), 'import os\nos.environ["XLA_CLIENT_MEM_FRACTION"] = ".5"\n');
});

test("GPU028 is an error when the file sets both names (measured: jax 0.11 raises ValueError)", async () => {
  const [d] = await lintCode(
    'import os\nos.environ["XLA_CLIENT_MEM_FRACTION"] = ".5"\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".5"\n',
    "GPU028",
  );
  assert.equal(d.severity, "error");
  assert.match(d.message, /Remove the latter one, it is deprecated.*falls back to the CPU/);
  assert.equal(d.fix, undefined);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 0 });
});
