/**
 * Entry of dist/features.js (loaded late for load time): the code behind what the shell (shell.ts,
 * dist/client.js) registered at activation. The shell requires this bundle at the first use of
 * anything in it, and at the latest a turn of the event loop after activation. Its imports of modules
 * that are in dist/client.js (log, config, the selection...: shared.ts) are that bundle's, not copies.
 */
import { Ctx } from "./ctx";
import type { Shell } from "./shell";

/**
 * Makes the features for `shell` and queues the language server's start for the event loop's next
 * turn (ctx.ts startServer(true): dist/lsp.js is read then, not now).
 */
export function createFeatures(shell: Shell): Ctx {
  const ctx = new Ctx(shell);
  void ctx.startServer(true);
  return ctx;
}
