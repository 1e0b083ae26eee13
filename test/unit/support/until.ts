import assert from "node:assert/strict";

/**
 * Waits until `cond()` holds, polling every 10 ms; fails the test with "timed out waiting for
 * `what`" after `ms` (default 15 s).
 */
export async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
