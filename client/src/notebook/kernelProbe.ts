/**
 * Runs the probe (common/src/kernel/probe.ts) in a notebook's running kernel through the Jupyter
 * extension's API (jupyterApi.ts `executeCode`), with a deadline (issue 42 item 2): a kernel busy
 * with a training cell queues the probe behind it, so after {@link PROBE_DEADLINE_MS} GPU Pilot stops
 * waiting (the execution is cancelled through its token) and the lint stays static, quietly.
 */
import * as vscode from "vscode";
import { KERNEL_PROBE_SOURCE, parseKernelProbe } from "../../../common/src/kernel/probe";
import { factsOfProbe, type RunningKernelFacts } from "../../../common/src/kernel/runningKernel";
import { STDOUT_MIME, type JupyterKernel } from "./jupyterApi";

/** How long the kernel may take to answer the probe (ms). */
export const PROBE_DEADLINE_MS = 2000;
/** The most probe output read (characters): the answer is one line of a few hundred. */
export const PROBE_MAX_CHARS = 64 * 1024;

/** What {@link probeRunningKernel} came to: the facts, or why there are none. */
export type ProbeOutcome =
  | { ok: true; facts: RunningKernelFacts }
  | { ok: false; why: "not-python" | "timeout" | "no-answer" | "error"; detail?: string };

/** A CancellationToken and its cancel (vscode.CancellationTokenSource's shape, from an EventEmitter). */
function cancellation(): { token: vscode.CancellationToken; cancel(): void; dispose(): void } {
  const emitter = new vscode.EventEmitter<void>();
  let cancelled = false;
  return {
    token: {
      get isCancellationRequested() {
        return cancelled;
      },
      onCancellationRequested: emitter.event,
    },
    cancel: () => {
      if (!cancelled) {
        cancelled = true;
        emitter.fire();
      }
    },
    dispose: () => emitter.dispose(),
  };
}

/**
 * Runs the probe in `kernel` and parses its stdout.
 * @param deadlineMs how long to wait for the whole answer (default {@link PROBE_DEADLINE_MS}).
 * @returns the facts; `not-python` for another language's kernel; `timeout` when the kernel did not
 *   answer in time (the execution is cancelled); `no-answer` when its output held no probe line;
 *   `error` when executeCode threw (access refused, the kernel died), with the message. Never rejects.
 */
export async function probeRunningKernel(kernel: JupyterKernel, deadlineMs = PROBE_DEADLINE_MS): Promise<ProbeOutcome> {
  if (kernel.language !== "python") return { ok: false, why: "not-python" };
  const c = cancellation();
  const decoder = new TextDecoder();
  const collect = (async (): Promise<string> => {
    let out = "";
    for await (const output of kernel.executeCode(KERNEL_PROBE_SOURCE, c.token)) {
      for (const item of output.items)
        if (item.mime === STDOUT_MIME || item.mime === "text/plain") out += decoder.decode(item.data);
      if (out.length > PROBE_MAX_CHARS || c.token.isCancellationRequested) break;
    }
    return out;
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), deadlineMs);
  });
  try {
    const r = await Promise.race([collect, deadline]);
    if (r === "timeout") {
      c.cancel();
      collect.catch(() => undefined);
      return { ok: false, why: "timeout" };
    }
    const probe = parseKernelProbe(r);
    return probe ? { ok: true, facts: factsOfProbe(probe) } : { ok: false, why: "no-answer" };
  } catch (e) {
    return { ok: false, why: "error", detail: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
    c.dispose();
  }
}
