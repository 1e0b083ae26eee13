// `gpu-pilot mcp` under attack (issue 46 item 8), driven over raw stdio as a hostile or broken
// client would: malformed and oversized messages, a client that stops reading, a burst of
// nvidia-smi calls, runs that must die with the server, paths outside the root.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../support/helpers";

const BIN = join(ROOT, "test", "fixtures", "bin");
const TMP = mkdtempSync(join(tmpdir(), "gp-mcp-limits-"));
const servers: ChildProcessWithoutNullStreams[] = [];
after(() => {
  for (const s of servers) if (s.exitCode === null) s.kill("SIGKILL");
  rmSync(TMP, { recursive: true, force: true });
});

type Msg = { id?: number | string | null; result?: unknown; error?: { code: number; message: string } };

// The server itself, not scripts/gpu-pilot.mjs (a parent that waits for it): its pid is the one
// measured and signalled. The wrapper builds dist/cli.js from the sources first when it is stale.
before(() => {
  spawnSync(process.execPath, [join(ROOT, "scripts", "gpu-pilot.mjs"), "mcp", "--help"], { stdio: "ignore" });
});

/** A server on raw pipes: `send` writes one line, `next` waits for the answer with that id. */
function startServer(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [join(ROOT, "dist", "cli.js"), "mcp", ...args], {
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH}`, FAKE_NVIDIA_SMI_MODE: "busy", ...env },
  });
  servers.push(child);
  const got: Msg[] = [];
  let buf = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      got.push(JSON.parse(buf.slice(0, i)) as Msg);
      buf = buf.slice(i + 1);
    }
  });
  const send = (line: string | object) =>
    child.stdin.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n");
  const next = async (pred: (m: Msg) => boolean, ms = 20_000): Promise<Msg> => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
      const i = got.findIndex(pred);
      if (i >= 0) return got.splice(i, 1)[0];
      if (child.exitCode !== null) break;
    }
    throw new Error(`no answer (exit ${String(child.exitCode)}); stderr: ${stderr.slice(0, 500)}`);
  };
  const byId = (id: number | string | null) => (m: Msg) => m.id === id;
  const init = async () => {
    send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    await next(byId("init"));
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
  };
  const call = (id: number, name: string, args: object) =>
    send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
  return { child, got, send, next, byId, init, call, stderr: () => stderr };
}

/** Whether `pid` runs (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return !/^\d+ \(.*\) Z/.test(stat);
}
const waitFor = async (cond: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (cond()) return true;
  return cond();
};

test("malformed requests get JSON-RPC errors (-32700, -32600) and the server keeps answering", async () => {
  const s = startServer(["--root", TMP]);
  await s.init();
  s.send("{not json");
  const parse = await s.next((m) => m.error?.code === -32700);
  assert.equal(parse.id, null);
  s.send({ jsonrpc: "2.0", id: 7, method: 5 });
  const invalid = await s.next(s.byId(7));
  assert.equal(invalid.error?.code, -32600);
  s.send("[]");
  assert.equal((await s.next((m) => m.error?.code === -32600 && m.id === null)).id, null);
  s.send({ jsonrpc: "2.0", id: 8, method: "tools/list" });
  const list = await s.next(s.byId(8));
  assert.equal((list.result as { tools: unknown[] }).tools.length, 4);
});

test("an 11 MiB message: a JSON-RPC error naming the limit, with its id, within 10 s; the server keeps answering", async () => {
  const s = startServer(["--root", TMP]);
  await s.init();
  const t = Date.now();
  const pad = "a".repeat(11 * 1024 * 1024);
  s.send(
    `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"gpu-pilot_checkFile","arguments":{"path":"${pad}"}},"id":9}`,
  );
  const big = await s.next(s.byId(9));
  assert.equal(big.error?.code, -32600);
  assert.match(big.error?.message ?? "", /larger than 10 MiB/);
  s.send({ jsonrpc: "2.0", id: 10, method: "ping" });
  assert.deepEqual((await s.next(s.byId(10))).result, {});
  assert.ok(Date.now() - t < 10_000, `took ${Date.now() - t} ms`);
  assert.equal(s.child.exitCode, null, "still running");
});

/** The server's resident and peak memory, MiB (/proc/<pid>/status). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

test("a client that stops reading: 20,000 tools/list requests do not grow the server by 64 MiB; all answered once it reads", async () => {
  const s = startServer(["--root", TMP]);
  await s.init();
  s.send({ jsonrpc: "2.0", id: 0, method: "tools/list" });
  await s.next(s.byId(0));
  const before = memory(s.child.pid!).rss;
  s.child.stdout.pause();
  const N = 20_000;
  let batch = "";
  for (let i = 1; i <= N; i++) batch += JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }) + "\n";
  s.child.stdin.write(batch);
  await new Promise((r) => setTimeout(r, 4000));
  const grew = memory(s.child.pid!).rss - before;
  if (process.env.GP_SHOW) console.log(`grew ${grew.toFixed(1)} MiB, ${s.got.length} answers read`);
  s.child.stdout.resume();
  assert.ok(await waitFor(() => s.got.length >= N, 60_000), `${s.got.length} of ${N} answered`);
  assert.ok(grew < 64, `the server's RSS grew ${grew.toFixed(0)} MiB while its answers went unread`);
});

test("100 gpu-pilot_listGpus calls at once: at most one nvidia-smi runs at a time, every call answered without error", async () => {
  const bin = mkdtempSync(join(TMP, "bin-"));
  const log = join(bin, "calls.log");
  writeFileSync(
    join(bin, "nvidia-smi"),
    `#!/bin/sh\necho + >> '${log}'\n'${join(BIN, "nvidia-smi")}' "$@"\nrc=$?\necho - >> '${log}'\nexit $rc\n`,
    { mode: 0o755 },
  );
  const s = startServer(["--root", TMP, "--nvidia-smi", join(bin, "nvidia-smi")]);
  await s.init();
  for (let i = 1; i <= 100; i++) s.call(i, "gpu-pilot_listGpus", {});
  const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => s.next(s.byId(i + 1), 120_000)));
  const errors = answers.filter((a) => (a.result as { isError?: boolean }).isError);
  if (process.env.GP_SHOW) console.log(`${errors.length} error results`);
  assert.equal(
    errors.length,
    0,
    (errors[0]?.result as { content: Array<{ text: string }> } | undefined)?.content[0].text,
  );
  let running = 0;
  let most = 0;
  for (const l of readFileSync(log, "utf8").trim().split("\n")) {
    running += l === "+" ? 1 : -1;
    most = Math.max(most, running);
  }
  if (process.env.GP_SHOW) console.log(`${most} at once`);
  assert.equal(most, 1, `${most} nvidia-smi processes ran at once`);
});

/** A run that starts a child (`sleep 300`) and waits; resolves with the child's pid once it runs. */
async function startLongRun(s: ReturnType<typeof startServer>, dir: string): Promise<number> {
  const pidFile = join(dir, "child.pid");
  writeFileSync(
    join(dir, "long.py"),
    `import subprocess, time\np = subprocess.Popen(["sleep", "300"])\nopen(${JSON.stringify(pidFile)}, "w").write(str(p.pid))\ntime.sleep(300)\n`,
  );
  await s.init();
  s.call(1, "gpu-pilot_runOnGpus", { path: "long.py", gpus: ["1"], timeoutSeconds: 600 });
  assert.ok(
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", 20_000),
    "the run started",
  );
  return Number(readFileSync(pidFile, "utf8"));
}

test("runs die with the server: stdin closed, its run's child process is gone within 5 s", async () => {
  const dir = mkdtempSync(join(TMP, "run-"));
  const s = startServer(["--allow-run", "--root", dir]);
  const child = await startLongRun(s, dir);
  assert.equal(alive(child), true);
  s.child.stdin.end();
  assert.ok(await waitFor(() => !alive(child), 5000), `the run's child ${child} outlived the server`);
  assert.ok(await waitFor(() => s.child.exitCode !== null, 5000), "the server exited");
});

test("runs die with the server: SIGTERM to the server, its run's child process is gone within 5 s", async () => {
  const dir = mkdtempSync(join(TMP, "run-"));
  const s = startServer(["--allow-run", "--root", dir]);
  const child = await startLongRun(s, dir);
  s.child.kill("SIGTERM");
  assert.ok(await waitFor(() => !alive(child), 5000), `the run's child ${child} outlived the server`);
});

test("checkFile and runOnGpus: only paths inside --root (links out of it included); runOnGpus only .py files", async () => {
  const root = mkdtempSync(join(TMP, "root-"));
  const outside = mkdtempSync(join(TMP, "outside-"));
  writeFileSync(join(outside, "secret.py"), "import os\n");
  writeFileSync(join(root, "notes.txt"), "print('hi')\n");
  symlinkSync(join(outside, "secret.py"), join(root, "link.py"));
  const s = startServer(["--allow-run", "--root", root]);
  await s.init();
  const text = async (id: number, name: string, args: object) => {
    s.call(id, name, args);
    const r = (await s.next(s.byId(id))).result as { content: Array<{ text: string }>; isError?: boolean };
    return { text: r.content[0].text, isError: r.isError === true };
  };
  for (const [i, p] of [
    join(outside, "secret.py"),
    "../" + join(outside.split("/").pop()!, "secret.py"),
    "link.py",
    "/etc/passwd",
  ].entries()) {
    const r = await text(i + 1, "gpu-pilot_checkFile", { path: p });
    assert.equal(r.isError, true, p);
    assert.match(r.text, /is outside the root .* \(--root\)/, p);
    const run = await text(i + 11, "gpu-pilot_runOnGpus", { path: p, gpus: ["1"] });
    assert.equal(run.isError, true, p);
    assert.match(run.text, /is outside the root|runs Python files/, p);
  }
  const txt = await text(20, "gpu-pilot_runOnGpus", { path: "notes.txt", gpus: ["1"] });
  assert.equal(txt.isError, true);
  assert.match(txt.text, /runs Python files \(\.py\); .*notes\.txt is not one/);
});
