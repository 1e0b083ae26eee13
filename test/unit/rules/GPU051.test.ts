import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { clearSlurmLaunchCache, type LaunchNodes } from "../../../server/src/engine/slurmLaunch";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { SRUN_ONE_GPU_PER_TASK } from "../support/slurmLaunches";

fixtureTests("GPU051");

const COUNT = 'import os\nimport torch\n\nnum_gpus = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n';

test("GPU051 is a preview warning on the subscript read, saying KeyError and what to use instead", async () => {
  assert.deepEqual(await lintCode(COUNT, "GPU051"), [], "preview: off in the default set");
  const [d] = await lintCode(COUNT, "GPU051", { preview: true });
  assert.deepEqual(d.range, { start: { line: 3, character: 15 }, end: { line: 3, character: 49 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /raises KeyError: 'CUDA_VISIBLE_DEVICES'/);
  assert.match(d.message, /torch\.cuda\.device_count\(\)/);
});

test('GPU051 fix (unsafe) reads the variable with .get(..., ""), and the result is clean', async () => {
  const [d] = await lintCode(COUNT, "GPU051", { preview: true });
  assert.equal(d.fix?.title, 'Read it with os.environ.get("CUDA_VISIBLE_DEVICES", "")');
  assert.equal(d.fix?.safe, false, '"".split(",") is one empty id: code that counts ids may count one GPU');
  const fixed = applyFix(COUNT, d);
  assert.equal(
    fixed,
    COUNT.replace('os.environ["CUDA_VISIBLE_DEVICES"]', 'os.environ.get("CUDA_VISIBLE_DEVICES", "")'),
  );
  assert.deepEqual(await lintCode(fixed, "GPU051", { preview: true }), []);
  // The read as an assignment's value gets the same fix.
  const value = 'import os\nimport torch\n\nids = os.environ["CUDA_VISIBLE_DEVICES"]\n';
  const [v] = await lintCode(value, "GPU051", { preview: true });
  assert.equal(
    applyFix(value, v),
    value.replace('os.environ["CUDA_VISIBLE_DEVICES"]', 'os.environ.get("CUDA_VISIBLE_DEVICES", "")'),
  );
});

test("GPU051 stays silent where the program sets, tests or catches the variable, in an assert, under Ray, and on a `del`", async () => {
  const silent = [
    'import os\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\nn = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n',
    'import os\nos.environ.update({"CUDA_VISIBLE_DEVICES": "0"})\nn = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n',
    'import os\nif not os.environ.get("CUDA_VISIBLE_DEVICES"):\n    raise SystemExit("choose GPUs")\nn = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n',
    'import os\n\n\ndef ids():\n    if "CUDA_VISIBLE_DEVICES" not in os.environ:\n        return []\n    return os.environ["CUDA_VISIBLE_DEVICES"].split(",")\n',
    'import os\ntry:\n    n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\nexcept (KeyError, ValueError):\n    n = 0\n',
    'import os\ntry:\n    n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\nexcept:\n    n = 0\n',
    'import os\nassert os.environ["CUDA_VISIBLE_DEVICES"], "run under the job script"\n',
    'import os\nfrom ray import train\n\n\ndef worker(config):\n    return os.environ["CUDA_VISIBLE_DEVICES"].split(",")\n',
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU051", { preview: true }), [], src);
  // A test elsewhere in the module does not guard a read inside a function (and vice versa).
  const other =
    'import os\n\nHAVE = "CUDA_VISIBLE_DEVICES" in os.environ\n\n\ndef ids():\n    return os.environ["CUDA_VISIBLE_DEVICES"].split(",")\n';
  assert.deepEqual(
    (await lintCode(other, "GPU051", { preview: true })).map((d) => d.range.start.line),
    [6],
  );
  // A try that catches something else does not guard it.
  const wrong =
    'import os\ntry:\n    n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\nexcept ValueError:\n    n = 0\n';
  assert.equal((await lintCode(wrong, "GPU051", { preview: true })).length, 1);
});

test("GPU051 stays silent in a file a job script of the project starts (Slurm sets the variable for a job with GPUs)", async () => {
  assert.deepEqual(await lintCode(COUNT, "GPU051", { preview: true, slurm: [SRUN_ONE_GPU_PER_TASK] }), []);
});

test("GPU051: silent in a file that reads a Slurm variable without a default (written for a Slurm job, which sets CUDA_VISIBLE_DEVICES when given GPUs); a read with a default does not count", async () => {
  const read = 'n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n';
  assert.deepEqual(
    await lintCode(`import os\ntask = int(os.environ["SLURM_ARRAY_TASK_ID"])\n${read}`, "GPU051", { preview: true }),
    [],
  );
  assert.equal(
    (
      await lintCode(`import os\ntask = int(os.environ.get("SLURM_ARRAY_TASK_ID", 0))\n${read}`, "GPU051", {
        preview: true,
      })
    ).length,
    1,
  );
});

test("GPU051: silent in a test module (the code under test or a fixture sets the variable before the test reads it)", async () => {
  // A test's fake launcher reads what the function under test exported before it called the launcher.
  const src =
    'import os\n\n\ndef test_spawn_exports_the_chosen_gpus(monkeypatch):\n    seen = {}\n\n    def fake_spawn(fn, nprocs):\n        seen["ids"] = os.environ["CUDA_VISIBLE_DEVICES"]\n\n    monkeypatch.setattr("pkg.runtime.spawn", fake_spawn)\n';
  assert.deepEqual(await lintCode(src, "GPU051", { preview: true, testModule: true }), []);
  assert.equal((await lintCode(src, "GPU051", { preview: true })).length, 1, "the same read outside a test module");
});

test("GPU051: silent where the read's function first asks a helper of the file that tests the variable", async () => {
  const helper =
    'import os\n\n\ndef chosen_gpus():\n    if "CUDA_VISIBLE_DEVICES" not in os.environ:\n        return None\n    return [int(i) for i in os.environ["CUDA_VISIBLE_DEVICES"].split(",")]\n\n\n';
  // The caller returns early on the helper's "unset" answer, then reads the variable itself.
  const guarded = `${helper}def describe():\n    ids = chosen_gpus()\n    if ids is None:\n        return "all GPUs"\n    return "GPUs " + os.environ["CUDA_VISIBLE_DEVICES"]\n`;
  assert.deepEqual(await lintCode(guarded, "GPU051", { preview: true }), []);
  // A method helper (self.chosen_gpus()) counts the same.
  const method =
    'import os\n\n\nclass Pool:\n    def chosen_gpus(self):\n        return os.environ.get("CUDA_VISIBLE_DEVICES")\n\n    def describe(self):\n        if self.chosen_gpus() is None:\n            return ""\n        return os.environ["CUDA_VISIBLE_DEVICES"]\n';
  assert.deepEqual(await lintCode(method, "GPU051", { preview: true }), []);
  // The helper called after the read, or a helper that does not test the variable, guards nothing.
  const after = `${helper}def describe():\n    text = os.environ["CUDA_VISIBLE_DEVICES"]\n    chosen_gpus()\n    return text\n`;
  assert.deepEqual(
    (await lintCode(after, "GPU051", { preview: true })).map((d) => d.range.start.line),
    [10],
  );
  const unrelated =
    'import os\n\n\ndef log_start():\n    print("start")\n\n\ndef describe():\n    log_start()\n    return os.environ["CUDA_VISIBLE_DEVICES"]\n';
  assert.equal((await lintCode(unrelated, "GPU051", { preview: true })).length, 1);
});

test("GPU051: one finding where a later read can only run after an earlier one that already raised (same function, on every path)", async () => {
  const lines = async (src: string) =>
    (await lintCode(src, "GPU051", { preview: true })).map((d) => d.range.start.line);
  // Two statements in a row: the second read is reached only if the first did not raise.
  const twice =
    'import os\n\n\ndef show():\n    n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n    print("ids", os.environ["CUDA_VISIBLE_DEVICES"], n)\n';
  assert.deepEqual(await lines(twice), [4]);
  // Read in an `if` test joined by `and`, again in that branch: the branch runs only after the test read it.
  const guardedBody =
    'import os\n\n\ndef show(on_gpu):\n    if on_gpu and len(os.environ["CUDA_VISIBLE_DEVICES"]) > 0:\n        print(os.environ["CUDA_VISIBLE_DEVICES"])\n';
  assert.deepEqual(await lines(guardedBody), [4]);
  // The iterable of a comprehension's first `for` is always evaluated.
  const listed =
    'import os\n\nids = [int(i) for i in os.environ["CUDA_VISIBLE_DEVICES"].split(",")]\nprint(os.environ["CUDA_VISIBLE_DEVICES"])\n';
  assert.deepEqual(await lines(listed), [2]);
  // Each read stays where the first one may be skipped: after `or`, a conditional `and`, in the
  // other branch, in a comprehension's body, or in another function.
  const skipped = [
    'import os\n\n\ndef f(flag):\n    if flag or os.environ["CUDA_VISIBLE_DEVICES"]:\n        print(os.environ["CUDA_VISIBLE_DEVICES"])\n',
    'import os\n\n\ndef f(flag):\n    x = flag and os.environ["CUDA_VISIBLE_DEVICES"]\n    print(os.environ["CUDA_VISIBLE_DEVICES"])\n',
    'import os\n\n\ndef f():\n    if os.environ["CUDA_VISIBLE_DEVICES"]:\n        pass\n    else:\n        print(os.environ["CUDA_VISIBLE_DEVICES"])\n',
    'import os\n\n\ndef f(n):\n    ids = [os.environ["CUDA_VISIBLE_DEVICES"] for _ in range(n)]\n    print(os.environ["CUDA_VISIBLE_DEVICES"])\n',
    'import os\n\n\ndef f():\n    return os.environ["CUDA_VISIBLE_DEVICES"]\n\n\ndef g():\n    return os.environ["CUDA_VISIBLE_DEVICES"]\n',
  ];
  for (const src of skipped) assert.equal((await lines(src)).length, 2, src);
});

test("GPU051: silent where every start of the file that the project's scripts write down sets CUDA_VISIBLE_DEVICES; one start without it, or none, keeps the finding", async () => {
  const start = (line: number, sets: boolean): LaunchNodes => ({
    script: "/p/scripts/eval.sh",
    line,
    nodes: null,
    from: "no node count",
    documented: false,
    ...(sets ? { setsVisibleDevices: true as const } : {}),
  });
  const found = async (launchNodes: LaunchNodes[]) =>
    (await lintCode(COUNT, "GPU051", { preview: true, launchNodes })).length;
  assert.equal(await found([start(3, true), start(9, true)]), 0, "every start exports it");
  assert.equal(await found([start(3, true), start(9, false)]), 1, "the second start runs it unset");
  assert.equal(await found([]), 1, "no start written down: a plain run is the usual one");
});

test("GPU051 with the project: a README whose shell blocks start the file only with CUDA_VISIBLE_DEVICES set silences it, and the README becomes a dependency; a block that starts it plainly brings the finding back", async () => {
  await lintCode("", "GPU051"); // loads the engine
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu051-docs-"));
  mkdirSync(join(dir, ".git"));
  const file = join(dir, "train.py");
  writeFileSync(file, COUNT);
  const lintWith = () => {
    clearSlurmLaunchCache(); // folder listings are kept 5 s
    const lookup = new ProjectIndex().lookupFor(file, lookupOptions({}));
    const found = lintPython(COUNT, { select: ["GPU051"], preview: true, project: lookup }).diagnostics;
    return { lines: found.map((d) => d.range.start.line), deps: [...lookup.deps()] };
  };
  assert.deepEqual(lintWith().lines, [3], "no document");
  writeFileSync(
    join(dir, "README.md"),
    "Train on two GPUs:\n\n```bash\nCUDA_VISIBLE_DEVICES=0,1 python train.py --epochs 3\n```\n",
  );
  assert.deepEqual(lintWith(), { lines: [], deps: [join(dir, "README.md")] });
  writeFileSync(
    join(dir, "README.md"),
    "```bash\nCUDA_VISIBLE_DEVICES=0,1 python train.py --epochs 3\n```\n\nOr simply:\n\n```bash\npython train.py\n```\n",
  );
  assert.deepEqual(lintWith().lines, [3]);
});

test("GPU051: silent in a file that calls python-dotenv's load_dotenv() (a .env file, not read here, may set the variable); a function of the file with that name is not it", async () => {
  const read = 'n = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\n';
  const loaded = [
    `import os\nfrom dotenv import load_dotenv\n\nload_dotenv()\n${read}`,
    `import os\nimport dotenv\n\ndotenv.load_dotenv(".env.local")\n${read}`,
    `import os\nfrom dotenv import load_dotenv as read_settings\n\nread_settings()\n${read}`,
  ];
  for (const src of loaded) assert.deepEqual(await lintCode(src, "GPU051", { preview: true }), [], src);
  const own = `import os\n\n\ndef load_dotenv():\n    return None\n\n\nload_dotenv()\n${read}`;
  assert.equal((await lintCode(own, "GPU051", { preview: true })).length, 1);
});
