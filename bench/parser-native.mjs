// Issue 43: tree-sitter's native Node.js binding (`tree-sitter` + tree-sitter-python's .node addon)
// against the WebAssembly build the engine uses (web-tree-sitter + tree-sitter-python.wasm), on the
// same grammar (tree-sitter-python 0.25.0 ships both; its src/parser.c builds both).
//
// The native packages are NOT dependencies of GPU Pilot: install them in a folder of their own and
// name it, e.g.
//   mkdir -p /tmp/tsnative && cd /tmp/tsnative && npm init -y && npm install tree-sitter@0.25.1 tree-sitter-python@0.25.0
//   node bench/parser-native.mjs --native /tmp/tsnative            (or TREE_SITTER_NATIVE_DIR=/tmp/tsnative)
// Without them the script prints why and exits 0 (skipped).
//
// usage: node bench/parser-native.mjs [--native DIR] [--corpus DIR] [--rounds N] [--largest N]
//                                     [--json FILE] [--verify] [--no-walk] [--cli [--preview]]
//   --corpus   the Python tree (default: Debian's python3-torch, /usr/lib/python3/dist-packages/torch;
//              GPU_PILOT_PARSER_CORPUS overrides); every *.py below it
//   --rounds   rounds of one fresh process per parser each, the order alternating (default 5)
//   --largest  how many of the largest files make the "largest" rows (default 30)
//   --verify   parse every file with both parsers in one process and compare the trees (S-expression,
//              and every node's type, field, byte/UTF-16 offsets and rows/columns); no timing
//   --no-walk  leave out the tree-walk phase (faster)
//   --cli      the whole CLI (dist/cli.js's code) with each parser instead: see cliRounds below
//   --preview  with --cli: the CLI runs the preview rules too (more files parsed, more findings compared)
// Per process (each timed in wall and CPU time, process.cpuUsage, in the child itself):
//   load     import/require of the runtime and the grammar, set on a new parser (wasm: Parser.init +
//            Language.load, which compile the two WebAssembly modules)
//   largest  the --largest files parsed first (the process's first parses, as in a CLI run)
//   all      every file parsed (trees freed: wasm tree.delete(), native left to the GC)
//   walk     per file, untimed parse, then: a TreeCursor visit of every node (nodeType), the engine's
//            walk (rules/shared/py.ts `walk`: namedChildren stack, .type, .text of identifiers,
//            childForFieldName on calls and attributes, startPosition), and single property reads
//            over all named nodes (CPU ns per read)
//   maxRSS   process.resourceUsage().maxRSS after load, after "largest", after "all" and at the end
// The rounds print the load average before and after; the summary gives medians with min-max, and
// native/wasm ratios taken within each round.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(import.meta.url);
const root = join(dirname(script), "..");
const repoRequire = createRequire(import.meta.url);
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const nativeDir = opt("--native", process.env.TREE_SITTER_NATIVE_DIR || "");
const corpus = opt("--corpus", process.env.GPU_PILOT_PARSER_CORPUS || "/usr/lib/python3/dist-packages/torch");
const rounds = Number(opt("--rounds", "5"));
const largestCount = Number(opt("--largest", "30"));
const noWalk = argv.includes("--no-walk");

/** Every *.py below `dir`, sorted (as scripts/debian-corpus.mjs pythonFiles). */
function pythonFiles(dir) {
  const out = [];
  const walkDir = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walkDir(p);
      else if (e.isFile() && e.name.endsWith(".py")) out.push(p);
    }
  };
  walkDir(dir);
  return out.sort();
}

/** The text as parser.ts `pythonInput` hands it to the parser (a lone \r read as \n). */
const pythonInput = (text) => (text.includes("\r") ? text.replace(/\r(?!\n)/g, "\n") : text);

/** The native binding from `nativeDir`, or null with the reason. */
function nativeModules() {
  if (!nativeDir) return { reason: "no --native DIR and no TREE_SITTER_NATIVE_DIR" };
  const req = createRequire(join(nativeDir, "package.json"));
  try {
    return { Parser: req("tree-sitter"), Python: req("tree-sitter-python") };
  } catch (e) {
    return { reason: `cannot load tree-sitter / tree-sitter-python from ${nativeDir}: ${e.message.split("\n")[0]}` };
  }
}

const cpuMs = (c) => (c.user + c.system) / 1000;
/** Runs `f`, returns [its result, wall ms, CPU ms]. */
function timed(f) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = f();
  const wall = performance.now() - t0;
  return [r, wall, cpuMs(process.cpuUsage(c0))];
}
const maxRssMB = () => process.resourceUsage().maxRSS / 1024;

/** A loaded parser of `kind`: { parser, free(tree), loadWall, loadCpu, version }. */
async function load(kind) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let parser, free, version;
  if (kind === "wasm") {
    const { Parser, Language } = await import("web-tree-sitter");
    const runtime = repoRequire.resolve("web-tree-sitter/tree-sitter.wasm");
    await Parser.init({ locateFile: () => runtime });
    const lang = await Language.load(repoRequire.resolve("tree-sitter-python/tree-sitter-python.wasm"));
    parser = new Parser();
    parser.setLanguage(lang);
    free = (t) => t.delete();
    version = `web-tree-sitter ${JSON.parse(readFileSync(join(runtime, "..", "package.json"), "utf8")).version}`;
  } else {
    const m = nativeModules();
    if (!m.Parser) throw new Error(m.reason);
    parser = new m.Parser();
    parser.setLanguage(m.Python);
    free = () => {};
    const req = createRequire(join(nativeDir, "package.json"));
    version = `tree-sitter ${req("tree-sitter/package.json").version}`;
  }
  const loadWall = performance.now() - t0;
  return { parser, free, loadWall, loadCpu: cpuMs(process.cpuUsage(c0)), version };
}

/** Visits every node with a TreeCursor; returns [nodes, sum of type lengths]. */
function cursorWalk(tree) {
  const cursor = tree.walk();
  let nodes = 0,
    sum = 0;
  for (;;) {
    nodes++;
    sum += cursor.nodeType.length;
    if (cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) {
        cursor.delete?.();
        return [nodes, sum];
      }
    }
  }
}

/** rules/shared/py.ts `walk` with what its callers read most; returns [named nodes, a checksum]. */
function engineWalk(tree) {
  const stack = [tree.rootNode];
  let nodes = 0,
    sum = 0;
  while (stack.length) {
    const n = stack.pop();
    nodes++;
    const type = n.type;
    sum += n.startPosition.row;
    if (type === "identifier") sum += n.text.length;
    else if (type === "call") {
      const f = n.childForFieldName("function");
      const a = n.childForFieldName("arguments");
      sum += (f ? f.type.length : 0) + (a ? a.namedChildCount : 0);
    } else if (type === "attribute") {
      const attr = n.childForFieldName("attribute");
      if (attr) sum += attr.text.length;
    }
    const kids = n.namedChildren;
    for (let i = kids.length - 1; i >= 0; i--) if (kids[i]) stack.push(kids[i]);
  }
  return [nodes, sum];
}

/** Every named node of `tree`, preorder (untimed helper of the single-read rows). */
function namedNodes(tree) {
  const out = [];
  const stack = [tree.rootNode];
  while (stack.length) {
    const n = stack.pop();
    out.push(n);
    const kids = n.namedChildren;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

/**
 * Single reads timed over all named nodes: name -> (node) -> number. The nodes come from namedNodes,
 * which read each one's namedChildren: web-tree-sitter keeps that array on the node object, so its
 * namedChildren row is a cached read (the first read is in the engine walk); the native binding
 * keeps nothing.
 */
const READS = {
  type: (n) => n.type.length,
  startIndex: (n) => n.startIndex,
  startPosition: (n) => n.startPosition.column,
  parent: (n) => (n.parent ? 1 : 0),
  childForFieldName: (n) => (n.childForFieldName("name") ? 1 : 0),
  namedChildren: (n) => n.namedChildren.length,
  textOfIdentifier: (n) => (n.type === "identifier" ? n.text.length : 0),
};

async function child(kind) {
  const out = { kind };
  const { parser, free, loadWall, loadCpu, version } = await load(kind);
  Object.assign(out, { version, loadWall, loadCpu, sinceStart: performance.now(), rssLoad: maxRssMB() });
  const files = pythonFiles(corpus).map((f) => pythonInput(readFileSync(f, "utf8")));
  const largest = [...files].sort((a, b) => b.length - a.length).slice(0, largestCount);
  const parseAll = (texts) => {
    let chars = 0;
    for (const t of texts) {
      const tree = parser.parse(t);
      chars += tree.rootNode.endIndex;
      free(tree);
    }
    return chars;
  };
  [out.largestChars, out.largestWall, out.largestCpu] = timed(() => parseAll(largest));
  out.rssLargest = maxRssMB();
  [out.allChars, out.allWall, out.allCpu] = timed(() => parseAll(files));
  out.files = files.length;
  out.rssAll = maxRssMB();
  if (!noWalk) {
    const w = { cursorWall: 0, cursorCpu: 0, engineWall: 0, engineCpu: 0, nodes: 0, named: 0, sum: 0 };
    Object.assign(w, { largestEngineWall: 0, largestEngineCpu: 0 });
    const reads = Object.fromEntries(Object.keys(READS).map((k) => [k, 0]));
    let reads_n = 0;
    const big = new Set(largest);
    for (const t of files) {
      const tree = parser.parse(t);
      const [[nodes, s1], cw, cc] = timed(() => cursorWalk(tree));
      const [[named, s2], ew, ec] = timed(() => engineWalk(tree));
      Object.assign(w, {
        cursorWall: w.cursorWall + cw,
        cursorCpu: w.cursorCpu + cc,
        engineWall: w.engineWall + ew,
        engineCpu: w.engineCpu + ec,
        nodes: w.nodes + nodes,
        named: w.named + named,
        sum: w.sum + s1 + s2,
      });
      if (big.has(t)) [w.largestEngineWall, w.largestEngineCpu] = [w.largestEngineWall + ew, w.largestEngineCpu + ec];
      const all = namedNodes(tree);
      reads_n += all.length;
      for (const [k, read] of Object.entries(READS)) {
        const [x, , cpu] = timed(() => {
          let x = 0;
          for (const n of all) x += read(n);
          return x;
        });
        reads[k] += cpu;
        w.sum += x;
      }
      free(tree);
    }
    for (const k of Object.keys(reads)) reads[k] = (reads[k] * 1e6) / reads_n;
    Object.assign(out, { walk: w, readsNs: reads });
  }
  out.rssEnd = maxRssMB();
  process.stdout.write(JSON.stringify(out) + "\n");
}

/** --verify: both parsers in one process, every file, trees compared node by node. */
async function verify() {
  const wasm = await load("wasm");
  const native = await load("native");
  const dump = (tree) => {
    const rows = [];
    const c = tree.walk();
    for (;;) {
      const n = c.currentNode;
      rows.push(
        [
          n.type,
          n.isNamed,
          c.currentFieldName ?? "",
          n.isMissing,
          n.startIndex,
          n.endIndex,
          n.startPosition.row,
          n.startPosition.column,
          n.endPosition.row,
          n.endPosition.column,
        ].join(","),
      );
      if (c.gotoFirstChild()) continue;
      while (!c.gotoNextSibling()) {
        if (!c.gotoParent()) {
          c.delete?.();
          return rows;
        }
      }
    }
  };
  const files = pythonFiles(corpus);
  let sexpSame = 0,
    nodesSame = 0,
    nodes = 0,
    errors = 0;
  const differ = [];
  for (const f of files) {
    const text = pythonInput(readFileSync(f, "utf8"));
    const a = wasm.parser.parse(text);
    const b = native.parser.parse(text);
    if (a.rootNode.toString() === b.rootNode.toString()) sexpSame++;
    const da = dump(a),
      db = dump(b);
    nodes += da.length;
    if (a.rootNode.hasError) errors++;
    if (da.length === db.length && da.every((r, i) => r === db[i])) nodesSame++;
    else {
      const i = da.findIndex((r, k) => r !== db[k]);
      differ.push(`${f}: node ${i}: wasm ${da[i]} / native ${db[i]}`);
    }
    wasm.free(a);
  }
  console.log(`${wasm.version} against ${native.version}, ${files.length} files of ${corpus}, ${nodes} nodes`);
  console.log(
    `S-expression identical: ${sexpSame}/${files.length}; every node identical: ${nodesSame}/${files.length}`,
  );
  console.log(`files whose tree has an ERROR or MISSING node: ${errors}`);
  for (const d of differ.slice(0, 10)) console.log(`  differs: ${d}`);
  if (nodesSame !== files.length || sexpSame !== files.length) process.exitCode = 1;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x, d = 1) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(d));
const span = (xs, d) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}-${fmt(Math.max(...xs), d)})`;

function orchestrate() {
  const results = [];
  const kinds = ["wasm", "native"];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...kinds].reverse() : kinds;
    const before = loadavg();
    const round = { round: r, order, loadBefore: before };
    for (const kind of order) {
      const t0 = performance.now();
      const childArgs = [script, "--child", kind, "--corpus", corpus, "--largest", String(largestCount)];
      if (nativeDir) childArgs.push("--native", nativeDir);
      if (noWalk) childArgs.push("--no-walk");
      const p = spawnSync(process.execPath, childArgs, { encoding: "utf8", maxBuffer: 1 << 24 });
      if (p.status !== 0) throw new Error(`${kind} child failed (${p.status}): ${p.stderr}`);
      round[kind] = { ...JSON.parse(p.stdout.trim().split("\n").pop()), processWall: performance.now() - t0 };
    }
    round.loadAfter = loadavg();
    if (!noWalk && round.wasm.walk.sum !== round.native.walk.sum)
      throw new Error(`walk checksums differ: wasm ${round.wasm.walk.sum}, native ${round.native.walk.sum}`);
    results.push(round);
    const l = (a) => a.map((x) => x.toFixed(2)).join(" ");
    console.log(
      `round ${r + 1}/${rounds} (${order.join(", ")}): load avg ${l(before)} -> ${l(round.loadAfter)}; ` +
        `all files wasm ${fmt(round.wasm.allWall)} ms, native ${fmt(round.native.allWall)} ms`,
    );
  }
  return results;
}

function summarize(results) {
  const w0 = results[0].wasm,
    n0 = results[0].native;
  console.log(
    `\n${w0.version} (WebAssembly) against ${n0.version} (native), tree-sitter-python 0.25.0, ${process.version}`,
  );
  console.log(
    `${w0.files} files (${(w0.allChars / 1e6).toFixed(1)} M chars) of ${corpus}; largest ${largestCount}: ${(w0.largestChars / 1e6).toFixed(2)} M chars`,
  );
  if (w0.walk) console.log(`${w0.walk.nodes} nodes, ${w0.walk.named} named; walk checksums equal in every round`);
  console.log(`${results.length} rounds, medians (min-max); ratio = native / wasm within each round\n`);
  const rows = [
    ["load, wall ms", (x) => x.loadWall],
    ["load, CPU ms", (x) => x.loadCpu],
    ["ready since process start, ms", (x) => x.sinceStart],
    ["whole process, wall ms", (x) => x.processWall],
    [`parse ${largestCount} largest (first parses), wall ms`, (x) => x.largestWall],
    [`parse ${largestCount} largest, CPU ms`, (x) => x.largestCpu],
    ["parse all files, wall ms", (x) => x.allWall],
    ["parse all files, CPU ms", (x) => x.allCpu],
  ];
  if (w0.walk) {
    rows.push(
      ["TreeCursor visit of every node, wall ms", (x) => x.walk.cursorWall],
      ["TreeCursor visit of every node, CPU ms", (x) => x.walk.cursorCpu],
      ["engine walk (namedChildren, type, text, fields), wall ms", (x) => x.walk.engineWall],
      ["engine walk, CPU ms", (x) => x.walk.engineCpu],
      [`engine walk of the ${largestCount} largest, CPU ms`, (x) => x.walk.largestEngineCpu],
      ...Object.keys(w0.readsNs).map((k) => [`.${k} per named node, CPU ns`, (x) => x.readsNs[k]]),
    );
  }
  rows.push(
    ["maxRSS after load, MB", (x) => x.rssLoad],
    [`maxRSS after ${largestCount} largest, MB`, (x) => x.rssLargest],
    ["maxRSS after parsing all files, MB", (x) => x.rssAll],
    ["maxRSS at the end, MB", (x) => x.rssEnd],
  );
  console.log("| measure | wasm | native | native / wasm |\n|---|---|---|---|");
  for (const [name, get] of rows) {
    const w = results.map((r) => get(r.wasm)),
      n = results.map((r) => get(r.native));
    const ratio = results.map((r) => get(r.native) / get(r.wasm));
    console.log(`| ${name} | ${span(w)} | ${span(n)} | ${span(ratio, 2)} |`);
  }
}

/**
 * --cli: the whole CLI both ways. Two bundles of server/src/cli.ts, built alike (esbuild, the options
 * of esbuild.mjs, no minification), one of them with web-tree-sitter replaced by
 * bench/parser-native-shim.mjs (tree-sitter's native binding behind the same API; the engine is not
 * changed). Each round runs `check --no-cache --exit-zero --format json --statistics CORPUS` with each
 * bundle in a fresh process, the order alternating, once on one thread (GPU_PILOT_WORKERS=1) and once
 * with the CLI's own worker count; the findings must be the same. CPU time (all threads) and maxRSS
 * come from a --require'd probe that writes them when the process exits.
 */
async function cliRounds() {
  const esbuild = await import("esbuild");
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-parser-native-"));
  const bundles = {};
  for (const kind of ["wasm", "native"]) {
    const out = join(dir, kind);
    mkdirSync(out);
    for (const f of ["web-tree-sitter/tree-sitter.wasm", "tree-sitter-python/tree-sitter-python.wasm"])
      copyFileSync(repoRequire.resolve(f), join(out, f.split("/")[1]));
    const alias = { "jsonc-parser": join(root, "node_modules/jsonc-parser/lib/esm/main.js") };
    if (kind === "native") alias["web-tree-sitter"] = join(root, "bench", "parser-native-shim.mjs");
    await esbuild.build({
      entryPoints: [join(root, "server", "src", "cli.ts")],
      outfile: join(out, "cli.js"),
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      logLevel: "warning",
      external: ["vscode"],
      alias,
      define: { "import.meta.url": "__gpuPilotImportMetaUrl" },
      banner: { js: "const __gpuPilotImportMetaUrl = require('url').pathToFileURL(__filename).href;" },
    });
    bundles[kind] = join(out, "cli.js");
  }
  const probe = join(dir, "probe.cjs");
  writeFileSync(
    probe,
    `if (require("node:worker_threads").isMainThread) process.on("exit", () => require("node:fs").writeFileSync(` +
      `process.env.PARSER_BENCH_PROBE, JSON.stringify({ cpu: process.cpuUsage(), maxRSS: process.resourceUsage().maxRSS })));\n`,
  );
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const round = { round: r, loadBefore: loadavg() };
    for (const workers of ["1", ""]) {
      const order = (r + (workers ? 0 : 1)) % 2 ? ["native", "wasm"] : ["wasm", "native"];
      const outputs = {};
      for (const kind of order) {
        const probeOut = join(dir, `probe-${kind}.json`);
        const env = { ...process.env, PARSER_BENCH_PROBE: probeOut, TREE_SITTER_NATIVE_DIR: nativeDir };
        if (workers) env.GPU_PILOT_WORKERS = workers;
        else delete env.GPU_PILOT_WORKERS;
        const cliArgs = ["check", "--no-cache", "--exit-zero", "--format", "json", "--statistics", corpus];
        if (argv.includes("--preview")) cliArgs.splice(1, 0, "--preview");
        const t0 = performance.now();
        const p = spawnSync(process.execPath, ["--require", probe, bundles[kind], ...cliArgs], {
          encoding: "utf8",
          env,
          maxBuffer: 1 << 26,
        });
        const wall = performance.now() - t0;
        if (p.status !== 0) throw new Error(`${kind} CLI failed (${p.status}): ${p.stderr}`);
        const { cpu, maxRSS } = JSON.parse(readFileSync(probeOut, "utf8"));
        const stats = /parsed (\d+) of (\d+) files;.*; (\d+) workers?/.exec(p.stderr);
        outputs[kind] = p.stdout;
        round[`${kind}${workers ? "1" : "N"}`] = {
          wall,
          cpu: cpuMs(cpu),
          rss: maxRSS / 1024,
          parsed: Number(stats?.[1]),
          files: Number(stats?.[2]),
          workers: Number(stats?.[3]),
          findings: JSON.parse(p.stdout).length,
        };
      }
      if (outputs.wasm !== outputs.native) throw new Error(`round ${r + 1}: the two CLIs' findings differ`);
    }
    round.loadAfter = loadavg();
    results.push(round);
    const x = (k) => `${fmt(round[k].cpu)} ms CPU`;
    console.log(
      `round ${r + 1}/${rounds}: load avg ${round.loadBefore.map((v) => v.toFixed(2)).join(" ")}; one thread wasm ${x("wasm1")}, ` +
        `native ${x("native1")}; workers wasm ${x("wasmN")}, native ${x("nativeN")}`,
    );
  }
  const c = results[0];
  console.log(
    `\n${corpus}: ${c.wasm1.files} files, ${c.wasm1.parsed} parsed, ${c.wasm1.findings} findings (the same both ways in every round); ` +
      `${c.wasmN.workers} workers without GPU_PILOT_WORKERS; medians (min-max) of ${results.length} rounds, ratio within each round\n`,
  );
  console.log("| whole CLI process | wasm | native | native / wasm |\n|---|---|---|---|");
  for (const [label, key] of [
    ["one thread", "1"],
    [`${c.wasmN.workers} workers`, "N"],
  ])
    for (const [what, m] of [
      ["CPU ms", "cpu"],
      ["wall ms", "wall"],
      ["maxRSS MB", "rss"],
    ]) {
      const w = results.map((r) => r[`wasm${key}`][m]),
        n = results.map((r) => r[`native${key}`][m]);
      const ratio = results.map((r) => r[`native${key}`][m] / r[`wasm${key}`][m]);
      console.log(`| ${label}, ${what} | ${span(w)} | ${span(n)} | ${span(ratio, 2)} |`);
    }
  rmSync(dir, { recursive: true, force: true });
  return results;
}

async function main() {
  if (!existsSync(corpus)) {
    console.log(`skipped: no corpus at ${corpus} (--corpus DIR, or apt-get install python3-torch)`);
    return;
  }
  const kind = opt("--child", null);
  if (kind) return child(kind);
  const m = nativeModules();
  if (!m.Parser) {
    console.log(`skipped: tree-sitter's native binding is not installed (${m.reason}).`);
    console.log("Install it in a folder of its own (see this script's header) and pass --native DIR.");
    return;
  }
  if (argv.includes("--verify")) return verify();
  let results;
  if (argv.includes("--cli")) results = await cliRounds();
  else {
    results = orchestrate();
    summarize(results);
  }
  const json = opt("--json", null);
  if (json) writeFileSync(json, JSON.stringify({ corpus, rounds: results }, null, 1) + "\n");
}

await main();
