// How much of the tree tree-sitter's incremental parse reuses (issue 20 item 2: why the editor's
// parse has a long tail). The 5,000-line training file of bench/lsp-latency.mjs is edited one
// character at a time, as the editor bench types (`loss` growing to `lossxxx...` in the middle of the
// file), or at a different `loss = ...` line each time (--spread). tree-sitter's debug log of each
// incremental parse is counted: `consume` lines (tokens and subtrees the parser took, reused or
// re-lexed), `reuse_node` (subtrees reused), `cant_reuse_node_is_fragile` (subtrees refused because
// they were built while the parse stack had more than one version, tree-sitter's GLR conflicts, or
// at a state with several actions; tree-sitter's lib/src/parser.c `ts_parser__reuse_node`).
// Prints one line per edit, `edit:consumed/fragile/reused`, then the same chain timed without the log.
// usage: node --import tsx bench/parse-reuse.ts [--edits N] [--spread]
import { Parser, type Tree } from "web-tree-sitter";
import { initPythonParser, pythonLanguage } from "../server/src/engine/python/parser";

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const edits = args.includes("--edits") ? Number(args[args.indexOf("--edits") + 1]) : 260;
  const spread = args.includes("--spread");
  await initPythonParser();
  const parser = new Parser();
  parser.setLanguage(await pythonLanguage());
  const { trainingFile } = (await import("./lsp-latency.mjs")) as { trainingFile(): string };
  for (const logged of [true, false]) {
    let text = trainingFile();
    const lossLines: number[] = [];
    text.split("\n").forEach((l, k) => {
      if (l.startsWith("    loss = ")) lossLines.push(k);
    });
    const mid = lossLines[Math.floor(lossLines.length / 2)];
    let tree = parser.parse(text) as Tree;
    const counts: string[] = [];
    const times: number[] = [];
    for (let i = 0; i < edits; i++) {
      const line = spread ? lossLines[(i * 37) % lossLines.length] : mid;
      const column = "    loss".length + (spread ? 0 : i);
      const offset = text.split("\n").slice(0, line).join("\n").length + 1 + column;
      const next = text.slice(0, offset) + "x" + text.slice(offset);
      tree.edit({
        startIndex: offset,
        oldEndIndex: offset,
        newEndIndex: offset + 1,
        startPosition: { row: line, column },
        oldEndPosition: { row: line, column },
        newEndPosition: { row: line, column: column + 1 },
      });
      let consumed = 0,
        fragile = 0,
        reused = 0;
      if (logged) {
        parser.setLogger((m: string) => {
          if (m.startsWith("consume")) consumed++;
          else if (m.startsWith("cant_reuse_node_is_fragile")) fragile++;
          else if (m.startsWith("reuse_node")) reused++;
        });
      }
      const t0 = performance.now();
      const nextTree = parser.parse(next, tree) as Tree;
      times.push(performance.now() - t0);
      parser.setLogger(null);
      if (logged) counts.push(`${i}:${consumed}/${fragile}/${reused}`);
      tree.delete();
      tree = nextTree;
      text = next;
    }
    tree.delete();
    if (logged)
      console.log(
        `consumed/fragile/reused per edit (${spread ? "a different line each edit" : "one spot"}):\n${counts.join(" ")}`,
      );
    else {
      const sorted = [...times].sort((a, b) => a - b);
      const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2);
      console.log(
        JSON.stringify({
          edits,
          spread,
          parse_p50_ms: +pct(50),
          parse_p95_ms: +pct(95),
          slow_over_5ms: times.filter((t) => t > 5).length,
        }),
      );
    }
  }
}

void main();
