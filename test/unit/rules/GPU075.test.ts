import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { lintCode, projectTree } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { CHILD_PROJECT } from "../support/childProject";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";

fixtureTests("GPU075", { preview: true, project: CHILD_PROJECT });

const SRC =
  'import os\nimport subprocess\nimport sys\n\nimport torch\n\n\ndef main():\n    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n    subprocess.run([sys.executable, "-m", "bench.worker"], check=True)\n';

test("GPU075: a child of a process that picks its GPU by the local rank, whose module uses the default device: warning on the callee", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU075", { preview: true, project: CHILD_PROJECT });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 9, character: 4 }, end: { line: 9, character: 18 } });
  assert.equal(
    d.message,
    "`python -m bench.worker` runs on GPU 0 whatever this process's GPU: this file picks its GPU by the local rank (`torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))`, line 9), but a new process does not inherit the current device (it starts on device 0) and gets CUDA_VISIBLE_DEVICES unchanged, so bench/worker.py:7's `torch.device(\"cuda\")` is GPU 0 in every rank's child; start it with env= narrowing CUDA_VISIBLE_DEVICES to this rank's GPU, or give it its device",
  );
  // Preview only; silent without the project index.
  assert.deepEqual(await lintCode(SRC, "GPU075", { project: CHILD_PROJECT }), []);
  assert.deepEqual(await lintCode(SRC, "GPU075", { preview: true }), []);
});

/** The recall case's shape: the child is started in a method of a kernel library, the rank's device is set in the launched script. */
const PROJECT: Record<string, string> = {
  "run.sh": "#!/bin/bash\ntorchrun --standalone --nproc_per_node=4 train.py\n",
  "kernels/__init__.py": "from kernels.tuner import Tuner\n",
  "kernels/tuner.py":
    'import subprocess\nimport sys\n\n\nclass Tuner:\n    def run(self):\n        return subprocess.run([sys.executable, "-m", "kernels.worker"], check=True)\n',
  "kernels/worker.py":
    'import torch\n\n\ndef bench():\n    x = torch.randn(8, device="cuda")\n    return x.sum()\n\n\nif __name__ == "__main__":\n    bench()\n',
  "train.py":
    'import os\n\nimport torch\n\nfrom kernels import Tuner\n\n\ndef main():\n    local_rank = int(os.environ["LOCAL_RANK"])\n    torch.cuda.set_device(local_rank)\n    Tuner().run()\n\n\nif __name__ == "__main__":\n    main()\n',
};

async function lintTuner(files: Record<string, string>, preview = true) {
  const dir = projectTree(files);
  try {
    clearSlurmLaunchCache();
    const file = join(dir, "kernels", "tuner.py");
    const { options } = resolveLintOptions(file, {});
    const project = new ProjectIndex().lookupFor(file, lookupOptions({}));
    return await lintCode(files["kernels/tuner.py"], "GPU075", { ...options, preview, project });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("GPU075 across files: the started script calls the method that starts the child right after it sets the rank's GPU, four processes per node: a default finding", async () => {
  const [d, ...rest] = await lintTuner(PROJECT, false);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.equal(
    d.message,
    "`python -m kernels.worker` runs on GPU 0 whatever this process's GPU: run.sh (line 2) starts train.py with 4 processes per node, which picks its GPU by the local rank (`torch.cuda.set_device(local_rank)`, train.py:10) and then calls into this code (`Tuner().run()`, train.py:11), but a new process does not inherit the current device (it starts on device 0) and gets CUDA_VISIBLE_DEVICES unchanged, so worker.py:5's `torch.randn(device=\"cuda\")` is GPU 0 in every rank's child; start it with env= narrowing CUDA_VISIBLE_DEVICES to this rank's GPU, or give it its device",
  );
  assert.deepEqual(
    d.related?.map((r) => r.message),
    [
      "train.py is started here",
      "the rank's GPU becomes the current device here",
      "the child's CUDA work on the default device",
    ],
  );
  // A module-level instance, a method reaching the start through `self.` calls.
  const tuner =
    'import subprocess\nimport sys\n\n\nclass Tuner:\n    def best(self):\n        return self._launch()\n\n    def _launch(self):\n        return subprocess.Popen([sys.executable, "-m", "kernels.worker"])\n';
  const train = PROJECT["train.py"]
    .replace("from kernels import Tuner\n", "from kernels import Tuner\n\nTUNER = Tuner()\n")
    .replace("Tuner().run()", "TUNER.best()");
  const lines = async (files: Record<string, string>, preview: boolean) =>
    (await lintTuner(files, preview)).map((x) => x.range.start.line);
  assert.deepEqual(await lines({ ...PROJECT, "kernels/tuner.py": tuner, "train.py": train }, false), [9]);
  // A parameter of the same name is not the module-level instance.
  const shadowed = train.replace("def main():", "def main(TUNER=None):");
  assert.deepEqual(await lines({ ...PROJECT, "kernels/tuner.py": tuner, "train.py": shadowed }, false), []);
});

test("GPU075 across files: preview where the process count is not a number above 1, or the call is under a rank test or elsewhere", async () => {
  const lines = async (files: Record<string, string>, preview: boolean) =>
    (await lintTuner(files, preview)).map((x) => x.range.start.line);
  const one = { ...PROJECT, "run.sh": PROJECT["run.sh"].replace("=4", "=1") };
  assert.deepEqual(await lines(one, false), []);
  assert.deepEqual(await lines(one, true), [6]);
  const auto = { ...PROJECT, "run.sh": PROJECT["run.sh"].replace("=4", "=gpu") };
  assert.deepEqual(await lines(auto, false), []);
  const ranked = {
    ...PROJECT,
    "train.py": PROJECT["train.py"].replace("    Tuner().run()\n", "    if local_rank == 0:\n        Tuner().run()\n"),
  };
  const returns = {
    ...PROJECT,
    "train.py": PROJECT["train.py"].replace(
      "    Tuner().run()\n",
      "    if local_rank != 0:\n        return\n    Tuner().run()\n",
    ),
  };
  assert.deepEqual(await lines(returns, false), []);
  // Only the import reaches the module then: preview.
  assert.deepEqual(await lines(ranked, false), []);
  assert.deepEqual(await lines(ranked, true), [6]);
});

test("GPU075 across files: silent where the child picks its device or never runs its CUDA code, the launched script does not pick one, or no script starts one", async () => {
  const picks =
    'import os\nimport torch\n\nx = torch.randn(8, device="cuda")\ntorch.cuda.set_device(int(os.environ.get("GPU", 0)))\n';
  assert.deepEqual(await lintTuner({ ...PROJECT, "kernels/worker.py": picks }), []);
  const unused =
    'import torch\n\n\ndef debug():\n    return torch.randn(8, device="cuda")\n\n\nprint(torch.__version__)\n';
  assert.deepEqual(await lintTuner({ ...PROJECT, "kernels/worker.py": unused }), []);
  assert.deepEqual(
    await lintTuner({
      ...PROJECT,
      "train.py": PROJECT["train.py"].replace("torch.cuda.set_device(local_rank)", "pass"),
    }),
    [],
  );
  const { ["run.sh"]: _, ...unlaunched } = PROJECT;
  void _;
  assert.deepEqual(await lintTuner(unlaunched), []);
});
