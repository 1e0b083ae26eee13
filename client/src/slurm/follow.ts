/**
 * Follows a growing file (a Slurm job's output) like `tail -F`: polls its size, reads what was
 * added since the last read and hands it on as text. Survives the file not existing yet (a pending
 * job has none) and its being replaced or cut (read again from the start). Polling, not fs.watch:
 * job output usually lies on a network file system, where change events from other hosts do not
 * arrive. Bounded: a backlog over `maxBacklogBytes` is skipped, with the count
 * handed to `onSkip`, and {@link TextTail} keeps only the end of the text. No `vscode` import.
 */
import * as fs from "node:fs";
import { StringDecoder } from "node:string_decoder";

/** Options of {@link followFile}. */
export interface FollowOptions {
  /** Poll period, ms (default 500). */
  intervalMs?: number;
  /** Called with each new piece of text (UTF-8; a character split between reads is kept for the next). */
  onData(text: string): void;
  /** Called once when the file first appears (after zero or more polls without it). */
  onAppear?(): void;
  /** Most unread bytes kept: when the file is further ahead, the older part is skipped (default 8 MiB). */
  maxBacklogBytes?: number;
  /** Called with the number of bytes skipped (never read) each time a backlog is cut. */
  onSkip?(bytes: number): void;
}

/** Default of {@link FollowOptions.maxBacklogBytes}. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/** A running follow; {@link stop} ends it after one last read. */
export interface Follow {
  /** Reads what is new now (the poll does this by itself). Resolves when read. */
  poll(): Promise<void>;
  /** Reads what is new one last time, then stops. */
  stop(): Promise<void>;
  /** Offset reached in the file, bytes (read or skipped). */
  readonly bytes: number;
  /** Bytes skipped, never read. */
  readonly skipped: number;
}

/** Starts following `file` (absolute path). Never throws; unreadable states count as "not there yet". */
export function followFile(file: string, opts: FollowOptions): Follow {
  let offset = 0;
  let ino: number | null = null;
  let appeared = false;
  let stopped = false;
  let decoder = new StringDecoder("utf8");
  let busy: Promise<void> | undefined;
  let skipped = 0;
  const maxBacklog = opts.maxBacklogBytes ?? MAX_BACKLOG_BYTES;

  const readNew = async (): Promise<void> => {
    let st: fs.Stats;
    try {
      st = await fs.promises.stat(file);
    } catch {
      return; // not there yet (or gone for a moment)
    }
    if (!appeared) {
      appeared = true;
      opts.onAppear?.();
    }
    if ((ino !== null && st.ino !== ino) || st.size < offset) {
      offset = 0; // replaced or truncated: start again
      decoder = new StringDecoder("utf8");
    }
    ino = st.ino;
    if (st.size <= offset) return;
    if (st.size - offset > maxBacklog) {
      const cut = st.size - maxBacklog - offset;
      offset += cut;
      skipped += cut;
      decoder = new StringDecoder("utf8"); // a character split at the cut is dropped with it
      opts.onSkip?.(cut);
    }
    const fh = await fs.promises.open(file, "r").catch(() => null);
    if (!fh) return;
    try {
      const want = st.size - offset;
      const buf = Buffer.alloc(Math.min(want, 1 << 20));
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      offset += bytesRead;
      const text = decoder.write(buf.subarray(0, bytesRead));
      if (text) opts.onData(text);
    } finally {
      await fh.close();
    }
  };
  const poll = (): Promise<void> => {
    busy ??= readNew().finally(() => {
      busy = undefined;
    });
    return busy;
  };
  const timer = setInterval(() => {
    if (!stopped) void poll();
  }, opts.intervalMs ?? 500);
  void poll();
  return {
    poll,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await busy;
      // Everything written up to now (a last read may be larger than one chunk).
      for (let before = -1; before !== offset;) {
        before = offset;
        await readNew();
      }
      const rest = decoder.end();
      if (rest) opts.onData(rest);
    },
    get bytes() {
      return offset;
    },
    get skipped() {
      return skipped;
    },
  };
}

/** Keeps the last `keep` characters of the text appended (at most twice that in memory); counts the rest. */
export class TextTail {
  /** The kept end of the text. */
  text = "";
  /** Characters dropped from the front so far. */
  dropped = 0;
  constructor(readonly keep: number) {}

  /** Appends `t`, dropping the front when over twice `keep`. */
  append(t: string): void {
    this.text += t;
    if (this.text.length <= 2 * this.keep) return;
    this.dropped += this.text.length - this.keep;
    this.text = this.text.slice(-this.keep);
  }
}
