/**
 * Wires the Slurm side of the extension: the `gpuPilot.slurm` view (shown when `sinfo` is
 * on PATH: context key `gpuPilot.slurmAvailable`, probed at activation), the submit command and its
 * CodeLens on job scripts, cancel (own jobs, confirmed by a modal) and open output; and the API part.
 */
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { log } from "../log";
import { cancelJob, currentUser, jobDetails } from "./cli";
import type { SlurmJob } from "../../../common/src/slurm/parse";
import { isActive } from "./present";
import {
  SlurmJobs,
  SubmitCodeLensProvider,
  submitCommand,
  type SlurmHost,
  type SubmitOptions,
  type SubmittedJob,
} from "./submit";
import { createSlurmTreeView, SLURM_CONTEXT_KEY, type SlurmNode, type SlurmSnapshot } from "./view";
import { findProgram } from "../../../common/src/run/which";

/** Where the Slurm submit CodeLens is offered. */
export const SUBMIT_CODELENS_SELECTOR: vscode.DocumentSelector = [
  { language: "shellscript", scheme: "file" },
  { scheme: "file", pattern: "**/*.{sbatch,slurm}" },
];

/**
 * Whether sinfo is on PATH (a synchronous look along PATH, no process); sets the context key
 * {@link SLURM_CONTEXT_KEY} (the view's `when`) and logs the answer. Runs at activation.
 */
export function probeSlurm(): boolean {
  const available = findProgram("sinfo", { pathEnv: process.env.PATH }) !== undefined;
  void vscode.commands.executeCommand("setContext", SLURM_CONTEXT_KEY, available);
  log.info(
    available
      ? "Slurm: sinfo found on PATH; the Slurm view is available."
      : "Slurm: no sinfo on PATH; the Slurm view is hidden.",
  );
  return available;
}

/** `gpuPilot.slurm.pollSeconds`: the view's poll period, s (default 30, at least 30). */
export function pollSeconds(): number {
  const v = vscode.workspace.getConfiguration("gpuPilot.slurm").get<unknown>("pollSeconds");
  return typeof v === "number" && Number.isFinite(v) ? Math.max(30, v) : 30;
}

/** `gpuPilot.slurm.timeoutSeconds`: limit of one Slurm command, s (default 15, at least 2). */
export function timeoutMs(): number {
  const v = vscode.workspace.getConfiguration("gpuPilot.slurm").get<unknown>("timeoutSeconds");
  return (typeof v === "number" && Number.isFinite(v) ? Math.max(2, v) : 15) * 1000;
}

/** What the API tells about Slurm. */
export interface SlurmState {
  /** Whether sinfo was found on PATH at activation (the view's `when`). */
  available: boolean;
  /** Whether the view is visible now (it polls only then). */
  visible: boolean;
  snapshot: SlurmSnapshot;
  /** The view's rows as shown: label, description, contextValue. */
  rows: Array<{ label: string; description: string; contextValue: string }>;
  /** Jobs submitted from this window, with the output the channel showed. */
  submitted: SubmittedJob[];
}

/** The Slurm features, created once per activation. */
export class SlurmFeatures implements vscode.Disposable {
  readonly available: boolean;
  private readonly tree: ReturnType<typeof createSlurmTreeView>;
  readonly jobs: SlurmJobs;
  private readonly host: SlurmHost;
  readonly disposables: vscode.Disposable[] = [];

  /**
   * Probes sinfo (its context key shows the view), creates the view and registers the submit CodeLens.
   * `runFacts`: the language server's `gpuPilot/runFacts` (Ctx.runFacts), for the launcher the submit command proposes.
   */
  constructor(extCtx: vscode.ExtensionContext, runFacts?: SlurmHost["runFacts"]) {
    this.available = probeSlurm();
    this.tree = createSlurmTreeView({ pollSeconds, timeoutMs });
    this.host = {
      // The extension's global storage (usually in the home folder, which compute nodes share); a stand-in context may have none.
      get scratchFolder() {
        return path.join(extCtx.globalStorageUri?.fsPath ?? path.join(os.tmpdir(), "gpu-pilot"), "slurm");
      },
      refreshView: () => {
        if (this.tree.view.visible) void this.tree.provider.refresh();
      },
      cliOptions: () => ({}),
      ...(runFacts ? { runFacts } : {}),
    };
    this.jobs = new SlurmJobs(this.host);
    const lens = new SubmitCodeLensProvider();
    this.disposables.push(
      ...this.tree.disposables,
      this.jobs,
      vscode.languages.registerCodeLensProvider(SUBMIT_CODELENS_SELECTOR, lens),
    );
  }

  /** `gpuPilot.slurm.submit`. */
  submit(uri?: vscode.Uri, opts?: SubmitOptions): Promise<{ jobId?: string; script?: string } | undefined> {
    return submitCommand(this.host, this.jobs, uri, opts);
  }

  /** `gpuPilot.slurm.refresh`: queries sinfo and squeue now. */
  refresh(): Promise<void> {
    return this.tree.provider.refresh();
  }

  /** The job of a view row or a job id; a job id not in the view is `unknown` (whose it is not known). */
  private jobOf(
    node: unknown,
  ): SlurmJob | { id: string; name: string; user: string; state: string; unknown?: true } | undefined {
    if (node && typeof node === "object" && (node as SlurmNode).kind === "job")
      return (node as Extract<SlurmNode, { kind: "job" }>).job;
    if (typeof node === "string" && /^\d+(_\d+)?$/.test(node)) {
      const known = this.tree.provider.snapshot.jobs?.find((j) => String(j.id) === node);
      return known ?? { id: node, name: "", user: "", state: "UNKNOWN", unknown: true };
    }
    return undefined;
  }

  /**
   * Whose job `id` is and its state, as `scontrol show job` says (a job id not in the view).
   * @returns undefined, after a warning saying why, when Slurm cannot tell.
   */
  private async lookUp(id: string): Promise<{ id: string; name: string; user: string; state: string } | undefined> {
    let why = "Slurm did not say whose it is";
    try {
      const d = await jobDetails(id, { ...this.host.cliOptions(), timeoutMs: timeoutMs() });
      if (d.user) return { id, name: "", user: d.user, state: d.state ?? "UNKNOWN" };
    } catch (e) {
      why = (e as Error).message;
    }
    void vscode.window.showWarningMessage(
      `GPU Pilot cancels only your own jobs and cannot tell whose job ${id} is: ${why}.`,
    );
    return undefined;
  }

  /**
   * `gpuPilot.slurm.cancel` on a job row: own jobs that are still active only, after a modal
   * confirmation; a job id not in the view is looked up first (`scontrol show job`), and refused
   * when Slurm cannot say whose it is. `confirmed` skips the modal (the API's {@link cancelJobNow}).
   * @returns true when scancel ran.
   */
  async cancel(node?: unknown, confirmed = false): Promise<boolean> {
    const seen = this.jobOf(node);
    const job = seen && "unknown" in seen ? await this.lookUp(seen.id) : seen;
    if (!job) return false;
    const me = currentUser();
    if (job.user && me && job.user !== me) {
      void vscode.window.showWarningMessage(
        `Job ${job.id} belongs to ${job.user}; GPU Pilot cancels only your own jobs.`,
      );
      return false;
    }
    if (!isActive(job.state) && job.state !== "UNKNOWN") {
      void vscode.window.showInformationMessage(`Job ${job.id} has already ended (${job.state}).`);
      return false;
    }
    if (!confirmed) {
      // A workbench that refuses dialogs (tests) rejects: that is a "no".
      const ok = await Promise.resolve(
        vscode.window.showWarningMessage(
          `Cancel Slurm job ${job.id}${job.name ? ` (${job.name})` : ""}?`,
          { modal: true, detail: "scancel stops it; its output so far stays." },
          "Cancel Job",
        ),
      ).catch((e: unknown) => {
        log.info(`Cancel of job ${job.id} not confirmed: ${(e as Error).message}`);
        return undefined;
      });
      if (ok !== "Cancel Job") return false;
    }
    try {
      await cancelJob(String(job.id), { ...this.host.cliOptions(), timeoutMs: timeoutMs() });
      log.info(`scancel ${job.id}`);
      // scancel to CANCELLED takes about 0.15 s (../shared/slurm-host.md): look again soon.
      setTimeout(() => this.jobs.checkNow(String(job.id)), 500);
    } catch (e) {
      void vscode.window.showErrorMessage(`GPU Pilot: ${(e as Error).message}`);
      return false;
    }
    void this.tree.provider.refresh();
    return true;
  }

  /** `gpuPilot.slurm.openOutput`: opens the job's output file (from scontrol) in an editor. */
  async openOutput(node?: unknown): Promise<string | undefined> {
    const job = this.jobOf(node);
    if (!job) return undefined;
    const id = String(job.id);
    let file = this.jobs.list().find((j) => j.jobId === id)?.output ?? null;
    if (!file) {
      try {
        file = (await jobDetails(id, { ...this.host.cliOptions(), timeoutMs: timeoutMs() })).stdout;
      } catch (e) {
        void vscode.window.showWarningMessage(`GPU Pilot: cannot find job ${id}'s output: ${(e as Error).message}`);
        return undefined;
      }
    }
    if (!file) {
      void vscode.window.showInformationMessage(`Slurm reports no output file for job ${id}.`);
      return undefined;
    }
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    } catch {
      void vscode.window.showInformationMessage(
        `Job ${id}'s output (${file}) is not written yet${isActive(job.state) ? " (the job has not started)" : ""}.`,
      );
      return undefined;
    }
    return file;
  }

  /** The API part. */
  state(): SlurmState {
    return {
      available: this.available,
      visible: this.tree.view.visible,
      snapshot: this.tree.provider.snapshot,
      rows: this.tree.provider.rows(),
      submitted: this.jobs.list(),
    };
  }

  /** The API's cancel (no modal: the caller is code that decided already). */
  cancelJobNow(id: string): Promise<boolean> {
    return this.cancel(id, true);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
