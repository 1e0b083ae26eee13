// "Run Active File on Selected GPUs" with a stand-in `vscode` module (client-fakeVscode.ts, imported
// first): the Task it builds, saving, picking GPUs, and the exit code report.
import { FakeDocument, recorded, settings, Task, TaskScope, tasks, Uri, window, workspace } from "./client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { LastRun } from "../../client/src/api";
import { GpuMonitor } from "../../client/src/gpu/monitor";
import { SelectionStore } from "../../client/src/gpu/selection";
import { runActiveFile, type RunHost } from "../../client/src/run/runActiveFile";

const FAKE = join(__dirname, "..", "fixtures", "bin", "nvidia-smi");
const PROJECT = "/work/proj";

function memento() {
  const data = new Map<string, unknown>();
  return {
    get: <T>(key: string) => data.get(key) as T | undefined,
    update: (key: string, value: unknown) => {
      data.set(key, value);
      return Promise.resolve();
    },
  };
}

async function host(selection: string[] = []): Promise<RunHost & { lastRun?: LastRun; dispose(): void }> {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  recorded.messages.length = 0;
  recorded.answers.length = 0;
  recorded.quickPicks.length = 0;
  recorded.quickPickAnswer = undefined;
  tasks.executed.length = 0;
  workspace.folder = { uri: Uri.file(PROJECT), name: "proj", index: 0 };
  workspace.saveAsTarget = undefined;
  const monitor = new GpuMonitor();
  await monitor.refresh();
  const store = new SelectionStore(memento());
  await store.set(selection);
  const h = {
    monitor,
    selection: store,
    subscriptions: [] as { dispose(): void }[],
    lastRun: undefined as LastRun | undefined,
    setLastRun(run: LastRun) {
      h.lastRun = run;
    },
    dispose: () => monitor.dispose(),
  };
  return h;
}

function open(doc: FakeDocument): FakeDocument {
  workspace.textDocuments = [doc];
  window.activeTextEditor = { document: doc };
  return doc;
}

const expectedEnv = (gpus: string) => ({ CUDA_VISIBLE_DEVICES: gpus, CUDA_DEVICE_ORDER: "PCI_BUS_ID" });

test("runs the active file as a Task with a ProcessExecution, reports the exit code", async () => {
  const h = await host(["1"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  const task = tasks.executed[0];
  assert.equal(task.definition.type, "gpuPilot");
  assert.equal(task.name, "train.py on GPU 1");
  assert.equal(task.source, "GPU Pilot");
  assert.equal(task.scope, workspace.folder, "scoped to the workspace folder");
  assert.equal(task.execution.process, "python3", "no Python extension: python3");
  assert.deepEqual(task.execution.args, [`${PROJECT}/train.py`]);
  assert.deepEqual(task.execution.options, { cwd: PROJECT, env: expectedEnv("1") });
  assert.ok(recorded.log.some((l) => /Python extension \(ms-python\.python\) is not installed: running with python3/.test(l)));

  assert.equal(h.lastRun?.file, `${PROJECT}/train.py`);
  assert.equal(h.lastRun?.exitCode, undefined);
  assert.equal(h.subscriptions.length, 2, "start/end listeners live in the extension's subscriptions");
  tasks.finish(task, 4242, 0);
  assert.equal(h.lastRun?.pid, 4242);
  assert.equal(h.lastRun?.exitCode, 0);
  assert.ok(h.lastRun?.endedAt);
  assert.deepEqual(recorded.messages, ["train.py on GPU 1: finished (exit code 0)."]);
  assert.equal(h.subscriptions.length, 0, "listeners removed after the end");
  h.dispose();
});

test("a failing run is reported with its exit code; an unrelated task is ignored", async () => {
  const h = await host(["0", "1"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/bad.py`)));
  await runActiveFile(h);
  const task = tasks.executed[0];
  assert.deepEqual(task.execution.options?.env, expectedEnv("0,1"));
  const other = new Task({ type: "shell" }, TaskScope.Workspace, "other", "x", task.execution);
  tasks.finish(other, 1, 5);
  assert.equal(h.lastRun?.exitCode, undefined);
  tasks.finish(task, 7, 3);
  assert.equal(h.lastRun?.exitCode, 3);
  assert.deepEqual(recorded.messages, ["bad.py on GPU 0,1: failed with exit code 3."]);
  h.dispose();
});

test("a dirty file is saved first; a file outside the workspace runs in its own folder", async () => {
  const h = await host(["0"]);
  const doc = open(new FakeDocument(Uri.file("/tmp/scratch/try.py"), "python", true));
  await runActiveFile(h);
  assert.equal(doc.saves, 1);
  const task = tasks.executed[0];
  assert.equal(task.scope, TaskScope.Workspace);
  assert.equal(task.execution.options?.cwd, "/tmp/scratch");
  h.dispose();
});

test("untitled: declining the save offer stops; cancelling Save As stops; saving runs the saved file", async () => {
  const h = await host(["1"]);
  open(new FakeDocument(Uri.untitled("Untitled-1")));
  recorded.answers.push(undefined);
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.match(recorded.messages[0], /Save this untitled Python file/);

  recorded.answers.push("Save As...");
  workspace.saveAsTarget = undefined;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0, "Save As dialog cancelled");

  recorded.answers.push("Save As...");
  workspace.saveAsTarget = `${PROJECT}/new.py`;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  assert.deepEqual(tasks.executed[0].execution.args, [`${PROJECT}/new.py`]);
  h.dispose();
});

test("nothing ticked: the GPU quick pick asks; the pick is kept; cancel does nothing", async () => {
  const h = await host([]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.quickPickAnswer = undefined;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.deepEqual(recorded.quickPicks[0].labels, ["GPU 0: NVIDIA H200", "GPU 1: NVIDIA H200"]);
  assert.deepEqual(recorded.quickPicks[0].preselected, []);

  recorded.quickPickAnswer = ["GPU 1: NVIDIA H200"];
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  assert.deepEqual(tasks.executed[0].execution.options?.env, expectedEnv("1"));
  assert.deepEqual(h.selection.get(), ["1"]);
  h.dispose();
});

test("a selection naming a GPU that is not there asks first", async () => {
  const h = await host(["3"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.answers.push(undefined);
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.match(recorded.messages[0], /names 3, which nvidia-smi does not list \(GPUs here: 0, 1\)/);
  recorded.answers.push("Run Anyway");
  await runActiveFile(h);
  assert.deepEqual(tasks.executed[0].execution.options?.env, expectedEnv("3"));
  h.dispose();
});

test("no editor, or not Python: a short message and no task", async () => {
  const h = await host(["0"]);
  window.activeTextEditor = undefined;
  await runActiveFile(h);
  open(new FakeDocument(Uri.file(`${PROJECT}/notes.md`), "markdown"));
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.deepEqual(recorded.messages, ["Open a Python file to run it on GPUs.", "GPU Pilot runs Python files; notes.md is markdown."]);
  h.dispose();
});

test("the editor title button's Uri wins over the active editor", async () => {
  const h = await host(["0"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/other.py`)));
  workspace.textDocuments.push(new FakeDocument(Uri.file(`${PROJECT}/picked.py`)));
  await runActiveFile(h, Uri.file(`${PROJECT}/picked.py`) as never);
  assert.deepEqual(tasks.executed[0].execution.args, [`${PROJECT}/picked.py`]);
  h.dispose();
});
