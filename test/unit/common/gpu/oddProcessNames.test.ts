// Processes whose argv[0] holds a newline, `, `, `|` or an ESC (issue 18, items 11 and 12): a real
// nvidia-smi prints the name as is, so one compute-apps record spans two CSV lines. The process must
// still be listed (GPU view, busy checks) with its exact name, and shown escaped: one-line labels,
// a Markdown tooltip whose table keeps its cells, a busy message without raw control characters.
// The fake nvidia-smi's `oddnames` mode prints such records (test/fixtures/bin/nvidia-smi).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { type ComputeApp, parseComputeApps, parseQueryGpu, queryInventory } from "../../../../common/src/gpu/nvidiaSmi";
import { appLabel, gpuTooltipMarkdown, processRow, processTooltipMarkdown } from "../../../../client/src/gpu/present";
import { checkRun } from "../../../../client/src/run/checks";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const UUID0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const UUID1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";
const NEWLINE_NAME = "/opt/evil\n::warning::x|tool";
const ESC_NAME = "a, b\x1b]0;T\x07";
// eslint-disable-next-line no-control-regex -- the test looks for control characters
const RAW = /[\u0000-\u001f\u007f-\u009f]/;

test("parseComputeApps: a record whose process name holds a newline is one process with its exact name", () => {
  const csv = [
    `${UUID0}, 00000000:00:06.0, 582, python3, 3380`,
    `${UUID1}, 00000000:00:07.0, 4242, /opt/evil`,
    "::warning::x|tool, 1024",
    `${UUID1}, 00000000:00:07.0, 4243, ${ESC_NAME}, 2048`,
    `${UUID1}, 00000000:00:07.0, 4244, two`,
    "",
    "blank lines, 7",
    "",
  ].join("\n");
  const { rows, problems } = parseComputeApps(csv);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    rows.map((r) => [r.pid, r.processName, r.usedMemoryMiB]),
    [
      [582, "python3", 3380],
      [4242, NEWLINE_NAME, 1024],
      [4243, ESC_NAME, 2048],
      [4244, "two\n\nblank lines", 7],
    ],
  );
  // A line that continues nothing is still a problem, with its line number.
  const stray = parseComputeApps(`not a record, 1\n${UUID0}, 00000000:00:06.0, 582, python3, 3380\n`);
  assert.deepEqual(
    stray.rows.map((r) => r.pid),
    [582],
  );
  assert.deepEqual(
    stray.problems.map((p) => p.line),
    [1],
  );
  // \r\n line ends: the name's own newline stays \n, the record's \r goes.
  assert.deepEqual(
    parseComputeApps(`${UUID1}, 00000000:00:07.0, 4242, /opt/evil\r\n::warning::x|tool, 1024\r\n`).rows.map(
      (r) => r.processName,
    ),
    [NEWLINE_NAME],
  );
});

test("the fake nvidia-smi (oddnames) through queryInventory: every process is there, on its GPU", async () => {
  const r = await queryInventory({
    path: FAKE,
    timeoutMs: 10_000,
    env: { ...process.env, FAKE_NVIDIA_SMI_MODE: "oddnames" },
  });
  assert.equal(r.kind, "ok", JSON.stringify(r));
  if (r.kind !== "ok") return;
  assert.deepEqual(
    r.inventory.apps.map((a) => [a.gpuUuid, a.pid, a.processName]),
    [
      [UUID0, 582, "python3"],
      [UUID1, 4242, NEWLINE_NAME],
      [UUID1, 4243, ESC_NAME],
    ],
  );
  assert.deepEqual(r.inventory.problems, []);

  // The busy check sees them, and says so without raw control characters.
  const busy = checkRun({
    launcher: "python",
    file: "/p/t.py",
    ids: ["1"],
    nproc: 0,
    inventory: r.inventory,
    ownerOf: () => "other",
  });
  assert.equal(busy.length, 1);
  assert.equal(busy[0].kind, "busy");
  assert.ok(busy[0].kind === "busy" && busy[0].apps.map((a) => a.pid).join() === "4242,4243");
  assert.ok(!RAW.test(busy[0].message), JSON.stringify(busy[0].message));
  assert.ok(busy[0].message.includes("pid 4242 /opt/evil\\n::warning::x|tool, 1.0 GiB"), busy[0].message);
});

test("present: one-line labels, escaped names, and a tooltip table whose rows keep two cells", () => {
  const gpus = parseQueryGpu(
    `1, ${UUID1}, NVIDIA H200, 00000000:00:07.0, 580.159.04, 143771, 0, 143156, 0, 0, 36, 100.99, 700.00, [N/A], Default, Disabled, Enabled, 345, 1980, P0\n`,
  ).rows;
  const apps: ComputeApp[] = [
    { gpuUuid: UUID1, gpuBusId: null, pid: 4242, processName: NEWLINE_NAME, usedMemoryMiB: 1024 },
    { gpuUuid: UUID1, gpuBusId: null, pid: 4243, processName: ESC_NAME, usedMemoryMiB: 2048 },
  ];
  for (const app of apps) {
    assert.ok(!RAW.test(appLabel(app)), appLabel(app));
    const row = processRow(app, undefined);
    assert.ok(!RAW.test(row.label) && !RAW.test(row.description), JSON.stringify(row));
    const md = processTooltipMarkdown(app, undefined, gpus[0]);
    assert.ok(!RAW.test(md.replace(/\n/g, "")), JSON.stringify(md));
    const table = md.split("\n").filter((l) => l.startsWith("|"));
    for (const l of table) {
      const cells = l.replace(/\\\|/g, "").split("|").length - 2;
      assert.equal(cells, 2, `a table row with ${cells} cells: ${l}`);
    }
  }
  assert.equal(appLabel(apps[0]), "pid 4242 · /opt/evil\\n::warning::x|tool · 1.0 GiB");
  const gpuTip = gpuTooltipMarkdown(gpus[0], apps);
  assert.ok(!RAW.test(gpuTip.replace(/\n/g, "")), gpuTip);
  assert.ok(!gpuTip.includes("evil\n"), "the name's newline does not break the GPU tooltip");
});
