// The CLI does not reach into the client (issue 19): `gpu-pilot check` (server/src/cli.ts and what it
// imports statically) pulls in no file under client/ (the nvidia-smi parsers its --inventory needs
// are in common/src/nvidiaSmi/parse.ts, which the client imports too). `gpu-pilot mcp`, loaded by a
// dynamic import only for that command, is a second face of the extension: it reuses the launch,
// pick-policy and agent modules of common/ that the client uses, which therefore must not import
// vscode. Checked on esbuild's own import graph of the bundle.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as esbuild from "esbuild";
import { ROOT } from "../support/root";

test("gpu-pilot check has no input under client/ (the parsers come from common/src/nvidiaSmi/parse.ts); the common/ modules gpu-pilot mcp shares with the client import no vscode", async () => {
  const r = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ["server/src/cli.ts"],
    bundle: true,
    platform: "node",
    format: "cjs",
    write: false,
    metafile: true,
    logLevel: "silent",
    external: ["vscode"],
    alias: { "jsonc-parser": "./node_modules/jsonc-parser/lib/esm/main.js" },
    define: { "import.meta.url": "__u" },
  });
  const graph = r.metafile.inputs;
  const staticFrom = (entry: string): Set<string> => {
    const seen = new Set<string>([entry]);
    const todo = [entry];
    while (todo.length) {
      for (const imp of graph[todo.pop()!]?.imports ?? []) {
        if (imp.kind === "dynamic-import" || imp.external || seen.has(imp.path)) continue;
        seen.add(imp.path);
        todo.push(imp.path);
      }
    }
    return seen;
  };
  const check = [...staticFrom("server/src/cli.ts")];
  assert.ok(
    check.includes("common/src/nvidiaSmi/parse.ts"),
    check.filter((i) => !i.startsWith("node_modules")).join("\n"),
  );
  assert.deepEqual(
    check.filter((i) => i.startsWith("client/")),
    [],
    "gpu-pilot check reaches into client/",
  );
  const shared = Object.keys(graph).filter((i) => i.startsWith("client/") || i.startsWith("common/"));
  for (const f of shared)
    assert.ok(
      !(graph[f].imports ?? []).some((imp) => imp.path === "vscode"),
      `${f} (used by gpu-pilot mcp) imports vscode`,
    );
});
