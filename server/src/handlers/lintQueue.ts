/**
 * Lint scheduling: one document per event-loop turn, only at its newest version. A document with
 * a change still queued (see scheduling.ts) is skipped: that change's dispatch schedules it again.
 * A result is published two turns later, after the transport has been read again, and only if no
 * newer change arrived meanwhile; so diagnostics of an old version are never published, and a
 * burst of edits costs one lint per lint-length of typing instead of one per keystroke.
 * With `$/setTrace` verbose or messages, each lint, skip and drop is traced (`$/logTrace`).
 */
import { IdleHeapTrim, type GcFunction } from "../heapTrim";
import { manifestKindOfDoc, type ServerContext } from "./context";
import { lintNotebookDocument, lintTextDocument, type LintOutcome } from "./diagnostics";

/** The documents waiting for a lint, in the order they were scheduled. */
export class LintQueue {
  private readonly pending = new Set<string>();
  private scheduled = false;
  /** Freed heap pages back to the system after a burst of lints (heapTrim.ts; needs `--expose-gc`, nodeFlags.ts). */
  private readonly heapTrim: IdleHeapTrim;

  constructor(private readonly ctx: ServerContext) {
    this.heapTrim = new IdleHeapTrim((globalThis as { gc?: GcFunction }).gc, (r) =>
      ctx.connection.tracer.log(`idle: heap trimmed, RSS ${r.rssBeforeMiB} -> ${r.rssAfterMiB} MiB in ${r.ms} ms`),
    );
  }

  /** Lints `uri` (a text document, a notebook or one of its cells) at a coming turn. */
  schedule(uri: string): void {
    this.pending.add(uri);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.ctx.settle(this.lintNext(), "the lint queue"));
  }

  /** Lints every open text document (cells too: their notebook) again. */
  relintAll(): void {
    for (const d of this.ctx.session.documents.all()) this.schedule(d.uri);
  }

  /** A closed document is not linted. */
  forget(uri: string): void {
    this.pending.delete(uri);
  }

  /**
   * After the workspace file at `path` changed (an edit, a save on disk, a close that reverts to the
   * disk's text): lints again the open documents whose last lint read it (not `except`, which is
   * linted anyway). A Python module is forgotten by the project index first, and counts for the
   * documents that read it through the index (`projectDeps`) only if the index had kept something
   * of it; any file counts for the shell scripts and notebooks whose launch rules read it
   * (`launchDeps`: the script a `python train.py` line starts, ...): nothing of those is kept
   * between lints, so every change counts.
   */
  fileChanged(path: string, except?: string): void {
    const indexed = path.endsWith(".py") && this.ctx.projectIndex.invalidate(path);
    for (const d of this.ctx.session.all())
      if (d.uri !== except && ((indexed && d.projectDeps?.has(path)) || d.launchDeps?.has(path))) this.schedule(d.uri);
  }

  private async lintNext(): Promise<void> {
    const { ctx, pending } = this;
    await ctx.engineReady;
    const uri = pending.values().next().value;
    if (uri !== undefined) {
      pending.delete(uri);
      try {
        const outcome = this.lintNow(uri);
        // Two turns: the first lets the transport be read (libuv's poll phase), the second lets the
        // reader deliver what it read (vscode-jsonrpc's reader hands each message over from a
        // setImmediate of its own, which runs after one queued here before that read).
        if (outcome)
          setImmediate(() =>
            setImmediate(() => {
              try {
                this.publishIfCurrent(outcome);
              } finally {
                outcome.dispose?.();
              }
            }),
          );
      } catch (e) {
        ctx.connection.console.error(`linting ${uri} failed: ${e instanceof Error ? e.stack : String(e)}`);
      }
    }
    if (pending.size) setImmediate(() => ctx.settle(this.lintNext(), "the lint queue"));
    else {
      this.scheduled = false;
      this.heapTrim.afterWork();
    }
  }

  /** Lints the text document or notebook `uri` belongs to, or null when it is not linted now (stale, closed, not ours). */
  private lintNow(uri: string): LintOutcome | null {
    const { ctx, pending } = this;
    const { connection, session } = ctx;
    const nb = session.notebooks.findNotebookDocumentForCell(uri) ?? session.notebooks.getNotebookDocument(uri);
    const target = nb ? nb.uri : uri;
    if (nb) for (const cell of nb.cells) pending.delete(cell.document);
    pending.delete(target);
    if (ctx.backlog.has(target)) {
      connection.tracer.log(`lint ${target}: skipped, a newer change is queued`);
      return null;
    }
    const t0 = performance.now();
    let outcome: LintOutcome | null = null;
    if (nb) outcome = lintNotebookDocument(ctx, nb);
    else {
      const doc = session.documents.get(uri);
      if (doc && (doc.languageId === "python" || manifestKindOfDoc(doc))) outcome = lintTextDocument(ctx, doc);
    }
    if (outcome)
      connection.tracer.log(`lint ${target} version ${outcome.version}: ${(performance.now() - t0).toFixed(1)} ms`);
    return outcome;
  }

  private publishIfCurrent(outcome: LintOutcome): void {
    if (outcome.current()) outcome.commit();
    else
      this.ctx.connection.tracer.log(
        `lint ${outcome.uri} version ${outcome.version}: not published, the document changed meanwhile`,
      );
  }
}
