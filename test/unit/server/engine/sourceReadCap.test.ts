/**
 * Sources over the size limit are not read whole (issue 46 item 9): a 200 MB `.py` gets its GPU000
 * from its size, in the CLI and in checkFile (MCP, language-model tool), without 200 MB in memory.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../support/helpers";
import { checkFileOnDisk } from "../../../../server/src/agentCheck";
import { initEngine } from "../../../../server/src/engine/lint";
import { sourceReadCap } from "../../../../server/src/engine/limits";

const dir = mkdtempSync(join(tmpdir(), "gp-readcap-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const big = join(dir, "big.py");
writeFileSync(big, "");
truncateSync(big, 200 * 1000 * 1000); // sparse: no disk used

test("sourceReadCap: the limit plus a BOM for code files; all of it for notebooks and with no limit", () => {
  assert.equal(sourceReadCap(2048, false, 1e9), 2048 * 1024 + 3);
  assert.equal(sourceReadCap(undefined, false, 1e9), 2048 * 1024 + 3);
  assert.equal(sourceReadCap(2048, true, 1e9), 1e9);
  assert.equal(sourceReadCap(0, false, 1e9), 1e9);
});

test("gpu-pilot check of a 200 MB .py: GPU000 naming its size; peak RSS grows by less than 64 MiB", () => {
  const script = `
    const { main } = require(${JSON.stringify(join(ROOT, "server/src/cli.ts"))});
    const before = process.resourceUsage().maxRSS;
    let out = "";
    main(["check", "--no-cache", "--format", "json", ${JSON.stringify(big)}], { out: (s) => { out += s; }, err: () => {}, stdin: async () => "" })
      .then((code) => console.log(JSON.stringify({ code, out, grewKiB: process.resourceUsage().maxRSS - before })));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    encoding: "utf8",
    cwd: ROOT,
    timeout: 120_000,
  });
  const res = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as { code: number; out: string; grewKiB: number };
  const diags = JSON.parse(res.out) as Array<{ code: string; message: string }>;
  assert.deepEqual(
    diags.map((d) => d.code),
    ["GPU000"],
  );
  assert.match(diags[0].message, /its code is 195,313 KB, over the 2,048 KB limit/);
  assert.ok(res.grewKiB < 64 * 1024, `peak RSS grew ${Math.round(res.grewKiB / 1024)} MiB`);
});

test("checkFile of a 200 MB .py: one GPU000 finding from its size", async () => {
  await initEngine();
  const r = checkFileOnDisk(big, () => ({ maxFileSizeKB: 2048 }));
  assert.ok(r.ok);
  assert.deepEqual(
    r.findings.map((f) => [f.code, f.message]),
    [
      [
        "GPU000",
        "GPU Pilot did not lint this file: its code is 195,313 KB, over the 2,048 KB limit. Raise gpuPilot.maxFileSizeKB (CLI: --max-file-size-kb; 0: no limit) to lint it.",
      ],
    ],
  );
});
