/**
 * The extension's context, made by `activate()` (extension.ts): it registers every command, view,
 * provider, status bar item and agent tool with its real code, and owns the language client.
 * Activation only registers: what is heavy (the first nvidia-smi query, the language server's
 * start) waits for the event loop's next turn ({@link Ctx.afterActivation}, {@link Ctx.startServer}),
 * and a command's handler is made at its first call ({@link Ctx.command}).
 *
 * Two lifetimes (after rust-analyzer's client):
 * - the extension: GPU monitor, selection, views, status bar, commands (`extCtx.subscriptions`);
 * - one server instance: the language client (lsp/languageClient.ts, its own bundle dist/lsp.js, loaded
 *   after activation: see {@link Ctx.startServer}) and its state listener, replaced by
 *   `gpuPilot.restartServer` and by a change of a setting the server reads at start.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { codeCacheDir, loadWithCodeCache } from "./boot/codeCache";
import type { CheckFileResult, RunFactsResult } from "../../common/src/lsp/protocol";
import { type AgentHost, type AgentTool, createAgentTools } from "./agents/lmTools";
import { registerAgentTools } from "./agents/register";
import type { ToolName } from "../../common/src/agents/toolNames";
import { type CommandId, commands } from "./commands";
import type { GpuPilotApi, LastRun } from "./api";
import * as config from "./config";
import { HistoryPanel } from "./gpu/historyPanel";
import { GpuMonitor } from "./gpu/monitor";
import { ClaimKeeper } from "../../common/src/gpu/claimKeeper";
import { ledgerDir } from "../../common/src/gpu/claims";
import { toInventoryParams } from "./gpu/present";
import { orderSelection, SelectionStore } from "../../common/src/gpu/selection";
import type { GpuDashboard } from "./gpu/dashboard";
import { createGpuFeatures } from "./gpu/features";
import { registerSelectionFile } from "./gpu/kernelSelection";
import { log, logChannel, traceChannel } from "./log";
import type { GpuPilotLanguageClient } from "./lsp/languageClient";
import { registerRunCodeLens } from "./run/codeLens";
import { checkRunFor, type RunHost } from "./run/runActiveFile";
import { selectionVariables } from "../../common/src/run/launch";
import { runVendor } from "../../common/src/run/plan";
import { findProgram } from "../../common/src/run/which";
import type { GpuRunEnvironment } from "./publicApi";
import { SlurmFeatures } from "./slurm/features";
import { jupyterApi } from "./notebook/jupyterApi";
import { NotebookKernels } from "./notebook/runningKernel";
import { resolveJupyterDataDir } from "../../common/src/kernel/pythonProbe";
import { RUNNING_KERNEL_METHOD, type RunningKernelParams } from "../../common/src/kernel/runningKernel";

/** How long the checks before a run wait for `gpuPilot/runFacts` (ms); then the run goes on without them. */
export const RUN_FACTS_TIMEOUT_MS = 15_000;

/** What loading the language client cost, ms (performance.now()); see {@link loadLanguageClientModule}. */
export interface LanguageClientTimings {
  /** The `require` of dist/lsp.js (in the unit tests: of client/src/lsp/languageClient.ts). */
  loadMs: number;
  /** Constructing the LanguageClient (options, output channels, file watcher), before start(). */
  constructMs: number;
}

/** The code-cache writers of dist/lsp.js loads that found no usable cache ({@link writeLanguageClientCodeCache}). */
const lspCacheWriters: Array<() => boolean> = [];

/** Writes the language-client bundle's code cache where its load found none (at deactivate: a window closed within 10 s of the load). Never throws. */
export function writeLanguageClientCodeCache(): void {
  for (const w of lspCacheWriters.splice(0)) w();
}

/**
 * Loads the language-client module. In the extension this `require` reads dist/lsp.js, a bundle of
 * its own (esbuild.mjs maps the import to "./lsp.js", external): vscode-languageclient and the LSP
 * protocol are most of the client's code, so they are not read while `activate()` runs but when the
 * server is first started, in a later turn of the event loop (see {@link Ctx.startServer}).
 */
export function loadLanguageClientModule(): typeof import("./lsp/languageClient") {
  // The bundle beside dist/client.js, with a code cache of its own (boot/codeCache.ts: written 10 s
  // after the load, or at deactivate); in the unit tests there is none and the source is required.
  const bundled = path.join(__dirname, "lsp.js");
  if (path.basename(__filename) === "client.js" && fs.existsSync(bundled)) {
    const loaded = loadWithCodeCache(bundled, codeCacheDir(process.env));
    lspCacheWriters.push(() => loaded.writeNow());
    return loaded.exports as typeof import("./lsp/languageClient");
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("./lsp/languageClient") as typeof import("./lsp/languageClient");
}

export class Ctx implements RunHost, AgentHost {
  readonly monitor: GpuMonitor;
  readonly selection: SelectionStore;
  /** This window's GPU claims (claimKeeper.ts, docs/claims.md); its ledger is undefined when claims are off. */
  readonly claims: ClaimKeeper;
  /** The "Show GPU History" panel (gpuPilot.showHistory). */
  readonly historyPanel: HistoryPanel;
  /** The dashboard webview view's provider. */
  readonly dashboard: GpuDashboard;
  /** The GPU view, status bar, terminal environment and debug provider, and their API part. */
  private readonly gpuFeatures: ReturnType<typeof createGpuFeatures>;
  private _lastRun: LastRun | undefined;
  private client: GpuPilotLanguageClient | undefined;
  /** Set once the language client's module has been loaded and a client constructed. */
  private timings: LanguageClientTimings | undefined;
  /** Serialises start/stop/restart. */
  private serverOp: Promise<void> = Promise.resolve();
  private lastSentInventory: string | undefined;
  private disposed = false;
  /** The agent tools (language-model tools), see agents/lmTools.ts. */
  readonly agentTools: Record<ToolName, AgentTool>;
  /** Their registration with VS Code, and the MCP server definition's (agents/register.ts). */
  private readonly agents: ReturnType<typeof registerAgentTools>;
  /** The Slurm view, submit, cancel and job output (slurm/features.ts). */
  readonly slurm: SlurmFeatures;
  /** The active notebook's running kernel: its status bar item and the facts sent to the server (issue 42). */
  readonly notebookKernels: NotebookKernels;
  /** The Jupyter data folder, asked once (`jupyter --data-dir` takes a while). */
  private dataDirAnswer: Promise<string> | undefined;
  private readonly handlers = new Map<CommandId, (...args: unknown[]) => unknown>();
  private apiObject: GpuPilotApi | undefined;

  constructor(readonly extCtx: vscode.ExtensionContext) {
    // The run's pid while it runs: its processes are marked "this workspace's run" in the GPU view.
    this.monitor = new GpuMonitor({
      runPid: () => (this._lastRun?.endedAt === undefined ? this._lastRun?.pid : undefined),
    });
    this.selection = new SelectionStore(extCtx.workspaceState);
    const claimSettings = config.claims();
    this.claims = new ClaimKeeper(this.monitor, this.selection, {
      dir: claimSettings.enabled ? ledgerDir(claimSettings.directory) : undefined,
      session: (vscode.env as { sessionId?: string } | undefined)?.sessionId ?? `window-${process.pid}`,
      ttlMs: claimSettings.ttlMs,
      warn: (m) => {
        log.warn(m);
        void vscode.window.showWarningMessage(`GPU Pilot: ${m}`);
      },
      // The ledger's set-up (files read and written) waits for afterActivation or a first use.
      later: true,
    });
    this.gpuFeatures = createGpuFeatures(extCtx, this.monitor, this.selection, this.claims);
    this.dashboard = this.gpuFeatures.dashboard;
    this.historyPanel = new HistoryPanel(extCtx.extensionUri, this.monitor, this.selection, () => this._lastRun);
    // The submit command waits at most 5 s for the script's facts (then keeps the launcher setting).
    this.slurm = new SlurmFeatures(extCtx, (uri, text) => this.runFacts(uri, text, 5000));
    this.agentTools = createAgentTools(this);
    this.agents = registerAgentTools(this.agentTools, extCtx.extensionPath);
    this.notebookKernels = new NotebookKernels({
      globalState: extCtx.globalState,
      jupyter: jupyterApi,
      dataDir: () => this.jupyterDataDir(),
      send: (p) => this.sendRunningKernel(p),
    }).register(vscode.window.onDidChangeActiveNotebookEditor);
    extCtx.subscriptions.push(
      this.notebookKernels,
      this.slurm,
      this.historyPanel,
      this.monitor,
      this.claims,
      ...this.gpuFeatures.disposables,
      ...registerRunCodeLens(this.selection),
      // GPU Pilot kernels read the selection from a file at each start: kept in step here.
      ...registerSelectionFile(
        this.selection,
        (listener) =>
          vscode.window.onDidChangeWindowState((s) => {
            if (s.focused) listener();
          }),
        (m) => log.warn(m),
      ),
      ...this.agents.disposables,
      this.monitor.onDidChange(() => this.sendInventory()),
      this.selection.onDidChange(() => this.sendInventory()),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      ...(Object.keys(commands) as CommandId[]).map((id) => this.registerCommand(id)),
    );
  }

  /**
   * What `activate()` queues for the event loop's next turn: the claims ledger's set-up (unless a
   * first use made it already) and one inventory query, so the language server knows the GPUs even
   * while the view is hidden (the view polls only while visible). The server's own start is queued
   * by `activate()` too ({@link startServer}).
   */
  afterActivation(): void {
    if (this.disposed) return;
    this.claims.start();
    void this.monitor.refresh();
  }

  /** The handler of command `id` (commands.ts), made at its first call. */
  command(id: CommandId): (...args: unknown[]) => unknown {
    let handler = this.handlers.get(id);
    if (!handler) this.handlers.set(id, (handler = commands[id](this)));
    return handler;
  }

  /** The Jupyter data folder (pythonProbe.ts resolveJupyterDataDir), resolved at the first call. */
  jupyterDataDir(): Promise<string> {
    this.dataDirAnswer ??= resolveJupyterDataDir().then((d) => d.dir);
    return this.dataDirAnswer;
  }

  /** A change of settings: restarts the server or sends it the lint settings. */
  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (config.affects(e, config.SERVER_RESTART_KEYS)) {
      log.info("A setting the language server reads at start changed: restarting it.");
      void this.restartServer();
    } else if (config.affects(e, config.LINT_KEYS)) {
      this.sendSettings();
    }
  }

  /** Extension-lifetime disposables (`ExtensionContext.subscriptions`). */
  get subscriptions(): vscode.Disposable[] {
    return this.extCtx.subscriptions;
  }

  /** Workspace state (the run's remembered argument prompt). */
  get workspaceState(): vscode.Memento {
    return this.extCtx.workspaceState;
  }

  /** The last run of `gpuPilot.runActiveFile`. */
  get lastRun(): LastRun | undefined {
    return this._lastRun;
  }

  setLastRun(run: LastRun): void {
    this._lastRun = run;
  }

  /**
   * `gpuPilot/runFacts`: what the script `text` (the document `uri`, for its pyproject settings)
   * does, from the language server's engine (the client bundles no parser). Waits for a start or
   * restart under way; `ok: false` with the reason in words when the server is not running, fails,
   * sends something else, or takes over `timeoutMs` (default {@link RUN_FACTS_TIMEOUT_MS}). Never rejects.
   */
  async runFacts(uri: vscode.Uri, text: string, timeoutMs = RUN_FACTS_TIMEOUT_MS): Promise<RunFactsResult> {
    await this.serverOp;
    const client = this.client;
    if (!client || !client.isRunning())
      return { ok: false, error: "the GPU Pilot language server is not running (see GPU Pilot: Show Output)" };
    let timer: NodeJS.Timeout | undefined;
    // A late answer after the timeout is dropped (the request is not worth cancelling: one parse).
    const timeout = new Promise<RunFactsResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, error: `the language server did not answer within ${timeoutMs / 1000} s` }),
        timeoutMs,
      );
    });
    const asked = client.runFacts({ uri: uri.toString(), text }).then(
      (r) => r,
      (e: unknown): RunFactsResult => ({
        ok: false,
        error: `the language server could not analyse it: ${(e as Error)?.message ?? String(e)}`,
      }),
    );
    try {
      return await Promise.race([asked, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the language client is running. */
  isServerRunning(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /**
   * Starts the language server (dist/server.js over IPC). A missing server file or a failed start
   * is logged, never thrown: GPU view and runs work without it.
   *
   * With `afterActivation` (what `activate()` passes) the start, and with it the load of the
   * language-client bundle (dist/lsp.js, ~60 ms of compile and top-level code), waits for the
   * event loop's next turn (setImmediate), so it is not part of `activate()` nor of the microtasks
   * right after it. It is queued at once: runFacts, checkFile and restartServer called in between
   * wait for it (they await the same queue).
   */
  startServer(afterActivation = false): Promise<void> {
    return this.serialise(async () => {
      if (afterActivation) await new Promise<void>((resolve) => setImmediate(resolve));
      await this.doStart();
    });
  }

  /** What loading and constructing the language client took, once it has been (undefined before). */
  languageClientTimings(): LanguageClientTimings | undefined {
    return this.timings;
  }

  /** Stops the language server if running. Never throws. */
  stopServer(): Promise<void> {
    return this.serialise(() => this.doStop());
  }

  /** `gpuPilot.restartServer`: stop, then start with fresh settings. Never throws. */
  restartServer(): Promise<void> {
    return this.serialise(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  /** `gpuPilot/checkFile` (the agent tool gpu-pilot_checkFile): the language server lints `path` now. Never rejects. */
  async checkFile(path: string): Promise<CheckFileResult> {
    await this.serverOp;
    const client = this.client;
    if (!client || !client.isRunning())
      return { ok: false, path, error: "the GPU Pilot language server is not running (see GPU Pilot: Show Output)" };
    try {
      return await client.checkFile({ path });
    } catch (e) {
      return { ok: false, path, error: `the language server could not check it: ${(e as Error).message}` };
    }
  }

  /**
   * The environment a run on the selected GPUs gets (the public API's `getRunEnvironment`): the
   * vendor of the last inventory (else of the tools on the extension host's PATH) and launch.ts's
   * variables for it; undefined with nothing selected.
   */
  runEnvironment(): GpuRunEnvironment | undefined {
    const ids = this.selection.get();
    if (ids.length === 0) return undefined;
    const vendor = runVendor(this.monitor.inventory, findProgram, process.env.PATH);
    const { env, unset } = selectionVariables(ids, vendor);
    return { vendor, set: env, unset };
  }

  /** The test hooks `activate()` adds with GPU_PILOT_TEST_HOOKS=1 (see api.ts); made once. */
  api(): GpuPilotApi {
    if (this.apiObject) return this.apiObject;
    const lastRun = () => this.lastRun;
    return (this.apiObject = {
      ...this.gpuFeatures.api,
      getSelection: () => this.selection.get(),
      setSelection: (ids: string[]) => this.selection.set(orderSelection(ids, this.monitor.inventory?.gpus ?? [])),
      getInventory: () => this.monitor.inventory,
      getNvidiaSmiState: () => ({ state: this.monitor.state, problem: this.monitor.problem }),
      refresh: () => this.monitor.refresh(),
      isServerRunning: () => this.isServerRunning(),
      get lastRun() {
        return lastRun();
      },
      checkRun: (uri, launcher) => checkRunFor(this, uri, launcher),
      getHistoryPanelState: () => this.historyPanel.getState(),
      getAgentTools: () => ({ registered: this.agents.registered(), tools: this.agentTools }),
      getLanguageClientTimings: () => this.languageClientTimings(),
      getSlurmState: () => this.slurm.state(),
      refreshSlurm: () => this.slurm.refresh(),
      submitToSlurm: (uri, opts) => this.slurm.submit(uri, opts),
      cancelSlurmJob: (id) => this.slurm.cancelJobNow(id),
    });
  }

  /** Stops the server; the rest is disposed through `ExtensionContext.subscriptions`. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.stopServer();
  }

  /** Registers `id`: its handler (made at the first call) runs; errors are logged and shown once, calmly. */
  private registerCommand(id: CommandId): vscode.Disposable {
    return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await this.command(id)(...args);
      } catch (e) {
        log.error(`Command ${id} failed`, e);
        void vscode.window.showErrorMessage(`GPU Pilot: ${(e as Error).message ?? String(e)}`);
        return undefined;
      }
    });
  }

  private serialise(op: () => Promise<void>): Promise<void> {
    const next = this.serverOp.then(op, op);
    this.serverOp = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<void> {
    if (this.client || this.disposed) return;
    const serverModule = this.extCtx.asAbsolutePath("dist/server.js");
    if (!fs.existsSync(serverModule)) {
      log.error(
        `Language server not found at ${serverModule}: linting is off until it is built ("npm run build") and "GPU Pilot: Restart Server" is run.`,
      );
      return;
    }
    const t0 = performance.now();
    const { createLanguageClient } = loadLanguageClientModule();
    const t1 = performance.now();
    const client = createLanguageClient({
      serverModule,
      initializationOptions: config.lintSettings(),
      // What the server's options come from (it keeps them per document until one of these changes):
      // project configuration and pins, and the job scripts and Markdown documents that start Python
      // files (slurmLaunch.ts: Slurm rules, GPU039's node counts).
      fileEvents: vscode.workspace.createFileSystemWatcher(
        "**/{pyproject.toml,requirements*.txt,environment.yml,environment.yaml,*.sbatch,*.slurm,*.sh,*.bash,*.md,*.markdown,*.py}",
      ),
      outputChannel: logChannel(),
      ...(config.traceServer() !== "off" ? { traceOutputChannel: traceChannel() } : {}),
      ...(this.extCtx.globalStorageUri?.fsPath
        ? { compileCacheDir: path.join(this.extCtx.globalStorageUri.fsPath, "node-compile-cache") }
        : {}),
      log,
      onRunning: () => {
        this.lastSentInventory = undefined;
        this.sendInventory();
        for (const p of this.notebookKernels.all()) this.sendRunningKernel(p);
      },
    });
    this.timings = { loadMs: t1 - t0, constructMs: performance.now() - t1 };
    log.info(
      `Language client loaded in ${this.timings.loadMs.toFixed(1)} ms and constructed in ${this.timings.constructMs.toFixed(1)} ms.`,
    );
    this.client = client;
    this.lastSentInventory = undefined;
    try {
      await client.start();
      log.info(`Language server started (${serverModule}).`);
      this.sendInventory();
    } catch (e) {
      log.error("The language server could not be started", e);
      await this.doStop();
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.stop(2000);
    } catch (e) {
      log.warn(`The language server did not stop cleanly: ${(e as Error).message}`);
    }
    try {
      await client.dispose();
    } catch {
      // already stopped
    }
  }

  /** Sends the lint settings to the running server (they change without a restart). */
  private sendSettings(): void {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    client.sendSettings(config.lintSettings()).catch((e: unknown) => {
      log.warn(`Could not send the lint settings to the language server: ${(e as Error).message}`);
    });
  }

  /** Sends `gpuPilot/runningKernel` when the client runs (a server started later gets every known kernel in onRunning). */
  private sendRunningKernel(params: RunningKernelParams): void {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    client.sendNotification(RUNNING_KERNEL_METHOD, params).catch((e: unknown) => {
      log.warn(`Could not send the notebook kernel's state to the language server: ${(e as Error).message}`);
    });
  }

  /** Sends `gpuPilot/inventory` when the client runs and the GPUs or selection changed since the last send. */
  private sendInventory(): void {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    const gpus = this.monitor.state === "ok" ? (this.monitor.inventory?.gpus ?? null) : null;
    const params = toInventoryParams(gpus, this.selection.get());
    const key = JSON.stringify(params);
    if (key === this.lastSentInventory) return;
    this.lastSentInventory = key;
    client.sendInventory(params).catch((e: unknown) => {
      this.lastSentInventory = undefined;
      log.warn(`Could not send the GPU inventory to the language server: ${(e as Error).message}`);
    });
  }
}
