import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { notebookHostOf, readIpynb } from "../../../server/src/engine/notebook";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU068");

const SRC = "from accelerate import notebook_launcher\n\nnotebook_launcher(train, (model,))\n";

test("GPU068: notebook_launcher without a process count is a warning on the call, in the default set", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU068");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 34 } });
  assert.match(d.message, /^notebook_launcher\(\) without num_processes stops with "ValueError: You have to specify/);
  assert.match(d.message, /Colab runtime with fewer than two GPUs/);
});

test("GPU068: a count by keyword, third position or **kwargs, another library's notebook_launcher, and a launcher in a function are judged as such", async () => {
  const silent = [
    "from accelerate import notebook_launcher\nnotebook_launcher(train, (), num_processes=2)\n",
    "from accelerate import notebook_launcher\nnotebook_launcher(train, (), 4)\n",
    "from accelerate import notebook_launcher\nnotebook_launcher(train, **launch_kwargs)\n",
    "from mylib import notebook_launcher\nnotebook_launcher(train, ())\n",
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU068", { preview: true }), [], src);
  const inFunction =
    'import accelerate\n\n\ndef main():\n    accelerate.notebook_launcher(train, args=(1,), mixed_precision="fp16")\n';
  assert.deepEqual(
    (await lintCode(inFunction, "GPU068", { preview: true })).map((d) => d.range.start.line),
    [4],
  );
});

test("GPU068: silent in a notebook saved from Colab (metadata.colab, as an .ipynb or as VS Code's notebook metadata); readIpynb and notebookHostOf read the key", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU068", { preview: true, notebookHost: "colab" }), []);
  const ipynb = (metadata: unknown) =>
    JSON.stringify({ cells: [{ cell_type: "code", source: ["x = 1\n"] }], metadata, nbformat: 4, nbformat_minor: 5 });
  assert.equal(readIpynb(ipynb({ colab: { provenance: [] }, accelerator: "GPU" })).host, "colab");
  assert.equal(readIpynb(ipynb({ kernelspec: { name: "python3" } })).host, undefined);
  assert.equal(readIpynb(ipynb(undefined)).cells[0].text, "x = 1\n");
  assert.equal(notebookHostOf({ metadata: { colab: {} }, nbformat: 4 }), "colab", "VS Code's ipynb metadata");
  assert.equal(notebookHostOf({ custom: { metadata: { colab: {} } } }), "colab", "older VS Code");
  assert.equal(notebookHostOf({ metadata: { kernelspec: {} } }), undefined);
  // Kaggle: its TPU runtime sets the count, and accelerate before 0.20 ran its GPU runtime in-process.
  assert.equal(readIpynb(ipynb({ kaggle: { accelerator: "gpu" } })).host, "kaggle");
  assert.deepEqual(await lintCode(SRC, "GPU068", { notebookHost: "kaggle" }), []);
  assert.equal((await lintCode(SRC, "GPU068", {})).length, 1, "a workstation's notebook");
  assert.equal(notebookHostOf(["colab"]), undefined);
  assert.equal(notebookHostOf(null), undefined);
});
