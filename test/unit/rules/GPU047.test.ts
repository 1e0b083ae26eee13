import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU047");

test("GPU047: the write after p.start() in a loop, in a method too; names the start line", async () => {
  const src = [
    "import multiprocessing as mp",
    "import os",
    "class Pool:",
    "    def __init__(self, n):",
    '        ctx = mp.get_context("spawn")',
    "        for gpu in range(n):",
    "            p = ctx.Process(target=print)",
    "            p.start()",
    '            os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)',
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(src, "GPU047");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 8);
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set after the child process started on line 8 (`p.start()`): the child copied the environment when it started, so it never sees this value (the next child gets it instead); set it before starting the child",
  );
  assert.equal(d.related?.[0].range.start.line, 7);
});

test("GPU047 stays silent: no loop variable in the value, a write before the start, a nested block, a while loop, a thread", async () => {
  for (const src of [
    'import multiprocessing as mp, os\nfor gpu in range(2):\n    p = mp.Process(target=print)\n    p.start()\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    'import multiprocessing as mp, os\nfor gpu in range(2):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n    p = mp.Process(target=print)\n    p.start()\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu + 1)\n',
    'import multiprocessing as mp, os\nfor gpu in range(2):\n    p = mp.Process(target=print)\n    p.start()\n    if gpu:\n        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n',
    'import multiprocessing as mp, os\ngpu = 0\nwhile gpu < 2:\n    p = mp.Process(target=print)\n    p.start()\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n    gpu += 1\n',
    'import threading, os\nfor gpu in range(2):\n    t = threading.Thread(target=print)\n    t.start()\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU047"), [], src);
});
