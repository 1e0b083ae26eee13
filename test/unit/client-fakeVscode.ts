// A small stand-in for the `vscode` module, enough for the GPU monitor, tree view and status bar
// to run in node's test runner. Import this file before any client module: it hooks
// Module._load so `require("vscode")` returns the fake. Not a test file itself.
import Module from "node:module";

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class ThemeIcon {
  constructor(readonly id: string, readonly color?: ThemeColor) {}
}
export class MarkdownString {
  constructor(readonly value = "") {}
}
export enum TreeItemCollapsibleState { None = 0, Collapsed = 1, Expanded = 2 }
export enum TreeItemCheckboxState { Unchecked = 0, Checked = 1 }
export enum StatusBarAlignment { Left = 1, Right = 2 }
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: unknown;
  iconPath?: unknown;
  checkboxState?: unknown;
  contextValue?: string;
  command?: unknown;
  constructor(readonly label: string, readonly collapsibleState?: TreeItemCollapsibleState) {}
}
export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
}

/** What the code under test did, for assertions. */
export const recorded = {
  context: new Map<string, unknown>(),
  messages: [] as string[],
  log: [] as string[],
  treeViews: [] as FakeTreeView[],
  statusItems: [] as FakeStatusItem[],
};

/** Settings read through workspace.getConfiguration("gpuPilot"). */
export const settings = new Map<string, unknown>();
const configEmitter = new EventEmitter<{ affectsConfiguration(key: string): boolean }>();
/** Fires onDidChangeConfiguration for `keys` (full keys, e.g. gpuPilot.nvidiaSmiPath). */
export function changeSettings(keys: string[]): void {
  configEmitter.fire({ affectsConfiguration: (k: string) => keys.some((key) => key === k || key.startsWith(`${k}.`)) });
}

export class FakeTreeView {
  visible = false;
  readonly visibility = new EventEmitter<{ visible: boolean }>();
  readonly checkbox = new EventEmitter<{ items: [unknown, TreeItemCheckboxState][] }>();
  onDidChangeVisibility = this.visibility.event;
  onDidChangeCheckboxState = this.checkbox.event;
  constructor(readonly id: string, readonly options: { treeDataProvider: unknown; manageCheckboxStateManually?: boolean }) {}
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.visibility.fire({ visible });
  }
  dispose(): void {}
}

export class FakeStatusItem {
  text = "";
  tooltip: unknown;
  command: unknown;
  name = "";
  backgroundColor: unknown;
  shown = false;
  constructor(readonly id: string) {}
  show(): void {
    this.shown = true;
  }
  dispose(): void {}
}

const logLine = (level: string) => (message: unknown, ...args: unknown[]) =>
  recorded.log.push(`${level} ${String(message)}${args.length ? " " + args.map(String).join(" ") : ""}`);

const channel = {
  trace: logLine("trace"),
  debug: logLine("debug"),
  info: logLine("info"),
  warn: logLine("warn"),
  error: logLine("error"),
  appendLine: logLine("info"),
  append: logLine("info"),
  show: () => undefined,
  dispose: () => undefined,
};

const showMessage = (message: string) => {
  recorded.messages.push(message);
  return Promise.resolve(undefined);
};

export const window = {
  createOutputChannel: () => channel,
  createTreeView: (id: string, options: { treeDataProvider: unknown }) => {
    const view = new FakeTreeView(id, options);
    recorded.treeViews.push(view);
    return view;
  },
  createStatusBarItem: (id: string) => {
    const item = new FakeStatusItem(id);
    recorded.statusItems.push(item);
    return item;
  },
  showInformationMessage: showMessage,
  showWarningMessage: showMessage,
  showErrorMessage: showMessage,
};

export const workspace = {
  getConfiguration: () => ({ get: (key: string) => settings.get(key) }),
  onDidChangeConfiguration: configEmitter.event,
};

export const commands = {
  executeCommand: (command: string, ...args: unknown[]) => {
    if (command === "setContext") recorded.context.set(String(args[0]), args[1]);
    return Promise.resolve(undefined);
  },
};

const fake = {
  EventEmitter, ThemeColor, ThemeIcon, MarkdownString, TreeItem, TreeItemCollapsibleState,
  TreeItemCheckboxState, StatusBarAlignment, Uri, window, workspace, commands,
};

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
const mod = Module as unknown as { _load: Load };
const original = mod._load;
mod._load = function (request: string, parent: unknown, isMain: boolean) {
  if (request === "vscode") return fake;
  return original.call(this, request, parent, isMain);
};
