/**
 * Command handlers of the GPU view: "Pick Free GPUs" (the nvisel-style policy of policy.ts applied
 * to a fresh inventory) and "Stop Process" (SIGTERM to the user's own process, after confirmation).
 */
import * as vscode from "vscode";
import * as config from "../config";
import { log } from "../log";
import type { GpuMonitor } from "./monitor";
import { normalizePolicy, type PickPolicy, type PickResult } from "../../../common/src/gpu/policy";
import { pickAndClaim } from "../../../common/src/gpu/claimPick";
import type { ClaimKeeper } from "../../../common/src/gpu/claimKeeper";
import { stopProcess as sendStop, type StopOptions } from "../../../common/src/gpu/procinfo";
import { normalizeSelection, type SelectionStore } from "../../../common/src/gpu/selection";
import { formatFree, formatMiB, formatPercent } from "../../../common/src/gpu/units";

/** What "Pick Free GPUs" did, as plain data (the API returns it). */
export interface PickFreeOutcome {
  /** The policy applied (settings merged with the caller's overrides). */
  policy: PickPolicy;
  /** nvidia-smi indices of the picked GPUs, best first. */
  picked: number[];
  /** The GPUs that were skipped and why. */
  skipped: { index: number; reasons: string[] }[];
  /** True when fewer GPUs than `policy.count` matched. */
  short: boolean;
  /** The selection afterwards (unchanged when nothing matched or nvidia-smi failed). */
  selection: string[];
  /** Set when there was nothing to pick from: nvidia-smi's problem. */
  problem?: string;
}

/** Options of {@link pickFreeGpusCommand}: wait (ms, 0: once) until enough GPUs are free and unclaimed; a cancel signal. */
export interface PickWait {
  waitMs?: number;
  signal?: AbortSignal;
}

/**
 * Picks free GPUs by the `gpuPilot.pick.*` policy (overridden by `overrides`), skipping GPUs others
 * claimed, claims them all at once in the ledger (`claims`; absent or off: no claims) and makes
 * them the selection. With `wait.waitMs` it reads nvidia-smi again every 2 s until enough are free.
 * Reports in a notification that does not block; never throws.
 */
export async function pickFreeGpusCommand(
  monitor: GpuMonitor,
  selection: SelectionStore,
  overrides: Partial<PickPolicy> = {},
  claims?: ClaimKeeper,
  wait: PickWait = {},
): Promise<PickFreeOutcome> {
  const policy = normalizePolicy({ ...config.pickPolicy(), ...overrides });
  await monitor.refresh();
  if (!monitor.inventory || monitor.inventory.gpus.length === 0) {
    const problem = monitor.problem || "nvidia-smi lists no GPUs";
    void vscode.window.showWarningMessage(`GPU Pilot: no GPUs to pick from. ${problem}`);
    return { policy, picked: [], skipped: [], short: true, selection: selection.get(), problem };
  }
  let first = true;
  const read = async () => {
    if (!first) await monitor.refresh();
    first = false;
    const inv = monitor.inventory;
    return { gpus: inv?.gpus ?? [], apps: inv?.apps ?? [], details: inv?.processes ?? [] };
  };
  const { result, note } = await pickAndClaim(claims?.ledger, read, policy, "pick", undefined, {
    ...(wait.waitMs ? { waitMs: wait.waitMs } : {}),
    ...(wait.signal ? { signal: wait.signal } : {}),
  });
  return reportPick(result, note, policy, monitor, selection);
}

/** Logs and shows what a pick did, and makes the picked GPUs the selection. */
async function reportPick(
  result: PickResult,
  note: string | undefined,
  policy: PickPolicy,
  monitor: GpuMonitor,
  selection: SelectionStore,
): Promise<PickFreeOutcome> {
  const skipped = result.candidates
    .filter((c) => c.reasons.length > 0)
    .map((c) => ({ index: c.gpu.index, reasons: c.reasons }));
  const rules = `count ${policy.count}, ≥ ${formatMiB(policy.minFreeMemoryMiB)} free, ≤ ${policy.maxUtilizationPercent}% busy${policy.excludeBusyWithOtherUsers ? ", no other users' processes" : ""}`;
  log.info(
    `Pick Free GPUs (${rules}): picked ${result.picked.map((g) => g.index).join(", ") || "none"}; ${skipped.map((s) => `GPU ${s.index}: ${s.reasons.join("; ")}`).join(" | ") || "none skipped"}${note ? `; ${note}` : ""}`,
  );
  if (result.picked.length === 0) {
    void vscode.window
      .showWarningMessage(
        `GPU Pilot: no GPU is free by the pick policy (${rules}). ${[...skipped.map((s) => `GPU ${s.index}: ${s.reasons[0]}`), ...(note ? [note] : [])].join("; ")}.`,
        "Open Settings",
      )
      .then((c) => {
        if (c) void vscode.commands.executeCommand("workbench.action.openSettings", "gpuPilot.pick");
      });
    return { policy, picked: [], skipped, short: true, selection: selection.get() };
  }
  const inv = monitor.inventory;
  const ids = normalizeSelection(
    result.picked.map((g) => String(g.index)),
    inv?.gpus ?? [],
    inv?.mig ?? [],
    config.selectBy(),
  );
  await selection.set(ids);
  const what = result.picked
    .map((g) => `GPU ${g.index} (${formatFree(g)}, ${formatPercent(g.utilizationGpuPercent)} busy)`)
    .join(", ");
  void vscode.window.showInformationMessage(
    `GPU Pilot: picked ${what}.${result.short ? ` Only ${result.picked.length} of ${policy.count} matched the policy.` : ""}`,
  );
  return {
    policy,
    picked: result.picked.map((g) => g.index),
    skipped,
    short: result.short,
    selection: selection.get(),
  };
}

/**
 * "Wait for Free GPUs": asks how many (default `gpuPilot.pick.count`), then waits (a cancellable
 * notification) until that many GPUs are free by the pick policy and unclaimed, claims them all at
 * once and selects them. Never throws.
 */
export async function waitForFreeGpusCommand(
  monitor: GpuMonitor,
  selection: SelectionStore,
  claims: ClaimKeeper | undefined,
): Promise<PickFreeOutcome | undefined> {
  const policy = normalizePolicy(config.pickPolicy());
  const answer = await vscode.window.showInputBox({
    title: "Wait for Free GPUs",
    prompt: "How many GPUs to wait for and claim (the pick policy gpuPilot.pick.* applies)",
    value: String(policy.count),
    validateInput: (v) => (/^[1-9]\d{0,2}$/.test(v.trim()) ? undefined : "A whole number from 1"),
  });
  if (answer === undefined) return undefined;
  const count = Number(answer.trim());
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `GPU Pilot: waiting for ${count} free GPU${count === 1 ? "" : "s"}…`,
      cancellable: true,
    },
    (_p, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      return pickFreeGpusCommand(monitor, selection, { count }, claims, {
        waitMs: WAIT_FOREVER_MS,
        signal: abort.signal,
      });
    },
  );
}

/** How long "Wait for Free GPUs" waits before giving up: 7 days (cancel ends it sooner). */
const WAIT_FOREVER_MS = 7 * 24 * 3600_000;

/** The part of a tree node the stop command reads (a process row of the GPU view). */
interface ProcessNodeLike {
  kind: string;
  app?: { pid: number; processName: string };
  gpu?: { index: number };
}

/**
 * "Stop Process" on a process row: asks for confirmation (modal), then sends SIGTERM with
 * `process.kill` (never a shell), only to a process of VS Code's own user that is still the same
 * process (same start time) and holds a GPU device open here (procinfo.ts `stopProcess`: across
 * PID namespaces a pid can be another process). Refreshes the view afterwards. Never throws.
 */
export async function stopProcessCommand(
  monitor: GpuMonitor,
  node: unknown,
  stopOptions: StopOptions = {},
): Promise<void> {
  const n = node as ProcessNodeLike | undefined;
  if (!n || n.kind !== "app" || !n.app) {
    void vscode.window.showInformationMessage("GPU Pilot: right-click a process in the GPU view to stop it.");
    return;
  }
  const { pid } = n.app;
  const details = monitor.processOf(pid);
  if (!details?.own) {
    void vscode.window.showInformationMessage(
      `GPU Pilot stops only your own processes; process ${pid} belongs to ${details?.user ?? "an unknown user"}.`,
    );
    return;
  }
  const what = details.commandLine.length > 120 ? `${details.commandLine.slice(0, 119)}…` : details.commandLine;
  const choice = await vscode.window.showWarningMessage(
    `Stop process ${pid} (${what}) on GPU ${n.gpu?.index ?? "?"}?`,
    { modal: true, detail: "GPU Pilot sends it SIGTERM; a program may take a moment to exit." },
    "Stop Process",
  );
  if (choice !== "Stop Process") return;
  const r = await sendStop(
    pid,
    { ...(details.startTicks !== undefined ? { startTicks: details.startTicks } : {}) },
    stopOptions,
  );
  if (r.ok) {
    log.info(`Sent SIGTERM to process ${pid} (${details.commandLine}).`);
    void vscode.window.showInformationMessage(`GPU Pilot: sent SIGTERM to process ${pid}.`);
  } else {
    log.warn(r.message);
    void vscode.window.showWarningMessage(`GPU Pilot: ${r.message}`);
  }
  await monitor.refresh();
}
