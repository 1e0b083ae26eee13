// Issue 16: the false patterns found on real ML code bases, each reduced to a reproduction written
// here (no code copied from those repositories). Each must stay silent in the default rule set; the
// checks moved to preview must still report with preview on; the true cases next to them must stay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lint } from "../../support/helpers";
import { initEngine } from "../../../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook } from "../../../../server/src/engine/notebook";

const codes = async (text: string, preview = false) =>
  (await lint(text, preview ? { preview: true } : {})).map((d) => `${d.code}@${d.range.start.line + 1}`);

test("pattern 1: init_process_group('nccl') then set_device(local_rank), then CUDA work: no GPU011 (measured: init without device_id leaves CUDA uninitialised)", async () => {
  const src = [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "",
    "dist.init_process_group('nccl')",
    "local_rank = int(os.environ.get('LOCAL_RANK', '0'))",
    "torch.cuda.set_device(local_rank)",
    "t = torch.ones(1).cuda()",
    "dist.all_reduce(t)",
    "",
  ].join("\n");
  assert.deepEqual(await codes(src), []);
});

test("pattern 1 (true case kept): CUDA work on the current device between init and set_device is GPU011", async () => {
  const src = [
    "import os",
    "import torch",
    "import torch.distributed as dist",
    "",
    "dist.init_process_group('nccl')",
    "dist.barrier()",
    "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))",
    "",
  ].join("\n");
  const d = (await lint(src)).filter((x) => x.code === "GPU011");
  assert.equal(d.length, 1);
  assert.equal(d[0].range.start.line, 4);
  assert.equal(d[0].severity, "warning");
  assert.match(d[0].message, /dist\.barrier\(\)` \(line 6\)/);
});

test("pattern 2: a fallback `if not dist.is_initialized(): init_process_group('nccl')` in a test: no GPU011", async () => {
  const src = [
    "import torch",
    "import torch.distributed as dist",
    "",
    "def test_broadcast():",
    "    if not dist.is_initialized():",
    "        dist.init_process_group(backend='nccl')",
    "    x = torch.zeros(2).cuda()",
    "    dist.barrier()",
    "",
  ].join("\n");
  assert.deepEqual(await codes(src), []);
});

test("pattern 3: os.environ['LOCAL_RANK'] that cannot raise is not reported by default", async () => {
  const guarded = ["import os", "if 'LOCAL_RANK' in os.environ:", "    rank = int(os.environ['LOCAL_RANK'])", ""].join(
    "\n",
  );
  const written = [
    "import os",
    "def launch(i):",
    "    os.environ['LOCAL_RANK'] = str(i)",
    "    return int(os.environ['LOCAL_RANK'])",
    "",
  ].join("\n");
  const deepspeed = [
    "import os",
    "import deepspeed",
    "deepspeed.init_distributed()",
    "rank = int(os.environ['LOCAL_RANK'])",
    "",
  ].join("\n");
  for (const src of [guarded, written, deepspeed])
    assert.deepEqual(
      (await codes(src)).filter((c) => c.startsWith("GPU011")),
      [],
      src,
    );
});

test("pattern 4: set_device(0) with world_size=1 is no error (the constant-device check is preview, a warning)", async () => {
  const src = [
    "import torch",
    "import torch.distributed as dist",
    "",
    "torch.cuda.set_device(0)",
    "dist.init_process_group(backend='nccl', world_size=1, rank=0, init_method='tcp://127.0.0.1:29500')",
    "",
  ].join("\n");
  assert.deepEqual(await codes(src), []);
  const preview = (await lint(src, { preview: true })).filter((d) => d.code === "GPU011");
  assert.ok(
    preview.every((d) => d.severity !== "error"),
    JSON.stringify(preview),
  );
});

test("pattern 5: `import jax.numpy as _jnp; del _jnp; import jax.lax` is namespace hygiene: no GPU009", async () => {
  assert.deepEqual(await codes("import jax.numpy as _jnp\ndel _jnp\nimport jax.lax\n"), []);
  assert.deepEqual(await codes("from torch import nn as _nn\ndel _nn\nimport torch\n"), []);
});

test("pattern 5 (true case kept): del sys.modules['torch'] after a late CUDA_VISIBLE_DEVICES is GPU009", async () => {
  const src =
    "import os\nimport sys\nimport torch\n\nwarm = torch.zeros(1).cuda()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\ndel sys.modules['torch']\nimport torch\n";
  assert.ok((await codes(src)).includes("GPU009@7"));
});

test("pattern 6: a CUDA_VISIBLE_DEVICES read in one function does not taint a same-named parameter of another: no GPU005", async () => {
  const src = [
    "import os",
    "import torch",
    "",
    "def log_flags():",
    "    devices = os.getenv('CUDA_VISIBLE_DEVICES', '0')",
    "    print(devices)",
    "",
    "def parallel_devices(devices):",
    "    return [torch.device('cuda', i) for i in devices]",
    "",
  ].join("\n");
  assert.deepEqual(await codes(src), []);
});

test("pattern 6 (true case kept): in the same function the visible id used as an ordinal is GPU005", async () => {
  const src = [
    "import os",
    "import torch",
    "",
    "def main():",
    "    gpu = os.environ['CUDA_VISIBLE_DEVICES']",
    "    x = torch.zeros(1, device=f'cuda:{gpu}')",
    "",
  ].join("\n");
  assert.ok((await codes(src)).includes("GPU005@6"));
});

test("pattern 7: set_device(parent_device) in a worker thread propagates the parent's device: no GPU008", async () => {
  const src = [
    "import threading",
    "import torch",
    "",
    "def start():",
    "    parent_device = torch.cuda.current_device()",
    "    def loop():",
    "        torch.cuda.set_device(parent_device)",
    "        torch.zeros(1).cuda()",
    "    threading.Thread(target=loop).start()",
    "",
    "class Consumer(threading.Thread):",
    "    def __init__(self, dev):",
    "        super().__init__()",
    "        self.dev = dev",
    "    def run(self):",
    "        torch.cuda.set_device(self.dev)",
    "",
  ].join("\n");
  assert.deepEqual(await codes(src), []);
});

test("pattern 7 (true case kept): a constant set_device in a thread target is GPU008 (warning)", async () => {
  const src =
    "import threading\nimport torch\n\n\ndef worker():\n    torch.cuda.set_device(1)\n\n\nthreading.Thread(target=worker).start()\n";
  const d = (await lint(src)).filter((x) => x.code === "GPU008");
  assert.deepEqual(
    d.map((x) => [x.range.start.line + 1, x.severity]),
    [[6, "warning"]],
  );
});

test("GPU008's single-thread discouragement is preview only", async () => {
  const src = "import torch\ntorch.cuda.set_device(1)\n";
  assert.deepEqual(await codes(src), []);
  assert.deepEqual(await codes(src, true), ["GPU008@2"]);
});

test("pattern 8: a decorator imported from keras (`@keras_export(...)`) does not initialise CUDA: no GPU001", async () => {
  const src = [
    "import os",
    "from keras.src.api_export import keras_export",
    "",
    "@keras_export('keras.config.floatx')",
    "def floatx():",
    "    return 'float32'",
    "",
    "os.environ['TF_FORCE_GPU_ALLOW_GROWTH'] = 'true'",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(src)).filter((c) => c.startsWith("GPU001")),
    [],
  );
});

test("pattern 9: `%env CUDA_VISIBLE_DEVICES=0  # comment` keeps GPU 0 visible (measured: 1 device): no GPU003", async () => {
  await initEngine();
  const nb = JSON.stringify({
    cells: [
      {
        cell_type: "code",
        source: ["%env CUDA_VISIBLE_DEVICES=0  # force GPU 0\n", "import torch\n", "x = torch.ones(1).cuda()\n"],
        metadata: {},
        outputs: [],
        execution_count: null,
      },
    ],
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5,
  });
  const r = lintNotebook(cellsOfIpynb(nb), {});
  assert.deepEqual(
    r.diagnostics.filter((d) => d.code === "GPU003").map((d) => d.message),
    [],
  );
});

test("pattern 9 (true case kept): a value that starts with text hides every GPU: GPU003", async () => {
  const src = "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '# GPU 1'\nimport torch\nx = torch.ones(1).cuda()\n";
  assert.ok((await codes(src)).includes("GPU003@2"));
});

test("pattern 10: PYTORCH_NVML_BASED_CUDA_CHECK after an import is not GPU002 (read by every is_available() call)", async () => {
  const src = "import os\nimport torch\nos.environ['PYTORCH_NVML_BASED_CUDA_CHECK'] = '1'\n";
  assert.deepEqual(await codes(src), []);
});

test("GPU002 is information: a write after the import works while nothing initialised CUDA", async () => {
  const src = "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
  assert.deepEqual(
    (await lint(src)).filter((x) => x.code === "GPU002"),
    [],
    "hygiene: a preview check since 2026-12-05 (23 such findings on the corpus, all noise)",
  );
  const d = (await lint(src, { preview: true })).filter((x) => x.code === "GPU002");
  assert.deepEqual(
    d.map((x) => x.severity),
    ["information"],
  );
});

test("pattern 13: '-1' written in a --cpu branch whose CUDA use is guarded by the same flag: no error", async () => {
  const src = [
    "import os",
    "import argparse",
    "",
    "p = argparse.ArgumentParser()",
    "p.add_argument('--cpu', action='store_true')",
    "args = p.parse_args()",
    "if args.cpu:",
    "    os.environ['CUDA_VISIBLE_DEVICES'] = '-1'",
    "import torch",
    "device = 'cpu' if args.cpu else 'cuda'",
    "x = torch.ones(1, device=device)",
    "",
  ].join("\n");
  assert.deepEqual(
    (await lint(src)).filter((d) => d.severity === "error").map((d) => d.code),
    [],
  );
});

test("GPU006, GPU010's no-device_ids check and GPU013's deprecations are preview only", async () => {
  const order = "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\nimport torch\n";
  assert.deepEqual(await codes(order), []);
  assert.deepEqual(await codes(order, true), ["GPU006@2"]);
  const dp = "import torch\nnet = torch.nn.DataParallel(torch.nn.Linear(2, 2).cuda())\n";
  assert.deepEqual(
    (await codes(dp)).filter((c) => c.startsWith("GPU010")),
    [],
  );
  assert.deepEqual(
    (await codes(dp, true)).filter((c) => c.startsWith("GPU010")),
    ["GPU010@2"],
  );
  const tf = "import tensorflow as tf\ngpus = tf.config.experimental.list_physical_devices('GPU')\n";
  assert.deepEqual(await codes(tf), []);
  assert.deepEqual(await codes(tf, true), ["GPU013@2"]);
});

test("pattern 11: a launcher that writes CUDA_VISIBLE_DEVICES for the child it starts next is no GPU001", async () => {
  const src = [
    "import os",
    "import subprocess",
    "import torch",
    "",
    "n = torch.cuda.device_count()",
    "x = torch.ones(1).cuda()",
    "procs = []",
    "for i in range(n):",
    "    os.environ['CUDA_VISIBLE_DEVICES'] = str(i)",
    "    procs.append(subprocess.Popen(['python', 'worker.py']))",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(src)).filter((c) => c.startsWith("GPU001")),
    [],
  );
});

test("pattern 11 (true case kept): the same write with no child process after it is GPU001", async () => {
  const src =
    "import os\nimport torch\n\nx = torch.ones(1).cuda()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\ny = torch.ones(1).cuda()\n";
  assert.ok((await codes(src)).includes("GPU001@5"));
});

test("pattern 12: `!CUDA_VISIBLE_DEVICES=1 python train.py` sets it for that child only, the intent: no GPU014", async () => {
  await initEngine();
  const nb = JSON.stringify({
    cells: [
      {
        cell_type: "code",
        source: ["!CUDA_VISIBLE_DEVICES=1 python train.py\n"],
        metadata: {},
        outputs: [],
        execution_count: null,
      },
    ],
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5,
  });
  assert.deepEqual(
    lintNotebook(cellsOfIpynb(nb), {}).diagnostics.map((d) => d.code),
    [],
  );
});

test("pattern 14: os.putenv repeating an os.environ write of the same value is no GPU015", async () => {
  const src =
    "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\nos.putenv('CUDA_VISIBLE_DEVICES', '1')\nimport torch\n";
  assert.deepEqual(
    (await codes(src)).filter((c) => c.startsWith("GPU015")),
    [],
  );
});

test("miss now found: a function the module never calls (a FastAPI lifespan hook) writes PYTORCH_CUDA_ALLOC_CONF after import-time code moved a model to CUDA: GPU001", async () => {
  const src = [
    "import os",
    "import torch",
    "from fastapi import FastAPI",
    "",
    "pipe = torch.nn.Linear(2, 2).to('cuda')",
    "",
    "",
    "async def lifespan(app):",
    "    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'",
    "    yield",
    "",
    "",
    "app = FastAPI(lifespan=lifespan)",
    "",
  ].join("\n");
  const d = (await lint(src)).filter((x) => x.code === "GPU001");
  assert.deepEqual(
    d.map((x) => x.range.start.line + 1),
    [9],
  );
  assert.match(d[0].message, /initialised by \.to\('cuda'\) \(line 5\) whenever `lifespan\(\)` runs/);
});

test("miss now found: an uncalled function (a test) initialises CUDA and then writes CUDA_VISIBLE_DEVICES: GPU001 in its own timeline", async () => {
  const src = [
    "import os",
    "import torch",
    "",
    "",
    "def test_visible():",
    "    torch.cuda.init()",
    "    os.environ['CUDA_VISIBLE_DEVICES'] = '1'",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(src)).filter((c) => c.startsWith("GPU001")),
    ["GPU001@7"],
  );
  // Two uncalled functions do not see each other's events.
  const two = [
    "import os",
    "import torch",
    "",
    "def a():",
    "    torch.cuda.init()",
    "",
    "def b():",
    "    os.environ['CUDA_VISIBLE_DEVICES'] = '1'",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(two)).filter((c) => c.startsWith("GPU001")),
    [],
  );
});

test("a helper that sets CUDA_VISIBLE_DEVICES after a module-level `import deepspeed` (for the workers it starts) is no GPU001", async () => {
  const src = [
    "import os",
    "import deepspeed",
    "",
    "",
    "def set_visible(ids):",
    "    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(ids)",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(src)).filter((c) => c.startsWith("GPU001")),
    [],
  );
});

test("fixes (issue 16): GPU011's fix in a torch.multiprocessing.spawn worker uses the worker's index, never os.environ['LOCAL_RANK'] (a KeyError there)", async () => {
  const src = [
    "import torch",
    "import torch.distributed as dist",
    "import torch.multiprocessing as mp",
    "",
    "",
    "def worker(rank, world_size):",
    "    dist.init_process_group('nccl', rank=rank, world_size=world_size)",
    "    model = torch.nn.Linear(2, 2).cuda()",
    "",
    "",
    "if __name__ == '__main__':",
    "    mp.spawn(worker, args=(2,), nprocs=2)",
    "",
  ].join("\n");
  const [d] = (await lint(src)).filter((x) => x.code === "GPU011");
  assert.equal(d.fix?.title, "Insert torch.cuda.set_device(rank) before init_process_group");
  assert.deepEqual(
    d.fix?.edits.map((e) => e.newText),
    ["    torch.cuda.set_device(rank)\n"],
  );
});

test("fixes (issue 16): GPU006's insert is safe only before any framework import; a write after CUDA initialised gets no GPU006", async () => {
  const before = "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\nimport torch\n";
  assert.equal((await lint(before, { preview: true })).find((d) => d.code === "GPU006")?.fix?.safe, true);
  const after = "import os\nimport torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
  assert.equal(
    (await lint(after, { preview: true })).find((d) => d.code === "GPU006")?.fix?.safe,
    false,
    "the inserted line would itself come after the import (GPU002)",
  );
  const late = "import os\nimport torch\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
  assert.deepEqual(
    (await lint(late, { preview: true })).map((d) => d.code),
    ["GPU001"],
  );
});

test('fixes (issue 16): GPU005 offers no "Use 0" for a loop or comprehension variable (it would put every device on cuda:0)', async () => {
  const src =
    "import os\nimport torch\n\nids = os.environ['CUDA_VISIBLE_DEVICES'].split(',')\ndevs = [torch.device('cuda', int(i)) for i in ids]\n";
  const d = (await lint(src)).filter((x) => x.code === "GPU005");
  assert.equal(d.length, 1);
  assert.equal(d[0].fix, undefined);
});

test("GPU034 (issue 21, ColossalChat): a @ray.remote actor with no num_gpus that a launcher in another module starts with .options(num_gpus=1) is not reported", async () => {
  const src = [
    "import ray",
    "import torch",
    "",
    "@ray.remote(concurrency_groups={'io': 1, 'compute': 1})",
    "class Holder:",
    "    def load(self, state):",
    "        return {k: v.to(torch.cuda.current_device()) for k, v in state.items()}",
    "",
  ].join("\n");
  assert.deepEqual(
    (await codes(src, true)).filter((c) => c.startsWith("GPU034")),
    [],
  );
  // The true case next to it: the same file starts the actor as declared.
  assert.deepEqual(
    (await codes(src + "holder = Holder.remote()\n")).filter((c) => c.startsWith("GPU034")),
    ["GPU034@4"],
  );
});
