/**
 * The Slurm job follower's bounds (issue 46 item 7): a job writing faster than it is shown gets its
 * backlog skipped with the count said, and only the end of the text is kept in memory.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { followFile, MAX_BACKLOG_BYTES, TextTail } from "../../../../client/src/slurm/follow";

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "gp-follow-"));
after(() => fs.rmSync(TMP, { recursive: true, force: true }));

test("a 40 MiB output already there: 32 MiB skipped and said, only the last 8 MiB read", async () => {
  const file = path.join(TMP, "slurm-1.out");
  fs.writeFileSync(file, Buffer.alloc(40 * 1024 * 1024, "x"));
  let read = 0;
  const skips: number[] = [];
  const f = followFile(file, {
    intervalMs: 60_000,
    onData: (t) => {
      read += t.length;
    },
    onSkip: (n) => skips.push(n),
  });
  await f.stop();
  assert.equal(MAX_BACKLOG_BYTES, 8 * 1024 * 1024);
  assert.deepEqual(skips, [32 * 1024 * 1024]);
  assert.equal(read, 8 * 1024 * 1024);
  assert.equal(f.skipped, 32 * 1024 * 1024);
  assert.equal(f.bytes, 40 * 1024 * 1024);
});

test("a growing output: each backlog over the limit is cut; what is read stays in order", async () => {
  const file = path.join(TMP, "slurm-2.out");
  fs.writeFileSync(file, "a".repeat(100));
  let text = "";
  const skips: number[] = [];
  const f = followFile(file, {
    intervalMs: 60_000,
    maxBacklogBytes: 1000,
    onData: (t) => {
      text += t;
    },
    onSkip: (n) => skips.push(n),
  });
  await f.poll();
  fs.appendFileSync(file, "b".repeat(5000));
  await f.poll();
  fs.appendFileSync(file, "c".repeat(10));
  await f.stop();
  assert.deepEqual(skips, [4000]);
  assert.equal(text, "a".repeat(100) + "b".repeat(1000) + "c".repeat(10));
});

test("TextTail: 64 MiB appended in 1 MiB pieces keeps at most 2 x 4 Mi characters, the end, and counts the rest", () => {
  const tail = new TextTail(4 * 1024 * 1024);
  const piece = "y".repeat(1024 * 1024 - 1) + "\n";
  let max = 0;
  for (let i = 0; i < 64; i++) {
    tail.append(i === 63 ? piece.replace("y", "z") : piece);
    max = Math.max(max, tail.text.length);
  }
  assert.ok(max <= 8 * 1024 * 1024, `${max} characters held`);
  assert.equal(tail.dropped + tail.text.length, 64 * 1024 * 1024);
  assert.ok(tail.text.endsWith("z" + "y".repeat(1024 * 1024 - 2) + "\n"));
});
