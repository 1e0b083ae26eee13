import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU058");

test("GPU058: a percentage where JAX takes a fraction is a warning on the write, with the fraction it meant", async () => {
  const [d, ...rest] = await lintCode(
    'import os\n\nos.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = "90"\nimport jax\n',
    "GPU058",
  );
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 2);
  assert.equal(
    d.message,
    `XLA_PYTHON_CLIENT_MEM_FRACTION="90" is read as a fraction of each GPU's memory, not a percentage: it asks JAX to preallocate 90 times the memory of each GPU when its backend starts. Write a value between 0 and 1 (for 90 %, write "0.9"), and leave room for cuDNN and NCCL (JAX's default is 0.75)`,
  );
  assert.equal(d.fix, undefined);
});

test("GPU058: values from 0 to 1 and values that are not plain numbers are left alone; above 1 is reported", async () => {
  const found = async (value: string) =>
    (await lintCode(`import os\nos.environ["XLA_CLIENT_MEM_FRACTION"] = "${value}"\n`, "GPU058")).length;
  for (const v of ["0.9", ".5", "1", "1.0", "0.75+", "90%", "$FRACTION"]) assert.equal(await found(v), 0, v);
  for (const v of ["1.5", "100", "250"]) assert.equal(await found(v), 1, v);
});
