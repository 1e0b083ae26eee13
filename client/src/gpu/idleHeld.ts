/**
 * "Idle-held": a process that holds GPU memory while its GPU does nothing for a
 * long time, the commonest waste on a shared server (a notebook kernel left open, a finished
 * training whose process waits for input). Pure: no `vscode`, no timers; the monitor feeds it each
 * sample and the view asks it which processes to flag.
 *
 * A GPU is idle in a sample when its `utilization.gpu` is 0 % (nvidia-smi's "percent of time over
 * the past sample period during which one or more kernels was executing on the GPU") and, where
 * `dmon --gpm-metrics` gives SM activity, that is at most {@link IDLE_SM_PERCENT} %. A process is
 * idle-held once its GPU has been idle in every sample since it was first seen holding memory
 * there for at least `thresholdMs`. A busy sample of its GPU, or a gap in the samples longer than
 * `maxGapMs` (the view was hidden: nothing is known about that time), starts the count again.
 */

/** SM activity (%, from dmon's GPM metrics) at or below which a GPU counts as doing nothing. */
export const IDLE_SM_PERCENT = 1;

/** One sample as the tracker needs it. */
export interface IdleSample {
  /** ms since the epoch. */
  at: number;
  /** Each GPU's `utilization.gpu` (%; null: unknown) and SM activity (%; undefined: not measured). */
  gpus: { uuid: string; utilizationGpuPercent: number | null; smActivityPercent?: number | undefined }[];
  /** Processes holding memory: pid, GPU UUID, memory (MiB; null: unknown). */
  apps: { pid: number; gpuUuid: string; usedMemoryMiB: number | null }[];
}

/** A flagged process: since when its GPU has been idle while it held memory (ms since the epoch). */
export interface IdleHeld {
  pid: number;
  gpuUuid: string;
  idleSince: number;
  /** The memory it held in the last sample, MiB (null: unknown). */
  usedMemoryMiB: number | null;
}

/** True when a GPU did nothing in the sample: 0 % utilisation and, where measured, SM activity ≤ {@link IDLE_SM_PERCENT} %. Unknown utilisation is not idle. */
export function gpuIdle(g: IdleSample["gpus"][number]): boolean {
  if (g.utilizationGpuPercent === null || g.utilizationGpuPercent > 0) return false;
  return g.smActivityPercent === undefined || g.smActivityPercent <= IDLE_SM_PERCENT;
}

/** Follows processes over samples and tells which are idle-held; see the module comment. */
export class IdleHeldTracker {
  private readonly since = new Map<string, IdleHeld>();
  private lastAt: number | undefined;

  /**
   * @param thresholdMs how long a process must hold memory on an idle GPU before it is flagged, ms (0: never).
   * @param maxGapMs a pause between samples longer than this resets every count, ms (default 60 s).
   */
  constructor(
    private thresholdMs: number,
    private readonly maxGapMs = 60_000,
  ) {}

  /** Changes the threshold (the setting); counts are kept. */
  setThreshold(ms: number): void {
    this.thresholdMs = ms;
  }

  /** Takes one sample (samples must come in time order; an older one is ignored). */
  observe(s: IdleSample): void {
    if (this.lastAt !== undefined && s.at < this.lastAt) return;
    if (this.lastAt !== undefined && s.at - this.lastAt > this.maxGapMs) this.since.clear();
    this.lastAt = s.at;
    const idle = new Map(s.gpus.map((g) => [g.uuid.toLowerCase(), gpuIdle(g)]));
    const seen = new Set<string>();
    for (const a of s.apps) {
      if (a.usedMemoryMiB !== null && a.usedMemoryMiB <= 0) continue;
      const uuid = a.gpuUuid.toLowerCase();
      const key = `${a.pid}/${uuid}`;
      seen.add(key);
      if (!idle.get(uuid)) {
        this.since.delete(key);
        continue;
      }
      const prev = this.since.get(key);
      this.since.set(key, {
        pid: a.pid,
        gpuUuid: uuid,
        idleSince: prev?.idleSince ?? s.at,
        usedMemoryMiB: a.usedMemoryMiB,
      });
    }
    for (const key of [...this.since.keys()]) if (!seen.has(key)) this.since.delete(key);
  }

  /** The process on that GPU when it is idle-held at `now` (ms), else undefined. */
  flagged(pid: number, gpuUuid: string, now: number): IdleHeld | undefined {
    if (this.thresholdMs <= 0) return undefined;
    const h = this.since.get(`${pid}/${gpuUuid.toLowerCase()}`);
    return h && now - h.idleSince >= this.thresholdMs ? h : undefined;
  }

  /** Every idle-held process at `now`. */
  all(now: number): IdleHeld[] {
    if (this.thresholdMs <= 0) return [];
    return [...this.since.values()].filter((h) => now - h.idleSince >= this.thresholdMs);
  }
}

/** "idle 12 min": the row's words for a flagged process (minutes, at least 1). */
export function idleHeldLabel(h: IdleHeld, now: number): string {
  return `idle ${Math.max(1, Math.floor((now - h.idleSince) / 60_000))} min`;
}

/** The tooltip's sentence for a flagged process (Markdown-safe: numbers only). */
export function idleHeldSentence(h: IdleHeld, now: number): string {
  const mem = h.usedMemoryMiB === null ? "GPU memory" : `${h.usedMemoryMiB} MiB of GPU memory`;
  return `$(debug-pause) **Idle-held**: holds ${mem} while its GPU has done nothing (0 % utilisation, no SM activity) for ${Math.max(1, Math.floor((now - h.idleSince) / 60_000))} min (gpuPilot.monitor.idleHeldMinutes).`;
}
