// The VS Code language-model tools (client/src/agents/lmTools.ts) with the stand-in `vscode`
// (client-fakeVscode.ts, imported first) and the fake nvidia-smi: registration and the setting that
// turns them off, each tool's input validation and text result, the run tool's confirmation,
// Restricted Mode refusal and a real run through the run command's Task. Also: package.json's
// contributes.languageModelTools matches common/src/agents/core.ts.
import {
  changeSettings,
  recorded,
  lm,
  LanguageModelToolResult,
  MarkdownString,
  McpStdioServerDefinition,
  memento,
  settings,
  tasks,
  Uri,
  workspace,
  FakeDocument,
} from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LastRun } from "../../../../client/src/api";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import {
  type AgentHost,
  type AgentTool,
  createAgentTools,
  registerAgentTools,
} from "../../../../client/src/agents/lmTools";
import { DESCRIPTIONS, INPUT_SCHEMAS, TOOL } from "../../../../common/src/agents/core";
import type { CheckFileResult } from "../../../../common/src/lsp/protocol";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const none = {
  isCancellationRequested: false,
  onCancellationRequested: () => ({
    dispose() {
      /* */
    },
  }),
};

type TestHost = AgentHost & { lastRun?: LastRun; checked: string[]; dispose(): void };

async function host(
  check: (path: string) => CheckFileResult = (path) => ({ ok: true, path, source: "disk", findings: [] }),
): Promise<TestHost> {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  workspace.isTrusted = true;
  const dir = mkdtempSync(join(tmpdir(), "gpu-pilot-agent-"));
  workspace.folder = { uri: Uri.file(dir), name: "proj", index: 0 };
  tasks.executed.length = 0;
  const monitor = new GpuMonitor();
  await monitor.refresh();
  const state = memento();
  const h: TestHost = {
    monitor,
    selection: new SelectionStore(state),
    subscriptions: [],
    workspaceState: state,
    checked: [],
    setLastRun(run: LastRun) {
      h.lastRun = run;
    },
    checkFile(path: string) {
      h.checked.push(path);
      return Promise.resolve(check(path));
    },
    dispose: () => monitor.dispose(),
  };
  return h;
}

const textOf = (r: unknown): string => {
  assert.ok(r instanceof LanguageModelToolResult, "a LanguageModelToolResult");
  assert.equal(r.content.length, 1);
  return (r.content[0] as { value: string }).value;
};
const invoke = (tool: AgentTool, input: unknown) => tool.invoke({ input }, none as never);
/** As VS Code calls a tool in a chat request, after its own confirmation. */
const inChat = (tool: AgentTool, input: unknown) =>
  tool.invoke({ input, toolInvocationToken: { chat: true } }, none as never);

test("package.json contributes the four tools with core.ts's names, descriptions and schemas, and the setting", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const contributed = pkg.contributes.languageModelTools as Array<{
    name: string;
    modelDescription: string;
    inputSchema: unknown;
    when: string;
  }>;
  assert.deepEqual(
    contributed.map((t) => t.name),
    Object.values(TOOL),
  );
  for (const t of contributed) {
    assert.deepEqual(t.inputSchema, INPUT_SCHEMAS[t.name as keyof typeof INPUT_SCHEMAS]);
    assert.equal(t.modelDescription, DESCRIPTIONS[t.name as keyof typeof DESCRIPTIONS]);
    assert.equal(t.when, "config.gpuPilot.agentTools.enabled");
  }
  assert.equal(pkg.contributes.configuration.properties["gpuPilot.agentTools.enabled"].default, true);
  assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders, [{ id: "gpuPilot.mcp", label: "GPU Pilot" }]);
});

test("registers the tools and the MCP server; gpuPilot.agentTools.enabled false unregisters them, true again registers them", async () => {
  const h = await host();
  lm.tools.clear();
  lm.mcpProviders.clear();
  const reg = registerAgentTools(createAgentTools(h), "/ext");
  assert.deepEqual(reg.registered(), Object.values(TOOL));
  assert.deepEqual([...lm.tools.keys()], Object.values(TOOL));
  const defs = lm.mcpProviders.get("gpuPilot.mcp")!.provideMcpServerDefinitions(none) as McpStdioServerDefinition[];
  assert.equal(defs.length, 1);
  assert.ok(defs[0] instanceof McpStdioServerDefinition);
  assert.equal(defs[0].command, process.execPath);
  assert.deepEqual(defs[0].args, [
    "/ext/dist/server.js",
    "mcp",
    "--nvidia-smi",
    FAKE,
    "--root",
    workspace.folder!.uri.fsPath,
  ]);
  assert.ok(!defs[0].args!.includes("--allow-run"), "the MCP server VS Code starts runs nothing");
  assert.deepEqual(defs[0].env, { ELECTRON_RUN_AS_NODE: "1" });
  settings.set("agentTools.enabled", false);
  changeSettings(["gpuPilot.agentTools.enabled"]);
  assert.deepEqual(reg.registered(), []);
  assert.equal(lm.tools.size, 0);
  assert.equal(lm.mcpProviders.size, 0);
  settings.set("agentTools.enabled", true);
  changeSettings(["gpuPilot.agentTools.enabled"]);
  assert.equal(lm.tools.size, 4);
  for (const d of reg.disposables) d.dispose();
  assert.equal(lm.tools.size, 0);
  h.dispose();
});

test("without vscode.lm.registerTool (VS Code before 1.95) nothing is registered and nothing throws", async () => {
  const h = await host();
  const saved = lm.registerTool;
  const savedMcp = lm.registerMcpServerDefinitionProvider;
  lm.registerTool = undefined;
  lm.registerMcpServerDefinitionProvider = undefined;
  try {
    const reg = registerAgentTools(createAgentTools(h), "/ext");
    assert.deepEqual(reg.registered(), []);
    for (const d of reg.disposables) d.dispose();
  } finally {
    lm.registerTool = saved;
    lm.registerMcpServerDefinitionProvider = savedMcp;
    h.dispose();
  }
});

test("gpu-pilot_listGpus: the fake nvidia-smi's two GPUs from the GPU view's monitor; unknown fields refused", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const text = textOf(await invoke(tools[TOOL.listGpus], {}));
  assert.match(
    text,
    /^2 GPUs \(nvidia-smi at .*free means: at least 1024 MiB free, at most 10% busy, no other user's process/,
  );
  assert.match(
    text,
    /GPU 0 · NVIDIA H200 · GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f · memory 0\/143771 MiB used \(143156 MiB free\)/,
  );
  assert.match(text, /\n {2}processes:\n {4}pid 582 · user /);
  assert.match(text, /GPU 1 · .*\n {2}free: yes\n {2}processes: none/);
  await assert.rejects(
    invoke(tools[TOOL.listGpus], { all: true }),
    /gpu-pilot_listGpus: unknown input field "all" \(it takes none\)/,
  );
  await assert.rejects(invoke(tools[TOOL.listGpus], [1]), /the input must be an object, not an array/);
  h.dispose();
});

test("gpu-pilot_pickGpus: the settings' policy by default, input overrides; selectBy uuid writes UUIDs; the selection is unchanged", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const one = textOf(await invoke(tools[TOOL.pickGpus], {}));
  assert.match(
    one,
    /^Use GPU 1 .*\nStart the job with this environment .*\nCUDA_VISIBLE_DEVICES=1\nCUDA_DEVICE_ORDER=PCI_BUS_ID/,
  );
  settings.set("pick.excludeBusyWithOtherUsers", false);
  settings.set("selectBy", "uuid");
  const two = textOf(await invoke(tools[TOOL.pickGpus], { count: 2 }));
  assert.match(
    two,
    /\nCUDA_VISIBLE_DEVICES=GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f,GPU-6486822f-842c-1320-f829-e4155c0d2130\n/,
  );
  settings.set("pick.excludeBusyWithOtherUsers", true);
  const none2 = textOf(await invoke(tools[TOOL.pickGpus], { count: 2 }));
  assert.match(none2, /^No 2 GPUs fit .*: 1 of 2 GPUs qualifies\.\nWhy the others do not:\n {2}GPU 0: in use by /);
  await assert.rejects(
    invoke(tools[TOOL.pickGpus], { maxUtilizationPercent: 120 }),
    /maxUtilizationPercent must be a percentage from 0 to 100, not 120/,
  );
  await assert.rejects(invoke(tools[TOOL.pickGpus], { count: 1.5 }), /count must be a whole number ≥ 1, not 1\.5/);
  await assert.rejects(
    invoke(tools[TOOL.pickGpus], { excludeBusyWithOtherUsers: "yes" }),
    /excludeBusyWithOtherUsers must be true or false/,
  );
  assert.deepEqual(h.selection.get(), [], "pickGpus changes nothing");
  h.dispose();
});

test("gpu-pilot_checkFile: asks the language server for the resolved path and renders its findings and fix; its error is the tool's error", async () => {
  const h = await host((path) =>
    path.endsWith("missing.py")
      ? { ok: false, path, error: `cannot read ${path}: no such file` }
      : {
          ok: true,
          path,
          source: "editor",
          findings: [
            {
              code: "GPU001",
              severity: "error",
              message: "CUDA_VISIBLE_DEVICES is set after CUDA was initialised\nby torch.cuda.is_available() (line 3)",
              line: 5,
              column: 1,
              url: "https://example.org/GPU001",
              fix: {
                title: "Move the write above `import torch`",
                safe: true,
                edits: [
                  { line: 1, column: 1, endLine: 1, endColumn: 1, newText: "import os\n" },
                  { line: 5, column: 1, endLine: 6, endColumn: 1, newText: "" },
                ],
              },
            },
          ],
        },
  );
  const tools = createAgentTools(h);
  const text = textOf(await invoke(tools[TOOL.checkFile], { path: "train.py" }));
  assert.deepEqual(h.checked, [join(workspace.folder!.uri.fsPath, "train.py")], "relative to the workspace folder");
  assert.equal(
    text,
    [
      "train.py: 1 finding:",
      "- line 5, column 1: error GPU001: CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch.cuda.is_available() (line 3)",
      "  fix (safe): Move the write above `import torch`",
      '    insert at 1:1-1:1 with "import os\\n"',
      "    delete 5:1-6:1",
      "  docs: https://example.org/GPU001",
      "(checked the open editor's text, unsaved changes included)",
    ].join("\n"),
  );
  await assert.rejects(
    invoke(tools[TOOL.checkFile], { path: "/abs/missing.py" }),
    /gpu-pilot_checkFile: cannot read \/abs\/missing\.py: no such file/,
  );
  await assert.rejects(invoke(tools[TOOL.checkFile], { path: "" }), /path must be a non-empty string/);
  await assert.rejects(invoke(tools[TOOL.checkFile], { file: "x.py" }), /unknown input field "file" \(known: path\)/);
  h.dispose();
});

test("gpu-pilot_runOnGpus: the confirmation names file, launcher and GPUs; bad input asks nothing", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const prepared = await tools[TOOL.runOnGpus].prepareInvocation!(
    { input: { path: "train.py", gpus: ["1"], launcher: "torchrun", args: ["--epochs", "1"] } },
    none as never,
  );
  assert.equal(prepared?.confirmationMessages?.title, "Run a file on GPUs?");
  const message = prepared!.confirmationMessages!.message as MarkdownString;
  assert.ok(message instanceof MarkdownString);
  const plain = message.value.replace(/\\(.)/g, "$1");
  assert.equal(
    plain,
    `GPU Pilot will run ${join(workspace.folder!.uri.fsPath, "train.py")} with torchrun on GPU 1 (GPU 1 (NVIDIA H200)), arguments ["--epochs","1"]. This executes the file's code.`,
  );
  const bad = await tools[TOOL.runOnGpus].prepareInvocation!({ input: { path: "train.py" } }, none as never);
  assert.equal(bad?.confirmationMessages, undefined);
  await assert.rejects(
    invoke(tools[TOOL.runOnGpus], { path: "train.py" }),
    /gpus must be a non-empty array of GPU indices or UUIDs/,
  );
  h.dispose();
});

test("gpu-pilot_runOnGpus: refused in Restricted Mode before anything runs; unknown GPU and missing file refused", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const file = join(workspace.folder!.uri.fsPath, "t.py");
  writeFileSync(file, "print('hi')\n");
  workspace.isTrusted = false;
  await assert.rejects(
    inChat(tools[TOOL.runOnGpus], { path: file, gpus: ["1"] }),
    /Refused: the workspace is not trusted \(Restricted Mode\)/,
  );
  await assert.rejects(
    invoke(tools[TOOL.runOnGpus], { path: file, gpus: ["1"] }),
    /Refused: the workspace is not trusted \(Restricted Mode\)/,
  );
  workspace.isTrusted = true;
  await assert.rejects(
    inChat(tools[TOOL.runOnGpus], { path: file, gpus: ["5"] }),
    /this machine has no GPU 5; its GPUs are 0 \(GPU-ddb4766f/,
  );
  await assert.rejects(
    inChat(tools[TOOL.runOnGpus], { path: "absent.py", gpus: ["1"] }),
    /Cannot run .*absent\.py: no such file\./,
  );
  await assert.rejects(inChat(tools[TOOL.runOnGpus], { path: "notes.txt", gpus: ["1"] }), /runs Python files \(\.py\)/);
  assert.equal(tasks.executed.length, 0, "no task started");
  h.dispose();
});

test("gpu-pilot_runOnGpus: runs through the run Task (CustomExecution), returns exit code, environment and the last lines", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const file = join(workspace.folder!.uri.fsPath, "job.py");
  writeFileSync(
    file,
    "import os, sys\nfor i in range(45): print('step', i)\nprint('CVD=' + os.environ['CUDA_VISIBLE_DEVICES'], 'ARGS=' + ','.join(sys.argv[1:]))\nsys.exit(2)\n",
  );
  workspace.textDocuments = [new FakeDocument(Uri.file(file))];
  const pending = inChat(tools[TOOL.runOnGpus], {
    path: "job.py",
    gpus: ["GPU-6486822f-842c-1320-f829-e4155c0d2130"],
    args: ["${env:HOME}"],
  });
  while (tasks.executed.length === 0) await new Promise((r) => setTimeout(r, 10));
  const task = tasks.executed[0];
  assert.equal(task.name, "job.py on GPU 1");
  const opened = await tasks.open(task);
  const text = textOf(await pending);
  await opened.closed;
  assert.match(
    text,
    /^Ran .*job\.py with python on CUDA_VISIBLE_DEVICES=1 \(CUDA_DEVICE_ORDER=PCI_BUS_ID\): exit code 2\.\nexitCode: 2\n/,
  );
  assert.match(text, /\nlast 40 lines of output \(\d+ earlier lines left out\):\n/);
  assert.match(text, /\nstep 44\nCVD=1 ARGS=\$\{env:HOME\}$/, "the program's last lines, no ${...} resolved");
  assert.equal(h.lastRun?.exitCode, 2, "the run record is updated as for the command");
  h.dispose();
});

test("gpu-pilot_runOnGpus outside a chat request (vscode.lm.invokeTool from code): GPU Pilot's own modal confirmation; declined runs nothing, Run runs", async () => {
  const h = await host();
  const tools = createAgentTools(h);
  const file = join(workspace.folder!.uri.fsPath, "ok.py");
  writeFileSync(file, "print('fine')\n");
  recorded.messages.length = 0;
  recorded.answers.length = 0;
  recorded.answers.push(undefined);
  await assert.rejects(
    invoke(tools[TOOL.runOnGpus], { path: "ok.py", gpus: ["1"] }),
    /The user did not confirm the run: nothing was run\./,
  );
  assert.deepEqual(recorded.messages, ["Run a file on GPUs?"]);
  assert.equal(tasks.executed.length, 0);
  recorded.answers.push("Run");
  const pending = invoke(tools[TOOL.runOnGpus], { path: "ok.py", gpus: ["1"] });
  while (tasks.executed.length === 0) await new Promise((r) => setTimeout(r, 10));
  await tasks.open(tasks.executed[0]);
  assert.match(textOf(await pending), /: exit code 0\.\nexitCode: 0\n[\s\S]*\nfine$/);
  h.dispose();
});
