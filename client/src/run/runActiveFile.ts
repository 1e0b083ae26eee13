/**
 * `gpuPilot.runActiveFile`: runs the active Python file on the selected GPUs as a VS Code Task
 * (ProcessExecution with an argument array and CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER in its
 * environment), then reports the exit code in the log and a notification.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import type { LastRun } from "../api";
import type { GpuMonitor } from "../gpu/monitor";
import { pickGpus } from "../gpu/picker";
import { type SelectionStore, unknownEntries } from "../gpu/selection";
import { log } from "../log";
import { resolveInterpreter } from "./interpreter";
import { buildLaunch, describeExit, LaunchError } from "./launch";

/** Task definition type of GPU Pilot runs. */
export const TASK_TYPE = "gpuPilot";

/** What the command needs from the extension context (see ctx.ts). */
export interface RunHost {
  readonly monitor: GpuMonitor;
  readonly selection: SelectionStore;
  /** Disposables that live as long as the extension (task listeners are added here). */
  readonly subscriptions: vscode.Disposable[];
  /** Receives the run record, updated in place as the task starts and ends. */
  setLastRun(run: LastRun): void;
}

let runCounter = 0;

/** The Python document to run: the one named by `uri` (editor title button), else the active editor's. */
async function targetDocument(uri: vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
  if (uri instanceof vscode.Uri) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    return open ?? (await vscode.workspace.openTextDocument(uri));
  }
  return vscode.window.activeTextEditor?.document;
}

/**
 * Saves the document if needed. An untitled document is saved only if the user agrees (Save As
 * dialog); a dirty one is saved.
 * @returns the document on disk, or undefined when the user declined or the save failed (reported).
 */
async function ensureSaved(doc: vscode.TextDocument): Promise<vscode.TextDocument | undefined> {
  if (doc.isUntitled) {
    const choice = await vscode.window.showInformationMessage(
      "Save this untitled Python file to run it on GPUs?",
      { modal: true },
      "Save As...",
    );
    if (choice !== "Save As...") return undefined;
    const saved = await vscode.workspace.save(doc.uri);
    if (!saved) return undefined; // dialog cancelled
    if (saved.scheme !== "file") {
      void vscode.window.showWarningMessage(`GPU Pilot can only run files on disk, not ${saved.toString()}.`);
      return undefined;
    }
    return vscode.workspace.openTextDocument(saved);
  }
  if (doc.isDirty && !(await doc.save())) {
    void vscode.window.showWarningMessage(`Could not save ${path.basename(doc.uri.fsPath)}; it was not run.`);
    return undefined;
  }
  return doc;
}

/** The GPUs to run on: the selection, or a pick when nothing is ticked (persisted). Undefined = do not run. */
async function chooseGpus(host: RunHost): Promise<string[] | undefined> {
  let ids = host.selection.get();
  if (ids.length === 0) {
    const picked = await pickGpus(host.monitor, [], "Run on which GPUs? (CUDA_VISIBLE_DEVICES)");
    if (!picked || picked.length === 0) return undefined;
    await host.selection.set(picked);
    ids = picked;
  }
  const gpus = host.monitor.inventory?.gpus;
  const unknown = gpus ? unknownEntries(ids, gpus) : [];
  if (gpus && unknown.length > 0) {
    const choice = await vscode.window.showWarningMessage(
      `The selection names ${unknown.join(", ")}, which nvidia-smi does not list (GPUs here: ${gpus.map((g) => g.index).join(", ") || "none"}).`,
      { modal: true },
      "Choose GPUs",
      "Run Anyway",
    );
    if (choice === "Run Anyway") return ids;
    if (choice !== "Choose GPUs") return undefined;
    const picked = await pickGpus(host.monitor, ids);
    if (!picked || picked.length === 0) return undefined;
    await host.selection.set(picked);
    return picked;
  }
  return ids;
}

/**
 * The command. `uri` is passed by the editor title Run menu; otherwise the active editor is used.
 * Never throws: problems are shown as notifications and logged.
 */
export async function runActiveFile(host: RunHost, uri?: vscode.Uri): Promise<void> {
  let doc = await targetDocument(uri);
  if (!doc) {
    void vscode.window.showInformationMessage("Open a Python file to run it on GPUs.");
    return;
  }
  if (doc.languageId !== "python") {
    void vscode.window.showInformationMessage(`GPU Pilot runs Python files; ${path.basename(doc.uri.path)} is ${doc.languageId}.`);
    return;
  }
  doc = await ensureSaved(doc);
  if (!doc) return;
  if (doc.uri.scheme !== "file") {
    void vscode.window.showWarningMessage(`GPU Pilot can only run files on disk, not ${doc.uri.toString()}.`);
    return;
  }

  const ids = await chooseGpus(host);
  if (!ids) return;

  const interpreter = await resolveInterpreter(doc.uri);
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
  const file = doc.uri.fsPath;
  let spec;
  try {
    spec = buildLaunch({ interpreter: interpreter.path, file, cwd: folder?.uri.fsPath ?? path.dirname(file), deviceIds: ids });
  } catch (e) {
    if (!(e instanceof LaunchError)) throw e;
    log.warn(`Not running ${file}: ${e.message}`);
    void vscode.window.showErrorMessage(`GPU Pilot: ${e.message}`);
    return;
  }

  const runId = `${Date.now()}-${++runCounter}`;
  const run: LastRun = {
    file,
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    interpreterSource: interpreter.source,
    title: spec.title,
    startedAt: Date.now(),
  };
  host.setLastRun(run);

  const task = new vscode.Task(
    { type: TASK_TYPE, runId, file, gpus: spec.env.CUDA_VISIBLE_DEVICES },
    folder ?? vscode.TaskScope.Workspace,
    spec.title,
    "GPU Pilot",
    new vscode.ProcessExecution(spec.command, spec.args, { cwd: spec.cwd, env: spec.env }),
    [],
  );
  task.presentationOptions = {
    reveal: vscode.TaskRevealKind.Always,
    panel: vscode.TaskPanelKind.Dedicated,
    clear: true,
    focus: false,
    showReuseMessage: false,
  };

  const ours = (e: { execution: vscode.TaskExecution }) =>
    e.execution.task.definition.type === TASK_TYPE && e.execution.task.definition.runId === runId;
  const listeners: vscode.Disposable[] = [];
  const cleanup = () => {
    for (const l of listeners.splice(0)) {
      l.dispose();
      const i = host.subscriptions.indexOf(l);
      if (i >= 0) host.subscriptions.splice(i, 1);
    }
  };
  listeners.push(
    vscode.tasks.onDidStartTaskProcess((e) => {
      if (!ours(e)) return;
      run.pid = e.processId;
      log.info(`Started ${spec.command} ${spec.args.join(" ")} (pid ${e.processId}) in ${spec.cwd} with CUDA_VISIBLE_DEVICES=${spec.env.CUDA_VISIBLE_DEVICES} CUDA_DEVICE_ORDER=PCI_BUS_ID`);
    }),
    vscode.tasks.onDidEndTaskProcess((e) => {
      if (!ours(e)) return;
      run.exitCode = e.exitCode ?? null;
      run.endedAt = Date.now();
      const { ok, message } = describeExit(spec.title, e.exitCode);
      if (ok) {
        log.info(message);
        void vscode.window.showInformationMessage(message);
      } else {
        log.warn(message);
        void vscode.window.showWarningMessage(message, "Show Output").then((c) => {
          if (c) log.show();
        });
      }
      cleanup();
    }),
  );
  host.subscriptions.push(...listeners);

  log.info(`Running ${spec.title}: ${JSON.stringify({ command: spec.command, args: spec.args, cwd: spec.cwd, env: spec.env, interpreter: interpreter.source })}`);
  try {
    await vscode.tasks.executeTask(task);
  } catch (e) {
    run.error = (e as Error).message ?? String(e);
    cleanup();
    log.error(`Could not start the task ${spec.title}`, e);
    void vscode.window.showErrorMessage(`GPU Pilot could not start ${spec.title}: ${run.error}`);
  }
}
