// The language server's Node/V8 flags (common/src/lsp/nodeFlags.ts): Node accepts them (an unknown or
// malformed flag makes node exit with status 9 before the server starts), the process really runs
// with them, and the benchmark reads the same constant it starts the server with.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fork, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { SERVER_NODE_FLAGS, serverEnvironment } from "../../../../common/src/lsp/nodeFlags";
import { ROOT } from "../../support/root";

test("a server forked as vscode-languageclient forks it (execArgv) runs with SERVER_NODE_FLAGS", async () => {
  // vscode-languageclient's NodeModule transport passes `options.execArgv` to child_process.fork.
  const dir = mkdtempSync(join(tmpdir(), "gp-flags-"));
  const script = join(dir, "child.js");
  writeFileSync(script, "process.send(process.execArgv, () => process.exit(0));\n");
  const child = fork(script, [], { execArgv: [...SERVER_NODE_FLAGS], stdio: ["ignore", "ignore", "pipe", "ipc"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const [argv, code] = await Promise.all([
    new Promise<unknown>((resolve) => child.once("message", resolve)),
    new Promise<number | null>((resolve) => child.once("exit", resolve)),
  ]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(argv, [...SERVER_NODE_FLAGS]);
});

test("node refuses a malformed semi-space size, so the flag is parsed, not ignored", () => {
  assert.ok(
    SERVER_NODE_FLAGS.some((f) => /^--max-semi-space-size=\d+$/.test(f)),
    "the young-generation cap is one of the flags",
  );
  const bad = spawnSync(process.execPath, ["--max-semi-space-size=notanumber", "-e", ""], { encoding: "utf8" });
  assert.notEqual(bad.status, 0);
});

test("the benchmark starts the server with the same flags", async () => {
  const bench = (await import(pathToFileURL(join(ROOT, "bench", "lsp-latency.mjs")).href)) as {
    serverNodeFlags(): Promise<string[]>;
  };
  assert.deepEqual(await bench.serverNodeFlags(), [...SERVER_NODE_FLAGS]);
});

test("the server's environment: two malloc arenas unless the user's environment sets its own", async () => {
  assert.deepEqual(serverEnvironment({}), { MALLOC_ARENA_MAX: "2" });
  assert.deepEqual(serverEnvironment({ MALLOC_ARENA_MAX: "8", PATH: "/usr/bin" }), { MALLOC_ARENA_MAX: "8" });
  // The compile cache goes where the client says (its global storage), unless the user chose or refused one.
  assert.deepEqual(serverEnvironment({}, "/home/u/.vscode/gs/node-compile-cache"), {
    MALLOC_ARENA_MAX: "2",
    NODE_COMPILE_CACHE: "/home/u/.vscode/gs/node-compile-cache",
  });
  assert.deepEqual(serverEnvironment({ NODE_COMPILE_CACHE: "/elsewhere" }, "/gs/ncc"), { MALLOC_ARENA_MAX: "2" });
  assert.deepEqual(serverEnvironment({ NODE_DISABLE_COMPILE_CACHE: "1" }, "/gs/ncc"), { MALLOC_ARENA_MAX: "2" });
  const bench = (await import(pathToFileURL(join(ROOT, "bench", "lsp-latency.mjs")).href)) as {
    serverEnvironmentOf(parent: Record<string, string>): Promise<Record<string, string>>;
  };
  assert.deepEqual(
    await bench.serverEnvironmentOf({}),
    { MALLOC_ARENA_MAX: "2", NODE_COMPILE_CACHE: join(ROOT, "bench", "cache", "node-compile-cache") },
    "the benchmark starts the server with the same environment (its compile cache under bench/cache)",
  );
});
