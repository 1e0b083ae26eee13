import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU015");

const C18 = 'import os\n\nos.putenv("CUDA_VISIBLE_DEVICES", "1")\nimport torch\n';

test("GPU015 is an error on the putenv statement and says what happens", async () => {
  const [d] = await lintCode(C18, "GPU015");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 38 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /changes the C environment but not os\.environ/);
  assert.match(d.message, /first CUDA use fails/);
});

test("GPU015 fix assigns os.environ; re-linting offers no GPU015 again", async () => {
  const [d] = await lintCode(C18, "GPU015");
  assert.equal(d.fix?.title, 'Assign os.environ["CUDA_VISIBLE_DEVICES"] instead');
  assert.equal(d.fix?.safe, true);
  const fixed = applyFix(C18, d);
  assert.equal(fixed, 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n');
  assert.deepEqual(
    (await lint(fixed)).map((x) => x.code),
    [],
    "nothing remains in the default set",
  );
  assert.deepEqual(
    (await lint(fixed, { preview: true })).map((x) => x.code),
    ["GPU006"],
    "only the device-order information remains (preview)",
  );
});

test("GPU015 fix reuses the file's name for os / os.environ; none without one", async () => {
  const src = "from os import putenv, environ as env\nputenv('CUDA_VISIBLE_DEVICES', '0')\n";
  const [d] = await lintCode(src, "GPU015");
  assert.equal(applyFix(src, d), "from os import putenv, environ as env\nenv['CUDA_VISIBLE_DEVICES'] = '0'\n");
  const bare = "from os import putenv\nputenv('CUDA_VISIBLE_DEVICES', '0')\n";
  const [b] = await lintCode(bare, "GPU015");
  assert.ok(b);
  assert.equal(b.fix, undefined);
  const dynamic = "import os\nimport sys\nos.putenv('CUDA_VISIBLE_DEVICES', sys.argv[1])\n";
  assert.equal(
    (await lintCode(dynamic, "GPU015"))[0].fix?.safe,
    false,
    "a non-literal value may be bytes: offered only",
  );
});
