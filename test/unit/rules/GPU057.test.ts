import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU057");

test("GPU057: a warning on the write, naming the count and its line; through names assigned before the write, whichever branch", async () => {
  const src =
    'import os\nimport torch\n\n\ndef setup(gpu_id=None):\n    if gpu_id is None:\n        gpu_id = ",".join(str(i) for i in range(torch.cuda.device_count()))\n    gpu_list = sorted({int(g) for g in str(gpu_id).split(",")})\n    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_list)\n';
  const [d, ...rest] = await lintCode(src, "GPU057", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 8);
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is written from GPU ordinals this process counted (torch.cuda.device_count() at line 7): they number the GPUs it already sees from 0, while the variable takes the machine's device ids, so under an inherited CUDA_VISIBLE_DEVICES (a Slurm job's 4,5,6,7, a launcher's, the shell's) this write moves the process onto GPUs 0, 1, ..., other jobs' GPUs; with none inherited it changes nothing. Leave the variable as it is and use torch.cuda.device_count() for the count",
  );
  assert.equal(d.fix, undefined);
});

test("GPU057: silent for a count assigned after the write, in another function, under a test of the variable, or through an alias it does not know", async () => {
  const silent = [
    // assigned after the write
    'import os\nimport torch\nos.environ["CUDA_VISIBLE_DEVICES"] = ids\nids = str(torch.cuda.device_count())\n',
    // the count is in another function
    'import os\nimport torch\n\ndef count():\n    ids = str(torch.cuda.device_count())\n\ndef write(ids):\n    os.environ["CUDA_VISIBLE_DEVICES"] = ids\n',
    // guarded
    'import os\nimport torch\nif os.environ.get("CUDA_VISIBLE_DEVICES") is None:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0" if torch.cuda.device_count() == 1 else "0,1"\n',
    // jax.devices() initialises the runtime: GPU001's business, not this rule's
    'import os\nimport jax\nos.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(len(jax.devices())))\n',
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU057", { preview: true }), [], src);
});

test("GPU057: reads that cannot reach the value do not silence it (after the write, printed or logged, in a branch that raises); CUDA initialised before the write does (GPU001's finding); a chosen subset gets its own advice", async () => {
  const lines = async (src: string) =>
    (await lintCode(src, "GPU057", { preview: true })).map((d) => d.range.start.line);
  const every = 'os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(torch.cuda.device_count()))';
  assert.deepEqual(
    await lines(
      `import os\nimport torch\n\n\ndef setup(log):\n    ${every}\n    print("now", os.environ["CUDA_VISIBLE_DEVICES"])\n`,
    ),
    [5],
  );
  assert.deepEqual(
    await lines(
      `import os\nimport torch\n\n\ndef setup(log):\n    log.info("was %s", os.environ.get("CUDA_VISIBLE_DEVICES"))\n    if torch.cuda.device_count() == 0:\n        raise SystemExit(os.environ.get("CUDA_VISIBLE_DEVICES"))\n    ${every}\n`,
    ),
    [8],
  );
  // Already initialised (get_device_name creates the context): the write moves nothing.
  assert.deepEqual(
    await lines(`import os\nimport torch\n\n\ndef setup():\n    print(torch.cuda.get_device_name(0))\n    ${every}\n`),
    [],
  );
  const [subset] = await lintCode(
    'import os\nimport torch\n\nn = min(4, torch.cuda.device_count())\nos.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(n))\n',
    "GPU057",
    { preview: true },
  );
  assert.match(
    subset.message,
    /^CUDA_VISIBLE_DEVICES is written from GPU ordinals this process counted \(torch\.cuda\.device_count\(\) at line 4\), to choose some of its GPUs: .* onto the GPUs that have those numbers as ids, other jobs' GPUs\. Map the ordinals through the inherited list \(os\.environ\.get\("CUDA_VISIBLE_DEVICES", ""\)\.split\(","\)\) when there is one, and write the ids they stand for$/,
  );
  const [all] = await lintCode(
    'import os\nimport torch\n\nn = torch.cuda.device_count()\nos.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(n))\n',
    "GPU057",
    { preview: true },
  );
  assert.match(all.message, /; with none inherited it changes nothing\. Leave the variable as it is/);
});

const POOL_CLIENT = [
  "import os",
  "from concurrent.futures import ProcessPoolExecutor",
  "",
  "",
  "class GpuPool:",
  "    def __init__(self, n):",
  "        self.pool = ProcessPoolExecutor(max_workers=n)",
  "        self.n = n",
  "        self.slot = 0",
  "",
  "    @staticmethod",
  "    def run_on(slot, fn, *args):",
  '        os.environ["CUDA_VISIBLE_DEVICES"] = f"{slot}"',
  "        return fn(*args)",
  "",
  "    def add(self, fn, *args):",
  "        fut = self.pool.submit(self.run_on, self.slot, fn, *args)",
  "        self.slot = (self.slot + 1) % self.n",
  "        return fut",
  "",
].join("\n");

test("GPU057 (preview): a pool worker writes CUDA_VISIBLE_DEVICES from the index the submitting code counts", async () => {
  const [d, ...rest] = await lintCode(POOL_CLIENT, "GPU057", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 12);
  assert.match(
    d.message,
    /^CUDA_VISIBLE_DEVICES is written from slot, the pool index that self\.pool\.submit\(run_on, \.\.\.\) at line 17 passes \(self\.slot, counted from 0\): the worker inherited the parent's CUDA_VISIBLE_DEVICES/,
  );
  assert.deepEqual(await lintCode(POOL_CLIENT, "GPU057"), [], "preview only");
  // A step modulo any expression is still a pool index.
  const modLen = POOL_CLIENT.replace("% self.n", "% len(self.workers)");
  assert.equal((await lintCode(modLen, "GPU057", { preview: true })).length, 1);
  // A module-level function given a range() loop's variable; multiprocessing's apply_async with an args tuple.
  const loop =
    'import os\nimport multiprocessing as mp\nfrom concurrent.futures import ProcessPoolExecutor\n\ndef work(gpu, item):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n    return item\n\ndef main(items):\n    with ProcessPoolExecutor(4) as ex:\n        for i in range(4):\n            ex.submit(work, i, items[i])\n    pool = mp.Pool(4)\n    for k, item in enumerate(items):\n        pool.apply_async(work, (k, item))\n';
  assert.equal((await lintCode(loop, "GPU057", { preview: true })).length, 1);
  const applied = loop.replace("            ex.submit(work, i, items[i])", "            pass");
  assert.equal((await lintCode(applied, "GPU057", { preview: true })).length, 1);
});

test("GPU057 (preview): silent where the pool index is mapped, not counted, or the pool is not a process pool of the file", async () => {
  const silent = async (src: string) => assert.deepEqual(await lintCode(src, "GPU057", { preview: true }), [], src);
  // The parent's list read in the file (the index may be mapped through it).
  await silent(
    POOL_CLIENT.replace(
      "        self.slot = 0",
      '        self.slot = 0\n        self.ids = os.environ.get("CUDA_VISIBLE_DEVICES")',
    ),
  );
  // An id, not a counter, is passed.
  await silent(
    POOL_CLIENT.replace(
      "self.pool.submit(self.run_on, self.slot,",
      "self.pool.submit(self.run_on, self.ids[self.slot],",
    ),
  );
  // The counter is set to something else somewhere.
  await silent(POOL_CLIENT.replace("        self.slot = 0", "        self.slot = first_free_gpu()"));
  // A thread pool shares the process: not this check's.
  await silent(POOL_CLIENT.replace(/ProcessPoolExecutor/g, "ThreadPoolExecutor"));
  // Another parameter, a rebound parameter, a value built from more than the parameter.
  await silent(POOL_CLIENT.replace('f"{slot}"', '"0"'));
  await silent(
    POOL_CLIENT.replace(
      '        os.environ["CUDA_VISIBLE_DEVICES"] = f"{slot}"',
      '        slot = slot + 2\n        os.environ["CUDA_VISIBLE_DEVICES"] = f"{slot}"',
    ),
  );
  await silent(POOL_CLIENT.replace('f"{slot}"', 'f"{slot},{slot + 1}"'));
  // A range with a start, an enumerate with a start.
  await silent(
    'import os\nfrom concurrent.futures import ProcessPoolExecutor\n\ndef work(gpu):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n\ndef main():\n    ex = ProcessPoolExecutor(2)\n    for i in range(1, 3):\n        ex.submit(work, i)\n',
  );
});
