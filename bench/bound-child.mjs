// Child process of bench/cli-bound.ts: the least work a sound whole-file linter that runs as a
// Node.js process must do on a tree (issue 20, the cold CLI goals). It starts, loads web-tree-sitter
// with tree-sitter-python (the parser this project is built on), reads every file (UTF-8, as the
// CLI does) and parses the files listed in PARSE (the files the CLI's prefilter lets through: some
// enabled rule can fire on their text), freeing each tree. No model, no rules, no output.
// usage: node bench/bound-child.mjs ALL_LIST PARSE_LIST
// prints one JSON line: {start_ms, parser_ms, read_ms, parse_ms, read_chars, parsed_chars, parsed}
//   start_ms: from the process's start (performance.timeOrigin) to this module's first line;
//   parser_ms: Parser.init + Language.load; read_ms: reading every file; parse_ms: the parses;
//   read_chars, parsed_chars: UTF-16 code units read and parsed; parsed: files parsed.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const startMs = performance.now();
const require = createRequire(import.meta.url);
const [allList, parseList] = process.argv.slice(2);
const lines = (f) => readFileSync(f, "utf8").split("\n").filter(Boolean);

let t = performance.now();
const { Parser, Language } = require("web-tree-sitter");
await Parser.init();
const parser = new Parser();
parser.setLanguage(await Language.load(require.resolve("tree-sitter-python/tree-sitter-python.wasm")));
const parserMs = performance.now() - t;

const wanted = new Set(lines(parseList));
t = performance.now();
const texts = new Map();
let readChars = 0;
for (const f of lines(allList)) {
  const text = readFileSync(f, "utf8");
  readChars += text.length;
  if (wanted.has(f)) texts.set(f, text);
}
const readMs = performance.now() - t;

t = performance.now();
let parsedChars = 0;
for (const text of texts.values()) {
  const tree = parser.parse(text);
  if (!tree) throw new Error("tree-sitter returned no tree");
  parsedChars += text.length;
  tree.delete();
}
const parseMs = performance.now() - t;
process.stdout.write(
  JSON.stringify({
    start_ms: startMs,
    parser_ms: parserMs,
    read_ms: readMs,
    parse_ms: parseMs,
    read_chars: readChars,
    parsed_chars: parsedChars,
    parsed: texts.size,
  }) + "\n",
);
