// The CLI does not reach into the client (issue 19): bundling server/src/cli.ts pulls in no file
// under client/ (the nvidia-smi parsers its --inventory needs are in server/src/nvidiaSmi/parse.ts,
// which the client imports too). Checked on esbuild's own list of the bundle's inputs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as esbuild from "esbuild";

const root = join(__dirname, "..", "..");

test("the CLI bundle has no input under client/, and the parsers come from server/src/nvidiaSmi/parse.ts", async () => {
  const r = await esbuild.build({
    absWorkingDir: root,
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
  const inputs = Object.keys(r.metafile.inputs);
  assert.ok(inputs.includes("server/src/nvidiaSmi/parse.ts"), inputs.filter((i) => !i.startsWith("node_modules")).join("\n"));
  assert.deepEqual(inputs.filter((i) => i.startsWith("client/")), []);
});
