// "Pick Free GPUs" (common/src/gpu/policy.ts) on the captured 2 x H200 fixtures and the constructed
// fault / MIG fixtures: pure, no processes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Gpu, parseComputeApps, parseQueryGpu, type ProcessDetails } from "../../../../common/src/gpu/nvidiaSmi";
import { DEFAULT_PICK_POLICY, normalizePolicy, pickFreeGpus, type PickPolicy } from "../../../../common/src/gpu/policy";
import { ROOT } from "../../support/root";

const NVSMI = join(ROOT, "test", "fixtures", "nvidia-smi");
const read = (dir: string, name: string) => readFileSync(join(NVSMI, dir, name), "utf8");
const gpus = parseQueryGpu(read("h200x2", "query_gpu_nounits.csv")).rows;
const apps = parseComputeApps(read("h200x2", "query_apps_nounits.csv")).rows; // python3, pid 582, on GPU 0
const policy = (p: Partial<PickPolicy> = {}): PickPolicy => normalizePolicy({ ...DEFAULT_PICK_POLICY, ...p });
const who = (own: boolean, user = own ? "me" : "alice"): ProcessDetails[] => [
  {
    pid: 582,
    uid: own ? 1000 : 1001,
    user,
    commandLine: "python3 train.py",
    argv: ["python3", "train.py"],
    own,
    workspaceRun: false,
  },
];

test("busy fixture: GPU 0 has a process, so one GPU picks GPU 1 (whoever owns the process)", () => {
  for (const details of [[], who(false), who(true)]) {
    const r = pickFreeGpus(gpus, apps, details, policy({ count: 1 }));
    assert.deepEqual(
      r.picked.map((g) => g.index),
      [1],
      JSON.stringify(details),
    );
    assert.equal(r.short, false);
  }
});

test("another user's (or an unknown user's) process excludes its GPU; your own only ranks it lower", () => {
  const other = pickFreeGpus(gpus, apps, who(false), policy({ count: 2 }));
  assert.deepEqual(
    other.picked.map((g) => g.index),
    [1],
  );
  assert.equal(other.short, true);
  assert.deepEqual(
    other.candidates.map((c) => [c.gpu.index, c.reasons]),
    [
      [1, []],
      [0, ["in use by alice (pid 582)"]],
    ],
  );
  const unknown = pickFreeGpus(gpus, apps, [], policy({ count: 2 }));
  assert.deepEqual(unknown.candidates[1].reasons, ["in use by another (unknown) user (pid 582)"]);
  const mine = pickFreeGpus(gpus, apps, who(true), policy({ count: 2 }));
  assert.deepEqual(
    mine.picked.map((g) => g.index),
    [1, 0],
    "own process: still eligible, ranked after the empty GPU",
  );
  const anyone = pickFreeGpus(gpus, apps, who(false), policy({ count: 2, excludeBusyWithOtherUsers: false }));
  assert.deepEqual(
    anyone.picked.map((g) => g.index),
    [1, 0],
  );
});

test("free memory and utilisation limits; ranking by free memory then utilisation then index", () => {
  const busy: Gpu[] = [
    { ...gpus[0], memoryFreeMiB: 100_000, utilizationGpuPercent: 5 },
    { ...gpus[1], memoryFreeMiB: 120_000, utilizationGpuPercent: 50 },
  ];
  assert.deepEqual(
    pickFreeGpus(busy, [], [], policy({ count: 2 })).picked.map((g) => g.index),
    [0],
    "GPU 1 is 50% busy > 10%",
  );
  const r = pickFreeGpus(busy, [], [], policy({ count: 2, maxUtilizationPercent: 100 }));
  assert.deepEqual(
    r.picked.map((g) => g.index),
    [1, 0],
    "more free memory first",
  );
  const lim = pickFreeGpus(busy, [], [], policy({ count: 2, maxUtilizationPercent: 100, minFreeMemoryMiB: 110_000 }));
  assert.deepEqual(
    lim.picked.map((g) => g.index),
    [1],
  );
  assert.deepEqual(lim.candidates[1].reasons, ["97.7 GiB free < 107.4 GiB"]);
  const same: Gpu[] = [
    { ...gpus[0], utilizationGpuPercent: 3 },
    { ...gpus[1], utilizationGpuPercent: 1 },
  ];
  assert.deepEqual(
    pickFreeGpus(same, [], [], policy({ count: 1 })).picked.map((g) => g.index),
    [1],
    "equal memory: less busy first",
  );
});

test("placeholders: unknown free memory excludes when a minimum is set; unknown utilisation does not", () => {
  const na = parseQueryGpu(read("faults", "na_query_gpu_nounits.csv")).rows;
  const r = pickFreeGpus(na, [], [], policy({ count: 2 }));
  assert.deepEqual(
    r.candidates.map((c) => [c.gpu.index, c.reasons]),
    [
      [0, ["free memory unknown"]],
      [1, ["the GPU is lost"]],
    ],
  );
  assert.deepEqual(
    pickFreeGpus(na, [], [], policy({ count: 2, minFreeMemoryMiB: 0 })).picked.map((g) => g.index),
    [0],
  );
});

test("MIG-enabled GPUs, Exclusive_Process in use and Prohibited are skipped with reasons", () => {
  const mig = parseQueryGpu(read("h200x2-mig", "query_gpu_nounits.csv")).rows;
  const r = pickFreeGpus(mig, [], [], policy({ count: 2 }));
  assert.deepEqual(
    r.picked.map((g) => g.index),
    [1],
  );
  assert.deepEqual(r.candidates[1].reasons, ["MIG is enabled: pick one of its MIG devices"]);
  const exclusive: Gpu[] = [
    { ...gpus[0], computeMode: "Exclusive_Process" },
    { ...gpus[1], computeMode: "Prohibited" },
  ];
  const x = pickFreeGpus(exclusive, apps, who(true), policy({ count: 2 }));
  assert.deepEqual(x.picked, []);
  assert.deepEqual(
    x.candidates.map((c) => c.reasons),
    [["Exclusive_Process and already in use: a second process would fail"], ["compute mode Prohibited"]],
  );
  assert.deepEqual(
    pickFreeGpus(exclusive.slice(0, 1), [], [], policy()).picked.map((g) => g.index),
    [0],
    "Exclusive_Process but idle: fine",
  );
});

test("normalizePolicy clamps settings", () => {
  assert.deepEqual(normalizePolicy({ count: 0, minFreeMemoryMiB: -5, maxUtilizationPercent: 300 }), {
    count: 1,
    minFreeMemoryMiB: 0,
    maxUtilizationPercent: 100,
    excludeBusyWithOtherUsers: true,
  });
  assert.deepEqual(normalizePolicy({}), DEFAULT_PICK_POLICY);
  assert.equal(normalizePolicy({ count: 2.7 }).count, 2);
});

test("a GPU claimed by someone else in the claims ledger is skipped, with who holds it", () => {
  const claimed = new Map([[gpus[1].uuid.toLowerCase(), "alice (run: train.py, pid 4242, since 10:02)"]]);
  const r = pickFreeGpus(gpus, apps, who(true), policy({ count: 1 }), claimed);
  assert.deepEqual(
    r.picked.map((g) => g.index),
    [0],
    "GPU 1 is claimed: the own-busy GPU 0 is next",
  );
  assert.deepEqual(r.candidates.find((c) => c.gpu.index === 1)?.reasons, [
    "claimed by alice (run: train.py, pid 4242, since 10:02)",
  ]);
});
