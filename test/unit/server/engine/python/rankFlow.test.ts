/**
 * python/rankFlow.ts: where a value comes from as a rank. Each test builds the model of a small
 * module and asks for the origin of the argument of its last `use(...)` call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { initEngine } from "../../../../../server/src/engine/lint";
import { ModuleTrees } from "../../../../../server/src/engine/python/moduleTrees";
import { buildModel } from "../../../../../server/src/engine/python/model";
import { RankFlow, cudaStringOrdinal, type RankKind } from "../../../../../server/src/engine/python/rankFlow";

/** The origin of the first argument of the last `use(...)` call in `code`: its kind and the text of its source. */
async function originOf(
  code: string,
): Promise<{ kind: RankKind; source: string | null; variable: string | null; plain: boolean }> {
  await initEngine();
  const model = buildModel(ModuleTrees.parse(code, true), code, { eagerInitModules: [], torchBelow24: false });
  const uses = model.nodesOfType("call").filter((c) => c?.childForFieldName("function")?.text === "use");
  const arg = uses[uses.length - 1]?.childForFieldName("arguments")?.namedChildren[0];
  assert.ok(arg, "no use(...) call");
  const o = new RankFlow(model).origin(arg);
  return { kind: o.kind, source: o.source?.text ?? null, variable: o.variable, plain: o.plain };
}

const kind = async (code: string) => (await originOf(code)).kind;

test("rankFlow sources: environment reads by variable, get_rank, get_node_local_rank, Accelerate's indices", async () => {
  assert.deepEqual(await originOf('import os\nuse(os.environ["RANK"])\n'), {
    kind: "global",
    source: 'os.environ["RANK"]',
    variable: "RANK",
    plain: true,
  });
  assert.equal(await kind('import os\nuse(os.environ.get("SLURM_PROCID", "0"))\n'), "global");
  assert.equal(await kind('import os\nuse(os.getenv("OMPI_COMM_WORLD_RANK"))\n'), "global");
  assert.equal(await kind('from os import environ as env\nuse(env["RANK"])\n'), "global");
  assert.equal(await kind('import os\nuse(os.environ["LOCAL_RANK"])\n'), "local");
  assert.equal(await kind('import os\nuse(os.environ["SLURM_LOCALID"])\n'), "local");
  assert.equal(await kind('import os\nuse(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])\n'), "local");
  assert.equal(await kind('import os\nuse(os.environ["GROUP_RANK"])\n'), "node");
  assert.equal(await kind('import os\nuse(os.environ["SLURM_NODEID"])\n'), "node");
  assert.equal(await kind('import os\nuse(os.environ["WORLD_SIZE"])\n'), "unknown");
  assert.deepEqual(await originOf("import torch.distributed as dist\nuse(dist.get_rank())\n"), {
    kind: "global",
    source: "dist.get_rank()",
    variable: null,
    plain: true,
  });
  assert.equal(await kind("import torch\nuse(torch.distributed.get_rank())\n"), "global");
  assert.equal(await kind("from torch.distributed import get_rank\nuse(get_rank())\n"), "global");
  assert.equal(await kind("import torch.distributed as dist\nuse(dist.get_rank(group))\n"), "unknown"); // the rank within a group
  assert.equal(await kind("import torch.distributed as dist\nuse(dist.get_node_local_rank())\n"), "local");
  assert.equal(
    await kind("from accelerate import Accelerator\nacc = Accelerator()\nuse(acc.process_index)\n"),
    "global",
  );
  assert.equal(await kind("from accelerate import PartialState\nuse(PartialState().local_process_index)\n"), "local");
  assert.equal(await kind("acc = make()\nuse(acc.process_index)\n"), "unknown"); // not built by Accelerate here
});

test("rankFlow steps: latest assignment in the scope, int()/str(), tuples, self attributes, obj.x, dicts, argparse, returns", async () => {
  const R = "import os\nimport torch.distributed as dist\n";
  assert.deepEqual(await originOf(`${R}r = int(os.environ["RANK"])\ns = str(r)\nuse(s)\n`), {
    kind: "global",
    source: 'os.environ["RANK"]',
    variable: "RANK",
    plain: true,
  });
  // The latest assignment before the use wins; one after it does not count.
  assert.equal(await kind(`${R}r = int(os.environ["RANK"])\nr = int(os.environ["LOCAL_RANK"])\nuse(r)\n`), "local");
  assert.equal(await kind(`${R}r = int(os.environ["LOCAL_RANK"])\nuse(r)\nr = dist.get_rank()\n`), "local");
  // A function's own assignment, not another function's of the same name.
  assert.equal(
    await kind(`${R}def a():\n    r = dist.get_rank()\ndef b():\n    r = int(os.environ["LOCAL_RANK"])\n    use(r)\n`),
    "local",
  );
  // A module-level rank read in a function.
  assert.equal(await kind(`${R}RANK = dist.get_rank()\ndef f():\n    use(RANK)\n`), "global");
  assert.equal(await kind(`${R}rank, world = dist.get_rank(), dist.get_world_size()\nuse(rank)\n`), "global");
  assert.equal(await kind(`${R}world, rank = dist.get_rank(), dist.get_world_size()\nuse(rank)\n`), "unknown");
  assert.equal(
    await kind(
      `${R}class T:\n    def __init__(self):\n        self.rank = dist.get_rank()\n    def go(self):\n        use(self.rank)\n`,
    ),
    "global",
  );
  assert.equal(
    await kind(
      `${R}class T:\n    def __init__(self, rank):\n        self.rank = rank\n    def go(self):\n        use(self.rank)\n`,
    ),
    "unknown",
  );
  assert.equal(
    await kind(
      `${R}def init(args):\n    args.rank = int(os.environ["RANK"])\n    args.gpu = int(os.environ["LOCAL_RANK"])\n    use(args.gpu)\n`,
    ),
    "local",
  );
  assert.equal(
    await kind(`${R}def init(args):\n    args.rank = int(os.environ["RANK"])\n    use(args.rank)\n`),
    "global",
  );
  assert.equal(await kind(`${R}cfg = {"rank": dist.get_rank(), "local": 0}\nuse(cfg["rank"])\n`), "global");
  assert.equal(await kind(`${R}cfg = {}\ncfg["rank"] = dist.get_rank()\nuse(cfg["rank"])\n`), "global");
  assert.equal(
    await kind(`${R}env = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK")}\nuse(int(env["RANK"]))\n`),
    "global",
  );
  const argparse = `${R}import argparse\np = argparse.ArgumentParser()\np.add_argument("--rank", default=int(os.environ["RANK"]))\np.add_argument("--local-rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))\np.add_argument("--gpu", type=int)\nargs = p.parse_args()\n`;
  assert.deepEqual(await originOf(`${argparse}use(args.rank)\n`), {
    kind: "global",
    source: 'os.environ["RANK"]',
    variable: "RANK",
    plain: false,
  });
  assert.equal(await kind(`${argparse}use(args.local_rank)\n`), "local");
  assert.equal(await kind(`${argparse}use(args.gpu)\n`), "unknown"); // no default: what the command line says
  assert.equal(
    await kind(
      `${R}def get_rank():\n    if not dist.is_initialized():\n        return 0\n    return dist.get_rank()\nuse(get_rank())\n`,
    ),
    "global",
  );
  assert.equal(await kind(`${R}r = dist.get_rank() if dist.is_initialized() else 0\nuse(r)\n`), "global");
  assert.equal(
    await kind(`${R}r = dist.get_rank() if dist.is_initialized() else int(os.environ["LOCAL_RANK"])\nuse(r)\n`),
    "unknown",
  );
});

test("rankFlow stops: parameters, loop targets, `%`, arithmetic, other modules", async () => {
  const R = "import os\nimport torch\nimport torch.distributed as dist\n";
  // An mp.spawn worker's first parameter is its index on the node: never a global rank here.
  assert.equal(await kind(`${R}rank = dist.get_rank()\ndef worker(rank, world):\n    use(rank)\n`), "unknown");
  assert.equal(await kind(`${R}rank = dist.get_rank()\nf = lambda rank: use(rank)\n`), "unknown");
  assert.equal(await kind(`${R}for rank in range(8):\n    use(rank)\n`), "unknown");
  assert.equal(await kind(`${R}rank = dist.get_rank()\nuse(rank % torch.cuda.device_count())\n`), "local");
  assert.equal(await kind(`${R}rank = dist.get_rank()\nuse(rank - 8)\n`), "unknown");
  assert.equal(await kind(`${R}from utils import rank\nuse(rank)\n`), "unknown");
  assert.equal(await kind(`${R}use(get_rank())\n`), "unknown"); // defined elsewhere
});

test('cudaStringOrdinal: the interpolated expression of f"cuda:{x}", "cuda:" + x, "cuda:{}".format(x), "cuda:%d" % x', async () => {
  await initEngine();
  for (const [code, want] of [
    ['f"cuda:{r}"', "r"],
    ['"cuda:" + str(r)', "str(r)"],
    ['"cuda:{}".format(r)', "r"],
    ['"cuda:%d" % r', "r"],
    ['f"cuda:{r:02d}"', null],
    ['f"cpu:{r}"', null],
    ['"cuda:0"', null],
  ] as const) {
    const text = `x = ${code}\n`;
    const model = buildModel(ModuleTrees.parse(text, true), text, { eagerInitModules: [], torchBelow24: false });
    const value = model.valueOf("x", text.length);
    assert.ok(value);
    assert.equal(cudaStringOrdinal(value)?.text ?? null, want, code);
  }
});
