/**
 * Keeps the GPU inventory fresh: polls nvidia-smi while the GPU view is visible (and on request),
 * never two calls at a time; publishes the state in context keys and the log, never in pop-ups.
 */
import * as vscode from "vscode";
import * as config from "../config";
import { log } from "../log";
import { type Inventory, queryInventory, type SmiFailure } from "./nvidiaSmi";
import { Poller } from "./poller";

/**
 * Value of the `gpuPilot.nvidiaSmiState` context key:
 * `unknown` before the first answer, `ok`, `missing` (not installed / not executable: the view shows
 * its welcome content), `failed` (it ran but failed, timed out or printed garbage).
 */
export type SmiState = "unknown" | "ok" | "missing" | "failed";

/** Context key holding {@link SmiState}. */
export const STATE_KEY = "gpuPilot.nvidiaSmiState";
/** Context key holding the last problem, in words ("" when none). */
export const PROBLEM_KEY = "gpuPilot.nvidiaSmiProblem";

/** Owns the inventory; fires {@link onDidChange} after every finished query. */
export class GpuMonitor implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires after each query (the numbers change even when the state does not). */
  readonly onDidChange = this.emitter.event;
  private readonly poller: Poller;
  private readonly disposables: vscode.Disposable[] = [];
  private _state: SmiState = "unknown";
  private _inventory: Inventory | undefined;
  private _failure: SmiFailure | undefined;
  private lastLogged = "";
  private contextState: string | undefined;
  private contextProblem: string | undefined;

  constructor() {
    this.poller = new Poller(
      (signal) => this.query(signal),
      () => config.refreshIntervalMs(),
      (e) => log.error("GPU query failed unexpectedly", e),
    );
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (config.affects(e, config.NVIDIA_SMI_KEYS)) void this.refresh();
      }),
    );
    void this.setContext();
  }

  /** {@link SmiState} of the last query. */
  get state(): SmiState {
    return this._state;
  }

  /** The last successful inventory; undefined unless {@link state} is `ok`. */
  get inventory(): Inventory | undefined {
    return this._inventory;
  }

  /** Why the last query failed; undefined when {@link state} is `ok` or `unknown`. */
  get failure(): SmiFailure | undefined {
    return this._failure;
  }

  /** The last problem in words ("" when none): the failure, else the inventory's parse problems. */
  get problem(): string {
    if (this._failure) return this._failure.message;
    return this._inventory?.problems.join("; ") ?? "";
  }

  /**
   * Polls while the view is visible (TreeView.onDidChangeVisibility), every `gpuPilot.refreshIntervalMs` ms.
   * @returns the listener registration (also disposed with the monitor).
   */
  followVisibility(view: vscode.TreeView<unknown>): vscode.Disposable {
    this.poller.setActive(view.visible);
    const sub = view.onDidChangeVisibility((e) => this.poller.setActive(e.visible));
    this.disposables.push(sub);
    return sub;
  }

  /** Queries now (or joins the query in progress); resolves when the inventory is updated. Never rejects. */
  refresh(): Promise<void> {
    return this.poller.refresh();
  }

  dispose(): void {
    this.poller.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private async query(signal: AbortSignal): Promise<void> {
    const path = config.nvidiaSmiPath();
    const timeoutMs = config.nvidiaSmiTimeoutMs();
    const r = await queryInventory({ path, timeoutMs, signal });
    if (r.kind === "canceled") return;
    if (r.kind === "ok") {
      this._state = "ok";
      this._inventory = r.inventory;
      this._failure = undefined;
    } else {
      this._state = r.kind === "missing" ? "missing" : "failed";
      this._inventory = undefined;
      this._failure = r;
    }
    this.logChange(path);
    await this.setContext();
    this.emitter.fire();
  }

  /** Logs when the outcome changes (not on every poll). */
  private logChange(path: string): void {
    const inv = this._inventory;
    const f = this._failure;
    const summary = inv
      ? `ok: ${inv.gpus.map((g) => `${g.index}:${g.uuid}`).join(" ")} | ${inv.problems.join(" | ")}`
      : `${f?.kind}: ${f?.message}`;
    if (summary === this.lastLogged) return;
    this.lastLogged = summary;
    if (inv) {
      log.info(`${path}: ${inv.gpus.length} GPU(s): ${inv.gpus.map((g) => `GPU ${g.index} ${g.name} (${g.uuid}, ${g.pciBusId})`).join("; ") || "none"}`);
      for (const p of inv.problems) log.warn(`${path}: ${p}`);
    } else if (f) {
      switch (f.kind) {
        case "missing":
          log.warn(`${path} could not be started (${f.code}): ${f.message}. Set gpuPilot.nvidiaSmiPath if nvidia-smi is installed elsewhere.`);
          break;
        case "failed":
          log.warn(`${path} failed: ${f.explanation}. Its message: ${f.message}`);
          break;
        case "timeout":
          log.warn(`${path} timed out after ${f.ms} ms (gpuPilot.nvidiaSmiTimeoutMs) and was stopped.`);
          break;
        case "garbage":
          log.warn(`${path} printed output GPU Pilot cannot read: ${f.message}. Sample: ${JSON.stringify(f.sample)}`);
          break;
        case "canceled":
          break;
      }
    }
  }

  private async setContext(): Promise<void> {
    const problem = this.problem;
    if (this.contextState !== this._state) {
      this.contextState = this._state;
      await vscode.commands.executeCommand("setContext", STATE_KEY, this._state);
    }
    if (this.contextProblem !== problem) {
      this.contextProblem = problem;
      await vscode.commands.executeCommand("setContext", PROBLEM_KEY, problem);
    }
  }
}
