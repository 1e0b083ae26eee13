/**
 * The `gpuPilot.slurm` view: partitions with total/free GPUs (`sinfo -O ...Gres,GresUsed`)
 * and the user's jobs (`squeue --me`, JSON where supported) with state, GPUs, nodes, elapsed/limit
 * and reason. Shown when `sinfo` is on PATH (context key {@link SLURM_CONTEXT_KEY}, set at activation).
 *
 * Polling: only while the view is visible, every `gpuPilot.slurm.pollSeconds` (at least 30 s: a login
 * node is shared, and Slurm's own guidance is not to hammer slurmctld), doubled after each failed
 * poll up to 10 minutes (back-off), each call with a time limit (`gpuPilot.slurm.timeoutSeconds`). A
 * slow or failing command shows as a calm row in the view, never as a notification.
 *
 * The view's top rows: one `Asking Slurm...` row until the first answer; then the two groups
 * (Partitions, My jobs), or, where neither sinfo nor squeue finds a Slurm configuration, one row that
 * says so (it said `Slurm not configured` under each group).
 */
import * as vscode from "vscode";
import { Poller } from "../gpu/poller";
import { log } from "../log";
import { queryJobs, queryPartitions, type SlurmCliOptions } from "./cli";
import type { PartitionGpus, SlurmJob } from "../../../common/src/slurm/parse";
import {
  backoffSeconds,
  failureRow,
  isActive,
  jobDetailRows,
  jobRow,
  notConfiguredRow,
  partitionRow,
  type SlurmRow,
} from "./present";

/** View id in package.json. */
export const SLURM_VIEW_ID = "gpuPilot.slurm";
/** Context key: true when `sinfo` was found on PATH at activation (the view's `when`). */
export const SLURM_CONTEXT_KEY = "gpuPilot.slurmAvailable";

/** A row of the view. */
export type SlurmNode =
  | { kind: "group"; group: "partitions" | "jobs" }
  | { kind: "partition"; partition: PartitionGpus }
  | { kind: "job"; job: SlurmJob }
  | { kind: "detail"; jobId: string; label: string; description: string }
  | {
      kind: "message";
      id: string;
      label: string;
      description: string;
      tooltip: string;
      icon: "warning" | "info" | "loading";
    };

/** The two top rows, the same objects every time (VS Code keeps expanded rows by element). */
const GROUPS: readonly SlurmNode[] = [
  { kind: "group", group: "partitions" },
  { kind: "group", group: "jobs" },
];

/** What the view's top level shows: a row while it asks, the two groups, or one row where Slurm has no configuration. */
type RootShape = "asking" | "groups" | "not configured";

/** What the view last learnt; `error` is set while the last query failed (the old data stays shown). */
export interface SlurmSnapshot {
  partitions: PartitionGpus[] | null;
  jobs: SlurmJob[] | null;
  /** `json` or `format`: how squeue was read. */
  source: "json" | "format" | null;
  partitionsError: string | null;
  jobsError: string | null;
  /** Failed polls in a row (the back-off). */
  failures: number;
  /** Unix ms of the last poll's end, or null. */
  polledAt: number | null;
  /** Polls made (tests count them). */
  polls: number;
}

/** Settings the view reads on each poll. */
export interface SlurmViewSettings {
  pollSeconds(): number;
  timeoutMs(): number;
}

/** The provider and its poller. */
export class SlurmTreeProvider implements vscode.TreeDataProvider<SlurmNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<SlurmNode | undefined | void>();
  readonly onDidChangeTreeData = this.emitter.event;
  readonly poller: Poller;
  private snap: SlurmSnapshot = {
    partitions: null,
    jobs: null,
    source: null,
    partitionsError: null,
    jobsError: null,
    failures: 0,
    polledAt: null,
    polls: 0,
  };
  /** The top level as VS Code was last told of it (a change of shape refreshes the root). */
  private shown: RootShape = "asking";

  constructor(
    private readonly settings: SlurmViewSettings,
    private readonly cliOptions: () => SlurmCliOptions = () => ({}),
  ) {
    this.poller = new Poller(
      (signal) => this.poll(signal),
      () => backoffSeconds(this.settings.pollSeconds(), this.snap.failures) * 1000,
      (e) => log.warn(`Slurm view poll: ${String(e)}`),
    );
  }

  /** The last data (a copy). */
  get snapshot(): SlurmSnapshot {
    return { ...this.snap };
  }

  /** Queries sinfo and squeue now (or joins the query in progress). */
  refresh(): Promise<void> {
    return this.poller.refresh();
  }

  private async poll(signal: AbortSignal): Promise<void> {
    const opts = { ...this.cliOptions(), timeoutMs: this.settings.timeoutMs(), signal };
    const [parts, jobs] = await Promise.allSettled([queryPartitions(opts), queryJobs(opts)]);
    if (signal.aborted) return;
    const msg = (r: PromiseSettledResult<unknown>) =>
      r.status === "rejected" ? String((r.reason as Error)?.message ?? r.reason) : null;
    const next: SlurmSnapshot = {
      ...this.snap,
      polls: this.snap.polls + 1,
      polledAt: Date.now(),
      partitionsError: msg(parts),
      jobsError: msg(jobs),
    };
    if (parts.status === "fulfilled") next.partitions = parts.value;
    if (jobs.status === "fulfilled") {
      next.jobs = jobs.value.jobs;
      next.source = jobs.value.source;
    }
    const failed = parts.status === "rejected" || jobs.status === "rejected";
    next.failures = failed ? this.snap.failures + 1 : 0;
    if (failed && this.snap.failures === 0)
      log.warn(
        `Slurm view: ${[next.partitionsError, next.jobsError].filter(Boolean).join("; ")} (retrying with back-off)`,
      );
    this.snap = next;
    // While the groups stay, refresh them (their rows and counts), not the root: a root refresh
    // racing VS Code's first expansion of the groups makes it log "No tree item with id ... found".
    // The root only when its shape changes (the groups come after the one `Asking Slurm...` row, which
    // has nothing under it to expand) or while it is the one "not configured" row (its tooltip's next try).
    const shape = this.rootShape();
    if (shape !== this.shown || shape === "not configured") {
      this.shown = shape;
      this.emitter.fire();
    } else for (const g of GROUPS) this.emitter.fire(g);
  }

  /** The retry delay to show, s: after a failed poll, the back-off; null while the last poll succeeded. */
  private retrySeconds(): number | null {
    return this.snap.failures ? backoffSeconds(this.settings.pollSeconds(), this.snap.failures) : null;
  }

  /** The view's one row where Slurm has no configuration (see present.ts notConfiguredRow), or undefined. */
  private notConfigured(): SlurmRow | undefined {
    return notConfiguredRow(this.snap.partitionsError, this.snap.jobsError, this.retrySeconds());
  }

  /** The shape {@link getChildren} gives the top level now. */
  private rootShape(): RootShape {
    if (this.snap.polls === 0) return "asking";
    return this.notConfigured() ? "not configured" : "groups";
  }

  getChildren(node?: SlurmNode): SlurmNode[] {
    const s = this.snap;
    const retry = this.retrySeconds();
    if (!node) {
      if (s.polls === 0)
        return [
          { kind: "message", id: "asking", label: "Asking Slurm...", description: "", tooltip: "", icon: "loading" },
        ];
      const none = this.notConfigured();
      return none ? [{ kind: "message", id: "not-configured", ...none, icon: "warning" }] : [...GROUPS];
    }
    if (node.kind === "job")
      return jobDetailRows(node.job, Date.now() / 1000).map((d) => ({
        kind: "detail",
        jobId: String(node.job.id),
        ...d,
      }));
    if (node.kind !== "group") return [];
    const out: SlurmNode[] = [];
    const err = node.group === "partitions" ? s.partitionsError : s.jobsError;
    if (err) {
      const r = failureRow(node.group === "partitions" ? "sinfo" : "squeue", err, retry);
      out.push({
        kind: "message",
        id: `${node.group}-error`,
        label: r.label,
        description: r.description,
        tooltip: r.tooltip,
        icon: "warning",
      });
    }
    if (node.group === "partitions") {
      if (s.partitions?.length === 0)
        out.push({
          kind: "message",
          id: "partitions-none",
          label: "No partitions",
          description: "sinfo lists none",
          tooltip: "",
          icon: "info",
        });
      for (const p of s.partitions ?? []) out.push({ kind: "partition", partition: p });
    } else {
      if (s.jobs?.length === 0)
        out.push({
          kind: "message",
          id: "jobs-none",
          label: "No jobs",
          description: "GPU Pilot: Submit Active File to Slurm",
          tooltip: "",
          icon: "info",
        });
      for (const j of s.jobs ?? []) out.push({ kind: "job", job: j });
    }
    return out;
  }

  getTreeItem(node: SlurmNode): vscode.TreeItem {
    switch (node.kind) {
      case "group": {
        const s = this.snap;
        const n = node.group === "partitions" ? s.partitions?.length : s.jobs?.filter((j) => isActive(j.state)).length;
        const item = new vscode.TreeItem(
          node.group === "partitions" ? "Partitions" : "My jobs",
          vscode.TreeItemCollapsibleState.Expanded,
        );
        item.id = `slurm-${node.group}`;
        if (n !== undefined) item.description = node.group === "partitions" ? `${n}` : `${n} active`;
        item.contextValue = `slurmGroup.${node.group}`;
        return item;
      }
      case "partition": {
        const r = partitionRow(node.partition);
        const item = new vscode.TreeItem(r.label, vscode.TreeItemCollapsibleState.None);
        item.id = `slurm-partition-${node.partition.partition}`;
        item.description = r.description;
        item.tooltip = r.tooltip;
        item.iconPath = new vscode.ThemeIcon("server-environment");
        item.contextValue = "slurmPartition";
        return item;
      }
      case "job": {
        const r = jobRow(node.job, Date.now() / 1000);
        // Collapsed: GPUs, elapsed/limit and nodes are the rows under it (the row itself stays short).
        const item = new vscode.TreeItem(r.label, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `slurm-job-${node.job.id}`;
        item.description = r.description;
        item.tooltip = r.tooltip;
        const active = isActive(node.job.state);
        item.iconPath = new vscode.ThemeIcon(
          node.job.state.startsWith("RUNNING")
            ? "sync~spin"
            : active
              ? "clock"
              : node.job.state === "COMPLETED"
                ? "pass"
                : "error",
        );
        item.contextValue = active ? "slurmJob.active" : "slurmJob.done";
        return item;
      }
      case "detail": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = `slurm-job-${node.jobId}-${node.label}`;
        item.description = node.description;
        item.contextValue = "slurmJobDetail";
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = `slurm-msg-${node.id}`;
        item.description = node.description;
        item.tooltip = node.tooltip || undefined;
        item.iconPath = new vscode.ThemeIcon(node.icon === "loading" ? "loading~spin" : node.icon);
        item.contextValue = "slurmMessage";
        return item;
      }
    }
  }

  /** Rows as shown (label and description, depth-first), for tests. */
  rows(): Array<{ label: string; description: string; contextValue: string }> {
    const out: Array<{ label: string; description: string; contextValue: string }> = [];
    const walk = (nodes: SlurmNode[]) => {
      for (const n of nodes) {
        const it = this.getTreeItem(n);
        out.push({
          label: String(typeof it.label === "string" ? it.label : (it.label?.label ?? "")),
          description: String(it.description ?? ""),
          contextValue: it.contextValue ?? "",
        });
        walk(this.getChildren(n));
      }
    };
    walk(this.getChildren());
    return out;
  }

  dispose(): void {
    this.poller.dispose();
    this.emitter.dispose();
  }
}

/** Creates the view; polling follows its visibility. */
export function createSlurmTreeView(settings: SlurmViewSettings): {
  provider: SlurmTreeProvider;
  view: vscode.TreeView<SlurmNode>;
  disposables: vscode.Disposable[];
} {
  const provider = new SlurmTreeProvider(settings);
  const view = vscode.window.createTreeView(SLURM_VIEW_ID, { treeDataProvider: provider, showCollapseAll: false });
  const sync = () => provider.poller.setActive(view.visible);
  sync();
  return { provider, view, disposables: [provider, view, view.onDidChangeVisibility(sync)] };
}
