/**
 * What the client tells the server between requests: the lint settings (`gpuPilot/settings`),
 * watched files (configuration, project modules), the GPU inventory (`gpuPilot/inventory`) and a
 * notebook's running kernel (`gpuPilot/runningKernel`, kept in its OpenDocument). Each lints again
 * the documents whose findings it can change.
 */
import { FileChangeType } from "vscode-languageserver/node";
import { freeText } from "../engine/machine";
import {
  checkEditorSettings,
  checkInventoryParams,
  InventoryNotification,
  SettingsNotification,
  type InventoryParams,
} from "../../../common/src/lsp/protocol";
import { checkRunningKernelParams, RUNNING_KERNEL_METHOD } from "../../../common/src/kernel/runningKernel";
import { pathOf, type ServerContext } from "./context";
import type { LintQueue } from "./lintQueue";

/** What of the inventory the lint reads (lintOptions `machine`): the GPUs' UUIDs in order, or null without nvidia-smi. */
function inventoryLintKey(inv: InventoryParams): string {
  return JSON.stringify(inv.gpus?.map((g) => g.uuid) ?? null);
}

/** What of the inventory the inlay hints show (machineHelp.ts: `→ GPU n`, machine.ts `describeOrdinal` as the tooltip): per GPU its index, UUID, name, bus id and `freeText`. */
function inventoryHintKey(inv: InventoryParams): string {
  return JSON.stringify(inv.gpus?.map((g) => [g.index, g.uuid, g.name, g.pciBusId, freeText(g)]) ?? null);
}

/** Registers the notification handlers. */
export function registerNotifications(ctx: ServerContext, queue: LintQueue): void {
  const { connection, session } = ctx;

  connection.onNotification(SettingsNotification.type, (raw: unknown) => {
    const { value: params, problems } = checkEditorSettings(raw);
    for (const p of problems) connection.console.warn(`GPU Pilot: ${SettingsNotification.method}: ${p}; ignored.`);
    const hintsChanged = params.inlayHints !== undefined && params.inlayHints !== session.settings.inlayHints;
    session.settings = { ...session.settings, ...params };
    ctx.configProblemsShown.clear();
    session.forgetOptions();
    queue.relintAll();
    if (hintsChanged) ctx.settle(connection.languages.inlayHint.refresh(), "workspace/inlayHint/refresh");
  });

  connection.onDidChangeWatchedFiles((params) => {
    // A Python file changed on disk: the documents that read it (as a module, or as the script a
    // launch line starts) are linted again. One created or deleted may change how imports resolve:
    // everything is read again. Anything else is configuration (and every document is linted again).
    const python = params.changes.filter((c) => c.uri.endsWith(".py"));
    if (python.some((c) => c.type !== FileChangeType.Changed)) {
      ctx.projectIndex.clear();
      queue.relintAll();
    } else
      for (const c of python) {
        const path = pathOf(c.uri);
        if (path) queue.fileChanged(path);
      }
    if (python.length === params.changes.length) return;
    ctx.configProblemsShown.clear();
    session.forgetOptions();
    ctx.baselineFiles.clear();
    queue.relintAll();
  });

  connection.onNotification(InventoryNotification.type, (params: unknown) => {
    const checked = checkInventoryParams(params);
    if ("problem" in checked) {
      connection.console.warn(`GPU Pilot: ignored a ${InventoryNotification.method} notification: ${checked.problem}.`);
      return;
    }
    const before = session.inventory;
    session.inventory = checked.value;
    // The client sends the inventory whenever a GPU's free memory changes (every second of a training
    // run while the GPU view is visible): the findings depend only on the GPUs' count and UUIDs
    // (lintOptions `machine`, and whether the machine model is kept), so only a change of those lints
    // the open documents again; the inlay hints show each GPU's name, bus id and free GiB.
    if (inventoryLintKey(before) !== inventoryLintKey(session.inventory)) queue.relintAll();
    else connection.tracer.log("inventory: the GPUs' count and UUIDs are unchanged, nothing linted again");
    if (session.settings.inlayHints && inventoryHintKey(before) !== inventoryHintKey(session.inventory))
      ctx.settle(connection.languages.inlayHint.refresh(), "workspace/inlayHint/refresh");
  });

  // The notebook's running kernel (issue 42 item 2): its GPU001 findings and hovers follow what the
  // kernel reports; a change of what the lint reads (the frameworks that initialised CUDA, the
  // visible devices) lints that notebook again. The facts may come before the notebook's didOpen (a
  // restarted server gets every known kernel): they are kept for its URI all the same.
  connection.onNotification(RUNNING_KERNEL_METHOD, (params: unknown) => {
    const checked = checkRunningKernelParams(params);
    if ("problem" in checked) {
      connection.console.warn(`GPU Pilot: ignored a ${RUNNING_KERNEL_METHOD} notification: ${checked.problem}.`);
      return;
    }
    const { notebook, kernel } = checked.value;
    const before = JSON.stringify(session.get(notebook)?.kernel ?? null);
    if (kernel) session.ensure(notebook).kernel = kernel;
    else {
      const open = session.get(notebook);
      if (open) open.kernel = undefined;
    }
    if (JSON.stringify(kernel) === before) return;
    connection.tracer.log(
      `runningKernel ${notebook}: ${kernel ? `CUDA initialised by [${kernel.initialisedBy.join(", ")}], CUDA_VISIBLE_DEVICES=${kernel.cudaVisibleDevices ?? "unset"}` : "not known"}`,
    );
    if (session.notebooks.getNotebookDocument(notebook)) queue.schedule(notebook);
  });
}
