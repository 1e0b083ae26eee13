/// <reference types="mocha" />
// The extension's own activation time, measured inside the real VS Code (read by `npm run bench`),
// and the public API's members beside the test hooks (the runner sets GPU_PILOT_TEST_HOOKS=1).
import * as assert from "node:assert/strict";
import type * as vscode from "vscode";
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

  test("the public API: apiVersion 1, the selection's change event, a run's environment", async () => {
    const api = (await getApi()) as Awaited<ReturnType<typeof getApi>> & {
      apiVersion: number;
      onDidChangeSelection: vscode.Event<string[]>;
      getRunEnvironment(): { vendor: string; set: Record<string, string>; unset: string[] } | undefined;
    };
    assert.equal(api.apiVersion, 1);
    const before = api.getSelection();
    const seen: string[][] = [];
    const sub = api.onDidChangeSelection((ids) => seen.push(ids));
    try {
      await api.setSelection(["1"]);
      assert.deepEqual(seen.at(-1), ["1"]);
      assert.deepEqual(api.getRunEnvironment(), {
        vendor: "nvidia",
        set: { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
        unset: [],
      });
    } finally {
      sub.dispose();
      await api.setSelection(before);
    }
  });
});
