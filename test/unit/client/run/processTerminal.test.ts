// The run's pseudoterminal (client/src/run/processTerminal.ts) with real processes: the argument
// array and the environment reach the program byte for byte (nothing expanded, nothing added),
// output is written with \r\n, typed input is forwarded a line at a time, Ctrl+C is SIGINT to the
// process group, stop is SIGTERM then SIGKILL, a program that cannot start ends the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ProcessExit,
  ProcessTerminal,
  type ProcessTerminalOptions,
  signalExitCode,
  toTerminalText,
} from "../../../../client/src/run/processTerminal";

const NODE = process.execPath;

interface Session {
  term: ProcessTerminal;
  output: () => string;
  exit: Promise<ProcessExit>;
  closed: Promise<number | void>;
  started: Promise<number>;
}

function start(args: string[], extra: Partial<ProcessTerminalOptions> = {}): Session {
  let out = "";
  let onStart!: (pid: number) => void;
  let onExit!: (e: ProcessExit) => void;
  const started = new Promise<number>((r) => (onStart = r));
  const exit = new Promise<ProcessExit>((r) => (onExit = r));
  const term = new ProcessTerminal({
    command: NODE,
    args,
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? "" },
    onStart,
    onExit,
    ...extra,
  });
  const closed = new Promise<number | void>((r) => term.onDidClose(r));
  term.onDidWrite((t) => (out += t));
  term.open(undefined);
  return { term, output: () => out, exit, closed, started };
}

/** Resolves once `pred` holds (polling), or rejects after `ms`. */
async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("argv and the environment reach the program byte for byte: ${...} stays literal, nothing is added", async () => {
  const argv = [
    "${env:HOME}",
    "x_${command:gpuPilot.refresh}.py",
    "${workspaceFolder}",
    "${config:editor.fontSize}",
    "a b\tc\nd",
    "é ✓",
    "$(echo no) `no` ;|&",
  ];
  const s = start(
    ["-e", "process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), env: process.env }))", ...argv],
    {
      env: { ONLY: "${env:HOME}", PATH: process.env.PATH ?? "" },
    },
  );
  assert.deepEqual(await s.exit, { exitCode: 0 });
  assert.equal(await s.closed, 0);
  const got = JSON.parse(s.output()) as { argv: string[]; env: Record<string, string> };
  assert.deepEqual(got.argv, argv);
  assert.deepEqual(
    got.env,
    { ONLY: "${env:HOME}", PATH: process.env.PATH ?? "" },
    "the environment is exactly the one given",
  );
});

test("output: lone \\n written as \\r\\n, \\r\\n and \\r kept, also across chunks", async () => {
  assert.equal(toTerminalText("a\nb\r\nc\rd\n"), "a\r\nb\r\nc\rd\r\n");
  assert.equal(toTerminalText("\nx", true), "\nx", "the \\n completes a \\r at the end of the previous chunk");
  assert.equal(toTerminalText("\nx", false), "\r\nx");
  const s = start([
    "-e",
    "process.stdout.write('one\\ntwo\\r\\n'); process.stderr.write('err\\n'); process.exitCode = 3",
  ]);
  assert.deepEqual(await s.exit, { exitCode: 3 });
  assert.equal(await s.closed, 3);
  const out = s.output();
  assert.ok(out.includes("one\r\ntwo\r\n"), JSON.stringify(out));
  assert.ok(out.includes("err\r\n"), JSON.stringify(out));
  assert.ok(!/[^\r]\n/.test(out), JSON.stringify(out));
});

test("typed input: echoed, sent a line at a time on Enter, Backspace edits, Ctrl+D ends the input, arrows dropped", async () => {
  const s = start([
    "-e",
    `
    let all = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (d) => { all += d; process.stdout.write("got:" + JSON.stringify(d) + "\\n"); });
    process.stdin.on("end", () => { process.stdout.write("eof:" + JSON.stringify(all) + "\\n"); });
  `,
  ]);
  await s.started;
  s.term.handleInput("helo\x7fp\x1b[A\r");
  await until(() => s.output().includes('got:"help\\n"'), "the first line");
  s.term.handleInput("two\r\nthree");
  s.term.handleInput("\x04");
  s.term.handleInput("\x04");
  assert.deepEqual(await s.exit, { exitCode: 0 });
  const out = s.output();
  assert.ok(out.startsWith("helo\b \bp\r\n"), `echo: ${JSON.stringify(out)}`);
  assert.ok(out.includes('eof:"help\\ntwo\\nthree"'), JSON.stringify(out));
});

test(
  "Ctrl+C: SIGINT to the whole process group (a child process gets it too)",
  { skip: process.platform === "win32", timeout: 20_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-pty-"));
    const mark = join(dir, "child-got-sigint");
    const s = start([
      "-e",
      `
    const { spawn } = require("node:child_process");
    const body = "process.on('SIGINT', () => { require('fs').writeFileSync(process.argv[1], 'yes'); process.exit(0); }); process.stdout.write('ready'); setInterval(() => {}, 1000);";
    const child = spawn(process.execPath, ["-e", body, ${JSON.stringify(mark)}], { stdio: ["ignore", "inherit", "inherit"] });
    process.on("SIGINT", () => { child.on("exit", () => process.exit(42)); });
    setInterval(() => {}, 1000);
  `,
    ]);
    await s.started;
    await until(() => s.output().includes("ready"), "the child to start");
    s.term.handleInput("\x03");
    assert.deepEqual(await s.exit, { exitCode: 42 }, s.output());
    assert.equal(readFileSync(mark, "utf8"), "yes", "the child in the group got SIGINT");
    assert.ok(s.output().includes("^C\r\n"));
  },
);

test(
  "stop: SIGTERM; a program that ignores it gets SIGKILL after the wait; the close code is 128 + signal",
  { skip: process.platform === "win32" },
  async () => {
    const polite = start(["-e", "process.stdout.write('up'); setInterval(() => {}, 1000)"]);
    await until(() => polite.output().includes("up"), "the program");
    polite.term.close();
    assert.deepEqual(await polite.exit, { signal: "SIGTERM" });
    assert.equal(await polite.closed, signalExitCode("SIGTERM"));
    assert.equal(signalExitCode("SIGTERM"), 143);

    const stubborn = start(
      [
        "-e",
        "process.on('SIGTERM', () => process.stdout.write('ignored')); process.stdout.write('up'); setInterval(() => {}, 1000)",
      ],
      { killAfterMs: 200 },
    );
    await until(() => stubborn.output().includes("up"), "the program");
    stubborn.term.close();
    assert.deepEqual(await stubborn.exit, { signal: "SIGKILL" });
    assert.equal(await stubborn.closed, 137);
    assert.ok(stubborn.output().includes("ignored"));
  },
);

test("a program that cannot start (missing folder, missing program) ends the run with a message and code 1", async () => {
  const noDir = start(["-e", "1"], { cwd: "/nonexistent-gpu-pilot/${env:HOME}" });
  const e1 = await noDir.exit;
  assert.equal(e1.exitCode, undefined);
  assert.match(e1.error ?? "", /ENOENT|nonexistent/);
  assert.equal(await noDir.closed, 1);
  assert.match(noDir.output(), /GPU Pilot could not start .*\r\n/);
  assert.equal(existsSync("/nonexistent-gpu-pilot"), false);

  const noProg = new ProcessTerminal({ command: "/nonexistent-gpu-pilot/python", args: [], cwd: tmpdir(), env: {} });
  const code = new Promise((r) => noProg.onDidClose(r));
  noProg.open(undefined);
  assert.equal(await code, 1);
});
