/**
 * The `gpuPilot.gpus` view: the compact, native view beside the dashboard (dashboard.ts). One
 * checkable row per GPU (ticked = in the selection), `GPU 0  12% · 3.3/140.4 GiB · 35°C` (without
 * the temperature on a machine with a GPU 10 or more: present.ts rowsShowTemperature), short enough
 * for a 300 px side bar; bus id, power, clocks, fan, modes and SM activity (activity.ts)
 * are in its tooltip. Under it: warnings (Exclusive_Process, lost), its MIG devices (checkable) and
 * its compute processes (pid, command line, user, memory, this workspace's run). Faults show as calm warning rows;
 * "nvidia-smi missing" as the welcome content. Numbers are written by units.ts.
 */
import * as vscode from "vscode";
import * as config from "../config";
import type { GpuMonitor } from "./monitor";
import { type ActivitySnapshot, activityTooltipMarkdown } from "./activity";
import { idleHeldLabel, idleHeldSentence } from "./idleHeld";
import type { ComputeApp, Gpu, Inventory, MigDevice, ProcessDetails } from "../../../common/src/gpu/nvidiaSmi";
import {
  appsOf,
  claimText,
  gpuRowDescription,
  gpuShortLabel,
  gpuTooltipMarkdown,
  gpuWarnings,
  migRow,
  migTooltipMarkdown,
  processRow,
  processTooltipMarkdown,
  rowsShowTemperature,
} from "./present";
import { isMigSelected, isSelected, type SelectionStore, toggleEntry } from "../../../common/src/gpu/selection";
import { log } from "../log";
import type { Claim } from "../../../common/src/gpu/claims";

/** What the view reads of the claims ledger (claimKeeper.ts): who holds a GPU, and a text that changes with the ledger. */
export interface ClaimsView {
  claimOf(gpuUuid: string): { mine: boolean; claim: Claim } | undefined;
  key(): string;
}

/** View id in package.json. */
export const VIEW_ID = "gpuPilot.gpus";
/** The view's TreeViewOptions besides the provider. */
const VIEW_OPTIONS = { manageCheckboxStateManually: true, showCollapseAll: true } as const;

/** A row of the view. */
export type GpuTreeNode =
  | {
      kind: "gpu";
      gpu: Gpu;
      apps: ComputeApp[];
      mig: MigDevice[];
      warnings: string[];
      /** Whether the row writes the temperature (not on a machine with a GPU 10 or more: present.ts rowsShowTemperature). */
      temperature: boolean;
    }
  | { kind: "gpuWarning"; gpu: Gpu; n: number; text: string }
  | { kind: "mig"; gpu: Gpu; mig: MigDevice }
  | { kind: "app"; gpu: Gpu; app: ComputeApp; details?: ProcessDetails }
  | { kind: "message"; id: string; label: string; detail: string; icon: "warning" | "info" | "loading" };

/** What the tooltips show of SM activity (not the sample ring, which changes every second). */
function activityKey(a: ActivitySnapshot): unknown {
  return [a.state, a.note, a.gpus.map((g) => [g.index, g.support, g.latest, g.busyButIdle])];
}

/** Context values of process rows: `computeApp.own` (can be stopped), `computeApp.own.run`, `computeApp.other`. */
export function processContextValue(details: ProcessDetails | undefined): string {
  if (!details?.own) return "computeApp.other";
  return details.workspaceRun ? "computeApp.own.run" : "computeApp.own";
}

/** TreeDataProvider of {@link VIEW_ID}, fed by a {@link GpuMonitor} and a {@link SelectionStore}. */
export class GpuTreeProvider implements vscode.TreeDataProvider<GpuTreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<GpuTreeNode | undefined | void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];
  private lastRendered = "";
  /**
   * The monitor sample the rows show, taken when the monitor fired (not when VS Code asks for the
   * rows later): the dashboard builds its model from the same sample at the same event, so both
   * panes show one sample at once ({@link sampleTakenAt} = the dashboard model's `takenAt`).
   */
  private sample: Inventory | undefined;

  constructor(
    private readonly monitor: GpuMonitor,
    private readonly selection: SelectionStore,
    private readonly claims?: ClaimsView,
  ) {
    this.disposables.push(
      monitor.onDidChange(() => this.changed()),
      selection.onDidChange(() => this.changed(true)),
    );
  }

  /** Fires onDidChangeTreeData when what the rows show changed (not on every identical tick). */
  private changed(force = false): void {
    const m = this.monitor;
    const inv = m.inventory;
    this.sample = inv;
    const key = JSON.stringify([
      m.state,
      m.failure,
      m.retryAt,
      m.notices,
      inv && { ...inv, takenAt: 0 },
      activityKey(m.activity),
      this.claims?.key(),
    ]);
    if (!force && key === this.lastRendered) return;
    this.lastRendered = key;
    this.emitter.fire();
  }

  /** When the sample the rows show was taken, ms since the epoch (0 before one). */
  get sampleTakenAt(): number {
    return this.sample?.takenAt ?? 0;
  }

  getChildren(node?: GpuTreeNode): GpuTreeNode[] {
    if (node) return node.kind === "gpu" ? this.childrenOf(node) : [];
    const m = this.monitor;
    switch (m.state) {
      case "unknown":
        return [
          { kind: "message", id: "message/loading", label: "Reading nvidia-smi...", detail: "", icon: "loading" },
        ];
      case "missing":
        return []; // the view's welcome content (viewsWelcome, when gpuPilot.nvidiaSmiState == missing) explains
      case "failed": {
        const f = m.failure;
        const retry =
          m.retryAt !== undefined
            ? `Retrying by itself in ${Math.max(1, Math.round((m.retryAt - Date.now()) / 1000))} s; Refresh retries now.`
            : "Refresh to try again.";
        const detail = [
          f?.kind === "failed"
            ? f.explanation
            : f?.kind === "timeout"
              ? `Stopped after ${f.ms} ms (gpuPilot.nvidiaSmiTimeoutMs).`
              : f?.kind === "garbage" && f.sample
                ? `Sample: ${f.sample}`
                : "",
          retry,
        ]
          .filter(Boolean)
          .join("\n");
        return [
          { kind: "message", id: "message/failure", label: m.problem || "nvidia-smi failed", detail, icon: "warning" },
        ];
      }
      case "ok": {
        const inv = this.sample ?? m.inventory;
        if (!inv) return [];
        const temperature = rowsShowTemperature(inv.gpus);
        const rows: GpuTreeNode[] = inv.gpus.map((gpu) => {
          const apps = appsOf(gpu, inv.apps);
          const mig = (inv.mig ?? [])
            .filter((d) => d.gpuUuid.toLowerCase() === gpu.uuid.toLowerCase())
            .sort((a, b) => a.device - b.device);
          return { kind: "gpu", gpu, apps, mig, warnings: gpuWarnings(gpu, inv.apps, mig.length), temperature };
        });
        if (inv.gpus.length === 0) {
          rows.push({
            kind: "message",
            id: "message/none",
            label: "nvidia-smi lists no GPUs",
            detail: "",
            icon: "info",
          });
        }
        for (const n of m.notices)
          rows.push({ kind: "message", id: n.id, label: n.message, detail: n.detail, icon: "warning" });
        inv.problems.forEach((p, i) =>
          rows.push({ kind: "message", id: `message/problem/${i}`, label: p, detail: "", icon: "warning" }),
        );
        return rows;
      }
    }
  }

  private childrenOf(node: Extract<GpuTreeNode, { kind: "gpu" }>): GpuTreeNode[] {
    const { gpu } = node;
    return [
      ...node.warnings.map((text, n): GpuTreeNode => ({ kind: "gpuWarning", gpu, n, text })),
      ...node.mig.map((mig): GpuTreeNode => ({ kind: "mig", gpu, mig })),
      ...node.apps.map((app): GpuTreeNode => ({
        kind: "app",
        gpu,
        app,
        details:
          (this.sample ?? this.monitor.inventory)?.processes?.find((p) => p.pid === app.pid) ??
          this.monitor.processOf(app.pid),
      })),
    ];
  }

  getTreeItem(node: GpuTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case "gpu": {
        const { gpu, apps } = node;
        const item = new vscode.TreeItem(
          gpuShortLabel(gpu),
          apps.length + node.mig.length + node.warnings.length > 0
            ? vscode.TreeItemCollapsibleState.Expanded
            : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `gpu/${gpu.uuid}`;
        const claim = claimText(this.claims?.claimOf(gpu.uuid));
        item.description = gpuRowDescription(gpu, node.temperature) + claim.suffix;
        const activity = activityTooltipMarkdown(gpu.index, this.monitor.activity);
        const tooltip = new vscode.MarkdownString(
          gpuTooltipMarkdown(gpu, apps, node.warnings) +
            (activity ? `\n\n${activity}` : "") +
            (claim.tooltip ? `\n\n${claim.tooltip}` : ""),
        );
        tooltip.supportThemeIcons = true;
        item.tooltip = tooltip;
        // No icon on a healthy GPU: its room goes to the numbers (a 300 px side bar); the dashboard
        // colours the load. A warning (Exclusive_Process, lost, MIG without devices) shows one.
        if (node.warnings.length > 0 || gpu.lost)
          item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"));
        const ticked = isSelected(gpu, this.selection.get());
        item.checkboxState = {
          state: ticked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
          tooltip: ticked
            ? `Runs, terminals and Python debug sessions see GPU ${gpu.index} (CUDA_VISIBLE_DEVICES)`
            : `Tick to let runs use GPU ${gpu.index}`,
        };
        item.contextValue = "gpu";
        return item;
      }
      case "gpuWarning": {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.id = `gpuWarning/${node.gpu.uuid}/${node.n}`;
        item.tooltip = node.text;
        item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"));
        item.contextValue = "gpuWarning";
        return item;
      }
      case "mig": {
        const row = migRow(node.mig);
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
        item.id = `mig/${node.mig.uuid}`;
        item.description = row.description;
        item.tooltip = new vscode.MarkdownString(migTooltipMarkdown(node.mig, node.gpu));
        item.iconPath = new vscode.ThemeIcon("symbol-namespace");
        const ticked = isMigSelected(node.mig, this.selection.get());
        item.checkboxState = {
          state: ticked ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
          tooltip: ticked ? `Runs see MIG device ${node.mig.uuid}` : "Tick to let runs use this MIG device (by UUID)",
        };
        item.contextValue = "migDevice";
        return item;
      }
      case "app": {
        const { app, details } = node;
        const idle = this.monitor.idleHeld(app.pid, node.gpu.uuid);
        const row = processRow(app, details, idle ? [idleHeldLabel(idle, Date.now())] : []);
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
        item.id = `app/${node.gpu.uuid}/${app.pid}`;
        item.description = row.description;
        item.tooltip = new vscode.MarkdownString(
          processTooltipMarkdown(app, details, node.gpu) + (idle ? `\n\n${idleHeldSentence(idle, Date.now())}` : ""),
        );
        // Icons only where they say something: this workspace's run, one of your processes (idle-held: orange).
        if (idle && details?.own)
          item.iconPath = new vscode.ThemeIcon("debug-pause", new vscode.ThemeColor("charts.orange"));
        else if (details?.workspaceRun)
          item.iconPath = new vscode.ThemeIcon("play-circle", new vscode.ThemeColor("charts.green"));
        else if (idle) item.iconPath = new vscode.ThemeIcon("debug-pause");
        else if (details?.own) item.iconPath = new vscode.ThemeIcon("account");
        item.contextValue = processContextValue(details);
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.tooltip = [node.label, node.detail, node.icon === "warning" ? "Details: GPU Pilot output channel." : ""]
          .filter(Boolean)
          .join("\n");
        item.iconPath =
          node.icon === "warning"
            ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"))
            : new vscode.ThemeIcon(node.icon === "loading" ? "loading~spin" : "info");
        if (node.icon === "warning") item.command = { command: "gpuPilot.showOutput", title: "Show Output" };
        item.contextValue = "message";
        return item;
      }
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A row of the view as plain data (for the API and tests): what VS Code would show. */
export interface GpuTreeRow {
  /** 0 for top-level rows, 1 for their children. */
  depth: number;
  id: string;
  label: string;
  description: string;
  /** The tooltip as text (Markdown source for Markdown tooltips). */
  tooltip: string;
  /** The row's contextValue: gpu, gpuWarning, migDevice, computeApp.own / .own.run / .other, message. */
  contextValue: string;
  /** The checkbox, for GPUs and MIG devices. */
  checked?: boolean;
  /** The ThemeIcon id and its colour id. */
  icon?: string;
  iconColor?: string;
}

/** Walks the provider and returns every row, depth first (what the view shows, fully expanded). */
export function treeRows(provider: GpuTreeProvider): GpuTreeRow[] {
  const rows: GpuTreeRow[] = [];
  const visit = (node: GpuTreeNode, depth: number) => {
    const item = provider.getTreeItem(node);
    const tip = item.tooltip;
    const icon = item.iconPath instanceof vscode.ThemeIcon ? item.iconPath : undefined;
    const check = item.checkboxState;
    rows.push({
      depth,
      id: item.id ?? "",
      label: typeof item.label === "string" ? item.label : (item.label?.label ?? ""),
      description: typeof item.description === "string" ? item.description : "",
      tooltip: typeof tip === "string" ? tip : tip instanceof vscode.MarkdownString ? tip.value : "",
      contextValue: item.contextValue ?? "",
      ...(check !== undefined
        ? { checked: (typeof check === "object" ? check.state : check) === vscode.TreeItemCheckboxState.Checked }
        : {}),
      ...(icon
        ? { icon: icon.id, ...(icon.color ? { iconColor: (icon.color as unknown as { id?: string }).id ?? "" } : {}) }
        : {}),
    });
    for (const child of provider.getChildren(node)) visit(child, depth + 1);
  };
  for (const node of provider.getChildren()) visit(node, 0);
  return rows;
}

/**
 * Creates the view with its provider; ticking a GPU's or MIG device's checkbox updates the
 * selection (written per `gpuPilot.selectBy`; UUIDs once a MIG device is in it). The monitor
 * streams while the view is visible.
 * @returns the TreeView, its provider and everything to dispose with it.
 */
export function createGpuTreeView(
  monitor: GpuMonitor,
  selection: SelectionStore,
  claims?: ClaimsView,
): { view: vscode.TreeView<GpuTreeNode>; provider: GpuTreeProvider; disposables: vscode.Disposable[] } {
  const provider = new GpuTreeProvider(monitor, selection, claims);
  const view = vscode.window.createTreeView<GpuTreeNode>(VIEW_ID, { treeDataProvider: provider, ...VIEW_OPTIONS });
  const onCheck = view.onDidChangeCheckboxState(async (e) => {
    const gpus = monitor.inventory?.gpus ?? [];
    const migs = monitor.inventory?.mig ?? [];
    const selectBy = config.selectBy();
    let ids = selection.get();
    for (const [node, state] of e.items) {
      const checked = state === vscode.TreeItemCheckboxState.Checked;
      if (node.kind === "gpu") ids = toggleEntry(ids, { kind: "gpu", gpu: node.gpu }, checked, gpus, migs, selectBy);
      else if (node.kind === "mig")
        ids = toggleEntry(ids, { kind: "mig", mig: node.mig }, checked, gpus, migs, selectBy);
    }
    try {
      await selection.set(ids);
    } catch (err) {
      log.error("Could not update the GPU selection", err);
    }
  });
  const visibility = monitor.followVisibility(view);
  return { view, provider, disposables: [provider, view, onCheck, visibility] };
}
