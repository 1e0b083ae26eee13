/**
 * Process groups of the programs GPU Pilot starts: on POSIX a program is
 * started as the leader of its own group (execa's `detached`), so one signal to the group reaches
 * the children a wrapper script started too (`ssh login squeue`, `sh -c '... & wait'`, a training
 * script's workers). Groups still alive are remembered here, and this process's `exit` kills them:
 * a detached group would otherwise outlive it. No `vscode` import.
 */

/** Whether programs get a group of their own here (POSIX; on Windows there are no process groups). */
export const OWN_GROUP = process.platform !== "win32";

/** Leaders (pids) of the groups started and not yet seen to end. */
const live = new Set<number>();
let exitHook = false;

/**
 * Sends `signal` to the whole group led by `pid`. Never for a missing or non-positive pid:
 * `kill(-0)` would signal this process's own group. Never throws.
 * @returns whether the signal was delivered (false: no such group any more, or no pid).
 */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Remembers the group led by `pid` until the returned function is called (when its leader has
 * ended and its pipes are closed). On the first call, hooks this process's `exit` to SIGKILL every
 * group still remembered. A missing pid (the program did not start) is not remembered.
 * @returns a function that forgets the group (idempotent).
 */
export function trackGroup(pid: number | undefined): () => void {
  if (pid === undefined || pid <= 0) return () => undefined;
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => killAllGroups("SIGKILL"));
  }
  live.add(pid);
  return () => {
    live.delete(pid);
  };
}

/**
 * Signals every remembered group (the MCP server's shutdown; this process's exit).
 * @returns how many groups the signal reached.
 */
export function killAllGroups(signal: NodeJS.Signals): number {
  let n = 0;
  for (const pid of live) if (signalGroup(pid, signal)) n++;
  return n;
}

/** How many groups are remembered now (tests; the MCP server's shutdown). */
export function liveGroupCount(): number {
  return live.size;
}
