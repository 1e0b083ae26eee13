/**
 * The user's GPU selection: CUDA_VISIBLE_DEVICES entries (nvidia-smi indices as strings, or GPU/MIG
 * UUIDs), validated, ordered and persisted. No `vscode` import (the store takes a Memento-like
 * object), so all of it is unit-tested.
 */

const HEX_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

/**
 * One CUDA_VISIBLE_DEVICES entry GPU Pilot accepts:
 * - an index: `0`, `1`, ... (digits only);
 * - a GPU UUID: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`;
 * - a MIG UUID: `MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (R470+) or `MIG-GPU-<uuid>/<gi>/<ci>` (older drivers).
 */
export const DEVICE_ID = new RegExp(`^(?:\\d{1,4}|GPU-${HEX_UUID}|MIG-(?:${HEX_UUID}|GPU-${HEX_UUID}/\\d+/\\d+))$`);

/** True when `id` is a valid {@link DEVICE_ID}. */
export function isDeviceId(id: string): boolean {
  return DEVICE_ID.test(id);
}

/** Thrown by {@link validateDeviceIds} for entries that are not {@link DEVICE_ID}s; `invalid` lists them. */
export class InvalidDeviceIdError extends Error {
  constructor(readonly invalid: string[]) {
    super(
      `Not a GPU index or UUID: ${invalid.map((s) => JSON.stringify(s)).join(", ")}. ` +
        "Use nvidia-smi indices (0, 1, ...) or GPU-/MIG- UUIDs.",
    );
    this.name = "InvalidDeviceIdError";
  }
}

/**
 * Trims the entries, drops duplicates (first one wins) and checks each against {@link DEVICE_ID}.
 * @returns the cleaned list, in the given order.
 * @throws InvalidDeviceIdError when any entry is not a device id (commas, spaces, shell characters...).
 */
export function validateDeviceIds(ids: readonly string[]): string[] {
  const out: string[] = [];
  const invalid: string[] = [];
  for (const raw of ids) {
    const id = typeof raw === "string" ? raw.trim() : String(raw);
    if (!isDeviceId(id)) invalid.push(id);
    else if (!out.includes(id)) out.push(id);
  }
  if (invalid.length > 0) throw new InvalidDeviceIdError(invalid);
  return out;
}

/** The identifying part of a GPU, as {@link orderSelection} needs it. */
export interface GpuKey {
  index: number;
  uuid: string;
}

/** The identifying part of a MIG device (see nvidiaSmi.ts MigDevice). */
export interface MigKey {
  /** The parent GPU's nvidia-smi index. */
  gpuIndex: number;
  /** The MIG device's number under its GPU. */
  device: number;
  /** `MIG-...`. */
  uuid: string;
}

/** How GPU ticks and picks are written into the selection (`gpuPilot.selectBy`). */
export type SelectBy = "index" | "uuid";

/** The nvidia-smi index an entry refers to, or undefined when it names no known GPU (MIG UUIDs resolve to their parent GPU). */
export function indexOfEntry(id: string, gpus: readonly GpuKey[], migs: readonly MigKey[] = []): number | undefined {
  if (/^\d+$/.test(id)) return Number(id);
  const mig = migs.find((m) => m.uuid.toLowerCase() === id.toLowerCase());
  if (mig) return mig.gpuIndex;
  const uuid = id.startsWith("MIG-GPU-") ? id.slice(4).split("/")[0] : id;
  return gpus.find((g) => g.uuid.toLowerCase() === uuid.toLowerCase())?.index;
}

/**
 * Sorts entries in nvidia-smi index order (UUIDs by their GPU's index, MIG devices after their GPU
 * by device number); entries that name no known GPU keep their relative order at the end. Does not
 * validate.
 */
export function orderSelection(
  ids: readonly string[],
  gpus: readonly GpuKey[],
  migs: readonly MigKey[] = [],
): string[] {
  const keyed = ids.map((id, pos) => {
    const mig = migs.find((m) => m.uuid.toLowerCase() === id.toLowerCase());
    return { id, pos, index: indexOfEntry(id, gpus, migs), sub: mig ? 1 + mig.device : 0 };
  });
  keyed.sort((a, b) => {
    if (a.index !== undefined && b.index !== undefined) return a.index - b.index || a.sub - b.sub || a.pos - b.pos;
    if (a.index !== undefined) return -1;
    if (b.index !== undefined) return 1;
    return a.pos - b.pos;
  });
  return keyed.map((k) => k.id);
}

/** Entries that name no GPU of `gpus` nor MIG device of `migs` (an index past the end, an unknown UUID). */
export function unknownEntries(
  ids: readonly string[],
  gpus: readonly GpuKey[],
  migs: readonly MigKey[] = [],
): string[] {
  return ids.filter((id) => {
    if (migs.some((m) => m.uuid.toLowerCase() === id.toLowerCase())) return false;
    const index = indexOfEntry(id, gpus, migs);
    return index === undefined || !gpus.some((g) => g.index === index);
  });
}

/** True when the MIG device is in the selection (by its UUID). */
export function isMigSelected(mig: MigKey, ids: readonly string[]): boolean {
  return ids.some((id) => id.toLowerCase() === mig.uuid.toLowerCase());
}

const isMigEntry = (id: string) => id.startsWith("MIG-");

/**
 * Rewrites GPU entries in the form `selectBy` asks for: `uuid` turns indices into `GPU-` UUIDs,
 * `index` turns GPU UUIDs into indices. With a MIG device in the selection every GPU is written as
 * its UUID whatever `selectBy` says: CUDA_VISIBLE_DEVICES takes one kind of entry, and only UUIDs
 * name MIG devices. Entries that name no known GPU stay as they are. Result in index order.
 */
export function normalizeSelection(
  ids: readonly string[],
  gpus: readonly GpuKey[],
  migs: readonly MigKey[],
  selectBy: SelectBy,
): string[] {
  const byUuid = ids.some(isMigEntry) || selectBy === "uuid";
  const out: string[] = [];
  for (const id of ids) {
    let next = id;
    if (!isMigEntry(id)) {
      const index = indexOfEntry(id, gpus, migs);
      const gpu = index === undefined ? undefined : gpus.find((g) => g.index === index);
      if (gpu) next = byUuid ? gpu.uuid : String(gpu.index);
    }
    if (!out.some((o) => o.toLowerCase() === next.toLowerCase())) out.push(next);
  }
  return orderSelection(out, gpus, migs);
}

/**
 * The selection after ticking or unticking a GPU or MIG device (tree checkbox, quick pick), written
 * per {@link normalizeSelection}.
 */
export function toggleEntry(
  ids: readonly string[],
  target: { kind: "gpu"; gpu: GpuKey } | { kind: "mig"; mig: MigKey },
  checked: boolean,
  gpus: readonly GpuKey[],
  migs: readonly MigKey[],
  selectBy: SelectBy,
): string[] {
  let rest: string[];
  let add: string;
  if (target.kind === "gpu") {
    const g = target.gpu;
    rest = ids.filter((id) => id !== String(g.index) && id.toLowerCase() !== g.uuid.toLowerCase());
    add = String(g.index);
  } else {
    rest = ids.filter((id) => id.toLowerCase() !== target.mig.uuid.toLowerCase());
    add = target.mig.uuid;
  }
  return normalizeSelection(checked ? [...rest, add] : rest, gpus, migs, selectBy);
}

/** True when the GPU is in the selection, by index or by UUID. */
export function isSelected(gpu: GpuKey, ids: readonly string[]): boolean {
  return ids.some((id) => id === String(gpu.index) || id.toLowerCase() === gpu.uuid.toLowerCase());
}

/**
 * The selection after ticking (`checked`) or unticking a GPU in the tree: ticking adds its index,
 * unticking removes both its index and its UUID. Result in index order.
 */
export function toggleGpu(ids: readonly string[], gpu: GpuKey, checked: boolean, gpus: readonly GpuKey[]): string[] {
  const rest = ids.filter((id) => id !== String(gpu.index) && id.toLowerCase() !== gpu.uuid.toLowerCase());
  return orderSelection(checked ? [...rest, String(gpu.index)] : rest, gpus);
}

/** Status bar text without the icon: `GPU 1`, `GPU 0,1`, or `GPU: none`. UUIDs are shortened to `GPU-ddb4766f`. */
export function selectionLabel(ids: readonly string[]): string {
  if (ids.length === 0) return "GPU: none";
  const short = ids.map((id) =>
    id.length > 12 && !/^\d+$/.test(id) ? id.slice(0, id.startsWith("MIG-GPU-") ? 16 : 12) : id,
  );
  return `GPU ${short.join(",")}`;
}

/** The subset of `vscode.Memento` the store uses (`context.workspaceState` fits). */
export interface StateLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

/** A listener registration; `dispose()` removes it (shaped like `vscode.Disposable`). */
export interface Unsubscribe {
  dispose(): void;
}

/**
 * The selection, persisted in workspace state under {@link SelectionStore.KEY}.
 * Reading ignores invalid stored entries; writing validates.
 */
export class SelectionStore {
  static readonly KEY = "gpuPilot.selection";
  private readonly listeners = new Set<(ids: string[]) => void>();
  private current: string[];

  constructor(private readonly state: StateLike) {
    const stored = state.get<unknown>(SelectionStore.KEY);
    this.current = Array.isArray(stored)
      ? stored.filter((s): s is string => typeof s === "string" && isDeviceId(s))
      : [];
  }

  /** The selected entries (a copy). */
  get(): string[] {
    return [...this.current];
  }

  /**
   * Replaces the selection (validated, deduplicated, in the order given: order it first with
   * {@link orderSelection}), persists it, then notifies listeners if it changed.
   * @throws InvalidDeviceIdError for an invalid entry; nothing is changed then.
   */
  async set(ids: readonly string[]): Promise<void> {
    const next = validateDeviceIds(ids);
    if (next.length === this.current.length && next.every((id, i) => id === this.current[i])) return;
    this.current = next;
    await this.state.update(SelectionStore.KEY, next);
    for (const l of [...this.listeners]) l(this.get());
  }

  /** Calls `listener` with the new selection after each change. */
  onDidChange(listener: (ids: string[]) => void): Unsubscribe {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}
