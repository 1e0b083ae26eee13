// A small stand-in for the `vscode` module (and vscode-languageclient/node's LanguageClient), enough
// for the client's VS Code glue to run in node's test runner. Import this file before any client
// module: it hooks Module._load so `require("vscode")` returns the fake. Not a test file itself.
import Module from "node:module";
import { join } from "node:path";

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
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}
export class MarkdownString {
  supportThemeIcons = false;
  constructor(readonly value = "") {}
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export enum TreeItemCheckboxState {
  Unchecked = 0,
  Checked = 1,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum EnvironmentVariableMutatorType {
  Replace = 1,
  Append = 2,
  Prepend = 3,
}

/** Stand-in for `ExtensionContext.environmentVariableCollection` (what new terminals would get). */
export class FakeEnvironmentVariableCollection {
  persistent = true;
  description: string | MarkdownString | undefined;
  readonly map = new Map<string, { value: string; type: EnvironmentVariableMutatorType; options: object }>();
  /** Number of replace/append/prepend/clear calls (terminals would be marked stale). */
  writes = 0;
  replace(variable: string, value: string): void {
    this.writes++;
    this.map.set(variable, { value, type: EnvironmentVariableMutatorType.Replace, options: {} });
  }
  append(variable: string, value: string): void {
    this.writes++;
    this.map.set(variable, { value, type: EnvironmentVariableMutatorType.Append, options: {} });
  }
  prepend(variable: string, value: string): void {
    this.writes++;
    this.map.set(variable, { value, type: EnvironmentVariableMutatorType.Prepend, options: {} });
  }
  get(variable: string) {
    return this.map.get(variable);
  }
  forEach(
    cb: (
      variable: string,
      mutator: { value: string; type: EnvironmentVariableMutatorType; options: object },
      c: unknown,
    ) => unknown,
  ): void {
    for (const [k, v] of this.map) cb(k, v, this);
  }
  delete(variable: string): void {
    this.map.delete(variable);
  }
  clear(): void {
    this.writes++;
    this.map.clear();
  }
  getScoped(): FakeEnvironmentVariableCollection {
    return this;
  }
  [Symbol.iterator]() {
    return this.map.entries();
  }
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: unknown;
  iconPath?: unknown;
  checkboxState?: unknown;
  contextValue?: string;
  command?: unknown;
  constructor(
    readonly label: string,
    readonly collapsibleState?: TreeItemCollapsibleState,
  ) {}
}
export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  get fsPath(): string {
    return this.path;
  }
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join("/"));
  }
  static untitled(name: string): Uri {
    return new Uri("untitled", name);
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

/** A text document as runActiveFile sees it. */
export class FakeDocument {
  saves = 0;
  /** The document's text (getText()). */
  text = "";
  constructor(
    public uri: Uri,
    public languageId = "python",
    public isDirty = false,
  ) {}
  getText(): string {
    return this.text;
  }
  get isUntitled(): boolean {
    return this.uri.scheme === "untitled";
  }
  save(): Promise<boolean> {
    this.saves++;
    this.isDirty = false;
    return Promise.resolve(true);
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === "number" ? new Position(a, b as number) : a;
    this.end = typeof a === "number" ? new Position(c ?? 0, d ?? 0) : (b as Position);
  }
}
export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; arguments?: unknown[]; tooltip?: string },
  ) {}
}
/** CodeLens providers registered through languages.registerCodeLensProvider. */
export const languages = {
  codeLensProviders: [] as {
    selector: unknown;
    provider: { provideCodeLenses(doc: unknown): unknown; onDidChangeCodeLenses?: unknown };
  }[],
  registerCodeLensProvider(selector: unknown, provider: { provideCodeLenses(doc: unknown): unknown }) {
    const entry = { selector, provider };
    languages.codeLensProviders.push(entry);
    return { dispose: () => languages.codeLensProviders.splice(languages.codeLensProviders.indexOf(entry), 1) };
  },
};

export class ProcessExecution {
  constructor(
    readonly process: string,
    readonly args: string[],
    readonly options?: { cwd?: string; env?: Record<string, string> },
  ) {}
}
/** The parts of a `vscode.Pseudoterminal` the fake drives. */
export interface FakePty {
  onDidWrite(l: (text: string) => unknown): unknown;
  onDidClose?(l: (code: number | void) => unknown): unknown;
  open(dims: undefined): void;
  close(): void;
  handleInput?(data: string): void;
}
export class CustomExecution {
  constructor(readonly callback: (resolvedDefinition: unknown) => Promise<FakePty>) {}
}
export const TaskScope = { Global: 1, Workspace: 2 };
export enum TaskRevealKind {
  Always = 1,
  Silent = 2,
  Never = 3,
}
export enum TaskPanelKind {
  Shared = 1,
  Dedicated = 2,
  New = 3,
}
export class Task {
  presentationOptions: unknown;
  constructor(
    readonly definition: { type: string; [key: string]: unknown },
    readonly scope: unknown,
    readonly name: string,
    readonly source: string,
    readonly execution: ProcessExecution | CustomExecution,
    readonly problemMatchers?: string[],
  ) {}
}
/** A CustomExecution's pseudoterminal opened by {@link tasks.open}: what it wrote, and its close code. */
export interface OpenedPty {
  pty: FakePty;
  output(): string;
  closed: Promise<number | void>;
}
const taskStart = new EventEmitter<{ execution: { task: Task }; processId: number }>();
const taskEnd = new EventEmitter<{ execution: { task: Task }; exitCode: number | undefined }>();
const opened = new Map<Task, OpenedPty>();
export const tasks = {
  executed: [] as Task[],
  /** Tasks whose execution's terminate() was called. */
  terminated: [] as Task[],
  executeTask(task: Task) {
    tasks.executed.push(task);
    return Promise.resolve({
      task,
      terminate: () => {
        tasks.terminated.push(task);
        opened.get(task)?.pty.close();
      },
    });
  },
  onDidStartTaskProcess: taskStart.event,
  onDidEndTaskProcess: taskEnd.event,
  /** Simulates a ProcessExecution task's process starting and ending. */
  finish(task: Task, pid: number, exitCode: number | undefined) {
    taskStart.fire({ execution: { task }, processId: pid });
    taskEnd.fire({ execution: { task }, exitCode });
  },
  /** Does what VS Code does with a CustomExecution task: gets its pseudoterminal and opens it. */
  async open(task: Task): Promise<OpenedPty> {
    if (!(task.execution instanceof CustomExecution)) throw new Error(`${task.name}: not a CustomExecution`);
    const pty = await task.execution.callback(task.definition);
    let out = "";
    pty.onDidWrite((t) => (out += t));
    const closed = new Promise<number | void>((r) => pty.onDidClose?.(r));
    const entry = { pty, output: () => out, closed };
    opened.set(task, entry);
    pty.open(undefined);
    return entry;
  },
};

/** What the code under test did, for assertions. */
export const recorded = {
  /** Answers of the next show*Message calls, in order (undefined = dismissed). */
  answers: [] as (string | undefined)[],
  /** Labels of the GPUs the next quick pick accepts; undefined = the user cancels it. */
  quickPickAnswer: undefined as string[] | undefined,
  quickPicks: [] as { title?: string; labels: string[]; preselected: string[]; details: (string | undefined)[] }[],
  /** Answers of the next showQuickPick (by label) / showInputBox calls, in order (undefined = cancelled). */
  pickAnswers: [] as (string | undefined)[],
  inputAnswers: [] as (string | undefined)[],
  /** What showQuickPick offered and showInputBox proposed. */
  picks: [] as { title?: string; labels: string[]; descriptions: (string | undefined)[] }[],
  inputs: [] as { title?: string; value?: string }[],
  /** Documents shown with their selection's start line (showTextDocument). */
  shown: [] as { uri: string; line?: number }[],
  /** Commands run through executeCommand that no one registered (e.g. workbench.trust.manage). */
  executed: [] as string[],
  /** The same commands with their arguments. */
  executedWith: [] as { command: string; args: unknown[] }[],
  context: new Map<string, unknown>(),
  messages: [] as string[],
  /** Progress notifications (window.withProgress): title, whether still open, and Cancel. */
  progress: [] as { title: string; open: boolean; message?: string; cancel(): void }[],
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
  constructor(
    readonly id: string,
    readonly options: { treeDataProvider: unknown; manageCheckboxStateManually?: boolean },
  ) {}
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.visibility.fire({ visible });
  }
  dispose(): void {}
}

/**
 * A stand-in for vscode.WebviewPanel (window.createWebviewPanel): records the messages posted to it;
 * {@link setVisible} hides/shows it like another editor tab would, {@link receive} is a message from
 * its page.
 */
export class FakeWebviewPanel {
  visible = true;
  readonly posted: unknown[] = [];
  private readonly viewState = new EventEmitter<{ webviewPanel: FakeWebviewPanel }>();
  private readonly disposed = new EventEmitter<void>();
  private readonly fromPage = new EventEmitter<unknown>();
  onDidChangeViewState = this.viewState.event;
  onDidDispose = this.disposed.event;
  readonly webview = {
    html: "",
    cspSource: "vscode-resource:",
    asWebviewUri: (u: Uri) => u,
    postMessage: (m: unknown) => {
      // A hidden page that is not retained receives nothing.
      if (this.visible) this.posted.push(JSON.parse(JSON.stringify(m)));
      return Promise.resolve(this.visible);
    },
    onDidReceiveMessage: this.fromPage.event,
  };
  constructor(
    readonly viewType: string,
    readonly title: string,
  ) {}
  reveal(): void {
    if (!this.visible) this.setVisible(true);
  }
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.viewState.fire({ webviewPanel: this });
  }
  receive(m: unknown): void {
    this.fromPage.fire(m);
  }
  dispose(): void {
    this.disposed.fire();
  }
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
  hide(): void {
    this.shown = false;
  }
  dispose(): void {}
}

const logLine =
  (level: string) =>
  (message: unknown, ...args: unknown[]) =>
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
  return Promise.resolve(recorded.answers.shift());
};

interface PickItem {
  label: string;
  detail?: string;
}
function createQuickPick() {
  const accept = new EventEmitter<void>();
  const hide = new EventEmitter<void>();
  const selection = new EventEmitter<readonly PickItem[]>();
  const qp = {
    title: undefined as string | undefined,
    placeholder: "",
    canSelectMany: false,
    matchOnDescription: false,
    matchOnDetail: false,
    busy: false,
    items: [] as PickItem[],
    selectedItems: [] as PickItem[],
    activeItems: [] as PickItem[],
    onDidAccept: accept.event,
    onDidHide: hide.event,
    onDidChangeSelection: selection.event,
    show() {
      recorded.quickPicks.push({
        title: qp.title,
        labels: qp.items.map((i) => i.label),
        preselected: qp.selectedItems.map((i) => i.label),
        details: qp.items.map((i) => i.detail),
      });
      const answer = recorded.quickPickAnswer;
      setImmediate(() => {
        if (answer === undefined) return hide.fire();
        const chosen = qp.items.filter((i) => answer.includes(i.label));
        qp.selectedItems = chosen;
        selection.fire(chosen);
        accept.fire();
      });
    },
    hide() {
      hide.fire();
    },
    dispose() {},
  };
  return qp;
}

/** `vscode.ProgressLocation`. */
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };

function withProgress<R>(
  options: { title?: string },
  task: (
    progress: { report(v: { message?: string }): void },
    token: { isCancellationRequested: boolean; onCancellationRequested: (f: () => void) => { dispose(): void } },
  ) => Promise<R>,
): Promise<R> {
  const cancelled = new EventEmitter<void>();
  const token = { isCancellationRequested: false, onCancellationRequested: (f: () => void) => cancelled.event(f) };
  const entry = {
    title: options.title ?? "",
    open: true,
    message: undefined as string | undefined,
    cancel() {
      token.isCancellationRequested = true;
      cancelled.fire();
    },
  };
  recorded.progress.push(entry);
  const done = task({ report: (v) => (entry.message = v.message) }, token);
  void done.then(
    () => (entry.open = false),
    () => (entry.open = false),
  );
  return done;
}

/** window.onDidChangeActiveNotebookEditor: fire the new active notebook editor (or undefined). */
export const activeNotebookEmitter = new EventEmitter<{ notebook: { uri: Uri; metadata?: unknown } } | undefined>();

/** window.onDidChangeWindowState: fire `{ focused: true }` for "this window gained focus". */
export const windowStateEmitter = new EventEmitter<{ focused: boolean }>();

export const window = {
  withProgress,
  onDidChangeWindowState: windowStateEmitter.event,
  activeNotebookEditor: undefined as { notebook: { uri: Uri; metadata?: unknown } } | undefined,
  onDidChangeActiveNotebookEditor: activeNotebookEmitter.event,
  /** WebviewViewProviders registered (registerWebviewViewProvider), by view id. */
  webviewViews: new Map<string, unknown>(),
  registerWebviewViewProvider(id: string, provider: unknown) {
    window.webviewViews.set(id, provider);
    return { dispose: () => window.webviewViews.delete(id) };
  },
  createOutputChannel: () => channel,
  /** Webview panels created (createWebviewPanel), newest last. */
  webviewPanels: [] as FakeWebviewPanel[],
  createWebviewPanel(viewType: string, title: string) {
    const panel = new FakeWebviewPanel(viewType, title);
    window.webviewPanels.push(panel);
    return panel;
  },
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
  activeTextEditor: undefined as { document: FakeDocument } | undefined,
  createQuickPick,
  showInformationMessage: showMessage,
  showWarningMessage: showMessage,
  showErrorMessage: showMessage,
  showQuickPick(items: readonly (string | { label: string; description?: string })[], options?: { title?: string }) {
    const label = (i: string | { label: string }) => (typeof i === "string" ? i : i.label);
    recorded.picks.push({
      title: options?.title,
      labels: items.map(label),
      descriptions: items.map((i) => (typeof i === "string" ? undefined : i.description)),
    });
    const answer = recorded.pickAnswers.shift();
    return Promise.resolve(items.find((i) => label(i) === answer));
  },
  showInputBox(options?: { title?: string; value?: string }) {
    recorded.inputs.push({ title: options?.title, value: options?.value });
    return Promise.resolve(recorded.inputAnswers.shift());
  },
  showTextDocument(doc: FakeDocument, options?: { selection?: Range }) {
    recorded.shown.push({ uri: doc.uri.toString(), line: options?.selection?.start.line });
    return Promise.resolve({ document: doc });
  },
  terminals: [] as { name: string; show(): void }[],
};

const trustEmitter = new EventEmitter<void>();
export const workspace = {
  // A key in `settings` reads as set by the user (its global value); any other has no user value.
  getConfiguration: () => ({
    get: (key: string) => settings.get(key),
    inspect: (key: string) => ({ key, ...(settings.has(key) ? { globalValue: settings.get(key) } : {}) }),
  }),
  /** Workspace trust (vscode.workspace.isTrusted). */
  isTrusted: true,
  onDidGrantWorkspaceTrust: trustEmitter.event,
  onDidChangeConfiguration: configEmitter.event,
  /** Watchers made by the client (the language client's `synchronize.fileEvents`). */
  watchers: [] as string[],
  createFileSystemWatcher(glob: string) {
    workspace.watchers.push(glob);
    return {
      dispose() {
        /* nothing to release */
      },
      onDidCreate: () => ({
        dispose() {
          /* */
        },
      }),
      onDidChange: () => ({
        dispose() {
          /* */
        },
      }),
      onDidDelete: () => ({
        dispose() {
          /* */
        },
      }),
    };
  },
  textDocuments: [] as FakeDocument[],
  /** Open notebooks (workspace.notebookDocuments). */
  notebookDocuments: [] as { uri: Uri; metadata?: unknown }[],
  /** The workspace folder of every file under it. */
  folder: undefined as { uri: Uri; name: string; index: number } | undefined,
  /** `[folder]`, or undefined without one. */
  get workspaceFolders() {
    return workspace.folder ? [workspace.folder] : undefined;
  },
  /** `workspace.fs.stat`: the real file system (rejects for a missing file, as VS Code does). */
  fs: {
    stat: async (uri: Uri) => {
      const st = await import("node:fs").then((m) => m.promises.stat(uri.fsPath));
      return { type: st.isDirectory() ? 2 : 1, size: st.size };
    },
  },
  getWorkspaceFolder(uri: Uri) {
    return workspace.folder && uri.scheme === "file" && uri.fsPath.startsWith(workspace.folder.uri.fsPath + "/")
      ? workspace.folder
      : undefined;
  },
  openTextDocument(uri: Uri) {
    return Promise.resolve(
      workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) ?? new FakeDocument(uri),
    );
  },
  /** Save As of an untitled document: `saveAsTarget` is where the user saves (undefined = cancels the dialog). */
  saveAsTarget: undefined as string | undefined,
  save(uri: Uri) {
    if (uri.scheme !== "untitled") return Promise.resolve(uri);
    return Promise.resolve(workspace.saveAsTarget ? Uri.file(workspace.saveAsTarget) : undefined);
  },
};

/** `vscode.debug`: the registered DebugConfigurationProviders, by debug type. */
export const debug = {
  providers: [] as { type: string; provider: unknown }[],
  registerDebugConfigurationProvider(type: string, provider: unknown) {
    const entry = { type, provider };
    debug.providers.push(entry);
    return { dispose: () => debug.providers.splice(debug.providers.indexOf(entry), 1) };
  },
};

/** Installed extensions by id (extensions.getExtension), e.g. a Jupyter extension double. */
export const installedExtensions = new Map<
  string,
  { isActive: boolean; exports: unknown; activate(): Promise<unknown> }
>();
export const extensions = {
  getExtension: (id: string) => installedExtensions.get(id),
};

const registered = new Map<string, (...args: unknown[]) => unknown>();
export const commands = {
  registered,
  registerCommand: (id: string, handler: (...args: unknown[]) => unknown) => {
    if (registered.has(id)) throw new Error(`command '${id}' already exists`);
    registered.set(id, handler);
    return { dispose: () => registered.delete(id) };
  },
  executeCommand: (command: string, ...args: unknown[]) => {
    if (command === "setContext") {
      recorded.context.set(String(args[0]), args[1]);
      return Promise.resolve(undefined);
    }
    const handler = registered.get(command);
    if (!handler) {
      recorded.executed.push(command);
      recorded.executedWith.push({ command, args });
    }
    return Promise.resolve(handler ? handler(...args) : undefined);
  },
  /** Ids of commands other extensions contribute (commands.getCommands), besides those registered here. */
  contributed: new Set<string>(),
  getCommands: (_filterInternal?: boolean) => Promise.resolve([...registered.keys(), ...commands.contributed]),
};

/** `vscode.LanguageModelTextPart` / `LanguageModelToolResult` / `McpStdioServerDefinition`. */
export class LanguageModelTextPart {
  constructor(readonly value: string) {}
}
export class LanguageModelToolResult {
  constructor(readonly content: unknown[]) {}
}
export class McpStdioServerDefinition {
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args?: string[],
    readonly env?: Record<string, string>,
  ) {}
}
/**
 * `vscode.lm`: the tools and MCP server definition providers registered, by name / id. Set
 * `registerTool` or `registerMcpServerDefinitionProvider` to undefined for a VS Code without them.
 */
export const lm = {
  tools: new Map<string, unknown>(),
  mcpProviders: new Map<string, { provideMcpServerDefinitions(token: unknown): unknown[] }>(),
  registerTool: ((name: string, tool: unknown) => {
    if (lm.tools.has(name)) throw new Error(`tool ${name} is already registered`);
    lm.tools.set(name, tool);
    return { dispose: () => lm.tools.delete(name) };
  }) as ((name: string, tool: unknown) => { dispose(): void }) | undefined,
  registerMcpServerDefinitionProvider: ((
    id: string,
    provider: { provideMcpServerDefinitions(token: unknown): unknown[] },
  ) => {
    lm.mcpProviders.set(id, provider);
    return { dispose: () => lm.mcpProviders.delete(id) };
  }) as
    | ((id: string, provider: { provideMcpServerDefinitions(token: unknown): unknown[] }) => { dispose(): void })
    | undefined,
};

const fake = {
  LanguageModelTextPart,
  LanguageModelToolResult,
  McpStdioServerDefinition,
  lm,
  EventEmitter,
  ThemeColor,
  ThemeIcon,
  MarkdownString,
  TreeItem,
  TreeItemCollapsibleState,
  TreeItemCheckboxState,
  StatusBarAlignment,
  Uri,
  window,
  workspace,
  commands,
  ProcessExecution,
  CustomExecution,
  Task,
  TaskScope,
  TaskRevealKind,
  TaskPanelKind,
  tasks,
  extensions,
  EnvironmentVariableMutatorType,
  debug,
  Position,
  Range,
  CodeLens,
  languages,
  ProgressLocation,
  ViewColumn: { Active: -1, Beside: -2, One: 1 },
};

/** Stand-in for vscode-languageclient/node's LanguageClient: records what it was given and sent. */
export class FakeLanguageClient {
  static instances: FakeLanguageClient[] = [];
  static failStart = false;
  running = false;
  stopped = false;
  readonly notifications: { method: string; params: unknown }[] = [];
  private readonly stateEmitter = new EventEmitter<{ oldState: number; newState: number }>();
  onDidChangeState = this.stateEmitter.event;
  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: unknown,
    readonly clientOptions: { documentSelector?: unknown; initializationOptions?: unknown; outputChannel?: unknown },
  ) {
    FakeLanguageClient.instances.push(this);
  }
  start(): Promise<void> {
    if (FakeLanguageClient.failStart) return Promise.reject(new Error("server crashed at start"));
    this.running = true;
    this.stateEmitter.fire({ oldState: 3, newState: 2 });
    return Promise.resolve();
  }
  isRunning(): boolean {
    return this.running;
  }
  needsStop(): boolean {
    return this.running;
  }
  stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return this.stop();
  }
  sendNotification(type: { method: string }, params: unknown): Promise<void> {
    this.notifications.push({ method: type.method, params });
    return Promise.resolve();
  }
  /** The server's answers to requests (tests set it); default: the request fails as unhandled. */
  static answer: (method: string, params: unknown) => Promise<unknown> = (method) =>
    Promise.reject(new Error(`Unhandled method ${method}`));
  readonly requests: { method: string; params: unknown }[] = [];
  sendRequest(type: { method: string }, params: unknown): Promise<unknown> {
    this.requests.push({ method: type.method, params });
    return FakeLanguageClient.answer(type.method, params);
  }
}
const languageClientFake = {
  LanguageClient: FakeLanguageClient,
  TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 },
  RevealOutputChannelOn: { Debug: 0, Info: 1, Warn: 2, Error: 3, Never: 4 },
  ErrorAction: { Continue: 1, Shutdown: 2 },
  CloseAction: { DoNotRestart: 1, Restart: 2 },
  State: { Stopped: 1, Running: 2, Starting: 3 },
};

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
const mod = Module as unknown as { _load: Load };
const original = mod._load;
mod._load = function (request: string, parent: unknown, isMain: boolean) {
  if (request === "vscode") return fake;
  if (request === "vscode-languageclient/node") return languageClientFake;
  return original.call(this, request, parent, isMain);
};

/** An in-memory `vscode.Memento` (workspace state) for tests; `data` is the backing map. */
export function memento() {
  const data = new Map<string, unknown>();
  return {
    data,
    get: <T>(key: string) => data.get(key) as T | undefined,
    update: (key: string, value: unknown) => {
      data.set(key, value);
      return Promise.resolve();
    },
  };
}

/**
 * A stand-in `vscode.ExtensionContext` rooted at `root`: workspace state in memory (holding the GPU
 * selection `selection` when given), paths and URI under `root`, version 0.1.0.
 */
export function fakeExtensionContext(root: string, selection?: string[]) {
  const data = new Map<string, unknown>();
  if (selection) data.set("gpuPilot.selection", selection);
  return {
    subscriptions: [] as { dispose(): unknown }[],
    workspaceState: {
      get: (key: string) => data.get(key),
      update: (key: string, value: unknown) => {
        data.set(key, value);
        return Promise.resolve();
      },
    },
    asAbsolutePath: (p: string) => join(root, p),
    extension: { packageJSON: { version: "0.1.0" } },
    extensionPath: root,
    extensionUri: Uri.file(root),
  };
}
