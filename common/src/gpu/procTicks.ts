/**
 * The times of /proc/<pid>/stat as procinfo.ts reads them, and how long a process has run. Apart
 * from procinfo.ts (which reads files) so that the dashboard's webview script can import it with
 * client/src/gpu/processTable.ts: pure, no `vscode`, no file access.
 */

/**
 * Clock ticks per second of the times in /proc/<pid>/stat (`USER_HZ`, `sysconf(_SC_CLK_TCK)`): 100 on
 * every Linux architecture VS Code runs on (x86-64, arm64; proc(5)). Node cannot call sysconf.
 */
export const CLOCK_TICKS_PER_S = 100;

/** What CPU % and running time read of a process: CPU ticks and start ticks (clock ticks), and when, s since boot. */
export interface CpuSample {
  cpuTicks?: number;
  startTicks?: number;
  readAtS?: number;
}

/** How long a process has run, s: `readAtS` minus its start (`startTicks` / {@link CLOCK_TICKS_PER_S}); undefined when unknown. */
export function runningSeconds(d: CpuSample): number | undefined {
  if (d.readAtS === undefined || d.startTicks === undefined) return undefined;
  return Math.max(0, d.readAtS - d.startTicks / CLOCK_TICKS_PER_S);
}
