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
