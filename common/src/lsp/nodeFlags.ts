/**
 * The Node.js/V8 flags the language server process runs with: the client passes them as the
 * server's `execArgv` (client/src/ctx.ts, vscode-languageclient's NodeModule `options.execArgv`,
 * which becomes child_process.fork's `execArgv`), and bench/lsp-latency.mjs starts the server with
 * exactly these, so the benchmarks measure what users run. Imports nothing (the client bundles it).
 *
 * - `--max-semi-space-size=1`: V8's young generation ("new space") is two semi-spaces; this caps
 *   each at 1 MiB (`node --v8-options`: "max size of a semi-space (in MBytes), the new space
 *   consists of two semi-spaces"; Node.js docs, "--max-semi-space-size" under CLI options / V8
 *   options). By default V8 grows the semi-spaces up to 16 MiB each on 64-bit hosts, and the
 *   server's short-lived lint objects kept them grown: measured (bench/memory-probe.mjs),
 *   V8's heap total 70 MiB for 29 MiB used with 20 open 5,000-line documents, 34 MiB with the flag;
 *   RSS 198 MiB → 172 MiB after 200 edits. The cost is more frequent scavenges of a small young
 *   generation (BENCHMARKS.md "Memory" gives the measured per-edit latency ratio).
 * - `--expose-gc`: defines V8's `gc` function, which the server calls once after a burst of lints
 *   (server/src/heapTrim.ts) for a memory-reducing collection: since V8 12 (Node.js 22, 24) freed
 *   heap pages otherwise stay pooled in the process (316 instead of 140 MiB RSS with 20 open
 *   5,000-line documents, BENCHMARKS.md "Memory on Node.js 22 and 24"). Known to every Node.js.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1", "--expose-gc"];

/**
 * Environment variables the client adds to the language server's (vscode-languageclient merges
 * them over the extension host's environment: NodeModule `options.env`, its `getEnvironment`).
 *
 * - `MALLOC_ARENA_MAX=2`: glibc's malloc makes an arena per thread that allocates (up to 8 per
 *   core), and V8's and libuv's worker threads each kept one partly resident. Two arenas: ~11 MiB
 *   less RSS with 20 open 5,000-line documents after 1,000 edits and a pause (146.6 against
 *   158.2 MiB, back to back, Node.js 24) and no measured cost per edit (p50 ratio 0.96–1.07 over 4
 *   interleaved rounds of 200 edits). glibc's documented tunable (mallopt(3), "M_ARENA_MAX"); other
 *   C libraries ignore it. A value the user's environment already has is kept.
 *
 * - `NODE_COMPILE_CACHE=<dir>` (with `compileCacheDir`): Node.js keeps the compiled code of the
 *   server's bundle there between starts and checks each entry against the file's contents (Node.js
 *   docs, "Module compile cache": the variable since v22.1.0; older versions ignore it). Measured:
 *   loading dist/server.js cost 0.238 instead of 0.267 s of CPU (`farm-bench -n 10`, Node.js 24,
 *   BENCHMARKS.md). The folder is the extension's own global storage (the user's, not the shared
 *   temporary folder Node.js picks by default). Not set where the user's environment chose
 *   (`NODE_COMPILE_CACHE`) or turned it off (`NODE_DISABLE_COMPILE_CACHE`).
 *
 * @param parent the environment the extension host runs with (process.env).
 * @param compileCacheDir the folder for the compile cache; none: no cache.
 */
export function serverEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  compileCacheDir?: string,
): Record<string, string> {
  const env: Record<string, string> = { MALLOC_ARENA_MAX: parent.MALLOC_ARENA_MAX ?? "2" };
  if (compileCacheDir && parent.NODE_COMPILE_CACHE === undefined && parent.NODE_DISABLE_COMPILE_CACHE === undefined)
    env.NODE_COMPILE_CACHE = compileCacheDir;
  return env;
}
