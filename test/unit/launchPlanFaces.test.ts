// The three run faces (the editor's run command, the language-model tool gpu-pilot_runOnGpus and the
// MCP server's) on an AMD ROCm machine (amd-smi on PATH, no nvidia-smi: test/fixtures/bin/amd-smi)
// and on an NVIDIA one (the fake nvidia-smi): each runs a real Python script that prints the
// device variables it got, and all three must print the same (common/src/run/plan.ts is their one
// planner). The inherited environment holds CUDA_VISIBLE_DEVICES=3 and HIP_VISIBLE_DEVICES=7.
import { FakeDocument, memento, settings, tasks, Uri, window, workspace } from "./client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import type { LastRun } from "../../client/src/api";
import { GpuMonitor } from "../../client/src/gpu/monitor";
import { SelectionStore } from "../../common/src/gpu/selection";
import { findProgram } from "../../common/src/run/which";
import { runActiveFile } from "../../client/src/run/runActiveFile";
import { type AgentHost, createAgentTools } from "../../client/src/agents/lmTools";
import { TOOL } from "../../common/src/agents/core";
import { McpTools } from "../../server/src/mcp/server";

const BIN = join(__dirname, "..", "fixtures", "bin");
const NODE_DIR = dirname(process.execPath);
/** The real python3 executable (not a shim script that needs more of PATH), or undefined. */
const PYTHON = findProgram("python3", { pathEnv: process.env.PATH })
  ? spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim() || undefined
  : undefined;
const KEYS = ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"];
const none = {
  isCancellationRequested: false,
  onCancellationRequested: () => ({
    dispose() {
      /* */
    },
  }),
};

const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-faces-"));
const saved = {
  PATH: process.env.PATH,
  CUDA_VISIBLE_DEVICES: process.env.CUDA_VISIBLE_DEVICES,
  HIP_VISIBLE_DEVICES: process.env.HIP_VISIBLE_DEVICES,
  FAKE_NVIDIA_SMI_MODE: process.env.FAKE_NVIDIA_SMI_MODE,
};
test.after(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  rmSync(tmp, { recursive: true, force: true });
});

/** A machine: its PATH (python3 always on it) and the nvidia-smi GPU Pilot is told to read. */
interface Machine {
  name: string;
  path: string;
  nvidiaSmi: string;
  gpus: string[];
}
const amdBin = join(tmp, "amd-bin");
const nvBin = join(tmp, "nv-bin");
const AMD: Machine = { name: "amd", path: `${amdBin}:${NODE_DIR}`, nvidiaSmi: "nvidia-smi", gpus: ["0"] };
const NVIDIA: Machine = {
  name: "nvidia",
  path: `${BIN}:${nvBin}:${NODE_DIR}`,
  nvidiaSmi: join(BIN, "nvidia-smi"),
  gpus: ["1"],
};

/** The script every face runs: prints the device variables it sees as one JSON line. */
function script(): string {
  const file = join(tmp, "show_devices.py");
  writeFileSync(
    file,
    `import json, os\nprint("ENV=" + json.dumps({k: os.environ.get(k) for k in ${JSON.stringify(KEYS)}}, sort_keys=True))\n`,
  );
  return file;
}
/** The variables the script printed; when it printed none (refused, failed), the face's text instead. */
const printed = (text: string): Record<string, string | null> => {
  const m = /ENV=(\{.*\})/.exec(text);
  return m ? JSON.parse(m[1]) : { notRun: text };
};

function enter(m: Machine): void {
  process.env.PATH = m.path;
  process.env.CUDA_VISIBLE_DEVICES = "3";
  process.env.HIP_VISIBLE_DEVICES = "7";
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  if (m.nvidiaSmi !== "nvidia-smi") settings.set("nvidiaSmiPath", m.nvidiaSmi);
  settings.set("nvidiaSmiTimeoutMs", 10_000);
  workspace.isTrusted = true;
  workspace.folder = { uri: Uri.file(tmp), name: "proj", index: 0 };
  tasks.executed.length = 0;
}

async function host(m: Machine): Promise<AgentHost & { dispose(): void }> {
  const monitor = new GpuMonitor();
  await monitor.refresh();
  assert.equal(monitor.state, "ok", `${m.name}: the GPU view reads the GPUs (${monitor.problem})`);
  const state = memento();
  const selection = new SelectionStore(state);
  await selection.set(m.gpus);
  return {
    monitor,
    selection,
    subscriptions: [],
    workspaceState: state,
    setLastRun(_run: LastRun) {
      /* not needed */
    },
    checkFile: () => Promise.reject(new Error("not used")),
    dispose: () => monitor.dispose(),
  };
}

/** Opens the one task a face started (VS Code would), waits for its end, returns what the program wrote. */
async function runStartedTask(): Promise<string> {
  while (tasks.executed.length === 0) await new Promise((r) => setTimeout(r, 10));
  const opened = await tasks.open(tasks.executed[0]);
  await opened.closed;
  return opened.output();
}

async function editorFace(m: Machine, file: string): Promise<Record<string, string | null>> {
  enter(m);
  const h = await host(m);
  try {
    const doc = new FakeDocument(Uri.file(file));
    workspace.textDocuments = [doc];
    window.activeTextEditor = { document: doc };
    await runActiveFile(h);
    return printed(await runStartedTask());
  } finally {
    h.dispose();
  }
}

async function agentFace(m: Machine, file: string): Promise<Record<string, string | null>> {
  enter(m);
  const h = await host(m);
  try {
    const tool = createAgentTools(h)[TOOL.runOnGpus];
    const pending = tool.invoke(
      { input: { path: file, gpus: m.gpus }, toolInvocationToken: { chat: true } },
      none as never,
    );
    await runStartedTask();
    const r = (await pending) as { content: Array<{ value: string }> };
    return printed(r.content[0].value);
  } finally {
    h.dispose();
  }
}

async function mcpFace(m: Machine, file: string): Promise<Record<string, string | null>> {
  enter(m);
  const tools = new McpTools({
    allowRun: true,
    nvidiaSmi: m.nvidiaSmi,
    python: PYTHON!,
    root: tmp,
    nvidiaSmiTimeoutMs: 10_000,
  });
  const r = await tools.call(TOOL.runOnGpus, { path: file, gpus: m.gpus });
  return printed(r.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
}

test("editor, language-model tool and MCP server give a run the same device variables, on AMD and on NVIDIA", async (t) => {
  if (!PYTHON) return t.skip("no python3 on PATH");
  if (existsSync(join(NODE_DIR, "nvidia-smi"))) return t.skip("nvidia-smi sits next to node on this machine");
  for (const dir of [amdBin, nvBin]) {
    mkdirSync(dir);
    symlinkSync(PYTHON, join(dir, "python3"));
  }
  symlinkSync(join(BIN, "amd-smi"), join(amdBin, "amd-smi"));
  const file = script();
  const expected = {
    amd: { CUDA_DEVICE_ORDER: null, CUDA_VISIBLE_DEVICES: null, HIP_VISIBLE_DEVICES: null, ROCR_VISIBLE_DEVICES: "0" },
    nvidia: {
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      CUDA_VISIBLE_DEVICES: "1",
      HIP_VISIBLE_DEVICES: "7",
      ROCR_VISIBLE_DEVICES: null,
    },
  };
  for (const m of [AMD, NVIDIA]) {
    const got = { editor: await editorFace(m, file), agent: await agentFace(m, file), mcp: await mcpFace(m, file) };
    const want = expected[m.name as keyof typeof expected];
    assert.deepEqual(got, { editor: want, agent: want, mcp: want }, `${m.name}: the three faces' environments`);
  }
});
