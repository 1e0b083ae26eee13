/**
 * `gpu-pilot check` options that did nothing or said the wrong thing (issue 46 item 9):
 * `--select GPU999` (no such rule), `--ignore ALL`, `check -`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli as cli } from "../support/cliRun";

const LATE = "import torch\nimport os\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
const dir = mkdtempSync(join(tmpdir(), "gp-select-"));
const late = join(dir, "late.py");
writeFileSync(late, LATE);

test("--select / --ignore with a code no rule has, or a prefix matching none: exit 2 naming it", async () => {
  for (const flag of ["--select", "--extend-select", "--ignore"]) {
    const r = await cli(["check", flag, "GPU999", late]);
    assert.equal(r.code, 2, flag);
    assert.match(r.err, new RegExp(`${flag}: no rule has the code GPU999 \\(codes are GPU001, `), flag);
  }
  const prefix = await cli(["check", "--select", "GPU9", late]);
  assert.equal(prefix.code, 2);
  assert.match(prefix.err, /--select: no rule has a code starting with GPU9/);
});

test("--ignore ALL turns every rule off; --select GPU001 --ignore ALL keeps GPU001 (the longer prefix wins)", async () => {
  const base = await cli(["check", "--format", "json", late]);
  assert.ok((JSON.parse(base.out) as unknown[]).length > 0, "the file has findings");
  const none = await cli(["check", "--format", "json", "--ignore", "ALL", late]);
  assert.deepEqual(JSON.parse(none.out), []);
  assert.equal(none.code, 0);
  const one = await cli(["check", "--format", "json", "--select", "GPU001", "--ignore", "ALL", late]);
  assert.deepEqual([...new Set((JSON.parse(one.out) as Array<{ code: string }>).map((d) => d.code))], ["GPU001"]);
});

test("check - reads the source from stdin (named -); - with other paths is a usage error", async () => {
  const r = await cli(["check", "--format", "json", "-"], LATE);
  const diags = JSON.parse(r.out) as Array<{ code: string; filename: string }>;
  assert.ok(
    diags.some((d) => d.code === "GPU001"),
    r.out + r.err,
  );
  assert.doesNotMatch(r.err, /no such file/);
  const mixed = await cli(["check", "-", late]);
  assert.equal(mixed.code, 2);
  assert.match(mixed.err, /- \(stdin\) cannot be checked together with other paths/);
});
