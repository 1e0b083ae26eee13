import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU069");

const SETUP =
  'import os\nimport torch\nimport torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group("nccl")\n    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())\n    local_rank = int(os.environ["LOCAL_RANK"])\n    return torch.device(f"cuda:{local_rank}")\n';

test("GPU069 (preview) warns on the rank-modulo device, naming the local-rank device of the same function", async () => {
  assert.deepEqual(await lintCode(SETUP, "GPU069"), [], "preview: off in the default set");
  const [d, ...rest] = await lintCode(SETUP, "GPU069", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 7, character: 26 }, end: { line: 7, character: 69 } });
  assert.match(
    d.message,
    /^dist\.get_rank\(\) % torch\.cuda\.device_count\(\) in torch\.cuda\.set_device\(\) is the global rank modulo the GPU count, while this function also uses the local rank as a device: local_rank in f"cuda:\{…\}" \(line 10\)/,
  );
  assert.match(d.message, /torch(run)? --nproc-per-node=4\) the second node's ranks 4 to 7 give cuda:4 to cuda:7/);
  assert.equal(d.related?.[0].range.start.line, 9);
});
