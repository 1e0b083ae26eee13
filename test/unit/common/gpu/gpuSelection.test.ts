// The selection with MIG devices and gpuPilot.selectBy (common/src/gpu/selection.ts): pure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseListGpus } from "../../../../common/src/gpu/nvidiaSmi";
import {
  indexOfEntry,
  isMigSelected,
  normalizeSelection,
  orderSelection,
  toggleEntry,
  unknownEntries,
  validateDeviceIds,
} from "../../../../common/src/gpu/selection";
import { ROOT } from "../../support/root";

const listed = parseListGpus(
  readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h200x2-mig", "nvsmi_L.txt"), "utf8"),
);
const gpus = listed.gpus;
const migs = listed.mig;
const [G0, G1] = gpus.map((g) => g.uuid);
const [M0, M1, M2] = migs.map((m) => m.uuid);

test("MIG UUIDs from nvidia-smi -L are valid CUDA_VISIBLE_DEVICES entries and resolve to their GPU", () => {
  assert.deepEqual(validateDeviceIds([M0, M2]), [M0, M2]);
  assert.equal(indexOfEntry(M1, gpus, migs), 0);
  assert.equal(indexOfEntry(M1, gpus), undefined, "without the MIG list it is unknown");
  assert.deepEqual(unknownEntries([M1, "MIG-00000000-0000-0000-0000-000000000000", "1"], gpus, migs), [
    "MIG-00000000-0000-0000-0000-000000000000",
  ]);
  assert.ok(isMigSelected(migs[1], [M1.toUpperCase().replace("MIG-", "MIG-")]));
});

test("orderSelection: MIG devices after their GPU, by device number", () => {
  assert.deepEqual(orderSelection([G1, M2, M0], gpus, migs), [M0, M2, G1]);
  assert.deepEqual(orderSelection(["1", M1, G0], gpus, migs), [G0, M1, "1"]);
});

test("selectBy index | uuid: GPU ticks are written as indices or UUIDs", () => {
  assert.deepEqual(toggleEntry([], { kind: "gpu", gpu: gpus[1] }, true, gpus, migs, "index"), ["1"]);
  assert.deepEqual(toggleEntry([], { kind: "gpu", gpu: gpus[1] }, true, gpus, migs, "uuid"), [G1]);
  assert.deepEqual(
    toggleEntry(["0"], { kind: "gpu", gpu: gpus[1] }, true, gpus, migs, "uuid"),
    [G0, G1],
    "existing indices become UUIDs",
  );
  assert.deepEqual(
    toggleEntry([G0, G1], { kind: "gpu", gpu: gpus[0] }, false, gpus, migs, "index"),
    ["1"],
    "and back to indices",
  );
  assert.deepEqual(normalizeSelection(["7", G1], gpus, migs, "uuid"), [G1, "7"], "an unknown entry stays as it is");
});

test("a MIG device forces UUIDs (CUDA_VISIBLE_DEVICES takes one kind; MIG devices have no index)", () => {
  const withMig = toggleEntry(["1"], { kind: "mig", mig: migs[2] }, true, gpus, migs, "index");
  assert.deepEqual(withMig, [M2, G1]);
  assert.deepEqual(
    toggleEntry(withMig, { kind: "mig", mig: migs[2] }, false, gpus, migs, "index"),
    ["1"],
    "without MIG, indices again",
  );
  assert.deepEqual(toggleEntry([M0], { kind: "gpu", gpu: gpus[1] }, true, gpus, migs, "index"), [M0, G1]);
});
