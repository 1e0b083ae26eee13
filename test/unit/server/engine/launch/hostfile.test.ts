/**
 * DeepSpeed's `--include`/`--exclude` grammar, `NODE_SPEC[@NODE_SPEC ...]` with
 * `NODE_SPEC = NAME[:SLOT[,SLOT ...]]`, is read once (launch/hostfile.ts `parseHostFilter`): the
 * hostfile check and the local GPU ids of `--include localhost:0,1` (GPU040) both go through it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { deepspeedLocalIds, parseHostFilter } from "../../../../../server/src/engine/launch/hostfile";

test("parseHostFilter reads NAME[:SLOT,...] specs joined by @; anything else is null", () => {
  assert.deepEqual(parseHostFilter("worker-0:0,2@worker-1"), [
    { host: "worker-0", slots: [0, 2] },
    { host: "worker-1", slots: [] },
  ]);
  for (const v of ["", "localhost:$GPUS", "localhost:0,,1", "localhost:", "a:0 b:1", "localhost:x"])
    assert.equal(parseHostFilter(v), null, v);
});

test("deepspeedLocalIds: the slots of a value that names only localhost with slots", () => {
  assert.deepEqual(deepspeedLocalIds("localhost:0,1"), [0, 1]);
  assert.deepEqual(deepspeedLocalIds(" localhost:3 "), [3]);
  for (const v of ["localhost", "localhost:0@worker-1:0", "worker-1:0", "localhost:$IDS", "localhost:0,"])
    assert.equal(deepspeedLocalIds(v), null, v);
});
