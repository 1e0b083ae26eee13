/// <reference types="mocha" />
// The extension's own activation time, measured inside the real VS Code (read by `npm run bench`).
import * as assert from "node:assert/strict";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { getApi, outDir } from "./util";

suite("GPU Pilot activation", () => {
  test("activation time is measured and recorded", async () => {
    const api = await getApi();
    assert.equal(typeof api.activationMs, "number");
    assert.ok(api.activationMs! > 0 && api.activationMs! < 10_000, `activationMs ${api.activationMs}`);
    mkdirSync(outDir(), { recursive: true });
    writeFileSync(
      join(outDir(), "activation.json"),
      JSON.stringify({ activationMs: api.activationMs, at: new Date().toISOString() }),
    );
  });
});
