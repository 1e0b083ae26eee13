// The fuzz properties of test/fuzz/harness.ts on a small fixed-seed run (npm run fuzz does 100,000+).
import { test } from "node:test";
import assert from "node:assert/strict";
import { initEngine } from "../../../../server/src/engine/lint";
import { loadCorpus, properties } from "../../../fuzz/harness";

/** Fixed seed: the same 300 cases on every run (a failure here replays with this seed). */
const SEED = 20_261_129;
const RUNS = 300;

test(`fuzz: ${RUNS} generated cases (seed ${SEED}) keep every property`, async () => {
  await initEngine();
  for (const p of properties(loadCorpus(0))) {
    const numRuns = Math.max(10, Math.round(RUNS * p.share));
    const d = p.check({ numRuns, seed: SEED });
    assert.equal(
      d.failed,
      false,
      `${p.name}: ${d.errorInstance instanceof Error ? d.errorInstance.message : String(d.errorInstance)}\ncounterexample: ${JSON.stringify(d.counterexample)?.slice(0, 2000)}\nreplay: seed ${d.seed}, path ${d.counterexamplePath}`,
    );
    assert.equal(d.numRuns, numRuns);
  }
});
