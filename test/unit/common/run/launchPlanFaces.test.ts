// The three run faces (the editor's run command, the language-model tool gpu-pilot_runOnGpus and the
// MCP server's run) on an AMD ROCm machine (amd-smi on PATH, no nvidia-smi: test/fixtures/bin/amd-smi
// prints the published output of test/fixtures/amd-smi) and on an NVIDIA one (test/fixtures/bin/nvidia-smi
// replays the real 2 x H200 captures of test/fixtures/nvidia-smi/h200x2). Each face reads the GPUs,
// gathers its inputs and plans with common/src/run/plan.ts; only the process start is stubbed:
// child_process.spawn records what the run's program would get (command, arguments, folder, the
// whole environment) and starts a Node that exits at once instead. The three must start the same
// program with the same environment, and refuse a missing interpreter and a missing script with the
// same sentence. The inherited environment holds CUDA_VISIBLE_DEVICES=3 and HIP_VISIBLE_DEVICES=7.
import {
  FakeDocument,
  recorded,
  settings,
  tasks,
  Uri,
  window,
  workspace,
  memento,
} from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
// The module object, to replace its spawn (the process start) below; nothing here runs exec/execSync.
// eslint-disable-next-line no-restricted-syntax
import childProcess, { type SpawnOptions } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { LastRun } from "../../../../client/src/api";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { runActiveFile } from "../../../../client/src/run/runActiveFile";
import { type AgentHost, createAgentTools } from "../../../../client/src/agents/lmTools";
import { TOOL } from "../../../../common/src/agents/core";
import { McpTools } from "../../../../server/src/mcp/server";
import { mcpCheckFile } from "../../../../server/src/mcp/engine";
import { ROOT } from "../../support/root";

const BIN = join(ROOT, "test", "fixtures", "bin");
const NODE_DIR = dirname(process.execPath);
/** The interpreter every face runs (the editor's default without the Python extension, the MCP server's `--python`). */
const PYTHON = "python3";
const none = {
  isCancellationRequested: false,
  onCancellationRequested: () => ({
    dispose() {
      /* */
    },
  }),
};

const tmp = realpathSync(mkdtempSync(join(tmpdir(), "gpu-pilot-faces-")));
const saved = {
  PATH: process.env.PATH,
  CUDA_VISIBLE_DEVICES: process.env.CUDA_VISIBLE_DEVICES,
  HIP_VISIBLE_DEVICES: process.env.HIP_VISIBLE_DEVICES,
  FAKE_NVIDIA_SMI_MODE: process.env.FAKE_NVIDIA_SMI_MODE,
};

/** What the stubbed process start was asked to start: the run's program, as the OS would get it. */
interface Start {
  command: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string | undefined>;
}
const starts: Start[] = [];
// The process start, stubbed for the run's program only (nvidia-smi and amd-smi run for real).
// execa imports `spawn` from node:child_process; syncBuiltinESMExports passes the stub on to it.
const realSpawn = childProcess.spawn;
const stub = function (this: unknown, command: string, args: readonly string[], options: SpawnOptions) {
  if (command !== PYTHON) return (realSpawn as (...a: unknown[]) => unknown).call(this, command, args, options);
  starts.push({ command, args: [...args], cwd: options.cwd?.toString(), env: { ...options.env } });
  return realSpawn.call(this, process.execPath, ["-e", ""], { ...options, env: {} });
};
childProcess.spawn = stub as typeof childProcess.spawn;
syncBuiltinESMExports();

test.after(() => {
  childProcess.spawn = realSpawn;
  syncBuiltinESMExports();
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  rmSync(tmp, { recursive: true, force: true });
});

/** A machine: its PATH and the nvidia-smi GPU Pilot is told to read. */
interface Machine {
  name: string;
  path: string;
  nvidiaSmi: string;
  gpus: string[];
}
const amdBin = join(tmp, "amd-bin");
const nvBin = join(tmp, "nv-bin");
/** A folder holding a `python3` (never started: the start is stubbed), for the machines' PATH. */
const pyBin = join(tmp, "py-bin");
const AMD: Machine = { name: "amd", path: `${amdBin}:${pyBin}:${NODE_DIR}`, nvidiaSmi: "nvidia-smi", gpus: ["0"] };
const NVIDIA: Machine = {
  name: "nvidia",
  path: `${BIN}:${nvBin}:${pyBin}:${NODE_DIR}`,
  nvidiaSmi: join(BIN, "nvidia-smi"),
  gpus: ["1"],
};
/** The same machines without any python3 on PATH. */
const withoutPython = (m: Machine): Machine => ({ ...m, path: m.path.replace(`:${pyBin}`, "") });

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
  recorded.messages.length = 0;
  starts.length = 0;
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

/** What a face did: the one start it asked for, or the sentence it refused with (its own prefix taken off). */
type Outcome = { start: Start } | { refused: string };

/** The start recorded for the task a face started (opened as VS Code would), or undefined when it started none. */
async function taskStart(): Promise<Start | undefined> {
  if (tasks.executed.length === 0) return undefined;
  const opened = await tasks.open(tasks.executed[0]);
  await opened.closed;
  return starts[0];
}

const outcome = (start: Start | undefined, text: string, prefix: string): Outcome => {
  if (start) return { start };
  assert.ok(text.startsWith(prefix), `"${text}" starts with "${prefix}"`);
  return { refused: text.slice(prefix.length) };
};

async function editorFace(m: Machine, file: string): Promise<Outcome> {
  enter(m);
  const h = await host(m);
  try {
    const doc = new FakeDocument(Uri.file(file));
    workspace.textDocuments = [doc];
    window.activeTextEditor = { document: doc };
    await runActiveFile(h);
    return outcome(await taskStart(), recorded.messages.at(-1) ?? "(no message)", "GPU Pilot: ");
  } finally {
    h.dispose();
  }
}

async function agentFace(m: Machine, file: string): Promise<Outcome> {
  enter(m);
  const h = await host(m);
  try {
    const tool = createAgentTools(h)[TOOL.runOnGpus];
    const pending = tool
      .invoke({ input: { path: file, gpus: m.gpus }, toolInvocationToken: { chat: true } }, none as never)
      .then(
        () => "",
        (e: Error) => e.message,
      );
    // The task starts after the inventory is read; the tool answers once it has ended.
    while (tasks.executed.length === 0 && !(await Promise.race([pending, undefined])))
      await new Promise((r) => setTimeout(r, 10));
    const start = await taskStart();
    return outcome(start, await pending, "");
  } finally {
    h.dispose();
  }
}

async function mcpFace(m: Machine, file: string): Promise<Outcome> {
  enter(m);
  const tools = new McpTools(
    {
      allowRun: true,
      nvidiaSmi: m.nvidiaSmi,
      python: PYTHON,
      root: tmp,
      nvidiaSmiTimeoutMs: 10_000,
    },
    mcpCheckFile,
  );
  const r = await tools.call(TOOL.runOnGpus, { path: file, gpus: m.gpus });
  const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  assert.equal(starts.length <= 1, true, "one start at most");
  return outcome(starts[0], text, `${TOOL.runOnGpus}: `);
}

async function faces(m: Machine, file: string): Promise<Record<"editor" | "agent" | "mcp", Outcome>> {
  return { editor: await editorFace(m, file), agent: await agentFace(m, file), mcp: await mcpFace(m, file) };
}

test("editor, language-model tool and MCP server plan the same start on AMD and on NVIDIA, and refuse a missing program or script alike", async (t) => {
  if (existsSync(join(NODE_DIR, "nvidia-smi"))) return t.skip("nvidia-smi sits next to node on this machine");
  for (const dir of [amdBin, nvBin, pyBin]) mkdirSync(dir);
  writeFileSync(join(pyBin, PYTHON), "#!/bin/sh\nexit 99\n", { mode: 0o755 });
  symlinkSync(join(BIN, "amd-smi"), join(amdBin, "amd-smi"));
  const file = join(tmp, "show_devices.py");
  writeFileSync(file, "print('never run')\n");

  /** The inherited environment with the vendor's selection applied, as launch.ts documents it. */
  const expectedEnv = (m: Machine): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = { ...process.env, PATH: m.path };
    env.CUDA_VISIBLE_DEVICES = "3";
    env.HIP_VISIBLE_DEVICES = "7";
    env.FAKE_NVIDIA_SMI_MODE = "busy";
    if (m === AMD) {
      // ROCR_VISIBLE_DEVICES alone: HIP would apply an inherited HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES) after it.
      for (const k of ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"])
        delete env[k];
      env.ROCR_VISIBLE_DEVICES = "0";
    } else {
      env.CUDA_VISIBLE_DEVICES = "1";
      env.CUDA_DEVICE_ORDER = "PCI_BUS_ID";
    }
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    return env;
  };
  for (const m of [AMD, NVIDIA]) {
    const got = await faces(m, file);
    const want: Outcome = { start: { command: PYTHON, args: [file], cwd: tmp, env: expectedEnv(m) } };
    assert.deepEqual(got, { editor: want, agent: want, mcp: want }, `${m.name}: the three faces' starts`);
    const env = (got.editor as { start: Start }).start.env;
    if (m === AMD) {
      assert.equal(env.ROCR_VISIBLE_DEVICES, "0");
      assert.equal(env.CUDA_VISIBLE_DEVICES, undefined);
      assert.equal(env.HIP_VISIBLE_DEVICES, undefined);
    } else {
      assert.equal(env.CUDA_VISIBLE_DEVICES, "1");
      assert.equal(env.CUDA_DEVICE_ORDER, "PCI_BUS_ID");
      assert.equal(env.ROCR_VISIBLE_DEVICES, undefined);
    }

    // The refusals do not depend on the vendor: the missing interpreter on AMD, the missing script on NVIDIA.
    if (m === AMD) {
      const missingPython: Outcome = {
        refused: "The Python interpreter python3 was not found on PATH: install Python or choose another interpreter.",
      };
      assert.deepEqual(
        await faces(withoutPython(m), file),
        { editor: missingPython, agent: missingPython, mcp: missingPython },
        `${m.name}: no python3 on PATH`,
      );
    } else {
      const absent = join(tmp, "absent.py");
      const missingScript: Outcome = { refused: `Cannot run ${absent}: no such file.` };
      assert.deepEqual(
        await faces(m, absent),
        { editor: missingScript, agent: missingScript, mcp: missingScript },
        `${m.name}: a script that is not there`,
      );
    }
  }
});
