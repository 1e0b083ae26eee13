// The window's claims (common/src/gpu/claimKeeper.ts) on a real ledger in a temp folder: the
// selection is claimed and released as it changes, a run holds its GPUs until it ends, the view
// is told who holds what, and closing the window releases everything.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClaimKeeper, entryUuids } from "../../../../common/src/gpu/claimKeeper";
import { parseQueryGpu, type Inventory } from "../../../../common/src/gpu/nvidiaSmi";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { ClaimLedger, claimStem, currentOwner } from "../../../../common/src/gpu/claims";
import { claimText } from "../../../../client/src/gpu/present";
import { ROOT } from "../../support/root";

const gpus = parseQueryGpu(
  readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2", "query_gpu_nounits.csv"), "utf8"),
).rows;
const inv: Inventory = { gpus, apps: [], problems: [], takenAt: 0 };
const [u0, u1] = gpus.map((g) => g.uuid.toLowerCase());

function setup(later = false) {
  const dir = join(mkdtempSync(join(tmpdir(), "gpu-pilot-keeper-")), "ledger");
  const listeners: (() => void)[] = [];
  const monitor = {
    inventory: inv as Inventory | undefined,
    onDidChange: (l: () => void) => (listeners.push(l), { dispose: () => undefined }),
  };
  const state = new Map<string, unknown>();
  const selection = new SelectionStore({
    get: <T>(k: string) => state.get(k) as T,
    update: async (k, v) => void state.set(k, v),
  });
  const warnings: string[] = [];
  const keeper = new ClaimKeeper(monitor, selection, {
    dir,
    session: "window-A",
    ttlMs: 60_000,
    warn: (m) => warnings.push(m),
    later,
  });
  return { dir, keeper, selection, warnings, files: () => readdirSync(dir).sort() };
}

test("entryUuids: indices and GPU UUIDs to lower-case UUIDs, MIG UUIDs as they are, unknown entries dropped", () => {
  assert.deepEqual(entryUuids(["1", gpus[0].uuid, "7"], inv), [u1, u0]);
  assert.deepEqual(entryUuids(["MIG-6d6f4f6a-1111-2222-3333-444455556666"], inv), [
    "mig-6d6f4f6a-1111-2222-3333-444455556666",
  ]);
  assert.deepEqual(entryUuids(["0"], undefined), []);
});

test("ticking claims (manual), unticking releases, a run holds its GPU until it ends, dispose releases all", async () => {
  const { keeper, selection, files } = setup();
  await selection.set(["0"]);
  assert.deepEqual(files(), [`${claimStem(u0)}.json`]);
  assert.equal(keeper.claimOf(u0)?.mine, true);
  assert.equal(keeper.claimOf(u0)?.claim.purpose, "manual");
  const end = keeper.holdForRun([u0, u1], "train.py");
  await selection.set([]);
  assert.deepEqual(
    files(),
    [`${claimStem(u0)}.json`, `${claimStem(u1)}.json`].sort(),
    "the run keeps both while it runs",
  );
  end();
  assert.deepEqual(files(), []);
  await selection.set(["1"]);
  keeper.dispose();
  assert.deepEqual(files(), [], "closing the window releases its claims");
});

test("a GPU another window claimed: the view says who; ticking it warns once and does not take it", async () => {
  const { dir, keeper, selection, warnings } = setup();
  const other = new ClaimLedger({ dir, owner: currentOwner("window-B") });
  assert.ok(other.claim(u1, "run", "eval.py").ok);
  const c = keeper.claimOf(u1);
  assert.equal(c?.mine, false);
  assert.match(claimText(c).suffix, /^ · claimed by \S+$/);
  assert.match(
    claimText(c).tooltip,
    /Claimed by \S+ \\\(run: eval\\\.py, pid \d+, since \d\d:\d\d\\\)/,
    "escaped for Markdown",
  );
  const hostile = {
    ...c!.claim,
    owner: { ...c!.claim.owner, user: "eve\u001b]0;x\u0007![img](https://evil.example/p.png)" },
    note: "$(zap) [link](command:x)",
  };
  const t = claimText({ mine: false, claim: hostile });
  assert.ok(
    !t.tooltip.includes("![img]") &&
      !t.tooltip.includes("[link](") &&
      !t.tooltip.includes("$(zap)") &&
      // eslint-disable-next-line no-control-regex
      !/[\u0000-\u001f]/.test(t.tooltip + t.suffix),
    t.tooltip,
  );
  assert.deepEqual(claimText(undefined), { suffix: "", tooltip: "" });
  // This window's own claim: no suffix (the tick says it; the suffix cut the row at 300 px), the tooltip says it.
  const mine = claimText({ mine: true, claim: c!.claim });
  assert.equal(mine.suffix, "");
  assert.match(mine.tooltip, /^\$\(lock\) Claimed by you \(this window, run\) in the GPU claims ledger\.$/);
  await selection.set(["1"]);
  await selection.set(["0", "1"]);
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0], /^GPU 1 is in your selection but claimed by .*eval\.py/);
  assert.equal(keeper.claimOf(u0, Date.now() + 5000)?.mine, true);
  keeper.dispose();
});

test("later (the extension's activation): no ledger until start() or a first use; then the selection is claimed; not after dispose", async () => {
  const a = setup(true);
  await a.selection.set(["0"]);
  assert.equal(existsSync(a.dir), false, "nothing made at construction");
  a.keeper.start();
  assert.deepEqual(a.files(), [`${claimStem(u0)}.json`], "start() makes the ledger and claims the selection");
  a.keeper.start();
  assert.deepEqual(a.files(), [`${claimStem(u0)}.json`], "once");
  a.keeper.dispose();
  assert.deepEqual(a.files(), []);
  const b = setup(true);
  assert.equal(b.keeper.claimOf(u1), undefined, "a first use makes the ledger");
  assert.equal(existsSync(b.dir), true);
  b.keeper.dispose();
  const c = setup(true);
  c.keeper.dispose();
  c.keeper.start();
  assert.equal(c.keeper.ledger, undefined);
  assert.equal(existsSync(c.dir), false, "never after dispose");
});
