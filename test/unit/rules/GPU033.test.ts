import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU033");

test("GPU033 names the task, its num_gpus and the decorator", async () => {
  const [d] = await lintCode(
    'import os\nfrom ray import remote\n\n@remote(num_gpus=2)\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n\nf.remote()\n',
    "GPU033",
  );
  assert.equal(d.severity, "warning");
  assert.match(d.message, /inside the Ray task `f`: Ray already set CUDA_VISIBLE_DEVICES for it from num_gpus=2/);
  assert.deepEqual(d.related?.[0].range.start, { line: 3, character: 0 });
  // Started from another module only: the num_gpus it runs with is not known here.
  const [e] = await lintCode(
    'import os\nimport ray\n\n@ray.remote(num_gpus=0)\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "GPU033",
  );
  assert.match(e.message, /from its num_gpus \(Ray documentation, Accelerator Support\); this value/);
});

test("GPU033: a function that is not a Ray task, and @ray.remote of another module named ray, are not reported", async () => {
  assert.deepEqual(
    await lintCode(
      'import os\nimport ray\n\n@ray.method\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
      "GPU033",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nimport myray as ray\n\n@ray.remote\ndef f():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
      "GPU033",
    ),
    [],
  );
});

const ACTOR = (guard: string) =>
  [
    "import os",
    "import ray",
    "from .utils import noset_visible_devices",
    "from .checks import other_check",
    "",
    "@ray.remote(num_gpus=1)",
    "class Engine:",
    "    def configure(self, backend):",
    '        if backend == "ray":',
    '            os.environ.pop("CUDA_VISIBLE_DEVICES", None)',
    guard,
    '            os.environ["CUDA_VISIBLE_DEVICES"] = str(ray.get_gpu_ids()[0])',
    "",
  ].join("\n");

test("GPU033: a write guarded by a project helper that checks RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES is not reported; its else branch, and a helper that does not name the variable, are", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu033-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "pkg"));
  writeFileSync(join(dir, "pkg", "__init__.py"), "");
  writeFileSync(
    join(dir, "pkg", "utils.py"),
    'import os\n\ndef noset_visible_devices(env=os.environ):\n    names = ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ROCR_VISIBLE_DEVICES"]\n    return any(env.get(n) for n in names)\n',
  );
  writeFileSync(join(dir, "pkg", "checks.py"), "def other_check():\n    return True\n");
  const file = join(dir, "pkg", "engine.py");
  const lines = (src: string) => {
    writeFileSync(file, src);
    const lookup = new ProjectIndex().lookupFor(file, lookupOptions({}));
    return lintPython(src, { select: ["GPU033"], project: lookup }).diagnostics.map((d) => d.range.start.line);
  };
  assert.deepEqual(lines(ACTOR("        elif noset_visible_devices():")), []);
  assert.deepEqual(lines(ACTOR("        elif other_check():")), [11], "a helper whose module names no NOSET variable");
  assert.deepEqual(
    lines(ACTOR("        elif not noset_visible_devices():")),
    [],
    "the condition asks about NOSET: not judged",
  );
  const elseBranch = ACTOR("        elif noset_visible_devices():\n            pass\n        else:").replace(
    '\n            os.environ["CUDA_VISIBLE_DEVICES"] = str(ray.get_gpu_ids()[0])\n',
    '\n            os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
  );
  assert.deepEqual(lines(elseBranch), [13], "the else branch: Ray did set the variable there");
  // Without the project index the helper is opaque: reported, as before.
  assert.equal(
    lintPython(ACTOR("        elif noset_visible_devices():"), { select: ["GPU033"] }).diagnostics.length,
    1,
  );
});

test("GPU033: a helper of the same file that names RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES guards the write", async () => {
  const src =
    'import os\nimport ray\n\nNAMES = {}\n\ndef noset():\n    return any(NAMES.get(n) for n in ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"])\n\ndef check():\n    return False\n\n@ray.remote(num_gpus=1)\ndef task():\n    if noset():\n        os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n    if check():\n        os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(
    (await lintCode(src, "GPU033")).map((d) => d.range.start.line),
    [16],
  );
});
