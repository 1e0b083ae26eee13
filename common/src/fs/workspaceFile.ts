/**
 * Reading a file from the workspace safely: the workspace is untrusted input, in
 * Restricted Mode too. A `requirements.txt` that is a symlink to `/dev/zero` (git commits symlinks)
 * or a FIFO must neither exhaust memory nor block the language server or the CLI. So: only regular
 * files (after following symlinks), at most `maxBytes`, opened with O_NONBLOCK so that opening a
 * FIFO never waits for a writer, and a reason in words when a file is refused.
 * Node's fs only; no `vscode`.
 */
import {
  accessSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/** Cap for dependency and configuration files (pyproject.toml, requirements*.txt, environment.yml): 4 MiB. */
export const CONFIG_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Cap for a source the CLI reads whole (.py, .ipynb, manifests): 256 MiB. Over it the text would
 * not fit in one JavaScript string safely; the lint size limit (`maxFileSizeKB`) is much lower.
 */
export const SOURCE_MAX_BYTES = 256 * 1024 * 1024;

/** Why a file was not read: `not-regular`, `too-large`, or the errno code (ENOENT, EACCES, ...). */
export type RefusalCode = "not-regular" | "too-large" | string;

/** The outcome of {@link readWorkspaceFile}. `reason` is a phrase for messages ("not a regular file (a FIFO)"). */
export type WorkspaceRead =
  { ok: true; bytes: Buffer; stats: Stats } | { ok: false; reason: string; code: RefusalCode; size?: number };

/** What kind of file `st` describes, in words ("a FIFO", "a character device", ...). */
export function fileKind(st: Stats): string {
  if (st.isFile()) return "a regular file";
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  if (st.isSymbolicLink()) return "a symbolic link";
  return "a special file";
}

const plural = (n: number, unit: string) => `${n.toLocaleString("en-US")} ${unit}${n === 1 ? "" : "s"}`;

/**
 * Reads a whole regular file, following symlinks, refusing anything else. Never throws and never
 * blocks on a FIFO or device: the type is checked with stat before opening, the file is opened
 * with O_NONBLOCK | O_NOCTTY, and checked again with fstat on the open descriptor (the path may be
 * swapped in between). At most `maxBytes + 1` bytes are read, so a file that grows while being
 * read is refused too.
 * @param maxBytes the size limit in bytes.
 * @param noFollow refuse a symbolic link instead of following it (lstat, then O_NOFOLLOW: a link
 *   swapped in between fails with ELOOP). For files in shared folders such as the claims ledger.
 * @returns the bytes and the stat of the open file, or why not (`code` is `not-regular`,
 *   `too-large` with `size`, or the errno code such as ENOENT / EACCES / ELOOP).
 */
export function readWorkspaceFile(
  path: string,
  { maxBytes, noFollow = false }: { maxBytes: number; noFollow?: boolean },
): WorkspaceRead {
  const refuse = (st: Stats): WorkspaceRead | null => {
    if (!st.isFile()) return { ok: false, reason: `not a regular file (${fileKind(st)})`, code: "not-regular" };
    if (st.size > maxBytes) return tooLarge(st.size);
    return null;
  };
  const tooLarge = (size: number): WorkspaceRead => ({
    ok: false,
    reason: `it is ${plural(size, "byte")}, over the ${maxBytes.toLocaleString("en-US")}-byte limit`,
    code: "too-large",
    size,
  });
  const failed = (e: unknown): WorkspaceRead => {
    const code = (e as NodeJS.ErrnoException).code ?? "EIO";
    return { ok: false, reason: code === "ENOENT" ? "no such file" : code, code };
  };
  let before: Stats;
  try {
    before = noFollow ? lstatSync(path) : statSync(path);
  } catch (e) {
    return failed(e);
  }
  const early = refuse(before);
  if (early) return early;
  let fd: number;
  const flags =
    constants.O_RDONLY |
    (constants.O_NONBLOCK ?? 0) |
    (constants.O_NOCTTY ?? 0) |
    (noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
  try {
    fd = openSync(path, flags);
  } catch (e) {
    return failed(e);
  }
  try {
    const st = fstatSync(fd);
    const late = refuse(st);
    if (late) return late;
    let buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > maxBytes) return tooLarge(n); // it grew while being read
        const bigger = Buffer.allocUnsafe(Math.min(2 * n, maxBytes + 1));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return { ok: true, bytes: buf.subarray(0, n), stats: st };
  } catch (e) {
    return failed(e);
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link readWorkspaceFile} for UTF-8 text (configuration files): the text, or the reason it was
 * not read. A BOM is dropped; invalid UTF-8 becomes U+FFFD (the parsers report what follows).
 */
export function readWorkspaceText(
  path: string,
  maxBytes = CONFIG_MAX_BYTES,
): { text: string } | { reason: string; code: RefusalCode } {
  const r = readWorkspaceFile(path, { maxBytes });
  if (!r.ok) return { reason: r.reason, code: r.code };
  const text = r.bytes.toString("utf8");
  return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}

/**
 * Replaces the content of the regular file `path` with `bytes`, atomically: the
 * bytes go to a temp file in the same folder (same file system), which gets the file's mode and
 * owner, is flushed to disk and renamed over the file. A failed write (a full disk) leaves the
 * file as it was and removes the temp file. The file is left alone when it is read-only (no
 * write bit, or not writable by this user), when its owner cannot be kept, or when its content is
 * no longer `expected` (an edit saved since it was read; checked again just before the rename).
 * `path` must not be a symlink (resolve it first): the rename would replace the link itself.
 * @param expected the bytes the file had when it was read.
 * @param faults for tests: a stand-in for fs.writeSync, to inject a write error.
 * @returns ok, or why the file was not written (a phrase for "not fixed: ..."). Never throws.
 */
export function replaceFile(
  path: string,
  bytes: Buffer,
  expected: Buffer,
  faults: { write?: (fd: number, buf: Buffer, offset: number, length: number) => number } = {},
): { ok: true } | { ok: false; reason: string } {
  const unchanged = (): string | null => {
    const now = readWorkspaceFile(path, { maxBytes: Math.max(expected.length, 1) });
    if (!now.ok && now.code !== "too-large") return `it cannot be read again (${now.reason})`;
    return now.ok && now.bytes.equals(expected) ? null : "it changed since it was read (an edit was saved meanwhile)";
  };
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    return { ok: false, reason: `it cannot be read again (${(e as NodeJS.ErrnoException).code ?? "EIO"})` };
  }
  if (!st.isFile()) return { ok: false, reason: `it is no longer a regular file (${fileKind(st)})` };
  let writable = (st.mode & 0o222) !== 0;
  try {
    accessSync(path, constants.W_OK);
  } catch {
    writable = false;
  }
  if (!writable) return { ok: false, reason: "it is read-only" };
  const changed = unchanged();
  if (changed) return { ok: false, reason: changed };
  // Web Crypto (a global since Node.js 20): node:crypto is not required at the client's load (~12 ms in a fresh process).
  const random = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(4))).toString("hex");
  const tmp = join(dirname(path), `.${basename(path)}.gpu-pilot-${process.pid}-${random}.tmp`);
  const write =
    faults.write ?? ((fd: number, buf: Buffer, offset: number, length: number) => writeSync(fd, buf, offset, length));
  let fd: number | null = null;
  let step = "write it";
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    for (let at = 0; at < bytes.length;) at += write(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
    step = "keep its mode";
    fchmodSync(fd, st.mode & 0o7777);
    const mine = fstatSync(fd);
    if (mine.uid !== st.uid || mine.gid !== st.gid) {
      step = "keep its owner";
      fchownSync(fd, st.uid, st.gid);
    }
    closeSync(fd);
    fd = null;
    const late = unchanged();
    if (late) {
      unlinkSync(tmp);
      return { ok: false, reason: late };
    }
    step = "write it";
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        /* already failing */
      }
    }
    try {
      unlinkSync(tmp);
    } catch {
      /* never created */
    }
    return {
      ok: false,
      reason: `cannot ${step} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); it was left as it was`,
    };
  }
  try {
    const dfd = openSync(dirname(path), constants.O_RDONLY);
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    /* not every system syncs folders */
  }
  return { ok: true };
}
