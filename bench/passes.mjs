// Child process of bench/run.mjs: one tool, kept warm across passes (issue 20). Reads one JSON
// command per line on stdin, {list, tree, pass}, runs one pass of its tool over the files and writes
// one JSON line {seconds, count} (count: diagnostics, or files matched/parsed). The first pass of a
// process includes its start-up (module load, WebAssembly compile, parser start) and is reported
// apart by run.mjs.
// usage: node bench/passes.mjs ruff|gp|floor|parse
//   ruff   Ruff's WebAssembly build (@astral-sh/ruff-wasm-nodejs) with Ruff's CLI default rule set,
//          set explicitly (lint.select = E4, E7, E9, F: `ruff check` without configuration), one
//          Workspace.check per file; each pass appends `# pass N` to every file so that no pass
//          can be answered from an earlier one.
//   gp     GPU Pilot's CLI in this process (dist/cli.js `main`, `check --format json TREE`), one
//          thread (GPU_PILOT_WORKERS=1).
//   floor  read every file (UTF-8) and test one regular expression on it: the cost below which no
//          linter that reads the files can go.
//   parse  web-tree-sitter with tree-sitter-python: parse every file (and free the tree), nothing else.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const tool = process.argv[2];
const filesOf = (list) => readFileSync(list, "utf8").split("\n").filter(Boolean);

/** Ruff's CLI defaults (https://docs.astral.sh/ruff/settings/#lint_select: ["E4", "E7", "E9", "F"]). */
export const RUFF_CLI_DEFAULT_SELECT = ["E4", "E7", "E9", "F"];

let state = null;
async function start() {
  if (tool === "ruff") {
    const ruff = require("@astral-sh/ruff-wasm-nodejs");
    return { ws: new ruff.Workspace({ lint: { select: RUFF_CLI_DEFAULT_SELECT } }, ruff.PositionEncoding.Utf16) };
  }
  if (tool === "gp") {
    process.env.GPU_PILOT_WORKERS = "1";
    return { main: require(join(root, "dist", "cli.js")).main };
  }
  if (tool === "parse") {
    const { Parser, Language } = require("web-tree-sitter");
    await Parser.init();
    const parser = new Parser();
    parser.setLanguage(await Language.load(require.resolve("tree-sitter-python/tree-sitter-python.wasm")));
    return { parser };
  }
  if (tool === "floor") return {};
  throw new Error(`unknown tool ${tool}`);
}

async function pass({ list, tree, pass: n }) {
  let count = 0;
  if (tool === "ruff") {
    for (const f of filesOf(list)) count += state.ws.check(`${readFileSync(f, "utf8")}\n# pass ${n}\n`).length;
  } else if (tool === "gp") {
    let out = "";
    const code = await state.main(["check", "--format", "json", "--no-cache", tree], {
      out: (s) => {
        out += s;
      },
      err: () => {},
      stdin: async () => "",
    });
    if (code === 2) throw new Error("gpu-pilot check failed");
    count = JSON.parse(out).length;
  } else if (tool === "floor") {
    const re = /CUDA_VISIBLE_DEVICES|environ|cuda/;
    for (const f of filesOf(list)) if (re.test(readFileSync(f, "utf8"))) count++;
  } else {
    for (const f of filesOf(list)) {
      const t = state.parser.parse(readFileSync(f, "utf8"));
      if (t) {
        count++;
        t.delete();
      }
    }
  }
  return count;
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const cmd = JSON.parse(line);
  const t0 = process.hrtime.bigint();
  state ??= await start();
  const count = await pass(cmd);
  process.stdout.write(JSON.stringify({ seconds: Number(process.hrtime.bigint() - t0) / 1e9, count }) + "\n");
}
