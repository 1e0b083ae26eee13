import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

/** Preview on: these tests document every check of the rule, preview ones too (ecosystemPatterns.test.ts tests the default set). */
const PREVIEW = { preview: true } as const;

fixtureTests("GPU010");

const C17 =
  "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(8, 8).cuda()\ndp = nn.DataParallel(model, device_ids=[1, 2])\n";

test("GPU010 sits on the DataParallel call, is an error and names both devices", async () => {
  const [d] = await lintCode(C17, "GPU010", PREVIEW);
  assert.deepEqual(d.range, { start: { line: 4, character: 5 }, end: { line: 4, character: 46 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /needs the module on cuda:1 \(device_ids\[0\]\), but `model` is on cuda:0 \(line 4\)/);
  assert.match(d.message, /module must have its parameters and buffers on device cuda:1/);
  assert.match(d.message, /DistributedDataParallel/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 3, character: 8 }, end: { line: 3, character: 30 } });
});

test("GPU010 fix moves the module to device_ids[0]; re-linting is clean", async () => {
  const [d] = await lintCode(C17, "GPU010", PREVIEW);
  assert.equal(d.fix?.title, 'Move the module to device_ids[0]: model.to("cuda:1")');
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(C17, d);
  assert.equal(
    fixed,
    'import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(8, 8).cuda()\ndp = nn.DataParallel(model.to("cuda:1"), device_ids=[1, 2])\n',
  );
  assert.deepEqual(await lintCode(fixed, "GPU010", PREVIEW), []);
});

test("GPU010 fix uses ids[0] when the ids are a name", async () => {
  const src =
    "import torch.nn as nn\nids = [2, 3]\nm = nn.Linear(1, 1).cuda()\ndp = nn.DataParallel(m, device_ids=ids)\n";
  const [d] = await lintCode(src, "GPU010", PREVIEW);
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    'import torch.nn as nn\nids = [2, 3]\nm = nn.Linear(1, 1).cuda()\ndp = nn.DataParallel(m.to(f"cuda:{ids[0]}"), device_ids=ids)\n',
  );
  assert.deepEqual(await lintCode(fixed, "GPU010", PREVIEW), []);
});

test("GPU010: .cuda() follows a literal set_device; an unknown device is not guessed", async () => {
  const src =
    "import torch\nimport torch.nn as nn\ntorch.cuda.set_device(1)\nm = nn.Linear(1, 1).cuda()\ndp = nn.DataParallel(m, device_ids=[1, 0])\n";
  assert.deepEqual(await lintCode(src, "GPU010", PREVIEW), []);
  const unknown =
    "import sys\nimport torch.nn as nn\nm = nn.Linear(1, 1).to(sys.argv[1])\ndp = nn.DataParallel(m, device_ids=[1, 0])\n";
  assert.deepEqual(await lintCode(unknown, "GPU010", PREVIEW), []);
});

test("GPU010 without device_ids is information only when the file restricts nothing", async () => {
  const src = "import torch.nn as nn\ndp = nn.DataParallel(nn.Linear(1, 1).cuda())\n";
  const [d] = await lintCode(src, "GPU010", PREVIEW);
  assert.equal(d.severity, "information");
  assert.deepEqual(d.range, { start: { line: 1, character: 5 }, end: { line: 1, character: 44 } });
  assert.match(d.message, /every visible GPU/);
  assert.match(d.message, /DistributedDataParallel/);
  assert.equal(d.fix, undefined);
  const restricted =
    'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n' + src;
  assert.deepEqual(await lintCode(restricted, "GPU010", PREVIEW), []);
});
