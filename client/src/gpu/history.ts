/**
 * The GPU history of the "Show GPU History" panel: per GPU, a fixed-size ring of (time, utilisation
 * %, memory used MiB) samples fed from the streamed ticks ({@link GpuStream}). Pure (no `vscode`):
 *
 * ```ts
 * const h = new GpuHistory(historyCapacity(10, 1000)); // 600 samples per GPU
 * stream.on((e) => { if (e.kind === "tick") h.push(e.tick); });
 * h.snapshot().gpus[0].utilizationPercent; // oldest first
 * ```
 *
 * Memory is bounded: each ring holds at most `capacity` samples (the oldest is overwritten), and a
 * GPU that has not been seen for a whole window is dropped, so running for a day does not grow it.
 */
import type { Gpu } from "../../../common/src/gpu/nvidiaSmi";

/** Samples per GPU for `minutes` of history at one sample every `intervalMs` (at least 2, at most 100 000). */
export function historyCapacity(minutes: number, intervalMs: number): number {
  const m = Number.isFinite(minutes) && minutes > 0 ? minutes : 10;
  const i = Number.isFinite(intervalMs) && intervalMs > 0 ? intervalMs : 1000;
  return Math.min(100_000, Math.max(2, Math.ceil((m * 60_000) / i)));
}

/** A fixed-size ring buffer: {@link push} overwrites the oldest entry once full. */
export class Ring<T> {
  private buf: (T | undefined)[];
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring capacity ${capacity}`);
    this.buf = new Array<T | undefined>(capacity);
  }

  /** Entries held (at most {@link capacity}). */
  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count < this.capacity) {
      this.buf[(this.start + this.count) % this.capacity] = item;
      this.count++;
    } else {
      this.buf[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** The oldest entry, or undefined when empty. */
  first(): T | undefined {
    return this.count === 0 ? undefined : this.buf[this.start];
  }

  /** The newest entry, or undefined when empty. */
  last(): T | undefined {
    return this.count === 0 ? undefined : this.buf[(this.start + this.count - 1) % this.capacity];
  }

  /** The entries, oldest first (a copy). */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.buf[(this.start + i) % this.capacity] as T);
    return out;
  }
}

/** One GPU's numbers at one tick. */
export interface HistorySample {
  /** ms since the epoch. */
  at: number;
  /** `utilization.gpu`, %; null when nvidia-smi gave none. */
  utilizationPercent: number | null;
  /** `memory.used`, MiB; null when nvidia-smi gave none. */
  memoryUsedMiB: number | null;
}

/** One GPU's history as parallel arrays (the shape uPlot draws), oldest first. */
export interface GpuSeries {
  uuid: string;
  /** nvidia-smi index at the newest sample. */
  index: number;
  name: string;
  /** `memory.total` at the newest sample, MiB. */
  memoryTotalMiB: number | null;
  /** ms since the epoch, ascending. */
  at: number[];
  utilizationPercent: (number | null)[];
  memoryUsedMiB: (number | null)[];
}

/** What {@link GpuHistory.snapshot} returns (and the panel is sent). */
export interface HistorySnapshot {
  /** Samples kept per GPU. */
  capacity: number;
  /** GPUs in index order. */
  gpus: GpuSeries[];
}

interface Track {
  uuid: string;
  index: number;
  name: string;
  memoryTotalMiB: number | null;
  ring: Ring<HistorySample>;
}

/** Per-GPU rings of {@link HistorySample}; see the module comment. */
export class GpuHistory {
  private readonly tracks = new Map<string, Track>();
  private _capacity: number;
  /** Pushes so far (the panel tells new samples from old by it). */
  private _pushes = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`history capacity ${capacity}`);
    this._capacity = capacity;
  }

  get capacity(): number {
    return this._capacity;
  }

  /** Ticks pushed since construction (or the last {@link clear}). */
  get pushes(): number {
    return this._pushes;
  }

  /** Largest number of samples any GPU holds. */
  get length(): number {
    let n = 0;
    for (const t of this.tracks.values()) n = Math.max(n, t.ring.length);
    return n;
  }

  /** Adds one tick's numbers (a tick without GPUs is ignored). */
  push(tick: { at: number; gpus: readonly Gpu[] }): void {
    if (tick.gpus.length === 0) return;
    this._pushes++;
    for (const g of tick.gpus) {
      const key = g.uuid.toLowerCase();
      let t = this.tracks.get(key);
      if (!t) {
        t = {
          uuid: g.uuid,
          index: g.index,
          name: g.name,
          memoryTotalMiB: g.memoryTotalMiB,
          ring: new Ring(this._capacity),
        };
        this.tracks.set(key, t);
      }
      t.index = g.index;
      t.name = g.name;
      t.memoryTotalMiB = g.memoryTotalMiB;
      t.ring.push({ at: tick.at, utilizationPercent: g.utilizationGpuPercent, memoryUsedMiB: g.memoryUsedMiB });
    }
    // A GPU absent for a whole window (its newest sample is older than the oldest sample a present
    // GPU still holds in a full ring) is gone: drop it (bounded memory).
    if (this.tracks.size > tick.gpus.length) {
      const present = new Set(tick.gpus.map((g) => g.uuid.toLowerCase()));
      let windowStart = -Infinity;
      for (const key of present) {
        const t = this.tracks.get(key);
        if (t && t.ring.length === this._capacity) windowStart = Math.max(windowStart, t.ring.first()?.at ?? -Infinity);
      }
      for (const [key, t] of this.tracks) {
        if (!present.has(key) && (t.ring.last()?.at ?? -Infinity) < windowStart) this.tracks.delete(key);
      }
    }
  }

  /** Changes the capacity, keeping the newest samples that fit. */
  resize(capacity: number): void {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`history capacity ${capacity}`);
    if (capacity === this._capacity) return;
    this._capacity = capacity;
    for (const t of this.tracks.values()) {
      const ring = new Ring<HistorySample>(capacity);
      for (const s of t.ring.toArray().slice(-capacity)) ring.push(s);
      t.ring = ring;
    }
  }

  /** Forgets every sample. */
  clear(): void {
    this.tracks.clear();
    this._pushes = 0;
  }

  /**
   * Each GPU's newest sample, GPUs in index order, without copying the rings: O(GPUs), for the
   * history panel's per-tick append (a whole {@link snapshot} per tick copied every sample of every
   * GPU, O(samples) per tick).
   */
  latest(): Array<{ uuid: string; index: number; sample: HistorySample }> {
    const out: Array<{ uuid: string; index: number; sample: HistorySample }> = [];
    for (const t of this.tracks.values()) {
      const sample = t.ring.last();
      if (sample) out.push({ uuid: t.uuid, index: t.index, sample: { ...sample } });
    }
    return out.sort((a, b) => a.index - b.index);
  }

  /** Every GPU's samples, oldest first, GPUs in index order (copies). */
  snapshot(): HistorySnapshot {
    const gpus = [...this.tracks.values()]
      .sort((a, b) => a.index - b.index)
      .map((t): GpuSeries => {
        const samples = t.ring.toArray();
        return {
          uuid: t.uuid,
          index: t.index,
          name: t.name,
          memoryTotalMiB: t.memoryTotalMiB,
          at: samples.map((s) => s.at),
          utilizationPercent: samples.map((s) => s.utilizationPercent),
          memoryUsedMiB: samples.map((s) => s.memoryUsedMiB),
        };
      });
    return { capacity: this._capacity, gpus };
  }
}

/** What {@link timeAxis} returns: the history chart's x axis, in seconds since the epoch (uPlot's time unit). */
export interface TimeAxis {
  /** Left end: `nowMs` less the window, s since the epoch. */
  min: number;
  /** Right end: `nowMs`, s since the epoch. */
  max: number;
  /** Tick positions, s since the epoch, ascending, the last one at {@link max}. */
  ticks: number[];
  /** One label per tick, relative to now in whole units: `-10 min`, `-30 s`, `-2 h`, `now`. */
  labels: string[];
}

/** Tick steps the time axis picks from, s (the smallest that gives at most 6 steps over the window). */
const TIME_STEPS_S = [10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200];

/** `-10 min`, `-30 s`, `-2 h` or `now` for a tick `ago` seconds before now. */
function agoLabel(ago: number): string {
  if (ago === 0) return "now";
  if (ago >= 3600 && ago % 3600 === 0) return `-${ago / 3600} h`;
  if (ago % 60 === 0) return `-${ago / 60} min`;
  return `-${ago} s`;
}

/**
 * The history chart's x axis: the whole window `gpuPilot.history.minutes` (`minutes`, as
 * {@link historyCapacity} reads it) ending at `nowMs` (ms since the epoch), whatever samples there
 * are, with ticks every whole step back from now (e.g. 10 min: `-10 min`, `-8 min`, ... `now`).
 */
export function timeAxis(minutes: number, nowMs: number): TimeAxis {
  const m = Number.isFinite(minutes) && minutes > 0 ? minutes : 10;
  const span = Math.round(m * 60);
  const max = nowMs / 1000;
  const step = TIME_STEPS_S.find((s) => span / s <= 6) ?? TIME_STEPS_S[TIME_STEPS_S.length - 1];
  const ticks: number[] = [];
  const labels: string[] = [];
  for (let ago = Math.floor(span / step) * step; ago >= 0; ago -= step) {
    ticks.push(max - ago);
    labels.push(agoLabel(ago));
  }
  return { min: max - span, max, ticks, labels };
}
