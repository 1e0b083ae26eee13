import assert from "node:assert/strict";
import { test } from "node:test";
import {
  manifestFixtureTests,
  manifestDocExampleTest,
  lintManifestCode,
  applyManifestFix,
} from "./manifestFixtureCheck";
import { applyEdits } from "../../../server/src/engine/fixes";

manifestFixtureTests("GPU023");
manifestDocExampleTest("GPU023", "jobscript");

test("GPU023: the (unsafe) fix moves the line above the first command and the job then asks for it", () => {
  const text = "#!/bin/bash\n#SBATCH --nodes=1\nmodule load cuda\n#SBATCH --gres=gpu:4\npython t.py\n";
  const [d] = lintManifestCode(text, "jobscript", "GPU023");
  assert.equal(d.fix?.safe, false);
  const fixed = applyManifestFix(text, "jobscript", d);
  assert.equal(applyEdits(text, d.fix!.edits), fixed);
  assert.equal(fixed, "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\nmodule load cuda\npython t.py\n");
  assert.deepEqual(lintManifestCode(fixed, "jobscript", "GPU023"), []);
  assert.match(d.message, /first command \(line 3\), so the job runs without --gres=gpu:4$/);
});

test("GPU023: an indented or doubled #SBATCH is no directive; a script with only directives has no first command", () => {
  assert.deepEqual(
    lintManifestCode(
      "#!/bin/bash\necho hi\n  #SBATCH --gres=gpu:1\n##SBATCH --time=1\n#SBATCHX\n",
      "jobscript",
      "GPU023",
    ),
    [],
  );
  assert.deepEqual(lintManifestCode("#SBATCH --gres=gpu:1\n#SBATCH --time=1\n", "jobscript", "GPU023"), []);
});

test("GPU023: the first line with any shell text ends the directives, a `for` or `if` line too", () => {
  const d = lintManifestCode(
    "#!/bin/bash\nfor i in 1 2; do\n#SBATCH --gres=gpu:1\n  echo $i\ndone\n",
    "jobscript",
    "GPU023",
  );
  assert.deepEqual(
    d.map((x) => x.range.start.line),
    [2],
  );
  assert.match(d[0].message, /first command \(line 2\)/);
});
