#!/usr/bin/env node
// Issue 41's editor goals, against the editor anchor users would pick: native `ruff server` (LSP
// over stdio; binary from .bench-tools/ruff, see BENCHMARKS.md, or GP_BENCH_RUFF), and GPU Pilot's
// real server (dist/server.js --stdio, with the client's Node flags and environment). Both get the
// same `initialize`: the same rootUri and workspaceFolders (the benchmark's workspace) and the same
// client capabilities, VS Code's for what these servers read (pull diagnostics included). Each
// server gets its diagnostics the way it offers them: GPU Pilot publishes (`textDocument/
// publishDiagnostics` with the document's version); `ruff server` offers pull diagnostics
// (`diagnosticProvider`), so after each didOpen/didChange the benchmark sends
// `textDocument/diagnostic` at once (as VS Code does) and takes its answer; `--ruff-push` gives Ruff
// a client without pull diagnostics, and it publishes instead.
//
// Per round, interleaved (the order of the servers rotates from round to round):
// - open (goal 1): a server started, 20 distinct 5,000-line training files opened one after another
//   (each awaited): didOpen → first diagnostics of the first file (a server that was just started,
//   as when VS Code starts it for the file a user opens) and of the 19 others (a running server);
// - edits (goal 2): then 20 warm-up edits (one per file, timed apart as "first edits") and 200
//   single-character edits round-robin over the 20 files (each in another file than the one before),
//   each awaited: didChange → the diagnostics of that version; p50/p95/max;
// - module (goal 3, GPU Pilot only: Ruff's diagnostics have no inter-file dependencies): a project
//   whose 5,000-line train.py imports proj.helpers before it sets CUDA_VISIBLE_DEVICES; helpers.py
//   gains or loses a module-level torch.cuda.is_available() line (train.py's GPU001 finding comes
//   and goes), 20 times: through didChange of the open helpers.py, and as a change on disk that the
//   client reports with workspace/didChangeWatchedFiles (helpers.py not open); time from the
//   notification to train.py's publish with the new findings;
// - memory (goal 4): a synthetic 5,000-file project (bench/cache/anchor-5000, generated once:
//   50 packages of modules of 20–2,000 lines, median ~150, each importing 3 others) opened as the
//   workspace; main.py, which imports 100 of its modules before setting CUDA_VISIBLE_DEVICES,
//   opened; 100 characters typed at 10 per second without waiting; the server's RSS (VmRSS from
//   /proc/PID/status) sampled every 100 ms while typing, its peak (VmHWM), after the last
//   diagnostics and after a 5 s pause; GPU Pilot's heap after a collection at the end
//   (bench/memory-probe.mjs). Ruff on the same workspace as a reference.
//
// GP_BENCH_SERVER_B=DIR/server.js adds another build's server to the open workload (row gpu_pilot_b).
// usage: node bench/editor-anchor.mjs [--rounds N] [--only open,module,memory] [--ruff-push] [--files N] [--lines N]
//        (`npm run bench:editor`; `npm run bench -- --only anchor` runs it inside bench/run.mjs).
// Writes the key `editor_anchor` of bench/results.json. GPU_PILOT_BENCH_SERVER_ARGS (space-separated
// Node options, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to GPU Pilot's server, as in
// bench/lsp-latency.mjs.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { trainingFile, serverNodeFlags, serverEnvironmentOf } from "./lsp-latency.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const rpc = require("vscode-languageserver-protocol/node");

/** Native Ruff (BENCHMARKS.md "CLI against native Ruff 0.16.9" says how it was fetched). */
export const RUFF_BIN =
  process.env.GP_BENCH_RUFF ?? join(root, ".bench-tools", "ruff", "ruff-0.16.9.data", "scripts", "ruff");
/** What `ruff check` ran by default before 0.16 (the Ruff-wasm rows of bench/run.mjs use it). */
const CLI_RULES = ["E4", "E7", "E9", "F"];

const hr = () => process.hrtime.bigint();
const msSince = (t0, t1 = hr()) => Number(t1 - t0) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const load = () => loadavg().map((x) => round(x, 2));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (times) => {
  const s = [...times].sort((a, b) => a - b);
  return { p50_ms: round(pct(s, 50)), p95_ms: round(pct(s, 95)), max_ms: round(s[s.length - 1]), n: s.length };
};
const insertAt = (line, character, text) => ({ range: { start: { line, character }, end: { line, character } }, text });
const mib = (kb) => round(kb / 1024, 1);

/** VmRSS and VmHWM (peak) of `pid`, MiB; null when it is gone. */
function procMemory(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN);
    return { rss_mib: mib(kb("VmRSS")), hwm_mib: mib(kb("VmHWM")) };
  } catch {
    return null;
  }
}

/** CPU time (user + system, all threads) of `pid` so far, ms (10 ms ticks); null when it is gone. */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after the command name, which may hold spaces
    return (Number(f[11]) + Number(f[12])) * 10; // utime, stime (fields 14 and 15), at 100 ticks per second
  } catch {
    return null;
  }
}
const perOp = (a, b, n) => (a === null || b === null ? null : round((b - a) / n, 1));

/**
 * The client capabilities both servers get: VS Code's for what they read (text sync, versioned
 * published diagnostics, pull diagnostics, resolvable code actions, workspace folders, watched
 * files). `pull: false` leaves pull diagnostics out (then `ruff server` publishes).
 */
function clientCapabilities(pull = true) {
  return {
    general: { positionEncodings: ["utf-16"] },
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true, willSave: false },
      publishDiagnostics: { relatedInformation: true, versionSupport: true, tagSupport: { valueSet: [1, 2] } },
      ...(pull ? { diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false } } : {}),
      codeAction: { resolveSupport: { properties: ["edit"] }, dataSupport: true },
      hover: { contentFormat: ["markdown", "plaintext"] },
    },
    workspace: { workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: false } },
  };
}

/** Node options for GPU Pilot's server from GPU_PILOT_BENCH_SERVER_ARGS (as bench/lsp-latency.mjs). */
/** Another build's dist/server.js (GP_BENCH_SERVER_B), run in the open workload beside this one as `gpu_pilot_b`. */
const serverB = process.env.GP_BENCH_SERVER_B || null;
const serverBArgs = (process.env.GP_BENCH_SERVER_B_ARGS ?? "").split(" ").filter(Boolean);
const extraServerArgs = () => (process.env.GPU_PILOT_BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean);

/**
 * Starts `kind` ("gpu-pilot" or "ruff") on the workspace folder `workspace` and initializes it.
 * `select`: Ruff's rules (initializationOptions.settings.lint.select; its default otherwise).
 * `nodeArgs`: more Node options for GPU Pilot's server; `serverPath`: another build of it (to compare
 * two versions in one run). Returns a client whose open/change resolve
 * with {ms, count} once that version's diagnostics are there.
 */
export async function startLsp(
  kind,
  { workspace, pull = true, select, nodeArgs = [], env = {}, serverPath = join(root, "dist", "server.js") } = {},
) {
  const spawnedAt = hr();
  const proc =
    kind === "ruff"
      ? spawn(RUFF_BIN, ["server"], { cwd: workspace, stdio: ["pipe", "pipe", "ignore"] })
      : spawn(
          process.execPath,
          [...(await serverNodeFlags()), ...nodeArgs, ...extraServerArgs(), serverPath, "--stdio"],
          {
            cwd: workspace,
            stdio: ["pipe", "pipe", "inherit"],
            env: { ...process.env, ...(await serverEnvironmentOf(process.env)), ...env },
          },
        );
  const conn = rpc.createProtocolConnection(
    new rpc.StreamMessageReader(proc.stdout),
    new rpc.StreamMessageWriter(proc.stdin),
  );
  const waiters = [];
  const latest = new Map();
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    const at = hr();
    latest.set(p.uri, p);
    for (let i = 0; i < waiters.length; i++)
      if (waiters[i].uri === p.uri && waiters[i].accept(p)) {
        waiters.splice(i, 1)[0].resolve({ at, count: p.diagnostics.length, diagnostics: p.diagnostics });
        break;
      }
  });
  // Requests from the server (client/registerCapability, workspace/configuration, progress): answered empty.
  conn.onRequest((method, params) =>
    method === "workspace/configuration" ? (params?.items ?? []).map(() => null) : null,
  );
  conn.onNotification(() => undefined);
  conn.listen();
  const folder = pathToFileURL(workspace).href;
  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: "gpu-pilot-bench" },
    rootUri: folder,
    rootPath: workspace,
    workspaceFolders: [{ uri: folder, name: "workspace" }],
    capabilities: clientCapabilities(pull),
    initializationOptions: kind === "ruff" && select ? { settings: { lint: { select } } } : {},
  });
  await conn.sendNotification(rpc.InitializedNotification.type, {});
  const pulls = kind === "ruff" && pull && !!init.capabilities.diagnosticProvider;
  /** Resolves with the next publish for `uri` that `accept` takes. */
  const nextPublish = (uri, accept) => new Promise((resolve) => waiters.push({ uri, accept, resolve }));
  /** Sends `notify()` and resolves with {ms, count} when `uri`'s diagnostics at `version` are there. */
  async function diagnosticsAfter(uri, version, notify) {
    if (pulls) {
      const t0 = hr();
      await notify();
      const r = await conn.sendRequest("textDocument/diagnostic", { textDocument: { uri } });
      const at = hr();
      return { ms: msSince(t0, at), at, count: r.items?.length ?? 0 };
    }
    const published = nextPublish(uri, (p) => p.version === version);
    const t0 = hr();
    await notify();
    const { at, count } = await published;
    return { ms: msSince(t0, at), at, count };
  }
  return {
    kind,
    proc,
    conn,
    pid: proc.pid,
    spawnedAt,
    diagnostics: pulls ? "pull (textDocument/diagnostic)" : "push (textDocument/publishDiagnostics)",
    serverInfo: init.serverInfo,
    latest: (uri) => latest.get(uri),
    nextPublish,
    open: (uri, text, version = 1) =>
      diagnosticsAfter(uri, version, () =>
        conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
          textDocument: { uri, languageId: "python", version, text },
        }),
      ),
    change: (uri, version, contentChanges) =>
      diagnosticsAfter(uri, version, () =>
        conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
          textDocument: { uri, version },
          contentChanges,
        }),
      ),
    /** A didChange without waiting; with pull diagnostics the request is sent too; resolves with the hrtime of the diagnostics. */
    changeNoWait(uri, version, contentChanges) {
      const published = pulls ? null : nextPublish(uri, (p) => p.version === version);
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version },
        contentChanges,
      });
      return pulls
        ? conn.sendRequest("textDocument/diagnostic", { textDocument: { uri } }).then(() => hr())
        : published.then((p) => p.at);
    },
    async stop() {
      await Promise.race([conn.sendRequest(rpc.ShutdownRequest.type).catch(() => undefined), sleep(5000)]);
      await conn.sendNotification(rpc.ExitNotification.type).catch(() => undefined);
      // An exit of its own writes --cpu-prof profiles; a kill after 5 s.
      await new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve();
        const t = setTimeout(resolve, 5000);
        proc.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
      });
      conn.dispose();
      proc.kill();
    },
  };
}

/** The spot of the edits in a training file: after `loss` of the middle `    loss = ` line. */
function typingSpot(text) {
  const lines = text.split("\n");
  let line = Math.floor((lines.length - 1) / 2);
  while (!lines[line].startsWith("    loss = ")) line++;
  return { line, col: lines[line].indexOf("loss") + "loss".length };
}

/** `bench/cache/<name>` emptied and made again. */
function freshDir(name) {
  const dir = join(root, "bench", "cache", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** 20 distinct 5,000-line training files (their functions renamed per file), on disk in a workspace. */
function openWorkspace(files = 20, lines = 5000) {
  const dir = freshDir("anchor-open");
  writeFileSync(join(dir, "pyproject.toml"), '[project]\nname = "anchor-open"\nversion = "0"\n');
  const base = trainingFile(lines);
  const list = Array.from({ length: files }, (_, k) => {
    const text = base.replaceAll("train_step_", `train_step_f${k}_`).replaceAll("DEBUG_", `DEBUG_F${k}_`);
    const path = join(dir, `train_${String(k).padStart(2, "0")}.py`);
    writeFileSync(path, text);
    return { uri: pathToFileURL(path).href, text, spot: typingSpot(text) };
  });
  return { dir, files: list };
}

/**
 * Goals 1 and 2 for one server: open the 20 files (each awaited), then `warmup` edits (one per
 * file) and `edits` edits round-robin over them, each awaited. `files`: another number of files
 * (`node bench/editor-anchor.mjs --files 4`: as many as GPU Pilot's server keeps syntax trees for,
 * server/src/incremental.ts KEPT_SOURCE_CHARS); `lines`: files of another length (`--lines 500`: the
 * length of most files users keep open, where every open file keeps its tree).
 */
export async function openAndEdit(
  kind,
  { edits = 200, warmup = 20, pull = true, select, files = 20, lines = 5000, serverPath, nodeArgs = [] } = {},
) {
  const ws = openWorkspace(files, lines);
  const s = await startLsp(kind, { workspace: ws.dir, pull, select, serverPath, nodeArgs });
  const opens = [];
  const cpu = [cpuMs(s.pid)];
  for (const f of ws.files) {
    opens.push(await s.open(f.uri, f.text));
    if (opens.length === 1) cpu.push(cpuMs(s.pid));
  }
  cpu.push(cpuMs(s.pid));
  const typed = ws.files.map(() => 0);
  const times = [];
  for (let i = 0; i < warmup + edits; i++) {
    const k = i % ws.files.length;
    const f = ws.files[k];
    const version = 2 + typed[k];
    const r = await s.change(f.uri, version, [insertAt(f.spot.line, f.spot.col + typed[k]++, "x")]);
    times.push(r.ms);
    if (i + 1 === warmup) cpu.push(cpuMs(s.pid));
  }
  cpu.push(cpuMs(s.pid));
  const mem = procMemory(s.pid);
  await s.stop();
  return {
    server: `${s.serverInfo?.name ?? kind} ${s.serverInfo?.version ?? ""}`.trim(),
    diagnostics: s.diagnostics,
    rules: kind === "ruff" ? (select ? select.join(",") : "Ruff's default") : "GPU Pilot's default set",
    open_first_ms: round(opens[0].ms),
    spawn_to_first_diagnostics_ms: round(msSince(s.spawnedAt, opens[0].at)),
    open_others: summary(opens.slice(1).map((o) => o.ms)),
    first_edits: summary(times.slice(0, warmup)),
    edits: summary(times.slice(warmup)),
    findings_first_file: opens[0].count,
    // The server's CPU time (all its threads): what each step costs whatever the machine's load.
    cpu_ms: {
      first_open: perOp(cpu[0], cpu[1], 1),
      per_other_open: perOp(cpu[1], cpu[2], ws.files.length - 1),
      per_first_edit: perOp(cpu[2], cpu[3], warmup),
      per_edit: perOp(cpu[3], cpu[4], edits),
    },
    memory_after: mem,
  };
}

/** train.py of the module workspace: the training file with project imports and a CUDA_VISIBLE_DEVICES write after them. */
function moduleWorkspace() {
  const dir = freshDir("anchor-module");
  writeFileSync(join(dir, "pyproject.toml"), '[project]\nname = "anchor-module"\nversion = "0"\n');
  mkdirSync(join(dir, "proj"));
  writeFileSync(join(dir, "proj", "__init__.py"), '"""The project\'s package."""\n');
  const helpersOff = [
    '"""Helpers of the training script."""',
    "import os",
    "import torch",
    "",
    "",
    "def world_size():",
    '    return int(os.environ.get("WORLD_SIZE", "1"))',
    "",
    "",
    "def seed_all(seed=0):",
    "    torch.manual_seed(seed)",
    "",
  ].join("\n");
  const onLine = 3; // the toggled line goes after `import torch`
  const onText = "print(torch.cuda.is_available())\n";
  const helpersOn = helpersOff.split("\n").toSpliced(onLine, 0, onText.trimEnd()).join("\n");
  writeFileSync(join(dir, "proj", "helpers.py"), helpersOff);
  writeFileSync(
    join(dir, "proj", "data.py"),
    [
      '"""Data loading."""',
      "import torch",
      "from torch.utils.data import DataLoader, TensorDataset",
      "",
      "",
      "def loader(n=64, batch=8):",
      "    x = torch.randn(n, 8)",
      "    y = torch.randint(0, 8, (n,))",
      "    return DataLoader(TensorDataset(x, y), batch_size=batch)",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "proj", "models.py"),
    [
      '"""Models."""',
      "import torch.nn as nn",
      "",
      "",
      "class Net(nn.Module):",
      "    def __init__(self, dim=8):",
      "        super().__init__()",
      "        self.body = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))",
      "",
      "    def forward(self, x):",
      "        return self.body(x)",
      "",
    ].join("\n"),
  );
  const lines = trainingFile(5000).split("\n");
  const head = 6; // trainingFile's imports and the blank line after them
  lines.splice(
    head,
    0,
    "from proj import data, models",
    "from proj import helpers",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
  );
  const train = lines.join("\n");
  const trainPath = join(dir, "train.py");
  writeFileSync(trainPath, train);
  const helpersPath = join(dir, "proj", "helpers.py");
  return {
    dir,
    train: { uri: pathToFileURL(trainPath).href, text: train },
    helpers: { uri: pathToFileURL(helpersPath).href, path: helpersPath, off: helpersOff, on: helpersOn },
    onLine,
    onText,
  };
}

/**
 * Goal 3 (GPU Pilot): `toggles` changes of proj/helpers.py after `warmup` untimed ones, each
 * awaited until train.py's findings change. `via`: "didChange" (helpers.py open, edited) or
 * "watched" (helpers.py closed, written on disk, then workspace/didChangeWatchedFiles).
 */
export async function moduleChange({ via = "didChange", toggles = 20, warmup = 4 } = {}) {
  const ws = moduleWorkspace();
  const s = await startLsp("gpu-pilot", { workspace: ws.dir });
  const first = await s.open(ws.train.uri, ws.train.text);
  const countOff = first.count;
  let version = 1;
  if (via === "didChange") await s.open(ws.helpers.uri, ws.helpers.off);
  const times = [];
  let cpu0 = null;
  let on = false;
  const counts = { off: countOff, on: null };
  for (let i = 0; i < warmup + toggles; i++) {
    on = !on;
    const expected = on ? undefined : countOff;
    // train.py's next publish whose findings differ from the ones it shows now (its own version stays 1).
    const before = JSON.stringify(s.latest(ws.train.uri)?.diagnostics ?? []);
    const published = s.nextPublish(
      ws.train.uri,
      (p) => JSON.stringify(p.diagnostics) !== before && (expected === undefined || p.diagnostics.length === expected),
    );
    let t0;
    if (via === "didChange") {
      version++;
      const change = on
        ? insertAt(ws.onLine, 0, ws.onText)
        : { range: { start: { line: ws.onLine, character: 0 }, end: { line: ws.onLine + 1, character: 0 } }, text: "" };
      t0 = hr();
      await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: ws.helpers.uri, version },
        contentChanges: [change],
      });
    } else {
      writeFileSync(ws.helpers.path, on ? ws.helpers.on : ws.helpers.off);
      t0 = hr();
      await s.conn.sendNotification(rpc.DidChangeWatchedFilesNotification.type, {
        changes: [{ uri: ws.helpers.uri, type: rpc.FileChangeType.Changed }],
      });
    }
    const timeout = sleep(10000).then(() => null);
    const p = await Promise.race([published, timeout]);
    if (!p) throw new Error(`moduleChange(${via}): train.py's findings did not change within 10 s (toggle ${i + 1})`);
    if (on) counts.on = p.count;
    if (i >= warmup) times.push(msSince(t0, p.at));
    if (i + 1 === warmup) cpu0 = cpuMs(s.pid);
  }
  const cpu1 = cpuMs(s.pid);
  await s.stop();
  return {
    via,
    train_lines: ws.train.text.split("\n").length - 1,
    findings: counts,
    ...summary(times),
    cpu_ms_per_change: perOp(cpu0, cpu1, toggles),
  };
}

/** A small deterministic generator (mulberry32). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BIG_VERSION = "1";
const PACKAGES = 50;
const MAIN_IMPORTS = 100;

/**
 * The synthetic 5,000-file project (bench/cache/anchor-5000, made once per BIG_VERSION): 50
 * packages pkg_00..pkg_49, each a regular package (`__init__.py`) of 99 modules (98 in the last), and
 * main.py: 5,000 Python files. A module has 20–2,000 lines (log-normal, median ~150, mean ~200, the
 * sizes of an application's modules), imports os, math, torch, torch.nn and 3 other modules of the
 * project (absolute, one in four relative to its package), and holds classes and functions that move
 * tensors to devices, read the environment and call torch.cuda inside functions; nothing runs CUDA at
 * import except pkg_49/mod_097 (`DEVICE = ... torch.cuda.is_available() ...`, imported only by main.py,
 * last). main.py imports 100 modules, then sets CUDA_VISIBLE_DEVICES (GPU001: mod_097 initialised
 * CUDA), then trains. Returns {dir, main: {uri, path, text, spot}, files, lines, bytes, reachable}.
 */
export function bigWorkspace() {
  const dir = join(root, "bench", "cache", "anchor-5000");
  const stamp = join(dir, ".generated");
  const rand = prng(41);
  const modules = [];
  for (let p = 0; p < PACKAGES; p++) for (let m = 0; m < (p === PACKAGES - 1 ? 98 : 99); m++) modules.push({ p, m });
  const name = ({ p, m }) => `pkg_${String(p).padStart(2, "0")}.mod_${String(m).padStart(3, "0")}`;
  const initModule = modules.find((x) => x.p === PACKAGES - 1 && x.m === 97);
  const targets = modules.filter((x) => x !== initModule);
  // Imports first (the same every run), then the texts.
  for (const mod of modules) {
    mod.imports = [];
    while (mod.imports.length < 3) {
      const t = targets[Math.floor(rand() * targets.length)];
      if (t !== mod && !mod.imports.includes(t)) mod.imports.push(t);
    }
    const z = Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand());
    mod.lines = Math.max(20, Math.min(2000, Math.round(Math.exp(5.0 + 0.8 * z))));
    mod.relative = rand() < 0.25;
  }
  const mainImports = [];
  while (mainImports.length < MAIN_IMPORTS - 1) {
    const t = targets[Math.floor(rand() * targets.length)];
    if (!mainImports.includes(t)) mainImports.push(t);
  }
  mainImports.push(initModule);
  const mainText = mainSource(mainImports, name);
  const main = { path: join(dir, "main.py"), text: mainText };
  main.uri = pathToFileURL(main.path).href;
  const l = mainText.split("\n");
  const spotLine = l.findIndex((x) => x.startsWith("    loss = "));
  main.spot = { line: spotLine, col: "    loss".length };
  // Modules within the index's depth (server/src/engine/python/project.ts MAX_DEPTH 4: main's own import is 1).
  const reach = new Set();
  let frontier = mainImports;
  for (let d = 1; d <= 4 && frontier.length; d++) {
    const next = [];
    for (const x of frontier)
      if (!reach.has(x)) {
        reach.add(x);
        next.push(...x.imports);
      }
    frontier = next;
  }
  const totalLines = modules.reduce((n, x) => n + x.lines, 0) + l.length;
  const info = { dir, main, files: modules.length + PACKAGES + 1, lines: totalLines, reachable: reach.size };
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === BIG_VERSION) return { ...info, bytes: sizeOf(stamp) };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "pyproject.toml"), '[project]\nname = "anchor-5000"\nversion = "0"\n');
  let bytes = 0;
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = join(dir, `pkg_${String(p).padStart(2, "0")}`);
    mkdirSync(pkg);
    const init = `"""Package pkg_${String(p).padStart(2, "0")}."""\n\n__all__ = []\n`;
    writeFileSync(join(pkg, "__init__.py"), init);
    bytes += init.length;
  }
  for (const mod of modules) {
    const text = moduleSource(mod, name, mod === initModule, rand);
    writeFileSync(join(dir, ...name(mod).split(".")) + ".py", text);
    bytes += text.length;
  }
  writeFileSync(main.path, mainText);
  bytes += mainText.length;
  writeFileSync(stamp, BIG_VERSION);
  writeFileSync(stamp + "-bytes", String(bytes));
  return { ...info, bytes };
}

const sizeOf = (stamp) => Number(existsSync(stamp + "-bytes") ? readFileSync(stamp + "-bytes", "utf8") : NaN);

/** One module of {@link bigWorkspace}: `mod.lines` lines of classes and functions. */
function moduleSource(mod, name, initsCuda, rand) {
  const id = name(mod).replace(".", "_");
  const out = [`"""${name(mod)}: part of the synthetic 5,000-file project."""`, "import math", "import os", ""];
  out.push("import torch", "import torch.nn as nn", "");
  for (const t of mod.imports) {
    const [pkg, m] = name(t).split(".");
    if (mod.relative && t.p === mod.p) out.push(`from . import ${m}`);
    else if (rand() < 0.5) out.push(`from ${pkg} import ${m}`);
    else out.push(`import ${pkg}.${m}`);
  }
  out.push("");
  if (initsCuda) out.push('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "");
  out.push(`SCALE_${id.toUpperCase()} = ${(rand() * 10).toFixed(3)}`, "", "");
  for (let k = 0; out.length < mod.lines; k++) {
    if (k % 3 === 0)
      out.push(
        `class Block_${id}_${k}(nn.Module):`,
        `    """A block of ${name(mod)}."""`,
        "",
        "    def __init__(self, dim=64, dropout=0.1):",
        "        super().__init__()",
        "        self.proj = nn.Linear(dim, dim)",
        "        self.norm = nn.LayerNorm(dim)",
        "        self.drop = nn.Dropout(dropout)",
        "",
        "    def forward(self, x):",
        "        h = self.norm(x)",
        "        h = self.proj(h)",
        `        return x + self.drop(h) * SCALE_${id.toUpperCase()}`,
        "",
        "",
      );
    else
      out.push(
        `def step_${id}_${k}(model, batch, device="cuda"):`,
        '    """One step; moves the batch to `device`."""',
        "    x, y = batch",
        "    x = x.to(device, non_blocking=True)",
        "    y = y.to(device, non_blocking=True)",
        "    out = model(x)",
        "    loss = nn.functional.mse_loss(out, y)",
        `    if os.environ.get("DEBUG_${id.toUpperCase()}_${k}"):`,
        "        torch.cuda.synchronize()",
        "        print(loss.item(), math.sqrt(loss.item()))",
        "    return loss",
        "",
        "",
      );
  }
  return out.slice(0, Math.max(mod.lines, 12)).join("\n") + "\n";
}

/** main.py of {@link bigWorkspace}. */
function mainSource(imports, name) {
  const out = [
    '"""The training entry point: imports 100 of the project\'s modules."""',
    "import os",
    "",
    "import torch",
  ];
  for (const t of imports) {
    const [pkg, m] = name(t).split(".");
    out.push(`from ${pkg} import ${m}`);
  }
  out.push("", 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "", "");
  out.push(
    "def train_step(model, batch, opt):",
    "    x, y = batch",
    "    loss = torch.nn.functional.mse_loss(model(x), y)",
    "    opt.zero_grad()",
    "    loss.backward()",
    "    opt.step()",
    "    return loss",
    "",
    "",
    'if __name__ == "__main__":',
    "    model = torch.nn.Linear(64, 64).cuda()",
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)",
    "    train_step(model, (torch.randn(8, 64), torch.randn(8, 64)), opt)",
  );
  return out.join("\n") + "\n";
}

/**
 * Goal 4 for one server: the 5,000-file workspace, main.py opened, `keys` characters typed at
 * `perSecond` without waiting, RSS sampled every 100 ms; then a `pauseMs` pause. GPU Pilot's heap
 * after a collection at the very end (memory-probe; it changes the RSS, so nothing is read after it).
 */
export async function bigMemory(kind, { keys = 100, perSecond = 10, pauseMs = 5000 } = {}) {
  const ws = bigWorkspace();
  const probeDir = mkdtempSync(join(tmpdir(), "gp-anchor-mem-"));
  const s = await startLsp(kind, {
    workspace: ws.dir,
    nodeArgs: kind === "ruff" ? [] : ["--import", pathToFileURL(join(root, "bench", "memory-probe.mjs")).href],
    env: { GP_MEMORY_PROBE_DIR: probeDir },
  });
  const started = procMemory(s.pid);
  const cpu0 = cpuMs(s.pid);
  const opened = await s.open(ws.main.uri, ws.main.text);
  const cpu1 = cpuMs(s.pid);
  const afterOpen = procMemory(s.pid);
  await sleep(1000);
  const idleAfterOpen = procMemory(s.pid);
  const samples = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const m = procMemory(s.pid);
      if (m) samples.push(m.rss_mib);
      await sleep(100);
    }
  })();
  const gap = 1000 / perSecond;
  const start = performance.now();
  let last = null,
    lastKey = 0n;
  for (let i = 0; i < keys; i++) {
    const due = start + i * gap;
    while (performance.now() < due) await sleep(Math.max(0, Math.min(5, due - performance.now())));
    lastKey = hr();
    last = s.changeNoWait(ws.main.uri, i + 2, [insertAt(ws.main.spot.line, ws.main.spot.col + i, "x")]);
  }
  const lastAt = await last;
  sampling = false;
  await sampler;
  const afterTyping = procMemory(s.pid);
  await sleep(pauseMs);
  const afterPause = procMemory(s.pid);
  let heap = null;
  if (kind !== "ruff") {
    const file = join(probeDir, "0.json");
    s.proc.kill("SIGUSR2");
    for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(20);
    if (existsSync(file)) {
      const m = JSON.parse(readFileSync(file, "utf8"));
      const b = (x) => round(x / 2 ** 20, 1);
      heap = { heap_used_mib: b(m.heapUsed), heap_total_mib: b(m.heapTotal), rss_after_gc_mib: b(m.rss) };
    }
  }
  await s.stop();
  rmSync(probeDir, { recursive: true, force: true });
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    server: kind,
    workspace: { files: ws.files, lines: ws.lines, bytes: ws.bytes, reachable_within_depth_4: ws.reachable },
    open_main_ms: round(opened.ms),
    cpu_ms_open_main: perOp(cpu0, cpu1, 1),
    findings_main: opened.count,
    last_key_to_diagnostics_ms: round(msSince(lastKey, lastAt)),
    rss_started_mib: started?.rss_mib,
    rss_after_open_mib: afterOpen?.rss_mib,
    rss_idle_after_open_mib: idleAfterOpen?.rss_mib,
    rss_typing_max_mib: sorted[sorted.length - 1],
    rss_typing_p50_mib: pct(sorted, 50),
    rss_after_typing_mib: afterTyping?.rss_mib,
    rss_after_pause_mib: afterPause?.rss_mib,
    hwm_mib: afterPause?.hwm_mib,
    samples: samples.length,
    ...(heap ? { heap_after_gc: heap } : {}),
  };
}

const stats = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length
    ? { median: round(s[Math.floor(s.length / 2)]), min: round(s[0]), max: round(s[s.length - 1]) }
    : null;
};

/**
 * Every part, `rounds` rounds, the servers' order rotating per round. Returns the rounds and the
 * medians (min–max) over rounds, ratios taken within each round, and each goal's verdict.
 */
export async function editorAnchor({
  files = 20,
  lines = 5000,
  rounds = 3,
  only = ["open", "module", "memory"],
  ruffPush = false,
  log = console.log,
} = {}) {
  if (!existsSync(RUFF_BIN)) throw new Error(`no native Ruff at ${RUFF_BIN} (see BENCHMARKS.md; or set GP_BENCH_RUFF)`);
  if (!existsSync(join(root, "dist", "server.js"))) throw new Error("no dist/server.js: run `node esbuild.mjs` first");
  const out = [];
  for (let r = 0; r < rounds; r++) {
    const row = { round: r + 1, load_before: load() };
    if (only.includes("open")) {
      const parts = [
        ["gpu_pilot", () => openAndEdit("gpu-pilot", { files, lines })],
        ["ruff", () => openAndEdit("ruff", { pull: !ruffPush, files, lines })],
        ["ruff_cli_rules", () => openAndEdit("ruff", { pull: !ruffPush, select: CLI_RULES, files, lines })],
        // GP_BENCH_SERVER_B: another build's server.js, interleaved with this one (an A/B of a change).
        // GP_BENCH_SERVER_B_ARGS: Node options for that server only (space-separated).
        ...(serverB
          ? [
              [
                "gpu_pilot_b",
                () => openAndEdit("gpu-pilot", { files, lines, serverPath: serverB, nodeArgs: serverBArgs }),
              ],
            ]
          : []),
      ];
      for (let k = 0; k < parts.length; k++) {
        const [name, f] = parts[(k + r) % parts.length];
        row[name] = await f();
      }
      row.ratio_open_first = round(row.gpu_pilot.open_first_ms / row.ruff.open_first_ms);
      row.ratio_open_others_p50 = round(row.gpu_pilot.open_others.p50_ms / row.ruff.open_others.p50_ms);
      row.ratio_edit_p95 = round(row.gpu_pilot.edits.p95_ms / row.ruff.edits.p95_ms);
      row.ratio_edit_p95_cli_rules = round(row.gpu_pilot.edits.p95_ms / row.ruff_cli_rules.edits.p95_ms);
      // CPU time per step, which the machine's load changes less than wall time.
      row.ratio_cpu_per_edit = round(row.gpu_pilot.cpu_ms.per_edit / row.ruff.cpu_ms.per_edit);
      row.ratio_cpu_per_other_open = round(row.gpu_pilot.cpu_ms.per_other_open / row.ruff.cpu_ms.per_other_open);
      if (serverB) row.ratio_b_edit_p95 = round(row.gpu_pilot_b.edits.p95_ms / row.ruff.edits.p95_ms);
    }
    if (only.includes("module")) {
      const vias = r % 2 ? ["watched", "didChange"] : ["didChange", "watched"];
      for (const via of vias) row[`module_${via}`] = await moduleChange({ via });
    }
    if (only.includes("memory")) {
      const kinds = r % 2 ? ["ruff", "gpu-pilot"] : ["gpu-pilot", "ruff"];
      for (const kind of kinds) row[`memory_${kind.replace("-", "_")}`] = await bigMemory(kind);
    }
    row.load_after = load();
    log(`editor anchor round ${r + 1}: ${JSON.stringify(row)}`);
    out.push(row);
  }
  const col = (f) => stats(out.map((x) => (f(x) === undefined ? NaN : f(x))));
  const res = {
    date: new Date().toISOString(),
    ruff: RUFF_BIN.split("/").slice(-3)[0],
    files,
    ruff_diagnostics: ruffPush ? "push" : "pull",
    rounds: out,
    medians: {},
  };
  const m = res.medians;
  if (only.includes("open")) {
    for (const k of ["gpu_pilot", "ruff", "ruff_cli_rules", ...(serverB ? ["gpu_pilot_b"] : [])]) {
      m[k] = {
        open_first_ms: col((x) => x[k].open_first_ms),
        spawn_to_first_diagnostics_ms: col((x) => x[k].spawn_to_first_diagnostics_ms),
        open_others_p50_ms: col((x) => x[k].open_others.p50_ms),
        open_others_p95_ms: col((x) => x[k].open_others.p95_ms),
        first_edits_p95_ms: col((x) => x[k].first_edits.p95_ms),
        edit_p50_ms: col((x) => x[k].edits.p50_ms),
        edit_p95_ms: col((x) => x[k].edits.p95_ms),
        edit_max_ms: col((x) => x[k].edits.max_ms),
        rss_after_mib: col((x) => x[k].memory_after?.rss_mib),
        cpu_first_open_ms: col((x) => x[k].cpu_ms?.first_open),
        cpu_per_other_open_ms: col((x) => x[k].cpu_ms?.per_other_open),
        cpu_per_edit_ms: col((x) => x[k].cpu_ms?.per_edit),
      };
    }
    m.ratio_open_first = col((x) => x.ratio_open_first);
    m.ratio_open_others_p50 = col((x) => x.ratio_open_others_p50);
    m.ratio_edit_p95 = col((x) => x.ratio_edit_p95);
    m.ratio_edit_p95_cli_rules = col((x) => x.ratio_edit_p95_cli_rules);
    m.ratio_cpu_per_edit = col((x) => x.ratio_cpu_per_edit);
    m.ratio_cpu_per_other_open = col((x) => x.ratio_cpu_per_other_open);
  }
  if (only.includes("module"))
    for (const via of ["didChange", "watched"])
      m[`module_${via}`] = {
        p50_ms: col((x) => x[`module_${via}`].p50_ms),
        p95_ms: col((x) => x[`module_${via}`].p95_ms),
        max_ms: col((x) => x[`module_${via}`].max_ms),
        cpu_ms_per_change: col((x) => x[`module_${via}`].cpu_ms_per_change),
      };
  if (only.includes("memory"))
    for (const k of ["gpu_pilot", "ruff"]) {
      const g = (x) => x[`memory_${k}`];
      m[`memory_${k}`] = {
        open_main_ms: col((x) => g(x).open_main_ms),
        cpu_ms_open_main: col((x) => g(x).cpu_ms_open_main),
        rss_after_open_mib: col((x) => g(x).rss_after_open_mib),
        rss_typing_max_mib: col((x) => g(x).rss_typing_max_mib),
        rss_after_pause_mib: col((x) => g(x).rss_after_pause_mib),
        hwm_mib: col((x) => g(x).hwm_mib),
        heap_used_mib: col((x) => g(x).heap_after_gc?.heap_used_mib),
        last_key_to_diagnostics_ms: col((x) => g(x).last_key_to_diagnostics_ms),
      };
    }
  res.goals = verdicts(m);
  return res;
}

/** Each goal with its figure (the median over rounds of the per-round ratio or value) and whether it is met. */
function verdicts(m) {
  const g = {};
  if (m.ratio_open_first) {
    g.open_first_within_2x_ruff = { ratio: m.ratio_open_first, met: m.ratio_open_first.median <= 2 };
    g.open_running_server_within_2x_ruff = { ratio: m.ratio_open_others_p50, met: m.ratio_open_others_p50.median <= 2 };
    g.edit_p95_within_2x_ruff = { ratio: m.ratio_edit_p95, met: m.ratio_edit_p95.median <= 2 };
  }
  if (m.module_didChange)
    g.module_change_within_500ms = {
      p95_ms: { didChange: m.module_didChange.p95_ms, watched: m.module_watched.p95_ms },
      met: m.module_didChange.p95_ms.median <= 500 && m.module_watched.p95_ms.median <= 500,
    };
  if (m.memory_gpu_pilot)
    g.memory_within_200mib = {
      typing_max_mib: m.memory_gpu_pilot.rss_typing_max_mib,
      hwm_mib: m.memory_gpu_pilot.hwm_mib,
      met: m.memory_gpu_pilot.hwm_mib.max <= 200,
    };
  return g;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
  const res = await editorAnchor({
    rounds: Number(opt("--rounds", "3")),
    only: opt("--only", "open,module,memory").split(","),
    ruffPush: args.includes("--ruff-push"),
    files: Number(opt("--files", "20")),
    lines: Number(opt("--lines", "5000")),
  });
  const file = join(root, "bench", "results.json");
  const all = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  // Another number of files or Ruff publishing are kept apart from the goals' run.
  const files = Number(opt("--files", "20"));
  const lines = Number(opt("--lines", "5000"));
  const key = [
    "editor_anchor",
    files !== 20 ? `${files}_files` : "",
    lines !== 5000 ? `${lines}_lines` : "",
    args.includes("--ruff-push") ? "ruff_push" : "",
  ];
  all[key.filter(Boolean).join("_")] = res;
  writeFileSync(file, JSON.stringify(all, null, 2) + "\n");
  console.log(JSON.stringify({ medians: res.medians, goals: res.goals }, null, 2));
}
