import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { selectsAsyncAllocator } from "../../../server/src/engine/frameworks";

fixtureTests("GPU026");

const SRC =
  'import os\nimport torch\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"\nx = torch.ones(4, device="cuda")\n';

test("GPU026 is an error on the write, quotes the measured crash and points at the import", async () => {
  const [d] = await lintCode(SRC, "GPU026");
  assert.equal(d.severity, "error");
  assert.deepEqual(d.range.start, { line: 3, character: 0 });
  assert.match(d.message, /after `import torch` \(line 2\)/);
  assert.match(d.message, /parsed at runtime != allocator backend parsed at load time/);
  assert.match(d.message, /pytorch#104801/);
  assert.deepEqual(d.related?.[0].range.start, { line: 1, character: 0 });
});

test("GPU026 replaces GPU002 on that write (it does not 'work while nothing initialises CUDA')", async () => {
  assert.deepEqual(
    (await lint(SRC, { preview: true })).filter((d) => d.code !== "GPU006").map((d) => d.code),
    ["GPU026"],
  );
  const other = SRC.replace("backend:cudaMallocAsync", "expandable_segments:True");
  assert.deepEqual(
    (await lint(other, { preview: true })).map((d) => d.code),
    ["GPU002"],
    "GPU002 (a preview check) on the other value",
  );
});

test("GPU026 fix moves the write above import torch; the result is clean", async () => {
  const [d] = await lintCode(SRC, "GPU026");
  assert.equal(d.fix?.title, "Move the PYTORCH_CUDA_ALLOC_CONF write above `import torch`");
  const fixed = applyFix(SRC, d);
  assert.equal(
    fixed,
    'import os\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"\nimport torch\n\nx = torch.ones(4, device="cuda")\n',
  );
  assert.deepEqual(
    (await lint(fixed)).map((x) => x.code),
    [],
  );
});

test("GPU026 leaves a write after a locking call to GPU001 (measured: ignored there, not fatal)", async () => {
  const src = SRC.replace("\nos.environ", "\ntorch.cuda.get_device_name(0)\nos.environ");
  assert.deepEqual(
    (await lint(src)).map((d) => d.code),
    ["GPU001"],
  );
  const nvml = SRC.replace("\nos.environ", "\ntorch.cuda.is_available()\nos.environ");
  assert.deepEqual(
    (await lint(nvml)).map((d) => d.code),
    ["GPU026"],
    "is_available() does not lock the allocator variables: still the crash",
  );
});

test("selectsAsyncAllocator reads torch's option list", () => {
  assert.equal(selectsAsyncAllocator("backend:cudaMallocAsync"), true);
  assert.equal(selectsAsyncAllocator("expandable_segments:True,backend: cudaMallocAsync"), true);
  assert.equal(selectsAsyncAllocator("backend:native"), false);
  assert.equal(selectsAsyncAllocator("cudaMallocAsync"), false);
  assert.equal(selectsAsyncAllocator(""), false);
});
