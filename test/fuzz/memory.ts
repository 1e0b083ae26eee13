/**
 * `npm run bench:memory`: time and peak memory of the engine on large inputs (issue 9), each
 * scenario in a fresh process so that its peak RSS is its own. Inputs are generated here, never
 * committed:
 * - a 5 MB Python file (clean files of the repo repeated, one finding planted): with the default
 *   limit (skipped: one GPU000 information diagnostic) and with no limit (linted);
 * - a 50 MB notebook whose size is mostly outputs (code ~1 MB: linted) and one that is 50 MB of
 *   code (skipped with the default limit), read from .ipynb JSON as the CLI does;
 * - the 5 MB file linted 5 times in one process: RSS after each run (bounded: the trees are freed).
 * Prints a markdown table (RELIABILITY.md keeps one). Speed is measured here, never asserted in
 * unit tests.
 */
import { fork } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { initEngine, lintPython } from "../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook } from "../../server/src/engine/notebook";

const ROOT = join(__dirname, "..", "..");
const MB = 1024 * 1024;

/** Real Python of the repo (examples, rule fixtures), concatenated and repeated to `bytes`. */
export function bigPython(bytes: number): string {
  const dirs = [
    join(ROOT, "examples"),
    ...readdirSync(join(ROOT, "test", "fixtures", "rules")).map((d) => join(ROOT, "test", "fixtures", "rules", d)),
  ];
  const sources: string[] = [];
  for (const d of dirs) {
    // Clean files only (fixtures named ok_*, the fixed examples): a big file with a few findings,
    // as real ones are; a file dense with findings costs one re-parse per fix (RELIABILITY.md).
    try {
      for (const f of readdirSync(d).sort())
        if (/^(ok_.*|.*_fixed|train_ddp)\.py$/.test(f)) sources.push(readFileSync(join(d, f), "utf8"));
    } catch {
      /* not a folder */
    }
  }
  const unit = sources.join("\n");
  // Indented inside functions so the repeated module-level code does not all land on the timeline.
  const chunk = (i: number) =>
    `def part_${i}():\n${unit
      .split("\n")
      .map((l) => (l ? `    ${l}` : l))
      .join("\n")}\n    pass\n\n`;
  const out: string[] = ['import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n\n'];
  let size = out[0].length;
  for (let i = 0; size < bytes; i++) {
    const c = chunk(i);
    out.push(c);
    size += c.length;
  }
  return out.join("");
}

/** A notebook JSON of about `bytes`: `codeBytes` of code in cells of ~20 KB, the rest as base64 image outputs. */
export function bigNotebook(bytes: number, codeBytes: number): string {
  const code = bigPython(codeBytes);
  const lines = code.split("\n");
  const cells: unknown[] = [];
  const perCell = 500;
  const outputBytes = Math.max(0, bytes - codeBytes * 1.3);
  const cellCount = Math.ceil(lines.length / perCell);
  const image = "iVBORw0KGgo".padEnd(Math.floor(outputBytes / cellCount), "A");
  for (let i = 0; i < lines.length; i += perCell) {
    cells.push({
      cell_type: "code",
      metadata: {},
      execution_count: null,
      source: lines.slice(i, i + perCell).map((l) => `${l}\n`),
      outputs: outputBytes > 0 ? [{ output_type: "display_data", metadata: {}, data: { "image/png": image } }] : [],
    });
  }
  return JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 });
}

interface Measure {
  scenario: string;
  input: string;
  ms: number;
  peakRssMiB: number;
  heapMiB: number;
  arrayBuffersMiB: number;
  result: string;
}

const mib = (n: number) => Math.round(n / MB);

async function scenario(name: string): Promise<Measure> {
  await initEngine();
  const t0 = performance.now();
  let input = "";
  let result = "";
  if (name === "py-5MB-default" || name === "py-5MB-nolimit") {
    const text = bigPython(5 * MB);
    input = `${(text.length / MB).toFixed(1)} MB .py`;
    const start = performance.now();
    const r = lintPython(text, name.endsWith("nolimit") ? { maxFileSizeKB: 0 } : {});
    r.tree?.delete();
    result = `${r.diagnostics.length} diagnostics (${[...new Set(r.diagnostics.map((d) => d.code))].join(", ")}), ${r.ruleFailures.length} rule failures`;
    return { scenario: name, input, ms: performance.now() - start, ...mem(), result };
  }
  if (name === "nb-50MB-outputs" || name === "nb-50MB-code") {
    const json = name.endsWith("outputs") ? bigNotebook(50 * MB, 1 * MB) : bigNotebook(50 * MB, 50 * MB);
    input = `${(json.length / MB).toFixed(1)} MB .ipynb`;
    const start = performance.now();
    const cells = cellsOfIpynb(json);
    const r = lintNotebook(cells, {});
    result = `${cells.length} cells, ${r.diagnostics.length} diagnostics (${[...new Set(r.diagnostics.map((d) => d.code))].join(", ")}), ${r.ruleFailures.length} rule failures`;
    return { scenario: name, input, ms: performance.now() - start, ...mem(), result };
  }
  if (name === "py-5MB-x5") {
    const text = bigPython(5 * MB);
    input = `${(text.length / MB).toFixed(1)} MB .py, 5 runs`;
    const rss: number[] = [];
    const start = performance.now();
    for (let i = 0; i < 5; i++) {
      const r = lintPython(text, { maxFileSizeKB: 0 });
      r.tree?.delete();
      (globalThis as { gc?: () => void }).gc?.();
      rss.push(mib(process.memoryUsage().rss));
    }
    result = `RSS after each run (MiB): ${rss.join(", ")}`;
    return { scenario: name, input, ms: (performance.now() - start) / 5, ...mem(), result };
  }
  throw new Error(`unknown scenario ${name} (${t0})`);
}

function mem(): Pick<Measure, "peakRssMiB" | "heapMiB" | "arrayBuffersMiB"> {
  const m = process.memoryUsage();
  return {
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    heapMiB: mib(m.heapUsed),
    arrayBuffersMiB: mib(m.arrayBuffers),
  };
}

const SCENARIOS = ["py-5MB-default", "py-5MB-nolimit", "nb-50MB-outputs", "nb-50MB-code", "py-5MB-x5"];

async function main(): Promise<void> {
  const one = process.env.BENCH_MEMORY_SCENARIO;
  if (one) {
    process.send!(await scenario(one));
    return;
  }
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log(
    "| scenario | input | lint time (ms) | peak RSS (MiB) | JS heap after (MiB) | array buffers incl. wasm (MiB) | result |",
  );
  console.log("| --- | --- | ---: | ---: | ---: | ---: | --- |");
  for (const s of SCENARIOS) {
    const m = await new Promise<Measure>((resolve, reject) => {
      const child = fork(__filename, [], {
        execArgv: ["--import", "tsx", "--expose-gc"],
        env: { ...process.env, BENCH_MEMORY_SCENARIO: s },
      });
      let got: Measure | undefined;
      child.on("message", (x) => {
        got = x as Measure;
      });
      child.on("exit", (code) => (got ? resolve(got) : reject(new Error(`${s}: exited ${code}`))));
    });
    console.log(
      `| ${m.scenario} | ${m.input} | ${Math.round(m.ms)} | ${m.peakRssMiB} | ${m.heapMiB} | ${m.arrayBuffersMiB} | ${m.result} |`,
    );
  }
}

if (require.main === module) void main();
