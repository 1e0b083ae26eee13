/**
 * Pick Free GPUs with claims: the pick policy (policy.ts) on a fresh inventory,
 * skipping GPUs that others claimed in the ledger (common/src/gpu/claims.ts), then claiming the
 * best eligible ones all at once; optionally waiting until enough are free. Used by the command,
 * the VS Code agent tool and the MCP server. No `vscode`.
 */
import { type Claim, type ClaimLedger, type ClaimPurpose, describeClaim, waitAndClaim } from "./claims";
import type { ComputeApp, Gpu, ProcessDetails } from "./nvidiaSmi";
import { pickFreeGpus, type PickPolicy, type PickResult } from "./policy";

/** What a pick reads each try: the GPUs, their compute processes and the processes' owners. */
export interface PickInput {
  gpus: Gpu[];
  apps: ComputeApp[];
  details: ProcessDetails[];
}

/** The outcome of {@link pickAndClaim}: the policy's result with `picked` = the GPUs claimed. */
export interface ClaimedPick {
  result: PickResult;
  /** The claims made (empty without a ledger or when short). */
  claims: Claim[];
  /** Why the pick is short when the ledger, not the policy, stopped it (GPUs claimed a moment ago, a wait that gave up). */
  note?: string;
  /** How many tries it took (1 without waiting). */
  tries: number;
}

/** Others' live claims as pickFreeGpus takes them: UUID (lower case) → who, in words. Empty without a ledger. */
export function othersClaims(ledger: ClaimLedger | undefined): Map<string, string> {
  return new Map(
    [...(ledger?.heldByOthers() ?? new Map<string, Claim>())].map(([uuid, c]) => [uuid, describeClaim(c)]),
  );
}

/** The policy's verdict with others' claims skipped; every eligible GPU ranked (count: all). */
function rank(input: PickInput, policy: PickPolicy, ledger: ClaimLedger | undefined): PickResult {
  return pickFreeGpus(
    input.gpus,
    input.apps,
    input.details,
    { ...policy, count: Math.max(policy.count, input.gpus.length) },
    othersClaims(ledger),
  );
}

/** `ranked` cut to the GPUs claimed (in rank order), short when fewer than `count`. */
function withPicked(ranked: PickResult, claims: readonly Claim[], count: number): PickResult {
  const got = new Set(claims.map((c) => c.gpuUuid.toLowerCase()));
  const picked = claims.length === 0 ? [] : ranked.picked.filter((g) => got.has(g.uuid.toLowerCase()));
  return { ...ranked, picked, short: picked.length < count };
}

/**
 * Picks `policy.count` GPUs and claims them (all or nothing). Without a ledger (claims off) it is
 * the plain policy. With `waitMs` > 0 it reads the inventory again every `pollMs` (default 2 s)
 * until enough GPUs are free and unclaimed, or `waitMs` has passed, or `signal` aborts.
 * @param read the inventory now (nvidia-smi); a rejection propagates.
 */
export async function pickAndClaim(
  ledger: ClaimLedger | undefined,
  read: () => Promise<PickInput>,
  policy: PickPolicy,
  purpose: ClaimPurpose,
  note: string | undefined,
  o: { waitMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<ClaimedPick> {
  if (!ledger) {
    const input = await read();
    return { result: pickFreeGpus(input.gpus, input.apps, input.details, policy), claims: [], tries: 1 };
  }
  let ranked: PickResult | undefined;
  const candidates = async () => {
    ranked = rank(await read(), policy, ledger);
    return ranked.picked.map((g) => g.uuid);
  };
  const w = await waitAndClaim(ledger, candidates, policy.count, purpose, note, {
    timeoutMs: o.waitMs ?? 0,
    ...(o.pollMs ? { pollMs: o.pollMs } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const result = withPicked(ranked as PickResult, w.claims, policy.count);
  return { result, claims: w.claims, tries: w.tries, ...(w.claims.length === 0 && w.reason ? { note: w.reason } : {}) };
}
