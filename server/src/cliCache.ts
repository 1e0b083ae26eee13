/**
 * The CLI's result cache (`gpu-pilot check`; `--no-cache` turns it off): what checking a file gave,
 * kept between runs and reused while the file, its options and GPU Pilot itself are unchanged, as
 * Ruff's `.ruff_cache` does for `ruff check`. A pre-commit hook or an editor-save run over a large
 * tree then lints only the files that changed.
 *
 * Where: `$GPU_PILOT_CACHE_DIR`, else `$XDG_CACHE_HOME/gpu-pilot`, else `~/.cache/gpu-pilot`
 * (Windows: `%LOCALAPPDATA%\gpu-pilot`); one JSON file per working folder, `v1/<sha1 of the
 * folder>.json`, so nothing is written into the project.
 *
 * When an entry is reused (a "hit"):
 * - the build is the same: a hash of the running bundle's bytes and path (docUrl is derived from
 *   it) and of the two tree-sitter wasm files beside it;
 * - the options are the same: a hash of the {@link LintOptions} the run resolved for the file,
 *   which carry everything the engine reads besides the file (pyproject `[tool.gpu-pilot]`, the
 *   torch pin, the job scripts that start the file, `--gpus`/`--inventory`, the size limit);
 * - the file is the same: size, mtime, ctime and inode as recorded, and both times older than the
 *   check that recorded them by more than {@link RACY_MS} (git's "racily clean" rule: an edit in the
 *   same clock tick as the check, keeping the size, would otherwise go unseen); otherwise the bytes
 *   are read and their SHA-1 compared.
 *
 * Never used with `--fix` (files are written) or for stdin. A missing cache is no message; an
 * unreadable or corrupt one is a note on stderr and an empty start; a failed write is a note, and
 * the run's output and exit code are unaffected in every case.
 *
 * The cache is input, not trusted (an entry with the right content hash and no
 * diagnostics made a CI gate pass; `[null]` crashed every format; a raw `code` reached
 * `--format github`'s workflow commands; a cache file that was /dev/zero took 1.85 GB):
 * - the cache folder, its `v1` folder and the cache file are used only when they are no symbolic
 *   links, belong to the current user and are not writable by group or others (folders are made
 *   0700); otherwise there is no cache for the run (a note), neither read nor written;
 * - the cache file is read through workspaceFile.ts (a regular file, at most {@link CACHE_MAX_BYTES},
 *   never waiting on a FIFO);
 * - every entry is checked against the shape the CLI writes (known rule codes and severities,
 *   positive positions, bounded strings); one that is not is a miss, and is checked again;
 * - every entry carries an HMAC-SHA-256 over the build, the file's path and the entry, keyed by 32
 *   random bytes in `v1/key` (0600, made on first use): an entry forged without the key (copied in,
 *   written by another tool or user) is a miss. What it cannot stop: someone who can read this
 *   user's files (they can read the key), or a cache folder restored whole, key included, from an
 *   untrusted source (a CI cache saved by a pull request's job): a CI gate on such a cache runs with
 *   `--no-cache` or keeps the cache folder out of what untrusted jobs can save.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { cacheDirOf, unfit } from "../../common/src/fs/cacheDir";
import { readWorkspaceFile, SOURCE_MAX_BYTES } from "../../common/src/fs/workspaceFile";
import { RULES } from "./engine/rules/index";
import { FILE_TOO_LARGE_CODE } from "./engine/limits";
import { INDEX_WRITE } from "./engine/python/project";

/** What checking one file gave that is kept: Ruff-shaped diagnostics (cli.ts `JsonDiagnostic`), as JSON values. */
export interface CachedResult {
  diagnostics: unknown[];
  applied: number;
  parsed: boolean;
}

/** A file's identity as `stat` gives it: sizes in bytes, times in ns since the epoch (decimal strings). */
export interface FileStamp {
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
}

interface Entry extends FileStamp {
  /** SHA-1 (hex) of the options JSON ({@link optionsKey}). */
  options: string;
  /** SHA-1 (hex) of the file's bytes. */
  content: string;
  /** When the stamp was taken (ms since the epoch, this machine's clock, taken before the stat). */
  checkedAtMs: number;
  result: CachedResult;
  /**
   * The other files the result depends on (the project modules the file imports: python/project.ts),
   * each with the SHA-1 (hex) of its bytes when it was checked; absent: none. A changed or missing one is a miss.
   */
  deps?: Record<string, string>;
  /** HMAC-SHA-256 (hex) of the build, the path and the fields above, keyed by `v1/key` ({@link macOf}). */
  mac: string;
}

/**
 * What the scan for startup-variable writers found in one project module (python/project.ts
 * `writersIn`): each module-level function that writes a startup variable first, as
 * `[name, variable, 1-based line]`.
 */
export type ModuleWriters = Array<[string, string, number]>;

/** A project module's {@link ModuleWriters}, kept while the module's stamp and the options are the same. */
interface WriterEntry extends FileStamp {
  options: string;
  checkedAtMs: number;
  writers: ModuleWriters;
  /** HMAC-SHA-256 (hex), as {@link Entry.mac}, over `writers:`, the build, the path and the fields above. */
  mac: string;
}

interface CacheFile {
  version: 1;
  build: string;
  entries: Record<string, Entry>;
  /** By module path: the writers' scan of the project's modules (absent in files of earlier builds). */
  writers?: Record<string, WriterEntry>;
}

/** What the cache file holds: results by checked file, writers' scans by module. */
interface Kept {
  entries: Map<string, Entry>;
  writers: Map<string, WriterEntry>;
}

/** A stamp whose mtime or ctime is this close to (or after) its check is not trusted alone (ms). */
export const RACY_MS = 2000;
/** The largest cache file read: 64 MiB (50,000 entries of a few findings each fit in a few MiB). */
export const CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** The most entries one cache file keeps; the least recently checked go first. */
const MAX_ENTRIES = 50_000;

/** SHA-1 (hex) of bytes or text. */
export const sha1 = (data: string | Uint8Array): string => createHash("sha1").update(data).digest("hex");

/** The key of a file's options: SHA-1 of their JSON (the resolver builds them in a fixed key order). */
export const optionsKey = (options: unknown): string => sha1(JSON.stringify(options));

/** The folder the cache lives in (see the module comment), from the environment given (common/src/fs/cacheDir.ts). */
export { cacheDirOf };

/**
 * The identity of the running GPU Pilot: SHA-1 over `bundle`'s path and bytes and those of the
 * tree-sitter wasm files beside it (those it loads: python/parser.ts `locate`). Null when `bundle`
 * is not a .js bundle (a run from TypeScript sources, whose rules live in other files) or cannot
 * be read: then there is no cache.
 */
export function buildIdOf(bundle: string): string | null {
  if (!bundle.endsWith(".js")) return null;
  const h = createHash("sha1").update(bundle).update("\0");
  try {
    h.update(readFileSync(bundle));
    for (const wasm of ["tree-sitter.wasm", "tree-sitter-python.wasm"]) {
      h.update("\0");
      try {
        h.update(readFileSync(join(dirname(bundle), wasm)));
      } catch {
        h.update("absent");
      }
    }
  } catch {
    return null;
  }
  return h.digest("hex");
}

/** The stamp of `path` (through links), or null when it cannot be stat'ed. */
export function stampOf(path: string): FileStamp | null {
  try {
    const s = statSync(path, { bigint: true });
    return { size: String(s.size), mtimeNs: String(s.mtimeNs), ctimeNs: String(s.ctimeNs), ino: String(s.ino) };
  } catch {
    return null;
  }
}

/**
 * SHA-1 of the file's bytes, or null when it cannot be read or is no longer a regular file (then
 * the check reports why). Read as the check reads it (workspaceFile.ts: never blocks on a FIFO).
 */
function contentHashOf(path: string): string | null {
  const read = readWorkspaceFile(path, { maxBytes: SOURCE_MAX_BYTES });
  return read.ok ? sha1(read.bytes) : null;
}

const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;

/** Whether `e`'s stamp was taken long enough after its file's last change to be trusted alone. */
function settled(e: FileStamp & { checkedAtMs: number }): boolean {
  const latestMs = Number((BigInt(e.mtimeNs) > BigInt(e.ctimeNs) ? BigInt(e.mtimeNs) : BigInt(e.ctimeNs)) / 1_000_000n);
  return latestMs < e.checkedAtMs - RACY_MS;
}

const KNOWN_CODES: ReadonlySet<string> = new Set([FILE_TOO_LARGE_CODE, ...RULES.map((r) => r.meta.code)]);
const SEVERITIES: ReadonlySet<string> = new Set(["error", "warning", "information", "hint"]);
/** No C0 or C1 control character but tab, CR and LF (messages span lines; positions and names do not). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const PRINTABLE = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$/;
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const isRowCol = (x: unknown) =>
  isObject(x) &&
  Number.isSafeInteger(x.row) &&
  (x.row as number) >= 1 &&
  Number.isSafeInteger(x.column) &&
  (x.column as number) >= 1;
const isText = (x: unknown, max: number, lines = true) =>
  typeof x === "string" && x.length <= max && PRINTABLE.test(x) && (lines || !/[\r\n]/.test(x));

/**
 * Whether `d` has the shape of a diagnostic the CLI writes (cli.ts `JsonDiagnostic`): a known rule
 * code, a known severity, 1-based positions, bounded strings without control characters, the
 * documentation URL of its code's shape (or null: package.json names no repository or homepage), and a fix that is null or well-formed. Anything else in a
 * cache entry is a poisoned entry.
 */
export function isCachedDiagnostic(d: unknown): boolean {
  if (!isObject(d)) return false;
  if (
    typeof d.code !== "string" ||
    !KNOWN_CODES.has(d.code) ||
    typeof d.severity !== "string" ||
    !SEVERITIES.has(d.severity)
  )
    return false;
  if (!(d.cell === null || (Number.isSafeInteger(d.cell) && (d.cell as number) >= 1))) return false;
  if (!isRowCol(d.location) || !isRowCol(d.end_location) || !Number.isSafeInteger(d.noqa_row)) return false;
  if (!isText(d.filename, 4096, false) || !isText(d.message, 16_384) || !(d.url === null || isText(d.url, 2048, false)))
    return false;
  if (d.fix === null) return true;
  const f = d.fix;
  return (
    isObject(f) &&
    (f.applicability === "safe" || f.applicability === "unsafe") &&
    isText(f.message, 4096, false) &&
    Array.isArray(f.edits) &&
    f.edits.every(
      (e) =>
        isObject(e) &&
        typeof e.content === "string" &&
        e.content.length <= 1 << 20 &&
        isRowCol(e.location) &&
        isRowCol(e.end_location),
    )
  );
}

/**
 * Whether `x` has the fields every signed record of the cache file has: `keys` (the stamp's and the
 * hashes') as decimal numbers or SHA-1 hex, a 64-hex `mac` and a finite `checkedAtMs`.
 */
const hasSignedFields = (x: Record<string, unknown>, keys: readonly string[]): boolean =>
  keys.every((k) => typeof x[k] === "string" && /^\d{1,30}$|^[0-9a-f]{40}$/.test(x[k] as string)) &&
  typeof x.mac === "string" &&
  /^[0-9a-f]{64}$/.test(x.mac) &&
  typeof x.checkedAtMs === "number" &&
  Number.isFinite(x.checkedAtMs);

const isEntry = (e: unknown): e is Entry => {
  if (!isObject(e)) return false;
  const x = e;
  const r = x.result;
  return (
    hasSignedFields(x, ["size", "mtimeNs", "ctimeNs", "ino", "options", "content"]) &&
    isObject(r) &&
    Array.isArray(r.diagnostics) &&
    r.diagnostics.every(isCachedDiagnostic) &&
    Number.isSafeInteger(r.applied) &&
    (r.applied as number) >= 0 &&
    typeof r.parsed === "boolean" &&
    (x.deps === undefined || isDeps(x.deps))
  );
};

/** A function or variable name as the writers' scan keeps it: a Python identifier of at most 200 characters. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,199}$/;

const isWriterEntry = (e: unknown): e is WriterEntry => {
  if (!isObject(e)) return false;
  const x = e;
  return (
    hasSignedFields(x, ["size", "mtimeNs", "ctimeNs", "ino", "options"]) &&
    Array.isArray(x.writers) &&
    x.writers.length <= 10_000 &&
    x.writers.every(
      (w) =>
        Array.isArray(w) &&
        w.length === 3 &&
        typeof w[0] === "string" &&
        IDENTIFIER.test(w[0]) &&
        typeof w[1] === "string" &&
        // A startup variable's name, or the marker of a function that writes a device string's index (GPU005).
        (IDENTIFIER.test(w[1]) || w[1] === INDEX_WRITE) &&
        Number.isSafeInteger(w[2]) &&
        (w[2] as number) >= 1,
    )
  );
};

/** The HMAC (hex) of a writers' entry: over `writers:`, the build, the path and its fields but `mac`. */
function writerMacOf(key: Buffer, build: string, path: string, e: Omit<WriterEntry, "mac">): string {
  const fields = ["writers:", build, path, e.size, e.mtimeNs, e.ctimeNs, e.ino, e.options, e.checkedAtMs, e.writers];
  return createHmac("sha256", key).update(JSON.stringify(fields)).digest("hex");
}

/** A dependency that could not be read when the result was kept (no SHA-1 of any bytes is all zeros in practice). */
const ABSENT = "0".repeat(40);

/** At most this many dependencies per entry (a module importing thousands of project modules is not cached). */
export const MAX_DEPS = 4096;
/** Whether `d` is an entry's `deps`: at most MAX_DEPS absolute paths (at most 4096 characters) each with a SHA-1. */
const isDeps = (d: unknown): boolean =>
  isObject(d) &&
  Object.keys(d).length <= MAX_DEPS &&
  Object.entries(d).every(
    ([k, v]) => k.length <= 4096 && isAbsolute(k) && typeof v === "string" && /^[0-9a-f]{40}$/.test(v),
  );

/** The HMAC (hex) of an entry: over the build, the path and the entry's fields but `mac`, in a fixed order. */
function macOf(key: Buffer, build: string, path: string, e: Omit<Entry, "mac">): string {
  const fields = [
    build,
    path,
    e.size,
    e.mtimeNs,
    e.ctimeNs,
    e.ino,
    e.options,
    e.content,
    e.checkedAtMs,
    e.result.applied,
    e.result.parsed,
    JSON.stringify(e.result.diagnostics),
    JSON.stringify(e.deps ?? null),
  ];
  return createHmac("sha256", key).update(JSON.stringify(fields)).digest("hex");
}

/** How one file stands against the cache: its kept result, or a miss (the file is checked). */
export type Lookup = { hit: true; result: CachedResult } | { hit: false };

/**
 * One run's view of the cache file: {@link lookup} each file (before checking it), {@link record}
 * what a check gave, then {@link save}. Runs in one folder at the same time each write the whole
 * file atomically (a temporary file renamed over it), merged with what is there when they write.
 */
export class ResultCache {
  private entries = new Map<string, Entry>();
  private writerEntries = new Map<string, WriterEntry>();
  private writersUsed = new Set<string>();
  private used = new Set<string>();
  private forgotten = new Set<string>();
  private dirty = false;
  private readonly file: string;
  /** The HMAC key (v1/key), or null: no cache this run (the folder is unfit, or the key cannot be had). */
  private key: Buffer | null = null;

  /**
   * @param dir the cache folder ({@link cacheDirOf}).
   * @param cwd the working folder the run's paths and messages are relative to.
   * @param build the running build's identity ({@link buildIdOf}).
   * @param note where a problem with the cache file is reported (one line, ending in a newline).
   */
  constructor(
    private readonly dir: string,
    cwd: string,
    private readonly build: string,
    private readonly note: (s: string) => void,
  ) {
    this.file = join(dir, "v1", `${sha1(cwd)}.json`);
    const why = unfit(dir, "folder") ?? unfit(join(dir, "v1"), "folder") ?? unfit(this.file, "file");
    if (why) {
      note(`gpu-pilot: the result cache is not used: ${why}; every file is checked\n`);
      return;
    }
    this.key = this.readKey(false);
    const kept = this.key ? this.read(true) : null;
    if (kept) ({ entries: this.entries, writers: this.writerEntries } = kept);
    else this.dirty = true;
  }
  /**
   * The 32-byte key in `v1/key`, or null when there is none (`make`: then one is made, 0600, as the
   * cache is written) or it is unfit (a link, not ours, readable by others, not 32 bytes).
   */
  private readKey(make: boolean): Buffer | null {
    const path = join(this.dir, "v1", "key");
    if (unfit(path, "file")) return null;
    const read = readWorkspaceFile(path, { maxBytes: 64 });
    if (read.ok) {
      const mode = read.stats.mode & 0o077;
      return read.bytes.length === 32 && (typeof process.getuid !== "function" || mode === 0) ? read.bytes : null;
    }
    if (!make || read.code !== "ENOENT") return null;
    const key = randomBytes(32);
    try {
      const fd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        0o600,
      );
      try {
        writeSync(fd, key);
      } finally {
        closeSync(fd);
      }
      return key;
    } catch {
      return this.readKey(false); // another run made it meanwhile
    }
  }
  /**
   * The entries in the cache file now (those of this build, well-formed and signed with the key);
   * null when there is none to take (missing, unreadable, corrupt or of another build). `report`: say
   * why on `note` (not for a missing file or folder).
   */
  private read(report: boolean): Kept | null {
    const note = report ? this.note : () => {};
    const got =
      unfit(this.file, "file") === null
        ? readWorkspaceFile(this.file, { maxBytes: CACHE_MAX_BYTES })
        : { ok: false as const, reason: "not a regular file of this user's", code: "not-regular" };
    if (!got.ok) {
      if (!["ENOENT", "ENOTDIR"].includes(got.code))
        note(`gpu-pilot: cannot read the result cache ${this.file} (${got.reason}); every file is checked\n`);
      return null;
    }
    let data: Partial<CacheFile>;
    try {
      data = JSON.parse(got.bytes.toString("utf8")) as Partial<CacheFile>;
    } catch {
      note(`gpu-pilot: the result cache ${this.file} is not valid JSON; it is rebuilt\n`);
      return null;
    }
    if (!isObject(data) || data.version !== 1 || data.build !== this.build || !isObject(data.entries) || !this.key)
      return null;
    const out = new Map<string, Entry>();
    let poisoned = 0;
    for (const [path, e] of Object.entries(data.entries)) {
      if (isEntry(e) && macMatches(macOf(this.key, this.build, path, e), e.mac)) out.set(path, e);
      else poisoned++;
    }
    const writers = new Map<string, WriterEntry>();
    for (const [path, e] of Object.entries(isObject(data.writers) ? data.writers : {})) {
      if (isWriterEntry(e) && macMatches(writerMacOf(this.key, this.build, path, e), e.mac)) writers.set(path, e);
      else poisoned++;
    }
    if (poisoned)
      note(
        `gpu-pilot: ${poisoned} entr${poisoned === 1 ? "y" : "ies"} of the result cache ${this.file} ${poisoned === 1 ? "is" : "are"} malformed or not signed with its key; ${poisoned === 1 ? "that file is" : "those files are"} checked\n`,
      );
    return { entries: out, writers };
  }
  /** Whether `path` has an entry at all (only then are its options worth resolving for {@link lookup}). */
  has(path: string): boolean {
    return this.entries.has(path);
  }

  /**
   * The kept result of `path` when it is unchanged (see the module comment) and was checked with
   * options of key `options`; a file whose stamp changed but whose bytes did not is a hit too, and
   * its entry takes the new stamp.
   * @param stamp the file's stamp taken now, before it is read ({@link stampOf}); null: a miss.
   * @param nowMs the time taken before `stamp`.
   */
  lookup(path: string, stamp: FileStamp | null, options: string, nowMs: number): Lookup {
    const e = this.entries.get(path);
    if (!e || !stamp || e.options !== options) return { hit: false };
    if (e.deps && Object.entries(e.deps).some(([dep, hash]) => this.hashOf(dep) !== hash)) return { hit: false };
    if (sameStamp(e, stamp) && settled(e)) {
      this.used.add(path);
      return { hit: true, result: e.result };
    }
    if (contentHashOf(path) !== e.content) return { hit: false };
    this.entries.set(path, this.signed(path, { ...e, ...stamp, checkedAtMs: nowMs }));
    this.used.add(path);
    this.dirty = true;
    return { hit: true, result: e.result };
  }

  /**
   * The SHA-1 of a dependency's bytes now (read once per run), or {@link ABSENT} when it cannot be
   * read (missing, refused by the safe reader): a result that depended on a file being absent
   * stays valid while it is, and is checked again once it appears.
   */
  hashOf(path: string): string {
    if (!this.depHashes.has(path)) this.depHashes.set(path, contentHashOf(path) ?? ABSENT);
    return this.depHashes.get(path)!;
  }
  private readonly depHashes = new Map<string, string>();

  /**
   * Keeps what checking `path` gave: `stamp` and `nowMs` as taken before it was read, the hashes of
   * what was checked; `deps`: the other files the result depends on (hashed now; one that cannot be
   * read is kept as {@link ABSENT}; more than MAX_DEPS, and the result is not kept).
   */
  record(
    path: string,
    stamp: FileStamp | null,
    nowMs: number,
    options: string,
    content: string,
    result: CachedResult,
    deps: readonly string[] = [],
  ): void {
    if (!stamp || deps.length > MAX_DEPS) return;
    const hashes: Record<string, string> = {};
    for (const d of deps) hashes[d] = this.hashOf(d);
    this.entries.set(
      path,
      this.signed(path, {
        ...stamp,
        options,
        content,
        checkedAtMs: nowMs,
        result,
        ...(deps.length ? { deps: hashes } : {}),
      }),
    );
    this.used.add(path);
    this.dirty = true;
  }

  /**
   * The writers' scan of the project module at `path` kept from an earlier run, when the module's
   * stamp is the same as recorded and settled ({@link RACY_MS}, as {@link lookup}) and the scan's
   * options had the key `options`; null otherwise (the module is read and scanned).
   * @param stamp the module's stamp taken now ({@link stampOf}); null: a miss.
   */
  writersOf(path: string, options: string, stamp: FileStamp | null): ModuleWriters | null {
    const e = this.writerEntries.get(path);
    if (!e || !stamp || e.options !== options || !sameStamp(e, stamp) || !settled(e)) return null;
    this.writersUsed.add(path);
    return e.writers;
  }

  /** Keeps the writers' scan of the module at `path`: `stamp` and `nowMs` as taken before it was read. */
  recordWriters(path: string, options: string, stamp: FileStamp | null, nowMs: number, writers: ModuleWriters): void {
    if (!stamp) return;
    const fields = { ...stamp, options, checkedAtMs: nowMs, writers };
    this.writerEntries.set(path, { ...fields, mac: this.key ? writerMacOf(this.key, this.build, path, fields) : "" });
    this.writersUsed.add(path);
    this.dirty = true;
  }

  /** `e` with its HMAC (an empty one while there is no key yet: {@link save} signs again). */
  private signed(path: string, e: Omit<Entry, "mac"> & { mac?: string }): Entry {
    const { mac: _old, ...fields } = e;
    return { ...fields, mac: this.key ? macOf(this.key, this.build, path, fields) : "" };
  }
  /** Drops the entries of files under `folders` (walked in full this run) that were not found in them. */
  forgetMissingUnder(folders: readonly string[]): void {
    const prefixes = folders.map((f) => (f.endsWith(sep) ? f : f + sep));
    for (const path of this.entries.keys()) {
      if (!this.used.has(path) && prefixes.some((p) => path.startsWith(p))) {
        this.entries.delete(path);
        this.forgotten.add(path);
        this.dirty = true;
      }
    }
  }

  /** Writes the cache file when anything changed (atomically: a temporary file renamed over it); a failure is a note. */
  save(): void {
    if (!this.dirty) return;
    const why = unfit(this.dir, "folder") ?? unfit(dirname(this.file), "folder");
    if (why) return; // said when the run began (or the folder changed since: not written)
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    } catch (e) {
      this.cannotWrite(e);
      return;
    }
    const fresh = unfit(this.dir, "folder") ?? unfit(dirname(this.file), "folder");
    if (fresh) {
      this.note(`gpu-pilot: results are not cached: ${fresh}\n`);
      return;
    }
    if (!this.key) {
      this.key = this.readKey(true);
      if (!this.key) {
        this.note(
          `gpu-pilot: results are not cached: the key ${join(dirname(this.file), "key")} cannot be made or read\n`,
        );
        return;
      }
      for (const [path, e] of this.entries) this.entries.set(path, this.signed(path, e));
      for (const [path, { mac: _old, ...fields }] of this.writerEntries)
        this.writerEntries.set(path, { ...fields, mac: writerMacOf(this.key, this.build, path, fields) });
    }
    const unlock = lockFile(`${this.file}.lock`);
    try {
      this.write();
    } finally {
      unlock();
    }
  }

  /**
   * Runs at the same time in one folder (pre-commit starts several, each with some of the files):
   * under the lock, what another run wrote meanwhile is kept, and this run's own entries win.
   */
  private write(): void {
    const onDisk = this.read(false);
    const merged = onDisk?.entries ?? new Map<string, Entry>();
    for (const [path, e] of this.entries) if (this.used.has(path) || !merged.has(path)) merged.set(path, e);
    for (const path of this.forgotten) merged.delete(path);
    const writers = onDisk?.writers ?? new Map<string, WriterEntry>();
    for (const [path, e] of this.writerEntries)
      if (this.writersUsed.has(path) || !writers.has(path)) writers.set(path, e);
    const writerList = [...writers.entries()]
      .sort(
        (a, b) =>
          Number(this.writersUsed.has(b[0])) - Number(this.writersUsed.has(a[0])) ||
          b[1].checkedAtMs - a[1].checkedAtMs,
      )
      .slice(0, MAX_ENTRIES);
    let list = [...merged.entries()];
    // Over the cap: the entries this run used stay, then the most recently checked.
    if (list.length > MAX_ENTRIES)
      list = list
        .sort(
          (a, b) => Number(this.used.has(b[0])) - Number(this.used.has(a[0])) || b[1].checkedAtMs - a[1].checkedAtMs,
        )
        .slice(0, MAX_ENTRIES);
    const data: CacheFile = {
      version: 1,
      build: this.build,
      entries: Object.fromEntries(list),
      ...(writerList.length ? { writers: Object.fromEntries(writerList) } : {}),
    };
    const tmp = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(data), { mode: 0o600, flag: "wx" });
      renameSync(tmp, this.file);
    } catch (e) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        /* nothing was written */
      }
      this.cannotWrite(e);
    }
  }

  private cannotWrite(e: unknown): void {
    this.note(
      `gpu-pilot: results are not cached: cannot write ${this.file} (${(e as Error).message}); --no-cache turns the cache off\n`,
    );
  }
}

/** Compares two hex MACs in constant time. */
function macMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, "hex"),
    b = Buffer.from(given, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** How long a writer waits for another's lock (ms), and the age after which a lock is taken as left behind (ms). */
const LOCK_WAIT_MS = 2000;
const LOCK_STALE_MS = 10_000;

/**
 * Takes `lock` (a file created exclusively) for a read-merge-write of the cache file, waiting up to
 * {@link LOCK_WAIT_MS} for another run's; a lock older than {@link LOCK_STALE_MS} (a run that was
 * killed) is removed. Without the lock in time, or where it cannot be created, the write goes on
 * unlocked: at worst an entry of another run is lost, which costs a re-check, never a wrong result.
 * @returns what releases it.
 */
function lockFile(lock: string): () => void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; waited <= LOCK_WAIT_MS; waited += 10) {
    try {
      closeSync(openSync(lock, "wx"));
      return () => {
        try {
          rmSync(lock, { force: true });
        } catch {
          /* gone already */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return () => {};
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { force: true });
      } catch {
        /* released meanwhile */
      }
      Atomics.wait(pause, 0, 0, 10);
    }
  }
  return () => {};
}
