// Preloaded into the language server by bench/lsp-latency.mjs's memory() (node --expose-gc
// --import bench/memory-probe.mjs dist/server.js): on SIGUSR2 it collects garbage, notes the RSS
// (`rss_immediate`), waits SETTLE_MS, collects again and writes process.memoryUsage() (bytes) as
// JSON to the next numbered file in $GP_MEMORY_PROBE_DIR, with a breakdown of the RSS:
// - `spaces`: V8's heap spaces (v8.getHeapSpaceStatistics()), bytes committed in RAM
//   (`space_physical_size`) and used, by space name (new_space, old_space, code_space, ...);
// - `proc`: /proc/self/status's RssAnon, RssFile, RssShmem (bytes; Linux only, proc(5)): file-backed
//   pages are the node binary's and libraries' code, anonymous ones the V8 heap, the WebAssembly
//   memory and malloc;
// - `mappings`: /proc/self/smaps's Rss summed by kind (bytes): `binary` (the node executable),
//   `libs` (other files), `brk` ([heap], malloc's main arena), `stack`, `anon` (everything else:
//   V8's heap pages, WebAssembly memory, malloc's mmapped chunks and thread arenas); and, part of
//   `anon`, `v8_pages`: the anonymous mappings of exactly 256 KiB, V8's regular heap pages, in use
//   or kept pooled after a collection (since V8 12 freed pages stay pooled until a memory-reducing
//   collection: `node --trace-gc` prints "pooled: N MB"; server/src/heapTrim.ts).
// Benchmark only: never loaded by the extension.
import { writeFileSync, renameSync, readFileSync } from "node:fs";
import { join } from "node:path";
import v8 from "node:v8";

const dir = process.env.GP_MEMORY_PROBE_DIR;
let n = 0;

/** /proc/self/status's Rss* lines in bytes (empty off Linux). */
function procStatus() {
  try {
    const out = {};
    for (const m of readFileSync("/proc/self/status", "utf8").matchAll(/^(Rss\w+|VmHWM):\s+(\d+) kB/gm))
      out[m[1]] = Number(m[2]) * 1024;
    return out;
  } catch {
    return {};
  }
}

/** /proc/self/smaps's Rss by mapping kind, bytes (empty off Linux). */
function mappings() {
  try {
    const out = { binary: 0, libs: 0, brk: 0, stack: 0, anon: 0, v8_pages: 0 };
    let kind = "anon";
    let size = 0;
    for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (head) {
        const name = head[3];
        size = parseInt(head[2], 16) - parseInt(head[1], 16);
        kind =
          name === process.execPath || name.endsWith("/node")
            ? "binary"
            : name === "[heap]"
              ? "brk"
              : name.startsWith("[stack")
                ? "stack"
                : name.startsWith("/")
                  ? "libs"
                  : "anon";
        continue;
      }
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (rss) {
        out[kind] += Number(rss[1]) * 1024;
        if (kind === "anon" && size === V8_PAGE) out.v8_pages += Number(rss[1]) * 1024;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/** V8's regular heap page size on 64-bit hosts (bytes). */
const V8_PAGE = 256 * 1024;

/** Milliseconds the probe waits after the first collection before it reads the settled numbers. */
const SETTLE_MS = 1000;

if (dir) {
  process.on("SIGUSR2", () => {
    const gc = () => {
      if (typeof global.gc === "function") {
        global.gc();
        global.gc();
      }
    };
    gc();
    // Read at once after the collection, and again SETTLE_MS later, after a second one: V8 gives
    // freed heap pages back to the system (and its concurrent sweeper finishes) some time after a
    // collection, so the first RSS can still hold pages the process no longer uses (issue 20: the
    // same run read 155-201 MiB). Both are written: `rss_immediate` and the settled `rss`.
    const immediate = process.memoryUsage().rss;
    setTimeout(() => {
      gc();
      const spaces = Object.fromEntries(
        v8
          .getHeapSpaceStatistics()
          .map((s) => [s.space_name, { physical: s.physical_space_size, used: s.space_used_size }]),
      );
      const file = join(dir, `${n++}.json`);
      writeFileSync(
        `${file}.tmp`,
        JSON.stringify({
          ...process.memoryUsage(),
          rss_immediate: immediate,
          settle_ms: SETTLE_MS,
          spaces,
          proc: procStatus(),
          mappings: mappings(),
        }),
      );
      renameSync(`${file}.tmp`, file);
    }, SETTLE_MS);
  });
}
