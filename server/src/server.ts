/**
 * The GPU Pilot language server (wiring only): keeps documents and notebooks in sync, lints them
 * with the engine (serially, coalescing rapid edits), publishes diagnostics with code,
 * codeDescription and relatedInformation, and answers code actions (the rules' quick fixes,
 * `# noqa` suppression, rule documentation, `source.fixAll.gpuPilot`) and hovers on noqa codes.
 *
 * What it keeps per document lives in one object per URI, the {@link Session}'s OpenDocument
 * (session.ts); the handlers are in handlers/: diagnostics.ts (a lint to its publication),
 * lintQueue.ts (which document is linted when), codeActions.ts, hover.ts, inlayHints.ts,
 * requests.ts (gpuPilot/checkFile, gpuPilot/runFacts), notifications.ts (settings, watched files,
 * inventory, running kernel) and documents.ts (open, change, close).
 *
 * `node dist/server.js mcp [flags]` is not the language server but `gpu-pilot mcp` (mcp/command.ts,
 * the same flags and behaviour as the CLI's): the MCP server the extension registers with VS Code
 * (client/src/agents/register.ts), so that the .vsix needs no second bundle of the engine (dist/cli.js).
 * Its code is loaded by `import()` for that command only: in the bundle, a require of dist/mcp.js
 * beside this one (esbuild.mjs mcpOutOfServer), so the language server's start neither runs nor
 * reads it; the engine is this bundle's, handed in (mcp/engine.ts).
 */
import {
  createConnection,
  ProposedFeatures,
  TextDocumentSyncKind,
  CodeActionKind,
  type InitializeParams,
  type InitializeResult,
  IPCMessageReader,
  StreamMessageReader,
  type MessageReader,
} from "vscode-languageserver/node";
import { initEngine } from "./engine/lint";
import { checkEditorSettings } from "../../common/src/lsp/protocol";
import { UNSAFE_FIXES_KIND } from "../../common/src/lsp/commandIds";
import { ChangeBacklog } from "./scheduling";
import { Session } from "./session";
import { pathOf, ServerContext } from "./handlers/context";
import { LintQueue } from "./handlers/lintQueue";
import { registerCodeActions } from "./handlers/codeActions";
import { registerHover } from "./handlers/hover";
import { registerInlayHints } from "./handlers/inlayHints";
import { registerRequests } from "./handlers/requests";
import { registerNotifications } from "./handlers/notifications";
import { registerDocumentSync } from "./handlers/documents";
import { mcpCheckFile } from "./mcp/engine";

/** The server's version (the LSP and MCP initialize answers' serverInfo). */
const VERSION = "0.1.0";

/**
 * A second reader on the transport the connection chose from the command line (`--stdio`,
 * `--node-ipc`), which only notes arrivals in the change backlog. With another transport (socket,
 * pipe) there is none: every lint then counts as current, as before.
 */
function observeArrivals(): MessageReader | null {
  if (process.argv.includes("--node-ipc")) return new IPCMessageReader(process);
  if (process.argv.includes("--stdio")) return new StreamMessageReader(process.stdin);
  return null;
}

/**
 * The initialize answer: takes the client's settings, roots and capabilities into the session; the
 * lints wait for the parser, whose load (`engine`: null once loaded, else what it failed with)
 * started with the process.
 */
function initialize(params: InitializeParams, ctx: ServerContext, engine: Promise<unknown>): InitializeResult {
  const { session, connection } = ctx;
  session.clientResolvesEdits =
    params.capabilities.textDocument?.codeAction?.resolveSupport?.properties.includes("edit") ?? false;
  const init = checkEditorSettings(params.initializationOptions);
  session.settings = init.value;
  for (const p of init.problems)
    connection.console.warn(`GPU Pilot: initializationOptions: ${p}; the default is used.`);
  session.workspaceRoots = [
    ...(params.workspaceFolders ?? []).map((f) => pathOf(f.uri)),
    ...(params.workspaceFolders ? [] : [params.rootUri ? pathOf(params.rootUri) : null]),
  ].filter((p): p is string => p !== null);
  ctx.engineReady = engine.then((e) => {
    if (e !== null)
      connection.console.error(
        `GPU Pilot could not load its Python parser: ${e instanceof Error ? e.message : String(e)}`,
      );
  });
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      // Every cell, markdown included (no `cells` filter): the client drops the cells a filter does
      // not match, and the engine's cell numbers ("cell 2, line 4") must be the ones VS Code shows
      // (the position among all cells, as the CLI counts them in the .ipynb). Non-Python cells are
      // markup to the engine (cellsOf).
      notebookDocumentSync: { notebookSelector: [{ notebook: { notebookType: "jupyter-notebook" } }] },
      codeActionProvider: {
        codeActionKinds: [CodeActionKind.QuickFix, `${CodeActionKind.SourceFixAll}.gpuPilot`, UNSAFE_FIXES_KIND],
        resolveProvider: true,
      },
      hoverProvider: true,
      inlayHintProvider: true,
    },
    serverInfo: { name: "gpu-pilot", version: VERSION },
  };
}

/** Starts the language server on the transport named on the command line (`--node-ipc`, `--stdio`, ...). */
function startLanguageServer(): void {
  /** Changes read from the transport but not yet dispatched, per document (see scheduling.ts). */
  const backlog = new ChangeBacklog();
  const connection = createConnection(ProposedFeatures.all, {
    messageStrategy: {
      handleMessage: (message, next) => {
        backlog.dispatched(message);
        return next(message);
      },
    },
  });
  const session = new Session();
  const ctx = new ServerContext(connection, session, backlog);
  const queue = new LintQueue(ctx);
  // The parser (tree-sitter's WebAssembly runtime and the Python grammar) loads from now on, while
  // the client's initialize is read and answered, instead of from the initialize answer on: the
  // first file's didOpen follows that answer at once, and its lint waited for the load (measured:
  // the first lint's wait, median of 10 starts, 21 ms before, 3 ms after; BENCHMARKS.md).
  const engine = initEngine().then(
    () => null,
    (e: unknown) => e,
  );
  connection.onInitialize((params) => initialize(params, ctx, engine));
  registerDocumentSync(ctx, queue);
  registerNotifications(ctx, queue);
  registerCodeActions(ctx);
  registerHover(ctx);
  registerInlayHints(ctx);
  registerRequests(ctx);

  connection.listen();
  // Edits pass through the kept syntax trees first (to edit them), then to TextDocuments.
  session.listen(connection);
  observeArrivals()?.listen((message) => backlog.arrived(message));
}

if (process.argv[2] === "mcp") {
  const argv = process.argv.slice(3);
  void import("./mcp/command").then(({ runMcpAsCommand }) => runMcpAsCommand(argv, VERSION, mcpCheckFile));
} else {
  startLanguageServer();
}
