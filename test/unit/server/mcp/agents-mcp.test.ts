// `gpu-pilot mcp` (issue 22): started as an agent starts it (node scripts/gpu-pilot.mjs mcp, stdio),
// driven by the official SDK's client; and as VS Code starts the one the extension registers
// (node dist/server.js mcp: the language server's bundle, the .vsix carries no cli.js). The fake nvidia-smi (test/fixtures/bin) is first on PATH:
// GPU 0 holds the captured python3 process (pid 582, user unknown), GPU 1 is idle.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { INPUT_SCHEMAS, TOOL } from "../../../../common/src/agents/core";
import { ROOT } from "../../support/helpers";

const BIN = join(ROOT, "test", "fixtures", "bin");
const EXAMPLES = join(ROOT, "examples");

/** The CLI's wrapper (which builds dist/ first when it is stale), as an agent starts `gpu-pilot mcp`. */
const CLI = [join(ROOT, "scripts", "gpu-pilot.mjs")];
/** The language server's bundle, as VS Code starts the MCP server the extension registers (client/src/agents/register.ts). */
const SERVER_BUNDLE = [join(ROOT, "dist", "server.js")];

async function connect(args: string[] = [], env: Record<string, string> = {}, entry = CLI): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...entry, "mcp", "--root", EXAMPLES, ...args],
    // Each server its own claims ledger (never the machine's /tmp/gpu-pilot-claims), unless the test shares one.
    env: {
      ...(process.env as Record<string, string>),
      PATH: `${BIN}:${process.env.PATH}`,
      FAKE_NVIDIA_SMI_MODE: "busy",
      GPU_PILOT_CLAIMS_DIR: join(mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-claims-")), "ledger"),
      ...env,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "gpu-pilot-test", version: "1" });
  await client.connect(transport);
  clients.push(client);
  return client;
}
const clients: Client[] = [];
after(async () => {
  for (const c of clients) await c.close();
});

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };
async function call(
  c: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ text: string; isError: boolean }> {
  const r = (await c.callTool({ name, arguments: args })) as Result;
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, "text");
  return { text: r.content[0].text ?? "", isError: r.isError === true };
}

test("lists the four tools with the schemas of common/src/agents/core.ts", async () => {
  const c = await connect();
  const { tools } = await c.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    [TOOL.listGpus, TOOL.pickGpus, TOOL.checkFile, TOOL.runOnGpus],
  );
  for (const t of tools) assert.deepEqual(t.inputSchema, INPUT_SCHEMAS[t.name as keyof typeof INPUT_SCHEMAS]);
  assert.match(tools[3].description ?? "", /started without --allow-run/);
});

test("node dist/server.js mcp (the server VS Code starts for the extension) is the same MCP server: initialize, the four tools, a pick that claims in --claims-dir; --no-claims and bad flags as the CLI's", async () => {
  // dist/ is built from the sources first when it is stale (the wrapper builds every bundle).
  spawnSync(process.execPath, [...CLI, "mcp", "--help"], { stdio: "ignore" });
  const ledger = join(mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-claims-")), "ledger");
  const c = await connect(["--claims-dir", ledger], {}, SERVER_BUNDLE);
  assert.deepEqual(c.getServerVersion(), { name: "gpu-pilot", version: "0.1.0" });
  const { tools } = await c.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ["gpu-pilot_listGpus", "gpu-pilot_pickGpus", "gpu-pilot_checkFile", "gpu-pilot_runOnGpus"],
  );
  assert.match(tools[3].description ?? "", /started without --allow-run/);
  const pick = await call(c, TOOL.pickGpus, { count: 1 });
  assert.match(pick.text, /^Use GPU 1 /);
  assert.match(pick.text, /Claimed for this MCP server for 15 minutes/);
  assert.ok(
    readdirSync(ledger).some((f) => f.endsWith(".json")),
    "no claim written in --claims-dir",
  );
  const check = await call(c, TOOL.checkFile, { path: "finetune_wrong_gpu.py" });
  assert.equal(check.isError, false);
  assert.match(check.text, /GPU001/);
  const off = await connect(["--no-claims"], {}, SERVER_BUNDLE);
  const unclaimed = await call(off, TOOL.pickGpus, { count: 1 });
  assert.match(unclaimed.text, /^Use GPU 1 /);
  assert.doesNotMatch(unclaimed.text, /Claimed for/);
  const bad = spawnSync(process.execPath, [...SERVER_BUNDLE, "mcp", "--allow-runs"], { encoding: "utf8" });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^gpu-pilot mcp: unknown option "--allow-runs"\nusage: gpu-pilot mcp/);
  const help = spawnSync(process.execPath, [...SERVER_BUNDLE, "mcp", "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: gpu-pilot mcp /);
});

test("gpu-pilot_listGpus: both GPUs of the fake nvidia-smi, GPU 0 not free (another user's pid 582), GPU 1 free", async () => {
  const c = await connect();
  const r = await call(c, TOOL.listGpus, {});
  assert.equal(r.isError, false);
  assert.match(r.text, /^2 GPUs \(nvidia-smi at /);
  assert.match(
    r.text,
    /GPU 0 · NVIDIA H200 · GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f · memory 0\/143771 MiB used \(143156 MiB free\) · utilisation 0% · temperature 35 °C\n {2}free: no \(in use by another \(unknown\) user \(pid 582\)\)\n {2}processes:\n {4}pid 582 · user unknown · 3380 MiB · python3/,
  );
  assert.match(
    r.text,
    /GPU 1 · NVIDIA H200 · GPU-6486822f-842c-1320-f829-e4155c0d2130 .*\n {2}free: yes\n {2}processes: none/,
  );
  const bad = await call(c, TOOL.listGpus, { verbose: true });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /unknown input field "verbose" \(it takes none\)/);
});

test("gpu-pilot_pickGpus: GPU 1 and its environment; three GPUs: none fits, with GPU 0's reason; bad count refused", async () => {
  const c = await connect();
  const one = await call(c, TOOL.pickGpus, { count: 1 });
  assert.equal(one.isError, false);
  assert.match(one.text, /^Use GPU 1 \(NVIDIA H200, 143156 MiB free, 0% busy\)\./);
  assert.match(one.text, /\nCUDA_VISIBLE_DEVICES=1\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n/);
  const three = await call(c, TOOL.pickGpus, { count: 3 });
  assert.equal(three.isError, true);
  assert.match(three.text, /^No 3 GPUs fit .*: 1 of 2 GPUs qualifies\./);
  assert.match(three.text, /GPU 0: in use by another \(unknown\) user \(pid 582\)/);
  const tight = await call(c, TOOL.pickGpus, { count: 1, minFreeMemoryMiB: 200000 });
  assert.equal(tight.isError, true);
  assert.match(tight.text, /GPU 1: 139\.8 GiB free < 195\.3 GiB/);
  const bad = await call(c, TOOL.pickGpus, { count: 0 });
  assert.equal(bad.isError, true);
  assert.equal(bad.text, "gpu-pilot_pickGpus: count must be a whole number ≥ 1, not 0");
});

test("gpu-pilot_checkFile: the example's GPU001 with its fix; a missing file and a folder are clear errors", async () => {
  const c = await connect();
  const r = await call(c, TOOL.checkFile, { path: "finetune_wrong_gpu.py" });
  assert.equal(r.isError, false);
  assert.match(
    r.text,
    /finetune_wrong_gpu\.py: 1 finding:\n- line 15, column 1: error GPU001: CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch\.cuda\.is_available\(\) \(line 12\)/,
  );
  assert.match(
    r.text,
    /fix \(safe\): Move the CUDA_VISIBLE_DEVICES write above `import torch`\n {4}insert at 9:1-9:1 with "os\.environ/,
  );
  const nb = await call(c, TOOL.checkFile, { path: join(EXAMPLES, "notebook.ipynb") });
  assert.match(nb.text, /- cell 3, line \d+, column \d+: error GPU001/);
  const missing = await call(c, TOOL.checkFile, { path: "no_such_file.py" });
  assert.equal(missing.isError, true);
  assert.equal(missing.text, `gpu-pilot_checkFile: cannot read ${join(EXAMPLES, "no_such_file.py")}: no such file`);
  const folder = await call(c, TOOL.checkFile, { path: EXAMPLES });
  assert.equal(folder.isError, true);
  assert.match(folder.text, /not a regular file \(a folder\)/);
  const noPath = await call(c, TOOL.checkFile, {});
  assert.equal(noPath.isError, true);
  assert.match(noPath.text, /path must be a non-empty string/);
});

test("gpu-pilot_runOnGpus without --allow-run refuses and runs nothing; the server keeps answering", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-"));
  const marker = join(dir, "ran");
  const script = join(dir, "touch.py");
  writeFileSync(script, `open(${JSON.stringify(marker)}, "w").write("x")\n`);
  const c = await connect();
  const r = await call(c, TOOL.runOnGpus, { path: script, gpus: ["1"] });
  assert.equal(r.isError, true);
  assert.match(r.text, /started without --allow-run, so it runs nothing/);
  assert.equal(existsSync(marker), false, "the script did not run");
  const after = await call(c, TOOL.listGpus, {});
  assert.equal(after.isError, false);
});

test("gpu-pilot_runOnGpus with --allow-run: exit code and last lines, CUDA_VISIBLE_DEVICES as asked; unknown GPU and missing file refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-"));
  const script = join(dir, "show_env.py");
  writeFileSync(
    script,
    [
      "import os, sys",
      "for i in range(60): print('line', i)",
      "print('CVD=' + os.environ.get('CUDA_VISIBLE_DEVICES', ''), 'ORDER=' + os.environ.get('CUDA_DEVICE_ORDER', ''), 'ARGS=' + ','.join(sys.argv[1:]))",
      "sys.exit(3)",
    ].join("\n") + "\n",
  );
  const c = await connect(["--allow-run", "--root", dir]);
  const r = await call(c, TOOL.runOnGpus, { path: script, gpus: ["1"], args: ["--a", "$HOME"] });
  assert.equal(r.isError, true, "a non-zero exit is an error result");
  assert.match(
    r.text,
    /^Ran .*show_env\.py with python on CUDA_VISIBLE_DEVICES=1 \(CUDA_DEVICE_ORDER=PCI_BUS_ID\): exit code 3\./,
  );
  assert.match(r.text, /\nexitCode: 3\n/);
  assert.match(r.text, /last 40 lines of output \(21 earlier lines left out\):\n/);
  assert.match(r.text, /\nCVD=1 ORDER=PCI_BUS_ID ARGS=--a,\$HOME$/);
  assert.doesNotMatch(r.text, /line 20\n/);
  const byUuid = await call(c, TOOL.runOnGpus, { path: script, gpus: ["GPU-6486822f-842c-1320-f829-e4155c0d2130"] });
  assert.match(byUuid.text, /CVD=1 ORDER/, "a UUID is written as the index (selectBy index)");
  const unknown = await call(c, TOOL.runOnGpus, { path: script, gpus: ["7"] });
  assert.equal(unknown.isError, true);
  assert.match(
    unknown.text,
    /this machine has no GPU 7; its GPUs are 0 \(GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f\), 1 \(GPU-6486822f-842c-1320-f829-e4155c0d2130\)/,
  );
  const missing = await call(c, TOOL.runOnGpus, { path: join(dir, "absent.py"), gpus: ["1"] });
  assert.equal(missing.isError, true);
  assert.match(missing.text, /^gpu-pilot_runOnGpus: Cannot run .*absent\.py: no such file\.$/);
  const shell = await call(c, TOOL.runOnGpus, { path: script, gpus: ["1;rm -rf /"] });
  assert.equal(shell.isError, true);
  assert.match(shell.text, /not a GPU index or UUID: "1;rm -rf \/"/);
  const launcher = await call(c, TOOL.runOnGpus, { path: script, gpus: ["1"], launcher: "docker" });
  assert.match(launcher.text, /launcher must be one of python, torchrun, accelerate, deepspeed, not "docker"/);
});

test("gpu-pilot_runOnGpus stops a run past timeoutSeconds and says so", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-"));
  const script = join(dir, "sleep.py");
  writeFileSync(script, "import time\nprint('started', flush=True)\ntime.sleep(60)\n");
  const c = await connect(["--allow-run", "--root", dir]);
  const r = await call(c, TOOL.runOnGpus, { path: script, gpus: ["0"], timeoutSeconds: 1 });
  assert.equal(r.isError, true);
  assert.match(r.text, /: stopped after 1 s \(timeoutSeconds\) by SIGTERM\./);
  assert.match(r.text, /\nstarted$/);
});

test("no nvidia-smi: listGpus is a clear error; checkFile still lints (GPU017 stays silent)", async () => {
  const c = await connect(["--nvidia-smi", "/nonexistent/nvidia-smi"]);
  const r = await call(c, TOOL.listGpus, {});
  assert.equal(r.isError, true);
  assert.match(r.text, /^nvidia-smi \(\/nonexistent\/nvidia-smi\) could not be read: /);
  const check = await call(c, TOOL.checkFile, { path: "finetune_wrong_gpu.py" });
  assert.equal(check.isError, false);
  assert.match(check.text, /error GPU001/);
});

test("an unknown tool is an error result; bad flags exit 2 with the usage", async () => {
  const c = await connect();
  const r = await call(c, "gpu-pilot_submitSlurm", {});
  assert.equal(r.isError, true);
  assert.match(r.text, /Unknown tool "gpu-pilot_submitSlurm"/);
  const bad = spawnSync(process.execPath, [join(ROOT, "scripts", "gpu-pilot.mjs"), "mcp", "--allow-runs"], {
    encoding: "utf8",
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /gpu-pilot mcp: unknown option "--allow-runs"\nusage: gpu-pilot mcp/);
});

test("claims: a pick claims GPU 1 for its server; a second server sharing the ledger is refused it (pick and run) until the first exits", async () => {
  const ledger = join(mkdtempSync(join(tmpdir(), "gpu-pilot-mcp-claims-")), "ledger");
  const a = await connect(["--allow-run"], { GPU_PILOT_CLAIMS_DIR: ledger });
  const b = await connect(["--allow-run"], { GPU_PILOT_CLAIMS_DIR: ledger });
  const first = await call(a, TOOL.pickGpus, { count: 1 });
  assert.match(first.text, /^Use GPU 1 /);
  assert.match(first.text, /Claimed for this MCP server for 15 minutes/);
  const second = await call(b, TOOL.pickGpus, { count: 1 });
  assert.equal(second.isError, true);
  assert.match(second.text, /GPU 1: claimed by \S+ \(mcp: gpu-pilot mcp \d+, pid \d+, since \d\d:\d\d\)/);
  const list = await call(b, TOOL.listGpus, {});
  assert.match(list.text, /free: no \(claimed by /);
  const run = await call(b, TOOL.runOnGpus, { path: join(EXAMPLES, "no_such_file.py"), gpus: ["1"] });
  assert.match(run.text, /GPU 1 is claimed by .*pick other GPUs with gpu-pilot_pickGpus/);
  const waited = call(b, TOOL.pickGpus, { count: 1, waitSeconds: 30 });
  await new Promise((done) => setTimeout(done, 300));
  await a.close(); // the server exits and releases its claims
  const got = await waited;
  assert.match(got.text, /^Use GPU 1 /, got.text);
});
