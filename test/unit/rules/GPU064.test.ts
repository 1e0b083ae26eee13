import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { applyFix, lintCode, projectTree } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { initEngine, lintPython } from "../../../server/src/engine/lint";
import type { VisibleLaunch } from "../../../server/src/engine/slurmLaunch";

const ONE: VisibleLaunch = { script: "/p/separate_both.sh", line: 3, value: "1", from: "on the command" };
fixtureTests("GPU064", { visibleLaunches: [ONE] });

const SRC =
  'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\n\nx = torch.zeros(2, device="cuda")\n';

test("GPU064: a literal write that replaces the value a project script starts the file with: warning on the write, the script's line related, the setdefault fix (not safe)", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU064"), [], "no script starts the file with a value: the rule does not run");
  const [d, ...rest] = await lintCode(SRC, "GPU064", { visibleLaunches: [ONE] });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 40 } });
  assert.equal(
    d.message,
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0" replaces the CUDA_VISIBLE_DEVICES="1" that separate_both.sh:4 starts this file with (on the command): every run then uses GPU 0, not the GPU the script chose; keep a value the process was started with (os.environ.setdefault), or drop one of the two',
  );
  assert.deepEqual(d.related, [
    {
      file: "/p/separate_both.sh",
      range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } },
      message: 'separate_both.sh:4 starts this file with CUDA_VISIBLE_DEVICES="1"',
    },
  ]);
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(SRC, d);
  assert.equal(
    fixed,
    SRC.replace('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', 'os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")'),
  );
  assert.deepEqual(await lintCode(fixed, "GPU064", { visibleLaunches: [ONE] }), []);
  // Every launch gives the value the file writes: silent; one of two differs: reported, naming it.
  const zero = { ...ONE, value: "0", line: 2 };
  assert.deepEqual(await lintCode(SRC, "GPU064", { visibleLaunches: [zero] }), []);
  const [two] = await lintCode(SRC, "GPU064", {
    visibleLaunches: [zero, { ...ONE, value: "2,3", from: "exported on line 5" }],
  });
  assert.match(
    two.message,
    /CUDA_VISIBLE_DEVICES="2,3" that separate_both\.sh:4 starts this file with \(exported on line 5\): every run then uses GPU 0, not the GPUs the script chose/,
  );
});

test("GPU064 with the project's scripts: an inline prefix or an export before the command is read; a document's command, an expansion, a bare assignment and the same value are not", async () => {
  await initEngine();
  const file = (script: string, extra: Record<string, string> = {}) => {
    const dir = projectTree({ "inference.py": SRC, "run.sh": `#!/bin/bash\n${script}\n`, ...extra });
    clearSlurmLaunchCache();
    const path = join(dir, "inference.py");
    const { options } = resolveLintOptions(path, {});
    return lintPython(SRC, { ...options, select: ["GPU064"] }).diagnostics.map((d) => d.message.split(": every")[0]);
  };
  assert.deepEqual(
    file("CUDA_VISIBLE_DEVICES=0 python inference.py &\nCUDA_VISIBLE_DEVICES=1 python inference.py &\nwait"),
    [
      'os.environ["CUDA_VISIBLE_DEVICES"] = "0" replaces the CUDA_VISIBLE_DEVICES="1" that run.sh:3 starts this file with (on the command)',
    ],
  );
  assert.deepEqual(file("export CUDA_VISIBLE_DEVICES=2\ntorchrun --nproc_per_node=1 inference.py"), [
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0" replaces the CUDA_VISIBLE_DEVICES="2" that run.sh:3 starts this file with (exported on line 2)',
  ]);
  assert.deepEqual(file("CUDA_VISIBLE_DEVICES=0 python inference.py"), []);
  assert.deepEqual(file("CUDA_VISIBLE_DEVICES=$GPU python inference.py"), []);
  assert.deepEqual(file("CUDA_VISIBLE_DEVICES=1\npython inference.py"), []);
  assert.deepEqual(
    file("python inference.py", { "README.md": "```bash\nCUDA_VISIBLE_DEVICES=1 python inference.py\n```\n" }),
    [],
  );
});

test("GPU064: a write that a later write or removal on the started path replaces decides nothing: silent; a later write after CUDA started still leaves it in force", async () => {
  const launch = { visibleLaunches: [ONE] };
  // A fallback of "0" that the --device option then replaces: the option decides the GPU.
  const fromOption =
    'import argparse\nimport os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nparser = argparse.ArgumentParser()\nparser.add_argument("--device", default="0")\nopts = parser.parse_args()\nos.environ["CUDA_VISIBLE_DEVICES"] = opts.device\nimport torch\n';
  assert.deepEqual(await lintCode(fromOption, "GPU064", launch), []);
  // Two literals in a row: the second ("1", what the script gives) is the value in force.
  const twice =
    'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n';
  assert.deepEqual(await lintCode(twice, "GPU064", launch), []);
  // A removal afterwards (every GPU visible again): not "GPU 0" either.
  const removed =
    'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ.pop("CUDA_VISIBLE_DEVICES", None)\nimport torch\n';
  assert.deepEqual(await lintCode(removed, "GPU064", launch), []);
  // A setdefault afterwards keeps the value just written: still reported.
  const kept =
    'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "3")\nimport torch\n';
  assert.equal((await lintCode(kept, "GPU064", launch)).length, 1);
  // The second write comes after CUDA started and changes nothing: the first is the one in force.
  const late =
    'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const [d] = await lintCode(late, "GPU064", launch);
  assert.equal(d?.range.start.line, 2);
});

test("GPU064 with the project's scripts: a command after a cd the file is not under, or whose path also names another file of the project, is not taken as a launch of this file", async () => {
  await initEngine();
  const messages = (files: Record<string, string>, target = "infer.py") => {
    const dir = projectTree({ "infer.py": SRC, ...files });
    clearSlurmLaunchCache();
    const path = join(dir, target);
    const { options } = resolveLintOptions(path, {});
    return lintPython(SRC, { ...options, select: ["GPU064"] }).diagnostics.map((d) => d.message.split(" starts")[0]);
  };
  const said = 'os.environ["CUDA_VISIBLE_DEVICES"] = "0" replaces the CUDA_VISIBLE_DEVICES="1" that';
  // The script moves into demo/ first: `python infer.py` is demo/infer.py, not the top-level file.
  assert.deepEqual(
    messages({
      "run.sh": "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=1\ncd demo\npython infer.py\n",
      "demo/infer.py": "print(1)\n",
    }),
    [],
  );
  // A cd to a folder named by an expansion cannot be followed: silent.
  assert.deepEqual(messages({ "run.sh": '#!/bin/bash\ncd "$WORK"\nCUDA_VISIBLE_DEVICES=1 python infer.py\n' }), []);
  // `cd "$(dirname "$0")"` stays in the script's own folder: the file is still the one started.
  assert.deepEqual(
    messages({ "run.sh": '#!/bin/bash\ncd "$(dirname "$0")"\nCUDA_VISIBLE_DEVICES=1 python infer.py\n' }),
    [`${said} run.sh:3`],
  );
  // tools/run.sh's `python infer.py` names tools/infer.py as well as the top-level infer.py: which one
  // runs depends on where the script is started from, so neither is reported on its account.
  const both = { "tools/run.sh": "#!/bin/bash\nCUDA_VISIBLE_DEVICES=1 python infer.py\n", "tools/infer.py": SRC };
  assert.deepEqual(messages(both), []);
  assert.deepEqual(messages(both, "tools/infer.py"), []);
  // Without tools/infer.py the path names only the top-level file: reported.
  assert.deepEqual(messages({ "tools/run.sh": "#!/bin/bash\nCUDA_VISIBLE_DEVICES=1 python infer.py\n" }), [
    `${said} run.sh:2`,
  ]);
});
