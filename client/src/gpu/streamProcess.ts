/**
 * The parts that the two long-running nvidia-smi streams share (stream.ts: `--query-gpu ... -lms`;
 * activity.ts: `dmon --gpm-metrics`): the options the process is started with, how a replaced or stopped process
 * is killed and awaited, and how events reach listeners. Each stream keeps its own parsing,
 * watchdog and fault policy.
 */
import { FORCE_KILL_AFTER_MS, killIfStarted, loadExeca } from "../../../common/src/gpu/nvidiaSmi";

/** A started nvidia-smi process (execa's result promise with the child's streams). */
export type StreamChild = ReturnType<Awaited<ReturnType<typeof loadExeca>>["execa"]>;

/**
 * execa's options for a stream: no output buffering (the caller reads stdout chunks), no rejection
 * on a non-zero exit, stdin closed, SIGTERM then SIGKILL after {@link FORCE_KILL_AFTER_MS}, `env`
 * added to the inherited environment. The caller passes the program and an argument array, never
 * a shell string.
 */
export function streamOptions(env: NodeJS.ProcessEnv | undefined) {
  return {
    buffer: false,
    reject: false,
    stdin: "ignore",
    killSignal: "SIGTERM",
    forceKillAfterDelay: FORCE_KILL_AFTER_MS,
    windowsHide: true,
    ...(env ? { env } : {}),
    extendEnv: true,
  } as const;
}

/** Kills replaced or stopped processes and remembers them until they have exited. */
export class ChildReaper {
  private readonly dying = new Set<Promise<unknown>>();

  /** Sends SIGTERM to `child` (never to a pid-less child: its kill() would signal our process group). */
  kill(child: StreamChild): void {
    const done = child.then(
      () => undefined,
      () => undefined,
    );
    this.dying.add(done);
    void done.finally(() => this.dying.delete(done));
    killIfStarted(child);
  }

  /** The processes killed and not yet exited. */
  pending(): Promise<unknown>[] {
    return [...this.dying];
  }
}

/** Calls each listener with `e`; a listener that throws does not stop the others. */
export function emitTo<E>(listeners: ReadonlySet<(e: E) => void>, e: E): void {
  for (const l of [...listeners]) {
    try {
      l(e);
    } catch {
      // a listener's error is its own business
    }
  }
}
