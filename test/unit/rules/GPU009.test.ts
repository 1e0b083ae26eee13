import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU009");

const C09 =
  'import os\nimport sys\nimport torch\n\nwarm = torch.zeros(1).cuda()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ndel sys.modules["torch"]\nimport torch\n';

test("GPU009 sits on the del statement, is an error and names the re-import and the frozen variable", async () => {
  const [d] = await lintCode(C09, "GPU009");
  assert.deepEqual(d.range, { start: { line: 6, character: 0 }, end: { line: 6, character: 24 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /`del sys\.modules\["torch"\]` followed by `import torch` \(line 8\) does not reset CUDA/);
  assert.match(d.message, /CUDA_VISIBLE_DEVICES set at line 6 still has no effect/);
  assert.match(d.message, /restart the process/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 7, character: 0 }, end: { line: 7, character: 12 } });
});

test("GPU009 fix removes the statement; re-linting offers it no more", async () => {
  const [d] = await lintCode(C09, "GPU009");
  assert.equal(d.fix?.title, "Remove it (restart the process with the variable set instead)");
  assert.equal(d.fix?.safe, false);
  assert.match(d.fix?.note ?? "", /run command/);
  const fixed = applyFix(C09, d);
  assert.equal(
    fixed,
    'import os\nimport sys\nimport torch\n\nwarm = torch.zeros(1).cuda()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n',
  );
  assert.deepEqual(await lintCode(fixed, "GPU009"), []);
});

test("GPU009: reload in a block alone leaves `pass`; a variable set before CUDA started is not blamed", async () => {
  const src =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport importlib\nimport torch\nif True:\n    importlib.reload(torch)\n';
  const [d] = await lintCode(src, "GPU009");
  assert.match(d.message, /startup variables changed now still have no effect/);
  assert.equal(
    applyFix(src, d),
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport importlib\nimport torch\nif True:\n    pass\n',
  );
});

test("GPU009 offers no fix when the del also removes something else", async () => {
  const src = "import torch\nimport numpy\ndel torch, numpy\nimport torch\n";
  const [d] = await lintCode(src, "GPU009");
  assert.ok(d);
  assert.equal(d.fix, undefined);
});
