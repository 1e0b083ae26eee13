/**
 * `gpuPilot.runActiveFile` and `gpuPilot.runActiveFileWith`: run the active Python file on the
 * selected GPUs as a VS Code Task in the terminal panel, with the launcher of `gpuPilot.run.launcher`
 * or one picked from a list; the checks of checks.ts come first, each with a way forward. A
 * notification offers "Show Output" / "Stop" while it runs; the exit code is reported at the end.
 *
 * This file gathers the run's inputs (document, settings, selection, inventory, interpreter) and
 * asks common/src/run/plan.ts `planLaunch` for the launch, as the agent tool and the MCP server do.
 * The Task's execution is a `CustomExecution` whose pseudoterminal (processTerminal.ts) starts the
 * program with execa: an argument array, the whole environment built here
 * (common/src/run/launch.ts `runEnvironment`), cwd = the workspace folder. Never a `ProcessExecution`: VS Code resolves
 * `${env:…}`, `${config:…}`, `${workspaceFolder}` and runs `${command:…}` in a ProcessExecution's
 * command, arguments, cwd and environment, so a file named `x_${command:ID}.py` would run that
 * command and `${env:HF_TOKEN}` would land in argv. For a CustomExecution it resolves nothing.
 * The only expansion is gpuPilot.run.env's documented `${env:NAME}` (common/src/run/launch.ts `expandEnv`).
 *
 * Nothing runs in an untrusted workspace.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as vscode from "vscode";
import { entryUuids, type ClaimKeeper } from "../../../common/src/gpu/claimKeeper";
import type { RunFacts } from "../../../common/src/run/runFacts";
import type { RunFactsResult } from "../../../common/src/lsp/protocol";
import type { LastRun } from "../api";
import type { GpuMonitor } from "../gpu/monitor";
import { pickGpus } from "../gpu/picker";
import type { SelectionStore, StateLike } from "../../../common/src/gpu/selection";
import { log } from "../log";
import { checkRun, type RunFinding } from "./checks";
import { resolveInterpreter } from "./interpreter";
import {
  describeExit,
  LAUNCHERS,
  type LauncherKind,
  type LaunchSpec,
  runEnvironment,
  splitArgs,
} from "../../../common/src/run/launch";
import { planLaunch } from "../../../common/src/run/plan";
import { type ProcessOwner, processOwner } from "./owners";
import { type ProcessExit, ProcessTerminal } from "./processTerminal";
import * as settings from "./settings";
import { findProgram, scriptProblem } from "../../../common/src/run/which";

/** Task definition type of GPU Pilot runs (package.json `taskDefinitions`). */
export const TASK_TYPE = "gpuPilot";

/** workspaceState key of the remembered argument prompt: absolute file path → the text typed. */
export const ARGS_STATE_KEY = "gpuPilot.run.lastArgs";

/** What the commands need from the extension context (see ctx.ts). */
export interface RunHost {
  readonly monitor: GpuMonitor;
  readonly selection: SelectionStore;
  /** Disposables that live as long as the extension (task listeners are added here). */
  readonly subscriptions: vscode.Disposable[];
  /** Workspace state: the remembered argument prompt lives here ({@link ARGS_STATE_KEY}). */
  readonly workspaceState: StateLike;
  /** Receives the run record, updated in place as the task starts and ends. */
  setLastRun(run: LastRun): void;
  /** The window's GPU claims (claimKeeper.ts): a run's GPUs are claimed (purpose `run`) until it ends. Absent: no claims. */
  readonly claims?: Pick<ClaimKeeper, "holdForRun" | "adopt" | "ledger">;
  /** Whose a process is; default: `/proc` (owners.ts). Tests replace it. */
  readonly ownerOf?: (pid: number) => ProcessOwner;
  /**
   * What the script does, from the language server's engine (`gpuPilot/runFacts`: launcher-set
   * variables it reads, its CUDA_VISIBLE_DEVICES writes with the verdict on whether each takes
   * effect); `ok: false` with the reason when the server cannot say. Should never reject (a
   * rejection is taken as `ok: false`). Absent: no facts, the run goes on without those checks.
   */
  runFacts?(uri: vscode.Uri, text: string): Promise<RunFactsResult>;
}

/** Options of {@link runActiveFile}. */
export interface RunOptions {
  /** Overrides `gpuPilot.run.launcher` for this run. */
  launcher?: LauncherKind;
  /** Ask for the script arguments (pre-filled with the remembered ones) before running. */
  promptArgs?: boolean;
}

let runCounter = 0;

const TRUST_ACTION = "Manage Workspace Trust";

/** Refuses in an untrusted workspace (a clear message with a way to trust it). @returns true when trusted. */
export function requireTrust(): boolean {
  if (vscode.workspace.isTrusted) return true;
  log.warn("Run refused: the workspace is not trusted (Restricted Mode).");
  void vscode.window
    .showWarningMessage(
      "GPU Pilot does not run files in Restricted Mode: running a file executes its code and the workspace's run settings. Trust this workspace to run files on GPUs.",
      TRUST_ACTION,
    )
    .then((c) => {
      if (c === TRUST_ACTION) void vscode.commands.executeCommand("workbench.trust.manage");
    });
  return false;
}

/** The Python document to run: the one named by `uri` (editor title button, CodeLens), else the active editor's. */
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
  const ids = host.selection.get();
  if (ids.length > 0) return ids;
  const picked = await pickGpus(host.monitor, [], "Run on which GPUs? (CUDA_VISIBLE_DEVICES)");
  if (!picked || picked.length === 0) return undefined;
  await host.selection.set(picked);
  return picked;
}

/** srun with nothing selected (a login node may have no GPU): how many GPUs to ask Slurm for. */
async function askGpuCount(): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title: "GPU Pilot: srun --gpus",
    prompt: "How many GPUs should Slurm allocate for this run?",
    value: "1",
    validateInput: (v) => (/^[1-9]\d{0,3}$/.test(v.trim()) ? undefined : "A whole number from 1"),
  });
  return text === undefined ? undefined : Number(text.trim());
}

function rememberedArgs(host: RunHost, file: string): string {
  const all = host.workspaceState.get<unknown>(ARGS_STATE_KEY);
  const v = all && typeof all === "object" ? (all as Record<string, unknown>)[file] : undefined;
  return typeof v === "string" ? v : "";
}

async function rememberArgs(host: RunHost, file: string, text: string): Promise<void> {
  const all = host.workspaceState.get<unknown>(ARGS_STATE_KEY);
  const next = { ...(all && typeof all === "object" ? (all as Record<string, unknown>) : {}), [file]: text };
  await host.workspaceState.update(ARGS_STATE_KEY, next);
}

/**
 * Asks the language server what the script does, for the checks (the client bundles no parser).
 * When it cannot say (not running, still starting and then failing, an error, no answer in time)
 * the checks that need it are skipped and the run stays possible: the reason is logged and, when
 * `tell` (a run the user started), shown in a warning that does not block.
 */
async function analyse(doc: vscode.TextDocument, host: RunHost, tell: boolean): Promise<RunFacts | undefined> {
  const r: RunFactsResult = host.runFacts
    ? await host
        .runFacts(doc.uri, doc.getText())
        .catch((e: unknown) => ({ ok: false as const, error: (e as Error)?.message ?? String(e) }))
    : { ok: false, error: "no language server" };
  if (r.ok) return r.facts;
  const name = path.basename(doc.uri.fsPath);
  log.warn(`Run checks of ${doc.uri.fsPath} skipped: ${r.error}.`);
  if (tell) {
    void vscode.window.showWarningMessage(
      `GPU Pilot could not check ${name} before the run (${r.error}); it runs without the distributed-launcher and CUDA_VISIBLE_DEVICES checks.`,
    );
  }
  return undefined;
}

/**
 * The findings for running `uri` (or the active editor) as things stand, without asking anything or
 * running: the API's `checkRun`, used by tests and other extensions.
 */
export async function checkRunFor(host: RunHost, uri?: vscode.Uri, launcher?: LauncherKind): Promise<RunFinding[]> {
  const doc = await targetDocument(uri);
  if (!doc) return [];
  const kind = launcher ?? settings.launcher(doc.uri);
  return checkRun({
    launcher: kind,
    file: doc.uri.fsPath,
    ids: host.selection.get(),
    nproc: settings.nproc(doc.uri),
    analysis: await analyse(doc, host, false),
    inventory: host.monitor.inventory,
    ownerOf: host.ownerOf ?? processOwner,
  });
}

/** Where a run stands while its findings are answered. */
interface RunChoice {
  launcher: LauncherKind;
  ids: string[];
  nproc: number;
}

/**
 * Asks about each finding in turn (recomputed after an answer changes the choice).
 * @returns false when the user chose not to run.
 */
async function resolveFindings(
  host: RunHost,
  doc: vscode.TextDocument,
  choice: RunChoice,
  analysis: RunFacts | undefined,
): Promise<boolean> {
  const answered = new Set<RunFinding["kind"]>();
  for (let round = 0; round < 10; round++) {
    const findings = checkRun({
      launcher: choice.launcher,
      file: doc.uri.fsPath,
      ids: choice.ids,
      nproc: choice.nproc,
      analysis,
      inventory: host.monitor.inventory,
      ownerOf: host.ownerOf ?? processOwner,
    }).filter((f) => !answered.has(f.kind));
    const f = findings[0];
    if (!f) return true;
    answered.add(f.kind);
    log.info(`Run check (${f.kind}): ${f.message}`);
    switch (f.kind) {
      case "unknownIds": {
        const c = await vscode.window.showWarningMessage(f.message, { modal: true }, "Choose GPUs", "Run Anyway");
        if (c === "Run Anyway") break;
        if (c !== "Choose GPUs") return false;
        const picked = await pickGpus(host.monitor, choice.ids);
        if (!picked || picked.length === 0) return false;
        await host.selection.set(picked);
        choice.ids = picked;
        answered.delete("unknownIds");
        break;
      }
      case "tooManyProcesses": {
        const one = `Use ${f.gpus} Process${f.gpus === 1 ? "" : "es"}`;
        const c = await vscode.window.showWarningMessage(f.message, { modal: true }, one, "Run Anyway");
        if (c === one) choice.nproc = f.gpus;
        else if (c !== "Run Anyway") return false;
        break;
      }
      case "needsDistributedLauncher": {
        const c = await vscode.window.showWarningMessage(
          f.message,
          { modal: true },
          "Run with torchrun",
          "Run with python",
        );
        if (c === "Run with torchrun") choice.launcher = "torchrun";
        else if (c !== "Run with python") return false;
        break;
      }
      case "overridesSelection": {
        const c = await vscode.window.showWarningMessage(f.message, { modal: true }, "Run Anyway", "Show the Line");
        if (c === "Show the Line") {
          const pos = new vscode.Position(f.line, 0);
          await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
          return false;
        }
        if (c !== "Run Anyway") return false;
        break;
      }
      case "busy":
        // Shared GPUs are common: say so, never block.
        void vscode.window.showWarningMessage(`GPU Pilot: ${f.message}`);
        break;
    }
  }
  return true;
}

/**
 * The command. `uri` is passed by the editor title Run menu and the CodeLens; otherwise the active
 * editor is used. Never throws: problems are shown as notifications and logged.
 */
export async function runActiveFile(host: RunHost, uri?: vscode.Uri, options: RunOptions = {}): Promise<void> {
  if (!requireTrust()) return;
  let doc = await targetDocument(uri);
  if (!doc) {
    void vscode.window.showInformationMessage("Open a Python file to run it on GPUs.");
    return;
  }
  if (doc.languageId !== "python") {
    void vscode.window.showInformationMessage(
      `GPU Pilot runs Python files; ${path.basename(doc.uri.path)} is ${doc.languageId}.`,
    );
    return;
  }
  doc = await ensureSaved(doc);
  if (!doc) return;
  if (doc.uri.scheme !== "file") {
    void vscode.window.showWarningMessage(`GPU Pilot can only run files on disk, not ${doc.uri.toString()}.`);
    return;
  }
  const file = doc.uri.fsPath;
  const choice: RunChoice = {
    launcher: options.launcher ?? settings.launcher(doc.uri),
    ids: [],
    nproc: settings.nproc(doc.uri),
  };

  let gpuCount: number | undefined;
  if (choice.launcher === "slurm" && host.selection.get().length === 0) {
    gpuCount = await askGpuCount();
    if (gpuCount === undefined) return;
  } else {
    const ids = await chooseGpus(host);
    if (!ids) return;
    choice.ids = ids;
  }

  let prompt = rememberedArgs(host, file);
  if (options.promptArgs) {
    const typed = await vscode.window.showInputBox({
      title: `GPU Pilot: arguments for ${path.basename(file)}`,
      prompt:
        "Split like a shell (quotes group words), but nothing is expanded or run by a shell. Remembered for this file.",
      value: prompt,
      placeHolder: "--epochs 3 --lr 1e-4",
    });
    if (typed === undefined) return;
    prompt = typed;
    await rememberArgs(host, file, prompt);
  }
  let scriptArgs: string[];
  try {
    scriptArgs = [...settings.scriptArgs(doc.uri), ...splitArgs(prompt)];
  } catch (e) {
    void vscode.window.showErrorMessage(`GPU Pilot: ${(e as Error).message}`);
    return;
  }

  const analysis = await analyse(doc, host, true);
  if (!(await resolveFindings(host, doc, choice, analysis))) return;

  const interpreter = await resolveInterpreter(doc.uri);
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
  const plan = planLaunch({
    file,
    cwd: folder?.uri.fsPath ?? path.dirname(file),
    launcher: choice.launcher,
    deviceIds: choice.ids,
    gpuCount,
    inventory: host.monitor.inventory,
    interpreter: interpreter.path,
    scriptArgs,
    nproc: choice.nproc,
    customArgs: settings.customArgs(doc.uri),
    dockerImage: settings.dockerImage(doc.uri),
    runEnv: settings.runEnv(doc.uri),
    hostEnv: process.env,
    find: findProgram,
    scriptProblem,
  });
  if (!plan.ok) {
    log.warn(`Not running ${file}: ${plan.message}`);
    void vscode.window.showErrorMessage(`GPU Pilot: ${plan.message}`);
    return;
  }
  const spec = plan.spec;
  for (const note of spec.notes) log.info(note);
  await startTask(host, spec, file, folder, interpreter.source);
}

/**
 * The Task definition of a run: `{type, runId, file, gpus, launcher}`. VS Code resolves `${...}` in
 * the definition of a CustomExecution task (and runs `${command:...}`), so nothing in it may hold a
 * `${`: `file` is the file's `file://` URL, in which `{` and `}` are percent-encoded; `gpus` is a
 * validated CUDA_VISIBLE_DEVICES value and `launcher` one of the launchers.
 */
export function taskDefinition(
  runId: string,
  file: string,
  spec: Pick<LaunchSpec, "visibleDevices" | "launcher">,
): vscode.TaskDefinition {
  return { type: TASK_TYPE, runId, file: pathToFileURL(file).href, gpus: spec.visibleDevices, launcher: spec.launcher };
}

/** Watches a run started by {@link startTask} (the agent tool gpu-pilot_runOnGpus): its output as written to the terminal, and its end. */
export interface RunTap {
  /** Each chunk the task's pseudoterminal writes (the program's stdout and stderr, `\r\n` line breaks). */
  output(text: string): void;
  /** Once, when the program has ended or could not start (or the task could not be started). */
  exit(exit: ProcessExit): void;
}

/**
 * Runs `spec` as a Task with a CustomExecution (see the file comment) and reports start,
 * Stop/Show Output, and the exit code or signal. The run record gets the pid when the program has
 * started and the exit when it has ended.
 * @param tap also told the output and the end (the agent tool).
 * @returns the task's execution (to terminate it), or undefined when it could not be started.
 */
export async function startTask(
  host: RunHost,
  spec: LaunchSpec,
  file: string,
  folder: vscode.WorkspaceFolder | undefined,
  interpreterSource: LastRun["interpreterSource"],
  tap?: RunTap,
): Promise<vscode.TaskExecution | undefined> {
  const runId = `${Date.now()}-${++runCounter}`;
  const run: LastRun = {
    file,
    launcher: spec.launcher,
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    unset: spec.unset,
    interpreterSource,
    title: spec.title,
    startedAt: Date.now(),
    gpus: entryUuids(spec.visibleDevices.split(",").filter(Boolean), host.monitor.inventory),
  };
  host.setLastRun(run);

  const envText =
    Object.entries(spec.env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ") || "(no variables added)";
  const unsetText = spec.unset.length > 0 ? `, without ${spec.unset.join(", ")}` : "";
  const onStart = (pid: number) => {
    run.pid = pid;
    log.info(
      `Started ${JSON.stringify([spec.command, ...spec.args])} (pid ${pid}) in ${JSON.stringify(spec.cwd)} with ${envText}${unsetText}`,
    );
  };
  // The "Running …" notification is a cancellable progress notification: it closes by itself when
  // the run ends (a plain message would stay, stale, beside the exit notification).
  let endRunning!: () => void;
  const runningEnded = new Promise<void>((resolve) => (endRunning = resolve));
  const gpus = run.gpus ?? [];
  if (host.claims && gpus.length > 0) void runningEnded.then(host.claims.holdForRun(gpus, path.basename(file)));
  const onExit = (exit: ProcessExit) => {
    tap?.exit(exit);
    endRunning();
    run.exitCode = exit.exitCode ?? null;
    if (exit.signal !== undefined) run.signal = exit.signal;
    if (exit.error !== undefined) run.error = exit.error;
    run.endedAt = Date.now();
    const { ok, message } =
      exit.error !== undefined
        ? { ok: false, message: `${spec.title}: could not start ${spec.command}: ${exit.error}` }
        : describeExit(spec.title, exit.exitCode, exit.signal);
    if (ok) {
      log.info(message);
      void vscode.window.showInformationMessage(message);
    } else {
      log.warn(message);
      void vscode.window.showWarningMessage(message, "Show Output").then((c) => {
        if (c) showTaskTerminal(spec.title);
      });
    }
  };
  const env = runEnvironment(process.env, spec);
  const execution = new vscode.CustomExecution(() => {
    const pty = new ProcessTerminal({ command: spec.command, args: spec.args, cwd: spec.cwd, env, onStart, onExit });
    if (tap) pty.onDidWrite((text) => tap.output(text));
    return Promise.resolve(pty);
  });
  const task = new vscode.Task(
    taskDefinition(runId, file, spec),
    folder ?? vscode.TaskScope.Workspace,
    spec.title,
    "GPU Pilot",
    execution,
    [],
  );
  task.presentationOptions = {
    reveal: vscode.TaskRevealKind.Always,
    panel: vscode.TaskPanelKind.Dedicated,
    clear: true,
    focus: false,
    showReuseMessage: false,
  };

  log.info(
    `Running ${spec.title}: ${JSON.stringify({ launcher: spec.launcher, command: spec.command, args: spec.args, cwd: spec.cwd, env: spec.env, unset: spec.unset, interpreter: interpreterSource })}`,
  );
  let taskExecution: vscode.TaskExecution;
  try {
    taskExecution = await vscode.tasks.executeTask(task);
  } catch (e) {
    run.error = (e as Error).message ?? String(e);
    endRunning();
    log.error(`Could not start the task ${spec.title}`, e);
    void vscode.window.showErrorMessage(`GPU Pilot could not start ${spec.title}: ${run.error}`);
    tap?.exit({ error: run.error });
    return undefined;
  }
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Running ${spec.title}`, cancellable: true },
    (progress, token) => {
      progress.report({ message: "Cancel stops it (SIGTERM). Its output is in the terminal panel." });
      token.onCancellationRequested(() => {
        if (run.endedAt !== undefined) return;
        log.info(`Stopping ${spec.title} (Cancel pressed on the running notification).`);
        taskExecution.terminate();
      });
      return runningEnded;
    },
  );
  return taskExecution;
}

/** Shows the task's terminal (named after the task), else the GPU Pilot log. */
function showTaskTerminal(title: string): void {
  const terminal = vscode.window.terminals.find((t) => t.name === title || t.name.includes(title));
  if (terminal) terminal.show(false);
  else log.show();
}

const LAUNCHER_DETAIL: Record<LauncherKind, string> = {
  python: "python <file>: one process, CUDA_VISIBLE_DEVICES = the selection",
  torchrun: "torchrun --standalone --nproc_per_node=<n> <file>: one process per GPU",
  accelerate: "accelerate launch --num_processes=<n> --gpu_ids=<ids> <file>",
  deepspeed: "deepspeed --include localhost:<ids> <file> (no CUDA_VISIBLE_DEVICES: DeepSpeed ignores it)",
  custom: "gpuPilot.run.customArgs with ${file} ${gpus} ${count} ${python}",
  docker:
    'docker run --rm --gpus "device=<ids>" -v <folder>:<folder> -w <folder> <gpuPilot.run.dockerImage> python <file>',
  slurm: "srun --gpus=<n> <python> <file>: Slurm picks the node and its GPUs (beyond this machine)",
};

/**
 * `gpuPilot.runActiveFileWith`: picks a launcher from a list (the `gpuPilot.run.launcher` default
 * marked), asks for the script arguments (remembered per file), then runs as {@link runActiveFile}.
 */
export async function runActiveFileWith(host: RunHost, uri?: vscode.Uri): Promise<void> {
  if (!requireTrust()) return;
  const resource = uri ?? vscode.window.activeTextEditor?.document.uri;
  const current = settings.launcher(resource);
  const items = LAUNCHERS.map((l) => ({
    label: l,
    description: l === current ? "default (gpuPilot.run.launcher)" : undefined,
    detail: LAUNCHER_DETAIL[l],
    launcher: l,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: "GPU Pilot: Run Active File With...",
    placeHolder: "Launcher",
  });
  if (!picked) return;
  await runActiveFile(host, uri, { launcher: picked.launcher, promptArgs: true });
}
