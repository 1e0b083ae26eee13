// Preloaded into the language server by bench/lsp-latency.mjs's memory() (node --expose-gc
// --import bench/memory-probe.mjs dist/server.js): on SIGUSR2 it collects garbage and writes
// process.memoryUsage() (bytes) as JSON to the next numbered file in $GP_MEMORY_PROBE_DIR.
// Benchmark only: never loaded by the extension.
import { writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.GP_MEMORY_PROBE_DIR;
let n = 0;
if (dir) {
  process.on("SIGUSR2", () => {
    if (typeof global.gc === "function") { global.gc(); global.gc(); }
    const file = join(dir, `${n++}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(process.memoryUsage()));
    renameSync(`${file}.tmp`, file);
  });
}
