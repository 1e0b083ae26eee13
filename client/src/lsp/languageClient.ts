/**
 * The language client, built as a bundle of its own (dist/lsp.js, see esbuild.mjs) and loaded by
 * {@link Ctx} only after `activate()` has returned. vscode-languageclient with
 * vscode-jsonrpc, the LSP protocol types, minimatch and semver is about 420 KiB of the client's
 * code and most of its load time (measured: ~60 ms of ~61 ms for `require` + `activate()` of the
 * old single bundle, BENCHMARKS.md "Client bundle"); VS Code's guidance is that activation does
 * only what must be there at once (its "activation" and "bundling" pages, code.visualstudio.com/api).
 *
 * Rules for this module (checked by esbuild.mjs's lspBundleImports plugin): it imports only
 * `vscode`, vscode-languageclient, common/src/lsp/protocol.ts, common/src/lsp/nodeFlags.ts and client/src/serverRestart.ts, never a
 * client module with state (log.ts, config.ts): what it needs of those the caller passes in
 * {@link LanguageClientOptionsIn}, so nothing is bundled twice.
 */
import type * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import {
  CheckFileRequest,
  type CheckFileParams,
  type CheckFileResult,
  checkRunFactsResult,
  type EditorLintSettings,
  InventoryNotification,
  type InventoryParams,
  RunFactsRequest,
  type RunFactsParams,
  type RunFactsResult,
  SettingsNotification,
} from "../../../common/src/lsp/protocol";
import { type RestartLog, restartingErrorHandler } from "../serverRestart";
import { SERVER_NODE_FLAGS, serverEnvironment } from "../../../common/src/lsp/nodeFlags";

/** LanguageClient id: vscode-languageclient reads `gpuPilot.trace.server` from it. */
export const CLIENT_ID = "gpuPilot";

/** What the caller (ctx.ts) passes: the server file, settings and the output channels it owns. */
export interface LanguageClientOptionsIn {
  /** Absolute path of dist/server.js (started over IPC). */
  serverModule: string;
  /** The lint settings sent as `initializationOptions` (config.lintSettings()). */
  initializationOptions: EditorLintSettings;
  /** The "GPU Pilot" output channel (log.ts's logChannel()). */
  outputChannel: vscode.LogOutputChannel;
  /** The trace channel, only when `gpuPilot.trace.server` is not "off". */
  traceOutputChannel?: vscode.LogOutputChannel;
  /** Where crash and restart lines go (log.ts's `log`). */
  log: RestartLog & { error(message: string, e?: unknown): void };
  /** Watches the files the server re-reads (pyproject.toml, requirements*.txt, environment.yml, job scripts): it keeps each document's options until one changes. */
  fileEvents: vscode.FileSystemWatcher;
  /** Called each time the client reaches the running state (first start and automatic restarts). */
  onRunning: () => void;
  /** The folder for Node.js's compile cache of the server (the extension's global storage); none: no cache. */
  compileCacheDir?: string;
}

/** One language-client instance, as ctx.ts uses it; the protocol's message types stay inside this bundle. */
export interface GpuPilotLanguageClient {
  /** Starts the server; rejects when it cannot start (vscode-languageclient's error). */
  start(): Promise<void>;
  isRunning(): boolean;
  /** Stops a running client (waits at most `timeoutMs`), then disposes it. Rejects as LanguageClient.stop does. */
  stop(timeoutMs: number): Promise<void>;
  /** Disposes the client (after stop). */
  dispose(): Promise<void>;
  /** `gpuPilot/runFacts`, its answer checked with checkRunFactsResult; rejects when the request fails. */
  runFacts(params: RunFactsParams): Promise<RunFactsResult>;
  /** `gpuPilot/checkFile`; rejects when the request fails. */
  checkFile(params: CheckFileParams): Promise<CheckFileResult>;
  /** `gpuPilot/inventory`. */
  sendInventory(params: InventoryParams): Promise<void>;
  /** `gpuPilot/settings`. */
  sendSettings(settings: Partial<EditorLintSettings>): Promise<void>;
  /**
   * A notification the caller names, for the methods whose types live in common/ (dist/lsp.js
   * bundles none of common/: ctx.ts sends `gpuPilot/runningKernel`, common/src/kernel/runningKernel.ts).
   */
  sendNotification(method: string, params: unknown): Promise<void>;
}

/** The port the language server's inspector listens on in debug mode (.vscode/launch.json attaches to it). */
export const SERVER_INSPECT_PORT = 6009;

/**
 * Constructs (does not start) the LanguageClient for dist/server.js with GPU Pilot's document
 * selector (Python files, notebooks, GPU manifests, Slurm job scripts). Throws what
 * LanguageClient's constructor throws.
 */
export function createLanguageClient(o: LanguageClientOptionsIn): GpuPilotLanguageClient {
  // The server with its V8 flags and environment (common/src/lsp/nodeFlags.ts: a young generation of
  // 1 MiB semi-spaces, V8's gc for the idle heap trim, two malloc arenas, the compile cache). When the extension host
  // itself runs under a debugger (vscode-languageclient's debug mode), the server also listens for
  // one on SERVER_INSPECT_PORT (.vscode/launch.json "Attach to Language Server").
  const server = {
    module: o.serverModule,
    transport: TransportKind.ipc,
    options: { execArgv: [...SERVER_NODE_FLAGS], env: serverEnvironment(process.env, o.compileCacheDir) },
  };
  const debug = {
    ...server,
    options: { ...server.options, execArgv: [...SERVER_NODE_FLAGS, `--inspect=${SERVER_INSPECT_PORT}`] },
  };
  const serverOptions: ServerOptions = { run: server, debug };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
      // Manifests that allocate GPUs (GPU018-GPU020): Dockerfiles, compose files, Kubernetes YAML.
      { scheme: "file", language: "dockerfile" },
      { scheme: "file", language: "dockercompose" },
      { scheme: "file", language: "yaml" },
      // Slurm job scripts (GPU021-GPU025): shell scripts (linted when they have #SBATCH lines),
      // and .sbatch/.slurm files, which VS Code gives no shell language by default.
      { scheme: "file", language: "shellscript" },
      { scheme: "file", pattern: "**/*.{sbatch,slurm}" },
      // Dev Container configurations (GPU072: `runArgs`), where the specification looks for them;
      // VS Code gives them `jsonc`, which the path narrows down.
      {
        scheme: "file",
        pattern: "**/{.devcontainer.json,.devcontainer/devcontainer.json,.devcontainer/*/devcontainer.json}",
      },
      // Dotenv files (GPU076: a pydantic BaseSettings env_file), whatever language VS Code gives them.
      { scheme: "file", pattern: "**/{.env,.env.*,*.env}" },
    ],
    initializationOptions: o.initializationOptions,
    // The server re-reads [tool.gpu-pilot] and the torch pin when these change.
    synchronize: { fileEvents: o.fileEvents },
    outputChannel: o.outputChannel,
    ...(o.traceOutputChannel ? { traceOutputChannel: o.traceOutputChannel } : {}),
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // A crashed server is restarted (a few times) and the output channel says so in one line.
    errorHandler: restartingErrorHandler(o.log),
    initializationFailedHandler: (error) => {
      o.log.error("The language server failed to initialise", error);
      return false;
    },
  };
  const client = new LanguageClient(CLIENT_ID, "GPU Pilot", serverOptions, clientOptions);
  const running = client.onDidChangeState((e) => {
    if (e.newState === State.Running) o.onRunning();
  });
  return {
    start: () => client.start(),
    isRunning: () => client.isRunning(),
    stop: async (timeoutMs) => {
      running.dispose();
      if (client.needsStop()) await client.stop(timeoutMs);
    },
    dispose: () => client.dispose(),
    runFacts: (params) => client.sendRequest(RunFactsRequest.type, params).then(checkRunFactsResult),
    checkFile: (params) => client.sendRequest(CheckFileRequest.type, params),
    sendInventory: (params) => client.sendNotification(InventoryNotification.type, params),
    sendSettings: (settings) => client.sendNotification(SettingsNotification.type, settings),
    sendNotification: (method, params) => client.sendNotification(method, params),
  };
}
