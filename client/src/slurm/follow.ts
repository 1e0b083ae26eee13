/**
 * Follows a growing file (a Slurm job's output) like `tail -F`: polls its size, reads what was
 * added since the last read and hands it on as text. Survives the file not existing yet (a pending
 * job has none) and its being replaced or cut (read again from the start). Polling, not fs.watch:
 * job output usually lies on a network file system, where change events from other hosts do not
 * arrive. No `vscode` import.
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
}

/** A running follow; {@link stop} ends it after one last read. */
export interface Follow {
  /** Reads what is new now (the poll does this by itself). Resolves when read. */
  poll(): Promise<void>;
  /** Reads what is new one last time, then stops. */
  stop(): Promise<void>;
  /** Bytes read so far. */
  readonly bytes: number;
}

/** Starts following `file` (absolute path). Never throws; unreadable states count as "not there yet". */
export function followFile(file: string, opts: FollowOptions): Follow {
  let offset = 0;
  let ino: number | null = null;
  let appeared = false;
  let stopped = false;
  let decoder = new StringDecoder("utf8");
  let busy: Promise<void> | undefined;

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
    busy ??= readNew().finally(() => { busy = undefined; });
    return busy;
  };
  const timer = setInterval(() => { if (!stopped) void poll(); }, opts.intervalMs ?? 500);
  void poll();
  return {
    poll,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await busy;
      // Everything written up to now (a last read may be larger than one chunk).
      for (let before = -1; before !== offset;) { before = offset; await readNew(); }
      const rest = decoder.end();
      if (rest) opts.onData(rest);
    },
    get bytes() {
      return offset;
    },
  };
}
