// Editor latency through the real LSP server process (dist/server.js --stdio): a 5,000-line
// realistic training file, 200 single-character edits (typing), time from didChange to the
// diagnostics of that version. Prints {p50_ms, p95_ms, max_ms, edits, lines} as JSON.
import { spawn } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const rpc = require("vscode-languageserver-protocol/node");

/** A 5,000-line file made of the examples' training code, renamed so each block is distinct. */
export function trainingFile(lines = 5000) {
  const head = 'import os\nimport argparse\nimport torch\nimport torch.nn as nn\nimport torch.distributed as dist\n\n';
  const block = (i) => [
    `def train_step_${i}(model, batch, opt, device="cuda:0"):`,
    `    x, y = batch[0].to(device), batch[1].to(device)`,
    `    loss = nn.functional.cross_entropy(model(x), y)`,
    `    opt.zero_grad(set_to_none=True)`,
    `    loss.backward()`,
    `    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)`,
    `    opt.step()`,
    `    if os.environ.get("DEBUG_${i}"):`,
    `        print("step", ${i}, loss.item(), torch.cuda.max_memory_allocated())`,
    `    return loss.detach()`,
    ``,
  ];
  const out = head.split("\n");
  for (let i = 0; out.length + block(i).length + 4 <= lines; i++) out.push(...block(i));
  out.push('if __name__ == "__main__":', '    print(torch.cuda.is_available())', '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"', "    model = nn.Linear(8, 8).cuda()");
  while (out.length < lines) out.push("");
  return out.slice(0, lines).join("\n") + "\n";
}

export async function measure({ edits = 200 } = {}) {
  const server = spawn(process.execPath, [join(root, "dist", "server.js"), "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(server.stdout), new rpc.StreamMessageWriter(server.stdin));
  const waiting = new Map();
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    const w = waiting.get(p.version);
    if (w) { waiting.delete(p.version); w(process.hrtime.bigint()); }
  });
  conn.listen();
  await conn.sendRequest(rpc.InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {}, workspaceFolders: null });
  await conn.sendNotification(rpc.InitializedNotification.type, {});
  const uri = pathToFileURL(join(root, "bench", "cache", "latency_train.py")).href;
  const text = trainingFile();
  const lineCount = text.split("\n").length - 1;
  const opened = new Promise((r) => waiting.set(1, r));
  await conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: "python", version: 1, text } });
  await opened;
  const times = [];
  // Type into code in the middle of the file, one character per edit: the identifier `loss` of
  // `loss = nn.functional...` grows to `lossxxxx...` (every keystroke changes the program).
  const lines = text.split("\n");
  let line = Math.floor(lineCount / 2);
  while (!lines[line].startsWith("    loss = ")) line++;
  const col = "    loss".length;
  for (let i = 0; i < edits; i++) {
    const version = i + 2;
    const done = new Promise((r) => waiting.set(version, r));
    const t0 = process.hrtime.bigint();
    await conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: [{ range: { start: { line, character: col + i }, end: { line, character: col + i } }, text: "x" }],
    });
    const t1 = await done;
    times.push(Number(t1 - t0) / 1e6);
  }
  await conn.sendRequest(rpc.ShutdownRequest.type).catch(() => undefined);
  await conn.sendNotification(rpc.ExitNotification.type).catch(() => undefined);
  conn.dispose();
  server.kill();
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
  return { p50_ms: +pct(50).toFixed(2), p95_ms: +pct(95).toFixed(2), max_ms: +times[times.length - 1].toFixed(2), edits, lines: lineCount };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  measure().then((r) => console.log(JSON.stringify(r)));
}
