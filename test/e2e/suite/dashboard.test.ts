// End-to-end tests of the GPU dashboard (issue 19) in a real VS Code with the fake nvidia-smi (busy
// mode: 2 x H200, pid 582 python3 on GPU 0): the webview view renders a card per GPU; a click on a
// tick box inside the webview (through its own DOM handler) changes the selection, and the tree,
// the status bar and the API agree; a selection made through the API reaches the webview's boxes; a
// click on a column header sorts the process table; nothing is clipped at the view's width; the
// card shows SM activity from the fake's dmon replay (the H200 captures) and, with a GPU that spins
// one thread block (mode spin, through a wrapper set as gpuPilot.nvidiaSmiPath), the busy-but-idle flag.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, waitFor } from "./util";
import type { DashboardClickTarget, DashboardState } from "../../../client/src/gpu/dashboard";

interface DashboardApi {
  getSelection(): string[];
  setSelection(ids: string[]): Promise<void>;
  getTreeRows(): { depth: number; id: string; label: string; description: string; checked?: boolean }[];
  getStatusBarText(): string;
  getDashboardState(): DashboardState;
  clickInDashboard(target: DashboardClickTarget): Promise<boolean>;
}

const GPU0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const GPU1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";

async function dashboardApi(): Promise<DashboardApi> {
  const api = (await getApi()) as unknown as DashboardApi;
  assert.equal(typeof api.getDashboardState, "function", "the API has no getDashboardState");
  return api;
}

/** Shows the dashboard and waits for its webview's first render of both GPUs. */
async function shown(api: DashboardApi): Promise<NonNullable<DashboardState["rendered"]>> {
  await vscode.commands.executeCommand("gpuPilot.dashboard.focus");
  return waitFor(
    () => {
      const s = api.getDashboardState();
      return s.visible && s.rendered && s.rendered.gpus.length === 2 ? s.rendered : undefined;
    },
    "the dashboard's webview to render both GPUs",
    60_000,
  );
}

suite("GPU dashboard", () => {
  suiteSetup(async () => {
    await (await dashboardApi()).setSelection([]);
  });
  suiteTeardown(async () => {
    await (await dashboardApi()).setSelection([]);
  });

  test("m. the dashboard renders a card per GPU with the tree's numbers, unclipped", async () => {
    const api = await dashboardApi();
    const rendered = await shown(api);
    assert.deepEqual(
      rendered.gpus.map((g) => [g.uuid, g.index, g.checked]),
      [
        [GPU0, 0, false],
        [GPU1, 1, false],
      ],
    );
    const model = api.getDashboardState().model;
    assert.ok(model, "a model was posted");
    for (const g of rendered.gpus) {
      const row = api.getTreeRows().find((r) => r.id === `gpu/${g.uuid}`);
      assert.ok(row, `a tree row for ${g.uuid}`);
      // The tree's description is `<util> · <memory> · <temperature>`: the same texts as the card's bars (one source).
      const [util, memory] = row.description.split(" · ");
      await waitFor(
        () => {
          const now = api.getDashboardState().rendered?.gpus.find((x) => x.uuid === g.uuid);
          const tree = api
            .getTreeRows()
            .find((r) => r.id === `gpu/${g.uuid}`)
            ?.description.split(" · ");
          return now && tree && now.utilization === tree[0] && now.memory === tree[1];
        },
        `GPU ${g.index}: the card's numbers equal the tree's (${util}, ${memory})`,
        20_000,
      );
    }
    assert.deepEqual(rendered.gpus[0].pids, [582], "the python3 process under GPU 0");
    assert.equal(
      api.getDashboardState().rendered?.overflowing,
      false,
      `nothing wider than the view (${api.getDashboardState().rendered?.width} px)`,
    );
  });

  test("n. a click on GPU 1's tick box in the webview selects GPU 1: tree, status bar and API agree; the API's selection reaches the webview", async () => {
    const api = await dashboardApi();
    await shown(api);
    assert.equal(await api.clickInDashboard({ kind: "tick", uuid: GPU1 }), true);
    await waitFor(() => api.getSelection().join() === "1", "the click to select GPU 1", 20_000);
    const tree = api.getTreeRows().filter((r) => r.depth === 0);
    assert.deepEqual(
      tree.map((r) => [r.label, r.checked]),
      [
        ["GPU 0", false],
        ["GPU 1", true],
      ],
      "the tree's checkboxes",
    );
    assert.match(api.getStatusBarText(), /^\$\(circuit-board\) GPU 1 · /, "the status bar");
    await waitFor(
      () =>
        api
          .getDashboardState()
          .rendered?.gpus.map((g) => g.checked)
          .join() === "false,true",
      "the webview to show GPU 1 ticked",
      20_000,
    );

    await api.setSelection(["0"]);
    await waitFor(
      () =>
        api
          .getDashboardState()
          .rendered?.gpus.map((g) => g.checked)
          .join() === "true,false",
      "a selection made through the API to reach the webview's boxes",
      20_000,
    );
    assert.equal(await api.clickInDashboard({ kind: "tick", uuid: GPU0 }), true);
    await waitFor(
      () => api.getSelection().length === 0,
      "unticking GPU 0 in the webview to clear the selection",
      20_000,
    );
    assert.deepEqual(
      api
        .getTreeRows()
        .filter((r) => r.depth === 0)
        .map((r) => r.checked),
      [false, false],
    );
    assert.match(api.getStatusBarText(), /GPU: none/);
  });

  test("o. a click on a process column header sorts the table (aria-sort follows), a second click flips it", async () => {
    const api = await dashboardApi();
    await shown(api);
    assert.equal(await api.clickInDashboard({ kind: "sort", key: "pid", uuid: GPU0 }), true);
    await waitFor(
      () => {
        const r = api.getDashboardState().rendered;
        return r && r.sort.key === "pid" && !r.sort.descending;
      },
      "the table sorted by pid, ascending",
      20_000,
    );
    await api.clickInDashboard({ kind: "sort", key: "pid", uuid: GPU0 });
    await waitFor(
      () => {
        const r = api.getDashboardState().rendered;
        return r && r.sort.key === "pid" && r.sort.descending;
      },
      "a second click: descending",
      20_000,
    );
    assert.deepEqual(api.getDashboardState().model?.sort, { key: "pid", descending: true });
    await api.clickInDashboard({ kind: "sort", key: "memory", uuid: GPU0 });
    await waitFor(() => api.getDashboardState().rendered?.sort.key === "memory", "back to memory", 20_000);
  });

  test("p. SM activity beside Util from nvidia-smi dmon; a spinning GPU 0 is flagged busy but idle, GPU 1 is not", async () => {
    const api = await dashboardApi();
    await shown(api);
    await waitFor(
      () => api.getDashboardState().rendered?.gpus.every((g) => g.smActivity === "0%"),
      "the SM bars of the idle replay (0%)",
      30_000,
    );
    const config = vscode.workspace.getConfiguration("gpuPilot");
    const fake = config.get<string>("nvidiaSmiPath") ?? "";
    const info = config.inspect<string>("nvidiaSmiPath");
    const target =
      info?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-pilot-spin-"));
    const wrapper = path.join(dir, "nvidia-smi");
    fs.writeFileSync(wrapper, `#!/bin/sh\nFAKE_NVIDIA_SMI_MODE=spin exec ${JSON.stringify(fake)} "$@"\n`, {
      mode: 0o755,
    });
    try {
      await config.update("nvidiaSmiPath", wrapper, target);
      const r = await waitFor(
        () => {
          const now = api.getDashboardState().rendered;
          return now?.gpus[0]?.busyButIdle ? now : undefined;
        },
        "GPU 0 flagged busy but idle",
        30_000,
      );
      assert.deepEqual(
        r.gpus.map((g) => [g.index, g.smActivity, g.busyButIdle]),
        [
          [0, "0%", true],
          [1, "0%", false],
        ],
      );
      await waitFor(
        () => api.getDashboardState().rendered?.gpus[0]?.utilization === "100%",
        "GPU-Util 100% on the spinning GPU",
        20_000,
      );
      assert.equal(api.getDashboardState().rendered?.overflowing, false, "the flag fits the view");
      const tip =
        (api.getTreeRows() as { id: string; tooltip?: string }[]).find((row) => row.id === `gpu/${GPU0}`)?.tooltip ??
        "";
      assert.match(tip, /Busy but idle: GPU-Util 100% while SM activity is 0%/, "the tree tooltip says so too");
    } finally {
      await config.update("nvidiaSmiPath", info?.workspaceValue ?? info?.globalValue, target);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
