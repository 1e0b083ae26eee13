// End-to-end test of the dashboard's process table (issue 45 item 2) in a real VS Code: a real
// `sleep 300` started here is listed by the fake nvidia-smi as a compute process on GPU 1
// (FAKE_NVIDIA_SMI_EXTRA_APPS, through a wrapper set as gpuPilot.nvidiaSmiPath); in the webview's
// Processes tab it shows with this user and its command line; per-process SM % comes from the fake's
// `pmon -c 1 -s u` (mode `full`: the captured python3 on GPU 0 runs matmuls, 99 %; the sleep did no
// GPU work, `–` with the reason), read only while that tab is shown; a click on the PID header sorts the
// table (both ways); the header is one line with nothing clipped whichever column sorts (issue 45,
// the fresh user's item 1); Kill on its row asks a confirmation naming pid and command, and confirming it
// (through the webview's own buttons) ends the process with SIGKILL.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, waitFor } from "./util";
import type { DashboardClickTarget, DashboardState } from "../../../client/src/gpu/dashboard";

interface ProcessesApi {
  getDashboardState(): DashboardState;
  clickInDashboard(target: DashboardClickTarget): Promise<boolean>;
}

suite("GPU process table", () => {
  test("q. a real process listed on GPU 1: sorted by PID both ways, killed through Kill and its confirmation", async () => {
    const api = (await getApi()) as unknown as ProcessesApi;
    const child = spawn("sleep", ["300"], { stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on("exit", (_c, sig) => r(sig)));
    const pid = child.pid;
    assert.ok(pid, "sleep started");
    const config = vscode.workspace.getConfiguration("gpuPilot");
    const fake = config.get<string>("nvidiaSmiPath") ?? "";
    const info = config.inspect<string>("nvidiaSmiPath");
    const target =
      info?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-pilot-procs-"));
    const extra = path.join(dir, "extra-apps.csv");
    fs.writeFileSync(extra, `1, ${pid}, sleep, 1024\n`);
    const wrapper = path.join(dir, "nvidia-smi");
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\nFAKE_NVIDIA_SMI_MODE=full FAKE_NVIDIA_SMI_EXTRA_APPS=${JSON.stringify(extra)} exec ${JSON.stringify(fake)} "$@"\n`,
      { mode: 0o755 },
    );
    try {
      await config.update("nvidiaSmiPath", wrapper, target);
      await vscode.commands.executeCommand("gpuPilot.dashboard.focus");
      const first = await waitFor(() => api.getDashboardState().rendered, "the dashboard's first render", 60_000);
      if (first.view === "gpus") assert.equal(api.getDashboardState().readingSm, false, "no pmon for the GPUs tab");
      await api.clickInDashboard({ kind: "view", view: "processes" });
      const listed = await waitFor(
        () => {
          const s = api.getDashboardState();
          return s.rendered?.view === "processes" && s.rendered.table.pids.includes(pid) ? s : undefined;
        },
        `pid ${pid} in the Processes tab`,
        60_000,
      );
      const row = listed.model?.processes.find((p) => p.pid === pid);
      assert.deepEqual(
        [row?.gpuIndex, row?.user, row?.command, row?.memory, row?.canSignal],
        [1, os.userInfo().username, "sleep 300", "1.0 GiB", true],
      );
      // SM % from pmon, joined by (GPU, pid): 99 % for the matmuls on GPU 0, `–` for the sleep. pmon
      // is asked about the GPUs that hold a process when a round starts, so the sleep on GPU 1 may
      // be "not read yet" until the next round (15 s): wait for both.
      const sm = await waitFor(
        () => {
          const s = api.getDashboardState();
          const busy = s.model?.processes.find((p) => p.gpuIndex === 0 && p.pid === 582);
          const sleeping = s.model?.processes.find((p) => p.pid === pid);
          return busy?.sm === "99%" && /^No sample/.test(sleeping?.smNote ?? "") ? s : undefined;
        },
        "pmon's SM % in the Processes tab",
        60_000,
      );
      assert.equal(sm.readingSm, true, "the Processes tab reads SM %");
      const sleepRow = sm.model?.processes.find((p) => p.pid === pid);
      assert.equal(sleepRow?.sm, "–");
      assert.match(sleepRow?.smNote ?? "", /^No sample: .*did no GPU work then/);
      assert.match(
        sm.model?.processes.find((p) => p.pid === 582)?.smNote ?? "",
        /nvidia-smi pmon's last sample, read every 15 s while the Processes tab is shown/,
      );
      // One header line over the numbers (it took three: host memory, time and command had lines of
      // their own), short names with their full names in tooltips; nothing clipped, the sort arrow
      // included ("GPU mem ▾" was cut in its 5.6em column).
      assert.deepEqual(
        listed.rendered?.table.headers.map((h) => h.replace(/\s*[▾▴]$/, "")),
        ["GPU", "PID", "User", "Mem", "SM", "CPU"],
      );
      for (const key of ["gpu", "pid", "user", "memory", "sm", "cpu", "host", "time", "command"] as const) {
        await api.clickInDashboard({ kind: "sort", key });
        const r = await waitFor(
          () => {
            const x = api.getDashboardState().rendered;
            return x?.sort.key === key ? x : undefined;
          },
          `the table sorted by ${key}`,
          20_000,
        );
        assert.equal(r.table.sortList, key, "the Sort list shows the column");
        assert.equal(r.table.headerLines, 1, `header on one line sorted by ${key}: ${JSON.stringify(r.table)}`);
        assert.deepEqual(
          r.table.clipped,
          [],
          `nothing clipped sorted by ${key} (${r.width} px): ${JSON.stringify(r.table)}`,
        );
        assert.deepEqual(r.table.cellsClipped, [], `no number cut sorted by ${key}: ${JSON.stringify(r.table)}`);
      }

      // Sort by PID: ascending, then descending (the header's own click handler).
      await api.clickInDashboard({ kind: "sort", key: "pid" });
      const up = await waitFor(
        () => {
          const r = api.getDashboardState().rendered;
          return r?.sort.key === "pid" && !r.sort.descending && r.table.pids.length >= 2 ? r.table.pids : undefined;
        },
        "the table sorted by PID, ascending",
        20_000,
      );
      assert.deepEqual(
        up,
        [...up].sort((a, b) => a - b),
        `ascending: ${up.join(" ")}`,
      );
      await api.clickInDashboard({ kind: "sort", key: "pid" });
      const down = await waitFor(
        () => {
          const r = api.getDashboardState().rendered;
          return r?.sort.key === "pid" && r.sort.descending ? r.table.pids : undefined;
        },
        "the table sorted by PID, descending",
        20_000,
      );
      assert.deepEqual(down, [...up].reverse(), `descending: ${down.join(" ")}`);

      // Kill: a confirmation naming the process; confirming it sends SIGKILL.
      await api.clickInDashboard({ kind: "signal", pid, signal: "SIGKILL" });
      const question = await waitFor(
        () => api.getDashboardState().rendered?.confirm || undefined,
        "the Kill confirmation",
        20_000,
      );
      assert.equal(
        question,
        `Kill process ${pid} of ${os.userInfo().username} on GPU 1 (sleep 300)? GPU Pilot sends it SIGKILL: it ends at once, unsaved work is lost.`,
      );
      assert.equal(fs.existsSync(`/proc/${pid}`), true, "nothing sent before the answer");
      await api.clickInDashboard({ kind: "confirm" });
      assert.equal(await exited, "SIGKILL", "the process ended by SIGKILL");
      await waitFor(() => !fs.existsSync(`/proc/${pid}`) || undefined, "the process gone from /proc", 10_000);
      const result = await waitFor(
        () => api.getDashboardState().rendered?.result || undefined,
        "the result line",
        20_000,
      );
      assert.equal(result, `Sent SIGKILL to process ${pid}.`);
      assert.deepEqual(api.getDashboardState().lastSignal, { ok: true, message: `Sent SIGKILL to process ${pid}.` });
      // nvidia-smi stops listing it (as a real one would): the row goes.
      fs.writeFileSync(extra, "");
      await waitFor(
        () => !api.getDashboardState().rendered?.table.pids.includes(pid) || undefined,
        "the row gone",
        30_000,
      );
    } finally {
      child.kill("SIGKILL");
      await api.clickInDashboard({ kind: "view", view: "gpus" });
      await waitFor(() => !api.getDashboardState().readingSm || undefined, "pmon stopped with the GPUs tab", 20_000);
      await api.clickInDashboard({ kind: "sort", key: "memory" });
      await config.update("nvidiaSmiPath", info?.workspaceValue ?? info?.globalValue, target);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
