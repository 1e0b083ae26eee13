// Child process: checks every file given in a list file with Ruff's WebAssembly build, file by file
// through its API (default rules), and prints {seconds, files, diagnostics} as JSON.
// usage: node bench/ruff-check.mjs LISTFILE
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const t0 = process.hrtime.bigint();
const require = createRequire(import.meta.url);
const ruff = require("@astral-sh/ruff-wasm-nodejs");
const files = readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean);
const ws = new ruff.Workspace(ruff.Workspace.defaultSettings(), ruff.PositionEncoding.Utf16);
let diagnostics = 0;
for (const f of files) diagnostics += ws.check(readFileSync(f, "utf8")).length;
console.log(JSON.stringify({ seconds: Number(process.hrtime.bigint() - t0) / 1e9, files: files.length, diagnostics }));
