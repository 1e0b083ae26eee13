/**
 * How CUDA parses CUDA_VISIBLE_DEVICES, per ../shared/spec/ground-truth.md ("How CUDA parses
 * CUDA_VISIBLE_DEVICES", measured with 2 GPUs present) and the CUDA C Programming Guide.
 */

/** One comma-separated entry of the value. */
export interface VisibleEntry {
  /** The entry as written, trimmed (spaces are tolerated by CUDA). */
  text: string;
  kind: "index" | "uuid" | "negative" | "malformed";
  /** The device ordinal for `index` entries. */
  index?: number;
  /**
   * Text after the leading digits of an `index` entry (`"0  # comment"` → `"# comment"`): CUDA reads
   * the leading integer and ignores the rest. Measured on an H200 with torch 2.11 (verify/
   * GPU003-trailing-text, docs/ground-truth.md): "0  # comment", "0x" and "0 1" → 1 device;
   * "0x,0" → 0 devices (read as 0,0, a duplicate), so parsing goes on after such an entry.
   */
  trailing?: string;
  /** Offset of the entry inside the value string (UTF-16 units), for precise ranges. */
  offset: number;
}

/** The parse of a CUDA_VISIBLE_DEVICES value. */
export interface VisibleDevices {
  entries: VisibleEntry[];
  /** Entries CUDA keeps: everything before the first negative or malformed entry. */
  kept: VisibleEntry[];
  /** The entry at which CUDA stops parsing (negative or malformed), if any. */
  stop: VisibleEntry | null;
  /** The first repeated entry among the kept ones: a duplicate hides every GPU (0 devices). */
  duplicate: VisibleEntry | null;
  /** No GPU is visible: `""`, `"-1"`, a duplicate, or a first entry that stops parsing. */
  hidesAll: boolean;
  /** Number of visible devices when every kept index exists on the machine. */
  count: number;
}

const UUID_PREFIX = /^(GPU|MIG)-[0-9a-fA-F-]*$/;

/** Parses a value. Never throws. */
export function parseVisibleDevices(value: string): VisibleDevices {
  const entries: VisibleEntry[] = [];
  let offset = 0;
  for (const raw of value.split(",")) {
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    let e: VisibleEntry;
    const digits = /^\d+/.exec(text)?.[0];
    if (digits !== undefined && digits.length === text.length)
      e = { text, kind: "index", index: Number(text), offset: offset + lead };
    else if (digits !== undefined)
      e = {
        text,
        kind: "index",
        index: Number(digits),
        trailing: text.slice(digits.length).trim(),
        offset: offset + lead,
      };
    else if (/^-\d+$/.test(text)) e = { text, kind: "negative", offset: offset + lead };
    else if (UUID_PREFIX.test(text) && text.length > 4) e = { text, kind: "uuid", offset: offset + lead };
    else e = { text, kind: "malformed", offset: offset + lead };
    entries.push(e);
    offset += raw.length + 1;
  }
  const stopAt = entries.findIndex((e) => e.kind === "negative" || e.kind === "malformed");
  const kept = stopAt < 0 ? entries : entries.slice(0, stopAt);
  const stop = stopAt < 0 ? null : entries[stopAt];
  let duplicate: VisibleEntry | null = null;
  const seen = new Set<string>();
  for (const e of kept) {
    const key = e.kind === "index" ? `#${e.index}` : e.text.toUpperCase();
    if (seen.has(key)) {
      duplicate = e;
      break;
    }
    seen.add(key);
  }
  const hidesAll = kept.length === 0 || duplicate !== null;
  return { entries, kept, stop, duplicate, hidesAll, count: hidesAll ? 0 : kept.length };
}
