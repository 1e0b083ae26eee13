/** Ordinal → physical GPU mapping (issue 7), per ground-truth.md "How CUDA parses CUDA_VISIBLE_DEVICES". */
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleDevices, describeOrdinal, freeText, gpuForEntry } from "../../../../server/src/engine/machine";
import { formatFree } from "../../../../common/src/gpu/units";
import {
  machineHover,
  machineInlayHints,
  machineModel,
  useSelectionEdit,
} from "../../../../server/src/engine/machineHelp";
import { analyzePython, initEngine, lintPython } from "../../../../server/src/engine/lint";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { InventoryGpu, InventoryParams } from "../../../../common/src/lsp/protocol";
import { ROOT } from "../../support/root";

/** The two H200s of test/fixtures/nvidia-smi/h200x2/query_gpu_nounits.csv. */
const H200: InventoryGpu[] = [
  {
    index: 0,
    uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:06.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
  {
    index: 1,
    uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:07.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
];
const idx = (m: { devices: InventoryGpu[] }) => m.devices.map((g) => g.index);

test('renumbering: "1" makes cuda:0 physical GPU 1', () => {
  const m = visibleDevices(H200, "1", "x", null);
  assert.deepEqual(idx(m), [1]);
  assert.equal(describeOrdinal(m, 0), "cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07.0 · 139.8 GiB free");
  assert.match(
    describeOrdinal(m, 1),
    /cuda:1 → no such device: only cuda:0\.\.cuda:0 are visible \(invalid device ordinal\)/,
  );
});

test("free memory in the hover reads as on the dashboard (units.ts formatFree): 136.5 GiB, not 136 GiB", () => {
  // GPU 0 of the notebook screenshot (spin mode: 3380 MiB used, 615 reserved): the hover said
  // "136 GiB free" beside the dashboard's "136.5 GiB free".
  const gpu0 = { ...H200[0], memoryFreeMiB: 139776 };
  assert.equal(freeText(gpu0), "136.5 GiB free");
  assert.match(describeOrdinal(visibleDevices([gpu0], null, "x", null), 0), / · 136\.5 GiB free$/);
  assert.equal(freeText(H200[0]), "139.8 GiB free");
  assert.equal(freeText({ ...H200[0], memoryFreeMiB: 9.6 * 1024 }), "9.6 GiB free");
  assert.equal(freeText({ ...H200[0], memoryFreeMiB: 812 }), "812 MiB free", "below 1 GiB in MiB, as the dashboard");
  assert.equal(freeText({ ...H200[0], memoryFreeMiB: null }), "free memory unknown");
  for (const mib of [0, 512, 1023, 1024, 10_239, 10_240, 139_776, 143_156, 1_000_000])
    assert.equal(freeText({ ...H200[0], memoryFreeMiB: mib }), formatFree({ memoryFreeMiB: mib }), `${mib} MiB`);
});

test('reordering: "1,0" makes cuda:0 GPU 1 and cuda:1 GPU 0; spaces tolerated', () => {
  assert.deepEqual(idx(visibleDevices(H200, "1,0", "x", null)), [1, 0]);
  assert.deepEqual(idx(visibleDevices(H200, "0, 1", "x", null)), [0, 1]);
  assert.deepEqual(idx(visibleDevices(H200, " 1", "x", null)), [1]);
});

test('truncation at a missing id: "0,5,1" and "1,7,0" leave one device', () => {
  const a = visibleDevices(H200, "0,5,1", "x", null);
  assert.deepEqual(idx(a), [0]);
  assert.match(a.notes[0], /5 is not a GPU of this machine: CUDA stops there, dropping the ids after it/);
  assert.deepEqual(idx(visibleDevices(H200, "1,7,0", "x", null)), [1]);
});

test("duplicates, empty and -1 hide every GPU", () => {
  assert.deepEqual(idx(visibleDevices(H200, "0,0", "x", null)), []);
  assert.deepEqual(idx(visibleDevices(H200, "", "x", null)), []);
  assert.deepEqual(idx(visibleDevices(H200, "-1", "x", null)), []);
});

test("UUIDs and unique UUID prefixes select that GPU", () => {
  assert.deepEqual(idx(visibleDevices(H200, "GPU-6486822f-842c-1320-f829-e4155c0d2130", "x", null)), [1]);
  assert.deepEqual(idx(visibleDevices(H200, "GPU-6486822f-842c", "x", null)), [1]);
  assert.deepEqual(idx(visibleDevices(H200, "GPU-ddb4766f,GPU-6486822f", "x", null)), [0, 1]);
  assert.equal(gpuForEntry(H200, "GPU-"), null, "an ambiguous prefix selects nothing");
});

test("fastest-first ordering makes indices uncertain only among different GPU models", () => {
  const mixed: InventoryGpu[] = [{ ...H200[0], name: "NVIDIA A10" }, H200[1]];
  assert.equal(visibleDevices(mixed, null, "x", null).certain, false);
  assert.equal(visibleDevices(mixed, null, "x", "PCI_BUS_ID").certain, true);
  assert.equal(visibleDevices(H200, null, "x", null).certain, true);
});

const inv = (selection: string[] = []): InventoryParams => ({ gpus: H200, selection });
const where = (l: number) => `line ${l + 1}`;

test('hover on "cuda:0" names the physical GPU and why (file\'s own variable)', async () => {
  await initEngine();
  const src =
    'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\nx = torch.ones(1, device="cuda:0")\n';
  const m = analyzePython(src);
  const h = machineHover(m, { line: 4, character: 28 }, inv(), where)!;
  assert.match(h.markdown, /cuda:0 → GPU 1 · NVIDIA H200 · 00000000:00:07\.0 · 139\.8 GiB free/);
  assert.match(h.markdown, /because line 3 sets CUDA_VISIBLE_DEVICES="1"/);
  assert.deepEqual(h.range, { start: { line: 4, character: 25 }, end: { line: 4, character: 33 } });
  m.tree.delete();
});

test("hover uses GPU Pilot's selection when the file sets nothing; inlay hints follow it", async () => {
  await initEngine();
  const src = 'import torch\ntorch.cuda.set_device(1)\ny = torch.ones(1, device="cuda")\n';
  const m = analyzePython(src);
  const h = machineHover(m, { line: 1, character: 22 }, inv(["1", "0"]), where)!;
  assert.match(h.markdown, /cuda:1 → GPU 0/);
  assert.match(h.markdown, /because GPU Pilot's selection is 1,0 \(terminals and runs started from VS Code\)/);
  const hints = machineInlayHints(
    m,
    { start: { line: 0, character: 0 }, end: { line: 9, character: 0 } },
    inv(["1", "0"]),
    where,
  );
  assert.deepEqual(
    hints.map((x) => [x.position.line, x.label]),
    [
      [1, "→ GPU 0"],
      [2, "→ GPU 1"],
    ],
  );
  const none = machineHover(m, { line: 1, character: 22 }, inv(), where)!;
  assert.match(none.markdown, /cuda:1 → GPU 1/);
  assert.match(none.markdown, /nothing sets CUDA_VISIBLE_DEVICES and no GPU is selected/);
  m.tree.delete();
});

test("hover on a CUDA_VISIBLE_DEVICES write lists the visible devices; 'Use the selected GPUs' rewrites it", async () => {
  await initEngine();
  const src = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,0"\n';
  const m = analyzePython(src);
  const h = machineHover(m, { line: 1, character: 5 }, inv(["0"]), where)!;
  assert.match(h.markdown, /makes 2 GPUs visible/);
  assert.match(h.markdown, /- cuda:0 → GPU 1 ·/);
  assert.match(h.markdown, /- cuda:1 → GPU 0 ·/);
  assert.match(h.markdown, /selection is 0: this line overrides it/);
  assert.deepEqual(useSelectionEdit(m, { line: 1, character: 3 }, ["0"]), {
    range: { start: { line: 1, character: 38 }, end: { line: 1, character: 41 } },
    newText: "0",
    title: "Use the selected GPUs (0)",
  });
  assert.equal(useSelectionEdit(m, { line: 1, character: 3 }, []), null);
  m.tree.delete();
});

test("no inventory: no machine help", async () => {
  await initEngine();
  const m = analyzePython('x = "cuda:0"\n');
  assert.equal(machineHover(m, { line: 0, character: 6 }, { gpus: null, selection: [] }, where), null);
  m.tree.delete();
});

test("a CUDA_VISIBLE_DEVICES write GPU001 finds ineffective (finetune_wrong_gpu.py): its hover says so, and cuda:0 maps through the selection, not through it", async () => {
  await initEngine();
  const src = readFileSync(join(ROOT, "examples", "finetune_wrong_gpu.py"), "utf8");
  const lint = lintPython(src);
  lint.tree?.delete();
  const noEffect = new Set(lint.diagnostics.filter((d) => d.code === "GPU001").map((d) => d.range.start.line));
  const writeLine = src.split("\n").findIndex((l) => l.startsWith('os.environ["CUDA_VISIBLE_DEVICES"] = "1"'));
  assert.ok(noEffect.has(writeLine), `GPU001 on line ${writeLine + 1}: ${JSON.stringify([...noEffect])}`);
  const m = analyzePython(src);
  const deviceLine = src.split("\n").findIndex((l) => l.startsWith('device = torch.device("cuda")'));
  const onCuda = { line: deviceLine, character: src.split("\n")[deviceLine].indexOf('"cuda"') + 2 };
  // Without the engine's verdict the write would decide (the contradiction of issue 19).
  assert.match(machineHover(m, onCuda, inv(["0"]), where)!.markdown, /cuda:0 → GPU 1/);
  const h = machineHover(m, onCuda, inv(["0"]), where, noEffect)!;
  assert.match(h.markdown, /cuda:0 → GPU 0/);
  assert.match(h.markdown, /because GPU Pilot's selection is 0/);
  const onWrite = machineHover(m, { line: writeLine, character: 5 }, inv(["0"]), where, noEffect)!;
  assert.match(
    onWrite.markdown,
    /^\*\*CUDA_VISIBLE_DEVICES="1" has no effect here\*\*: CUDA is already initialised when this line runs \(GPU001\)/,
  );
  const hints = machineInlayHints(
    m,
    { start: { line: 0, character: 0 }, end: { line: 40, character: 0 } },
    inv(["0"]),
    where,
    noEffect,
  );
  assert.ok(
    hints.every((x) => x.label === "→ GPU 0"),
    JSON.stringify(hints),
  );
  // No selection: the reason names the late write, not "nothing sets CUDA_VISIBLE_DEVICES".
  const bare = machineHover(m, onCuda, inv(), where, noEffect)!;
  assert.match(
    bare.markdown,
    new RegExp(
      `because line ${writeLine + 1} sets CUDA_VISIBLE_DEVICES only after CUDA initialised \\(no effect: GPU001\\) and no GPU is selected, so every GPU is visible`,
    ),
  );
  // The same model as a notebook's: the selection never reaches a kernel.
  const nb = machineHover(m, onCuda, inv(["1"]), where, noEffect, true)!;
  assert.match(nb.markdown, /cuda:0 → GPU 0/);
  assert.match(
    nb.markdown,
    /so its kernel sees every GPU it was started with \(GPU Pilot's selection reaches a notebook's kernel only through a GPU Pilot kernel, at its start; its running kernel is not known here\)/,
  );
  m.tree.delete();
});

test("inlay hints and hovers of a range equal those of the whole file in that range, on every rule fixture and example (deviceUses `within`)", async () => {
  await initEngine();
  const { filesUnder } = await import("../../support/helpers");
  const { deviceUses } = await import("../../../../server/src/engine/python/devices");
  const files = [
    ...filesUnder(join(ROOT, "test", "fixtures", "rules"), (n) => n.endsWith(".py")),
    ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".py")),
  ];
  let lines = 0,
    hinted = 0,
    hovered = 0;
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    const m = analyzePython(text);
    try {
      const last = text.split("\n").length;
      const all = machineInlayHints(
        m,
        { start: { line: 0, character: 0 }, end: { line: last, character: 0 } },
        inv(),
        where,
      );
      // What the server keeps per document answers as the model does.
      const slim = machineModel(m);
      assert.deepEqual(
        machineInlayHints(slim, { start: { line: 0, character: 0 }, end: { line: last, character: 0 } }, inv(), where),
        all,
        `${f}: machineModel`,
      );
      const whole = deviceUses(m);
      for (let l = 0; l < last; l += 1 + (l % 3)) {
        const end = Math.min(last, l + (l % 5));
        const mine = machineInlayHints(
          m,
          { start: { line: l, character: 0 }, end: { line: end, character: 0 } },
          inv(),
          where,
        );
        // The old answer was every use overlapping the lines: all those ending in them, and those
        // that start in them and end after (a call over several lines).
        const key = (h: { position: { line: number; character: number }; label: string }) =>
          `${h.position.line}:${h.position.character}:${h.label}`;
        const allKeys = all.map(key);
        for (const h of mine)
          assert.ok(h.position.line >= l && allKeys.includes(key(h)), `${f} lines ${l}-${end}: ${key(h)}`);
        assert.deepEqual(
          mine.filter((h) => h.position.line <= end),
          all.filter((h) => h.position.line >= l && h.position.line <= end),
          `${f} lines ${l}-${end}`,
        );
        hinted += mine.length;
        lines++;
      }
      // A hover on each use's first character finds the same answer as a search of the whole file would.
      for (const u of whole) {
        const at = { line: u.node.startPosition.row, character: u.node.startPosition.column };
        const h = machineHover(m, at, inv(), where);
        assert.ok(h, `${f}: a hover at ${JSON.stringify(at)} (${u.form})`);
        assert.deepEqual(
          machineHover(slim, at, inv(), where),
          h,
          `${f}: machineModel's hover at ${JSON.stringify(at)}`,
        );
        assert.deepEqual(useSelectionEdit(slim, at, ["1"]), useSelectionEdit(m, at, ["1"]));
        hovered++;
      }
    } finally {
      m.tree.delete();
    }
  }
  assert.ok(lines > 500 && hinted > 50 && hovered > 30, `${lines} ranges, ${hinted} hints, ${hovered} hovers`);
});
