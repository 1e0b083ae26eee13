/**
 * Loading the client bundle with a V8 code cache of its own (dist/main.js, the extension's `main`,
 * runs this before anything else). A `require` of dist/client.js in a fresh extension host makes V8
 * compile the bundle's top level and pre-parse every function in it, used or not; with the compiled
 * code of an earlier start (V8 cached data, `vm.Script`'s `cachedData`) most of that is skipped
 * (BENCHMARKS.md, "Activation with a code cache"). Only this extension's bundle is cached: Node.js's
 * own `module.enableCompileCache()` would turn the cache on for every extension in the shared
 * extension host.
 *
 * The cache is a file per bundle build in the user's own cache folder ({@link codeCacheDir}), named
 * by the bundle's size and modification time, V8's version and the CPU architecture. The file holds
 * a header with the data's length and CRC-32 ({@link crc32}; Node.js's own compile cache checks its
 * entries the same way), so a torn or damaged file is never handed to V8, whose
 * deserializer trusts data that passes its own checks (its version, flags and the source's length;
 * what does not fit those is rejected and costs one normal compile). The folder and the file must
 * belong to this user and be writable
 * by nobody else (compiled code from a folder another user can write would run as this user), the
 * file is read through the safe reader (no link followed, no FIFO waited on), it is written through
 * a temporary file, flushed and renamed, and any refusal means a normal compile, never a failed
 * activation.
 * No `vscode` import: dist/main.js holds only this file and the two stateless common modules it
 * imports (the cache folder, the safe reader).
 */
import {
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { createRequire, Module } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import * as zlib from "node:zlib";
import { cacheDirOf, notPrivate, unfit } from "../../../common/src/fs/cacheDir";
import { readWorkspaceFile } from "../../../common/src/fs/workspaceFile";

/** Largest cache file read, bytes (the client bundle's data is about 0.2-0.6 MiB). */
export const CODE_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/** A cache file's first bytes: this magic, then the data's length and CRC-32 (uint32 little-endian each). */
const MAGIC = Buffer.from("GPC3");
const HEADER_BYTES = 12;
/**
 * zlib.crc32 (Node.js 20.15 and 22.2 on, so VS Code from about 1.96; none before, and then no
 * cache). VS Code's extension host has node:zlib loaded already (its extensionHostProcess.js
 * imports it), so the CRC of the client's 0.5 MB costs about 0.3 ms there; a bare Node.js process
 * pays about 5 ms more for the require (bench/client-load.mjs loads it first, as the host has it).
 */
const crc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/**
 * What happened to the code cache on a load: `used` (V8 took it), `rejected` (V8 refused it: another
 * V8 or flags; compiled normally, written again), `absent` (none yet, or refused before V8 saw it:
 * `refused` says why), `off` (no cache folder).
 */
export type CodeCacheState = "used" | "rejected" | "absent" | "off";

/** The outcome of {@link loadWithCodeCache}. */
export interface LoadedBundle {
  /** The bundle's `module.exports`. */
  exports: unknown;
  state: CodeCacheState;
  /** Why a cache file that exists was not given to V8 (a phrase), else undefined. */
  refused?: string;
  /** The cache file's path (null when the cache is off). */
  cacheFile: string | null;
  /**
   * Takes the compiled code now (the functions compiled so far), when the state is not `used`, to be
   * written later (at `writeAfterMs`, or by {@link writeNow}): what a cache holds is what a start
   * deserializes before the bundle's top level runs, so the loader of the client bundle takes it
   * right after `activate()` (the functions activation runs) and writes it later, off that path.
   * Later calls change nothing. Never throws.
   */
  capture(): void;
  /**
   * Writes the compiled code now (what {@link capture} took, else the functions compiled so far),
   * when the state is not `used`: true when a file was written. Never throws.
   * {@link loadWithCodeCache} calls it itself after `writeAfterMs`.
   */
  writeNow(): boolean;
}

/**
 * The code cache's folder for the environment `env`: `code-cache` in GPU Pilot's cache folder
 * (common/src/fs/cacheDir.ts: `GPU_PILOT_CACHE_DIR`, `%LOCALAPPDATA%\\gpu-pilot`,
 * `$XDG_CACHE_HOME/gpu-pilot` or `~/.cache/gpu-pilot`); null when GPU_PILOT_CODE_CACHE=0 or there
 * is no home folder.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | null {
  if (env.GPU_PILOT_CODE_CACHE === "0") return null;
  try {
    return join(cacheDirOf(env, platform), "code-cache");
  } catch {
    return null;
  }
}

/**
 * The cache file's data, null when there is none, or why it is not used: read through the safe
 * reader (no link followed, no FIFO waited on, at most {@link CODE_CACHE_MAX_BYTES}), this user's
 * and writable by nobody else, its header's length and CRC-32 matching the data.
 */
function readCache(file: string): { bytes: Buffer } | { reason: string } | null {
  const r = readWorkspaceFile(file, { maxBytes: CODE_CACHE_MAX_BYTES, noFollow: true });
  if (!r.ok) return r.code === "ENOENT" ? null : { reason: r.reason };
  const bad = notPrivate(r.stats, "it");
  if (bad) return { reason: bad };
  const data = r.bytes.subarray(HEADER_BYTES);
  const whole =
    r.bytes.length >= HEADER_BYTES &&
    r.bytes.subarray(0, 4).equals(MAGIC) &&
    r.bytes.readUInt32LE(4) === data.length &&
    r.bytes.readUInt32LE(8) === crc32!(data);
  return whole
    ? { bytes: data }
    : { reason: "its header, length or CRC-32 does not match its data (a torn or damaged file)" };
}

/** Makes the cache folder (0700) and checks it (cacheDir.ts {@link unfit}); returns why it may not hold the cache, or null. */
function privateDir(dir: string): string | null {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    return `the cache folder cannot be made (${(e as NodeJS.ErrnoException).code ?? "EIO"})`;
  }
  return unfit(dir, "folder");
}

/**
 * Writes `data` with its header to `file` through a temporary file, flushed and renamed; then removes
 * the files of other builds of the bundle for the same V8 and architecture (`stale`), keeping those
 * of other V8 versions (another VS Code, such as Insiders, shares the folder).
 */
function writeCache(dir: string, file: string, stale: (name: string) => boolean, data: Buffer): boolean {
  if (privateDir(dir)) return false;
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(data.length, 4);
  header.writeUInt32LE(crc32!(data), 8);
  const bytes = Buffer.concat([header, data]);
  const random = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(4))).toString("hex");
  const tmp = join(dir, `.${basename(file)}.${process.pid}-${random}.tmp`);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(tmp, file);
  } catch {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* never made */
    }
    return false;
  }
  try {
    for (const name of readdirSync(dir)) if (name !== basename(file) && stale(name)) unlinkSync(join(dir, name));
  } catch {
    /* another window removed it first */
  }
  return true;
}

/**
 * Loads the CommonJS file `file` (absolute) as `require` would (its own `require`, `module`,
 * `exports`, `__filename`, `__dirname`; the extension host's `require("vscode")` goes through
 * Node.js's module loader as usual), compiled with the code cache kept in `dir`. What its top level
 * throws is thrown. A cache that cannot be used is compiled past (see {@link CodeCacheState}); when
 * the cache was not used its file is written `writeAfterMs` later (an unref'd timer, so that the
 * functions activation compiles are in it), or by {@link LoadedBundle.writeNow}.
 * @param dir the cache folder ({@link codeCacheDir}), or null for no cache (none either without zlib.crc32).
 */
export function loadWithCodeCache(
  file: string,
  dir: string | null,
  { writeAfterMs = 10_000 }: { writeAfterMs?: number } = {},
): LoadedBundle {
  const source = readFileSync(file, "utf8");
  let cacheFile: string | null = null;
  let stale = (_name: string): boolean => false;
  let cached: Buffer | undefined;
  let refused: string | undefined;
  if (dir && crc32) {
    const st = statSync(file);
    const prefix = `${basename(file)}-`;
    const runtime = `-v8-${process.versions.v8}-${process.arch}.cache`.replace(/[^A-Za-z0-9.-]/g, "_");
    cacheFile = join(dir, `${prefix}${st.size}-${Math.trunc(st.mtimeMs)}${runtime}`);
    stale = (name) => name.startsWith(prefix) && name.endsWith(runtime);
    const dirProblem = unfit(dir, "folder");
    const read = dirProblem ? { reason: dirProblem } : readCache(cacheFile);
    if (read && "bytes" in read) cached = read.bytes;
    else if (read) refused = read.reason;
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData: cached });
  const state: CodeCacheState = !cacheFile
    ? "off"
    : !cached
      ? "absent"
      : script.cachedDataRejected
        ? "rejected"
        : "used";
  let written = false;
  let captured: Buffer | undefined;
  const capture = (): void => {
    if (!cacheFile || state === "used" || captured) return;
    try {
      captured = script.createCachedData();
    } catch {
      captured = undefined;
    }
  };
  const writeNow = (): boolean => {
    if (!cacheFile || state === "used" || written) return false;
    try {
      written = writeCache(dir!, cacheFile, stale, captured ?? script.createCachedData());
    } catch {
      written = false;
    }
    return written;
  };
  if (cacheFile && state !== "used" && writeAfterMs >= 0) setTimeout(writeNow, writeAfterMs).unref();
  const mod = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
  return { exports: mod.exports, state, refused, cacheFile, capture, writeNow };
}
