import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { enclosingFunction } from "../python/parser";
import { nodeRange } from "../python/events";
import { RankFlow, RANK_VARIABLES, type RankOrigin } from "../python/rankFlow";
import { deviceSlots, type DeviceSlot } from "../python/devices";
import { DEVICE_QUERY_PATHS } from "../frameworks";
import { branchesOf, contains } from "./shared/py";

const TORCHRUN = "https://pytorch.org/docs/stable/elastic/run.html";
const LAUNCH = "https://pytorch.org/docs/stable/distributed.html#launch-utility";

/** The slot forms of the torch.cuda device queries (`get_device_properties(x)`): they name a GPU without working on it. */
const QUERY_FORMS = new Set(DEVICE_QUERY_PATHS.map((p) => `${p}()`));

/** A name that says it holds the local rank (`local_rank`, `localRank`). */
const LOCAL_NAME = /local_?rank/i;

/**
 * Whether `o` is a local rank read as such: the environment (LOCAL_RANK, SLURM_LOCALID,
 * OMPI_COMM_WORLD_LOCAL_RANK), `torch.distributed.get_node_local_rank()`, DeepSpeed's
 * `get_local_rank()`, Accelerate's `.local_process_index` (python/rankFlow.ts); not a position
 * computed with `%`, and, from another project module's function, only an environment read there.
 */
function isLocalRead(o: RankOrigin): boolean {
  if (o.kind !== "local" || o.computed || !o.source) return false;
  if (o.via !== undefined) return !!o.variable && RANK_VARIABLES[o.variable] === "local";
  return true;
}

/**
 * Whether the slot's ordinal is the local rank: a local rank read (through names), or a parameter
 * named as the local rank that the function itself assigns a local rank read before the use (`if
 * local_rank == -1: local_rank = int(os.environ["LOCAL_RANK"])`): the function treats it as one.
 */
function holdsLocalRank(flow: RankFlow, ordinal: SyntaxNode): boolean {
  if (isLocalRead(flow.origin(ordinal))) return true;
  let o: SyntaxNode | null = ordinal;
  if (o.type === "call" && o.childForFieldName("function")?.text === "int")
    o = o.childForFieldName("arguments")?.namedChildren[0] ?? null;
  if (o?.type !== "identifier" || !LOCAL_NAME.test(o.text)) return false;
  const assigned = flow.reassignedParam(o);
  return !!assigned?.length && assigned.every(isLocalRead);
}

/**
 * Whether one pass through the function never runs both `a` and `b`: they lie in different
 * branches of the lowest `if` or `try` holding both, or a block holding the earlier one and not the
 * later one returns or raises after it.
 */
function exclusive(a: SyntaxNode, b: SyntaxNode): boolean {
  const [first, second] = a.startIndex <= b.startIndex ? [a, b] : [b, a];
  let below: SyntaxNode = first;
  for (let p = first.parent; p; below = p, p = p.parent) {
    if (!contains(p, second)) {
      if (p.type === "block" && leavesAfter(p, below)) return true;
      continue;
    }
    if (p.type === "conditional_expression") return true;
    if (p.type !== "if_statement" && p.type !== "try_statement") return false;
    const branches = branchesOf(p);
    const x = branches.find((c) => contains(c, first)),
      y = branches.find((c) => contains(c, second));
    return !!x && !!y && x.id !== y.id;
  }
  return false;
}

/** Whether a statement of `block` after the one holding `inner` is a `return` or a `raise`. */
function leavesAfter(block: SyntaxNode, inner: SyntaxNode): boolean {
  return block.namedChildren.some(
    (st) =>
      !!st && st.startIndex >= inner.endIndex && (st.type === "return_statement" || st.type === "raise_statement"),
  );
}

/** How a slot is shown in a message: its ordinal and form (`local_rank in f"cuda:{…}"`), with its line when `ctx` is given. */
function shown(slot: DeviceSlot, ctx?: RuleContext): string {
  const text = clip(slot.ordinal.text);
  return `${text} in ${slot.form}${ctx ? ` (${ctx.where(slot.ordinal.startPosition.row)})` : ""}`;
}

/** A source text cut to 60 characters for a message. */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** GPU069: `set_device(rank % torch.cuda.device_count())` where the same function uses the local rank as its device too. */
export const rule: PythonRule = {
  meta: {
    code: "GPU069",
    name: "rank-modulo-beside-local-rank",
    severity: "warning",
    fixable: false,
    // Preview: too few public findings to measure its precision (whenNotToCare).
    preview: true,
    // Sound: the finding needs `torch.cuda.device_count` (the modulus) and a local rank read: one of
    // the environment variables, or a call or attribute named for it (python/rankFlow.ts).
    trigger: (t) =>
      t.hasWord("device_count") &&
      (t.hasAny(["LOCAL_RANK", "SLURM_LOCALID"]) ||
        t.hasAnyWord(["get_node_local_rank", "get_local_rank", "local_process_index"])),
    docs: {
      what: 'Reports a CUDA device written as the global rank modulo the GPU count (`torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())`) in a function (or module code) that also uses the local rank as a CUDA device (`torch.device(f"cuda:{local_rank}")` with `local_rank` read from `LOCAL_RANK`): the process then works on two GPUs wherever the two numbers differ.',
      follows:
        'Both devices within one function (or both in module-level code), each followed as GPU039 follows a rank (python/rankFlow.ts): names to their latest assignment, `int()`, `self.x`, the file\'s own functions\' returns, argparse defaults. The global rank is `os.environ["RANK"]`, `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`, `torch.distributed.get_rank()` and the other global ranks GPU039 knows; the modulus is `torch.cuda.device_count()`, also through a name assigned it. The local rank is an environment read of `LOCAL_RANK`, `SLURM_LOCALID` or `OMPI_COMM_WORLD_LOCAL_RANK`, `torch.distributed.get_node_local_rank()`, DeepSpeed\'s `get_local_rank()` or Accelerate\'s `.local_process_index` (also returned by a function of this file, or read from the environment by a function of another project module), or a parameter named as the local rank that the function assigns such a read before the use (`if local_rank == -1: local_rank = int(os.environ["LOCAL_RANK"])`). The devices are the forms GPU039 reads (`set_device`, `torch.device`, `f"cuda:{…}"`, `.to()`, `.cuda()`, `device_ids=`, `device_id=`, ...), not the device queries (`get_device_properties`). Not reported: the two in different branches of an `if`/`try` or of `a if c else b` (a fallback when `LOCAL_RANK` is unset), or where the branch of one returns or raises before the other; a rank modulo anything else (`rank % gpus_per_node`); devices in different functions; a rank that is a function parameter (an `mp.spawn` worker\'s index); values from other modules otherwise.',
      why: `torchrun starts \`--nproc-per-node\` processes on each node, "less or equal to the number of GPUs on the current system", and "each process will be operating on a single GPU from GPU 0 to GPU (nproc_per_node - 1)": the one its LOCAL_RANK names (${TORCHRUN}; ${LAUNCH}). Its agent gives each node's workers the global ranks [offset, offset + local_world_size), the offset being the number of workers on the nodes before it (torch/distributed/elastic/agent/server/api.py, \`_assign_worker_ranks\`). So \`rank % torch.cuda.device_count()\` is the local rank only when every node runs one process per GPU: with two 8-GPU nodes and \`--nproc-per-node=4\`, the second node's ranks 4 to 7 give cuda:4 to cuda:7 while its local ranks are 0 to 3. The process's current device (\`set_device\`) and the GPU its tensors, its model or its process group are placed on are then two different GPUs, and with other counts one process's current device is another's GPU (six processes on 8-GPU nodes: the second node's rank 8 selects cuda:0, the GPU of its local rank 0); torchrun's notes also say "NEVER hard code any assumptions about ... some correlation between RANK and LOCAL_RANK". In xDiT (xdit-project/xDiT#731) the process-group setup called \`set_device(torch.distributed.get_rank() % device_count())\` while the world group placed its tensors on \`local_rank\` (from \`LOCAL_RANK\`), and NCCL's lazy initialisation hung; the fix set the device from \`local_rank\`. On one node, or with one process per GPU on every node, the two agree, so this is a warning.`,
      example:
        'import os\nimport torch\nimport torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group("nccl")\n    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # GPU069\n    local_rank = int(os.environ["LOCAL_RANK"])\n    return torch.device(f"cuda:{local_rank}")\n',
      fix: 'import os\nimport torch\nimport torch.distributed as dist\n\n\ndef setup():\n    local_rank = int(os.environ["LOCAL_RANK"])\n    dist.init_process_group("nccl", device_id=torch.device(f"cuda:{local_rank}"))\n    torch.cuda.set_device(local_rank)\n    return torch.device(f"cuda:{local_rank}")\n',
      whenNotToCare:
        "A program that only ever runs on one node, or with as many processes as GPUs on every node: the two numbers are then the same GPU. `rank % torch.cuda.device_count()` alone is not reported (the PyTorch DDP tutorial uses it for its two-node example, and GPU039 leaves it alone): only beside a local rank used as a device, where the program has the right number at hand. The rule is preview: measured on public code (2026-12-07), the pattern is rare. In 782 public code bases (local mirrors of GitHub repositories, BIGBALLON/distribuuuu and its fork isZXY/distribuuuu among them), 84 Python files hold both a rank modulo a GPU count and a local-rank read; the rule reports 2 of them, both true: the same tutorial file, `tutorial/mnmc_ddp_launch.py`, which calls `torch.cuda.set_device(rank % torch.cuda.device_count())` and places its model and DDP on `local_rank`, and whose own usage notes launch it with `--nnodes=2 --nproc_per_node=4`. The other 82 keep the two apart (the Slurm branch of an `init_distributed_mode` beside its LOCAL_RANK branch), use only one of them, take the modulo of the local rank, or take the local rank from another module (xDiT's `envs.LOCAL_RANK` and vLLM-Omni's copy of that setup), which is not followed. Twenty findings are wanted before the rule joins the default set.",
      references: [
        `PyTorch, torchrun (Elastic Launch): "torchrun will launch the given number of processes per node (--nproc-per-node). If used for GPU training, this number needs to be less or equal to the number of GPUs on the current system (nproc_per_node), and each process will be operating on a single GPU from GPU 0 to GPU (nproc_per_node - 1)"; Environment Variables: "LOCAL_RANK - The local rank", "RANK - The global rank"; Important Notices 6: "NEVER hard code any assumptions about the stable-ness of ranks or some correlation between RANK and LOCAL_RANK" (${TORCHRUN})`,
        'PyTorch 1.13.1 (Debian python3-torch 1.13.1+dfsg-4), torch/distributed/launch.py:20-25 (the same --nproc_per_node text); torch/distributed/elastic/agent/server/api.py:600-604, `_assign_worker_ranks`: "the global rank of the workers for the current agent is the offset ... computed as a sum of local_world_size of all agents that have rank less than the group_rank. The workers would have the ranks: [offset, offset+local_world_size)", and :628-631 `Worker(local_rank=ind, global_rank=worker_global_ranks[ind], ...)`',
        "xDiT, xfuser/core/distributed/parallel_state.py:258 `set_device(torch.distributed.get_rank() % device_count())` and :266 `local_rank = envs.LOCAL_RANK` in `init_distributed_environment`, xfuser/core/distributed/group_coordinator.py:144 `self.device = envs.get_device(local_rank)` (xdit-project/xDiT at 6a0b1abe15); fixed by xdit-project/xDiT#731 (1a5d3dcd6b: `set_device(local_rank)` and `init_process_group(device_id=...)`), whose description gives the two-node, `--nproc_per_node=4` example (https://github.com/xdit-project/xDiT/pull/731)",
        'MMEngine, mmengine/dist/utils.py:107 `torch.cuda.set_device(rank % num_gpus)` in `_init_dist_pytorch` while mmengine/runner/runner.py:872 wrapped the model with `device_ids=[int(os.environ[\'LOCAL_RANK\'])]` (open-mmlab/mmengine at ff27b723db); fixed by open-mmlab/mmengine#973 (580c9d46): "These 2 values, `local_rank` and `rank % device_counts`, are the same when each node has the same number of devices, but are different otherwise" (two modules: not reported by this rule); THUDM/slime#763: "doesn\'t rely on `dist.get_rank() % torch.cuda.device_count()`"',
        "PyTorch tutorial 'Getting Started with Distributed Data Parallel': `device_id = rank % torch.cuda.device_count()` (https://pytorch.org/tutorials/intermediate/ddp_tutorial.html), not reported on its own",
      ],
    },
  },
  check(ctx) {
    const flow = new RankFlow(ctx.model, ctx.project);
    const modulo: Array<{ slot: DeviceSlot; expr: SyntaxNode }> = [];
    const local: DeviceSlot[] = [];
    const seen = new Set<number>();
    for (const slot of deviceSlots(ctx.model)) {
      if (seen.has(slot.ordinal.id) || QUERY_FORMS.has(slot.form)) continue;
      seen.add(slot.ordinal.id);
      const origin = flow.origin(slot.ordinal);
      if (origin.modulo) modulo.push({ slot, expr: origin.modulo });
      else if (holdsLocalRank(flow, slot.ordinal)) local.push(slot);
    }
    for (const { slot, expr } of modulo) {
      const fn = enclosingFunction(slot.ordinal);
      const other = local.find(
        (l) => enclosingFunction(l.ordinal)?.id === fn?.id && !exclusive(slot.ordinal, l.ordinal),
      );
      if (!other) continue;
      const via = expr.id === slot.ordinal.id ? "" : ` (${clip(expr.text)}, ${ctx.where(expr.startPosition.row)})`;
      ctx.report({
        range: nodeRange(slot.ordinal),
        message: `${shown(slot)}${via} is the global rank modulo the GPU count, while ${fn ? "this function" : "this module"} also uses the local rank as a device: ${shown(other, ctx)}; the two are the same GPU only when every node runs one process per GPU: with fewer (two 8-GPU nodes, torchrun --nproc-per-node=4) the second node's ranks 4 to 7 give cuda:4 to cuda:7 while its local ranks are 0 to 3, and each process works on two GPUs; use the local rank for both`,
        related: [
          {
            range: nodeRange(other.ordinal),
            message: `the local rank used as a device here: ${clip(other.ordinal.text)}`,
          },
        ],
      });
    }
  },
};
