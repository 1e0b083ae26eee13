/**
 * What `activate()` runs (kept small for load time): the registrations VS Code needs from an active
 * extension, with thin stand-ins for the code behind them, which is the bundle dist/features.js
 * (ctx.ts and everything it imports: monitor, GPU view, dashboard, history panel, Slurm, runs, agent
 * tools, the language client's management). {@link Shell.load} requires it, synchronously, the first
 * time anything needs it (a command, the GPU or Slurm view's getChildren, the dashboard's
 * resolveWebviewView, a CodeLens request, an agent tool, an API call) and in any case a turn of the
 * event loop after activation (extension.ts: the first inventory query, the language server's start).
 *
 * Here at activation, as before the split: the selection (workspace state), the status bar item,
 * the terminal environment and the Python debug configuration provider (they need only the
 * selection, and the inventory once there is one: {@link LateMonitor}), the sinfo probe and its
 * context key, the views, the dashboard's provider, the CodeLens providers, the agent tools and the
 * MCP server definition, the configuration listener, the commands.
 *
 * This file and what it imports are dist/client.js; dist/features.js takes those modules from it
 * (shared.ts, esbuild.mjs), so each exists once.
 */
import * as vscode from "vscode";
import type { GpuPilotApi } from "./api";
import { registerAgentTools } from "./agents/register";
import type { Ctx } from "./ctx";
import { registerSelectionEnvironment } from "./gpu/environment";
import { registerSelectionFile } from "./gpu/kernelSelection";
import type { GpuEarly } from "./gpu/features";
import type { InventorySource } from "./gpu/monitor";
import { SelectionStore } from "../../common/src/gpu/selection";
import { createSelectionStatusBar } from "./gpu/statusBar";
import type { GpuTreeNode } from "./gpu/tree";
import { log } from "./log";
import type { SlurmEarly } from "./slurm/features";
import type { SlurmNode } from "./slurm/view";
import {
  createLateTreeView,
  DASHBOARD_VIEW_ID,
  GPU_VIEW_ID,
  GPU_VIEW_OPTIONS,
  LateCodeLensProvider,
  probeSlurm,
  RUN_CODELENS_SELECTOR,
  SLURM_VIEW_ID,
  SLURM_VIEW_OPTIONS,
  SUBMIT_CODELENS_SELECTOR,
} from "./views";
import { SHOW_RULE_DOC_COMMAND } from "../../common/src/lsp/commandIds";
import { RESTART_KERNEL_COMMAND } from "../../common/src/kernel/commandIds";

/** The commands of package.json; their handlers are commands.ts's (dist/features.js). */
export const COMMAND_IDS = [
  "gpuPilot.refreshGpus",
  "gpuPilot.selectGpus",
  "gpuPilot.clearSelection",
  "gpuPilot.pickFreeGpus",
  "gpuPilot.showHistory",
  "gpuPilot.stopProcess",
  "gpuPilot.runActiveFile",
  "gpuPilot.runActiveFileWith",
  "gpuPilot.restartServer",
  "gpuPilot.showOutput",
  "gpuPilot.slurm.submit",
  "gpuPilot.slurm.refresh",
  "gpuPilot.slurm.cancel",
  "gpuPilot.slurm.openOutput",
  "gpuPilot.fixAll",
  "gpuPilot.applyUnsafeFixes",
  SHOW_RULE_DOC_COMMAND,
  "gpuPilot.installKernel",
  "gpuPilot.removeKernel",
  "gpuPilot.waitForFreeGpus",
  RESTART_KERNEL_COMMAND,
] as const;
/** A command id of {@link COMMAND_IDS}. */
export type CommandId = (typeof COMMAND_IDS)[number];

/** What loading dist/features.js cost, ms (performance.now()); see {@link Shell.load}. */
export interface FeaturesTimings {
  /** The `require` of dist/features.js (in the unit tests: of client/src/features.ts). */
  loadMs: number;
  /** Constructing the features (features.ts createFeatures: the monitor, views' providers, ...). */
  constructMs: number;
}

/**
 * Loads the features module. In the extension this `require` reads dist/features.js, a bundle of
 * its own (esbuild.mjs maps the import to "./features.js", external).
 */
export function loadFeaturesModule(): typeof import("./features") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("./features") as typeof import("./features");
}

/**
 * The monitor as the status bar and the terminal environment see it until dist/features.js has
 * made the real one (no inventory: none is known before the first query, which runs after the load).
 */
export class LateMonitor implements InventorySource, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private target: InventorySource | undefined;

  get inventory(): InventorySource["inventory"] {
    return this.target?.inventory;
  }

  /** Follows `monitor` from now on. @returns the relay's subscription. */
  attach(monitor: InventorySource): vscode.Disposable {
    this.target = monitor;
    const sub = monitor.onDidChange(() => this.emitter.fire());
    this.emitter.fire();
    return sub;
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** The methods of {@link GpuPilotApi} (every one, once: the type checks it). */
type ApiMethod = {
  [K in keyof GpuPilotApi]-?: NonNullable<GpuPilotApi[K]> extends (...args: never[]) => unknown ? K : never;
}[keyof GpuPilotApi];
const API_METHODS: Record<ApiMethod, true> = {
  getTreeRows: true,
  getProcesses: true,
  pickFreeGpus: true,
  getTerminalEnvironment: true,
  resolveDebugConfiguration: true,
  getStatusBarText: true,
  getMonitorStatus: true,
  getDashboardState: true,
  clickInDashboard: true,
  getSelection: true,
  setSelection: true,
  getInventory: true,
  getNvidiaSmiState: true,
  refresh: true,
  isServerRunning: true,
  getLanguageClientTimings: true,
  getFeaturesTimings: true,
  checkRun: true,
  getHistoryPanelState: true,
  getAgentTools: true,
  getSlurmState: true,
  refreshSlurm: true,
  submitToSlurm: true,
  cancelSlurmJob: true,
};

/** The registrations of one activation; {@link load} makes the features behind them. */
export class Shell {
  readonly selection: SelectionStore;
  /** The monitor for the status bar and the terminal environment (the real one attaches at load). */
  readonly monitor = new LateMonitor();
  /** The GPU view and the environment, for gpu/features.ts. */
  readonly gpu: GpuEarly;
  /** The sinfo probe's answer, the Slurm view and the submit CodeLens, for slurm/features.ts. */
  readonly slurm: SlurmEarly;
  /** The run CodeLens stand-in, for run/codeLens.ts. */
  readonly runCodeLens: LateCodeLensProvider;
  /** The agent tools' registration (agents/register.ts). */
  readonly agents: ReturnType<typeof registerAgentTools>;
  private features: Ctx | undefined;
  private timings: FeaturesTimings | undefined;
  private disposed = false;
  private loading = false;

  constructor(readonly extCtx: vscode.ExtensionContext) {
    const load = () => void this.load();
    this.selection = new SelectionStore(extCtx.workspaceState);
    const gpuView = createLateTreeView<GpuTreeNode>(GPU_VIEW_ID, GPU_VIEW_OPTIONS, load);
    const dashboard = vscode.window.registerWebviewViewProvider(DASHBOARD_VIEW_ID, {
      resolveWebviewView: (view) => this.load().dashboard.resolveWebviewView(view),
    });
    const collection = (extCtx as { environmentVariableCollection?: vscode.GlobalEnvironmentVariableCollection })
      .environmentVariableCollection;
    const env = registerSelectionEnvironment(collection, this.selection, this.monitor);
    this.gpu = { view: gpuView, env };
    const statusBar = createSelectionStatusBar(this.selection, this.monitor);
    // GPU Pilot kernels read the selection from a file at each start: kept in step here.
    const kernelFile = registerSelectionFile(
      this.selection,
      (listener) =>
        vscode.window.onDidChangeWindowState((s) => {
          if (s.focused) listener();
        }),
      (m) => log.warn(m),
    );
    const available = probeSlurm();
    const slurmView = createLateTreeView<SlurmNode>(SLURM_VIEW_ID, SLURM_VIEW_OPTIONS, load);
    const submitLens = new LateCodeLensProvider(load, false);
    this.slurm = { available, view: slurmView, codeLens: submitLens };
    this.runCodeLens = new LateCodeLensProvider(load, true);
    this.agents = registerAgentTools(() => this.load().agentTools, extCtx.extensionPath);
    extCtx.subscriptions.push(
      this.monitor,
      ...gpuView.disposables,
      dashboard,
      ...env.disposables,
      ...statusBar,
      ...kernelFile,
      ...slurmView.disposables,
      submitLens,
      vscode.languages.registerCodeLensProvider(SUBMIT_CODELENS_SELECTOR, submitLens),
      this.runCodeLens,
      vscode.languages.registerCodeLensProvider(RUN_CODELENS_SELECTOR, this.runCodeLens),
      ...this.agents.disposables,
      // Before the load nothing reads a setting that changed: the features read them when made.
      vscode.workspace.onDidChangeConfiguration((e) => this.features?.onConfigurationChanged(e)),
      ...COMMAND_IDS.map((id) => this.registerCommand(id)),
    );
  }

  /**
   * The features (dist/features.js, ctx.ts's {@link Ctx}), made at the first call: the `require`
   * and the construction run synchronously, so any stand-in answers at once.
   * @throws when called after deactivation, or when dist/features.js cannot be loaded.
   */
  load(): Ctx {
    if (this.features) return this.features;
    if (this.disposed) throw new Error("GPU Pilot is deactivated");
    // A stand-in asked while the features are being made would make a second set: never.
    if (this.loading) throw new Error("GPU Pilot's features are being loaded (a stand-in was asked meanwhile)");
    this.loading = true;
    const t0 = performance.now();
    let t1 = t0;
    try {
      const { createFeatures } = loadFeaturesModule();
      t1 = performance.now();
      this.features = createFeatures(this);
    } finally {
      this.loading = false;
    }
    this.timings = { loadMs: t1 - t0, constructMs: performance.now() - t1 };
    log.info(
      `Features loaded in ${this.timings.loadMs.toFixed(1)} ms and constructed in ${this.timings.constructMs.toFixed(1)} ms.`,
    );
    return this.features;
  }

  /** What {@link load} cost; undefined before it ran. */
  featuresTimings(): FeaturesTimings | undefined {
    return this.timings;
  }

  /**
   * What `activate()` queues for the event loop's next turn: the features (and with them the
   * language server's start, ctx.ts startServer) and one inventory query, so the language server
   * knows the GPUs even while the view is hidden (the view polls only while visible). Never throws.
   */
  afterActivation(): void {
    if (this.disposed) return;
    try {
      void this.load().monitor.refresh();
    } catch (e) {
      log.error("GPU Pilot could not load its features (dist/features.js)", e);
    }
  }

  /** The object `activate()` returns: every method loads the features, except those that need none. */
  api(): GpuPilotApi {
    const real = () => this.load().api();
    const api = {} as Record<string, unknown>;
    for (const name of Object.keys(API_METHODS) as ApiMethod[]) {
      api[name] = (...args: unknown[]) => (real()[name] as (...a: unknown[]) => unknown)(...args);
    }
    api.getSelection = () => this.selection.get();
    api.getFeaturesTimings = () => this.featuresTimings();
    Object.defineProperty(api, "gpuTreeProvider", { enumerable: true, get: () => real().gpuTreeProvider });
    // No features, no run.
    Object.defineProperty(api, "lastRun", { enumerable: true, get: () => this.features?.lastRun });
    return api as unknown as GpuPilotApi;
  }

  /** Stops the server (if the features were made); the rest is disposed through `ExtensionContext.subscriptions`. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.features?.dispose();
  }

  /** Registers `id`: the handler is the features' (loaded at the first call); errors are logged and shown once, calmly. */
  private registerCommand(id: CommandId): vscode.Disposable {
    return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await this.load().command(id)(...args);
      } catch (e) {
        log.error(`Command ${id} failed`, e);
        void vscode.window.showErrorMessage(`GPU Pilot: ${(e as Error).message ?? String(e)}`);
        return undefined;
      }
    });
  }
}
