/**
 * The GPU dashboard: a WebviewView (`gpuPilot.dashboard`) in the GPU Pilot container, at nvitop's
 * density: per GPU a card with labelled utilisation, SM activity (activity.ts, where nvidia-smi dmon
 * reads GPM) and memory bars, the busy-but-idle flag, temperature, power/cap, a sparkline of the
 * recent minutes (history.ts), its MIG devices and its processes (sortable), and
 * the selection ticks, which write the same {@link SelectionStore} as the tree, the quick pick and
 * the API (so all of them stay in sync).
 *
 * The webview (client/webview/dashboard.ts, bundled by esbuild into dist/dashboard.js, styles in
 * dist/dashboard.css) runs under a strict CSP: scripts only with this page's nonce, styles and fonts
 * only from dist/, no network. Colours come from the theme's CSS variables.
 *
 * Protocol: the extension posts the whole {@link DashboardModel} (`model`) after each monitor or
 * selection change; the webview posts `ready`, `view` (the tab it shows: while it is the Processes
 * tab, the monitor reads per-process SM % with nvidia-smi pmon every 15 s), `toggle` (a tick or
 * untick), `sort` (a column header), `showHistory` and `rendered` (what it drew, for the API and
 * tests). `click` (extension → webview) asks the webview to click one of its own controls, so that
 * end-to-end tests go through the same DOM handlers as a user's click.
 */
import * as vscode from "vscode";
import { webviewPage } from "./webviewPage";
import * as config from "../config";
import { log } from "../log";
import { buildDashboardModel, type DashboardModel } from "./dashboardModel";
import type { DashboardLayout } from "./dashboardLayout";
import {
  DEFAULT_SORT,
  nextSort,
  PROCESS_SORT_KEYS,
  type ProcessSort,
  type ProcessSortKey,
  signalQuestion,
} from "./processTable";
import {
  checkSignalTarget,
  type ProcessSignal,
  signalProcess,
  type StopOptions,
} from "../../../common/src/gpu/procinfo";
import type { GpuMonitor } from "./monitor";
import { type SelectionStore, toggleEntry } from "../../../common/src/gpu/selection";
import { printableName } from "./present";

/** View id in package.json. */
export const DASHBOARD_VIEW_ID = "gpuPilot.dashboard";

/** A control of the dashboard that {@link GpuDashboard.click} can click. */
export type DashboardClickTarget =
  | { kind: "tick"; uuid: string }
  | { kind: "sort"; key: ProcessSortKey; uuid?: string }
  /** The tabs above the page: the GPUs, or the process table of every GPU. */
  | { kind: "view"; view: DashboardView }
  /** A compact GPU row: shows (or hides) its full card. */
  | { kind: "expand"; uuid: string }
  /** Picks a user in the process table's filter ("" = everyone). */
  | { kind: "filter"; user: string }
  /** A process row's Stop (SIGTERM) or Kill (SIGKILL) button; then the confirmation's buttons. */
  | { kind: "signal"; pid: number; signal: ProcessSignal }
  | { kind: "confirm" }
  | { kind: "cancel" };

/** What the dashboard page shows: the GPUs, or the process table. */
export type DashboardView = "gpus" | "processes";

/** What the webview drew, as it reports it after each render. */
export interface DashboardRendered {
  /** Per card: UUID, whether its tick box is checked, the pids of its process table top to bottom, MIG ticks. */
  gpus: {
    uuid: string;
    index: number;
    checked: boolean;
    pids: number[];
    mig: { uuid: string; checked: boolean }[];
    utilization: string;
    memory: string;
    /** The SM activity bar's text (`95%`), "" when the card has none. */
    smActivity: string;
    /** Whether the card shows the busy-but-idle line, and the pids of the process rows it flags. */
    busyButIdle: boolean;
    busyIdlePids: number[];
  }[];
  /** The sort its column headers show (aria-sort). */
  sort: ProcessSort;
  /** The tab shown, and the GPU layout chosen (dashboardModel.ts chooseLayout: by GPU count and the pane's height). */
  view: DashboardView;
  layout: DashboardLayout;
  /** UUIDs of the compact rows whose full card is open. */
  expanded: string[];
  /**
   * The process table as drawn (its tab): pids top to bottom, the filter, the header cells' text,
   * the lines the header takes and the header labels that do not fit their cells (clipped), the
   * numbers of the rows' first line that do not fit theirs (`cellsClipped`: `SM 100%`, cut to
   * `10…` at the default side bar before the SM column was widened), and the Sort list's column.
   */
  table: {
    pids: number[];
    userFilter: string;
    headers: string[];
    headerLines: number;
    clipped: string[];
    cellsClipped: string[];
    sortList: string;
  };
  /** The confirmation shown (Stop/Kill), "" when none; the last result line, "" when none. */
  confirm: string;
  result: string;
  /** The page's height in CSS px, and whether everything drawn fits it without scrolling. */
  height: number;
  fitsHeight: boolean;
  /** The webview's width in CSS pixels, and whether any card's content is wider than it (clipped). */
  width: number;
  overflowing: boolean;
}

/** Messages to the webview. */
export type ToDashboard =
  | { type: "model"; model: DashboardModel }
  | { type: "click"; target: DashboardClickTarget }
  /** Asks the user to confirm a signal (the question names pid, user and command line); `token` answers it. */
  | { type: "confirm"; token: string; pid: number; signal: ProcessSignal; question: string; warning?: string }
  /** What a Stop/Kill did, in words. */
  | { type: "signalResult"; ok: boolean; message: string };

/** Messages from the webview. */
export type FromDashboard =
  | { type: "ready" }
  /** The tab the webview shows (at its start and at each change). */
  | { type: "view"; view: DashboardView }
  | { type: "toggle"; kind: "gpu" | "mig"; uuid: string; checked: boolean }
  | { type: "sort"; key: ProcessSortKey }
  | { type: "filter"; user: string }
  | { type: "showHistory"; uuid: string }
  /** A Stop/Kill button: the extension checks the process and asks to confirm. */
  | { type: "askSignal"; pid: number; signal: ProcessSignal }
  /** The confirmation's answer. */
  | { type: "signal"; token: string; confirmed: boolean }
  | { type: "rendered"; rendered: DashboardRendered };

/** Whether `r` has {@link DashboardRendered}'s outer shape (a `gpus` array of objects, a width). */
function isRendered(r: unknown): r is DashboardRendered {
  if (!r || typeof r !== "object") return false;
  const o = r as Record<string, unknown>;
  return (
    Array.isArray(o.gpus) &&
    o.gpus.length <= 4096 &&
    o.gpus.every((g) => g !== null && typeof g === "object") &&
    typeof o.width === "number"
  );
}

/**
 * `m` as a {@link FromDashboard} message when it has one of its shapes (types, a known sort key,
 * UUIDs as strings of at most 128 characters), else undefined: the webview's messages are checked,
 * not trusted, and anything else is ignored.
 */
export function checkDashboardMessage(m: unknown): FromDashboard | undefined {
  if (!m || typeof m !== "object") return undefined;
  const o = m as Record<string, unknown>;
  const uuid = typeof o.uuid === "string" && o.uuid.length <= 128 ? o.uuid : undefined;
  switch (o.type) {
    case "ready":
      return { type: "ready" };
    case "view":
      return o.view === "gpus" || o.view === "processes" ? { type: "view", view: o.view } : undefined;
    case "toggle":
      return uuid !== undefined && (o.kind === "gpu" || o.kind === "mig") && typeof o.checked === "boolean"
        ? { type: "toggle", kind: o.kind, uuid, checked: o.checked }
        : undefined;
    case "sort":
      return PROCESS_SORT_KEYS.includes(o.key as ProcessSortKey)
        ? { type: "sort", key: o.key as ProcessSortKey }
        : undefined;
    case "filter":
      return typeof o.user === "string" && o.user.length <= 256 ? { type: "filter", user: o.user } : undefined;
    case "askSignal":
      return Number.isInteger(o.pid) &&
        (o.pid as number) > 0 &&
        (o.pid as number) < 2 ** 31 &&
        (o.signal === "SIGTERM" || o.signal === "SIGKILL")
        ? { type: "askSignal", pid: o.pid as number, signal: o.signal }
        : undefined;
    case "signal":
      return typeof o.token === "string" && /^[0-9a-f]{32}$/.test(o.token) && typeof o.confirmed === "boolean"
        ? { type: "signal", token: o.token, confirmed: o.confirmed }
        : undefined;
    case "showHistory":
      return uuid !== undefined ? { type: "showHistory", uuid } : undefined;
    case "rendered":
      return isRendered(o.rendered) ? { type: "rendered", rendered: o.rendered } : undefined;
    default:
      return undefined;
  }
}

/** What {@link GpuDashboard.getState} reports (the API's `getDashboardState`). */
export interface DashboardState {
  /** Whether VS Code has resolved the view (it was shown once). */
  resolved: boolean;
  visible: boolean;
  /** The model last posted (what the webview should show). */
  model: DashboardModel | undefined;
  /** What the webview last reported drawing; undefined before its first render. */
  rendered: DashboardRendered | undefined;
  /** Renders reported so far. */
  renders: number;
  /** Selection changes made by ticks in the dashboard. */
  toggles: number;
  /** What the last Stop/Kill did; absent before one. */
  lastSignal?: { ok: boolean; message: string };
  /** The tab the webview last said it shows, and whether per-process SM % is read for it now (only for `processes` while visible). */
  shownView: DashboardView;
  readingSm: boolean;
}

const SORT_KEY = "gpuPilot.dashboard.sort";
const FILTER_KEY = "gpuPilot.dashboard.userFilter";

/** The dashboard's WebviewViewProvider. */
export class GpuDashboard implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private viewDisposables: vscode.Disposable[] = [];
  private hold: vscode.Disposable | undefined;
  /** Held while the Processes tab is shown in a visible view: pmon every 15 s (monitor.ts). */
  private smHold: vscode.Disposable | undefined;
  private shownView: DashboardView = "gpus";
  private sort: ProcessSort;
  private lastModel: DashboardModel | undefined;
  private lastPosted = "";
  private rendered: DashboardRendered | undefined;
  private renders = 0;
  private toggles = 0;
  private userFilter: string;
  /** Confirmations asked and not answered yet, by token (one at a time: a new one replaces the old). */
  private readonly pending = new Map<
    string,
    { pid: number; signal: ProcessSignal; startTicks: number; processName: string; command: string }
  >();
  private lastSignal: { ok: boolean; message: string } | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly monitor: GpuMonitor,
    private readonly selection: SelectionStore,
    private readonly state: vscode.Memento,
    /** Where /proc is and what a GPU device is (tests); see procinfo.ts. */
    private readonly stopOptions: StopOptions = {},
  ) {
    const saved = state.get<ProcessSort>(SORT_KEY);
    this.sort =
      saved && PROCESS_SORT_KEYS.includes(saved.key) && typeof saved.descending === "boolean" ? saved : DEFAULT_SORT;
    const filter = state.get<string>(FILTER_KEY);
    this.userFilter = typeof filter === "string" ? filter : "";
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    this.lastPosted = "";
    this.rendered = undefined;
    this.shownView = "gpus"; // until the new webview says which tab it shows
    this.viewDisposables.push(
      view.onDidDispose(() => this.closed()),
      view.onDidChangeVisibility(() => this.followVisibility()),
      view.webview.onDidReceiveMessage((m: unknown) => {
        const checked = checkDashboardMessage(m);
        if (!checked) return;
        // A failing command or state update is logged, never an unhandled rejection in the extension host.
        this.onMessage(checked).catch((e: unknown) => log.error("GPU dashboard: a message from the webview failed", e));
      }),
      this.monitor.onDidChange(() => this.post()),
      this.selection.onDidChange(() => this.post(true)),
    );
    this.followVisibility();
  }

  /** The dashboard's state, for the API and tests. */
  getState(): DashboardState {
    return {
      resolved: this.view !== undefined,
      visible: this.view?.visible ?? false,
      model: this.lastModel,
      rendered: this.rendered,
      renders: this.renders,
      toggles: this.toggles,
      ...(this.lastSignal ? { lastSignal: this.lastSignal } : {}),
      shownView: this.shownView,
      readingSm: this.smHold !== undefined,
    };
  }

  /**
   * Asks the webview to click one of its controls (a GPU's tick box, a column header) through its
   * own DOM handlers. Resolves when posted; false when the view is not resolved.
   */
  async click(target: DashboardClickTarget): Promise<boolean> {
    if (!this.view) return false;
    return this.view.webview.postMessage({ type: "click", target } satisfies ToDashboard);
  }

  dispose(): void {
    this.closed();
  }

  private closed(): void {
    this.view = undefined;
    this.hold?.dispose();
    this.hold = undefined;
    this.smHold?.dispose();
    this.smHold = undefined;
    for (const d of this.viewDisposables.splice(0)) d.dispose();
  }

  /** Streams while the dashboard is visible (as the tree does). */
  private followVisibility(): void {
    if (this.view?.visible) {
      this.hold ??= this.monitor.hold({ activity: true });
      this.followTab();
      this.post(true);
    } else {
      this.hold?.dispose();
      this.hold = undefined;
      this.followTab();
    }
  }

  /** Reads per-process SM % (pmon) only while the Processes tab is shown in the visible view. */
  private followTab(): void {
    if (this.view?.visible && this.shownView === "processes") {
      this.smHold ??= this.monitor.hold({ processSm: true });
    } else {
      this.smHold?.dispose();
      this.smHold = undefined;
    }
  }

  private model(): DashboardModel {
    return buildDashboardModel({
      state: this.monitor.state,
      problem: this.monitor.problem,
      inventory: this.monitor.inventory,
      selection: this.selection.get(),
      history: this.monitor.history.snapshot(),
      // The same window as the History panel's "Last N min" (both read gpuPilot.history.minutes).
      sparkSeconds: config.historyMinutes() * 60,
      sort: this.sort,
      activity: this.monitor.activity,
      userFilter: this.userFilter,
      processSm: this.monitor.processSm,
    });
  }

  private post(force = false): void {
    const view = this.view;
    if (!view) return;
    const model = this.model();
    this.lastModel = model;
    const key = JSON.stringify(model);
    if (!force && key === this.lastPosted) return;
    this.lastPosted = key;
    void view.webview.postMessage({ type: "model", model } satisfies ToDashboard).then(undefined, () => undefined);
  }

  private async onMessage(m: FromDashboard): Promise<void> {
    switch (m.type) {
      case "ready":
        this.post(true);
        return;
      case "view":
        this.shownView = m.view;
        this.followTab();
        this.post();
        return;
      case "rendered":
        this.rendered = m.rendered;
        this.renders++;
        return;
      case "sort":
        this.sort = nextSort(this.sort, m.key);
        await this.state.update(SORT_KEY, this.sort);
        this.post(true);
        return;
      case "filter":
        this.userFilter = m.user;
        await this.state.update(FILTER_KEY, this.userFilter);
        this.post(true);
        return;
      case "askSignal":
        await this.askSignal(m.pid, m.signal);
        return;
      case "signal":
        await this.answerSignal(m.token, m.confirmed);
        return;
      case "showHistory":
        await vscode.commands.executeCommand("gpuPilot.showHistory", { kind: "gpu", gpu: { uuid: m.uuid } });
        return;
      case "toggle": {
        const inv = this.monitor.inventory;
        if (!inv) return;
        const uuid = m.uuid.toLowerCase();
        const gpu = inv.gpus.find((g) => g.uuid.toLowerCase() === uuid);
        const mig = (inv.mig ?? []).find((d) => d.uuid.toLowerCase() === uuid);
        const target =
          m.kind === "gpu" && gpu
            ? { kind: "gpu" as const, gpu }
            : m.kind === "mig" && mig
              ? { kind: "mig" as const, mig }
              : undefined;
        if (!target) return;
        const ids = toggleEntry(
          this.selection.get(),
          target,
          m.checked === true,
          inv.gpus,
          inv.mig ?? [],
          config.selectBy(),
        );
        try {
          this.toggles++;
          await this.selection.set(ids);
        } catch (err) {
          log.error("Could not update the GPU selection from the dashboard", err);
        }
        this.post(true);
        return;
      }
    }
  }

  private postResult(ok: boolean, message: string): void {
    this.lastSignal = { ok, message };
    void this.view?.webview
      .postMessage({ type: "signalResult", ok, message } satisfies ToDashboard)
      .then(undefined, () => undefined);
  }

  /**
   * A Stop/Kill button: the pid must be one the current sample lists; /proc must show it with the
   * start time read when it was listed and the program nvidia-smi named (procinfo.ts
   * checkSignalTarget). Then the webview asks to confirm, naming pid, user and command line.
   */
  private async askSignal(pid: number, signal: ProcessSignal): Promise<void> {
    const inv = this.monitor.inventory;
    const app = inv?.apps.find((a) => a.pid === pid);
    const gpu = app && inv?.gpus.find((g) => g.uuid.toLowerCase() === app.gpuUuid.toLowerCase());
    if (!inv || !app || !gpu) {
      this.postResult(false, `Process ${pid} is no longer listed by nvidia-smi. Nothing was sent.`);
      return;
    }
    const details = inv.processes?.find((p) => p.pid === pid);
    if (details?.startTicks === undefined) {
      this.postResult(
        false,
        `Process ${pid} is not visible here (${details?.note ?? "in another PID namespace"}): GPU Pilot cannot tell which process it is, so it sends nothing.`,
      );
      return;
    }
    const check = await checkSignalTarget(
      pid,
      { startTicks: details.startTicks, processName: app.processName },
      this.stopOptions,
    );
    if (!check.ok) {
      this.postResult(false, check.message);
      return;
    }
    this.pending.clear();
    const token = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16))).toString("hex");
    this.pending.set(token, {
      pid,
      signal,
      startTicks: details.startTicks,
      processName: app.processName,
      command: details.commandLine,
    });
    const question = signalQuestion(signal, {
      pid,
      user: check.user,
      command: printableName(details.commandLine),
      gpuIndex: gpu.index,
    });
    void this.view?.webview
      .postMessage({
        type: "confirm",
        token,
        pid,
        signal,
        question,
        ...(check.warning ? { warning: check.warning } : {}),
      } satisfies ToDashboard)
      .then(undefined, () => undefined);
  }

  /** The confirmation's answer: sends the signal (checked again right before) or nothing. */
  private async answerSignal(token: string, confirmed: boolean): Promise<void> {
    const p = this.pending.get(token);
    this.pending.delete(token);
    if (!p || !confirmed) return;
    const r = await signalProcess(
      p.pid,
      p.signal,
      { startTicks: p.startTicks, processName: p.processName },
      this.stopOptions,
    );
    const verb = p.signal === "SIGKILL" ? "killed" : "stopped";
    if (r.ok) {
      log.info(`Sent ${p.signal} to process ${p.pid} (${p.command}).`);
      this.postResult(true, `Sent ${p.signal} to process ${p.pid}.`);
      void vscode.window.showInformationMessage(
        `GPU Pilot: sent ${p.signal} to process ${p.pid} (${verb === "killed" ? "kill" : "stop"}).`,
      );
    } else {
      log.warn(r.message);
      this.postResult(false, r.message);
      void vscode.window.showWarningMessage(`GPU Pilot: ${r.message}`);
    }
    await this.monitor.refresh();
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    return webviewPage(
      webview,
      dist,
      { script: "dashboard.js", style: "dashboard.css" },
      "GPU Dashboard",
      `<main id="cards" aria-live="polite"><p class="message">Reading nvidia-smi...</p></main>`,
    );
  }
}

/**
 * Registers the dashboard's provider (`retainContextWhenHidden: false`: the webview asks again
 * with `ready` when shown).
 * @returns the dashboard and what to dispose.
 */
export function registerGpuDashboard(
  extensionUri: vscode.Uri,
  monitor: GpuMonitor,
  selection: SelectionStore,
  state: vscode.Memento,
  stopOptions: StopOptions = {},
): { dashboard: GpuDashboard; disposables: vscode.Disposable[] } {
  const dashboard = new GpuDashboard(extensionUri, monitor, selection, state, stopOptions);
  const reg = vscode.window.registerWebviewViewProvider(DASHBOARD_VIEW_ID, dashboard);
  return { dashboard, disposables: [dashboard, reg] };
}
