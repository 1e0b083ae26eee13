// The GPU selection: validation, ordering, ticking, labels and the workspace-state store.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  indexOfEntry,
  InvalidDeviceIdError,
  isDeviceId,
  isSelected,
  orderSelection,
  SelectionStore,
  selectionLabel,
  type StateLike,
  toggleGpu,
  unknownEntries,
  validateDeviceIds,
} from "../../../../common/src/gpu/selection";

const GPU0 = { index: 0, uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f" };
const GPU1 = { index: 1, uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130" };
const GPUS = [GPU0, GPU1];

test("isDeviceId accepts indices and GPU-/MIG- UUIDs only", () => {
  for (const ok of [
    "0",
    "1",
    "15",
    GPU0.uuid,
    GPU1.uuid.toUpperCase().replace("GPU-", "GPU-"),
    "MIG-1f3e4d5c-0000-1111-2222-333344445555",
    `MIG-${GPU0.uuid}/1/0`,
  ]) {
    assert.ok(isDeviceId(ok), ok);
  }
  for (const bad of [
    "",
    " ",
    "-1",
    "0,1",
    "0 1",
    "1;rm -rf /",
    "$(id)",
    "`id`",
    "GPU-ddb4766f",
    "gpu-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    "MIG-",
    "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f\n",
    "1.5",
    "NoDevFiles",
    "12345",
  ]) {
    assert.ok(!isDeviceId(bad), JSON.stringify(bad));
  }
});

test("validateDeviceIds trims, dedupes, and throws with every bad entry", () => {
  assert.deepEqual(validateDeviceIds([" 1", "0", "1", GPU0.uuid]), ["1", "0", GPU0.uuid]);
  assert.deepEqual(validateDeviceIds([]), []);
  assert.throws(
    () => validateDeviceIds(["0", "1,2", "$(reboot)"]),
    (e: unknown) => {
      assert.ok(e instanceof InvalidDeviceIdError);
      assert.deepEqual(e.invalid, ["1,2", "$(reboot)"]);
      assert.match(e.message, /Not a GPU index or UUID: "1,2", "\$\(reboot\)"/);
      return true;
    },
  );
});

test("orderSelection sorts by nvidia-smi index, UUIDs by their GPU, unknown UUIDs last", () => {
  assert.deepEqual(orderSelection(["1", "0"], GPUS), ["0", "1"]);
  assert.deepEqual(orderSelection([GPU1.uuid, GPU0.uuid], GPUS), [GPU0.uuid, GPU1.uuid]);
  const stranger = "GPU-00000000-0000-0000-0000-000000000000";
  assert.deepEqual(orderSelection([stranger, "1", "0"], GPUS), ["0", "1", stranger]);
  assert.deepEqual(orderSelection(["10", "2"], []), ["2", "10"]);
  assert.equal(indexOfEntry(`MIG-${GPU1.uuid}/2/0`, GPUS), 1);
  assert.equal(indexOfEntry(GPU1.uuid.toUpperCase().replace("GPU-", "GPU-"), GPUS), 1);
});

test("unknownEntries names selections that are not on the machine", () => {
  assert.deepEqual(unknownEntries(["0", "1"], GPUS), []);
  assert.deepEqual(unknownEntries(["0", "3"], GPUS), ["3"]);
  assert.deepEqual(unknownEntries(["GPU-00000000-0000-0000-0000-000000000000"], GPUS), [
    "GPU-00000000-0000-0000-0000-000000000000",
  ]);
});

test("isSelected and toggleGpu: ticking adds the index, unticking removes index and UUID", () => {
  assert.ok(isSelected(GPU1, ["1"]));
  assert.ok(isSelected(GPU1, [GPU1.uuid]));
  assert.ok(!isSelected(GPU0, ["1"]));
  assert.deepEqual(toggleGpu(["1"], GPU0, true, GPUS), ["0", "1"]);
  assert.deepEqual(toggleGpu(["0", "1"], GPU0, false, GPUS), ["1"]);
  assert.deepEqual(toggleGpu([GPU1.uuid, "0"], GPU1, false, GPUS), ["0"]);
  assert.deepEqual(toggleGpu(["1"], GPU1, true, GPUS), ["1"]);
});

test("selectionLabel: status bar text", () => {
  assert.equal(selectionLabel([]), "GPU: none");
  assert.equal(selectionLabel(["1"]), "GPU 1");
  assert.equal(selectionLabel(["0", "1"]), "GPU 0,1");
  assert.equal(selectionLabel([GPU0.uuid]), "GPU GPU-ddb4766f");
});

function memento(initial?: unknown): StateLike & { data: Map<string, unknown>; writes: number } {
  const data = new Map<string, unknown>();
  if (initial !== undefined) data.set(SelectionStore.KEY, initial);
  const m = {
    data,
    writes: 0,
    get<T>(key: string): T | undefined {
      return data.get(key) as T | undefined;
    },
    update(key: string, value: unknown): Promise<void> {
      m.writes++;
      data.set(key, value);
      return Promise.resolve();
    },
  };
  return m;
}

test("SelectionStore persists in workspace state and notifies on change only", async () => {
  const state = memento();
  const store = new SelectionStore(state);
  assert.deepEqual(store.get(), []);
  const seen: string[][] = [];
  const sub = store.onDidChange((ids) => seen.push(ids));
  await store.set(["1"]);
  await store.set(["1"]);
  assert.equal(state.writes, 1);
  assert.deepEqual(state.data.get("gpuPilot.selection"), ["1"]);
  assert.deepEqual(new SelectionStore(state).get(), ["1"], "a new store reads it back");
  await store.set([]);
  sub.dispose();
  await store.set(["0"]);
  assert.deepEqual(seen, [["1"], []]);
  const copy = store.get();
  copy.push("1");
  assert.deepEqual(store.get(), ["0"], "get() returns a copy");
});

test("SelectionStore rejects invalid ids without changing anything, and ignores corrupt stored data", async () => {
  const store = new SelectionStore(memento(["1", "1; rm -rf ~", 7, null]));
  assert.deepEqual(store.get(), ["1"]);
  await assert.rejects(store.set(["0", "nope"]), InvalidDeviceIdError);
  assert.deepEqual(store.get(), ["1"]);
  assert.deepEqual(new SelectionStore(memento("0,1")).get(), []);
});
