/**
 * A test double of the Jupyter extension's kernel API (`@vscode/jupyter-extension` 1.1.1
 * api.d.ts, as client/src/notebook/jupyterApi.ts copies it): `kernels.getKernel(uri)` answers the
 * kernel of a notebook the test started; a kernel has `status`, `onDidChangeStatus`, `language`
 * and `executeCode(code, token)`, an async iterable of outputs whose items carry a MIME type and
 * bytes, and ends when the execution does. The kernel runs nothing: `answer` decides what the code
 * prints (the probe's line), after `delayMs`; a kernel that never answers waits for the token's
 * cancellation, as a kernel busy with a long cell would. Not a test file itself.
 */
import { EventEmitter } from "./client-fakeVscode";
import type { CancellationToken, Uri } from "vscode";
import type {
  JupyterApi,
  JupyterKernel,
  JupyterKernelStatus,
  JupyterOutput,
} from "../../../client/src/notebook/jupyterApi";
import { STDOUT_MIME } from "../../../client/src/notebook/jupyterApi";

/** One kernel of the double; `answer(code)` is what the code prints (undefined: it never answers). */
export class KernelDouble implements JupyterKernel {
  status: JupyterKernelStatus = "idle";
  readonly statusEmitter = new EventEmitter<JupyterKernelStatus>();
  onDidChangeStatus = this.statusEmitter.event;
  /** The code of every execution, in order. */
  readonly executed: string[] = [];
  /** Whether the last execution's token was cancelled. */
  cancelled = false;
  constructor(
    public answer: (code: string) => string | undefined,
    public language = "python",
    public delayMs = 5,
  ) {}

  /** Sets the status and fires the event, as the extension does. */
  setStatus(s: JupyterKernelStatus): void {
    this.status = s;
    this.statusEmitter.fire(s);
  }

  async *executeCode(code: string, token: CancellationToken): AsyncIterable<JupyterOutput> {
    this.executed.push(code);
    this.cancelled = false;
    this.setStatus("busy");
    try {
      const text = this.answer(code);
      if (text === undefined) {
        await new Promise<void>((resolve) => {
          token.onCancellationRequested(() => {
            this.cancelled = true;
            resolve();
          });
        });
        return;
      }
      await new Promise((r) => setTimeout(r, this.delayMs));
      // Two outputs, the line cut in the middle: the stream arrives in pieces.
      const bytes = new TextEncoder().encode(text);
      const cut = Math.floor(bytes.length / 2);
      yield { items: [{ mime: STDOUT_MIME, data: bytes.slice(0, cut) }] };
      yield { items: [{ mime: STDOUT_MIME, data: bytes.slice(cut) }], metadata: { outputType: "stream" } };
    } finally {
      this.setStatus("idle");
    }
  }
}

/** The API double: a kernel per notebook URI; `getKernelCalls` counts the calls. */
export class JupyterDouble implements JupyterApi {
  readonly kernelsByUri = new Map<string, KernelDouble>();
  getKernelCalls = 0;
  readonly kernels = {
    getKernel: (uri: Uri): Thenable<JupyterKernel | undefined> => {
      this.getKernelCalls++;
      return Promise.resolve(this.kernelsByUri.get(uri.toString()));
    },
  };
}
