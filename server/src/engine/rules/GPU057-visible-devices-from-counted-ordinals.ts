import type { PythonRule, RuleContext } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { enclosingFunction, stringValue, type SyntaxNode } from "../python/parser";
import { freezes } from "../frameworks";
import { nodeRange, type EnvWriteEvent } from "../python/events";
import { callArgs, contains, isAssignmentTarget, statementOf } from "./shared/py";
import { argparseDefaultNodes, isParseArgs } from "../python/rankFlow";
import { poolIndexSubmits, writtenParam } from "./shared/poolIndex";

/**
 * Counts of the GPUs this process sees that do not initialise CUDA (ground-truth.md:
 * `torch.cuda.device_count(...)` and `torch.accelerator.device_count(...)` are lazy), so that a
 * CUDA_VISIBLE_DEVICES written after them still takes effect. Counts that initialise the runtime
 * (`jax.devices()`, TensorFlow's device lists, CuPy) make a later write ineffective instead: GPU001
 * and GPU012 report that.
 */
const LAZY_COUNTS: ReadonlySet<string> = new Set(["torch.cuda.device_count", "torch.accelerator.device_count"]);

/**
 * Counts and device lists of the GPUs this process sees, for a list handed to worker processes
 * (LocalCUDACluster): there a count that initialises the runtime counts too, since the workers are
 * other processes. numba's `cuda.gpus` lists the visible devices in CUDA's numbering.
 */
const WORKER_COUNTS: ReadonlySet<string> = new Set([
  ...LAZY_COUNTS,
  "numba.cuda.gpus",
  "numba.cuda.list_devices",
  "cupy.cuda.runtime.getDeviceCount",
  "jax.device_count",
  "jax.local_device_count",
  "jax.devices",
  "jax.local_devices",
  "tensorflow.config.list_physical_devices",
  "tensorflow.config.experimental.list_physical_devices",
]);

/**
 * Launchers of worker processes that take the workers' CUDA_VISIBLE_DEVICES as an argument, by
 * dotted path. dask-cuda: `LocalCUDACluster(CUDA_VISIBLE_DEVICES=...)`, "GPUs to restrict
 * activity to ... a string (like "0,1,2,3"), list (like [0, 1, 2, 3])", set as each worker's
 * CUDA_VISIBLE_DEVICES (dask_cuda/utils.py `cuda_visible_devices`, which without the argument
 * starts from the inherited CUDA_VISIBLE_DEVICES, else `range(get_n_gpus())`).
 */
const WORKER_LAUNCHERS: ReadonlySet<string> = new Set([
  "dask_cuda.LocalCUDACluster",
  "dask_cuda.local_cuda_cluster.LocalCUDACluster",
]);

/** How deep names are followed back to their assignments (`ids` ← `gpu_list` ← `gpu_id` ← the count). */
const MAX_DEPTH = 4;

/** A count call that the value of `node` takes from, following names to their assignments in the same scope; null when none. */
function countIn(
  ctx: RuleContext,
  node: SyntaxNode,
  before: number,
  scope: SyntaxNode | null,
  counts: ReadonlySet<string> = LAZY_COUNTS,
  depth = 0,
): SyntaxNode | null {
  for (const n of [node, ...node.descendantsOfType(["call", "attribute"])]) {
    if (n?.type === "call" && counts.has(ctx.model.resolve(n.childForFieldName("function")) ?? "")) return n;
    if (n?.type === "attribute" && n.parent?.type !== "call" && counts.has(ctx.model.resolve(n) ?? "")) return n;
  }
  if (depth >= MAX_DEPTH) return null;
  for (const d of argparseDefaultsIn(ctx, node, before, scope)) {
    const found = countIn(ctx, d, d.startIndex, enclosingFunction(d), counts, depth + 1);
    if (found) return found;
  }
  const names = new Set(
    [node, ...node.descendantsOfType("identifier")]
      .filter((n): n is SyntaxNode => n?.type === "identifier")
      .map((n) => n.text),
  );
  for (const a of assignmentsOf(ctx, names, before, scope)) {
    const found = countIn(ctx, a.value, a.start, scope, counts, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * The argparse defaults that `node` reads where the option is not given: for each `args.x` in it,
 * with `args` bound to `parser.parse_args()` in the same function or at module level before the
 * use, the `default=` expressions of the `add_argument` calls whose destination is `x`
 * (`add_argument("--gpus", default=",".join(map(str, range(torch.cuda.device_count()))))`).
 */
function argparseDefaultsIn(
  ctx: RuleContext,
  node: SyntaxNode,
  before: number,
  scope: SyntaxNode | null,
): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (const a of [node, ...node.descendantsOfType("attribute")]) {
    const obj = a?.type === "attribute" ? a.childForFieldName("object") : null;
    const dest = a?.childForFieldName("attribute")?.text;
    if (obj?.type !== "identifier" || !dest) continue;
    const names = new Set([obj.text]);
    const bound = [
      ...assignmentsOf(ctx, names, before, scope),
      ...(scope ? assignmentsOf(ctx, names, before, null) : []),
    ];
    if (!bound.some((b) => isParseArgs(b.value))) continue;
    const defaults = (ctx.model.derived.argparseDefaults ??= argparseDefaultNodes(ctx.model));
    for (const d of defaults.get(dest) ?? []) if (d) out.push(d);
  }
  return out;
}

/** The right-hand sides of `name = ...` in `scope` (the same function, or module level) written before `before`. */
function assignmentsOf(
  ctx: RuleContext,
  names: ReadonlySet<string>,
  before: number,
  scope: SyntaxNode | null,
): Array<{ value: SyntaxNode; start: number }> {
  const out: Array<{ value: SyntaxNode; start: number }> = [];
  for (const a of ctx.model.nodesMentioning("assignment", [...names], true)) {
    if (a.startIndex >= before) continue;
    const left = a.childForFieldName("left");
    const value = a.childForFieldName("right");
    if (left?.type !== "identifier" || !value || !names.has(left.text)) continue;
    if ((enclosingFunction(a)?.id ?? null) !== (scope?.id ?? null)) continue;
    out.push({ value, start: a.startIndex });
  }
  return out;
}

/**
 * Whether the write is guarded by a test of the variable (`if "CUDA_VISIBLE_DEVICES" not in
 * os.environ:`, `if os.environ.get("CUDA_VISIBLE_DEVICES") is None:`), or its function (for a
 * module-level write, the module) reads the variable before it (it may map ordinals through the
 * inherited list): then it is left alone. Reads that cannot reach the value do not count: those
 * after the write, those only printed or logged, and those in a branch that raises.
 */
function guardedOrMapped(
  w: Pick<EnvWriteEvent, "variable" | "statement">,
  scope: SyntaxNode | null,
  ctx: RuleContext,
): boolean {
  const stmt = w.statement!;
  for (let n = stmt.parent; n && n.id !== scope?.id; n = n.parent) {
    const condition =
      n.type === "if_statement" || n.type === "elif_clause" || n.type === "while_statement"
        ? n.childForFieldName("condition")
        : null;
    if (condition?.text.includes(w.variable)) return true;
  }
  return ctx.model
    .nodesMentioning(["subscript", "call"], [w.variable])
    .some(
      (n) =>
        n.text.includes(w.variable) &&
        n.endIndex <= stmt.startIndex &&
        !n.namedChildren.some((c) => c?.type === "block") &&
        (!scope || contains(scope, n)) &&
        !isAssignmentTarget(n) &&
        !onlyShown(n) &&
        !inRaisingBranch(n, scope),
    );
}

/** Calls that only show a value: `print(...)`, `logger.info(...)`, `logging.warning(...)`, `warnings.warn(...)`. */
const SHOWING = /(?:^|\.)(?:print|debug|info|warning|warn|error|log|exception|critical)$/;

/** Whether `n` is, or sits in the arguments of, a call that only shows a value. */
function onlyShown(n: SyntaxNode): boolean {
  for (let p: SyntaxNode | null = n; p && p.type !== "expression_statement" && p.type !== "block"; p = p.parent) {
    if (p.type === "call" && SHOWING.test(p.childForFieldName("function")?.text ?? "")) return true;
  }
  return false;
}

/** Whether `n` is in an `if` branch (or its test) whose block raises: a branch that never reaches the write. */
function inRaisingBranch(n: SyntaxNode, scope: SyntaxNode | null): boolean {
  for (let p = n.parent; p && p.id !== scope?.id; p = p.parent) {
    if (p.type !== "if_statement" && p.type !== "elif_clause") continue;
    const body = p.childForFieldName("consequence");
    if (body?.namedChildren.some((c) => c?.type === "raise_statement")) return true;
  }
  return false;
}

/**
 * Whether CUDA was already initialised, at a depth that freezes CUDA_VISIBLE_DEVICES, before the
 * write on its own timeline (the module's, or its function's): the write then does not move the
 * process (GPU001 reports it), and this rule says nothing.
 */
function afterInit(ctx: RuleContext, w: EnvWriteEvent): boolean {
  for (const events of [ctx.model.events, ...ctx.model.functionTimelines.map((t) => t.events)]) {
    const at = events.findIndex((e) => e.kind === "envWrite" && e.statement?.id === w.statement?.id);
    if (at < 0) continue;
    return events.slice(0, at).some((e) => e.kind === "init" && freezes(e.framework, e.depth, "CUDA_VISIBLE_DEVICES"));
  }
  return false;
}

/**
 * Whether the value lists every GPU the process sees (`range(torch.cuda.device_count())`, or
 * `range(n)` with `n = torch.cuda.device_count()`), rather than some of them (`count - 1`,
 * `min(4, count)`, a slice): the message then says that with nothing inherited it changes nothing.
 */
function listsEvery(count: SyntaxNode, ctx: RuleContext): boolean {
  const isRangeOf = (arg: SyntaxNode) => {
    const list = arg.parent;
    const call = list?.parent;
    return (
      list?.type === "argument_list" &&
      list.namedChildren.length === 1 &&
      call?.type === "call" &&
      call.childForFieldName("function")?.text === "range"
    );
  };
  if (isRangeOf(count)) return true;
  const assigned = count.parent;
  const name = assigned?.type === "assignment" ? assigned.childForFieldName("left") : null;
  if (name?.type !== "identifier") return false;
  const scope = enclosingFunction(count);
  return ctx.model
    .nodesMentioning("identifier", [name.text], true)
    .some(
      (n) =>
        n.text === name.text && n.startIndex > count.endIndex && enclosingFunction(n)?.id === scope?.id && isRangeOf(n),
    );
}

/** GPU057: CUDA_VISIBLE_DEVICES written from GPU ordinals counted in the process (`range(torch.cuda.device_count())`). */
export const rule: PythonRule = {
  meta: {
    code: "GPU057",
    name: "visible-devices-from-counted-ordinals",
    severity: "warning",
    fixable: false,
    // Default set: the ecosystem corpus holds no such write; on 37 public files found with the code
    // search (2026-12-07, BENCHMARKS.md), its 15 findings (14 distinct programs) were all true, and
    // the 10 guarded or mapped writes among them stayed silent.
    // A CUDA_VISIBLE_DEVICES write whose value comes from device_count(), or a worker launcher given the workers' list.
    // Preview: a pool worker's write from its index, submitted in the same file (submit/apply_async).
    trigger: (t) =>
      t.has("CUDA_VISIBLE_DEVICES") &&
      (t.has("device_count") || t.has("LocalCUDACluster") || t.has("submit") || t.has("apply_async")),
    docs: {
      what: 'Finds `CUDA_VISIBLE_DEVICES` written from GPU ordinals this process counted: `os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(torch.cuda.device_count()))`, also through names assigned before the write in the same function (`ids = ...; gpu_list = sorted(...ids...)`), and from `torch.accelerator.device_count()`; and the workers\' list given to dask-cuda\'s `LocalCUDACluster(CUDA_VISIBLE_DEVICES=...)` built from `range(len(numba.cuda.gpus))` (or another count or device list of this process: CuPy, JAX, TensorFlow, torch), which dask-cuda sets as each worker\'s CUDA_VISIBLE_DEVICES; and the environment copied for a child process (`env = os.environ.copy()` then `env["CUDA_VISIBLE_DEVICES"] = ...`, `{**os.environ, "CUDA_VISIBLE_DEVICES": ...}`) given such a list. Preview: a write in a function that a process pool of the same file runs (`ProcessPoolExecutor(...).submit(fn, ...)`, `multiprocessing.Pool(...).apply_async(fn, (...))`) from a parameter that the submitting code fills with a pool index it counts from 0 (`self._idx`, set to 0 and stepped by `(x + 1) % n` or `+= 1`, or the variable of an enclosing `for i in range(n)` / `for i, _ in enumerate(...)`): each worker inherits the parent\'s CUDA_VISIBLE_DEVICES and the write replaces it with the index.',
      follows:
        "Every write of the variable in the file (functions and methods included) and, back from its value, the names it uses to their assignments in the same function (or at module level) before the write, a few assignments deep, whichever branch they sit in. Silent for `os.environ.setdefault(...)` (it writes only where nothing was inherited), where the write sits under a test of the variable (`if \"CUDA_VISIBLE_DEVICES\" not in os.environ:`, `if os.environ.get(...) is None:`), where the same function (or the module, for a top-level write) reads the variable before the write (it may map the ordinals through the inherited list; reads that are only printed or logged, or sit in a branch that raises, do not count), where CUDA was initialised before the write on its timeline (`torch.cuda.is_available()`, `set_device`: the write then moves nothing, GPU001 reports it), and for counts that initialise the runtime (`jax.devices()`, TensorFlow's device lists, CuPy: GPU001 and GPU012). The message distinguishes a value that lists every GPU the process sees (`range(torch.cuda.device_count())`) from one that chooses some (`min(4, count)`, `count - 1`). Also followed: `args.x` read from `parser.parse_args()` to the `default=` of its `add_argument` (the value when the option is not given). Not followed: function parameters, other attributes, helper functions that return the list, other modules. Preview (pool index): the value is the parameter alone (`p`, `str(p)`, `f\"{p}\"`), not rebound in the function; the function is a module-level function submitted by name or a method of the file's class submitted as `self.name`/`cls.name`/`Class.name` (a bound method's first parameter is the instance); the pool is a name or attribute assigned the executor or pool in the file, or a `with ... as` name; every assignment to the counter in the file steps it (`x + 1`, `(x + 1) % n` with any n, `+= 1`; one sets it to 0). Silent where the file reads CUDA_VISIBLE_DEVICES anywhere (the index may be mapped through the parent's list), for thread pools, `map`/`starmap`, pools made in another module, and `*args` before the index.",
      why: "`torch.cuda.device_count()` counts the GPUs the process already sees, and they are numbered from 0 in that view; `CUDA_VISIBLE_DEVICES` takes the machine's own device ids (CUDA C Programming Guide, CUDA Environment Variables: the listed devices are made visible and renumbered from 0). When the process inherited a list (a Slurm job given GPUs 4-7 without device cgroups, a launcher, `CUDA_VISIBLE_DEVICES=4,5,6,7 python ...`), it counts 4 and writes `0,1,2,3`: since `device_count()` does not initialise CUDA (ground-truth.md: lazy), the write takes effect, and the process moves onto GPUs 0-3, which belong to other jobs or users (IsoNet-cryoET/IsoNet2#28: training on other jobs' GPUs of a shared Slurm node). Where nothing was inherited, a list of every visible GPU changes nothing, so the write is at best useless; a list that chooses some of them (`min(4, count)`, the last one) narrows the process as meant on a free machine and picks other jobs' GPUs under an inherited list, where the ordinals have to be mapped through it. The same holds for the list dask-cuda's LocalCUDACluster sets as each worker's CUDA_VISIBLE_DEVICES (NVIDIA-Merlin/NVTabular#1831: a notebook's workers pinned to GPUs 0 and 1 while its kernel was given others); without the argument dask-cuda starts from the inherited CUDA_VISIBLE_DEVICES itself (dask_cuda/utils.py `cuda_visible_devices`).",
      example:
        'import os\nimport torch\n\ngpus = ",".join(str(i) for i in range(torch.cuda.device_count()))\nos.environ["CUDA_VISIBLE_DEVICES"] = gpus  # GPU057: ordinals written as device ids\n',
      fix: "import os\nimport torch\n\nnum_gpus = torch.cuda.device_count()  # every GPU this process may use; CUDA_VISIBLE_DEVICES left as inherited\n",
      whenNotToCare:
        "A program that only ever runs where no CUDA_VISIBLE_DEVICES is set beforehand (no scheduler, no launcher that sets it, nobody who narrows it in the shell): there the write changes nothing. It still does nothing useful, so removing it is safe.",
      references: [
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES lists the device ids that are visible, and they are renumbered from 0 in the process",
        "ground-truth.md: `torch.cuda.device_count(...)` and `torch.accelerator.device_count(...)` are lazy (they do not initialise CUDA), so a CUDA_VISIBLE_DEVICES written after them takes effect",
        "Slurm, Generic Resource Scheduling: for a job given GPUs, CUDA_VISIBLE_DEVICES holds the allocated GPUs' ids; without device cgroups (ConstrainDevices) the other GPUs of the node stay reachable",
        'dask-cuda, LocalCUDACluster: "CUDA_VISIBLE_DEVICES: GPUs to restrict activity to. Can be a string (like \\"0,1,2,3\\"), list (like [0, 1, 2, 3]), or None to use all available GPUs"; dask_cuda/utils.py cuda_visible_devices: with no list, the inherited CUDA_VISIBLE_DEVICES, else range(get_n_gpus())',
        "IsoNet-cryoET/IsoNet2#28 (2026-04-07): with no GPU option, the tool listed range(torch.cuda.device_count()) and wrote it back into CUDA_VISIBLE_DEVICES, moving a Slurm job onto other jobs' GPUs",
      ],
    },
  },
  check(ctx) {
    ownWrites(ctx);
    workerLists(ctx);
    childEnvironments(ctx);
    poolIndexWrites(ctx);
  },
};

/** What the write does under an inherited list: to GPUs 0, 1, ... (every GPU) or to those with the chosen ordinals as ids. */
const moves = (every: boolean) =>
  `they number the GPUs it already sees from 0, while the variable takes the machine's device ids, so under an inherited CUDA_VISIBLE_DEVICES (a Slurm job's 4,5,6,7, a launcher's, the shell's) this write moves the process onto ${every ? "GPUs 0, 1, ..." : "the GPUs that have those numbers as ids"}, other jobs' GPUs`;

/** The process's own writes (`os.environ["CUDA_VISIBLE_DEVICES"] = ...`). */
function ownWrites(ctx: RuleContext): void {
  for (const w of envWritesAnywhere(ctx.model)) {
    // setdefault writes only where nothing was inherited: there the ordinals are the device ids.
    if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value || !w.statement || w.form === "setdefault") continue;
    const scope = enclosingFunction(w.statement);
    const count = countIn(ctx, w.value, w.statement.startIndex, scope);
    if (!count || guardedOrMapped(w, scope, ctx) || afterInit(ctx, w)) continue;
    const where = ctx.where(count.startPosition.row);
    ctx.report({
      range: w.range,
      message: listsEvery(count, ctx)
        ? `CUDA_VISIBLE_DEVICES is written from GPU ordinals this process counted (${count.text} at ${where}): ${moves(true)}; with none inherited it changes nothing. Leave the variable as it is and use torch.cuda.device_count() for the count`
        : `CUDA_VISIBLE_DEVICES is written from GPU ordinals this process counted (${count.text} at ${where}), to choose some of its GPUs: ${moves(false)}. Map the ordinals through the inherited list (os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")) when there is one, and write the ids they stand for`,
    });
  }
}

/** The workers' list given to a worker launcher (`LocalCUDACluster(CUDA_VISIBLE_DEVICES=...)`). */
function workerLists(ctx: RuleContext): void {
  for (const call of ctx.model.nodesMentioning("call", ["CUDA_VISIBLE_DEVICES"])) {
    if (!WORKER_LAUNCHERS.has(ctx.model.resolve(call.childForFieldName("function")) ?? "")) continue;
    const value = callArgs(call).keywords.get("CUDA_VISIBLE_DEVICES");
    const statement = statementOf(call);
    if (!value) continue;
    const scope = enclosingFunction(statement);
    const count = countIn(ctx, value, statement.startIndex, scope, WORKER_COUNTS);
    if (!count || guardedOrMapped({ variable: "CUDA_VISIBLE_DEVICES", statement }, scope, ctx)) continue;
    ctx.report({
      range: nodeRange(value.parent!),
      message: `LocalCUDACluster's CUDA_VISIBLE_DEVICES is built from GPU ordinals this process counted (${count.text} at ${ctx.where(count.startPosition.row)}): they number the GPUs this process sees from 0, while dask-cuda sets the list as each worker's CUDA_VISIBLE_DEVICES, which takes the machine's device ids, so under an inherited CUDA_VISIBLE_DEVICES (a job's 2,3) the workers are pinned to GPUs 0, 1, ... instead of the ones given. Leave the argument out (dask-cuda then starts from the inherited CUDA_VISIBLE_DEVICES), or map the ordinals through the inherited list`,
    });
  }
}

/** Whether `value` copies the process's environment: `os.environ.copy()`, `dict(os.environ)`, `{**os.environ, ...}`. */
function copiesEnviron(ctx: RuleContext, value: SyntaxNode): boolean {
  if (value.type === "dictionary")
    return value.namedChildren.some((c) => c?.type === "dictionary_splat" && ctx.model.isEnviron(c.namedChildren[0]));
  if (value.type !== "call") return false;
  const fn = value.childForFieldName("function");
  if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "copy")
    return ctx.model.isEnviron(fn.childForFieldName("object"));
  return fn?.text === "dict" && ctx.model.isEnviron(callArgs(value).positional[0]);
}

/**
 * A child process's environment copied from this one (`env = os.environ.copy()`, `{**os.environ}`)
 * whose CUDA_VISIBLE_DEVICES is set from counted ordinals: `env["CUDA_VISIBLE_DEVICES"] = ...` on
 * the copy, or the entry of a dictionary that spreads `os.environ`. The child is another process, so
 * CUDA started here does not matter.
 */
function childEnvironments(ctx: RuleContext): void {
  const entries: Array<{ value: SyntaxNode; report: SyntaxNode; statement: SyntaxNode }> = [];
  for (const a of ctx.model.nodesMentioning("assignment", ["CUDA_VISIBLE_DEVICES"])) {
    const left = a.childForFieldName("left");
    const value = a.childForFieldName("right");
    const target = left?.type === "subscript" ? left.childForFieldName("value") : null;
    if (!value || target?.type !== "identifier") continue;
    if (left!.childForFieldName("subscript")?.text.replace(/['"]/g, "") !== "CUDA_VISIBLE_DEVICES") continue;
    const scope = enclosingFunction(a);
    if (!assignmentsOf(ctx, new Set([target.text]), a.startIndex, scope).some((b) => copiesEnviron(ctx, b.value)))
      continue;
    entries.push({ value, report: a, statement: statementOf(a) });
  }
  for (const d of ctx.model.nodesMentioning("dictionary", ["CUDA_VISIBLE_DEVICES"])) {
    if (!copiesEnviron(ctx, d)) continue;
    for (const p of d.namedChildren) {
      const value = p?.type === "pair" ? p.childForFieldName("value") : null;
      if (value && stringValue(p!.childForFieldName("key")) === "CUDA_VISIBLE_DEVICES")
        entries.push({ value, report: p!, statement: statementOf(d) });
    }
  }
  for (const e of entries) {
    const scope = enclosingFunction(e.statement);
    const count = countIn(ctx, e.value, e.statement.startIndex, scope, WORKER_COUNTS);
    if (!count || guardedOrMapped({ variable: "CUDA_VISIBLE_DEVICES", statement: e.statement }, scope, ctx)) continue;
    ctx.report({
      range: nodeRange(e.report),
      message: `The environment copied for a child process gets CUDA_VISIBLE_DEVICES from GPU ordinals this process counted (${count.text} at ${ctx.where(count.startPosition.row)}): they number the GPUs this process sees from 0, while the child reads device ids, so under an inherited CUDA_VISIBLE_DEVICES (a Slurm job's 4,5,6,7) the child runs on GPUs 0, 1, ... of other jobs. Map the ordinals through the inherited list, or leave the entry out (the copy already holds this process's value)`,
    });
  }
}

/**
 * Preview: a write in a function a process pool runs, from a parameter the submitting code fills
 * with a pool index it counts (rules/shared/poolIndex.ts). Silent where the file reads the variable
 * anywhere (the index may be mapped through the parent's list), and for `setdefault`.
 */
function poolIndexWrites(ctx: RuleContext): void {
  const reads = ctx.model
    .nodesMentioning(["subscript", "call"], ["CUDA_VISIBLE_DEVICES"])
    .some((n) => n.text.includes("CUDA_VISIBLE_DEVICES") && !isAssignmentTarget(n) && !onlyShown(n));
  if (reads) return;
  for (const w of envWritesAnywhere(ctx.model)) {
    if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value || !w.statement || w.form === "setdefault") continue;
    const fn = enclosingFunction(w.statement);
    const param = fn ? writtenParam(w.value, fn) : null;
    const [s] = param ? poolIndexSubmits(ctx, fn!, param) : [];
    if (!s) continue;
    const fnName = fn!.childForFieldName("name")!.text;
    ctx.report({
      range: w.range,
      preview: true,
      message: `CUDA_VISIBLE_DEVICES is written from ${param}, the pool index that ${s.call.childForFieldName("function")!.text}(${fnName}, ...) at ${ctx.where(s.call.startPosition.row)} passes (${s.arg.text}, counted from 0): the worker inherited the parent's CUDA_VISIBLE_DEVICES and this write replaces it, so under an inherited list (CUDA_VISIBLE_DEVICES=1,2,3) worker i runs on physical GPU i, not on the i-th GPU given. Map the index through the parent's list (os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")) where the jobs are submitted, and pass the id`,
    });
  }
}
