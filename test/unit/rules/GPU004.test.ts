import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU004");

test("GPU004 sits on the ordinal and its fix uses the physical GPU's position", async () => {
  const src =
    'import os\n\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\ntorch.cuda.set_device(1)\n';
  const [d] = await lintCode(src, "GPU004");
  assert.deepEqual(d.range, { start: { line: 6, character: 22 }, end: { line: 6, character: 23 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /physical GPU 1 is cuda:0/);
  assert.ok(applyFix(src, d).endsWith("torch.cuda.set_device(0)\n"));
});

test('GPU004 offers no fix that would repeat an id in a list (device_ids=[0, 1] under CUDA_VISIBLE_DEVICES="1" would become [0, 0])', async () => {
  const src =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\nm = torch.nn.DataParallel(torch.nn.Linear(1, 1), device_ids=[0, 1])\n';
  const [d, ...rest] = await lintCode(src, "GPU004");
  assert.equal(rest.length, 0);
  assert.match(d.message, /physical GPU 1 is cuda:0/);
  assert.equal(d.fix, undefined);
  // A list that does not hold the new ordinal keeps its fix.
  const [e] = await lintCode(src.replace("[0, 1]", "[1]"), "GPU004");
  assert.ok(applyFix(src.replace("[0, 1]", "[1]"), e).includes("device_ids=[0])"));
});

test("GPU004 string form keeps the quotes", async () => {
  const src =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "3,1"\nimport torch\nx = torch.ones(1, device="cuda:3")\n';
  const [d] = await lintCode(src, "GPU004");
  assert.ok(applyFix(src, d).endsWith('device="cuda:0")\n'));
});

test("GPU004 is silent when the file sets CUDA_VISIBLE_DEVICES to different values", async () => {
  const src =
    'import os\nimport sys\nif sys.argv[1] == "a":\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\nelse:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\nx = "cuda:1"\n';
  assert.deepEqual(await lintCode(src, "GPU004"), []);
});

test("GPU004 ignores a CUDA_VISIBLE_DEVICES write made after CUDA initialised (it has no effect: GPU001)", async () => {
  const src =
    'import os\nimport torch\n\nprint(torch.cuda.is_available())\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = torch.ones(1).to("cuda:1")\n';
  assert.deepEqual(await lintCode(src, "GPU004"), []);
});

test("GPU004: a device_map's integer values and transformers.pipeline(device=N) are ordinals (transformers: device_map = 0 means GPU 0)", async () => {
  const head = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nfrom transformers import AutoModel, pipeline\n';
  const [m, ...more] = await lintCode(
    head + 'm = AutoModel.from_pretrained("m", device_map={"": 1, "lm_head": 0})\n',
    "GPU004",
  );
  assert.equal(more.length, 0);
  assert.deepEqual(m.range, { start: { line: 3, character: 51 }, end: { line: 3, character: 52 } });
  const [p] = await lintCode(head + 'p = pipeline("fill-mask", model="m", device=1)\n', "GPU004");
  assert.deepEqual(p.range.start, { line: 3, character: 44 });
  const [b] = await lintCode(head + 'm = AutoModel.from_pretrained("m", device_map=1)\n', "GPU004");
  assert.deepEqual(b.range.start, { line: 3, character: 46 });
  // Ordinal 0, "auto" and another library's device= keyword are not reported.
  for (const body of [
    'm = AutoModel.from_pretrained("m", device_map={"": 0})\n',
    'm = AutoModel.from_pretrained("m", device_map="auto")\n',
    "import mylib\nx = mylib.run(device=1)\n",
  ])
    assert.deepEqual(await lintCode(head + body, "GPU004"), [], body);
});
