// End-to-end tests of the agent tools (issue 22) in a real VS Code (code-server 4.139 = VS Code
// 1.139, which has vscode.lm.registerTool / invokeTool): the read-only tools are invoked through
// `vscode.lm.invokeTool`, as an agent calls them, and checked against the fake nvidia-smi (2 x H200,
// the captured python3 process on GPU 0) and the workspace's gpu001.py.
//
// gpu-pilot_runOnGpus: there is no chat request here to show VS Code's confirmation in, so its
// registered tool object (the API's getAgentTools()) is driven as VS Code drives it in chat:
// prepareInvocation's confirmation, then invoke, which runs probe_env.py through the run Task on
// GPU 1. Through invokeTool outside chat, GPU Pilot's own confirmation is declined (f).
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, outDir, waitFor, workspaceRoot } from "./util";

const NAMES = ["gpu-pilot_listGpus", "gpu-pilot_pickGpus", "gpu-pilot_checkFile", "gpu-pilot_runOnGpus"];

interface AgentTool {
  prepareInvocation?(
    options: { input: unknown },
    token: vscode.CancellationToken,
  ): Promise<{ confirmationMessages?: { title: string; message: string | vscode.MarkdownString } } | undefined>;
  invoke(options: { input: unknown }, token: vscode.CancellationToken): Promise<unknown>;
}
interface AgentsApi {
  getAgentTools(): { registered: string[]; tools: Record<string, AgentTool> };
  isServerRunning(): boolean;
}
interface Lm {
  tools?: ReadonlyArray<{ name: string }>;
  invokeTool?(
    name: string,
    options: { input: unknown; toolInvocationToken: undefined },
    token?: vscode.CancellationToken,
  ): Promise<{ content: unknown[] }>;
}
const lm = (): Lm => (vscode as unknown as { lm?: Lm }).lm ?? {};

/** The text of a tool result: its text parts joined. */
function textOf(result: unknown): string {
  const content = (result as { content?: unknown[] }).content ?? [];
  return content
    .map((p) => (p as { value?: unknown }).value)
    .filter((v): v is string => typeof v === "string")
    .join("");
}

suite("Agent tools", () => {
  let api: AgentsApi;
  const token = new vscode.CancellationTokenSource().token;

  suiteSetup(async () => {
    api = (await getApi()) as unknown as AgentsApi;
    await waitFor(() => api.isServerRunning() || undefined, "the language server to run");
  });

  test("a. the four tools are registered and listed by vscode.lm.tools", async () => {
    assert.deepEqual(api.getAgentTools().registered, NAMES);
    assert.equal(typeof lm().invokeTool, "function", "this VS Code has vscode.lm.invokeTool");
    const listed = await waitFor(() => {
      const names = (lm().tools ?? []).map((t) => t.name).filter((n) => n.startsWith("gpu-pilot_"));
      return names.length === 4 ? names : undefined;
    }, "vscode.lm.tools to list GPU Pilot's tools");
    assert.deepEqual([...listed].sort(), [...NAMES].sort());
  });

  test("b. invokeTool gpu-pilot_listGpus and gpu-pilot_pickGpus answer from the fake nvidia-smi", async () => {
    const list = textOf(
      await lm().invokeTool!("gpu-pilot_listGpus", { input: {}, toolInvocationToken: undefined }, token),
    );
    assert.match(list, /^2 GPUs \(nvidia-smi at /);
    assert.match(list, /GPU 0 · NVIDIA H200 · GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f · memory 0\/143771 MiB used/);
    assert.match(list, /\n {4}pid 582 · user /);
    assert.match(
      list,
      /GPU 1 · NVIDIA H200 · GPU-6486822f-842c-1320-f829-e4155c0d2130 .*\n {2}free: yes\n {2}processes: none/,
    );
    const pick = textOf(
      await lm().invokeTool!("gpu-pilot_pickGpus", { input: { count: 1 }, toolInvocationToken: undefined }, token),
    );
    assert.match(pick, /^Use GPU 1 \(NVIDIA H200/);
    assert.match(pick, /\nCUDA_VISIBLE_DEVICES=1\nCUDA_DEVICE_ORDER=PCI_BUS_ID/);
    await assert.rejects(
      Promise.resolve(
        lm().invokeTool!("gpu-pilot_pickGpus", { input: { count: 0 }, toolInvocationToken: undefined }, token),
      ),
      /count must be a whole number ≥ 1/,
    );
  });

  test("c. invokeTool gpu-pilot_checkFile: GPU001 on line 5 of gpu001.py from the language server; a missing file is an error", async () => {
    const text = textOf(
      await lm().invokeTool!(
        "gpu-pilot_checkFile",
        { input: { path: "gpu001.py" }, toolInvocationToken: undefined },
        token,
      ),
    );
    assert.match(text, /^gpu001\.py: \d+ findings?:/);
    assert.match(text, /- line 5, column 1: error GPU001: CUDA_VISIBLE_DEVICES is set after CUDA was initialised/);
    assert.match(text, /fix \(safe\): /);
    await assert.rejects(
      Promise.resolve(
        lm().invokeTool!(
          "gpu-pilot_checkFile",
          { input: { path: "no_such_file.py" }, toolInvocationToken: undefined },
          token,
        ),
      ),
      /no such file/,
    );
  });

  test("d. gpu-pilot_runOnGpus: the confirmation names file, launcher and GPU; the run reports exit code 0 and CUDA_VISIBLE_DEVICES=1", async () => {
    const tool = api.getAgentTools().tools["gpu-pilot_runOnGpus"];
    const input = { path: "probe_env.py", gpus: ["1"], launcher: "python" };
    const prepared = await tool.prepareInvocation!({ input }, token);
    const message = prepared?.confirmationMessages?.message;
    const plain = (typeof message === "string" ? message : (message?.value ?? "")).replace(/\\(.)/g, "$1");
    assert.equal(
      plain,
      `GPU Pilot will run ${path.join(workspaceRoot(), "probe_env.py")} with python on GPU 1 (GPU 1 (NVIDIA H200)). This executes the file's code.`,
    );
    const probe = path.join(outDir(), "probe_env.json");
    fs.rmSync(probe, { force: true });
    // As VS Code calls it in a chat request, after showing prepareInvocation's confirmation (a
    // token is set); without one GPU Pilot asks itself (test f).
    const text = textOf(await tool.invoke({ input, toolInvocationToken: {} } as never, token));
    assert.match(
      text,
      /with python on CUDA_VISIBLE_DEVICES=1 \(CUDA_DEVICE_ORDER=PCI_BUS_ID\): exit code 0\.\nexitCode: 0\n/,
    );
    assert.match(text, /probe_env: \{"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"\}/);
    const written = await waitFor(() => (fs.existsSync(probe) ? fs.readFileSync(probe, "utf8") : undefined), probe);
    assert.deepEqual(JSON.parse(written), { CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  });

  test("e. gpuPilot.agentTools.enabled false unregisters the tool implementations; true registers them again", async () => {
    const config = () => vscode.workspace.getConfiguration("gpuPilot");
    await config().update("agentTools.enabled", false, vscode.ConfigurationTarget.Workspace);
    try {
      // vscode.lm.tools keeps listing contributed tools (measured here in 1.139); the contribution's
      // `when: config.gpuPilot.agentTools.enabled` hides them from agents, and no implementation is registered.
      await waitFor(() => api.getAgentTools().registered.length === 0 || undefined, "the tools to be unregistered");
    } finally {
      await config().update("agentTools.enabled", undefined, vscode.ConfigurationTarget.Workspace);
    }
    await waitFor(() => api.getAgentTools().registered.length === 4 || undefined, "the tools to be registered again");
  });

  test("f. invokeTool gpu-pilot_runOnGpus outside chat: VS Code asks nothing, GPU Pilot's own modal confirmation is declined (tests refuse dialogs), nothing runs", async function () {
    this.timeout(60_000);
    const api2 = api as unknown as { readonly lastRun?: { startedAt: number } };
    const before = api2.lastRun?.startedAt;
    const probe = path.join(outDir(), "probe_env.json");
    fs.rmSync(probe, { force: true });
    const call = Promise.resolve(
      lm().invokeTool!(
        "gpu-pilot_runOnGpus",
        { input: { path: "probe_env.py", gpus: ["1"] }, toolInvocationToken: undefined },
        token,
      ),
    );
    // Outside a chat request VS Code 1.139 shows no confirmation (measured: the run went ahead), so
    // GPU Pilot shows its own modal one; the test workbench refuses every dialog, which counts as
    // "not confirmed".
    await assert.rejects(call, /The user did not confirm the run: nothing was run\./);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fs.existsSync(probe), false, "probe_env.py did not run");
    assert.equal(api2.lastRun?.startedAt, before, "no run was started");
  });
});
