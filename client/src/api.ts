/**
 * The test hooks: what `activate()` returns beside the public API (publicApi.ts) when the extension
 * host runs with GPU_PILOT_TEST_HOOKS=1 (the e2e runners, the benchmark, the unit tests). Not for
 * other extensions: it may change in any release.
 *
 * ```ts
 * const api = await vscode.extensions.getExtension<GpuPilotTestApi>("gpu-pilot.gpu-pilot")!.activate();
 * await api.setSelection(["1"]);
 * await api.refresh();
 * api.getInventory()?.gpus.length; // 2 with the fake nvidia-smi
 * ```
 */
import type { Inventory } from "../../common/src/gpu/nvidiaSmi";
import type { SmiState } from "./gpu/monitor";
import type { RunFinding } from "./run/checks";
import type { LauncherKind } from "../../common/src/run/launch";
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
  /** Variables removed from the inherited environment before `env` is added (deepspeed, docker, srun: CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER). */
  unset: string[];
  /** Where the interpreter came from: `python-extension` or `default` (python3). */
  interpreterSource: "python-extension" | "default";
  /** The task's name, e.g. `train.py on GPU 1`. */
  title: string;
  /** ms since the epoch. */
  startedAt: number;
  /**
   * Lower-case UUIDs of the GPUs (or MIG instances) the run was given, from its CUDA_VISIBLE_DEVICES
   * at start and the inventory then; empty when not known (Slurm picks elsewhere, no inventory yet).
   */
  gpus?: string[];
  /** Process id, once the task's process has started. */
  pid?: number;
  /** Set when the process has ended: its exit code, or null when VS Code reported none. */
  exitCode?: number | null;
  /** The signal that ended the process (`SIGINT`, `SIGTERM`, ...), when one did. */
  signal?: string;
  /** ms since the epoch, once ended. */
  endedAt?: number;
  /** Set when the task or its program could not be started (exitCode is then null). */
  error?: string;
}

/** A row of the GPU view as plain data (see {@link GpuViewApi.getTreeRows}). */
export type { GpuTreeRow } from "./gpu/tree";
/** The result of "Pick Free GPUs" (see {@link GpuViewApi.pickFreeGpus}). */
export type { PickFreeOutcome } from "./gpu/actions";
/** The GPU dashboard's state and click targets (see {@link GpuViewApi.getDashboardState}). */
export type { DashboardClickTarget, DashboardRendered, DashboardState } from "./gpu/dashboard";
/** The dashboard's model (cards, processes, sort). */
export type { DashboardModel } from "./gpu/dashboardModel";
/** The "Pick Free GPUs" policy: count (GPUs), minFreeMemoryMiB (MiB), maxUtilizationPercent (%), excludeBusyWithOtherUsers. */
export type { PickPolicy } from "../../common/src/gpu/policy";

/**
 * The GPU view's part of the API: what the view, the status bar, new terminals and Python debug
 * sessions get from the selection.
 *
 * ```ts
 * const rows = api.getTreeRows();              // GPUs, details, MIG devices, processes (depth 1)
 * await api.pickFreeGpus({ count: 1 });        // nvisel-style policy; updates the selection
 * api.getTerminalEnvironment().CUDA_VISIBLE_DEVICES?.value;   // what new terminals get
 * await api.resolveDebugConfiguration({ type: "debugpy", request: "launch", name: "x", program: "t.py" });
 * ```
 */
export interface GpuViewApi {
  /** The `gpuPilot.gpus` TreeDataProvider (getChildren / getTreeItem as VS Code calls them). */
  readonly gpuTreeProvider: import("vscode").TreeDataProvider<unknown>;
  /** Every row of the view, depth first, fully expanded, as plain data (label, description, tooltip, contextValue, checkbox, icon). */
  getTreeRows(): import("./gpu/tree").GpuTreeRow[];
  /** User, uid, command line, own / this workspace's run, of each compute process (from /proc; `unknown` where unreadable). */
  getProcesses(): import("../../common/src/gpu/nvidiaSmi").ProcessDetails[];
  /**
   * "Pick Free GPUs": refreshes, applies the `gpuPilot.pick.*` policy (fields of `policy` override
   * the settings) and makes the picked GPUs the selection. Never rejects.
   */
  pickFreeGpus(
    policy?: Partial<import("../../common/src/gpu/policy").PickPolicy>,
  ): Promise<import("./gpu/actions").PickFreeOutcome>;
  /** What `ExtensionContext.environmentVariableCollection` gives new terminals: variable → mutator (empty without a selection). */
  getTerminalEnvironment(): Record<string, { value: string; type: "replace" | "append" | "prepend" }>;
  /** Runs GPU Pilot's DebugConfigurationProvider (registered for `debugpy` and `python`) on a configuration. */
  resolveDebugConfiguration(
    configuration: import("vscode").DebugConfiguration,
    folder?: import("vscode").WorkspaceFolder,
  ): Promise<import("vscode").DebugConfiguration | null | undefined>;
  /** The status bar item's text, e.g. `$(circuit-board) GPU 1 · 0% · 0.0/140.4 GiB`. */
  getStatusBarText(): string;
  /** Whether the nvidia-smi stream runs (the view is visible), its pid, and the view's notices (restarting stream, vanished GPUs). */
  getMonitorStatus(): { streaming: boolean; streamPid: number | undefined; notices: string[] };
  /**
   * The GPU dashboard (`gpuPilot.dashboard`): whether it is resolved and visible, the model last
   * posted to its webview (cards with their formatted numbers, ticks, sorted processes) and what the
   * webview last reported drawing (ticked boxes, process order, width, whether anything overflows).
   */
  getDashboardState(): import("./gpu/dashboard").DashboardState;
  /**
   * Clicks a control inside the dashboard's webview (a GPU's or MIG device's tick box, a process
   * column header) through the webview's own DOM handlers, as a user's click would. Resolves to
   * false when the dashboard has not been shown.
   */
  clickInDashboard(target: import("./gpu/dashboard").DashboardClickTarget): Promise<boolean>;
}

/** The test hooks `activate()` returns with GPU_PILOT_TEST_HOOKS=1 (with the public API's members: publicApi.ts `GpuPilotTestApi`). */
export interface GpuPilotApi extends GpuViewApi {
  /** Wall time of `activate()` itself, ms (performance.now(); the benchmark reads it inside the real VS Code). */
  activationMs?: number;
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
  /**
   * What loading the language-client bundle (dist/lsp.js) and constructing the client took, ms;
   * undefined until the first start (a turn of the event loop after `activate()`). The client
   * benchmark (bench/client-load.mjs) reports it beside `activate()`'s cost.
   */
  getLanguageClientTimings(): import("./ctx").LanguageClientTimings | undefined;
  /** The last run of `gpuPilot.runActiveFile`, or undefined before the first. */
  readonly lastRun?: LastRun;
  /**
   * The checks `gpuPilot.runActiveFile` would make before running `uri` (default: the active editor)
   * with `launcher` (default: `gpuPilot.run.launcher`) on the current selection, without asking or
   * running anything: unknown GPU ids, too many processes, a script that needs torchrun, a script
   * that sets CUDA_VISIBLE_DEVICES itself (a write that takes effect), GPUs busy with other users'
   * processes. The script's facts come from the language server (`gpuPilot/runFacts`); when it
   * cannot answer, the checks that need them are left out (logged).
   */
  checkRun(uri?: Uri, launcher?: LauncherKind): Promise<RunFinding[]>;
  /**
   * The GPU History panel (`gpuPilot.showHistory`): whether it is open and visible, the per-GPU
   * samples and messages posted to it, and the samples and GPUs its webview last reported drawing.
   */
  getHistoryPanelState(): import("./gpu/historyPanel").HistoryPanelState;
  /**
   * The agent tools (agents/lmTools.ts): the names registered through `vscode.lm.registerTool` now
   * (empty when `gpuPilot.agentTools.enabled` is false or the API is missing) and the tool objects
   * themselves (`prepareInvocation`, `invoke`), for tests where `vscode.lm.invokeTool` is unavailable.
   */
  getAgentTools(): { registered: string[]; tools: Record<string, import("./agents/lmTools").AgentTool> };
  /** The Slurm view's data and rows, and the jobs submitted from this window (slurm/features.ts). */
  getSlurmState(): import("./slurm/features").SlurmState;
  /** Queries sinfo and squeue for the Slurm view now. Never rejects. */
  refreshSlurm(): Promise<void>;
  /**
   * `gpuPilot.slurm.submit` without quick picks when `opts.ask` is false: writes the job script for a
   * Python file (and submits it when `opts.submit`), or submits a job script. Refused in Restricted Mode.
   */
  submitToSlurm(
    uri: Uri,
    opts?: import("./slurm/submit").SubmitOptions,
  ): Promise<{ jobId?: string; script?: string } | undefined>;
  /** scancel of one of the user's active jobs, without the modal the command shows. @returns true when scancel ran. */
  cancelSlurmJob(id: string): Promise<boolean>;
}
