// The public API (client/src/publicApi.ts): without GPU_PILOT_TEST_HOOKS=1, activate() returns exactly
// the members the type lists and docs/extension/README.md documents, frozen; with it, the test hooks
// of client/src/api.ts as well, over the same selection. With the stand-in `vscode` module.
import { fakeExtensionContext, FakeLanguageClient, recorded, settings } from "../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { activate, deactivate, type GpuPilotTestApi } from "../../../client/src/extension";
import { PUBLIC_API_MEMBERS, TEST_HOOKS_ENV, type GpuPilotPublicApi } from "../../../client/src/publicApi";
import { buildLaunch, selectionVariables } from "../../../common/src/run/launch";
import { ROOT } from "../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const extRoot = mkdtempSync(join(tmpdir(), "gpu-pilot-public-api-"));
mkdirSync(join(extRoot, "dist"), { recursive: true });
writeFileSync(join(extRoot, "dist", "server.js"), "// stand-in\n");
const savedFlag = process.env[TEST_HOOKS_ENV];
test.after(() => {
  if (savedFlag === undefined) delete process.env[TEST_HOOKS_ENV];
  else process.env[TEST_HOOKS_ENV] = savedFlag;
  rmSync(extRoot, { recursive: true, force: true });
});

const context = (selection?: string[]) => fakeExtensionContext(extRoot, selection);

/** activate() with the fake nvidia-smi and `flag` as GPU_PILOT_TEST_HOOKS (undefined: not set). */
function start(flag: string | undefined, selection?: string[]) {
  if (flag === undefined) delete process.env[TEST_HOOKS_ENV];
  else process.env[TEST_HOOKS_ENV] = flag;
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  FakeLanguageClient.instances.length = 0;
  recorded.treeViews.length = 0;
  recorded.statusItems.length = 0;
  const ctx = context(selection);
  return { api: activate(ctx as never), ctx };
}

async function stop(ctx: ReturnType<typeof context>): Promise<void> {
  await deactivate();
  for (const d of ctx.subscriptions) d.dispose();
}

/** The member names of the API table in docs/extension/README.md ("## API for other extensions"). */
function documentedMembers(): string[] {
  const doc = readFileSync(join(ROOT, "docs", "extension", "README.md"), "utf8");
  const section = doc.split(/^## /m).find((s) => s.startsWith("API for other extensions"));
  assert.ok(section, "docs/extension/README.md has a section 'API for other extensions'");
  return [...section.matchAll(/^\| `(\w+)(?:\(\))?` \|/gm)].map((m) => m[1]);
}

test("without GPU_PILOT_TEST_HOOKS=1 activate() returns exactly the documented public members, frozen", async () => {
  const declared = Object.keys(PUBLIC_API_MEMBERS).sort();
  assert.deepEqual(documentedMembers().sort(), declared, "docs/extension/README.md documents every member, no other");
  for (const flag of [undefined, "", "0", "true"]) {
    const { api, ctx } = start(flag);
    try {
      assert.deepEqual(Object.keys(api).sort(), declared, `GPU_PILOT_TEST_HOOKS=${JSON.stringify(flag)}`);
      assert.ok(Object.isFrozen(api));
      assert.equal((api as { getTreeRows?: unknown }).getTreeRows, undefined, "no test hook");
      assert.equal((api as { activationMs?: unknown }).activationMs, undefined);
    } finally {
      await stop(ctx);
    }
  }
});

test("the public members: the selection, its change event and a run's environment; nothing selected gives none", async () => {
  const { api, ctx } = start(undefined, ["1"]);
  try {
    const pub: GpuPilotPublicApi = api;
    assert.equal(pub.apiVersion, 1);
    assert.deepEqual(pub.getSelection(), ["1"]);
    // No inventory read yet: the vendor comes from the tools on PATH, here none (nvidia, as before vendors were known).
    const path = process.env.PATH;
    process.env.PATH = dirname(process.execPath);
    let run;
    try {
      run = pub.getRunEnvironment();
    } finally {
      process.env.PATH = path;
    }
    assert.deepEqual(run, {
      vendor: "nvidia",
      set: { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
      unset: [],
    });
  } finally {
    await stop(ctx);
  }
  const empty = start(undefined);
  try {
    assert.deepEqual(empty.api.getSelection(), []);
    assert.equal(empty.api.getRunEnvironment(), undefined);
  } finally {
    await stop(empty.ctx);
  }
});

test("with GPU_PILOT_TEST_HOOKS=1: the test hooks and the public members over one selection; the event fires on each change", async () => {
  const { api, ctx } = start("1");
  const hooks = api as GpuPilotTestApi;
  try {
    for (const name of Object.keys(PUBLIC_API_MEMBERS)) assert.ok(name in hooks, `public member ${name}`);
    assert.equal(typeof hooks.getTreeRows, "function");
    assert.equal(typeof hooks.activationMs, "number");
    const seen: string[][] = [];
    const sub = hooks.onDidChangeSelection((ids) => seen.push(ids));
    await hooks.setSelection(["1"]);
    await hooks.setSelection(["0", "1"]);
    sub.dispose();
    await hooks.setSelection([]);
    assert.deepEqual(seen, [["1"], ["0", "1"]]);
    await hooks.setSelection(["0"]);
    assert.deepEqual(hooks.getRunEnvironment()?.set, { CUDA_VISIBLE_DEVICES: "0", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  } finally {
    await stop(ctx);
  }
});

test("a run's environment is the one the python launcher gets, on NVIDIA and on AMD (launch.ts selectionVariables)", () => {
  const base = { interpreter: "python3", file: "/p/t.py", cwd: "/p" } as const;
  for (const vendor of ["nvidia", "amd"] as const) {
    for (const ids of [["1"], ["0", "1"], ["GPU-6486822f-842c-1320-f829-e4155c0d2130"]]) {
      const spec = buildLaunch({ ...base, deviceIds: ids, vendor });
      assert.deepEqual(selectionVariables(ids, vendor), { env: spec.env, unset: spec.unset }, `${vendor} ${ids}`);
    }
  }
  assert.deepEqual(selectionVariables(["0"], "amd"), {
    env: { ROCR_VISIBLE_DEVICES: "0" },
    unset: ["HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"],
  });
  assert.throws(() => selectionVariables([]), /No GPU selected/);
});
