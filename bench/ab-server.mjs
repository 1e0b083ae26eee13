// Two builds of the language server on the same edits, interleaved (issue 20: does a scheduling
// change cost per-edit latency?): measure() of bench/lsp-latency.mjs for each build per round,
// the order alternating, and the ratio of p50s and p95s per round. Prints JSON lines.
// usage: node bench/ab-server.mjs OLD_SERVER_JS NEW_SERVER_JS [rounds] [edits] [scattered|flat]
//   scattered: each edit in another function of the file (lsp-latency.mjs measure's `scattered`)
//   flat: the flat 5,000-line script (measure's `flat`)
import { loadavg } from "node:os";
import { measure } from "./lsp-latency.mjs";

const [oldServer, newServer, rounds = "3", edits = "60", mode = ""] = process.argv.slice(2);
for (let i = 0; i < Number(rounds); i++) {
  const row = { round: i + 1, load: loadavg().map((x) => +x.toFixed(2)) };
  const order =
    i % 2
      ? [
          ["new", newServer],
          ["old", oldServer],
        ]
      : [
          ["old", oldServer],
          ["new", newServer],
        ];
  for (const [name, serverPath] of order)
    row[name] = await measure({
      edits: Number(edits),
      serverPath,
      scattered: mode === "scattered",
      flat: mode === "flat",
    });
  row.ratio_p50_new_to_old = +(row.new.p50_ms / row.old.p50_ms).toFixed(3);
  row.ratio_p95_new_to_old = +(row.new.p95_ms / row.old.p95_ms).toFixed(3);
  console.log(JSON.stringify(row));
}
