// End-to-end tests of the GPU view and the selection everywhere, in a real VS Code with the fake
// nvidia-smi (test/fixtures/bin/nvidia-smi, busy mode: pid 582 "python3" holds 3380 MiB on GPU 0):
// the tree with processes (API and TreeDataProvider), streaming while the view is visible, Pick Free
// GPUs by policy, the variables in a new terminal's environment, and a resolved debug configuration.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, outDir, waitFor } from "./util";

/** The part of GPU Pilot's API (client/src/api.ts, GpuViewApi) these tests use. */
interface GpuViewApi {
  getSelection(): string[];
  setSelection(ids: string[]): Promise<void>;
  refresh(): Promise<void>;
  readonly gpuTreeProvider: vscode.TreeDataProvider<unknown>;
  getTreeRows(): {
    depth: number;
    id: string;
    label: string;
    description: string;
    tooltip: string;
    contextValue: string;
    checked?: boolean;
  }[];
  getProcesses(): { pid: number; user: string; commandLine: string; own: boolean }[];
  pickFreeGpus(policy?: {
    count?: number;
  }): Promise<{ picked: number[]; skipped: { index: number; reasons: string[] }[]; selection: string[] }>;
  getTerminalEnvironment(): Record<string, { value: string; type: string }>;
  resolveDebugConfiguration(
    configuration: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | null | undefined>;
  getStatusBarText(): string;
  getMonitorStatus(): { streaming: boolean; streamPid: number | undefined; notices: string[] };
}

async function gpuApi(): Promise<GpuViewApi> {
  const api = (await getApi()) as unknown as GpuViewApi;
  assert.equal(typeof api.getTreeRows, "function", "the API has no getTreeRows (GpuViewApi)");
  return api;
}

const GPU0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";

/**
 * Opens a terminal whose shell is Node itself (argument array, no shell, no sendText) that writes its
 * CUDA variables to a file, and returns them. ELECTRON_RUN_AS_NODE lets a desktop VS Code's
 * executable act as Node; it is harmless for node.
 */
async function terminalEnvironment(
  tag: string,
): Promise<{ CUDA_VISIBLE_DEVICES: string | null; CUDA_DEVICE_ORDER: string | null }> {
  const file = path.join(outDir(), `terminal-env-${tag}-${Date.now()}.json`);
  const script =
    "const e = process.env; require('fs').writeFileSync(process.argv[1], JSON.stringify({ CUDA_VISIBLE_DEVICES: e.CUDA_VISIBLE_DEVICES ?? null, CUDA_DEVICE_ORDER: e.CUDA_DEVICE_ORDER ?? null }))";
  const terminal = vscode.window.createTerminal({
    name: `GPU Pilot e2e ${tag}`,
    shellPath: process.execPath,
    shellArgs: ["-e", script, file],
    env: { ELECTRON_RUN_AS_NODE: "1" },
  });
  try {
    await waitFor(() => fs.existsSync(file), `the terminal to write ${file}`, 30_000);
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } finally {
    terminal.dispose();
  }
}

suite("GPU view and selection", () => {
  teardown(async () => {
    const api = await gpuApi();
    await api.setSelection([]);
  });

  test("e. the tree lists both H200s with the fake nvidia-smi's python3 process under GPU 0 (API rows and the TreeDataProvider)", async () => {
    const api = await gpuApi();
    await api.refresh();
    const rows = await waitFor(
      () => {
        const r = api.getTreeRows();
        return r.some((x) => x.contextValue.startsWith("computeApp")) ? r : undefined;
      },
      "a process row",
      30_000,
    );
    assert.deepEqual(
      rows.filter((r) => r.depth === 0).map((r) => r.label),
      ["GPU 0", "GPU 1"],
      JSON.stringify(rows),
    );
    const gpu0 = rows.findIndex((r) => r.id === `gpu/${GPU0}`);
    const gpu1 = rows.findIndex((r) => r.label === "GPU 1");
    const proc = rows.findIndex((r) => r.contextValue.startsWith("computeApp"));
    assert.ok(gpu0 < proc && proc < gpu1, "the process is a child of GPU 0");
    assert.equal(rows[proc].depth, 1);
    assert.match(rows[proc].label, /^582 python3/);
    // pid 582's user is unknown here (not in this /proc): left out of the row, said in the tooltip
    assert.match(rows[proc].description, /^3\.3 GiB( · …)?$/);
    assert.match(rows[proc].tooltip, /\| User \| (unknown|not read yet) \|/);
    assert.match(rows[gpu0].description, /^\d+% · (\d+ MiB\/|\d+\.\d\/)140\.4 GiB · \d+°C$/);
    assert.match(rows[gpu0].tooltip, /GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f/);
    assert.match(rows[gpu0].tooltip, /\| Power \| \d+\/700 W \(draw\/cap\) \|/, "details in the tooltip");
    assert.match(rows[gpu0].tooltip, /\| SM clock \| \d+ MHz \(max 1980 MHz\) \|/);
    // pid 582 is a process of the recorded machine: here /proc has no such program, so its user is unknown, calmly
    assert.ok(
      api.getProcesses().some((p) => p.pid === 582),
      JSON.stringify(api.getProcesses()),
    );

    // The same through the TreeDataProvider, as VS Code calls it
    const provider = api.gpuTreeProvider;
    const roots = (await provider.getChildren()) ?? [];
    const items = await Promise.all(roots.map((n) => provider.getTreeItem(n)));
    assert.deepEqual(
      items.slice(0, 2).map((i) => i.label),
      ["GPU 0", "GPU 1"],
    );
    const children = await Promise.all(
      ((await provider.getChildren(roots[0])) ?? []).map((n) => provider.getTreeItem(n)),
    );
    assert.ok(
      children.some((c) => /^582 /.test(String(c.label))),
      JSON.stringify(children.map((c) => c.label)),
    );
  });

  test("f. while the view is visible one nvidia-smi streams the numbers (loop.txt: 3389 MiB on GPU 0)", async () => {
    const api = await gpuApi();
    await vscode.commands.executeCommand("workbench.view.extension.gpuPilot");
    const status = await waitFor(
      () => {
        const s = api.getMonitorStatus();
        return s.streaming && s.streamPid ? s : undefined;
      },
      "the stream to run while the view is visible",
      30_000,
    );
    await waitFor(
      () =>
        api
          .getTreeRows()
          .find((r) => r.id === `gpu/${GPU0}`)
          ?.description.includes(" 3.3/140.4 GiB"),
      "streamed numbers in GPU 0's row",
      30_000,
    );
    assert.equal(api.getMonitorStatus().streamPid, status.streamPid, "the same process keeps streaming");
  });

  test("g. Pick Free GPUs by policy: GPU 0 has a process, so picking one GPU gives GPU 1", async () => {
    const api = await gpuApi();
    await api.setSelection([]);
    await vscode.commands.executeCommand("gpuPilot.pickFreeGpus");
    await waitFor(() => api.getSelection().length > 0, "a selection after Pick Free GPUs", 30_000);
    assert.deepEqual(api.getSelection(), ["1"]);
    const outcome = await api.pickFreeGpus({ count: 1 });
    assert.deepEqual(outcome.picked, [1]);
    assert.equal(outcome.skipped[0]?.index, 0);
    assert.match(outcome.skipped[0]?.reasons.join(" ") ?? "", /in use by .*pid 582/);
    await waitFor(
      () => /^\$\(circuit-board\) GPU 1 · \d+% · (\d+ MiB|\d+\.\d)\/140\.4 GiB$/.test(api.getStatusBarText()),
      `the status bar with GPU 1's load (now ${api.getStatusBarText()})`,
      10_000,
    );
  });

  test("h. a new terminal gets CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER=PCI_BUS_ID; none once the selection is cleared", async () => {
    const api = await gpuApi();
    await api.setSelection(["1"]);
    assert.deepEqual(api.getTerminalEnvironment(), {
      CUDA_VISIBLE_DEVICES: { value: "1", type: "replace" },
      CUDA_DEVICE_ORDER: { value: "PCI_BUS_ID", type: "replace" },
    });
    // The collection reaches the terminal service asynchronously: try new terminals until one has it.
    let seen: unknown;
    await waitFor(
      async () => {
        seen = await terminalEnvironment("selected");
        return JSON.stringify(seen) === JSON.stringify({ CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
      },
      "a terminal with CUDA_VISIBLE_DEVICES=1",
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last terminal saw ${JSON.stringify(seen)}`);
    });

    await api.setSelection([]);
    assert.deepEqual(api.getTerminalEnvironment(), {});
    await waitFor(
      async () => {
        seen = await terminalEnvironment("cleared");
        return (seen as { CUDA_VISIBLE_DEVICES: string | null }).CUDA_VISIBLE_DEVICES === null;
      },
      "a terminal without CUDA_VISIBLE_DEVICES",
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last terminal saw ${JSON.stringify(seen)}`);
    });
  });

  test("i. a Python debug configuration gets the selection unless it sets CUDA_VISIBLE_DEVICES itself", async () => {
    const api = await gpuApi();
    await api.setSelection(["1"]);
    const launch = {
      type: "debugpy",
      request: "launch",
      name: "Train",
      program: "${file}",
      env: { WANDB_MODE: "offline" },
    };
    const resolved = await api.resolveDebugConfiguration(launch);
    assert.deepEqual(resolved?.env, {
      WANDB_MODE: "offline",
      CUDA_VISIBLE_DEVICES: "1",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
    });
    const own = await api.resolveDebugConfiguration({
      type: "python",
      request: "launch",
      name: "Own",
      program: "${file}",
      env: { CUDA_VISIBLE_DEVICES: "0" },
    });
    assert.deepEqual(own?.env, { CUDA_VISIBLE_DEVICES: "0" });
    await api.setSelection([]);
    const none = await api.resolveDebugConfiguration({
      type: "debugpy",
      request: "launch",
      name: "None",
      program: "${file}",
    });
    assert.equal(none?.env, undefined);
  });
});
