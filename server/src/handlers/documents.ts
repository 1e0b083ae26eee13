/**
 * The documents' life: an open or a change schedules a lint; a close drops the document's whole
 * state (Session.close), publishes no diagnostics for it any more and lints again the documents
 * that read it (as a project module, or as a script a launch line starts: lintQueue.ts `fileChanged`);
 * so does a change.
 */
import { pathOf, type ServerContext } from "./context";
import type { LintQueue } from "./lintQueue";

/** Registers the text document and notebook open/change/close handlers. */
export function registerDocumentSync(ctx: ServerContext, queue: LintQueue): void {
  const { connection, session } = ctx;
  const { documents, notebooks } = session;
  documents.onDidOpen((e) => queue.schedule(e.document.uri));
  documents.onDidChangeContent((e) => {
    queue.schedule(e.document.uri);
    const path = pathOf(e.document.uri);
    if (path) queue.fileChanged(path, e.document.uri);
  });
  // A text document, or a notebook cell (one removed from its notebook, or each of a closing notebook's).
  documents.onDidClose((e) => {
    const uri = e.document.uri;
    session.close(uri);
    const path = pathOf(uri);
    if (path) queue.fileChanged(path);
    queue.forget(uri);
    if (!notebooks.findNotebookDocumentForCell(uri))
      ctx.settle(connection.sendDiagnostics({ uri, diagnostics: [] }), "textDocument/publishDiagnostics");
  });
  notebooks.onDidOpen((nb) => queue.schedule(nb.uri));
  notebooks.onDidChange((e) => queue.schedule(e.notebookDocument.uri));
  notebooks.onDidClose((nb) => {
    session.close(nb.uri);
    for (const c of nb.cells)
      ctx.settle(connection.sendDiagnostics({ uri: c.document, diagnostics: [] }), "textDocument/publishDiagnostics");
  });
}
