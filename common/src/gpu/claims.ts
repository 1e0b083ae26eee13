/**
 * GPU claims: a machine-wide ledger that every GPU Pilot on the machine (VS Code
 * windows, `gpu-pilot mcp`, the CLI) reads and honours, so two people, two windows or an agent do
 * not pick the same free card a second apart. Format and permissions: docs/claims.md.
 *
 * One file per claimed GPU in a shared folder (default `/tmp/gpu-pilot-claims`, mode 1777 like
 * /tmp): `<gpu-uuid>.json`, 0644, owned by its claimant. A claim is written whole to a temp file
 * (O_CREAT | O_EXCL | O_NOFOLLOW) and hard-linked to its name: link(2) fails with EEXIST when the
 * name exists, so of two simultaneous claimants exactly one gets it, and a reader never sees half a
 * claim. A stale claim (its pid is dead on this host, or past its expiry) is ignored; only its
 * owner removes it (the sticky bit lets nobody else), so a stale claim of another user that blocks
 * `<uuid>.json` is stepped around with slot names `<uuid>.1.json` ... After creating a slot the
 * claimant scans the GPU's slots again and backs off when it sees another live claim: of two that
 * created slots, the later one always sees the earlier, so no GPU is ever held twice.
 *
 * Node's fs only; no `vscode`, no client/ or server/ imports.
 */
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  chmodSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { basename, join } from "node:path";
import { readWorkspaceFile } from "../fs/workspaceFile";

/** Why a GPU was claimed. */
export type ClaimPurpose = "manual" | "pick" | "run" | "agent" | "mcp";

/** Who holds a claim. `pid` is the process whose life the claim follows; `session` tells windows apart. */
export interface ClaimOwner {
  user: string;
  uid: number;
  /** `os.hostname()`: the pid is checked only on the same host. */
  host: string;
  pid: number;
  /** The pid's start time in clock ticks since boot (/proc/PID/stat field 22), to tell a reused pid. */
  pidStart?: number;
  /** VS Code's session id, `mcp-<pid>`, or `cli-<pid>`. */
  session: string;
}

/** One claim, as stored (JSON) in `<ledger>/<gpu-uuid>[.N].json`. Times in ms since the epoch. */
export interface Claim {
  version: 1;
  /** Random, tells this claim from a later one of the same owner. */
  id: string;
  /** `GPU-...` or `MIG-...`, lower case. */
  gpuUuid: string;
  owner: ClaimOwner;
  purpose: ClaimPurpose;
  /** A few words: the file a run runs, the agent's reason. */
  note?: string;
  createdAt: number;
  /** Renewed by the holder's heartbeat; past it the claim is stale. */
  expiresAt: number;
}

/** A claim read from the ledger, with why it is stale (undefined: live). */
export interface LedgerClaim {
  claim: Claim;
  file: string;
  /** The claim file's owner (stat), which must equal `claim.owner.uid`. */
  fileUid: number;
  stale?: string;
}

/** What a scan of the ledger found. */
export interface LedgerScan {
  /** Live and stale claims. */
  claims: LedgerClaim[];
  /** Entries that are not claims (a link, a FIFO, 1 GB, bad JSON, a uid that does not match), with the reason. */
  ignored: { file: string; reason: string }[];
}

/** The outcome of {@link ClaimLedger.claim}. */
export type ClaimOutcome = { ok: true; claim: Claim } | { ok: false; heldBy?: Claim; reason: string };

/** Options of {@link ClaimLedger}. */
export interface LedgerOptions {
  /** The ledger folder (see {@link ledgerDir}). */
  dir: string;
  /** This process's identity; default: {@link currentOwner} with session `cli-<pid>`. */
  owner?: ClaimOwner;
  /** How long a claim lives without a heartbeat, ms (default 15 min). */
  ttlMs?: number;
  /** Clock, ms (tests). */
  now?: () => number;
  /** Whether a pid is alive on this host (tests); default {@link pidAlive}. */
  isAlive?: (pid: number, pidStart?: number) => boolean;
}

/** The environment variable that moves the ledger (the setting `gpuPilot.claims.directory` wins over it in VS Code). */
export const CLAIMS_DIR_ENV = "GPU_PILOT_CLAIMS_DIR";
/** Default time to live of a claim without heartbeat: 15 min. */
export const DEFAULT_CLAIM_TTL_MS = 15 * 60_000;
/** A claim file is at most this big (bytes); larger ones are ignored. */
export const CLAIM_MAX_BYTES = 16 * 1024;
/** At most this many ledger entries are looked at. */
const MAX_ENTRIES = 4096;
/** Slots per GPU (`<uuid>.json`, `<uuid>.1.json` ... `<uuid>.7.json`). */
const SLOTS = 8;
const UUID = /^(?:gpu-|mig-(?:gpu-)?)[0-9a-f-]{8,}(?:[_/]\d+[_/]\d+)?$/i;
const NAME = /^((?:gpu|mig)-[0-9a-z_-]+?)(?:\.([1-9]))?\.json$/i;
/** The slot of a claim file: 0 for `<stem>.json`, N for `<stem>.N.json`. */
function slotOf(file: string): number {
  return Number(NAME.exec(basename(file))?.[2] ?? 0);
}
const PURPOSES: readonly ClaimPurpose[] = ["manual", "pick", "run", "agent", "mcp"];

/**
 * The ledger folder: `explicit` (a setting) when given, else `$GPU_PILOT_CLAIMS_DIR`, else
 * `<os.tmpdir()>/gpu-pilot-claims` (`/tmp/gpu-pilot-claims` on Linux).
 */
export function ledgerDir(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit?.trim() || env[CLAIMS_DIR_ENV]?.trim() || join(tmpdir(), "gpu-pilot-claims");
}

/** The file name stem of a GPU: its UUID in lower case, `/` of old MIG UUIDs as `_`. @throws Error for anything that is not a GPU/MIG UUID. */
export function claimStem(gpuUuid: string): string {
  if (!UUID.test(gpuUuid)) throw new Error(`not a GPU or MIG UUID: ${JSON.stringify(gpuUuid)}`);
  return gpuUuid.toLowerCase().replace(/\//g, "_");
}

/** A pid's start time in clock ticks since boot, from /proc/PID/stat field 22 (proc(5)); undefined where /proc has none. */
export function pidStartTicks(pid: number): number | undefined {
  const r = readWorkspaceFile(`/proc/${pid}/stat`, { maxBytes: 4096 });
  if (!r.ok) return undefined;
  const text = r.bytes.toString("latin1");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[19]); // field 22 counts from pid (1), comm (2): index 19 after comm
  return Number.isFinite(ticks) ? ticks : undefined;
}

/**
 * Whether `pid` is alive on this host: `kill(pid, 0)` succeeds or fails with EPERM (another
 * user's process), and when `pidStart` is given, the pid's start time still matches (not reused).
 */
export function pidAlive(pid: number, pidStart?: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (pidStart === undefined) return true;
  const now = pidStartTicks(pid);
  return now === undefined || now === pidStart;
}

/**
 * `bytes` random bytes in hex, from Web Crypto (a global since Node.js 20): node:crypto is not
 * required at the client's load (~12 ms in a fresh process).
 */
function randomHex(bytes: number): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/** This process as a claim owner (user name, uid, host, pid and its start time). */
export function currentOwner(session = `cli-${process.pid}`, pid = process.pid): ClaimOwner {
  const uid = process.getuid?.() ?? -1;
  let user = String(uid);
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry (a container): the uid says who */
  }
  const start = pidStartTicks(pid);
  return { user, uid, host: hostname(), pid, ...(start !== undefined ? { pidStart: start } : {}), session };
}

/** A claim file's text field as it may be shown: control characters as U+FFFD, at most `max` characters (another user wrote it). */
export function claimField(text: string, max = 64): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\uFFFD");
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** "alice (run: train.py, pid 4242, since 10:02)": who holds a claim, for tooltips and messages (plain text: escape it for Markdown). */
export function describeClaim(c: Claim): string {
  const since = new Date(c.createdAt).toTimeString().slice(0, 5);
  const where = c.owner.host === hostname() ? "" : ` on ${claimField(c.owner.host)}`;
  return `${claimField(c.owner.user)} (${c.purpose}${c.note ? `: ${claimField(c.note, 200)}` : ""}, pid ${c.owner.pid}${where}, since ${since})`;
}

/** Checks the shape of a parsed claim file; returns the reason it is not a claim, or undefined. */
function badClaim(v: unknown): string | undefined {
  const c = v as Partial<Claim> | null;
  const o = c?.owner as Partial<ClaimOwner> | undefined;
  if (!c || typeof c !== "object" || c.version !== 1) return "not a version-1 claim";
  if (typeof c.id !== "string" || typeof c.gpuUuid !== "string" || !UUID.test(c.gpuUuid)) return "no id or GPU UUID";
  if (!PURPOSES.includes(c.purpose as ClaimPurpose)) return "unknown purpose";
  if (typeof c.createdAt !== "number" || typeof c.expiresAt !== "number") return "no times";
  if (
    !o ||
    typeof o.user !== "string" ||
    typeof o.host !== "string" ||
    typeof o.session !== "string" ||
    !Number.isInteger(o.uid) ||
    !Number.isInteger(o.pid) ||
    (o.pid ?? 0) <= 0
  )
    return "no owner";
  return undefined;
}

/**
 * The ledger as one process sees it: reads every claim, claims and releases its own, renews them.
 * Every method works on the file system afresh (other processes change it); none throws for what
 * is in the folder (hostile entries are ignored with a reason).
 */
export class ClaimLedger {
  readonly dir: string;
  readonly owner: ClaimOwner;
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly isAlive: (pid: number, pidStart?: number) => boolean;
  /** This process's claims by GPU UUID (lower case). */
  private readonly mine = new Map<string, { claim: Claim; file: string }>();

  constructor(o: LedgerOptions) {
    this.dir = o.dir;
    this.owner = o.owner ?? currentOwner();
    this.ttlMs = o.ttlMs ?? DEFAULT_CLAIM_TTL_MS;
    this.now = o.now ?? Date.now;
    this.isAlive = o.isAlive ?? pidAlive;
  }

  /**
   * Creates the folder (mode 1777) when it is missing, sets 1777 on one this user owns, and checks
   * it: a real folder (not a link), and when another user owns it, world-writable with the sticky bit.
   * @returns undefined when usable, else why not (a sentence for a warning).
   */
  prepare(): string | undefined {
    try {
      mkdirSync(this.dir, { mode: 0o1777 });
      chmodSync(this.dir, 0o1777); // mkdir's mode passes through the umask
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST")
        return `the claims folder ${this.dir} cannot be created (${(e as NodeJS.ErrnoException).code ?? e})`;
    }
    let st;
    try {
      st = lstatSync(this.dir);
    } catch (e) {
      return `the claims folder ${this.dir} cannot be read (${(e as NodeJS.ErrnoException).code})`;
    }
    if (!st.isDirectory()) return `the claims folder ${this.dir} is not a folder (a link or a file): claims are off`;
    if (st.uid === this.owner.uid && (st.mode & 0o7777) !== 0o1777) {
      try {
        chmodSync(this.dir, 0o1777);
      } catch {
        /* reported below when others cannot use it */
      }
    }
    if (st.uid !== this.owner.uid && (st.mode & 0o1002) !== 0o1002)
      return `the claims folder ${this.dir} belongs to uid ${st.uid} and is not world-writable with the sticky bit (mode ${(st.mode & 0o7777).toString(8)}): claims are off`;
    return undefined;
  }

  /** Reads one entry; a claim or the reason it is not one. */
  private readEntry(name: string): LedgerClaim | { reason: string } {
    const file = join(this.dir, name);
    const r = readWorkspaceFile(file, { maxBytes: CLAIM_MAX_BYTES, noFollow: true });
    if (!r.ok) return { reason: r.reason };
    let v: unknown;
    try {
      v = JSON.parse(r.bytes.toString("utf8"));
    } catch {
      return { reason: "not JSON" };
    }
    const bad = badClaim(v);
    if (bad) return { reason: bad };
    const claim = v as Claim;
    if (claim.owner.uid !== r.stats.uid)
      return { reason: `says uid ${claim.owner.uid} but the file belongs to uid ${r.stats.uid}` };
    if (claimStem(claim.gpuUuid) !== NAME.exec(name)?.[1]?.toLowerCase())
      return { reason: "its name is not its GPU's" };
    return { claim, file, fileUid: r.stats.uid, stale: this.staleness(claim) };
  }

  /** Why `c` is stale (expired, dead pid on this host), or undefined when live. */
  private staleness(c: Claim): string | undefined {
    if (c.expiresAt <= this.now()) return "expired";
    if (c.owner.host === this.owner.host && !this.isAlive(c.owner.pid, c.owner.pidStart))
      return `pid ${c.owner.pid} is not running`;
    return undefined;
  }

  /** Reads the ledger (only names `<uuid>[.N].json`; at most 4096 entries). Stale claims of this user are removed on the way. */
  scan(stem?: string): LedgerScan {
    const out: LedgerScan = { claims: [], ignored: [] };
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return out;
    }
    for (const name of names.slice(0, MAX_ENTRIES)) {
      const m = NAME.exec(name);
      if (!m || (stem !== undefined && m[1].toLowerCase() !== stem)) continue;
      const e = this.readEntry(name);
      if ("reason" in e) out.ignored.push({ file: name, reason: e.reason });
      else if (e.stale && e.fileUid === this.owner.uid && this.removeIfSame(e.file, e.claim.id)) continue;
      else out.claims.push(e);
    }
    return out;
  }

  /** Live claims by GPU UUID (lower case), of every owner. */
  live(): Map<string, Claim> {
    const out = new Map<string, Claim>();
    for (const c of this.scan().claims) if (!c.stale) out.set(c.claim.gpuUuid.toLowerCase(), c.claim);
    return out;
  }

  /** Live claims of others (another session or user) by GPU UUID (lower case): what Pick Free GPUs skips. */
  heldByOthers(): Map<string, Claim> {
    const out = new Map<string, Claim>();
    for (const [uuid, c] of this.live()) if (!this.isMine(c)) out.set(uuid, c);
    return out;
  }

  /** True when `c` was made by this ledger's owner (same uid, session and pid). */
  isMine(c: Claim): boolean {
    return c.owner.uid === this.owner.uid && c.owner.session === this.owner.session && c.owner.pid === this.owner.pid;
  }

  /**
   * Claims one GPU: succeeds when nobody else holds a live claim on it (renewing this owner's own
   * claim, with the new purpose). Never throws.
   * @returns the claim, or who holds it / why it could not be written.
   */
  claim(gpuUuid: string, purpose: ClaimPurpose, note?: string): ClaimOutcome {
    let stem: string;
    try {
      stem = claimStem(gpuUuid);
    } catch (e) {
      return { ok: false, reason: (e as Error).message };
    }
    const before = this.scan(stem).claims;
    const other = before.find((c) => !c.stale && !this.isMine(c.claim));
    if (other)
      return { ok: false, heldBy: other.claim, reason: `GPU ${gpuUuid} is claimed by ${describeClaim(other.claim)}` };
    const own = before.find((c) => !c.stale && this.isMine(c.claim));
    const claim = this.newClaim(gpuUuid, purpose, note, own?.claim.createdAt);
    if (own) return this.rewrite(own.file, claim);
    const taken = new Set(before.map((c) => c.file));
    const slot = [...Array(SLOTS).keys()]
      .map((n) => join(this.dir, n === 0 ? `${stem}.json` : `${stem}.${n}.json`))
      .find((f) => !taken.has(f) && !this.occupied(f));
    if (!slot)
      return { ok: false, reason: `all ${SLOTS} claim slots of GPU ${gpuUuid} hold stale claims of other users` };
    const made = this.create(slot, claim);
    if (made) {
      // Lost the slot to a claim written since the scan: name its holder, as a refusal above does.
      const rival = this.scan(stem).claims.find((c) => !c.stale && !this.isMine(c.claim));
      return rival
        ? { ok: false, heldBy: rival.claim, reason: `GPU ${gpuUuid} is claimed by ${describeClaim(rival.claim)}` }
        : { ok: false, reason: made };
    }
    return this.confirm(stem, slot, claim);
  }

  /** True when something (an ignored entry: a link, a FIFO) sits at `file`. */
  private occupied(file: string): boolean {
    try {
      lstatSync(file);
      return true;
    } catch {
      return false;
    }
  }

  private newClaim(gpuUuid: string, purpose: ClaimPurpose, note: string | undefined, createdAt?: number): Claim {
    const now = this.now();
    return {
      version: 1,
      id: randomHex(8),
      gpuUuid: gpuUuid.toLowerCase(),
      owner: this.owner,
      purpose,
      ...(note ? { note: note.slice(0, 200) } : {}),
      createdAt: createdAt ?? now,
      expiresAt: now + this.ttlMs,
    };
  }

  /** Writes `claim` to a fresh temp file (O_EXCL, O_NOFOLLOW, 0644); returns its path. @throws the fs error. */
  private writeTemp(claim: Claim): string {
    const tmp = join(this.dir, `.tmp-${this.owner.pid}-${randomHex(6)}`);
    const fd = openSync(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
      0o644,
    );
    try {
      const bytes = Buffer.from(`${JSON.stringify(claim)}\n`);
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (e) {
      closeSync(fd);
      try {
        unlinkSync(tmp);
      } catch {
        /* gone */
      }
      throw e;
    }
    closeSync(fd);
    return tmp;
  }

  /** Links a written claim to `file` (fails when the name exists). @returns undefined, or why not. */
  private create(file: string, claim: Claim): string | undefined {
    let tmp: string | undefined;
    try {
      tmp = this.writeTemp(claim);
      linkSync(tmp, file);
      return undefined;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return code === "EEXIST"
        ? `GPU ${claim.gpuUuid} was claimed by someone else a moment ago`
        : `the claim could not be written in ${this.dir} (${code ?? e})`;
    } finally {
      if (tmp)
        try {
          unlinkSync(tmp);
        } catch {
          /* gone */
        }
    }
  }

  /**
   * After creating `file`: backs off (removes it) when another live claim of the GPU sits in a
   * lower slot now. Claims written at the same moment into different slots each see the other; the
   * one in the lowest slot keeps the GPU and every other backs off (when each backed off from any
   * rival, two simultaneous claimants could both give the GPU up: the 6-process claims test once
   * ended with one winner for two GPUs). A live claim in a higher slot was written after the scan
   * too, and backs off from this one.
   */
  private confirm(stem: string, file: string, claim: Claim): ClaimOutcome {
    const slot = slotOf(file);
    const rival = this.scan(stem).claims.find((c) => !c.stale && c.claim.id !== claim.id && slotOf(c.file) < slot);
    if (rival) {
      this.removeIfSame(file, claim.id);
      return {
        ok: false,
        heldBy: rival.claim,
        reason: `GPU ${claim.gpuUuid} is claimed by ${describeClaim(rival.claim)}`,
      };
    }
    this.mine.set(claim.gpuUuid, { claim, file });
    return { ok: true, claim };
  }

  /** Replaces this owner's claim file (temp file renamed over it). */
  private rewrite(file: string, claim: Claim): ClaimOutcome {
    try {
      renameSync(this.writeTemp(claim), file);
    } catch (e) {
      return {
        ok: false,
        reason: `the claim could not be renewed in ${this.dir} (${(e as NodeJS.ErrnoException).code ?? e})`,
      };
    }
    this.mine.set(claim.gpuUuid, { claim, file });
    return { ok: true, claim };
  }

  /** Removes `file` when it is still the claim `id` and belongs to this user. @returns true when removed. */
  private removeIfSame(file: string, id: string): boolean {
    const r = readWorkspaceFile(file, { maxBytes: CLAIM_MAX_BYTES, noFollow: true });
    if (!r.ok || r.stats.uid !== this.owner.uid) return false;
    try {
      if ((JSON.parse(r.bytes.toString("utf8")) as Claim).id !== id) return false;
      unlinkSync(file);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Claims `count` GPUs out of `candidates` (best first), all or nothing: when fewer than `count`
   * can be claimed, those taken are released again.
   * @returns the claims (empty when short) and, per GPU not claimed, why.
   */
  claimMany(
    candidates: readonly string[],
    count: number,
    purpose: ClaimPurpose,
    note?: string,
  ): { claimed: Claim[]; refused: { gpuUuid: string; reason: string; heldBy?: Claim }[] } {
    const claimed: Claim[] = [];
    const refused: { gpuUuid: string; reason: string; heldBy?: Claim }[] = [];
    for (const uuid of candidates) {
      if (claimed.length >= count) break;
      const r = this.claim(uuid, purpose, note);
      if (r.ok) claimed.push(r.claim);
      else refused.push({ gpuUuid: uuid, reason: r.reason, ...(r.heldBy ? { heldBy: r.heldBy } : {}) });
    }
    if (claimed.length < count) {
      for (const c of claimed) this.release(c.gpuUuid);
      return { claimed: [], refused };
    }
    return { claimed, refused };
  }

  /** Releases this owner's claim on a GPU (removes its file when it is still ours). @returns true when a claim was removed. */
  release(gpuUuid: string): boolean {
    const key = gpuUuid.toLowerCase();
    const held = this.mine.get(key);
    this.mine.delete(key);
    return held ? this.removeIfSame(held.file, held.claim.id) : false;
  }

  /** Releases every claim of this owner except those in `keep` (UUIDs). */
  releaseAll(keep: readonly string[] = []): void {
    const k = new Set(keep.map((u) => u.toLowerCase()));
    for (const uuid of [...this.mine.keys()]) if (!k.has(uuid)) this.release(uuid);
  }

  /** The GPUs this owner holds (UUIDs, lower case). */
  held(): string[] {
    return [...this.mine.keys()];
  }

  /** The heartbeat: pushes the expiry of every claim of this owner to now + ttl; a claim lost meanwhile is forgotten. */
  renew(): void {
    for (const [uuid, { claim }] of [...this.mine]) {
      const r = this.claim(uuid, claim.purpose, claim.note);
      if (!r.ok) this.mine.delete(uuid);
    }
  }
}

/** Options of {@link waitAndClaim}. */
export interface WaitOptions {
  /** Give up after this long, ms (0: try once). */
  timeoutMs: number;
  /** Time between tries, ms (default 2000; a random 0-50% is added so waiters do not retry in step). */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Waits until `count` GPUs can be claimed and claims them all at once (all or nothing).
 * `candidates` is called before each try and returns the eligible GPUs' UUIDs, best first (fresh
 * from nvidia-smi and the pick policy: claims of others are skipped by the ledger).
 * @returns the claims, or `{ claims: [], reason }` after `timeoutMs` or an abort.
 */
export async function waitAndClaim(
  ledger: ClaimLedger,
  candidates: () => Promise<string[]>,
  count: number,
  purpose: ClaimPurpose,
  note: string | undefined,
  o: WaitOptions,
): Promise<{ claims: Claim[]; reason?: string; tries: number }> {
  const deadline = Date.now() + o.timeoutMs;
  let reason = "";
  for (let tries = 1; ; tries++) {
    const uuids = await candidates();
    const r = uuids.length >= count ? ledger.claimMany(uuids, count, purpose, note) : { claimed: [], refused: [] };
    if (r.claimed.length === count) return { claims: r.claimed, tries };
    const held = r.refused.filter((x) => x.heldBy).map((x) => `${x.gpuUuid}: ${describeClaim(x.heldBy as Claim)}`);
    reason = `${count} wanted, ${uuids.length - held.length} of ${uuids.length} eligible GPUs unclaimed${held.length ? `; claimed: ${held.join("; ")}` : ""}`;
    const pause = (o.pollMs ?? 2000) * (1 + Math.random() / 2);
    if (o.signal?.aborted) return { claims: [], reason: `cancelled (${reason})`, tries };
    if (Date.now() + pause > deadline)
      return { claims: [], reason: `gave up after ${Math.round(o.timeoutMs / 1000)} s: ${reason}`, tries };
    await new Promise((done) => setTimeout(done, pause));
  }
}
