/**
 * What the language client does when the server process dies: restart it, up to
 * {@link RestartPolicy.maxRestarts} times within {@link RestartPolicy.windowMs}, saying so in one line
 * of the "GPU Pilot" output channel each time; past that, stop restarting and say how to restart by
 * hand. Replaces vscode-languageclient's default handler, which pops up notifications.
 */
import { CloseAction, ErrorAction, type ErrorHandler } from "vscode-languageclient/node";

/** Restart limits; `now` is injectable for tests. */
export interface RestartPolicy {
  maxRestarts: number;
  windowMs: number;
  now: () => number;
}

const DEFAULT_POLICY: RestartPolicy = { maxRestarts: 4, windowMs: 3 * 60_000, now: () => Date.now() };

/** The logger lines go to (log.ts's `log` fits). */
export interface RestartLog {
  warn(message: string): void;
  error(message: string): void;
}

/** An ErrorHandler that restarts a crashed server (bounded) and logs one line per event. */
export function restartingErrorHandler(log: RestartLog, policy: Partial<RestartPolicy> = {}): ErrorHandler {
  const { maxRestarts, windowMs, now } = { ...DEFAULT_POLICY, ...policy };
  const restarts: number[] = [];
  const minutes = `${Math.round(windowMs / 60_000)} minute${Math.round(windowMs / 60_000) === 1 ? "" : "s"}`;
  return {
    // A failed write or read on the connection: keep going unless it keeps failing (the library's default rule).
    error: (_error, _message, count) => ({
      action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
      handled: true,
    }),
    closed: () => {
      const t = now();
      while (restarts.length > 0 && t - restarts[0] >= windowMs) restarts.shift();
      if (restarts.length >= maxRestarts) {
        log.error(
          `The GPU Pilot language server stopped unexpectedly ${maxRestarts + 1} times in ${minutes}: it is not restarted again. Linting is off until "GPU Pilot: Restart Server".`,
        );
        return { action: CloseAction.DoNotRestart, handled: true };
      }
      restarts.push(t);
      log.warn(
        `The GPU Pilot language server stopped unexpectedly: restarting it (${restarts.length} of ${maxRestarts} restarts in ${minutes}).`,
      );
      return { action: CloseAction.Restart, handled: true };
    },
  };
}
