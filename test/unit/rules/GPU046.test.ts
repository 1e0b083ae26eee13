import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { literalOrdinal } from "../../../server/src/engine/rules/GPU046-ultralytics-device-after-cuda-init";
import {
  pinnedReleases,
  RETURNS_REQUESTED_FROM,
  STOPS_WRITING_FROM,
} from "../../../server/src/engine/rules/shared/ultralytics";

fixtureTests("GPU046");

/** The project's pin of a release that writes CUDA_VISIBLE_DEVICES and returns cuda:0 after CUDA started (8.0.0 to 8.4.84; ultralytics#19084 ran 8.3.59). */
const OLD = { libraryPins: { ultralytics: "==8.3.59" } };

test("GPU046: error on device=N after is_available(), names the source, the init line and the GPU it really uses", async () => {
  const src =
    'import torch\nfrom ultralytics import YOLO\n\nif torch.cuda.is_available():\n    pass\nmodel = YOLO("m.pt")\nmodel.predict("a.mp4", device=2, stream=True)\n';
  const [d, ...rest] = await lintCode(src, "GPU046", OLD);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [6, 23, 31]);
  assert.equal(
    d.message,
    "The pinned ultralytics==8.3.59 applies device=2 by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (ultralytics/utils/torch_utils.py select_device), but CUDA was already initialised by torch.cuda.is_available() (line 4): the write has no effect, so this runs on the first GPU the process sees (GPU 0), not GPU 2; set CUDA_VISIBLE_DEVICES=2 before CUDA is initialised and pass device=0",
  );
  assert.equal(d.related?.[0].range.start.line, 3);
});

test("GPU046: an import that initialises CUDA (the catalogue) counts, and its entry is quoted", async () => {
  const [d] = await lintCode(
    'import torch_geometric\nfrom ultralytics import YOLO\nmodel = YOLO("m.pt")\nmodel.train(data="c.yaml", device="cuda:1")\n',
    "GPU046",
    OLD,
  );
  assert.match(
    d.message,
    /initialised by import torch_geometric \(line 1: torch_geometric .* initialises CUDA when imported/,
  );
});

test("GPU046 stays silent: no init before, device 0, a list, a variable, a non-Ultralytics object, a call in a function nobody calls", async () => {
  for (const src of [
    'from ultralytics import YOLO\nimport torch\nm = YOLO("m.pt")\nm.predict("a", device=1)\ntorch.cuda.is_available()\n',
    'import torch\nfrom ultralytics import YOLO\ntorch.cuda.is_available()\nm = YOLO("m.pt")\nm.predict("a", device=0)\n',
    'import torch\nfrom ultralytics import YOLO\ntorch.cuda.is_available()\nm = YOLO("m.pt")\nm.train(data="c", device="0,1")\n',
    'import torch\nfrom ultralytics import YOLO\ntorch.cuda.is_available()\nm = YOLO("m.pt")\nd = 1\nm.predict("a", device=d)\n',
    'import torch\nfrom mylib import Detector\ntorch.cuda.is_available()\nm = Detector("m.pt")\nm.predict("a", device=1)\n',
    'import torch\nfrom ultralytics import YOLO\ntorch.cuda.is_available()\ndef run():\n    m = YOLO("m.pt")\n    m.predict("a", device=1)\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU046", OLD), [], src);
});

test("GPU046 reads device= as Ultralytics does: ints, digit strings and cuda:N name one GPU; lists, names and -1 do not", async () => {
  const cases: Array<[string, number | null]> = [
    ["2", 2],
    ['"2"', 2],
    ['"cuda:3"', 3],
    ['"CUDA:1"', 1],
    ['" 4 "', 4],
    ['"0,1"', null],
    ["gpu", null],
    ['"cpu"', null],
    ['"-1"', null],
    ["0", null],
  ];
  for (const [value, gpu] of cases) {
    const src = `import torch\nfrom ultralytics import YOLO\ntorch.cuda.is_available()\nm = YOLO("m.pt")\nm.val(device=${value})\n`;
    const found = await lintCode(src, "GPU046", OLD);
    assert.equal(found.length, gpu === null ? 0 : 1, value);
    if (gpu !== null) assert.match(found[0].message, new RegExp(`not GPU ${gpu};`), value);
  }
  assert.equal(literalOrdinal(null), null);
});

test("GPU046: an earlier Ultralytics call with a GPU device started CUDA: two cameras on two GPUs both run on the first call's GPU", async () => {
  const src =
    'from ultralytics import YOLO\n\ncam0 = YOLO("m.pt")\ncam1 = YOLO("m.pt")\ncam0.predict("a.mp4", device=0)\ncam1.predict("b.mp4", device=1)\n';
  const [d, ...rest] = await lintCode(src, "GPU046", OLD);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  assert.equal(
    d.message,
    'The pinned ultralytics==8.3.59 applies device=1 by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (ultralytics/utils/torch_utils.py select_device), but CUDA was already initialised by an Ultralytics call with device=0 (line 5: its select_device calls torch.cuda.is_available()): the write has no effect, so this runs on the first GPU the process sees (GPU 0), not GPU 1; pass each model its GPU as a torch.device (device=torch.device("cuda:1"), used as it is, without the write)',
  );
  assert.equal(d.related?.[0].range.start.line, 4);
  // The first call chose GPU 2 before CUDA started: the process then has GPU 2 only.
  const two = src.replace("device=0", "device=2");
  assert.match((await lintCode(two, "GPU046", OLD))[0].message, /sees \(GPU 2\), not GPU 1/);
  // A first call on the CPU starts no CUDA here; a torch.device is not read.
  assert.deepEqual(await lintCode(src.replace("device=0", 'device="cpu"'), "GPU046", OLD), []);
});

const AFTER_CHECK =
  'import torch\nfrom ultralytics import YOLO\n\nassert torch.cuda.is_available()\nmodel = YOLO("m.pt")\nmodel.predict("a.mp4", device=2)\n';

test("GPU046 unpinned: a preview warning that names the releases (before 8.4.85) and the upgrade; nothing in the default set", async () => {
  assert.deepEqual(await lintCode(AFTER_CHECK, "GPU046"), [], "an unpinned install gets the newest release");
  const [d, ...rest] = await lintCode(AFTER_CHECK, "GPU046", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(
    d.message,
    "With Ultralytics before 8.4.85, device=2 is applied by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (ultralytics/utils/torch_utils.py select_device), but CUDA was already initialised by torch.cuda.is_available() (line 4): the write has no effect, so this runs on the first GPU the process sees (GPU 0), not GPU 2; set CUDA_VISIBLE_DEVICES=2 before CUDA is initialised and pass device=0, or use ultralytics 8.4.87 or later (it selects the GPU with torch.cuda.set_device and leaves CUDA_VISIBLE_DEVICES alone)",
  );
});

test("GPU046 default only where the pin admits only 8.0.0 to 8.4.84; preview where it admits 8.4.85 or 8.4.86 or releases beyond; silent from 8.4.87", async () => {
  assert.deepEqual(
    [
      "==8.3.59",
      "~=8.3.0",
      ">=8.0,<8.4.85",
      "==8.4.85",
      "==8.4.86",
      ">=8.0.0",
      "<8.4",
      "==8.4.87",
      ">=8.4.87",
      undefined,
    ].map((pin) => pinnedReleases(pin, RETURNS_REQUESTED_FROM, STOPS_WRITING_FROM)),
    ["all", "all", "all", "some", "some", "some", "some", "none", "none", "some"],
  );
  for (const pin of ["==8.3.59", ">=8.1,<8.4.85"]) {
    const [d, ...rest] = await lintCode(AFTER_CHECK, "GPU046", { libraryPins: { ultralytics: pin } });
    assert.equal(rest.length, 0, pin);
    assert.equal(d.severity, "error", pin);
    assert.ok(d.message.startsWith(`The pinned ultralytics${pin} applies device=2 `), pin);
    assert.doesNotMatch(d.message, /8\.4\.87 or later/, pin);
  }
  for (const pin of [">=8.0.0", "==8.4.85", "==8.4.86"]) {
    assert.deepEqual(await lintCode(AFTER_CHECK, "GPU046", { libraryPins: { ultralytics: pin } }), [], pin);
    const [d] = await lintCode(AFTER_CHECK, "GPU046", { libraryPins: { ultralytics: pin }, preview: true });
    assert.equal(d?.severity, "warning", pin);
    assert.match(d.message, /^With Ultralytics before 8\.4\.85, /, pin);
  }
  for (const pin of [">=8.4.87", "==8.4.114"])
    assert.deepEqual(
      await lintCode(AFTER_CHECK, "GPU046", { libraryPins: { ultralytics: pin }, preview: true }),
      [],
      pin,
    );
});
