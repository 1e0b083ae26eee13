// Interleaved A/B of two bundles' start-up as whole processes: per round A then B then B then A (the
// order alternates, so a load trend hits both alike), each `node BUNDLE --stdio` (the language server,
// with the V8 flags the client gives it, common/src/lsp/nodeFlags.ts) sent an LSP initialize request
// at once; or, with --mcp, `node BUNDLE mcp --no-claims` sent an MCP initialize. Measured until the
// answer: wall ms from the spawn, and the process's CPU ms (all its threads, /proc/PID/task/*/schedstat:
// less disturbed by other load on a shared machine). Prints the medians and B/A.
// usage: node bench/server-start-ab.mjs --a BUNDLE --b BUNDLE [--rounds N] [--cold] [--mcp] [--label TEXT]
//   --a, --b   built bundles (e.g. a copy of main's dist/server.js, and dist/server.js; with --mcp
//              main's dist/cli.js against dist/server.js)
//   --cold     no compile cache (NODE_DISABLE_COMPILE_CACHE=1): a build's first start; by default
//              each bundle has a compile cache of its own, written by two untimed starts, as the
//              client's NODE_COMPILE_CACHE gives the language server after its first start
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const bundles = { a: opt("--a"), b: opt("--b") };
if (!bundles.a || !bundles.b) {
  console.error("usage: node bench/server-start-ab.mjs --a BUNDLE --b BUNDLE [--rounds N] [--cold] [--mcp]");
  process.exit(2);
}
const rounds = Number(opt("--rounds", "10"));
const cold = argv.includes("--cold");
const mcp = argv.includes("--mcp");
const scratch = mkdtempSync(join(tmpdir(), "gpu-pilot-server-start-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const LSP_INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { processId: process.pid, rootUri: null, capabilities: {}, workspaceFolders: null },
});
const MCP_INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
});

/** CPU ns of every thread of `pid` so far (Linux), or NaN. */
function cpuNs(pid) {
  try {
    const dir = `/proc/${pid}/task`;
    return readdirSync(dir).reduce(
      (t, tid) => t + Number(readFileSync(join(dir, tid, "schedstat"), "utf8").split(" ")[0]),
      0,
    );
  } catch {
    return NaN;
  }
}

/**
 * One start of `bundle`: wall and CPU ms until the initialize answer. Timed starts are then killed;
 * a warm-up start (`warmUp`) has its stdin closed and is waited for instead, so that Node.js writes
 * the compile cache, which it does when the process exits (a killed one writes none).
 */
function startOnce(bundle, key, warmUp = false) {
  const env = { ...process.env, MALLOC_ARENA_MAX: "2" };
  if (cold) env.NODE_DISABLE_COMPILE_CACHE = "1";
  else env.NODE_COMPILE_CACHE = join(scratch, key);
  const args = mcp ? [bundle, "mcp", "--no-claims"] : ["--max-semi-space-size=1", "--expose-gc", bundle, "--stdio"];
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.write(mcp ? MCP_INIT + "\n" : `Content-Length: ${Buffer.byteLength(LSP_INIT)}\r\n\r\n${LSP_INIT}`);
  return new Promise((done, fail) => {
    let out = "";
    child.on("exit", (code) => fail(new Error(`${bundle} exited (${code}) before answering: ${out.slice(0, 500)}`)));
    child.stdout.on("data", (d) => {
      out += d.toString();
      if (!out.includes('"id":1')) return;
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      const cpu = cpuNs(child.pid) / 1e6;
      child.removeAllListeners("exit");
      child.stdout.removeAllListeners("data");
      if (!warmUp) {
        child.kill("SIGKILL");
        done({ wall, cpu });
        return;
      }
      child.once("exit", () => done({ wall, cpu }));
      child.stdin.end();
    });
  });
}

const median = (xs) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
if (!cold) for (const k of ["a", "b"]) for (let i = 0; i < 2; i++) await startOnce(bundles[k], k, true);
const rows = { a: [], b: [] };
for (let i = 0; i < rounds; i++) {
  const load = loadavg()[0].toFixed(2);
  for (const k of i % 2 === 0 ? ["a", "b", "b", "a"] : ["b", "a", "a", "b"])
    rows[k].push(await startOnce(bundles[k], k));
  const last = (k) =>
    rows[k]
      .slice(-2)
      .map((r) => `${r.wall.toFixed(0)}/${r.cpu.toFixed(0)}`)
      .join(", ");
  console.log(`round ${i + 1} (load ${load}): a ${last("a")}; b ${last("b")} ms (wall/CPU)`);
}
const m = (k, f) => median(rows[k].map((r) => r[f]));
console.log(
  `${opt("--label", mcp ? "MCP initialize" : "LSP initialize")}${cold ? " (cold, no compile cache)" : " (compile cache warm)"}: ` +
    `wall a ${m("a", "wall").toFixed(1)} ms, b ${m("b", "wall").toFixed(1)} ms, b/a ${(m("b", "wall") / m("a", "wall")).toFixed(3)}; ` +
    `CPU a ${m("a", "cpu").toFixed(1)} ms, b ${m("b", "cpu").toFixed(1)} ms, b/a ${(m("b", "cpu") / m("a", "cpu")).toFixed(3)}; ${rows.a.length} starts each`,
);
