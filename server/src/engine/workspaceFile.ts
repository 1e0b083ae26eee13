/**
 * Reading a file from the workspace safely (issue 18): the workspace is untrusted input, in
 * Restricted Mode too. A `requirements.txt` that is a symlink to `/dev/zero` (git commits symlinks)
 * or a FIFO must neither exhaust memory nor block the language server or the CLI. So: only regular
 * files (after following symlinks), at most `maxBytes`, opened with O_NONBLOCK so that opening a
 * FIFO never waits for a writer, and a reason in words when a file is refused.
 * Node's fs only; no `vscode`.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

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
  | { ok: true; bytes: Buffer; stats: Stats }
  | { ok: false; reason: string; code: RefusalCode; size?: number };

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
 * @returns the bytes and the stat of the open file, or why not (`code` is `not-regular`,
 *   `too-large` with `size`, or the errno code such as ENOENT / EACCES / ELOOP).
 */
export function readWorkspaceFile(path: string, { maxBytes }: { maxBytes: number }): WorkspaceRead {
  const refuse = (st: Stats): WorkspaceRead | null => {
    if (!st.isFile()) return { ok: false, reason: `not a regular file (${fileKind(st)})`, code: "not-regular" };
    if (st.size > maxBytes) return tooLarge(st.size);
    return null;
  };
  const tooLarge = (size: number): WorkspaceRead => ({ ok: false, reason: `it is ${plural(size, "byte")}, over the ${maxBytes.toLocaleString("en-US")}-byte limit`, code: "too-large", size });
  const failed = (e: unknown): WorkspaceRead => {
    const code = (e as NodeJS.ErrnoException).code ?? "EIO";
    return { ok: false, reason: code === "ENOENT" ? "no such file" : code, code };
  };
  let before: Stats;
  try { before = statSync(path); } catch (e) { return failed(e); }
  const early = refuse(before);
  if (early) return early;
  let fd: number;
  try { fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0)); } catch (e) { return failed(e); }
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
export function readWorkspaceText(path: string, maxBytes = CONFIG_MAX_BYTES): { text: string } | { reason: string; code: RefusalCode } {
  const r = readWorkspaceFile(path, { maxBytes });
  if (!r.ok) return { reason: r.reason, code: r.code };
  const text = r.bytes.toString("utf8");
  return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}
