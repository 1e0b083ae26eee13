/**
 * python/deviceLoops.ts: whether a module puts work on each visible GPU in a loop over them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { initEngine } from "../../../../../server/src/engine/lint";
import { ModuleTrees } from "../../../../../server/src/engine/python/moduleTrees";
import { buildModel } from "../../../../../server/src/engine/python/model";
import { loopsOverDevices } from "../../../../../server/src/engine/python/deviceLoops";

async function loops(code: string): Promise<boolean> {
  await initEngine();
  return loopsOverDevices(
    buildModel(ModuleTrees.parse(code, true), code, { eagerInitModules: [], torchBelow24: false }),
  );
}

test("deviceLoops: Numba's device list, walked as objects (with dev:) or by index (select_device, cuda.gpus[i])", async () => {
  assert.equal(await loops("from numba import cuda\nfor g in cuda.gpus:\n    with g:\n        pass\n"), true);
  assert.equal(
    await loops("from numba import cuda\nfor i in range(len(cuda.gpus)):\n    cuda.select_device(i)\n"),
    true,
  );
  assert.equal(
    await loops(
      "import numba.cuda as c\nfor i, _ in enumerate(c.list_devices()):\n    with c.gpus[i]:\n        pass\n",
    ),
    true,
  );
  assert.equal(await loops("from numba import cuda\nfor g in cuda.gpus:\n    print(g.name)\n"), false, "only listed");
  assert.equal(
    await loops("from numba import cuda\nfor i in range(4):\n    cuda.select_device(i)\n"),
    false,
    "a fixed range",
  );
});

test("deviceLoops: CuPy's Device(i) and torch's device slots in range(device_count()), directly, through a name or an attribute, in a comprehension", async () => {
  assert.equal(
    await loops(
      "import cupy as cp\nfor i in range(cp.cuda.runtime.getDeviceCount()):\n    with cp.cuda.Device(i):\n        pass\n",
    ),
    true,
  );
  assert.equal(
    await loops("import torch\nn = torch.cuda.device_count()\nfor i in range(n):\n    torch.cuda.set_device(i)\n"),
    true,
  );
  assert.equal(
    await loops('import torch\nxs = [torch.ones(1, device=f"cuda:{k}") for k in range(torch.cuda.device_count())]\n'),
    true,
  );
  assert.equal(
    await loops(
      "import torch\nfor i in list(range(0, torch.cuda.device_count())):\n    m = torch.nn.Linear(1, 1).cuda(i)\n",
    ),
    true,
  );
  assert.equal(
    await loops("import torch\nfor i in range(torch.cuda.device_count()):\n    torch.cuda.get_device_properties(i)\n"),
    false,
    "a query",
  );
  assert.equal(
    await loops('import torch\nfor i in range(torch.cuda.device_count()):\n    torch.ones(1).to("cuda:0")\n'),
    false,
    "a fixed device",
  );
  assert.equal(
    await loops(
      "import torch\ndef f(n):\n    for i in range(n):\n        torch.ones(1).to(i)\nn = torch.cuda.device_count()\n",
    ),
    false,
    "another scope's name",
  );
});
