import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lintCode, projectTree } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex } from "../../../server/src/engine/python/project";
import { DEFAULT_EAGER_INIT_MODULES } from "../../../server/src/engine/frameworks";
import { pinnedWrite } from "../../../server/src/engine/rules/GPU053-ultralytics-device-narrows-process";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU053");

const SRC =
  'import torch\nfrom ultralytics import YOLO\n\nmodel = YOLO("m.pt")\nboxes = model.predict("a.mp4", device="cuda:0")\nx = torch.ones(2).to("cuda:1")\n';

test("GPU053 (preview without a pin): warning on device= when CUDA had not started, naming the later ordinal the process no longer has", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU053"), [], "preview: off in the default set");
  const [d, ...rest] = await lintCode(SRC, "GPU053", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [4, 31, 46]);
  assert.equal(
    d.message,
    'Ultralytics before 8.4.87 applies device="cuda:0" by writing CUDA_VISIBLE_DEVICES="0" (ultralytics/utils/torch_utils.py select_device) and nothing has started CUDA yet, so from here on the process sees GPU 0 alone, as device 0: "cuda:1" (line 6) names device 1, which does not exist then (invalid device ordinal); pass device=torch.device("cuda:0") (from 8.0.179 used as it is, without the write), or start CUDA before this call, or use ultralytics 8.4.87 or later (it selects the GPU with torch.cuda.set_device)',
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
  assert.equal(
    (await lintCode(second, "GPU046", { preview: true })).length,
    1,
    "GPU046 says where the second model runs",
  );
  const thenTorch = second.replace('device="cuda:1")', 'device="cuda:1")\nx = torch.zeros(1, device="cuda:1")');
  const [d] = await lintCode("import torch\n" + thenTorch, "GPU053", { preview: true });
  assert.equal(d?.related?.[0].range.start.line, 7, "a torch use after both calls is still named");
});

/** The project's pin of a release that writes CUDA_VISIBLE_DEVICES (8.0.0 up to 8.4.86). */
const OLD = { libraryPins: { ultralytics: "==8.3.100" } };

test("GPU053 (default, error): the project pins an ultralytics that writes the variable and every import and call before the model call is known", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU053", OLD);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.match(
    d.message,
    /^The pinned ultralytics==8\.3\.100 applies device="cuda:0" by writing CUDA_VISIBLE_DEVICES="0" /,
  );
  assert.doesNotMatch(d.message, /8\.4\.87 or later/);
  // In a function called later: every import of the module counts, and these are all known.
  const inMain =
    'import torch\nfrom ultralytics import YOLO\nimport argparse\n\ndef main():\n    model = YOLO("m.pt")\n    model.predict("a.mp4", device=0)\n    torch.cuda.set_device(1)\n\nif __name__ == "__main__":\n    main()\n';
  assert.equal((await lintCode(inMain, "GPU053", OLD))[0]?.severity, "error");
});

test("GPU053 default: only a pin inside 8.0.0 to 8.4.86 settles the write; a pin from 8.4.87 on silences the rule", async () => {
  assert.deepEqual(
    ["==8.3.100", "~=8.2.0", ">=8.0,<8.4.87", "==8.4.87", ">=8.4.87", ">=8.0.0", "<8.4", "==7.1", undefined].map(
      pinnedWrite,
    ),
    ["all", "all", "all", "none", "none", "some", "some", "some", "some"],
  );
  for (const pin of [">=8.0.0", "<8.4"]) {
    assert.deepEqual(await lintCode(SRC, "GPU053", { libraryPins: { ultralytics: pin } }), [], pin);
    assert.equal(
      (await lintCode(SRC, "GPU053", { libraryPins: { ultralytics: pin }, preview: true }))[0]?.severity,
      "warning",
    );
  }
  assert.deepEqual(await lintCode(SRC, "GPU053", { libraryPins: { ultralytics: ">=8.4.87" }, preview: true }), []);
});

test("GPU053 default: silent (preview only) where an import or a call before the model call could have started CUDA unseen", async () => {
  const cases = {
    uncatalogued: SRC.replace("import torch\n", "import torch\nimport some_gpu_lib\n"),
    inFunctionBefore: SRC.replace("import torch\n", "import torch\n\ndef setup():\n    import some_gpu_lib\n\n"),
    importAfterDefBeforeCall:
      'import torch\nfrom ultralytics import YOLO\n\ndef run():\n    YOLO("m.pt").predict("a.mp4", device=0)\n    torch.cuda.set_device(1)\n\nimport some_gpu_lib\nrun()\n',
    relative: SRC.replace("import torch\n", "import torch\nfrom .helpers import prepare\n"),
    unknownTorchCall: SRC.replace('model = YOLO("m.pt")', 'state = torch.load("w.pt")\nmodel = YOLO("m.pt")'),
    toDevice: SRC.replace('model = YOLO("m.pt")', 'net = make().to(dev)\nmodel = YOLO("m.pt")'),
    dynamic: SRC.replace(
      'model = YOLO("m.pt")',
      'import importlib\nimportlib.import_module(name)\nmodel = YOLO("m.pt")',
    ),
  };
  for (const [name, code] of Object.entries(cases)) {
    assert.deepEqual(await lintCode(code, "GPU053", OLD), [], name);
    assert.equal((await lintCode(code, "GPU053", { ...OLD, preview: true }))[0]?.severity, "warning", name);
  }
  // A seed starts nothing (ground-truth.md): still the default finding.
  const seeded = SRC.replace('model = YOLO("m.pt")', 'torch.manual_seed(0)\nmodel = YOLO("m.pt")');
  assert.equal((await lintCode(seeded, "GPU053", OLD))[0]?.severity, "error");
});

test("GPU053 default: a project module imported before the call keeps the finding in preview; one that starts CUDA at import silences it", async () => {
  await lintCode("x = 1\n", "GPU053"); // the parser, ready
  const run = (helpers: string) => {
    const dir = projectTree({
      "helpers.py": helpers,
      "main.py":
        'import torch\nimport helpers\nfrom ultralytics import YOLO\n\nYOLO("m.pt").predict("a.mp4", device=0)\nx = torch.ones(2).to("cuda:1")\n',
    });
    const path = join(dir, "main.py");
    const project = new ProjectIndex().lookupFor(path, {
      eagerInitModules: DEFAULT_EAGER_INIT_MODULES,
      torchBelow24: false,
    });
    const lint = (preview: boolean) => {
      const r = lintPython(readFileSync(path, "utf8"), { project, preview, ...OLD });
      r.tree?.delete();
      return r.diagnostics.filter((d) => d.code === "GPU053").map((d) => d.severity);
    };
    const out = [lint(false), lint(true)];
    rmSync(dir, { recursive: true, force: true });
    return out;
  };
  assert.deepEqual(run("import some_gpu_lib\nX = 1\n"), [[], ["warning"]]);
  assert.deepEqual(run("import torch\ntorch.cuda.init()\n"), [[], []]);
});
