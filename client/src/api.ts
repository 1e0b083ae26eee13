/**
 * The API returned by `activate()`, for tests and other extensions:
 *
 * ```ts
 * const api = await vscode.extensions.getExtension<GpuPilotApi>("gpu-pilot.gpu-pilot")!.activate();
 * await api.setSelection(["1"]);
 * await api.refresh();
 * api.getInventory()?.gpus.length; // 2 with the fake nvidia-smi
 * ```
 */
import type { Inventory } from "./gpu/nvidiaSmi";
import type { SmiState } from "./gpu/monitor";
import type { RunFinding } from "./run/checks";
import type { LauncherKind } from "./run/launch";
import type { Uri } from "vscode";

/** The last run started by `gpuPilot.runActiveFile` (updated in place as the run progresses). */
export interface LastRun {
  /** Absolute path of the script. */
  file: string;
  /** The launcher used: python, torchrun, accelerate, deepspeed, custom, docker or slurm. */
  launcher: LauncherKind;
  /** The program started (the interpreter, or the launcher's program). */
  command: string;
  /** Its arguments, e.g. `[file]` for python. */
  args: string[];
  /** Working directory. */
  cwd: string;
  /** The variables added to the environment (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER where the launcher uses them, and gpuPilot.run.env). */
  env: Record<string, string>;
  /** Where the interpreter came from: `python-extension` or `default` (python3). */
  interpreterSource: "python-extension" | "default";
  /** The task's name, e.g. `train.py on GPU 1`. */
  title: string;
  /** ms since the epoch. */
  startedAt: number;
  /** Process id, once the task's process has started. */
  pid?: number;
  /** Set when the process has ended: its exit code, or null when VS Code reported none. */
  exitCode?: number | null;
  /** ms since the epoch, once ended. */
  endedAt?: number;
  /** Set instead of pid/exitCode when the task could not be started. */
  error?: string;
}

/** What `activate()` returns. */
export interface GpuPilotApi {
  /** The selected GPUs: CUDA_VISIBLE_DEVICES entries (index strings or GPU-/MIG- UUIDs), in index order. */
  getSelection(): string[];
  /**
   * Replaces the selection (persisted in workspace state; updates tree, status bar and language server).
   * @throws InvalidDeviceIdError (rejects) when an entry is not an index or GPU-/MIG- UUID.
   */
  setSelection(ids: string[]): Promise<void>;
  /** The last successful nvidia-smi inventory (GPUs, compute processes, parse problems), or undefined. */
  getInventory(): Inventory | undefined;
  /** `gpuPilot.nvidiaSmiState`: unknown | ok | missing | failed, and the problem text ("" when none). */
  getNvidiaSmiState(): { state: SmiState; problem: string };
  /** Queries nvidia-smi now; resolves when the inventory (or failure) is updated. Never rejects. */
  refresh(): Promise<void>;
  /** Whether the language client is running. */
  isServerRunning(): boolean;
  /** The last run of `gpuPilot.runActiveFile`, or undefined before the first. */
  readonly lastRun?: LastRun;
  /**
   * The checks `gpuPilot.runActiveFile` would make before running `uri` (default: the active editor)
   * with `launcher` (default: `gpuPilot.run.launcher`) on the current selection, without asking or
   * running anything: unknown GPU ids, too many processes, a script that needs torchrun, a script
   * that sets CUDA_VISIBLE_DEVICES itself, GPUs busy with other users' processes.
   */
  checkRun(uri?: Uri, launcher?: LauncherKind): Promise<RunFinding[]>;
}
