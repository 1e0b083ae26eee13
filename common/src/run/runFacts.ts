/**
 * What the language server answers `gpuPilot/runFacts` with (common/src/lsp/protocol.ts
 * `RunFactsResult`): the facts about a script that the checks before a run (client/src/run/checks.ts)
 * need. server/src/engine/runFacts.ts computes them from the engine's parse; the client only reads
 * them, so it bundles no parser. Types only.
 */

/** A read of a launcher-set variable. `line` is 0-based. */
export interface DistributedRead {
  variable: string;
  line: number;
  /** `os.environ.get("K", default)` / `os.getenv("K", default)`: it does not fail under plain python. */
  withDefault: boolean;
  /** The expression as written, e.g. `os.environ["LOCAL_RANK"]`. */
  text: string;
}

/** A write of CUDA_VISIBLE_DEVICES by the script itself. `line` is 0-based. */
export interface VisibleDevicesWrite {
  line: number;
  /** The literal value, or null when it is computed. */
  value: string | null;
  /** The statement as written. */
  text: string;
  /**
   * Null when the write takes effect (it replaces the GPUs the process was given); otherwise why it
   * has none: GPU001's message for it (CUDA was already initialised when it runs). The verdict is
   * the rule's own, before the user's select/ignore/noqa: a suppressed finding changes nothing CUDA does.
   */
  noEffect: string | null;
}

/** What the engine's `runFacts` (server/src/engine/runFacts.ts) found. Lines are 0-based. */
export interface RunFacts {
  distributedReads: DistributedRead[];
  /** `init_process_group(...)` calls that take rank and world size from the environment (env://). */
  envInitProcessGroup: { line: number; text: string }[];
  /** Writes of CUDA_VISIBLE_DEVICES that replace a value already set (not `setdefault`, which keeps it), in line order. */
  visibleDevicesWrites: VisibleDevicesWrite[];
}
