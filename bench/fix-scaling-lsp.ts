/**
 * For bench/fix-scaling.ts: starts the built language server (dist/server.js --stdio), opens one
 * Python document and times the quick-fix code action request for its first diagnostic (what a
 * light-bulb click asks), wall time in ms, after the diagnostics arrived. The client resolves
 * edits on demand, as VS Code does.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  PublishDiagnosticsNotification,
  DidOpenTextDocumentNotification,
  CodeActionRequest,
  ShutdownRequest,
  ExitNotification,
  type Diagnostic,
} from "vscode-languageserver-protocol/node";

const ROOT = join(__dirname, "..");

/** Opens `text` as file:///bench/big.py and times one quick-fix request (the median of 3). */
export async function measureCodeAction(text: string): Promise<{ findings: number; ms: number }> {
  const server = spawn(process.execPath, [join(ROOT, "dist", "server.js"), "--stdio"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const conn = createProtocolConnection(
    new StreamMessageReader(server.stdout!),
    new StreamMessageWriter(server.stdin!),
  );
  conn.listen();
  const uri = "file:///bench/big.py";
  const got = new Promise<Diagnostic[]>((resolve) =>
    conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      if (p.uri === uri && p.diagnostics.length) resolve(p.diagnostics);
    }),
  );
  await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: null,
    capabilities: { textDocument: { codeAction: { resolveSupport: { properties: ["edit"] } } } },
    initializationOptions: { maxFileSizeKB: 0 },
  });
  await conn.sendNotification(InitializedNotification.type, {});
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  const diagnostics = await got;
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await conn.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: diagnostics[0].range,
      context: { diagnostics: [diagnostics[0]] },
    });
    times.push(performance.now() - t);
  }
  await conn.sendRequest(ShutdownRequest.type);
  await conn.sendNotification(ExitNotification.type);
  server.kill();
  return { findings: diagnostics.length, ms: times.sort((a, b) => a - b)[1] };
}
