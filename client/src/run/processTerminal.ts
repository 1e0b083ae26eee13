/**
 * The terminal of a run: a `vscode.Pseudoterminal` that starts one program with execa (an argument
 * array, an environment given whole, no shell) and shows its output. runActiveFile.ts hands it to
 * VS Code through a `CustomExecution`, for which VS Code resolves no `${...}` variable: a file named
 * `${command:ID}.py` or `${env:HF_TOKEN}.py` reaches the program byte for byte, and nothing runs a
 * command or reads a variable on its behalf (a `ProcessExecution` would expand both, VS Code 1.139).
 *
 * - Output: stdout and stderr as they come (UTF-8), every lone `\n` written as `\r\n` (the
 *   terminal moves to the start of the line only on `\r`).
 * - Input: a small line discipline, as the program reads a pipe, not a tty. Typed text is echoed
 *   and sent a line at a time on Enter (`\r` → `\n`); Backspace edits the line; Ctrl+D sends the
 *   line, or ends the input on an empty line; Ctrl+C sends SIGINT and Ctrl+\ SIGQUIT to the
 *   program's process group (torchrun's workers included); escape sequences (arrow keys) are dropped.
 * - Stop (the task's Terminate, the terminal closed, {@link ProcessTerminal.close}): SIGTERM to the
 *   process group, SIGKILL after {@link ProcessTerminalOptions.killAfterMs} if it is still there.
 * - The end: {@link ProcessTerminalOptions.onExit} gets the exit code or signal, a line says it, and
 *   `onDidClose` fires with the exit code (128 + signal number for a signal, 1 when it never started)
 *   so the task reports it.
 *
 * No `vscode` import (types only): unit-tested with real processes.
 */
import { constants as osConstants } from "node:os";
import type * as vscode from "vscode";
import { loadExeca } from "../../../common/src/gpu/nvidiaSmi";

/** How a run ended: an exit code, or the signal that ended it, or why it could not start. */
export interface ProcessExit {
  /** The exit code; undefined when a signal ended it or it never started. */
  exitCode?: number;
  /** The signal that ended it (`SIGINT`, `SIGTERM`, `SIGKILL`, ...). */
  signal?: string;
  /** Why it could not start (`spawn /x ENOENT`, a missing cwd), in words. */
  error?: string;
}

/** What to run, whole: nothing is added to `env`, nothing in any value is expanded. */
export interface ProcessTerminalOptions {
  command: string;
  args: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  /** The program's whole environment (see common/src/run/launch.ts `runEnvironment`). */
  env: Readonly<Record<string, string>>;
  /** Called once with the pid when the program has started. */
  onStart?(pid: number): void;
  /** Called once when the program has ended or could not start. */
  onExit?(exit: ProcessExit): void;
  /** Wait between SIGTERM and SIGKILL on stop, ms (default 3000). */
  killAfterMs?: number;
}

type Listener<T> = (e: T) => unknown;

/** A minimal event source with the shape of `vscode.Event` (no `vscode` import). */
class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();
  readonly event: vscode.Event<T> = (listener, thisArgs?, disposables?) => {
    const bound: Listener<T> = (e) => listener.call(thisArgs, e);
    this.listeners.add(bound);
    const d = { dispose: () => void this.listeners.delete(bound) };
    if (Array.isArray(disposables)) disposables.push(d as vscode.Disposable);
    return d as vscode.Disposable;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
}

/**
 * `text` with every `\n` not preceded by `\r` written as `\r\n`. `prevEndsCr`: the previous chunk
 * ended with `\r` (so a leading `\n` completes that `\r\n`).
 */
export function toTerminalText(text: string, prevEndsCr = false): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n" && !(i === 0 ? prevEndsCr : text[i - 1] === "\r")) out += "\r\n";
    else out += c;
  }
  return out;
}

/** Exit code of a run ended by `signal`, as a shell reports it (128 + the signal number); 1 for an unknown one. */
export function signalExitCode(signal: string): number {
  const n = (osConstants.signals as Record<string, number | undefined>)[signal];
  return n === undefined ? 1 : 128 + n;
}

type Child = ReturnType<Awaited<ReturnType<typeof loadExeca>>["execa"]>;

/** See the file comment. One program per instance; `open` starts it. */
export class ProcessTerminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new Emitter<string>();
  private readonly closeEmitter = new Emitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  private child: Child | undefined;
  private started = false;
  private ended = false;
  private stopping = false;
  private killTimer: NodeJS.Timeout | undefined;
  private line = "";
  private lastCr = false;
  private inputEnded = false;
  /** Process group: on POSIX the program leads its own (detached), so signals reach its children. */
  private readonly group = process.platform !== "win32";

  /** @param options what it runs (read back by tests and the log; never changed). */
  constructor(readonly options: ProcessTerminalOptions) {}

  /** Called by VS Code when the terminal is ready: starts the program (the dimensions are not used: the program has no tty). */
  open(_initialDimensions?: vscode.TerminalDimensions): void {
    if (this.started) return;
    this.started = true;
    void this.start();
  }

  private async start(): Promise<void> {
    const { execa } = await loadExeca();
    if (this.stopping) return this.finish({ signal: "SIGTERM" });
    const o = this.options;
    let child: Child;
    try {
      child = execa(o.command, [...o.args], {
        cwd: o.cwd,
        env: { ...o.env },
        extendEnv: false,
        detached: this.group,
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        buffer: false,
        reject: false,
        stripFinalNewline: false,
        windowsHide: true,
      });
    } catch (e) {
      return this.finish({ error: (e as Error).message });
    }
    this.child = child;
    child.stdin?.on("error", () => undefined); // the program closed its input: nothing to send to
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => this.write(chunk));
    }
    if (child.pid !== undefined) o.onStart?.(child.pid);
    const r = await child;
    if (r.exitCode !== undefined) this.finish({ exitCode: r.exitCode });
    else if (r.signal) this.finish({ signal: r.signal });
    else this.finish({ error: r.originalMessage || r.shortMessage || "it did not start" });
  }

  private write(text: string): void {
    if (text === "") return;
    this.writeEmitter.fire(toTerminalText(text, this.lastCr));
    this.lastCr = text.endsWith("\r");
  }

  private finish(exit: ProcessExit): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.killTimer);
    if (exit.error !== undefined) this.write(`\nGPU Pilot could not start ${this.options.command}: ${exit.error}\n`);
    try {
      this.options.onExit?.(exit);
    } finally {
      this.closeEmitter.fire(exit.exitCode ?? (exit.signal ? signalExitCode(exit.signal) : 1));
    }
  }

  /** Sends `signal` to the program's process group (its own process on Windows); false when it is gone. */
  signal(signal: NodeJS.Signals): boolean {
    const pid = this.child?.pid;
    if (this.ended || pid === undefined) return false;
    try {
      if (this.group) process.kill(-pid, signal);
      else this.child!.kill(signal);
      return true;
    } catch {
      return false; // ESRCH: already gone
    }
  }

  /** Called by VS Code for typed or pasted text (see the file comment). */
  handleInput(data: string): void {
    for (let i = 0; i < data.length; i++) {
      const c = data[i];
      if (c === "\x03") {
        this.writeEmitter.fire("^C\r\n");
        this.line = "";
        this.signal("SIGINT");
      } else if (c === "\x1c") {
        this.writeEmitter.fire("^\\\r\n");
        this.signal("SIGQUIT");
      } else if (c === "\x04") {
        if (this.line === "") this.endInput();
        else this.sendLine("");
      } else if (c === "\r" || c === "\n") {
        if (c === "\n" && data[i - 1] === "\r") continue;
        this.writeEmitter.fire("\r\n");
        this.sendLine("\n");
      } else if (c === "\x7f" || c === "\b") {
        if (this.line !== "") {
          this.line = [...this.line].slice(0, -1).join("");
          this.writeEmitter.fire("\b \b");
        }
      } else if (c === "\x1b") {
        // CSI / SS3 sequence (arrows, function keys): skip to its final byte.
        if (data[i + 1] === "[" || data[i + 1] === "O") {
          i += 2;
          while (i < data.length && !/[@-~]/.test(data[i])) i++;
        }
      } else if (c >= " " || c === "\t") {
        this.line += c;
        this.writeEmitter.fire(c);
      }
    }
  }

  private sendLine(end: string): void {
    const text = this.line + end;
    this.line = "";
    if (!this.inputEnded && text !== "") this.child?.stdin?.write(text);
  }

  private endInput(): void {
    if (this.inputEnded) return;
    this.inputEnded = true;
    this.child?.stdin?.end();
  }

  /**
   * Called by VS Code when the task is terminated or its terminal closed: SIGTERM to the process
   * group, SIGKILL after `killAfterMs` if it has not ended. Idempotent.
   */
  close(): void {
    if (this.stopping || this.ended) return;
    this.stopping = true;
    if (!this.child) return; // not started yet: start() ends it
    this.signal("SIGTERM");
    this.killTimer = setTimeout(() => this.signal("SIGKILL"), this.options.killAfterMs ?? 3000);
    this.killTimer.unref?.();
  }
}
