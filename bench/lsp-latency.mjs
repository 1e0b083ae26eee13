// Editor measurements through the real LSP server process (dist/server.js --stdio), issue 20:
// - measure():      200 single-character edits typed into a 5,000-line training file, each awaited:
//                   time from didChange to the diagnostics of that version (p50, p95, max);
// - ruffLatency():  Ruff's WebAssembly build in this process, warmed up, checking the same file
//                   after the same edits (Ruff's CLI default rules): time per check;
// - typing():       40 characters typed at 10 per second without waiting: time from the last key to
//                   the diagnostics of the last version, and how many lints the server ran (its
//                   `$/logTrace` lines);
// - memory():       20 open 5,000-line documents, 1,000 edits (each linted), the server's RSS and
//                   heap after a GC at each stage (bench/memory-probe.mjs inside the server).
// Run alone it prints measure()'s result as JSON.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const rpc = require("vscode-languageserver-protocol/node");

/** A 5,000-line file made of the examples' training code, renamed so each block is distinct. */
export function trainingFile(lines = 5000) {
  const head = "import os\nimport argparse\nimport torch\nimport torch.nn as nn\nimport torch.distributed as dist\n\n";
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
  out.push(
    'if __name__ == "__main__":',
    "    print(torch.cuda.is_available())",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "    model = nn.Linear(8, 8).cuda()",
  );
  while (out.length < lines) out.push("");
  return out.slice(0, lines).join("\n") + "\n";
}

/**
 * A flat script of `lines` lines: the same training steps written at module level, as a script
 * exported from a notebook is (thousands of top-level statements instead of hundreds of functions),
 * with a late CUDA_VISIBLE_DEVICES write at the end (one finding).
 */
export function flatScript(lines = 5000) {
  const out = [
    "import os",
    "import torch",
    "import torch.nn as nn",
    "model = nn.Linear(8, 8).cuda()",
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
    'device = "cuda:0"',
  ];
  for (let i = 0; out.length + 6 <= lines - 1; i++)
    out.push(
      `x_${i} = torch.randn(4, 8, device=device)`,
      `loss_${i} = model(x_${i}).sum()`,
      `loss_${i}.backward()`,
      "opt.step()",
      `print("step", ${i}, loss_${i}.item())`,
      "",
    );
  out.push('os.environ["CUDA_VISIBLE_DEVICES"] = "1"');
  while (out.length < lines) out.push("");
  return out.slice(0, lines).join("\n") + "\n";
}

/**
 * Where the edits go: the identifier `loss` of a `loss = nn.functional...` line in the middle of
 * the file grows to `lossxxxx...` (every keystroke changes the program). Returns {line, col}.
 */
function typingSpot(text) {
  const lines = text.split("\n");
  let line = Math.floor((lines.length - 1) / 2);
  while (!lines[line].startsWith("    loss = ") && !/^loss_\d+ = /.test(lines[line])) line++;
  return { line, col: lines[line].indexOf("loss") + "loss".length };
}

/**
 * Node options for the server from GPU_PILOT_BENCH_SERVER_ARGS (space-separated), e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it (Node refuses --cpu-prof in NODE_OPTIONS).
 */
function serverArgs() {
  return (process.env.GPU_PILOT_BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean);
}

/**
 * Starts the server; returns {conn, server, waitVersion(uri, v) -> Promise<bigint hrtime>, traces,
 * published(uri) -> versions, stop()}. `nodeArgs` go before the bundle (e.g. --expose-gc).
 */
async function startServer({
  nodeArgs = [],
  env = process.env,
  trace = false,
  serverPath = join(root, "dist", "server.js"),
} = {}) {
  // The environment the client adds to the server's (common/src/lsp/nodeFlags.ts serverEnvironment), as users run it.
  const server = spawn(process.execPath, [...nodeArgs, ...serverArgs(), serverPath, "--stdio"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...env, ...(await serverEnvironmentOf(env)) },
  });
  const conn = rpc.createProtocolConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin),
  );
  const waiting = new Map();
  const versions = new Map();
  const traces = [];
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    const at = process.hrtime.bigint();
    versions.set(p.uri, [...(versions.get(p.uri) ?? []), p.version]);
    const key = `${p.uri}#${p.version}`;
    const w = waiting.get(key);
    if (w) {
      waiting.delete(key);
      w(at);
    }
  });
  const traceWaits = [];
  conn.onNotification(rpc.LogTraceNotification.type, (p) => {
    const at = process.hrtime.bigint();
    traces.push(p.message);
    const k = traceWaits.findIndex((w) => p.message.startsWith(w.prefix));
    if (k >= 0) traceWaits.splice(k, 1)[0].resolve(at);
  });
  conn.listen();
  await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    rootUri: null,
    capabilities: {},
    workspaceFolders: null,
  });
  await conn.sendNotification(rpc.InitializedNotification.type, {});
  if (trace) await conn.sendNotification(rpc.SetTraceNotification.type, { value: "messages" });
  return {
    conn,
    server,
    traces,
    published: (uri) => versions.get(uri) ?? [],
    waitVersion: (uri, version) => new Promise((r) => waiting.set(`${uri}#${version}`, r)),
    /** Opens `uri` (Python, version 1, `text`) and resolves once its first diagnostics arrive. */
    async open(uri, text) {
      const opened = this.waitVersion(uri, 1);
      await conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "python", version: 1, text },
      });
      await opened;
    },
    /** Resolves (hrtime) when a `$/logTrace` line starting with `prefix` arrives (needs `trace`). */
    waitTrace: (prefix) => new Promise((resolve) => traceWaits.push({ prefix, resolve })),
    async stop() {
      await conn.sendRequest(rpc.ShutdownRequest.type).catch(() => undefined);
      await conn.sendNotification(rpc.ExitNotification.type).catch(() => undefined);
      // The server exits on `exit`; a kill only after 2 s (an exit of its own writes --cpu-prof profiles).
      await new Promise((resolve) => {
        const t = setTimeout(resolve, 2000);
        server.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
      });
      conn.dispose();
      server.kill();
    },
  };
}

/**
 * The Node/V8 flags the extension's client starts the language server with
 * (common/src/lsp/nodeFlags.ts SERVER_NODE_FLAGS, read through tsx), so the benchmarks run the server
 * as users do. `at`: another checkout's root (its own flags; [] where it has none).
 */
export async function serverNodeFlags(at = root) {
  return [...((await nodeFlagsModule(at))?.SERVER_NODE_FLAGS ?? [])];
}

/**
 * common/src/lsp/nodeFlags.ts of the checkout at `at` (server/src/nodeFlags.ts in a checkout from before
 * the roots were separated), read through tsx, or null where it has none.
 */
async function nodeFlagsModule(at) {
  const file = [join(at, "common", "src", "lsp", "nodeFlags.ts"), join(at, "server", "src", "nodeFlags.ts")].find((f) =>
    existsSync(f),
  );
  if (!file) return null;
  const { tsImport } = await import("tsx/esm/api");
  return tsImport(pathToFileURL(file).href, import.meta.url);
}

/**
 * The variables the extension's client adds to the server's environment (common/src/lsp/nodeFlags.ts
 * serverEnvironment), given `parent`; the compile cache (where the checkout's version has one) in
 * bench/cache/node-compile-cache, as the client keeps it in the extension's global storage.
 */
export async function serverEnvironmentOf(parent = process.env, at = root) {
  const m = await nodeFlagsModule(at);
  return m?.serverEnvironment ? m.serverEnvironment(parent, join(root, "bench", "cache", "node-compile-cache")) : {};
}

const insertAt = (line, character, text) => ({ range: { start: { line, character }, end: { line, character } }, text });
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (times) => {
  const s = [...times].sort((a, b) => a - b);
  return { p50_ms: +pct(s, 50).toFixed(2), p95_ms: +pct(s, 95).toFixed(2), max_ms: +s[s.length - 1].toFixed(2) };
};

/**
 * Every `    loss = ` line of the file (one per training function), in an order that jumps around
 * the file: each next one 37 functions further on (mod their count), so consecutive edits are
 * far apart. [{line, col}].
 */
function scatteredSpots(text) {
  const spots = [];
  text.split("\n").forEach((l, line) => {
    if (l.startsWith("    loss = ")) spots.push({ line, col: "    loss".length });
  });
  return spots.map((_, i) => spots[(i * 37) % spots.length]);
}

/**
 * didChange -> diagnostics of that version, `edits` single-character edits, each awaited, after
 * `warmup` edits made the same way and timed apart (`first`): Ruff-wasm gets 20 warm-up checks
 * ({@link ruffLatency}), so the server gets 20 edits before the timed ones too, and what a user
 * meets right after opening a file is reported as its own row instead of hidden in the p95.
 * `serverPath`: another build of the server (to compare two versions in one run).
 * `scattered`: each edit in another function of the file ({@link scatteredSpots}), as a user who
 * moves around types, instead of all at one spot. `flat`: the file is {@link flatScript} instead.
 * `lines`: the file's length (the fixed cost of an edit shows on a short one).
 */
export async function measure({
  edits = 200,
  warmup = 20,
  serverPath,
  serverFlags,
  serverTimes = false,
  scattered = false,
  flat = false,
  lines = 5000,
} = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()), trace: serverTimes });
  const uri = pathToFileURL(join(root, "bench", "cache", "latency_train.py")).href;
  const text = flat ? flatScript(lines) : trainingFile(lines);
  const lineCount = text.split("\n").length - 1;
  await s.open(uri, text);
  const spots = scattered ? scatteredSpots(text) : [typingSpot(text)];
  if (spots.length === 0)
    throw new Error(
      "measure: scattered needs the function-structured file (the flat script has no `    loss = ` lines)",
    );
  const typed = spots.map(() => 0);
  const times = [];
  for (let i = 0; i < warmup + edits; i++) {
    const version = i + 2;
    const k = i % spots.length;
    const { line, col } = spots[k];
    const done = s.waitVersion(uri, version);
    const t0 = process.hrtime.bigint();
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: [insertAt(line, col + typed[k]++, "x")],
    });
    times.push(Number((await done) - t0) / 1e6);
  }
  await s.stop();
  const first = warmup ? { first: { ...summary(times.slice(0, warmup)), edits: warmup } } : {};
  times.splice(0, warmup);
  if (!serverTimes) return { ...summary(times), edits, lines: lineCount, ...first };
  // The server's own lint time per version (its `$/logTrace` lines), to split engine from transport.
  const lints = s.traces
    .map((m) => /^lint \S+ version (\d+): ([\d.]+) ms$/.exec(m))
    .filter((m) => m && Number(m[1]) >= 2 + warmup)
    .map((m) => Number(m[2]));
  return {
    ...summary(times),
    edits,
    lines: lineCount,
    ...first,
    server_lint: lints.length ? { ...summary(lints), lints: lints.length } : null,
  };
}

/**
 * The 5,000-line training file ({@link trainingFile}) as a notebook: cells of 25 lines (201 code
 * cells), the first starting with an IPython line (`%env CUDA_DEVICE_ORDER=PCI_BUS_ID`). Returns
 * {cells: string[], spot: {cell, line, col}}: where the edits go, `loss` in the middle cell.
 */
export function trainingNotebook(lines = 5000) {
  const src = trainingFile(lines).split("\n");
  const cells = [];
  for (let i = 0; i < src.length; i += 25) cells.push(src.slice(i, i + 25).join("\n"));
  cells[0] = "%env CUDA_DEVICE_ORDER=PCI_BUS_ID\n" + cells[0];
  let cell = Math.floor(cells.length / 2);
  while (!cells[cell].split("\n").some((l) => l.startsWith("    loss = "))) cell++;
  const cellLines = cells[cell].split("\n");
  const line = cellLines.findIndex((l) => l.startsWith("    loss = "));
  return { cells, spot: { cell, line, col: "    loss".length } };
}

/**
 * Opens {@link trainingNotebook} as bench/cache/`name` on server `s` (with `trace`) and waits for
 * the lint of its version 1; returns its URI, its cells' URIs, the cells and the edit spot.
 */
async function openTrainingNotebook(s, name) {
  const file = join(root, "bench", "cache", name);
  const nbUri = pathToFileURL(file).href;
  const cellUri = (i) => `vscode-notebook-cell:${file}#cell${i}`;
  const { cells, spot } = trainingNotebook();
  const opened = s.waitTrace(`lint ${nbUri} version 1:`);
  await s.conn.sendNotification(rpc.DidOpenNotebookDocumentNotification.type, {
    notebookDocument: {
      uri: nbUri,
      notebookType: "jupyter-notebook",
      version: 1,
      cells: cells.map((_, i) => ({ kind: rpc.NotebookCellKind.Code, document: cellUri(i) })),
    },
    cellTextDocuments: cells.map((text, i) => ({ uri: cellUri(i), languageId: "python", version: 1, text })),
  });
  await opened;
  return { nbUri, cellUri, cells, spot };
}

/**
 * Edit `i` (0-based) of a notebook {@link openTrainingNotebook} opened: one "x" typed at the spot,
 * one column further each time, as notebook version `i + 2`. Resolves to the time
 * (process.hrtime.bigint) of the server's trace of that version's lint, when it arrives.
 */
async function typeInCell(s, { nbUri, cellUri, spot }, i) {
  const version = i + 2;
  const done = s.waitTrace(`lint ${nbUri} version ${version}:`);
  await s.conn.sendNotification(rpc.DidChangeNotebookDocumentNotification.type, {
    notebookDocument: { uri: nbUri, version },
    change: {
      cells: {
        textContent: [
          { document: { uri: cellUri(spot.cell), version }, changes: [insertAt(spot.line, spot.col + i, "x")] },
        ],
      },
    },
  });
  return done;
}

/**
 * {@link measure} for a notebook ({@link trainingNotebook}): notebookDocument/didOpen, then
 * `warmup` + `edits` single-character notebookDocument/didChange edits of one cell, each awaited.
 * A notebook's lint publishes only the cells whose findings changed, so an edit is timed until the
 * server's trace of that notebook version's lint (`$/logTrace` "lint URI version N: ...", sent as
 * the lint ends; the publish follows two event-loop turns later).
 */
export async function measureNotebook({ edits = 200, warmup = 20, serverPath, serverFlags } = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()), trace: true });
  const { nbUri, cellUri, cells, spot } = await openTrainingNotebook(s, "latency_train.ipynb");
  const times = [];
  for (let i = 0; i < warmup + edits; i++) {
    const t0 = process.hrtime.bigint();
    times.push(Number((await typeInCell(s, { nbUri, cellUri, spot }, i)) - t0) / 1e6);
  }
  await s.stop();
  const first = { ...summary(times.slice(0, warmup)), edits: warmup };
  times.splice(0, warmup);
  return {
    ...summary(times),
    edits,
    cells: cells.length,
    lines: cells.reduce((n, c) => n + c.split("\n").length, 0),
    first,
  };
}

/** The two H200s of test/fixtures/nvidia-smi/h200x2 as the client's inventory notification sends them. */
const H200X2 = [
  {
    index: 0,
    uuid: "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:06.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
  {
    index: 1,
    uuid: "GPU-6486822f-842c-1320-f829-e4155c0d2130",
    name: "NVIDIA H200",
    pciBusId: "00000000:00:07.0",
    memoryTotalMiB: 143771,
    memoryFreeMiB: 143156,
  },
];

/**
 * What VS Code asks after each keystroke on a machine with GPUs: the 5,000-line file with the
 * inventory of two GPUs and inlay hints on (the client's defaults); per edit (awaited, as
 * {@link measure}), an inlay hint request for the 60 lines around the edit and a hover on a
 * device string there, each timed from request to response (the language server answers them
 * between lints, on the same thread). `warmup` edits first, not timed.
 */
export async function measureHints({ edits = 100, warmup = 20, serverPath, serverFlags } = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()) });
  await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/settings"), { inlayHints: true });
  await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/inventory"), { gpus: H200X2, selection: [] });
  const uri = pathToFileURL(join(root, "bench", "cache", "hints_train.py")).href;
  const text = trainingFile();
  await s.open(uri, text);
  const { line, col } = typingSpot(text);
  // The `device="cuda:0"` default of the function above the edit: its string's first character.
  const lines = text.split("\n");
  let defLine = line;
  while (!lines[defLine].startsWith("def ")) defLine--;
  const hoverAt = { line: defLine, character: lines[defLine].indexOf('"cuda:0"') + 1 };
  const hints = [],
    hovers = [];
  let found = 0;
  for (let i = 0; i < warmup + edits; i++) {
    const version = i + 2;
    const done = s.waitVersion(uri, version);
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: [insertAt(line, col + i, "x")],
    });
    await done;
    const t0 = process.hrtime.bigint();
    const h = await s.conn.sendRequest(rpc.InlayHintRequest.type, {
      textDocument: { uri },
      range: { start: { line: Math.max(0, line - 30), character: 0 }, end: { line: line + 30, character: 0 } },
    });
    const t1 = process.hrtime.bigint();
    const hover = await s.conn.sendRequest(rpc.HoverRequest.type, { textDocument: { uri }, position: hoverAt });
    const t2 = process.hrtime.bigint();
    if (i >= warmup) {
      hints.push(Number(t1 - t0) / 1e6);
      hovers.push(Number(t2 - t1) / 1e6);
      found += (h?.length ?? 0) > 0 && hover ? 1 : 0;
    }
  }
  await s.stop();
  return {
    inlay_hints: summary(hints),
    hover: summary(hovers),
    edits,
    answered: found,
    lines: text.split("\n").length - 1,
  };
}

/**
 * {@link measureHints} for the notebook of {@link measureNotebook} (201 cells of the 5,000-line
 * file): per edit of one cell (awaited until the server's trace of that version's lint), the inlay
 * hints of the edited cell and of the two cells around it (VS Code asks per visible cell editor),
 * then a hover on a device string in the first cell above the edit that holds one. The cells'
 * machine help reads the model of the whole notebook (server/src/handlers/models.ts `withCellModel`).
 */
export async function measureNotebookHints({ edits = 100, warmup = 20, serverPath, serverFlags } = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()), trace: true });
  await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/settings"), { inlayHints: true });
  await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/inventory"), { gpus: H200X2, selection: [] });
  const { nbUri, cellUri, cells, spot } = await openTrainingNotebook(s, "hints_train.ipynb");
  let hoverCell = spot.cell;
  while (!cells[hoverCell].includes('"cuda:0"')) hoverCell--;
  const hoverLines = cells[hoverCell].split("\n");
  const hoverLine = hoverLines.findIndex((l) => l.includes('"cuda:0"'));
  const hoverAt = { line: hoverLine, character: hoverLines[hoverLine].indexOf('"cuda:0"') + 1 };
  const hints = [],
    hovers = [];
  let found = 0;
  for (let i = 0; i < warmup + edits; i++) {
    await typeInCell(s, { nbUri, cellUri, spot }, i);
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (const c of [spot.cell - 1, spot.cell, spot.cell + 1]) {
      const h = await s.conn.sendRequest(rpc.InlayHintRequest.type, {
        textDocument: { uri: cellUri(c) },
        range: { start: { line: 0, character: 0 }, end: { line: cells[c].split("\n").length, character: 0 } },
      });
      n += h?.length ?? 0;
    }
    const t1 = process.hrtime.bigint();
    const hover = await s.conn.sendRequest(rpc.HoverRequest.type, {
      textDocument: { uri: cellUri(hoverCell) },
      position: hoverAt,
    });
    const t2 = process.hrtime.bigint();
    if (i >= warmup) {
      hints.push(Number(t1 - t0) / 1e6);
      hovers.push(Number(t2 - t1) / 1e6);
      found += hover ? 1 : 0;
    }
    if (i === 0 && !hover)
      throw new Error(`no hover at cell ${hoverCell + 1} ${JSON.stringify(hoverAt)} (${n} inlay hints)`);
  }
  await s.stop();
  return { inlay_hints_3_cells: summary(hints), hover: summary(hovers), edits, answered: found, cells: cells.length };
}

/**
 * A Kubernetes YAML stream of `docs` copies of test/fixtures/rules/GPU018/valid.yaml (GPU
 * requests that are right: no finding), ~63 lines each, `---` between them.
 */
export function manifestStream(docs = 60) {
  const one = readFileSync(join(root, "test", "fixtures", "rules", "GPU018", "valid.yaml"), "utf8").trimEnd();
  return Array.from({ length: docs }, () => one).join("\n---\n") + "\n";
}

/**
 * {@link measure} for a container manifest: {@link manifestStream} (3,780 lines) opened as YAML,
 * `edits` single-character edits of an image name in its middle document, each awaited
 * (didChange -> diagnostics of that version), after `warmup` edits timed apart.
 */
export async function measureManifest({ edits = 100, warmup = 10, serverPath, serverFlags } = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()) });
  const uri = pathToFileURL(join(root, "bench", "cache", "latency_k8s.yaml")).href;
  const text = manifestStream();
  const lines = text.split("\n");
  const line = lines.indexOf("          image: pytorch/pytorch:latest", Math.floor(lines.length / 2));
  const col = lines[line].length;
  const opened = s.waitVersion(uri, 1);
  await s.conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "yaml", version: 1, text },
  });
  await opened;
  const times = [];
  for (let i = 0; i < warmup + edits; i++) {
    const version = i + 2;
    const done = s.waitVersion(uri, version);
    const t0 = process.hrtime.bigint();
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: [insertAt(line, col + i, "x")],
    });
    times.push(Number((await done) - t0) / 1e6);
  }
  await s.stop();
  return { ...summary(times.slice(warmup)), edits, lines: lines.length - 1 };
}

/**
 * The server's CPU time (user + system, ms) so far, from /proc/PID/stat (Linux; null elsewhere).
 * Clock ticks of 10 ms: meant for totals over many operations.
 */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after the command name, which may hold spaces
    return (Number(f[11]) + Number(f[12])) * 10; // utime, stime (fields 14 and 15), at 100 ticks per second
  } catch {
    return null;
  }
}

/**
 * What a training run costs the language server while the GPU view is visible: the client sends
 * the inventory whenever a GPU's free memory changes (each second, gpuPilot.refreshIntervalMs).
 * `docs` open 5,000-line documents, two GPUs; then `updates` inventories 250 ms apart, only the free
 * memory changed; the server's CPU time over them (/proc, ms per update) and how many diagnostics it
 * published per update (each open document linted again and published, before 2026-12-03).
 */
export async function measureInventory({ docs = 20, updates = 20, serverPath, serverFlags } = {}) {
  const s = await startServer({ serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()) });
  await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/inventory"), { gpus: H200X2, selection: [] });
  const text = trainingFile();
  const uris = Array.from({ length: docs }, (_, i) => pathToFileURL(join(root, "bench", "cache", `inv_${i}.py`)).href);
  for (const uri of uris) await s.open(uri, text);
  // Past the idle heap trim that follows the opening lints (server/src/heapTrim.ts IDLE_TRIM_MS, 2 s),
  // so that its collection is not counted as the inventories' CPU.
  await new Promise((r) => setTimeout(r, 3000));
  const count = () => uris.reduce((n, u) => n + s.published(u).length, 0);
  const published0 = count(),
    cpu0 = cpuMsOf(s.server.pid);
  for (let i = 1; i <= updates; i++) {
    const gpus = H200X2.map((g) => ({ ...g, memoryFreeMiB: g.memoryFreeMiB - 1024 * i }));
    await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/inventory"), { gpus, selection: [] });
    await new Promise((r) => setTimeout(r, 250));
  }
  const cpu1 = cpuMsOf(s.server.pid);
  const publishes = count() - published0;
  await s.stop();
  return {
    docs,
    updates,
    cpu_ms_per_update: cpu0 === null || cpu1 === null ? null : +((cpu1 - cpu0) / updates).toFixed(1),
    publishes_per_update: +(publishes / updates).toFixed(1),
  };
}

/**
 * Ruff-wasm in this process on the same file and the same edits (Ruff's CLI default rules, set
 * explicitly): 20 warm-up checks, then one timed `Workspace.check` of the whole text per edit.
 */
export function ruffLatency({ edits = 200 } = {}) {
  const ruff = require("@astral-sh/ruff-wasm-nodejs");
  const ws = new ruff.Workspace({ lint: { select: ["E4", "E7", "E9", "F"] } }, ruff.PositionEncoding.Utf16);
  const text = trainingFile();
  const { line, col } = typingSpot(text);
  const lines = text.split("\n");
  for (let i = 0; i < 20; i++) ws.check(text);
  const times = [];
  for (let i = 0; i < edits; i++) {
    lines[line] = lines[line].slice(0, col + i) + "x" + lines[line].slice(col + i);
    const t = lines.join("\n");
    const t0 = process.hrtime.bigint();
    ws.check(t);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ws.free();
  return { ...summary(times), edits, version: ruff.Workspace.version() };
}

/**
 * Typing at `perSecond` characters a second, `keys` keys, not waiting for diagnostics: ms from the
 * last key to the diagnostics of the last version; how many lints ran after the open, and how many
 * versions were published.
 */
export async function typing({ keys = 40, perSecond = 10, serverPath, serverFlags } = {}) {
  const s = await startServer({ trace: true, serverPath, nodeArgs: serverFlags ?? (await serverNodeFlags()) });
  const uri = pathToFileURL(join(root, "bench", "cache", "typing_train.py")).href;
  const text = trainingFile();
  await s.open(uri, text);
  const { line, col } = typingSpot(text);
  const last = s.waitVersion(uri, keys + 1);
  const gap = 1000 / perSecond;
  const start = performance.now();
  let lastKey = 0n;
  for (let i = 0; i < keys; i++) {
    const due = start + i * gap;
    while (performance.now() < due)
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(5, due - performance.now()))));
    lastKey = process.hrtime.bigint();
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: i + 2 },
      contentChanges: [insertAt(line, col + i, "x")],
    });
  }
  const ms = Number((await last) - lastKey) / 1e6;
  const mine = s.traces.filter((t) => t.startsWith(`lint ${uri}`) && !/ version 1:/.test(t));
  const lints = mine.filter((t) => / ms$/.test(t)).length;
  const dropped = mine.filter((t) => /not published/.test(t)).length;
  const skipped = mine.filter((t) => /skipped/.test(t)).length;
  const published = s.published(uri).filter((v) => v > 1).length;
  await s.stop();
  return {
    last_key_to_diagnostics_ms: +ms.toFixed(1),
    keys,
    per_second: perSecond,
    lints,
    skipped,
    dropped,
    published_versions: published,
    ...(process.env.GP_BENCH_TRACE ? { trace: mine } : {}),
  };
}

/**
 * Server memory: `docs` open documents of `lines` lines, then `edits` single-character edits
 * round-robin over them, each awaited (so each is linted), then all closed. At each stage the
 * server collects garbage and reports process.memoryUsage() (bench/memory-probe.cjs). MiB.
 * `gpus`: with two GPUs in the inventory (as on a GPU machine).
 */
export async function memory({
  docs = 20,
  lines = 5000,
  edits = 1000,
  serverPath,
  serverFlags,
  gpus = false,
  pauseMs = 5000,
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), "gp-mem-"));
  let n = 0;
  const flags = serverFlags ?? (await serverNodeFlags());
  // Traced: the server's idle heap trims (server/src/heapTrim.ts) are logged with their duration.
  const s = await startServer({
    serverPath,
    trace: true,
    nodeArgs: [...flags, "--expose-gc", "--import", pathToFileURL(join(root, "bench", "memory-probe.mjs")).href],
    env: { ...process.env, GP_MEMORY_PROBE_DIR: dir },
  });
  const probe = async (stage) => {
    const file = join(dir, `${n++}.json`);
    s.server.kill("SIGUSR2");
    for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 20));
    const m = JSON.parse(readFileSync(file, "utf8"));
    const mib = (x) => +(x / 2 ** 20).toFixed(1);
    const spaces = Object.fromEntries(Object.entries(m.spaces ?? {}).map(([k, v]) => [k, mib(v.physical)]));
    const proc = Object.fromEntries(Object.entries(m.proc ?? {}).map(([k, v]) => [k, mib(v)]));
    const maps = Object.fromEntries(Object.entries(m.mappings ?? {}).map(([k, v]) => [k, mib(v)]));
    return {
      stage,
      rss_mib: mib(m.rss),
      rss_immediate_mib: m.rss_immediate === undefined ? null : mib(m.rss_immediate),
      settle_ms: m.settle_ms ?? 0,
      heap_used_mib: mib(m.heapUsed),
      heap_total_mib: mib(m.heapTotal),
      external_mib: mib(m.external),
      array_buffers_mib: mib(m.arrayBuffers),
      heap_spaces_physical_mib: spaces,
      proc_mib: proc,
      rss_by_mapping_mib: maps,
      pooled_pages_mib: m.mappings?.v8_pages === undefined ? null : mib(Math.max(0, m.mappings.v8_pages - m.heapTotal)),
    };
  };
  // `gpus`: the inventory of two GPUs first (the server then keeps what its machine hovers read per document).
  if (gpus)
    await s.conn.sendNotification(new rpc.NotificationType("gpuPilot/inventory"), { gpus: H200X2, selection: [] });
  const stages = [await probe("server started")];
  const text = trainingFile(lines);
  const { line, col } = typingSpot(text);
  const uris = Array.from({ length: docs }, (_, i) => pathToFileURL(join(root, "bench", "cache", `mem_${i}.py`)).href);
  const version = new Map(uris.map((u) => [u, 1]));
  await Promise.all(
    uris.map(async (uri) => {
      const done = s.waitVersion(uri, 1);
      await s.conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "python", version: 1, text },
      });
      await done;
    }),
  );
  stages.push(await probe(`${docs} documents open`));
  for (let i = 0; i < edits; i++) {
    const uri = uris[i % docs];
    const k = version.get(uri);
    version.set(uri, k + 1);
    const done = s.waitVersion(uri, k + 1);
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: k + 1 },
      contentChanges: [insertAt(line, col + k - 1, "x")],
    });
    await done;
    if (i + 1 === edits / 2) stages.push(await probe(`after ${edits / 2} edits`));
  }
  stages.push(await probe(`after ${edits} edits`));
  // A user who stops typing: nothing sent for `pauseMs`, then the same probe (the server's idle work,
  // such as giving freed heap pages back, has had its time).
  await new Promise((r) => setTimeout(r, pauseMs));
  stages.push(await probe(`after ${edits} edits and a ${pauseMs / 1000} s pause`));
  for (const uri of uris)
    await s.conn.sendNotification(rpc.DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  await new Promise((r) => setTimeout(r, 200));
  stages.push(await probe("all closed"));
  await s.stop();
  // "idle: heap trimmed, RSS a -> b MiB in t ms" lines: how often the server trimmed and how long each took.
  const trims = s.traces.filter((t) => t.startsWith("idle: heap trimmed"));
  return { docs, lines, edits, server_flags: flags, stages, trims };
}

/**
 * What one kept syntax tree costs: `count` trees of the 5,000-line file parsed with web-tree-sitter
 * in a fresh process, the growth of `process.memoryUsage().external` (the parser's WebAssembly
 * memory) per tree, in MiB, and the tree's node count. The fact behind server/src/incremental.ts's
 * KEPT_TREES.
 */
export function treeMemory({ count = 20 } = {}) {
  const script = `
    const { Parser, Language } = require("web-tree-sitter");
    (async () => {
      await Parser.init();
      const p = new Parser();
      p.setLanguage(await Language.load(require.resolve("tree-sitter-python/tree-sitter-python.wasm")));
      const text = require("node:fs").readFileSync(0, "utf8");
      const before = process.memoryUsage().external;
      const trees = [];
      for (let i = 0; i < ${count}; i++) trees.push(p.parse(text + "#" + i));
      const after = process.memoryUsage().external;
      console.log(JSON.stringify({ per_tree_mib: +((after - before) / ${count} / 2 ** 20).toFixed(2), nodes: trees[0].rootNode.descendantCount, trees: ${count} }));
    })();`;
  const r = spawnSync(process.execPath, ["-e", script], { cwd: root, input: trainingFile(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`treeMemory failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2] ?? "measure";
  const f = {
    measure,
    notebook: measureNotebook,
    hints: measureHints,
    notebookHints: measureNotebookHints,
    typing,
    memory,
    ruff: ruffLatency,
    trees: treeMemory,
  }[what];
  Promise.resolve(f()).then((r) => console.log(JSON.stringify(r)));
}
