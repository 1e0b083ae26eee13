import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU049");

test("GPU049: a CUDA_VISIBLE_DEVICES write from a parameter of a thread target started in a loop; names the start", async () => {
  const src = [
    "import os",
    "import threading",
    "import torch",
    "",
    "def work(gpu):",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)',
    '    torch.ones(1, device="cuda")',
    "",
    "for gpu in range(2):",
    "    threading.Thread(target=work, args=(gpu,)).start()",
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(src, "GPU049");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.equal(d.range.start.line, 5);
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES is set per thread: work() runs in several threads (started on line 10), but the threads share one process environment and CUDA reads the variable once, when the process first initialises CUDA (measured on an H100 with torch 2.11), so every thread gets the GPUs of whichever value was set then, not its own; give each thread an explicit device instead (torch.device(f"cuda:{gpu}"), every GPU left visible) or start a process per GPU',
  );
  assert.equal(d.related?.[0].range.start.line, 9);
});

test("GPU049: two Thread calls of one target, ThreadPoolExecutor.submit in a loop, a value derived from the parameter", async () => {
  for (const src of [
    'import os, threading\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\nthreading.Thread(target=work, args=(0,)).start()\nthreading.Thread(target=work, args=(1,)).start()\n',
    'import os\nfrom concurrent.futures import ThreadPoolExecutor\ndef work(k):\n    ids = ["0", "1"][k]\n    os.environ["CUDA_VISIBLE_DEVICES"] = ids\npool = ThreadPoolExecutor(2)\nfor k in range(2):\n    pool.submit(work, k)\n',
  ]) {
    const got = await lintCode(src, "GPU049");
    assert.equal(got.length, 1, src);
  }
});

test("GPU049 stays silent: one thread, a constant value, a child process in the target, a Process, a method target", async () => {
  for (const src of [
    'import os, threading\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\nthreading.Thread(target=work, args=(1,)).start()\n',
    'import os, threading\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\nfor k in range(2):\n    threading.Thread(target=work, args=(k,)).start()\n',
    'import os, threading, subprocess\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\n    subprocess.run(["python", "t.py"])\nfor k in range(2):\n    threading.Thread(target=work, args=(k,)).start()\n',
    'import os, multiprocessing as mp\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\nfor k in range(2):\n    mp.Process(target=work, args=(k,)).start()\n',
    'import os, threading\nclass W:\n    def work(self, k):\n        os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\nw = W()\nfor k in range(2):\n    threading.Thread(target=w.work, args=(k,)).start()\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU049"), [], src);
});

const THREADS_YOLO = [
  "import threading",
  "from ultralytics import YOLO",
  "",
  "def run(gpu):",
  '    model = YOLO("m.pt")',
  '    model.predict("a.mp4", device=gpu)',
  "",
  "for gpu in range(3):",
  "    threading.Thread(target=run, args=(gpu,)).start()",
  "",
].join("\n");

test("GPU049 Ultralytics branch, pinned to 8.0.0-8.4.86: a default error that names the pin", async () => {
  const [d, ...rest] = await lintCode(THREADS_YOLO, "GPU049", { libraryPins: { ultralytics: "==8.0.120" } });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.equal(d.range.start.line, 5);
  assert.equal(
    d.message,
    "The pinned ultralytics==8.0.120 applies device=gpu by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (ultralytics/utils/torch_utils.py select_device), and run() runs in several threads (started on line 9): the threads share one process environment and CUDA reads the variable once, when the process first initialises CUDA (measured on an H100 with torch 2.11), so every thread's model runs on the same GPU (cuda:0 of whichever value was set when CUDA started), not its own; start a process per GPU with CUDA_VISIBLE_DEVICES set before it starts",
  );
  const recent = await lintCode(THREADS_YOLO, "GPU049", { libraryPins: { ultralytics: ">=8.3,<8.4.87" } });
  assert.equal(recent[0]?.severity, "error");
  assert.match(recent[0].message, /\(8\.4\.85 and 8\.4\.86 may instead reject a later thread's device as invalid\)/);
});

test("GPU049 Ultralytics branch: unpinned or admitting 8.4.87+, a preview warning naming the upgrade; silent when only 8.4.87+", async () => {
  for (const options of [{}, { libraryPins: { ultralytics: ">=8.0.0" } }]) {
    assert.deepEqual(await lintCode(THREADS_YOLO, "GPU049", options), [], JSON.stringify(options));
    const [d] = await lintCode(THREADS_YOLO, "GPU049", { ...options, preview: true });
    assert.equal(d?.severity, "warning");
    assert.match(d.message, /^With Ultralytics before 8\.4\.87, device=gpu is applied by writing CUDA_VISIBLE_DEVICES/);
    assert.match(
      d.message,
      /, or use ultralytics 8\.4\.87 or later \(it selects each thread's GPU with torch\.cuda\.set_device/,
    );
  }
  for (const pin of ["==8.4.87", ">=8.4.100"])
    assert.deepEqual(
      await lintCode(THREADS_YOLO, "GPU049", { libraryPins: { ultralytics: pin }, preview: true }),
      [],
      pin,
    );
  // The os.environ branch does not depend on the pin.
  const env =
    'import os, threading\ndef work(k):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)\nfor k in range(2):\n    threading.Thread(target=work, args=(k,)).start()\n';
  assert.equal((await lintCode(env, "GPU049", { libraryPins: { ultralytics: ">=8.4.87" } }))[0]?.severity, "error");
});
