/**
 * Which documents have changes waiting in the language server's message queue.
 *
 * vscode-jsonrpc reads every complete message from the transport at once but dispatches them one
 * per event-loop turn (`setImmediate`), so a lint started after the first of several queued
 * `didChange` notifications lints a version that is already stale: typing 10 characters a second
 * into a file whose lint takes longer than 100 ms linted every version. The server
 * therefore observes messages twice: when the transport reads them ({@link ChangeBacklog.arrived},
 * from a second reader on the same transport) and when the connection dispatches them
 * ({@link ChangeBacklog.dispatched}, from the connection's message strategy). A document with a
 * change or close read but not dispatched yet is not linted now and no result for it is published:
 * the queued change's dispatch schedules the lint of the newer version.
 */
import type { Message } from "vscode-languageserver/node";

/** The LSP notifications that make a lint of a document's current version stale (LSP 3.17 method names). */
const STALE_MAKERS = new Set([
  "textDocument/didChange",
  "textDocument/didClose",
  "notebookDocument/didChange",
  "notebookDocument/didClose",
]);

/**
 * The document a message changes or closes (`params.textDocument.uri` or
 * `params.notebookDocument.uri`), or null for every other message.
 */
export function changedDocument(message: Message): string | null {
  const m = message as {
    method?: unknown;
    params?: { textDocument?: { uri?: unknown }; notebookDocument?: { uri?: unknown } };
  };
  if (typeof m.method !== "string" || !STALE_MAKERS.has(m.method)) return null;
  const uri = m.method.startsWith("notebookDocument/") ? m.params?.notebookDocument?.uri : m.params?.textDocument?.uri;
  return typeof uri === "string" ? uri : null;
}

/** Counts, per document URI, the change and close notifications read from the transport but not yet dispatched. */
export class ChangeBacklog {
  private readonly queued = new Map<string, number>();

  /** A message was read from the transport (it is now in the connection's queue). */
  arrived(message: Message): void {
    const uri = changedDocument(message);
    if (uri !== null) this.queued.set(uri, (this.queued.get(uri) ?? 0) + 1);
  }

  /** The connection dispatches a message (its handler runs now). */
  dispatched(message: Message): void {
    const uri = changedDocument(message);
    if (uri === null) return;
    const n = (this.queued.get(uri) ?? 0) - 1;
    if (n > 0) this.queued.set(uri, n);
    else this.queued.delete(uri);
  }

  /** Whether a change or close of `uri` is waiting in the queue (a lint of its current version would be stale). */
  has(uri: string): boolean {
    return this.queued.has(uri);
  }

  /** How many documents have queued changes (0 when the queue holds none; for tests and leak checks). */
  get size(): number {
    return this.queued.size;
  }
}
