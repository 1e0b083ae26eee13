// Types of scripts/slurm-cluster.mjs, for the TypeScript tests that import it.
export const SLURM_PROGRAMS: string[];
export const FINAL_STATES: string[];
export interface Cluster {
  base: string;
  conf: string;
  env: { SLURM_CONF: string };
  nodeName: string;
  gpus: number;
  partition: string;
  jobsDir: string;
  stop(): Promise<void>;
}
export function findExecutable(name: string): string | null;
export function slurmAvailability(): string | null;
export function alive(pid: number): boolean;
export function slurmCommand(
  env: Record<string, string>,
  program: string,
  args: string[],
  timeout?: number,
): Promise<{ stdout?: string; stderr?: string; exitCode?: number }>;
export function waitJob(
  env: Record<string, string>,
  id: string | number,
  opts?: { timeoutMs?: number; states?: string[] },
): Promise<Map<string, string>>;
export function parseScontrolLine(line: string): Map<string, string>;
export function startCluster(opts?: {
  base?: string;
  nodeName?: string;
  gpus?: number;
  cpus?: number;
  keep?: boolean;
}): Promise<Cluster>;
export function stopCluster(base: string, opts?: { remove?: boolean }): Promise<void>;
