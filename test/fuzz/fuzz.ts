/**
 * `npm run fuzz`: the lint engine under fast-check (issue 9); properties and generators in
 * harness.ts. Environment:
 *   FUZZ_RUNS     generated cases in all (default 100000), shared among the properties;
 *   FUZZ_SEED     base seed (default: random); worker k uses seed + k;
 *   FUZZ_WORKERS  processes (default: the number of CPUs, at most 8).
 * Prints one line per property and worker, then `fuzz: N cases in T s, F failures, seed S`.
 * A failure prints the property's shrunk counterexample (JSON) and its seed/path for replay
 * (FUZZ_SEED=<seed> FUZZ_PATH=<path> FUZZ_ONLY=<property> FUZZ_WORKERS=1). Exit code 1 on failure.
 */
import { fork } from "node:child_process";
import { availableParallelism } from "node:os";
import { initEngine } from "../../server/src/engine/lint";
import { loadCorpus, properties } from "./harness";

interface WorkerReport {
  property: string;
  runs: number;
  ms: number;
  failed: boolean;
  seed: number;
  path: string | null;
  counterexample: string | null;
  error: string | null;
}

/** Runs this worker's share of every property and returns one report per property. */
async function runWorker(
  total: number,
  seed: number,
  only: string | undefined,
  path: string | undefined,
): Promise<WorkerReport[]> {
  await initEngine();
  const corpus = loadCorpus();
  const reports: WorkerReport[] = [];
  for (const p of properties(corpus)) {
    if (only && p.name !== only) continue;
    const numRuns = Math.max(1, Math.round(total * (only ? 1 : p.share)));
    const t0 = Date.now();
    const d = p.check({ numRuns, seed, ...(path ? { path } : {}) });
    reports.push({
      property: p.name,
      runs: d.numRuns,
      ms: Date.now() - t0,
      failed: d.failed,
      seed: d.seed,
      path: d.counterexamplePath,
      counterexample: d.counterexample ? JSON.stringify(d.counterexample) : null,
      error:
        d.errorInstance instanceof Error
          ? d.errorInstance.message
          : d.errorInstance === null
            ? null
            : String(d.errorInstance),
    });
    if (d.failed) break;
  }
  return reports;
}

async function main(): Promise<void> {
  const runs = Number(process.env.FUZZ_RUNS ?? 100_000);
  const seed =
    process.env.FUZZ_SEED !== undefined
      ? Number(process.env.FUZZ_SEED)
      : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const only = process.env.FUZZ_ONLY || undefined;
  const path = process.env.FUZZ_PATH || undefined;
  if (process.env.FUZZ_WORKER_INDEX !== undefined) {
    const reports = await runWorker(runs, seed, only, path);
    process.send!(reports);
    return;
  }
  const workers = Math.max(1, Math.min(8, Number(process.env.FUZZ_WORKERS ?? availableParallelism())));
  const t0 = Date.now();
  console.log(`fuzz: ${runs} cases, ${workers} worker(s), seed ${seed}`);
  const share = (k: number) => Math.floor(runs / workers) + (k < runs % workers ? 1 : 0);
  const results = await Promise.all(
    Array.from(
      { length: workers },
      (_, k) =>
        new Promise<WorkerReport[]>((resolve, reject) => {
          const child = fork(__filename, [], {
            execArgv: ["--import", "tsx", "--stack-size=984"],
            env: {
              ...process.env,
              FUZZ_WORKER_INDEX: String(k),
              FUZZ_RUNS: String(share(k)),
              FUZZ_SEED: String(seed + k),
            },
          });
          let got: WorkerReport[] | undefined;
          child.on("message", (m) => {
            got = m as WorkerReport[];
          });
          child.on("exit", (code) =>
            got ? resolve(got) : reject(new Error(`worker ${k} exited with ${code} without a report`)),
          );
        }),
    ),
  );
  let cases = 0;
  let failures = 0;
  results.forEach((reports, k) => {
    for (const r of reports) {
      cases += r.runs;
      console.log(
        `  worker ${k} ${r.property}: ${r.runs} cases in ${(r.ms / 1000).toFixed(1)} s${r.failed ? " FAILED" : ""}`,
      );
      if (r.failed) {
        failures++;
        console.log(`    replay: FUZZ_SEED=${r.seed} FUZZ_PATH=${r.path} FUZZ_ONLY=${r.property} FUZZ_WORKERS=1`);
        console.log(`    counterexample: ${r.counterexample}`);
        console.log(`    ${r.error?.split("\n").join("\n    ")}`);
      }
    }
  });
  console.log(
    `fuzz: ${cases} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${failures} failure${failures === 1 ? "" : "s"}, seed ${seed}`,
  );
  process.exitCode = failures ? 1 : 0;
}

void main();
