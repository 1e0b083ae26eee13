// Skipping an e2e test with its reason (no vscode import: the runner, index.ts, loads it too).
/** The property of a mocha suite where {@link skipWithReason} leaves its reason for the runner (index.ts). */
export const SKIP_REASON = "gpuPilotSkipReason";

/**
 * Skips the current test, or from a suiteSetup hook every test of its suite, and records why on the
 * suite, so that the runner (index.ts) writes the reason beside each skipped test and `npm test`'s
 * final list of skipped tests shows it. Throws mocha's Pending, as `this.skip()` does.
 */
export function skipWithReason(ctx: Mocha.Context, reason: string): never {
  const suite = ctx.test?.parent as (Mocha.Suite & { [SKIP_REASON]?: string }) | undefined;
  if (suite) suite[SKIP_REASON] = reason;
  console.log(`[gpu-pilot e2e] skipped: ${reason}`);
  ctx.skip();
}
