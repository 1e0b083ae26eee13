/**
 * The active notebook's running kernel (issue 42 items 1 and 2): what it started with, in the
 * status bar, and what the language server's notebook lint reads (`gpuPilot/runningKernel`).
 *
 * Two sources, best first:
 * - the kernel itself, where the Jupyter extension is installed and the user let GPU Pilot ask it:
 *   the probe (kernelProbe.ts) after the kernel goes idle (a cell ran, a restart finished), at
 *   most once per idle, never while a probe runs, and no more once CUDA is initialised there
 *   (nothing the lint reads changes before a restart). A kernel that does not answer within 2 s, or
 *   no kernel, sends `kernel: null`: the lint is the static one, and nothing is shown to the user;
 * - else the launcher's start records (common/src/kernel/startRecord.ts) of the GPU Pilot
 *   kernelspec named in the notebook's metadata (`kernelspec.name`, as Jupyter saves it): the
 *   status bar only.
 *
 * Access: GPU Pilot asks once ("Allow"/"Don't Allow", a dismissal counts as "Don't Allow") and
 * remembers the answer in globalState ({@link KERNEL_ACCESS_KEY}); without "Allow" it never calls the
 * kernel API. The Jupyter extension may then ask the user too: that one is its own.
 */
import * as vscode from "vscode";
import { join } from "node:path";
import {
  kernelGpusText,
  RESTART_KERNEL_COMMAND,
  type RunningKernelFacts,
  type RunningKernelParams,
} from "../../../common/src/kernel/runningKernel";
import { kernelStartOf, type KernelStart } from "../../../common/src/kernel/startRecord";
import { KERNEL_NAME } from "../../../common/src/kernel/kernelspec";
import type { JupyterApi, JupyterKernel } from "./jupyterApi";
import { probeRunningKernel, PROBE_DEADLINE_MS, type ProbeOutcome } from "./kernelProbe";

/** globalState key of the user's answer: `granted` or `denied`; absent until asked. */
export const KERNEL_ACCESS_KEY = "gpuPilot.kernelAccess";
/** How long after a probe ends its own status changes (busy, idle) are ignored (ms). */
const OWN_STATUS_QUIET_MS = 500;

/** What {@link NotebookKernels} needs from the extension. */
export interface NotebookKernelsDeps {
  /** Where the answer about kernel access is kept (ExtensionContext.globalState). */
  globalState: Pick<vscode.Memento, "get" | "update">;
  /** The Jupyter extension's API, undefined when it is not installed (jupyterApi.ts). */
  jupyter(): Promise<JupyterApi | undefined>;
  /** The Jupyter data folder (pythonProbe.ts resolveJupyterDataDir). */
  dataDir(): Promise<string>;
  /** Sends `gpuPilot/runningKernel` to the language server (nothing when it is not running). */
  send(params: RunningKernelParams): void;
  /** The probe's deadline (ms); default 2000. */
  deadlineMs?: number;
}

/** The kernelspec name the notebook's metadata names (Jupyter saves `metadata.kernelspec.name`), or undefined. */
export function kernelspecNameOf(notebook: Pick<vscode.NotebookDocument, "metadata">): string | undefined {
  const m = notebook.metadata as Record<string, unknown> | undefined;
  const specOf = (o: unknown) =>
    ((o as Record<string, unknown> | undefined)?.kernelspec as Record<string, unknown> | undefined)?.name;
  const name = specOf(m?.metadata) ?? specOf((m?.custom as Record<string, unknown> | undefined)?.metadata) ?? specOf(m);
  return typeof name === "string" && KERNEL_NAME.test(name) ? name.toLowerCase() : undefined;
}

/** The visible-devices value the facts say the kernel uses: what its launcher applied, else its environment's. */
export function devicesOfFacts(f: RunningKernelFacts): string | null {
  if (f.launcherDevices) return f.launcherDevices;
  return f.cudaVisibleDevices ?? f.rocrVisibleDevices;
}

/** Follows the active notebook's kernel; see the module comment. */
export class NotebookKernels implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("gpuPilot.kernelGpus", vscode.StatusBarAlignment.Left, 99);
  private readonly facts = new Map<string, RunningKernelFacts>();
  private readonly watched = new WeakSet<JupyterKernel>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private probing = new Set<string>();
  private quietUntil = 0;
  private askedNow: Promise<boolean> | undefined;
  /** The last probe's outcome per notebook (tests, the restart command). */
  readonly lastOutcome = new Map<string, ProbeOutcome>();

  constructor(private readonly deps: NotebookKernelsDeps) {
    this.item.name = "GPU Pilot: notebook kernel GPUs";
    this.item.command = RESTART_KERNEL_COMMAND;
  }

  /** The last facts of `notebook`'s kernel (by URI string), or undefined. */
  factsOf(notebook: string): RunningKernelFacts | undefined {
    return this.facts.get(notebook);
  }

  /** Every notebook's known facts, to send again to a restarted language server. */
  all(): RunningKernelParams[] {
    return [...this.facts].map(([notebook, kernel]) => ({ notebook, kernel }));
  }

  /** Forgets `notebook`'s kernel (a restart began): the server lints it statically until the next probe. */
  forget(notebook: string): void {
    if (this.facts.delete(notebook)) this.deps.send({ notebook, kernel: null });
  }

  /**
   * Whether GPU Pilot may ask kernels: the remembered answer, else (once) the user's.
   * @param ask false: never ask now, only read the answer.
   */
  async access(ask = true): Promise<boolean> {
    const known = this.deps.globalState.get<string>(KERNEL_ACCESS_KEY);
    if (known === "granted" || known === "denied") return known === "granted";
    if (!ask) return false;
    this.askedNow ??= (async () => {
      const answer = await vscode.window.showInformationMessage(
        "GPU Pilot can ask this notebook's running kernel, with one short snippet that changes nothing, whether CUDA is already initialised there and which GPUs it sees: the notebook lint then flags startup variables the kernel has frozen, and the status bar shows the kernel's GPUs. Allow it?",
        "Allow",
        "Don't Allow",
      );
      const granted = answer === "Allow";
      await this.deps.globalState.update(KERNEL_ACCESS_KEY, granted ? "granted" : "denied");
      return granted;
    })();
    return this.askedNow;
  }

  /**
   * Asks `notebook`'s kernel now (when there is access and a kernel), sends what it found to the
   * server, and updates the status bar when `notebook` is the active one.
   * @returns the probe's outcome, or undefined when nothing was asked (no Jupyter extension, no
   *   access, no running kernel, a probe already running).
   */
  async refresh(notebook: vscode.NotebookDocument): Promise<ProbeOutcome | undefined> {
    const key = notebook.uri.toString();
    let outcome: ProbeOutcome | undefined;
    const api = await this.deps.jupyter();
    if (api && !this.probing.has(key) && (await this.access())) {
      const kernel = await api.kernels.getKernel(notebook.uri).then(
        (k) => k,
        () => undefined,
      );
      if (kernel) {
        this.watch(notebook, kernel);
        this.probing.add(key);
        try {
          outcome = await probeRunningKernel(kernel, this.deps.deadlineMs ?? PROBE_DEADLINE_MS);
        } finally {
          this.probing.delete(key);
          this.quietUntil = Date.now() + OWN_STATUS_QUIET_MS;
        }
        this.lastOutcome.set(key, outcome);
        this.apply(key, outcome.ok ? outcome.facts : undefined);
      } else this.apply(key, undefined);
    }
    await this.showStatus();
    return outcome;
  }

  /** Records and sends `facts` (undefined: not known) when they changed. */
  private apply(key: string, facts: RunningKernelFacts | undefined): void {
    const before = JSON.stringify(this.facts.get(key) ?? null);
    if (facts) this.facts.set(key, facts);
    else this.facts.delete(key);
    if (JSON.stringify(facts ?? null) !== before) this.deps.send({ notebook: key, kernel: facts ?? null });
  }

  /** Probes again when the kernel goes idle after work that was not the probe's; forgets it while it restarts. */
  private watch(notebook: vscode.NotebookDocument, kernel: JupyterKernel): void {
    if (this.watched.has(kernel)) return;
    this.watched.add(kernel);
    const key = notebook.uri.toString();
    this.subscriptions.push(
      kernel.onDidChangeStatus((s) => {
        if (s === "restarting" || s === "autorestarting" || s === "starting" || s === "dead") {
          this.forget(key);
          void this.showStatus();
          return;
        }
        if (s !== "idle" || this.probing.has(key) || Date.now() < this.quietUntil) return;
        if (this.facts.get(key)?.initialisedBy.length) return; // frozen until a restart
        void this.refresh(notebook);
      }),
    );
  }

  /** The status bar for the active notebook: the kernel's facts, else its GPU Pilot kernelspec's newest start; hidden otherwise. */
  async showStatus(): Promise<void> {
    const nb = vscode.window.activeNotebookEditor?.notebook;
    if (!nb) {
      this.item.hide();
      return;
    }
    const facts = this.facts.get(nb.uri.toString());
    let text: string | undefined;
    let source = "";
    if (facts) {
      text = kernelGpusText(devicesOfFacts(facts));
      source = `the running kernel (pid ${facts.pid}) reports it${facts.initialisedBy.length ? "; CUDA is initialised there" : ""}`;
    } else {
      const start = await this.startOf(nb);
      if (start) {
        text = kernelGpusText(start.visible);
        source = `its GPU Pilot kernel's launcher recorded it at the start of ${start.startedAt} (pid ${start.pid}, ${start.variable})`;
      }
    }
    if (!text) {
      this.item.hide();
      return;
    }
    this.item.text = `$(notebook) ${text}`;
    this.item.tooltip = `GPU Pilot: ${text.replace(/^Kernel: /, "this notebook's kernel uses ")}: ${source}. Click to restart it on the selected GPUs.`;
    this.item.show();
  }

  /** The newest start record of the notebook's GPU Pilot kernelspec, if the metadata names one. */
  private async startOf(nb: vscode.NotebookDocument): Promise<KernelStart | undefined> {
    const name = kernelspecNameOf(nb);
    if (!name) return undefined;
    return kernelStartOf(join(await this.deps.dataDir(), "kernels", name));
  }

  /** Follows the active notebook editor: probes it (or shows its start record) when it changes. */
  register(onActive: vscode.Event<vscode.NotebookEditor | undefined>): this {
    this.subscriptions.push(
      onActive((e) => {
        if (e) void this.refresh(e.notebook);
        else this.item.hide();
      }),
    );
    const nb = vscode.window.activeNotebookEditor?.notebook;
    if (nb) void this.refresh(nb);
    return this;
  }

  dispose(): void {
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.item.dispose();
  }
}
