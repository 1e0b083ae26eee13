/**
 * "GPU Pilot: Show GPU History" (`gpuPilot.showHistory`): a webview panel that draws, per GPU,
 * utilisation % and memory used MiB over the last `gpuPilot.history.minutes` with uPlot
 * (dist/history.js, dist/history.css: bundled, no CDN), above them an "All GPUs" chart (every GPU's
 * utilisation, the memory used by all), the selected GPUs highlighted and the starts and ends of this
 * workspace's runs marked: on the charts of the GPUs each run was given, and all on "All GPUs".
 *
 * The numbers come from {@link GpuMonitor.history} (a ring per GPU fed by the streamed ticks). While
 * the panel is open it holds the monitor's stream ({@link GpuMonitor.hold}). The webview is not
 * retained when hidden: whenever it becomes visible (or reloads) it asks for the whole history
 * (`ready`), and each new tick is posted as an `append` message.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import { webviewPage } from "./webviewPage";
import type { LastRun } from "../api";
import * as config from "../config";
import type { HistorySnapshot } from "./history";
import type { GpuMonitor } from "./monitor";
import { isSelected, type SelectionStore } from "../../../common/src/gpu/selection";

/** A run's start and end, as the panel marks them (labelled with `file`). */
export interface RunMark {
  title: string;
  /** The script's file name (basename), the markers' label. */
  file: string;
  /** ms since the epoch. */
  startedAt: number;
  /** ms since the epoch, once ended. */
  endedAt?: number;
  /**
   * Lower-case UUIDs of the physical GPUs the run was given (a MIG instance's parent GPU): its
   * markers are drawn on these GPUs' charts (and on "All GPUs"); empty when not known.
   */
  gpus: string[];
}

/** Messages to the webview. */
export type ToWebview =
  | { type: "history"; snapshot: HistorySnapshot; selected: string[]; runs: RunMark[]; minutes: number; focus?: string }
  | {
      type: "append";
      at: number;
      samples: { uuid: string; utilizationPercent: number | null; memoryUsedMiB: number | null }[];
      selected: string[];
      runs: RunMark[];
    };

/** Messages from the webview. */
export type FromWebview =
  { type: "ready" } | { type: "drawn"; samples: number; gpus: number; axes?: HistoryAxes[]; all?: HistoryAllAxes };

/** `m` when it is a message the webview may send ({@link FromWebview}: the fields the panel reads checked), else undefined. */
export function validFromWebview(m: unknown): FromWebview | undefined {
  if (typeof m !== "object" || m === null) return undefined;
  const o = m as Record<string, unknown>;
  if (o.type === "ready") return { type: "ready" };
  if (o.type !== "drawn") return undefined;
  const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  const axes = Array.isArray(o.axes)
    ? (o.axes as unknown[]).filter(
        (a): a is HistoryAxes =>
          typeof a === "object" &&
          a !== null &&
          typeof (a as HistoryAxes).uuid === "string" &&
          strings((a as HistoryAxes).runLabels),
      )
    : [];
  const all = o.all as HistoryAllAxes | undefined;
  const allOk =
    typeof all === "object" &&
    all !== null &&
    strings(all.series) &&
    strings(all.runLabels) &&
    strings(all.hoverLabels);
  return { type: "drawn", samples: count(o.samples), gpus: count(o.gpus), axes, ...(allOk ? { all } : {}) };
}

/** What the webview reports of the "All GPUs" chart at its last draw. */
export interface HistoryAllAxes {
  /** The utilisation chart's series labels, one per GPU: `GPU 0`, `GPU 1`, ... */
  series: string[];
  /** Each of those lines' colour (historyMarks.ts gpuLineStyle): the same as the GPU's own charts' {@link HistoryAxes.color}. */
  colors: string[];
  /** The memory chart's axis in `memoryUnit`: [0, the GPUs' memory.total added up]. */
  memory: [number, number];
  memoryUnit: "GiB" | "MiB";
  /** The label of the line drawn at the memory chart's total: `1123.2 GiB total`; empty when none (total unknown). */
  memoryTotal: string;
  /** The labels drawn beside run markers (every run's), e.g. `▶ train.py`. */
  runLabels: string[];
  /** Where each of {@link runLabels} was drawn beside its marker ({@link RunLabelAt}). */
  runLabelAt: RunLabelAt[];
  /** Labels with no room on a row, shown only on hover. */
  hoverLabels: string[];
}

/**
 * Where a run marker's label was drawn, CSS px from the plot area's left edge: the marker line's x,
 * the left edge of the label's text as the canvas drew it (its textAlign applied) and the label's
 * box. The label sits right of its line (`boxLeft` = `marker` + 2) or, near the plot's right edge,
 * left of it (`boxRight` = `marker` - 2); the text starts 2 px inside its box.
 */
export interface RunLabelAt {
  marker: number;
  textLeft: number;
  boxLeft: number;
  boxRight: number;
}

/** The y-axis bounds a GPU's two charts were drawn with (what the webview reports). */
export interface HistoryAxes {
  uuid: string;
  /** Time axis, s since the epoch: [newest sample − gpuPilot.history.minutes, newest sample]. */
  time: [number, number];
  /** The time tick labels as drawn (history.ts timeAxis): `-10 min` ... `now`. */
  timeTicks: string[];
  /** Utilisation axis, %: [0, 100]. */
  utilization: [number, number];
  /** Memory axis in `memoryUnit`: [0, the GPU's memory.total]. */
  memory: [number, number];
  /** The one unit of every memory tick label: `GiB` (total from 1 GiB up) or `MiB`. */
  memoryUnit: "GiB" | "MiB";
  /** The memory tick labels as drawn. */
  memoryTicks: string[];
  /** The label of the line drawn at the memory axis' top, the GPU's total: `140.4 GiB total`; empty when none (total unknown). */
  memoryTotal: string;
  /** The labels drawn beside run markers (only runs given this GPU), e.g. `▶ train.py`. */
  runLabels: string[];
  /** The row (0 at the top) each of {@link runLabels} was drawn on: close markers' labels are stacked. */
  runLabelRows: number[];
  /** Where each of {@link runLabels} was drawn beside its marker. */
  runLabelAt: RunLabelAt[];
  /** Labels of this chart's markers with no room on a row, shown only while the cursor is near. */
  hoverLabels: string[];
  /**
   * The charts' legends as drawn: the time, then the value as a bare number, the unit being in the
   * chart's title and axis (`["latest 07:25:31", "100"]`, `["latest 07:25:31", "3.3"]`); under the
   * cursor its sample's, else the newest sample's.
   */
  legend: { utilization: string[]; memory: string[] };
  /** The charts' line colours (the GPU's colour on every chart: historyMarks.ts gpuLineStyle). */
  color: { utilization: string; memory: string };
  /** The charts' area fills as given to uPlot: the line's colour at 13 % opacity, `rgba(r, g, b, 0.13)`. */
  fill: { utilization: string; memory: string };
  /** Chart width in CSS pixels and the width it had to fill. */
  width: number;
  availableWidth: number;
}

/** What {@link GpuViewApi.getHistoryPanelState} reports. */
export interface HistoryPanelState {
  /** Whether the panel exists (open, visible or not). */
  open: boolean;
  /** Whether it is visible. */
  visible: boolean;
  /** Per-GPU samples posted to the webview since it was opened (whole histories and appends). */
  samplesSent: number;
  /** Messages posted to the webview. */
  messagesSent: number;
  /** Of those, whole histories (opened, shown again, reloaded, GPUs changed). */
  historiesSent: number;
  /** "drawn" reports received from the webview (one per redraw). */
  drawReports: number;
  /** Samples per GPU the webview last said it drew, over all GPUs (its own count, after a redraw); 0 before. */
  samplesDrawn: number;
  /** GPUs the webview last said it drew. */
  gpusDrawn: number;
  /** The axes of each GPU's charts at the last redraw. */
  axes: HistoryAxes[];
  /** The "All GPUs" chart at the last redraw (undefined before, or with no GPUs). */
  all?: HistoryAllAxes;
}

/** Runs remembered for the marks (the newest). */
const MAX_RUNS = 50;

/**
 * The panel's name wherever it is shown: its editor tab, its page's title and heading, in VS Code's
 * title case as the command (Show GPU History) writes it (the heading read "GPU history").
 */
export const HISTORY_TITLE = "GPU History";

/** Owns the (single) history panel. */
export class HistoryPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private panelDisposables: vscode.Disposable[] = [];
  private readonly runs: RunMark[] = [];
  private lastPushes = -1;
  private knownGpus = "";
  private focus: string | undefined;
  private state: Omit<HistoryPanelState, "open" | "visible"> = {
    samplesSent: 0,
    messagesSent: 0,
    historiesSent: 0,
    drawReports: 0,
    samplesDrawn: 0,
    gpusDrawn: 0,
    axes: [],
  };

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly monitor: GpuMonitor,
    private readonly selection: SelectionStore,
    private readonly lastRun: () => LastRun | undefined,
  ) {}

  /** Opens (or reveals) the panel; `node`, a GPU row of the view, picks the GPU to emphasise. */
  show(node?: unknown): void {
    const gpu = (node as { kind?: string; gpu?: { uuid?: unknown } } | undefined)?.gpu;
    this.focus = typeof gpu?.uuid === "string" ? gpu.uuid : undefined;
    if (this.panel) {
      this.panel.reveal(undefined, false);
      this.postHistory();
      return;
    }
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const panel = vscode.window.createWebviewPanel("gpuPilot.history", HISTORY_TITLE, vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [dist],
    });
    this.panel = panel;
    this.state = {
      samplesSent: 0,
      messagesSent: 0,
      historiesSent: 0,
      drawReports: 0,
      samplesDrawn: 0,
      gpusDrawn: 0,
      axes: [],
    };
    this.lastPushes = this.monitor.history.pushes;
    panel.webview.html = this.html(panel.webview, dist);
    this.panelDisposables.push(
      this.monitor.hold(),
      panel.onDidDispose(() => this.closed()),
      panel.onDidChangeViewState((e) => {
        // A webview that is not retained starts over when shown; it asks with `ready` too, this is a
        // second chance in case that message raced the reload.
        if (e.webviewPanel.visible) this.postHistory();
      }),
      panel.webview.onDidReceiveMessage((raw: unknown) => {
        const m = validFromWebview(raw);
        if (m?.type === "ready") this.postHistory();
        else if (m?.type === "drawn") {
          this.state.drawReports++;
          this.state.samplesDrawn = m.samples;
          this.state.gpusDrawn = m.gpus;
          this.state.axes = m.axes ?? [];
          if (m.all) this.state.all = m.all;
          else delete this.state.all;
        }
      }),
      this.monitor.onDidChange(() => this.onMonitorChange()),
      this.selection.onDidChange(() => this.postHistory()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (config.affects(e, [`${config.SECTION}.history.minutes`, `${config.SECTION}.refreshIntervalMs`]))
          this.postHistory();
      }),
    );
  }

  /** The panel's state, for the API and tests. */
  getState(): HistoryPanelState {
    return { open: this.panel !== undefined, visible: this.panel?.visible ?? false, ...this.state };
  }

  dispose(): void {
    this.panel?.dispose();
    this.closed();
  }

  private closed(): void {
    this.panel = undefined;
    for (const d of this.panelDisposables.splice(0)) d.dispose();
  }

  private noteRun(): void {
    const run = this.lastRun();
    if (!run || run.error) return;
    const known = this.runs.find((r) => r.startedAt === run.startedAt && r.title === run.title);
    if (known) {
      if (run.endedAt !== undefined) known.endedAt = run.endedAt;
      return;
    }
    this.runs.push({
      title: run.title,
      file: path.basename(run.file),
      startedAt: run.startedAt,
      gpus: this.physicalGpus(run.gpus ?? []),
      ...(run.endedAt !== undefined ? { endedAt: run.endedAt } : {}),
    });
    if (this.runs.length > MAX_RUNS) this.runs.shift();
  }

  /** The physical GPUs of `ids` (GPU or MIG UUIDs, as {@link LastRun.gpus}), lower case: a MIG instance gives its parent. */
  private physicalGpus(ids: readonly string[]): string[] {
    const mig = this.monitor.inventory?.mig ?? [];
    const out = new Set<string>();
    for (const id of ids) {
      const lower = id.toLowerCase();
      const parent = mig.find((m) => m.uuid.toLowerCase() === lower)?.gpuUuid;
      if (parent) out.add(parent.toLowerCase());
      else if (!/^mig-/.test(lower)) out.add(lower);
    }
    return [...out];
  }

  private selectedUuids(gpus: readonly { index: number; uuid: string }[]): string[] {
    const ids = this.selection.get();
    const mig = this.monitor.inventory?.mig ?? [];
    const fromMig = new Set(
      mig
        .filter((m) => ids.some((id) => id.toLowerCase() === m.uuid.toLowerCase()))
        .map((m) => m.gpuUuid.toLowerCase()),
    );
    return gpus.filter((g) => isSelected(g, ids) || fromMig.has(g.uuid.toLowerCase())).map((g) => g.uuid);
  }

  private onMonitorChange(): void {
    const history = this.monitor.history;
    if (!this.panel || history.pushes === this.lastPushes) return;
    const missed = history.pushes - this.lastPushes;
    this.lastPushes = history.pushes;
    // Only each GPU's newest sample is read here (history.latest(): no copy of the rings); the whole
    // history is copied and posted only when the webview cannot just append.
    const latest = history.latest();
    const gpus = latest.map((g) => g.uuid).join(",");
    if (missed !== 1 || gpus !== this.knownGpus) {
      this.postHistory();
      return;
    }
    this.noteRun();
    const at = Math.max(...latest.map((g) => g.sample.at));
    const samples = latest
      .filter((g) => g.sample.at === at)
      .map((g) => ({
        uuid: g.uuid,
        utilizationPercent: g.sample.utilizationPercent,
        memoryUsedMiB: g.sample.memoryUsedMiB,
      }));
    this.post(
      { type: "append", at, samples, selected: this.selectedUuids(latest), runs: [...this.runs] },
      samples.length,
    );
  }

  /** Posts every sample (the panel was opened, shown again or reloaded; the GPUs changed). */
  private postHistory(snap: HistorySnapshot = this.monitor.history.snapshot()): void {
    if (!this.panel) return;
    this.noteRun();
    this.lastPushes = this.monitor.history.pushes;
    this.knownGpus = snap.gpus.map((g) => g.uuid).join(",");
    const samples = snap.gpus.reduce((n, g) => n + g.at.length, 0);
    this.state.historiesSent++;
    this.post(
      {
        type: "history",
        snapshot: snap,
        selected: this.selectedUuids(snap.gpus),
        runs: [...this.runs],
        minutes: config.historyMinutes(),
        ...(this.focus ? { focus: this.focus } : {}),
      },
      samples,
    );
  }

  private post(message: ToWebview, samples: number): void {
    const panel = this.panel;
    if (!panel) return;
    this.state.messagesSent++;
    this.state.samplesSent += samples;
    void panel.webview.postMessage(message).then(undefined, () => undefined);
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    return webviewPage(
      webview,
      dist,
      { script: "history.js", style: "history.css" },
      HISTORY_TITLE,
      `<header id="head"><h1>${HISTORY_TITLE}</h1><p id="summary">Waiting for nvidia-smi...</p></header>
<main id="charts"></main>`,
    );
  }
}
