// Engine latency per edit, in process (no LSP transport, no scheduling): the 5,000-line training
// file of bench/lsp-latency.mjs, one character typed at a time into `loss = ...` in the middle of
// the file; each version is linted as the server lints it (the kept tree edited, then passed as the
// previous tree, incremental: true; fixes validated lazily). Prints p50/p95/max in ms per engine as JSON lines.
// With several engine roots (another checkout, e.g. the previous commit exported with `git archive`),
// the engines run in interleaved rounds, so that load on the machine hits each alike. Each edit is
// timed twice: wall clock, and CPU time of this process (process.cpuUsage, user + system), which
// a loaded machine (other processes on the same cores) inflates far less.
// `--flat`: the flat 5,000-line script of bench/lsp-latency.mjs `flatScript` (this checkout's) instead.
// Usage: node --import tsx scripts/engine-latency.ts [--edits N] [--rounds R] [--flat] [ENGINE_ROOT...]
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

interface Engine {
  initEngine(): Promise<void>;
  lintPython(
    text: string,
    o: object,
    extra: object,
  ): { tree: { edit(e: object): void; delete(): void } | null; diagnostics: unknown[] };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let edits = 200,
    rounds = 1,
    flat = false;
  const roots: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--edits") edits = Number(args[++i]);
    else if (args[i] === "--rounds") rounds = Number(args[++i]);
    else if (args[i] === "--flat") flat = true;
    else roots.push(resolve(args[i]));
  }
  if (roots.length === 0) roots.push(resolve(__dirname, ".."));
  const engines: Engine[] = [];
  for (const r of roots) {
    const e = (await import(pathToFileURL(join(r, "server/src/engine/lint.ts")).href)) as Engine;
    await e.initEngine();
    engines.push(e);
  }
  const { trainingFile } = (await import(pathToFileURL(join(roots[0], "bench/lsp-latency.mjs")).href)) as {
    trainingFile(): string;
  };
  const { flatScript } = (await import(pathToFileURL(join(__dirname, "..", "bench/lsp-latency.mjs")).href)) as {
    flatScript(): string;
  };
  const file = flat ? flatScript : trainingFile;
  const times: number[][] = roots.map(() => []);
  const cpu: number[][] = roots.map(() => []);
  let findings: number[] = [];
  for (let round = 0; round < rounds; round++) {
    findings = engines.map((e, k) => typeEdits(e, file(), edits, times[k], cpu[k]));
  }
  roots.forEach((r, k) => {
    const pct = (list: number[], p: number) => {
      const t = [...list].sort((a, b) => a - b);
      return +t[Math.min(t.length - 1, Math.floor((p / 100) * t.length))].toFixed(2);
    };
    console.log(
      JSON.stringify({
        engine: r,
        p50_ms: pct(times[k], 50),
        p95_ms: pct(times[k], 95),
        max_ms: pct(times[k], 100),
        cpu_p50_ms: pct(cpu[k], 50),
        cpu_p95_ms: pct(cpu[k], 95),
        edits: times[k].length,
        findings: findings[k],
      }),
    );
  });
}

/** Types `edits` characters (after 10 untimed warm-up edits), pushing each edit's wall and CPU time; returns the last finding count. */
function typeEdits(engine: Engine, start: string, edits: number, out: number[], outCpu: number[]): number {
  let text = start;
  const lines = text.split("\n");
  let line = Math.floor((lines.length - 1) / 2);
  while (!lines[line].startsWith("    loss = ") && !/^loss_\d+ = /.test(lines[line])) line++;
  const col = lines[line].indexOf("loss") + "loss".length;
  let offset = lines.slice(0, line).join("\n").length + 1 + col;
  let r = engine.lintPython(text, { lazyFixValidation: true }, { incremental: true });
  for (let i = 0; i < edits + 10; i++) {
    const next = text.slice(0, offset) + "x" + text.slice(offset);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const prev = r.analysis!;
    const column = col + i;
    prev.trees.edit({
      startIndex: offset,
      oldEndIndex: offset,
      newEndIndex: offset + 1,
      startPosition: { row: line, column },
      oldEndPosition: { row: line, column },
      newEndPosition: { row: line, column: column + 1 },
    });
    r = engine.lintPython(next, { lazyFixValidation: true }, { previous: prev, incremental: true });
    prev.dispose();
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    if (i >= 10) {
      out.push(t1 - t0);
      outCpu.push((c1.user + c1.system) / 1000);
    }
    text = next;
    offset++;
  }
  r.tree?.delete();
  return r.diagnostics.length;
}

void main();
