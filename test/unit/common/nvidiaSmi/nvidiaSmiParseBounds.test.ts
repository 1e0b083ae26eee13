/**
 * The GPU parsers against hostile output (issue 46 item 9): an index too large for a number (it
 * became Infinity or lost digits) and the same GPU twice are problems, not GPUs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseListGpus, parseQueryGpu, QUERY_GPU_FIELDS } from "../../../../common/src/nvidiaSmi/parse";

/** One --query-gpu line with `index` and `uuid`, the other fields plausible. */
function row(index: string, uuid: string): string {
  const f = [
    "0",
    uuid,
    "NVIDIA H200",
    "00000000:19:00.0",
    "580.65.06",
    "143771",
    "0",
    "143156",
    "0",
    "0",
    "35",
    "75.1",
    "700.00",
    "[N/A]",
    "Default",
    "Disabled",
    "Enabled",
    "345",
    "1980",
    "P0",
  ];
  f[0] = index;
  assert.equal(f.length, QUERY_GPU_FIELDS.length);
  return f.join(", ");
}
const U0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const U1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";

test("--query-gpu: a 400-digit index and 2^53 + 1 are problems; a repeated index or UUID is a problem, the first kept", () => {
  const huge = "9".repeat(400);
  const r = parseQueryGpu(
    [row("0", U0), row(huge, U1), row("9007199254740993", U1), row("0", U1), row("1", U0), row("1", U1)].join("\n"),
  );
  assert.deepEqual(
    r.rows.map((g) => [g.index, g.uuid]),
    [
      [0, U0],
      [1, U1],
    ],
  );
  assert.deepEqual(
    r.problems.map((p) => [p.line, p.reason]),
    [
      [2, `index is "${huge}", expected a whole number below 2^31`],
      [3, `index is "9007199254740993", expected a whole number below 2^31`],
      [4, "GPU index 0 again (line 1): ignored"],
      [5, `GPU ${U0} again (line 1): ignored`],
    ],
  );
  assert.ok(r.rows.every((g) => Number.isSafeInteger(g.index)));
});

test("-L: a huge index and a repeated GPU are problems", () => {
  const r = parseListGpus(
    [
      `GPU 0: NVIDIA H200 (UUID: ${U0})`,
      `GPU ${"9".repeat(400)}: NVIDIA H200 (UUID: ${U1})`,
      `GPU 0: NVIDIA H200 (UUID: ${U1})`,
      `GPU 1: NVIDIA H200 (UUID: ${U1})`,
    ].join("\n"),
  );
  assert.deepEqual(
    r.gpus.map((g) => [g.index, g.uuid]),
    [
      [0, U0],
      [1, U1],
    ],
  );
  assert.deepEqual(
    r.problems.map((p) => p.line),
    [2, 3],
  );
});
