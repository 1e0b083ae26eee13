// The GPU claims ledger (common/src/gpu/claims.ts, issue 45 item 3): real concurrent processes
// never claim the same GPU; stale (dead pid, expired) claims are ignored and cleaned; a hostile
// ledger (links, FIFOs, a 1 GB file, forged owners) is read without harm.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  ftruncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Claim,
  ClaimLedger,
  claimStem,
  currentOwner,
  ledgerDir,
  pidAlive,
  waitAndClaim,
} from "../../../../common/src/gpu/claims";
import { ROOT } from "../../support/root";

const CLAIMER = join(ROOT, "test", "fixtures", "claims", "claimer.ts");
const A = "GPU-6d6f4f6a-1111-2222-3333-444455556666";
const B = "GPU-0b0e0c0d-aaaa-bbbb-cccc-ddddeeeeffff";
const fresh = () => join(mkdtempSync(join(tmpdir(), "gpu-pilot-claims-test-")), "ledger");
const ledger = (dir: string, session: string, extra: Partial<ConstructorParameters<typeof ClaimLedger>[0]> = {}) => {
  const l = new ClaimLedger({ dir, owner: currentOwner(session), ...extra });
  assert.equal(l.prepare(), undefined);
  return l;
};

interface ClaimerReport {
  pid: number;
  got: string[];
  reason?: string;
  acquiredAt: number;
  releasedAt: number;
  problem?: string;
}

/** Starts `n` claimer processes, lets them all go at once when every one is ready, returns their reports. */
async function race(n: number, args: string[]): Promise<ClaimerReport[]> {
  const kids = Array.from({ length: n }, () =>
    spawn(process.execPath, ["--import", "tsx", CLAIMER, ...args], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] }),
  );
  const outs = kids.map(() => "");
  const ready = kids.map(
    (k, i) =>
      new Promise<void>((done) =>
        k.stdout.on("data", (b: Buffer) => {
          outs[i] += b.toString();
          if (outs[i].includes("ready\n")) done();
        }),
      ),
  );
  const ended = kids.map((k) => new Promise<void>((done) => k.on("close", () => done())));
  await Promise.all(ready);
  for (const k of kids) k.stdin.write("go\n");
  await Promise.all(ended);
  return outs.map((o) => JSON.parse(o.slice(o.indexOf("ready\n") + 6).trim()) as ClaimerReport);
}

test(
  "6 processes claim 1 of 2 free GPUs at the same moment: 2 win, on different GPUs; the 4 others are told who holds them",
  { timeout: 120_000 },
  async () => {
    const dir = fresh();
    const reports = await race(6, [dir, "1500", "0", "1", A, B]);
    const winners = reports.filter((r) => r.got.length > 0);
    assert.equal(winners.length, 2, JSON.stringify(reports));
    assert.deepEqual(winners.flatMap((r) => r.got).sort(), [A, B].map((u) => u.toLowerCase()).sort());
    for (const r of reports.filter((x) => x.got.length === 0)) {
      assert.match(r.reason ?? "", /gave up after 0 s: .*claimed: .*claimer \d+/, r.reason);
    }
    assert.deepEqual(readdirSync(dir), [], "every claim released, no temp file left");
  },
);

test("4 processes wait for the one GPU: each gets it in turn, never two at once", { timeout: 120_000 }, async () => {
  const dir = fresh();
  const reports = await race(4, [dir, "400", "60000", "1", A]);
  assert.ok(
    reports.every((r) => r.got.length === 1),
    JSON.stringify(reports),
  );
  const spans = reports.map((r) => [r.acquiredAt, r.releasedAt]).sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < spans.length; i++)
    assert.ok(spans[i][0] >= spans[i - 1][1], `holds overlap: ${JSON.stringify(spans)}`);
});

test("claim, see it from another session, release; the file is 0644 and names its GPU", () => {
  const dir = fresh();
  const me = ledger(dir, "window-1");
  const other = ledger(dir, "window-2");
  const r = me.claim(A, "manual");
  assert.ok(r.ok);
  const file = join(dir, `${claimStem(A)}.json`);
  assert.equal(statSync(file).mode & 0o777, 0o644);
  assert.equal(statSync(dir).mode & 0o7777, 0o1777);
  const stored = JSON.parse(readFileSync(file, "utf8")) as Claim;
  assert.equal(stored.owner.session, "window-1");
  assert.equal(stored.purpose, "manual");
  const held = other.heldByOthers().get(A.toLowerCase());
  assert.equal(held?.owner.pid, process.pid);
  assert.equal(me.heldByOthers().size, 0, "one's own claims are not others'");
  const refused = other.claim(A, "pick");
  assert.ok(!refused.ok);
  assert.match(refused.reason, /claimed by .*manual, pid \d+/);
  assert.equal(me.claim(A, "run", "train.py").ok, true, "the holder re-claims (renews) its own");
  assert.equal((JSON.parse(readFileSync(file, "utf8")) as Claim).purpose, "run");
  assert.equal(me.release(A), true);
  assert.deepEqual(readdirSync(dir), []);
  assert.equal(other.claim(A, "pick").ok, true);
});

test("a claim of a dead pid is stale: ignored by others, removed when it is one's own", () => {
  const dir = fresh();
  const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  const deadPid = Number(dead.stdout);
  assert.equal(pidAlive(deadPid), false);
  const ghost = ledger(dir, "gone", { owner: { ...currentOwner("gone"), pid: deadPid } });
  assert.ok(ghost.claim(A, "run").ok);
  const me = ledger(dir, "window");
  assert.equal(me.heldByOthers().size, 0);
  const r = me.claim(A, "pick");
  assert.ok(r.ok, "same user: the stale file was removed and the name reused");
  assert.deepEqual(readdirSync(dir), [`${claimStem(A)}.json`]);
  assert.equal(pidAlive(process.pid), true);
  assert.equal(pidAlive(process.pid, 1), false, "a pid whose start time changed was reused");
});

test("expiry: a claim past expiresAt is stale; renew() pushes it on", () => {
  const dir = fresh();
  let now = 1_000_000;
  const me = ledger(dir, "a", { now: () => now, ttlMs: 60_000 });
  const other = ledger(dir, "b", { now: () => now });
  assert.ok(me.claim(A, "agent").ok);
  now += 59_000;
  me.renew();
  now += 59_000;
  assert.equal(other.heldByOthers().size, 1, "renewed 59 s in: still live at 118 s");
  now += 2_000;
  const stranger = new ClaimLedger({ dir, owner: { ...currentOwner("c"), uid: 4242 }, now: () => now });
  assert.equal(stranger.scan().claims[0].stale, "expired", "another uid sees it stale and leaves it");
  assert.equal(other.heldByOthers().size, 0, "past expiry");
  assert.deepEqual(readdirSync(dir), [], "the same user's stale claim was removed by the scan");
});

test("a live claim in a later slot holds the GPU when the first slot is free again", () => {
  const dir = fresh();
  const other = ledger(dir, "w1");
  const first = join(dir, `${claimStem(A)}.json`);
  symlinkSync("/nonexistent", first); // stands for another user's stale claim, which nobody else may remove
  assert.ok(other.claim(A, "run").ok);
  assert.ok(readdirSync(dir).includes(`${claimStem(A)}.1.json`));
  rmSync(first);
  const me = ledger(dir, "w2");
  const r = me.claim(A, "pick");
  assert.ok(!r.ok);
  assert.equal(r.heldBy?.owner.session, "w1");
  assert.equal(readdirSync(dir).includes(`${claimStem(A)}.json`), false, "no claim was created in the free slot");
});

test("hostile ledger entries are ignored with a reason: a symlink, a FIFO, a 1 GB file, bad JSON, a forged uid", () => {
  const dir = fresh();
  const me = ledger(dir, "w");
  symlinkSync("/etc/passwd", join(dir, `${claimStem(A)}.json`));
  const fifo = spawnSync("mkfifo", [join(dir, `${claimStem(B)}.json`)]);
  const fd = openSync(join(dir, `${claimStem(A)}.1.json`), "w");
  ftruncateSync(fd, 1024 ** 3);
  closeSync(fd);
  writeFileSync(join(dir, `${claimStem(A)}.2.json`), "{not json");
  const forged = {
    version: 1,
    id: "f",
    gpuUuid: A.toLowerCase(),
    owner: { ...currentOwner("evil"), uid: 4242 },
    purpose: "run",
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
  };
  writeFileSync(join(dir, `${claimStem(A)}.3.json`), JSON.stringify(forged));
  const t0 = Date.now();
  const scan = me.scan();
  assert.ok(Date.now() - t0 < 2000, "no read blocked");
  const reasons = Object.fromEntries(scan.ignored.map((i) => [i.file, i.reason]));
  assert.match(reasons[`${claimStem(A)}.json`], /symbolic link/);
  if (fifo.status === 0) assert.match(reasons[`${claimStem(B)}.json`], /FIFO/);
  assert.match(reasons[`${claimStem(A)}.1.json`], /over the 16,384-byte limit/);
  assert.equal(reasons[`${claimStem(A)}.2.json`], "not JSON");
  assert.match(reasons[`${claimStem(A)}.3.json`], /says uid 4242 but the file belongs to uid \d+/);
  assert.equal(scan.claims.length, 0);
  const r = me.claim(A, "pick");
  assert.ok(r.ok, "occupied slots are stepped around");
  assert.ok(readdirSync(dir).includes(`${claimStem(A)}.4.json`));
  assert.equal(readFileSync("/etc/passwd", "utf8").includes("gpu-pilot"), false, "nothing written through the link");
});

test("a ledger folder that is a symlink, or a file, is refused", () => {
  const base = mkdtempSync(join(tmpdir(), "gpu-pilot-claims-test-"));
  const real = join(base, "real");
  const l1 = new ClaimLedger({ dir: real });
  assert.equal(l1.prepare(), undefined);
  chmodSync(real, 0o755);
  assert.equal(l1.prepare(), undefined);
  assert.equal(statSync(real).mode & 0o7777, 0o1777, "one's own folder is set to 1777 again");
  symlinkSync(real, join(base, "link"));
  assert.match(new ClaimLedger({ dir: join(base, "link") }).prepare() ?? "", /not a folder/);
  writeFileSync(join(base, "file"), "");
  assert.match(new ClaimLedger({ dir: join(base, "file") }).prepare() ?? "", /not a folder/);
  rmSync(base, { recursive: true });
});

test("claimMany is all or nothing; waitAndClaim gives up with who holds what", async () => {
  const dir = fresh();
  const other = ledger(dir, "o");
  assert.ok(other.claim(B, "mcp").ok);
  const me = ledger(dir, "m");
  const r = me.claimMany([A, B], 2, "pick");
  assert.deepEqual(r.claimed, []);
  assert.deepEqual(readdirSync(dir), [`${claimStem(B)}.json`], "A was released again");
  const w = await waitAndClaim(me, async () => [A, B], 2, "pick", undefined, { timeoutMs: 300, pollMs: 50 });
  assert.deepEqual(w.claims, []);
  assert.ok(w.tries >= 2);
  assert.match(
    w.reason ?? "",
    /gave up after 0 s: 2 wanted, 1 of 2 eligible GPUs unclaimed; claimed: GPU-0b0e0c0d.*\(mcp, pid \d+/,
  );
  other.release(B);
  const ok = await waitAndClaim(me, async () => [A, B], 2, "pick", undefined, { timeoutMs: 0 });
  assert.deepEqual(ok.claims.map((c) => c.gpuUuid).sort(), [A, B].map((u) => u.toLowerCase()).sort());
});

test("ledgerDir: setting, then GPU_PILOT_CLAIMS_DIR, then <tmp>/gpu-pilot-claims; claimStem refuses paths", () => {
  assert.equal(ledgerDir("/srv/claims", { GPU_PILOT_CLAIMS_DIR: "/x" }), "/srv/claims");
  assert.equal(ledgerDir("", { GPU_PILOT_CLAIMS_DIR: "/x" }), "/x");
  assert.equal(ledgerDir(undefined, {}), join(tmpdir(), "gpu-pilot-claims"));
  assert.throws(() => claimStem("../../etc/passwd"), /not a GPU or MIG UUID/);
  assert.equal(
    claimStem("MIG-GPU-6d6f4f6a-1111-2222-3333-444455556666/1/0"),
    "mig-gpu-6d6f4f6a-1111-2222-3333-444455556666_1_0",
  );
});
