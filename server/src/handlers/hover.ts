/**
 * `textDocument/hover`: a `# noqa` code's rule, a job script's `#SBATCH --partition` GPUs (sinfo),
 * and the machine help (what a device string or a CUDA_VISIBLE_DEVICES write means on this
 * machine's GPUs), which reads the document's last GPU001 lines and a notebook's running kernel
 * from its OpenDocument (session.ts).
 */
import { MarkupKind, type Hover } from "vscode-languageserver/node";
import { machineHover } from "../engine/machineHelp";
import { manifestNoqaCodeAt } from "../engine/manifests/noqa";
import { ruleByCode } from "../engine/rules/index";
import { partitionHover, PartitionGpuCache } from "../slurm/partitionHover";
import { ruleMarkdown, noqaCodeAt } from "../editorHelpers";
import { docUrl } from "../docsUrl";
import { manifestKindOfDoc, type ServerContext } from "./context";
import { lineWhere, shifted, shiftedRange, withCellModel, withModel } from "./models";

/** Registers the hover handler. */
export function registerHover(ctx: ServerContext): void {
  const { connection, session } = ctx;
  /** sinfo answers for the partition hover of job scripts (one per partition list, at most every 30 s). */
  const partitionGpus = new PartitionGpuCache();

  connection.onHover(async (params): Promise<Hover | null> => {
    await ctx.engineReady;
    const { documents, trees, inventory } = session;
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return null;
    const kind = manifestKindOfDoc(doc);
    const hit = kind
      ? manifestNoqaCodeAt(doc.getText(), kind, params.position)
      : noqaCodeAt(doc.getText(), params.position, trees.treeOf(params.textDocument.uri, doc.version));
    const rule = hit ? ruleByCode(hit.code) : undefined;
    if (hit && rule)
      return {
        contents: { kind: MarkupKind.Markdown, value: ruleMarkdown(rule.meta, docUrl(rule.meta.code)) },
        range: hit.range,
      };
    if (kind === "jobscript") {
      // `#SBATCH --partition=<name>`: the partition's GPUs from sinfo (cached 30 s; calm when sinfo is absent).
      const part = await partitionHover(doc.getText(), params.position, partitionGpus);
      return part ? { contents: { kind: MarkupKind.Markdown, value: part.markdown }, range: part.range } : null;
    }
    // Without GPUs there is no machine hover (machineHelp.ts fileVisibleMap): no model is needed.
    if (!inventory.gpus?.length) return null;
    const help =
      withModel(ctx, params.textDocument.uri, (m) =>
        machineHover(m, params.position, inventory, lineWhere, session.get(params.textDocument.uri)?.noEffect?.lines),
      ) ??
      withCellModel(ctx, params.textDocument.uri, (m, start, where, noEffect, kernel) => {
        const h = machineHover(m, shifted(params.position, start.line), inventory, where, noEffect, true, kernel);
        return h && { markdown: h.markdown, range: shiftedRange(h.range, -start.line) };
      });
    return help ? { contents: { kind: MarkupKind.Markdown, value: help.markdown }, range: help.range } : null;
  });
}
