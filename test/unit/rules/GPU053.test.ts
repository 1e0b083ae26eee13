import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU053");

const SRC =
  'import torch\nfrom ultralytics import YOLO\n\nmodel = YOLO("m.pt")\nboxes = model.predict("a.mp4", device="cuda:0")\nx = torch.ones(2).to("cuda:1")\n';

test("GPU053 (preview): warning on device= when CUDA had not started, naming the later ordinal the process no longer has", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU053"), [], "preview: off in the default set");
  const [d, ...rest] = await lintCode(SRC, "GPU053", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [4, 31, 46]);
  assert.equal(
    d.message,
    'Ultralytics applies device="cuda:0" by writing CUDA_VISIBLE_DEVICES="0" (ultralytics/utils/torch_utils.py select_device) and nothing has started CUDA yet, so from here on the process sees GPU 0 alone, as device 0: "cuda:1" (line 6) names device 1, which does not exist then (invalid device ordinal); pass device=torch.device("cuda:0") (used as it is, without the write), or start CUDA before this call',
  );
  assert.equal(d.related?.[0].range.start.line, 5);
});

test("GPU053: silent when CUDA started first, when the ordinal comes before the call or in another function, and for device=cpu", async () => {
  const started = SRC.replace('model = YOLO("m.pt")', 'torch.cuda.init()\nmodel = YOLO("m.pt")');
  assert.deepEqual(await lintCode(started, "GPU053", { preview: true }), []);
  const before =
    'import torch\nfrom ultralytics import YOLO\nx = torch.ones(2).to("cuda:1")\nYOLO("m.pt").predict("a.mp4", device=0)\n';
  assert.deepEqual(await lintCode(before, "GPU053", { preview: true }), []);
  const elsewhere = SRC.replace(
    'x = torch.ones(2).to("cuda:1")',
    'def later():\n    return torch.ones(2).to("cuda:1")',
  );
  assert.deepEqual(await lintCode(elsewhere, "GPU053", { preview: true }), []);
  assert.deepEqual(await lintCode(SRC.replace('device="cuda:0"', 'device="cpu"'), "GPU053", { preview: true }), []);
});

test("GPU053: silent when the later ordinal is another Ultralytics call's device= (its select_device takes cuda:0; GPU046 reports it)", async () => {
  const second =
    'from ultralytics import YOLO\n\ndet = YOLO("det.pt")\nseg = YOLO("seg.pt")\na = det.predict("x.jpg", device="cuda:0")\nb = seg.predict("x.jpg", device="cuda:1")\n';
  assert.deepEqual(await lintCode(second, "GPU053", { preview: true }), []);
  assert.equal((await lintCode(second, "GPU046")).length, 1, "GPU046 says where the second model runs");
  const thenTorch = second.replace('device="cuda:1")', 'device="cuda:1")\nx = torch.zeros(1, device="cuda:1")');
  const [d] = await lintCode("import torch\n" + thenTorch, "GPU053", { preview: true });
  assert.equal(d?.related?.[0].range.start.line, 7, "a torch use after both calls is still named");
});
