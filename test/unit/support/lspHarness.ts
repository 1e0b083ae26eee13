/** Starts the built language server (dist/server.js --stdio) for a test file and talks LSP to it. */
import { before, after } from "node:test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  ExitNotification,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type Diagnostic,
  type InitializeResult,
  type ClientCapabilities,
} from "vscode-languageserver-protocol/node";
import { ROOT } from "./helpers";
import { SERVER_NODE_FLAGS, serverEnvironment } from "../../../common/src/lsp/nodeFlags";

/** A running server: its connection, what it published, and a bounded wait for diagnostics. */
export interface LspHarness {
  conn: ProtocolConnection;
  published: Map<string, PublishDiagnosticsParams[]>;
  /** The server's answer to `initialize`. */
  init: InitializeResult;
  /** Resolves once the server answered `initialize` (await it in the test file's own hooks). */
  ready: Promise<void>;
  /** Waits (bounded, woken by each publication) until the last diagnostics for `uri` satisfy `pred`. */
  diagnosticsFor(uri: string, pred: (d: Diagnostic[]) => boolean, timeoutMs?: number): Promise<Diagnostic[]>;
}

/** Registers before/after hooks that start and stop one server for the calling test file (the client announces `capabilities`). */
export function useLanguageServer(capabilities: ClientCapabilities = {}): LspHarness {
  let server: ChildProcess;
  const published = new Map<string, PublishDiagnosticsParams[]>();
  const waiters: Array<() => void> = [];
  let markReady!: () => void;
  const h = {
    published,
    ready: new Promise<void>((r) => {
      markReady = r;
    }),
  } as LspHarness;
  h.diagnosticsFor = async (uri, pred, timeoutMs = 10000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const last = published.get(uri)?.at(-1);
      if (last && pred(last.diagnostics)) return last.diagnostics;
      if (Date.now() > deadline) throw new Error(`no matching diagnostics for ${uri}: ${JSON.stringify(last)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  before(async () => {
    const bundle = join(ROOT, "dist", "server.js");
    if (!existsSync(bundle)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
    // With the flags and environment the client starts it with (common/src/lsp/nodeFlags.ts), as users run it.
    server = spawn(process.execPath, [...SERVER_NODE_FLAGS, bundle, "--stdio"], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, ...serverEnvironment(process.env) },
    });
    h.conn = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    h.conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      published.set(p.uri, [...(published.get(p.uri) ?? []), p]);
      waiters.splice(0).forEach((w) => w());
    });
    h.conn.listen();
    h.init = await h.conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities,
      workspaceFolders: null,
    });
    await h.conn.sendNotification(InitializedNotification.type, {});
    markReady();
  });
  after(async () => {
    // Bounded: a server that does not answer `shutdown` (stuck in a lint) fails the file with
    // that said, instead of holding the whole test run until CI's time limit.
    // A server that has died (the test's failure) is not asked: writing to it may never settle.
    if (server.exitCode !== null || server.signalCode !== null) {
      h.conn.dispose();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      h.conn.sendRequest(ShutdownRequest.type).then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((r) => server.once("exit", () => r(true))),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), 20_000);
      }),
    ]);
    clearTimeout(timer);
    if (answered) await h.conn.sendNotification(ExitNotification.type).catch(() => undefined);
    h.conn.dispose();
    server.kill(answered ? "SIGTERM" : "SIGKILL");
    if (!answered) throw new Error("the language server did not answer shutdown within 20 s (stuck?); killed");
  });
  return h;
}
