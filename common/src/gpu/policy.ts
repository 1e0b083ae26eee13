/**
 * "Pick Free GPUs": which GPUs to select, after nvitop's `nvisel` (count, minimum free memory,
 * maximum utilisation, skipping GPUs other users compute on). Pure: no `vscode`, no processes.
 */
import type { ComputeApp, Gpu, ProcessDetails } from "./nvidiaSmi";
import { formatMiB } from "./units";

/** The policy (settings `gpuPilot.pick.*`). */
export interface PickPolicy {
  /** How many GPUs to pick (at least 1). */
  count: number;
  /** A GPU needs at least this much free memory, MiB (0: no limit). A GPU whose free memory is unknown is skipped when this is above 0. */
  minFreeMemoryMiB: number;
  /** A GPU may be at most this busy (`utilization.gpu`), % (100: no limit). Unknown utilisation (e.g. `[N/A]` under MIG) does not exclude. */
  maxUtilizationPercent: number;
  /** Skip GPUs where a process of another user runs; a process whose user is unknown counts as another user's. */
  excludeBusyWithOtherUsers: boolean;
}

/** Defaults of the `gpuPilot.pick.*` settings. */
export const DEFAULT_PICK_POLICY: PickPolicy = {
  count: 1,
  minFreeMemoryMiB: 1024,
  maxUtilizationPercent: 10,
  excludeBusyWithOtherUsers: true,
};

/** A GPU the policy considered, with why it was skipped (empty `reasons`: eligible). */
export interface PickCandidate {
  gpu: Gpu;
  /** Processes on it. */
  processes: number;
  /** Why it is not eligible, in words; empty when it is. */
  reasons: string[];
}

/** What {@link pickFreeGpus} decided. */
export interface PickResult {
  /** The chosen GPUs, best first (at most `count`). */
  picked: Gpu[];
  /** Every GPU, eligible ones first in rank order, then the skipped ones in index order. */
  candidates: PickCandidate[];
  /** True when fewer than `count` GPUs were eligible. */
  short: boolean;
}

/** Clamps a policy read from settings to sane values. */
export function normalizePolicy(p: Partial<PickPolicy>): PickPolicy {
  const num = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) ? v : d);
  return {
    count: Math.max(1, Math.floor(num(p.count, DEFAULT_PICK_POLICY.count))),
    minFreeMemoryMiB: Math.max(0, num(p.minFreeMemoryMiB, DEFAULT_PICK_POLICY.minFreeMemoryMiB)),
    maxUtilizationPercent: Math.min(
      100,
      Math.max(0, num(p.maxUtilizationPercent, DEFAULT_PICK_POLICY.maxUtilizationPercent)),
    ),
    excludeBusyWithOtherUsers:
      typeof p.excludeBusyWithOtherUsers === "boolean"
        ? p.excludeBusyWithOtherUsers
        : DEFAULT_PICK_POLICY.excludeBusyWithOtherUsers,
  };
}

/**
 * Chooses up to `policy.count` GPUs.
 *
 * Skipped: lost GPUs; GPUs with MIG enabled (pick their MIG devices instead); compute mode
 * `Prohibited`; `Exclusive_Process` with a process on it (a second process fails there, it does not
 * fall back); free memory below `minFreeMemoryMiB` (or unknown when that is above 0); utilisation
 * above `maxUtilizationPercent`; with `excludeBusyWithOtherUsers`, a process of another (or an
 * unknown) user.
 *
 * Ranked: fewer processes first, then more free memory, then lower utilisation, then lower index.
 *
 * @param gpus the GPUs of the inventory.
 * @param apps the compute processes (matched to GPUs by UUID).
 * @param details user details by pid (from /proc); a pid without details counts as another user's.
 * @param claimedByOthers GPUs claimed in the claims ledger by someone else (common/src/gpu/claims.ts):
 *   UUID (lower case) → who, in words (`describeClaim`); such a GPU is skipped.
 */
export function pickFreeGpus(
  gpus: readonly Gpu[],
  apps: readonly ComputeApp[],
  details: readonly ProcessDetails[],
  policy: PickPolicy,
  claimedByOthers: ReadonlyMap<string, string> = new Map(),
): PickResult {
  const byPid = new Map(details.map((d) => [d.pid, d]));
  const candidates: PickCandidate[] = gpus.map((gpu) => {
    const mine = apps.filter((a) => a.gpuUuid.toLowerCase() === gpu.uuid.toLowerCase());
    const reasons: string[] = [];
    if (gpu.lost) reasons.push("the GPU is lost");
    const claim = claimedByOthers.get(gpu.uuid.toLowerCase());
    if (claim) reasons.push(`claimed by ${claim}`);
    if (gpu.migMode?.toLowerCase() === "enabled") reasons.push("MIG is enabled: pick one of its MIG devices");
    if (gpu.computeMode === "Prohibited") reasons.push("compute mode Prohibited");
    if (gpu.computeMode === "Exclusive_Process" && mine.length > 0)
      reasons.push("Exclusive_Process and already in use: a second process would fail");
    if (policy.minFreeMemoryMiB > 0) {
      if (gpu.memoryFreeMiB === null) reasons.push("free memory unknown");
      else if (gpu.memoryFreeMiB < policy.minFreeMemoryMiB)
        reasons.push(`${formatMiB(gpu.memoryFreeMiB)} free < ${formatMiB(policy.minFreeMemoryMiB)}`);
    }
    if (gpu.utilizationGpuPercent !== null && gpu.utilizationGpuPercent > policy.maxUtilizationPercent) {
      reasons.push(`${gpu.utilizationGpuPercent}% busy > ${policy.maxUtilizationPercent}%`);
    }
    if (policy.excludeBusyWithOtherUsers) {
      const others = mine.filter((a) => !byPid.get(a.pid)?.own);
      if (others.length > 0) {
        const who = [...new Set(others.map((a) => byPid.get(a.pid)?.user ?? "unknown"))].join(", ");
        reasons.push(
          `in use by ${who === "unknown" ? "another (unknown) user" : who} (pid ${others.map((a) => a.pid).join(", ")})`,
        );
      }
    }
    return { gpu, processes: mine.length, reasons };
  });
  const eligible = candidates
    .filter((c) => c.reasons.length === 0)
    .sort(
      (a, b) =>
        a.processes - b.processes ||
        (b.gpu.memoryFreeMiB ?? -1) - (a.gpu.memoryFreeMiB ?? -1) ||
        (a.gpu.utilizationGpuPercent ?? 0) - (b.gpu.utilizationGpuPercent ?? 0) ||
        a.gpu.index - b.gpu.index,
    );
  const skipped = candidates.filter((c) => c.reasons.length > 0).sort((a, b) => a.gpu.index - b.gpu.index);
  const picked = eligible.slice(0, policy.count).map((c) => c.gpu);
  return { picked, candidates: [...eligible, ...skipped], short: picked.length < policy.count };
}
