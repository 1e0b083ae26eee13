/**
 * The window's side of the claims ledger (common/src/gpu/claims.ts): the GPUs in
 * the selection (ticked by hand, or picked) and the GPUs of a running run are claimed for this
 * window (owner: the extension host's pid and VS Code's session id); unticked ones are released;
 * a heartbeat renews the claims every third of their time to live; all are released when the
 * window closes (dispose). The GPU view asks it who holds a GPU. No `vscode` import: warnings go
 * to a callback, so it is unit-tested with a real ledger.
 */
import { type Claim, ClaimLedger, type ClaimPurpose, currentOwner, describeClaim } from "./claims";
import { indexOfEntry, type SelectionStore } from "./selection";
import type { Inventory } from "./nvidiaSmi";

/** What the keeper reads of the GPU monitor. */
export interface InventorySource {
  readonly inventory: Inventory | undefined;
  onDidChange(listener: () => void): { dispose(): void };
}

/** Options of {@link ClaimKeeper}. */
export interface KeeperOptions {
  /** The ledger folder; undefined: claims are off. */
  dir: string | undefined;
  /** VS Code's `env.sessionId` (tells this window from the user's other windows). */
  session: string;
  /** Time to live without heartbeat, ms. */
  ttlMs: number;
  /** Called with a sentence when a GPU in the selection or a run is claimed by someone else, or the ledger is unusable. */
  warn(message: string): void;
  /**
   * Start later: the ledger is made (who this window is, the folder checked, the claims synced,
   * the heartbeat started) by {@link ClaimKeeper.start} or at the first use of the ledger, not by
   * the constructor (the extension's activation makes the keeper and starts it a turn later).
   */
  later?: boolean;
}

/** The GPU UUIDs (lower case; MIG entries by their own UUID) that selection entries name, where the inventory knows them. */
export function entryUuids(ids: readonly string[], inv: Inventory | undefined): string[] {
  if (!inv) return [];
  const out = new Set<string>();
  for (const id of ids) {
    if (/^MIG-/i.test(id)) {
      out.add(id.toLowerCase());
      continue;
    }
    const g = inv.gpus.find((x) => x.index === indexOfEntry(id, inv.gpus, inv.mig ?? []));
    if (g) out.add(g.uuid.toLowerCase());
  }
  return [...out];
}

/** Keeps this window's claims in step with the selection and runs; see the file comment. */
export class ClaimKeeper {
  private started = false;
  private disposed = false;
  private made: ClaimLedger | undefined;
  private readonly runs = new Map<string, number>();
  /** Claims made for an agent tool's pick, kept until the time given (ms since the epoch). */
  private readonly adopted = new Map<string, number>();
  private readonly warned = new Set<string>();
  private readonly subs: { dispose(): void }[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private liveCache: { at: number; map: Map<string, Claim> } | undefined;

  constructor(
    private readonly monitor: InventorySource,
    private readonly selection: SelectionStore,
    private readonly o: KeeperOptions,
  ) {
    if (!o.later) this.start();
  }

  /** The ledger, or undefined when claims are off or the folder is unusable (made now if it was not: {@link start}). */
  get ledger(): ClaimLedger | undefined {
    this.start();
    return this.made;
  }

  /**
   * Makes the ledger (who this window is, the folder checked), claims what the selection names and
   * starts the heartbeat; once (later calls do nothing), never after {@link dispose}.
   */
  start(): void {
    if (this.started || this.disposed) return;
    this.started = true;
    const o = this.o;
    const ledger = o.dir ? new ClaimLedger({ dir: o.dir, owner: currentOwner(o.session), ttlMs: o.ttlMs }) : undefined;
    const problem = ledger?.prepare();
    if (problem) o.warn(`GPU claims are off: ${problem}.`);
    this.made = problem ? undefined : ledger;
    if (!this.made) return;
    this.subs.push(
      this.selection.onDidChange(() => this.sync()),
      this.monitor.onDidChange(() => this.sync()),
    );
    this.timer = setInterval(() => this.made?.renew(), Math.max(1000, o.ttlMs / 3));
    this.timer.unref?.();
    this.sync();
  }

  /** Claims what the selection and running runs name and this window does not hold yet; releases the rest. */
  sync(): void {
    const ledger = this.ledger;
    if (!ledger) return;
    const now = Date.now();
    for (const [uuid, until] of this.adopted) if (until <= now) this.adopted.delete(uuid);
    const wanted = new Set([
      ...entryUuids(this.selection.get(), this.monitor.inventory),
      ...this.runs.keys(),
      ...this.adopted.keys(),
    ]);
    if (this.monitor.inventory) ledger.releaseAll([...wanted]); // before the first inventory nothing can be told
    const held = new Set(ledger.held());
    for (const uuid of wanted) if (!held.has(uuid)) this.claimOne(uuid, this.runs.has(uuid) ? "run" : "manual");
  }

  private claimOne(uuid: string, purpose: ClaimPurpose, note?: string): void {
    const r = this.ledger?.claim(uuid, purpose, note);
    this.liveCache = undefined;
    if (!r || r.ok) return;
    const key = `${uuid}/${r.heldBy?.id ?? r.reason}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    const gpu = this.monitor.inventory?.gpus.find((g) => g.uuid.toLowerCase() === uuid);
    this.o.warn(
      `GPU ${gpu?.index ?? uuid} is in your selection but ${r.heldBy ? `claimed by ${describeClaim(r.heldBy)}` : `not claimed: ${r.reason}`}. It stays selected; pick another with Pick Free GPUs.`,
    );
  }

  /**
   * Claims a run's GPUs (purpose `run`, `note`: the file) until the returned function is called
   * (the run ended); GPUs still selected stay claimed afterwards as `manual`.
   */
  holdForRun(uuids: readonly string[], note: string): () => void {
    const keys = uuids.map((u) => u.toLowerCase());
    for (const k of keys) {
      this.runs.set(k, (this.runs.get(k) ?? 0) + 1);
      this.claimOne(k, "run", note);
    }
    return () => {
      for (const k of keys) {
        const n = (this.runs.get(k) ?? 1) - 1;
        if (n > 0) this.runs.set(k, n);
        else this.runs.delete(k);
      }
      this.sync();
    };
  }

  /**
   * Keeps claims made on this ledger outside the selection (the agent tool's pick, purpose `agent`)
   * for `forMs` (the heartbeat renews them meanwhile), so that the agent can start its run on them.
   */
  adopt(claims: readonly Claim[], forMs: number): void {
    for (const c of claims) this.adopted.set(c.gpuUuid.toLowerCase(), Date.now() + forMs);
    this.liveCache = undefined;
  }

  /** Who holds a GPU: this window (`mine: true`), someone else, or nobody (undefined). The ledger is read at most every 2 s (and after each claim). */
  claimOf(gpuUuid: string, now = Date.now()): { mine: boolean; claim: Claim } | undefined {
    if (!this.ledger) return undefined;
    if (!this.liveCache || now - this.liveCache.at > 2000) this.liveCache = { at: now, map: this.ledger.live() };
    const c = this.liveCache.map.get(gpuUuid.toLowerCase());
    return c ? { mine: this.ledger.isMine(c), claim: c } : undefined;
  }

  /** What the ledger holds, as text (read at most every 2 s): the view re-renders when it changes. */
  key(now = Date.now()): string {
    this.claimOf("", now);
    return [...(this.liveCache?.map.values() ?? [])].map((c) => `${c.gpuUuid}:${c.id}`).join();
  }

  /** Releases every claim of this window. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) clearInterval(this.timer);
    for (const s of this.subs.splice(0)) s.dispose();
    this.made?.releaseAll();
  }
}
