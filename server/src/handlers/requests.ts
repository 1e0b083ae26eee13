/**
 * The custom requests (common/src/lsp/protocol.ts): `gpuPilot/checkFile`, one file's findings now
 * for the agent tool gpu-pilot_checkFile (client/src/agents), and `gpuPilot/runFacts`, what a
 * script does, for the checks before a run (client/src/run/checks.ts).
 */
import { pathToFileURL } from "node:url";
import {
  CheckFileRequest,
  type CheckFileResult,
  RunFactsRequest,
  type RunFactsResult,
} from "../../../common/src/lsp/protocol";
import { checkCells, checkFileOnDisk, checkText } from "../agentCheck";
import { runFacts } from "../engine/runFacts";
import { fileTooLarge } from "../engine/limits";
import type { ServerContext } from "./context";

/** Registers the handlers of gpuPilot/checkFile and gpuPilot/runFacts. */
export function registerRequests(ctx: ServerContext): void {
  const { connection, session } = ctx;
  // The agent tool gpu-pilot_checkFile (client/src/agents): one file's findings now, from the open
  // editor's text (unsaved edits included) when the file is open, else from disk.
  connection.onRequest(CheckFileRequest.type, async (params: unknown): Promise<CheckFileResult> => {
    const path = (params as { path?: unknown } | null)?.path;
    if (typeof path !== "string" || path === "")
      return {
        ok: false,
        path: String(path ?? ""),
        error: "params.path must be a non-empty string (an absolute file path)",
      };
    await ctx.engineReady;
    let uri: string;
    try {
      uri = pathToFileURL(path).href;
    } catch (e) {
      return { ok: false, path, error: (e as Error).message };
    }
    const nb = session.notebooks.getNotebookDocument(uri);
    if (nb)
      return {
        ok: true,
        path,
        source: "editor",
        findings: checkCells(ctx.cellsOf(nb).cells, ctx.lintOptions(nb.uri), path),
      };
    const doc = session.documents.get(uri);
    if (doc)
      return {
        ok: true,
        path,
        source: "editor",
        findings: checkText(path, doc.getText(), ctx.lintOptions(uri), doc.languageId),
      };
    return checkFileOnDisk(path, (file) => ctx.lintOptions(pathToFileURL(file).href));
  });

  // The checks before a run (client/src/run/checks.ts): what the script does, from the engine.
  connection.onRequest(RunFactsRequest.type, async (params: unknown): Promise<RunFactsResult> => {
    const p = params as { uri?: unknown; text?: unknown } | null;
    if (typeof p?.uri !== "string" || typeof p.text !== "string")
      return { ok: false, error: "params must be { uri: string, text: string }" };
    await ctx.engineReady;
    const options = ctx.lintOptions(p.uri);
    const tooLarge = fileTooLarge(p.text, options.maxFileSizeKB);
    if (tooLarge) return { ok: false, error: tooLarge.message };
    try {
      return { ok: true, facts: runFacts(p.text, options) };
    } catch (e) {
      connection.console.error(`gpuPilot/runFacts on ${p.uri} failed: ${e instanceof Error ? e.stack : String(e)}`);
      return { ok: false, error: `the engine could not analyse it: ${e instanceof Error ? e.message : String(e)}` };
    }
  });
}
