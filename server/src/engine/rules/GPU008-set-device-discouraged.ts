import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import type { Fix, RelatedInfo } from "../types";
import {
  callArgs,
  calleePath,
  contains,
  enclosingFunction,
  envReadsOf,
  flowsFrom,
  namesFor,
  statementOf,
  wrapRestOfBlock,
} from "./shared/py";
import { digitOrQuoteIn } from "../textProbe";
import { stringValue } from "../python/parser";
import { cudaDeviceOrdinal } from "../frameworks";
import { isMainGuard } from "../python/walker";

/** Thread pools whose submit/map methods run a function in a worker thread. */
const THREAD_POOLS = new Set([
  "concurrent.futures.ThreadPoolExecutor",
  "concurrent.futures.thread.ThreadPoolExecutor",
  "multiprocessing.pool.ThreadPool",
  "multiprocessing.dummy.Pool",
]);
const POOL_METHODS = new Set([
  "submit",
  "map",
  "imap",
  "imap_unordered",
  "starmap",
  "starmap_async",
  "map_async",
  "apply",
  "apply_async",
]);
/** Calls that mark a multi-process (distributed) program, where one set_device per process is the documented pattern. */
const DISTRIBUTED_CALLS = new Set([
  "torch.distributed.init_process_group",
  "torch.multiprocessing.spawn",
  "torch.multiprocessing.start_processes",
]);

/**
 * transformers' training arguments, and TRL's trainer configurations that subclass them (at
 * huggingface/trl@f2cd577 trl/trainer/base_config.py:21 `class _BaseConfig(TrainingArguments)`,
 * the base of sft_config.py, dpo_config.py, grpo_config.py, kto_config.py, reward_config.py and
 * rloo_config.py). Each sets up its device in `_setup_devices`, which `__post_init__` runs
 * (transformers 4.57.6 training_args.py:1811, 5.18.0 :1629): without a launcher that is cuda:0,
 * made current with `torch.cuda.set_device(device)` (4.57.6 :2340-2346, 5.18.0 :1913-1919).
 */
const TRAINING_ARGUMENTS = new Set([
  "transformers.TrainingArguments",
  "transformers.training_args.TrainingArguments",
  "transformers.Seq2SeqTrainingArguments",
  "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
  ...["SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "RewardConfig", "RLOOConfig"].map((c) => `trl.${c}`),
]);
/** The words of {@link TRAINING_ARGUMENTS}' class names, for the trigger. */
const TRAINING_ARGUMENT_WORDS = [...new Set([...TRAINING_ARGUMENTS].map((p) => p.split(".").pop()!))];

/** GPU008: `torch.cuda.set_device` outside the distributed pattern, and in thread targets. */
export const rule: PythonRule = {
  meta: {
    code: "GPU008",
    name: "set-device-discouraged",
    severity: "information",
    fixable: true,
    fixSafety: "unsafe",
    // Default: set_device in a thread (threading, concurrent.futures, multiprocessing's thread pools,
    // asyncio.to_thread, any run_in_executor); preview: any set_device. A default finding also needs a
    // constant device (an integer, a string or a device(...) of them, `isConstantDevice`): a digit or
    // a quote after a set_device in its logical line.
    trigger: (t, preview) =>
      t.has("set_device") &&
      (preview ||
        (t.hasAnyWord([
          "threading",
          "concurrent",
          "multiprocessing",
          "asyncio",
          "run_in_executor",
          ...TRAINING_ARGUMENT_WORDS,
        ]) &&
          t.afterWord("set_device", digitOrQuoteIn))),
    docs: {
      what: 'Default set: `torch.cuda.set_device(<constant>)` (`1`, `"cuda:1"`, `torch.device("cuda", 1)`) inside a thread target or a thread-pool function (`threading.Thread(target=...)`, `ThreadPoolExecutor.submit/map`, a `Thread` subclass\'s `run`): warning. A thread\'s `set_device(<name>)` that carries the device handed in by its creator (`set_device(parent_device)`, `set_device(self.device)`) is the remedy and is not reported. Also in the default set: `torch.cuda.set_device(<constant of 1 or more>)` followed, in the same function or at module level, by the construction of transformers\' `TrainingArguments`/`Seq2SeqTrainingArguments` (or a TRL trainer configuration built on them: `SFTConfig`, `DPOConfig`, `GRPOConfig`, `KTOConfig`, `RewardConfig`, `RLOOConfig`), which sets the current device back to cuda:0: warning. Preview set: any other `torch.cuda.set_device(n)` outside the distributed pattern (information).',
      follows:
        "The bodies of the functions this file starts in another thread (`threading.Thread` and `Timer` targets, `asyncio.to_thread`, `run_in_executor`, `submit`/`map` of a thread pool the file creates, also through `functools.partial`, and the `run` method of a `threading.Thread` subclass) and the `set_device` calls written in them; for the training arguments, a constant `set_device` outside the distributed pattern and the training-arguments construction after it in the same function (or both at module level) that runs whenever it ran (in a block that holds the `set_device`, under `with` or the `__main__` guard; not in another branch, a loop or `try` of its own, or a conditional expression), built without `use_cpu`/`no_cuda` (other than `False`), `deepspeed` or `**` arguments, in a file that reads no launcher rank (`LOCAL_RANK`, `RANK`, `WORLD_SIZE`, a `local_rank` attribute: there the arguments take that rank's device); the preview check reads every `set_device` of the file. Not followed: arguments built by `HfArgumentParser` or by a project subclass, a `set_device` and construction in different functions, functions that a thread target calls, targets and pools from other modules, and process pools.",
      why: "PyTorch's own documentation of `torch.cuda.set_device` says its use is discouraged in favour of `torch.cuda.device` and, in most cases, of CUDA_VISIBLE_DEVICES. It changes a hidden, per-thread current device: measured on 2 x H200 (ground-truth.md, 'Other facts measured'), after `torch.cuda.set_device(1)` in the main thread, a new thread's `current_device()` is 0. So a worker thread that calls it moves only itself, and code that relies on it in another thread silently runs on GPU 0. Explicit devices (`torch.device(\"cuda:1\")`, `.to(device)`) or a scoped `with torch.cuda.device(1):` say what they mean. transformers' training arguments set the current device themselves: their `__post_init__` runs `_setup_devices` (transformers 4.57.6 training_args.py:1811 `self.device`; 5.18.0 :1629), which, when no launcher started the process (accelerate's `DistributedType.NO`), takes `torch.device(\"cuda:0\")`, sets `self._n_gpu = torch.cuda.device_count()` and calls `torch.cuda.set_device(device)` (4.57.6 :2340-2346; 5.18.0 :1913-1919; older releases' `_setup_devices`, run at the Trainer's first `args.device`, had the same cuda:0 and `set_device`, as copies of their training_args.py in public repositories show), and the Trainer wraps the model in `nn.DataParallel` when `n_gpu > 1`. So `set_device(1)` before them is undone: training runs on GPU 0 (and every other visible GPU), not GPU 1 (huggingface/transformers#23410, where the maintainer answered that CUDA_VISIBLE_DEVICES is the way to choose).",
      example:
        "import threading\nimport torch\n\n\ndef worker():\n    torch.cuda.set_device(1)  # GPU008 (warning): this thread only\n    print(torch.cuda.current_device())\n\n\nt = threading.Thread(target=worker)\nt.start()\n",
      fix: "import threading\nimport torch\n\n\ndef worker():\n    with torch.cuda.device(1):\n        print(torch.cuda.current_device())\n\n\nt = threading.Thread(target=worker)\nt.start()\n",
      whenNotToCare:
        "In a single-threaded script that calls it once at start-up (information only). In distributed training, `torch.cuda.set_device(local_rank)` is the documented pattern and is not reported. For the training arguments: when the program is meant to run on GPU 0 and every other GPU anyway (then the `set_device` is only dead code).",
      references: [
        "PyTorch documentation, torch.cuda.set_device: 'Usage of this function is discouraged in favor of device. In most cases it's better to use CUDA_VISIBLE_DEVICES environmental variable.'",
        "ground-truth.md: 'Other facts measured' row `torch.cuda.set_device(1)` in the main thread, then `current_device()` in a new thread → device 0 (per thread)",
        'transformers 5.18.0 (wheel) src/transformers/training_args.py:1629 `self.device` in `__post_init__`, :1913-1919 `device = torch.device("cuda:0" if torch.cuda.is_available() else ...)`, `self._n_gpu = torch.cuda.device_count()`, `torch.cuda.set_device(device)`; 4.57.6 :1811 and :2340-2346, the same',
        "huggingface/trl@f2cd577 trl/trainer/base_config.py:21 `class _BaseConfig(TrainingArguments)` (the base of SFTConfig, DPOConfig, GRPOConfig, KTOConfig, RewardConfig, RLOOConfig)",
        "huggingface/transformers#23410 (set_device(1), then TrainingArguments: training_args.device is cuda:0)",
      ],
    },
  },
  check(ctx) {
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    const distributed = calls.some((c) => DISTRIBUTED_CALLS.has(calleePath(ctx.model, c) ?? ""));
    const threads = threadBodies(ctx, calls);
    const localRank = new Set<number>(envReadsOf(ctx.model, "LOCAL_RANK").map((r) => r.node.id));
    for (const a of ctx.model.nodesOfType("attribute"))
      if (a && a.childForFieldName("attribute")?.text === "local_rank") localRank.add(a.id);
    // A file that reads a launcher's rank is run by one: the training arguments take that rank's device.
    const launched = localRank.size > 0 || ["RANK", "WORLD_SIZE"].some((v) => envReadsOf(ctx.model, v).length > 0);
    for (const call of calls) {
      if (calleePath(ctx.model, call) !== "torch.cuda.set_device") continue;
      const arg = callArgs(call).positional[0] ?? callArgs(call).keywords.get("device");
      const thread = threads.find((t) => contains(t.body, call));
      const text = call.text.split("\n")[0];
      if (thread && isConstantDevice(arg)) {
        ctx.report({
          range: nodeRange(call),
          severity: "warning",
          message: `\`${text}\` runs in ${thread.name} (${thread.how} ${ctx.where(thread.start.startPosition.row)}): set_device changes the current device of that thread only; the main thread and other threads stay on device 0. Pass the device explicitly or use \`with torch.cuda.device(...)\``,
          related: [
            {
              range: nodeRange(thread.start),
              message: `${thread.name} runs in another thread here`,
            } satisfies RelatedInfo,
          ],
          fix: withDeviceFix(ctx, call, arg),
        });
        continue;
      }
      if (thread || distributed || isLocalRank(ctx, arg, localRank)) continue;
      const reset = launched ? null : resetByTrainingArguments(ctx, call, arg, calls);
      if (reset) {
        const { node, ordinal } = reset;
        ctx.report({
          range: nodeRange(call),
          severity: "warning",
          message: `\`${text}\` is undone by \`${node.text}(...)\` (${ctx.where(node.startPosition.row)}): without a launcher, transformers sets up its device as cuda:0 and makes it current with torch.cuda.set_device (training_args.py \`_setup_devices\`, run when the arguments are built), and the Trainer then trains on cuda:0 with DataParallel over every visible GPU (n_gpu = device_count()); choose the GPU before the process starts, \`CUDA_VISIBLE_DEVICES=${ordinal}\` on its command line`,
          related: [{ range: nodeRange(node), message: "the training arguments select cuda:0 here" }],
        });
        continue;
      }
      ctx.report({
        range: nodeRange(call),
        // Ecosystem check (test/ecosystem): 40 of 40 single-thread calls on real code were hygiene
        // that no maintainer would change; the documented discouragement stays available in preview.
        preview: true,
        message: `\`${text}\` sets a hidden, per-thread current device, which PyTorch discourages: prefer explicit devices (torch.device("cuda:N"), .to(device)), \`with torch.cuda.device(N):\`, or choosing the GPU with CUDA_VISIBLE_DEVICES at launch`,
        fix: withDeviceFix(ctx, call, arg),
      });
    }
  },
};

/**
 * The ordinal a `set_device` argument names when it is a constant: `1`, `"cuda:1"`,
 * `torch.device("cuda", 1)`, `torch.device("cuda:1")`; null otherwise (also for `"cuda"`).
 */
function constantOrdinal(ctx: RuleContext, arg: SyntaxNode | undefined): number | null {
  if (!arg) return null;
  if (arg.type === "integer") return /^\d+$/.test(arg.text) ? Number(arg.text) : null;
  if (arg.type === "string") {
    const v = stringValue(arg);
    return v === null ? null : cudaDeviceOrdinal(v);
  }
  if (arg.type !== "call" || calleePath(ctx.model, arg) !== "torch.device") return null;
  const [kind, index, ...rest] = callArgs(arg).positional;
  if (rest.length || !kind || kind.type !== "string") return null;
  if (!index) return constantOrdinal(ctx, kind);
  return stringValue(kind) === "cuda" && index.type === "integer" ? constantOrdinal(ctx, index) : null;
}

/**
 * The training-arguments construction ({@link TRAINING_ARGUMENTS}) that certainly runs after
 * `setDevice` (a `torch.cuda.set_device` naming a constant ordinal of 1 or more) and undoes it: in
 * the same function (or both at module level), after it, in a block that holds the `set_device` or
 * only adds `with` around it (not another branch, a loop body or `try` of its own, nor a
 * conditional expression), built without `use_cpu`/`no_cuda` (other than a literal False),
 * `deepspeed` or `**` (any could hold them): its callee, and the ordinal `set_device` names. Null otherwise.
 */
function resetByTrainingArguments(
  ctx: RuleContext,
  setDevice: SyntaxNode,
  arg: SyntaxNode | undefined,
  calls: readonly SyntaxNode[],
): { node: SyntaxNode; ordinal: number } | null {
  const ordinal = constantOrdinal(ctx, arg);
  if (ordinal === null || ordinal < 1) return null;
  const scope = enclosingFunction(setDevice)?.id ?? -1;
  const setStmt = statementOf(setDevice);
  for (const call of calls) {
    if (call.startIndex <= setStmt.endIndex || !TRAINING_ARGUMENTS.has(calleePath(ctx.model, call) ?? "")) continue;
    if ((enclosingFunction(call)?.id ?? -1) !== scope || !runsAfter(setDevice, call)) continue;
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    if (args.some((a) => a?.type === "dictionary_splat" || a?.type === "list_splat")) continue;
    const kw = callArgs(call).keywords;
    if (kw.has("deepspeed")) continue;
    if (["use_cpu", "no_cuda"].some((k) => kw.has(k) && kw.get(k)!.type !== "false")) continue;
    return { node: call.childForFieldName("function") ?? call, ordinal };
  }
  return null;
}

/**
 * Whether `later` (after `earlier` in the source) runs whenever `earlier` ran: every statement or
 * clause around `later`'s statement, up to their common scope, also holds `earlier`, except `with`
 * statements and the body of `if __name__ == "__main__":`; and nothing between `later` and its statement makes it conditional.
 */
function runsAfter(earlier: SyntaxNode, later: SyntaxNode): boolean {
  const stmt = statementOf(later);
  for (let p = later.parent; p && p.id !== stmt.id; p = p.parent)
    if (
      ["conditional_expression", "boolean_operator", "lambda", "list_comprehension", "generator_expression"].includes(
        p.type,
      )
    )
      return false;
  for (let p = stmt.parent; p; p = p.parent) {
    if (p.type === "module" || p.type === "function_definition") return true;
    if (contains(p, earlier)) return true;
    if (p.type === "with_statement" || (p.type === "block" && p.parent?.type === "with_statement")) continue;
    // `if __name__ == "__main__":` runs whenever the file runs as a program.
    if (p.type === "if_statement" && isMainGuard(p)) continue;
    if (
      p.type === "block" &&
      p.parent?.type === "if_statement" &&
      isMainGuard(p.parent) &&
      p.parent.childForFieldName("consequence")?.id === p.id
    )
      continue;
    return false;
  }
  return true;
}

/** A function (or lambda) that runs in another thread, and the call that starts it. */
interface ThreadBody {
  body: SyntaxNode;
  name: string;
  start: SyntaxNode;
  how: string;
}

/** The bodies that run in other threads: thread targets, thread-pool functions and `Thread` subclasses' `run`. */
function threadBodies(ctx: RuleContext, calls: SyntaxNode[]): ThreadBody[] {
  const out: ThreadBody[] = [];
  const defs = ctx.model.nodesOfType("function_definition").filter((d): d is SyntaxNode => !!d);
  const addTarget = (target: SyntaxNode | undefined, start: SyntaxNode) => {
    if (!target) return;
    if (target.type === "call" && calleePath(ctx.model, target) === "functools.partial")
      target = callArgs(target).positional[0];
    if (!target) return;
    if (target.type === "lambda") {
      out.push({ body: target, name: "a lambda thread target", start, how: "started at" });
      return;
    }
    const name =
      target.type === "identifier"
        ? target.text
        : target.type === "attribute"
          ? target.childForFieldName("attribute")?.text
          : undefined;
    if (!name) return;
    const def = ctx.model.functions.get(name) ?? defs.find((d) => d.childForFieldName("name")?.text === name);
    if (def) out.push({ body: def, name: `thread function \`${name}\``, start, how: "started at" });
  };
  // Names bound to thread pools: `with ThreadPoolExecutor() as ex`, `ex = ThreadPool(4)`.
  const pools = new Set<string>();
  for (const p of ctx.model.nodesOfType("as_pattern")) {
    const value = p?.namedChildren[0];
    const alias = p?.childForFieldName("alias")?.namedChildren[0];
    if (value?.type === "call" && THREAD_POOLS.has(calleePath(ctx.model, value) ?? "") && alias?.type === "identifier")
      pools.add(alias.text);
  }
  for (const a of ctx.model.nodesOfType("assignment")) {
    const right = a?.childForFieldName("right");
    const left = a?.childForFieldName("left");
    if (right?.type === "call" && left?.type === "identifier" && THREAD_POOLS.has(calleePath(ctx.model, right) ?? ""))
      pools.add(left.text);
  }
  for (const call of calls) {
    const q = calleePath(ctx.model, call);
    const { positional, keywords } = callArgs(call);
    if (q === "threading.Thread") addTarget(keywords.get("target") ?? positional[1], call);
    else if (q === "threading.Timer") addTarget(keywords.get("function") ?? positional[1], call);
    else if (q === "asyncio.to_thread") addTarget(positional[0], call);
    const fn = call.childForFieldName("function");
    if (fn?.type !== "attribute") continue;
    const method = fn.childForFieldName("attribute")?.text ?? "";
    const obj = fn.childForFieldName("object");
    if (method === "run_in_executor") {
      addTarget(positional[1], call);
      continue;
    }
    if (!POOL_METHODS.has(method) || !obj) continue;
    const isPool =
      (obj.type === "identifier" && pools.has(obj.text)) ||
      (obj.type === "call" && THREAD_POOLS.has(calleePath(ctx.model, obj) ?? ""));
    if (isPool) addTarget(positional[0], call);
  }
  // class Worker(threading.Thread): def run(self): ...
  for (const cls of ctx.model.nodesOfType("class_definition")) {
    if (!cls) continue;
    const supers = cls.childForFieldName("superclasses")?.namedChildren ?? [];
    if (!supers.some((s) => ctx.model.resolve(s) === "threading.Thread")) continue;
    for (const d of cls.childForFieldName("body")?.namedChildren ?? []) {
      const def = d?.type === "decorated_definition" ? d.childForFieldName("definition") : d;
      if (def?.type === "function_definition" && def.childForFieldName("name")?.text === "run") {
        out.push({
          body: def,
          name: `\`${cls.childForFieldName("name")?.text}.run\``,
          start: cls.childForFieldName("name") ?? cls,
          how: "a threading.Thread subclass,",
        });
      }
    }
  }
  return out;
}

/**
 * Whether a thread's `set_device(arg)` names a fixed device (`1`, `"cuda:1"`, `torch.device("cuda", 1)`).
 * Any other argument carries a device handed in by the thread's creator (`set_device(parent_device)`,
 * `set_device(self.cuda_device)`, `set_device(rank_of_this_worker())`): that propagates the
 * parent's device into the worker, the remedy for the per-thread current device, not the hazard
 * (on the ecosystem corpus Megatron-LM, fairseq and ColossalAI do exactly this).
 */
function isConstantDevice(arg: SyntaxNode | undefined): boolean {
  if (!arg) return false;
  if (arg.type === "integer" || arg.type === "string") return true;
  if (arg.type !== "call" || !/(^|\.)device$/.test(arg.childForFieldName("function")?.text ?? "")) return false;
  const args = arg.childForFieldName("arguments")?.namedChildren ?? [];
  if (args.length) return args.every((c) => !!c && (c.type === "integer" || c.type === "string"));
  return false;
}

/** `set_device(local_rank)`: the argument comes from LOCAL_RANK, `args.local_rank`, or a `local_rank` name. */
function isLocalRank(ctx: RuleContext, arg: SyntaxNode | undefined, sources: ReadonlySet<number>): boolean {
  if (!arg) return false;
  if (flowsFrom(ctx.model, arg, sources)) return true;
  let a: SyntaxNode | null = arg;
  while (a?.type === "call" && a.childForFieldName("function")?.text === "int") a = callArgs(a).positional[0] ?? null;
  return a?.type === "identifier" && /^local_?rank$/i.test(a.text);
}

/** Replaces `set_device(n)` (a statement in a function) by `with torch.cuda.device(n):` around the rest of its block. */
function withDeviceFix(ctx: RuleContext, call: SyntaxNode, arg: SyntaxNode | undefined): Fix | undefined {
  const stmt = call.parent;
  if (!arg || stmt?.type !== "expression_statement" || stmt.namedChildren.length !== 1 || !enclosingFunction(stmt))
    return undefined;
  const fn = call.childForFieldName("function");
  let cuda: string | null = null;
  if (fn?.type === "attribute") cuda = fn.childForFieldName("object")!.text;
  else
    cuda =
      namesFor(ctx.model, "torch.cuda")[0] ??
      (namesFor(ctx.model, "torch")[0] ? `${namesFor(ctx.model, "torch")[0]}.cuda` : null);
  if (!cuda) return undefined;
  const header = `with ${cuda}.device(${arg.text}):`;
  const edit = wrapRestOfBlock(ctx.model, stmt, header);
  return edit ? { title: `Use \`${header}\` for the rest of the block`, edits: [edit], safe: false } : undefined;
}
