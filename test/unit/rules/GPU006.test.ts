import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { initEngine } from "../../../server/src/engine/lint";
import { lintNotebook } from "../../../server/src/engine/notebook";
import { fixtureTests } from "./fixtureCheck";

/** Preview on: these tests document every check of the rule, preview ones too (ecosystemPatterns.test.ts tests the default set). */
const PREVIEW = { preview: true } as const;

fixtureTests("GPU006");

const SRC = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n';

test("GPU006 is information on the write and names both orders", async () => {
  const [d] = await lintCode(SRC, "GPU006", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 40 } });
  assert.equal(d.severity, "information");
  assert.match(d.message, /CUDA_VISIBLE_DEVICES="1"/);
  assert.match(d.message, /fastest-first/);
  assert.match(d.message, /PCI bus order/);
});

test("GPU006 fix inserts CUDA_DEVICE_ORDER above the write; re-linting offers nothing more", async () => {
  const [d] = await lintCode(SRC, "GPU006", PREVIEW);
  assert.equal(d.fix?.title, 'Insert CUDA_DEVICE_ORDER="PCI_BUS_ID" above');
  assert.equal(d.fix?.safe, true);
  const fixed = applyFix(SRC, d);
  assert.equal(
    fixed,
    'import os\n\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n',
  );
  assert.deepEqual(await lint(fixed, PREVIEW), []);
});

test("GPU006 fix keeps the indentation, the environ alias and CRLF", async () => {
  const src = "from os import environ as env\r\nif True:\r\n    env['CUDA_VISIBLE_DEVICES'] = '0,1'\r\n";
  const [d] = await lintCode(src, "GPU006", PREVIEW);
  assert.equal(
    applyFix(src, d),
    "from os import environ as env\r\nif True:\r\n    env[\"CUDA_DEVICE_ORDER\"] = \"PCI_BUS_ID\"\r\n    env['CUDA_VISIBLE_DEVICES'] = '0,1'\r\n",
  );
});

test("GPU006 fix on a one-line if puts the order first on the same line", async () => {
  const src = 'import os\nif True: os.environ["CUDA_VISIBLE_DEVICES"] = "2"\n';
  const [d] = await lintCode(src, "GPU006", PREVIEW);
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    'import os\nif True: os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"; os.environ["CUDA_VISIBLE_DEVICES"] = "2"\n',
  );
  assert.deepEqual(await lintCode(fixed, "GPU006", PREVIEW), []);
});

test("GPU006: an order written after CUDA started does not count (and GPU001 reports it)", async () => {
  const src =
    'import os\nimport torch\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ntorch.cuda.init()\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\n';
  const ds = await lint(src, PREVIEW);
  assert.deepEqual(
    ds.filter((d) => d.code === "GPU006").map((d) => d.range.start.line),
    [2],
  );
  assert.ok(ds.some((d) => d.code === "GPU001" && d.range.start.line === 4));
});

test("GPU006 in a notebook %env line is reported without a fix", async () => {
  await initEngine();
  const { diagnostics } = lintNotebook([{ kind: "code", text: "%env CUDA_VISIBLE_DEVICES=1\nimport torch" }], PREVIEW);
  const d = diagnostics.find((x) => x.code === "GPU006");
  assert.ok(d);
  assert.equal(d.cell, 0);
  assert.equal(d.fix, undefined);
});
