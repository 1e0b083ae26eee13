/**
 * Issue 20, the cold CLI goals: how close can `gpu-pilot check` as a process come? Measures, on
 * Debian's python3-torch (bench/corpus.mjs), interleaved round by round:
 *   cli     `dist/cli.js check --no-cache --format json TREE` as a whole process (the headline row
 *           of bench/run.mjs);
 *   bound   bench/bound-child.mjs as a whole process: Node.js start, web-tree-sitter with
 *           tree-sitter-python loaded, every file read, and only the files the prefilter lets
 *           through parsed (no model, no rules): the least a sound whole-file linter on this parser
 *           does in a fresh process;
 *   node    `node -e 0`: Node.js start alone;
 *   ruff    one warm pass of Ruff's WebAssembly build with Ruff's CLI default rules
 *           (bench/passes.mjs ruff, in one process started before the rounds).
 * Which files the prefilter lets through comes from the engine itself (lintPython's `parsed`, with
 * the CLI's default options), untimed, before the rounds; the CLI's own `--statistics` must count at
 * least as many (it also counts the tree's job scripts and manifests).
 * usage: node --import tsx bench/cli-bound.ts [--runs N]   (after `npm run build`)
 * prints one JSON line per round and a summary: medians in ms, and each row's ratio to the warm
 * Ruff pass of its round (the goal: CLI <= 0.5).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { initEngine, lintPython } from "../server/src/engine/lint";

const root = join(__dirname, "..");
const runsAt = process.argv.indexOf("--runs");
const runs = runsAt >= 0 ? Number(process.argv[runsAt + 1]) : 8;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Wall milliseconds of a fresh Node.js process running `argv`; throws when it fails. */
function timed(argv: string[]): { ms: number; stdout: string; stderr: string } {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { encoding: "utf8", maxBuffer: 256 << 20 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${argv.join(" ")} exited with ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

async function main(): Promise<void> {
  // An ES module (it reaches execa through scripts/debian-corpus.mjs), so imported, not required.
  const { ensureTorchTree, pythonFiles } = (await import(join(root, "bench", "corpus.mjs"))) as {
    ensureTorchTree(): Promise<{ tree: string }>;
    pythonFiles(dir: string): string[];
  };
  const { tree } = await ensureTorchTree();
  const files: string[] = pythonFiles(tree);
  await initEngine();
  const parsed = files.filter((f) => {
    const r = lintPython(readFileSync(f, "utf8"));
    r.tree?.delete();
    return r.parsed;
  });
  const dir = mkdtempSync(join(tmpdir(), "gp-bound-"));
  writeFileSync(join(dir, "all.txt"), files.join("\n"));
  writeFileSync(join(dir, "parse.txt"), parsed.join("\n"));
  const cliArgs = [join(root, "dist", "cli.js"), "check", "--no-cache", "--format", "json", "--statistics", tree];
  // The CLI also checks the tree's job scripts and manifests (not Python: not parsed by tree-sitter).
  const stat = /parsed (\d+) of (\d+) files/.exec(timed(cliArgs).stderr);
  if (!stat || Number(stat[1]) < parsed.length)
    throw new Error(
      `the CLI parsed ${stat?.[1]} files, fewer than the ${parsed.length} Python files the engine's prefilter lets through`,
    );
  console.log(
    `python3-torch: ${files.length} .py files, ${parsed.length} of them parsed (${parsed.reduce((n, f) => n + readFileSync(f, "utf8").length, 0)} characters); the CLI parsed ${stat[1]} of ${stat[2]} files`,
  );

  const ruff = spawn(process.execPath, [join(root, "bench", "passes.mjs"), "ruff"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answers = createInterface({ input: ruff.stdout! })[Symbol.asyncIterator]();
  let pass = 0;
  const ruffPass = async () => {
    ruff.stdin!.write(JSON.stringify({ list: join(dir, "all.txt"), tree, pass: pass++ }) + "\n");
    return JSON.parse((await answers.next()).value as string).seconds * 1000;
  };
  await ruffPass(); // its start-up: the 10 MB WebAssembly module compiled

  const rows: Record<string, number[]> = { cli: [], bound: [], node: [], ruff: [], parser: [], read: [], parse: [] };
  const steps: Record<string, () => Promise<void>> = {
    cli: async () => {
      rows.cli.push(timed(cliArgs).ms);
    },
    bound: async () => {
      const r = timed([join(root, "bench", "bound-child.mjs"), join(dir, "all.txt"), join(dir, "parse.txt")]);
      const phases = JSON.parse(r.stdout);
      rows.bound.push(r.ms);
      rows.parser.push(phases.parser_ms);
      rows.read.push(phases.read_ms);
      rows.parse.push(phases.parse_ms);
    },
    node: async () => {
      rows.node.push(timed(["-e", "0"]).ms);
    },
    ruff: async () => {
      rows.ruff.push(await ruffPass());
    },
  };
  const order = Object.keys(steps);
  for (let i = 0; i < runs; i++) {
    const load = loadavg()[0];
    for (let k = 0; k < order.length; k++) await steps[order[(i + k) % order.length]]();
    const at = (name: string) => round(rows[name][rows[name].length - 1]);
    console.log(
      JSON.stringify({
        round: i + 1,
        load: round(load, 2),
        cli_ms: at("cli"),
        bound_ms: at("bound"),
        node_ms: at("node"),
        ruff_warm_ms: at("ruff"),
        bound_parser_ms: at("parser"),
        bound_read_ms: at("read"),
        bound_parse_ms: at("parse"),
      }),
    );
  }
  ruff.stdin!.end();
  const ratio = (name: string) => round(median(rows[name].map((x, i) => x / rows.ruff[i])), 3);
  console.log(
    JSON.stringify({
      runs,
      median_ms: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, round(median(v))])),
      ratio_to_warm_ruff: { cli: ratio("cli"), bound: ratio("bound"), node: ratio("node") },
      goal: "cli <= 0.5",
    }),
  );
}

void main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
