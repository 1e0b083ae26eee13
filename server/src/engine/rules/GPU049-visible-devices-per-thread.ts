import type { Rule, RuleContext } from "../rule";
import { nodeRange } from "../python/events";
import { parameterNames, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath, enclosingFunction, readsAnyName } from "./shared/py";
import { startsChildWithin } from "./shared/childProcess";
import { makesModel, modelCallReceiver, SELECT_DEVICE_SOURCE } from "./shared/ultralytics";

const GROUND_TRUTH = "docs/ground-truth.md, 'A thread per GPU, each setting CUDA_VISIBLE_DEVICES'";
/** Thread pools whose `submit`/`map`/`apply_async`/`imap` run a function in one of their threads. */
const THREAD_POOLS: ReadonlySet<string> = new Set([
  "concurrent.futures.ThreadPoolExecutor",
  "concurrent.futures.thread.ThreadPoolExecutor",
  "multiprocessing.pool.ThreadPool",
]);
/** Pool methods that run their first argument in the pool's threads; `map`-like ones once per item. */
const POOL_RUNS: ReadonlySet<string> = new Set(["submit", "map", "apply_async", "imap", "imap_unordered", "starmap"]);
const POOL_MAPS: ReadonlySet<string> = new Set(["map", "imap", "imap_unordered", "starmap"]);

/** One place a module-level function is started in a thread: the call, and whether it may run more than once. */
interface ThreadStart {
  call: SyntaxNode;
  target: string;
  repeated: boolean;
}

/** The names bound to a thread pool: `pool = ThreadPoolExecutor(...)` or `with ThreadPoolExecutor(...) as pool`. */
function poolNames(ctx: RuleContext): Set<string> {
  const out = new Set<string>();
  for (const made of ctx.model.nodesMentioning("call", ["ThreadPoolExecutor", "ThreadPool"], true)) {
    if (!THREAD_POOLS.has(calleePath(ctx.model, made) ?? "")) continue;
    const p = made.parent;
    const bound =
      p?.type === "assignment" && p.childForFieldName("right")?.id === made.id
        ? p.childForFieldName("left")
        : p?.type === "as_pattern"
          ? p.childForFieldName("alias")
          : null;
    const name = bound?.type === "as_pattern_target" ? bound.namedChildren[0] : bound;
    if (name?.type === "identifier") out.add(name.text);
  }
  return out;
}

/** Whether `call` sits in a loop or comprehension of its own function (or of the module). */
function inLoop(call: SyntaxNode): boolean {
  for (let n = call.parent; n; n = n.parent) {
    if (n.type === "function_definition" || n.type === "lambda" || n.type === "class_definition") return false;
    if (
      /^(for_statement|while_statement|list_comprehension|generator_expression|set_comprehension|dictionary_comprehension)$/.test(
        n.type,
      )
    )
      return true;
  }
  return false;
}

/** The module-level functions the file starts in threads: `threading.Thread(target=f, ...)`, `pool.submit(f, ...)`, `pool.map(f, items)`. */
function threadStarts(ctx: RuleContext): ThreadStart[] {
  const out: ThreadStart[] = [];
  const pools = poolNames(ctx);
  for (const call of ctx.model.nodesMentioning("call", ["Thread", ...POOL_RUNS], true)) {
    const fn = call.childForFieldName("function");
    const { positional, keywords } = callArgs(call);
    let target: SyntaxNode | undefined;
    let maps = false;
    if (calleePath(ctx.model, call) === "threading.Thread") target = keywords.get("target");
    else if (fn?.type === "attribute" && pools.has(fn.childForFieldName("object")?.text ?? "")) {
      const method = fn.childForFieldName("attribute")?.text ?? "";
      if (!POOL_RUNS.has(method)) continue;
      target = positional[0];
      maps = POOL_MAPS.has(method);
    }
    if (target?.type === "identifier" && ctx.model.functions.has(target.text))
      out.push({ call, target: target.text, repeated: maps || inLoop(call) });
  }
  // Two or more starts of one function count as repeated too.
  for (const s of out) if (out.filter((o) => o.target === s.target).length > 1) s.repeated = true;
  return out;
}

/** `names` with the local names of `def` assigned from an expression that reads one of them (`gpu = ids[k]`, `gpu, items = job`). */
function derivedNames(def: SyntaxNode, names: Set<string>): Set<string> {
  const out = new Set(names);
  for (const a of def.descendantsOfType("assignment")) {
    if (!a || enclosingFunction(a)?.id !== def.id || !readsAnyName(a.childForFieldName("right"), out)) continue;
    const left = a.childForFieldName("left");
    const targets = left?.type === "identifier" ? [left] : (left?.namedChildren ?? []);
    for (const t of targets) if (t?.type === "identifier") out.add(t.text);
  }
  return out;
}

/** The `device=` argument of an Ultralytics model call in `def` whose model `def` makes (`model = YOLO(...)`), per call. */
function ultralyticsDevices(ctx: RuleContext, def: SyntaxNode): SyntaxNode[] {
  const models = new Set<string>();
  for (const a of def.descendantsOfType("assignment")) {
    const left = a?.childForFieldName("left");
    if (left?.type === "identifier" && makesModel(ctx.model, a?.childForFieldName("right"))) models.add(left.text);
  }
  if (!models.size) return [];
  const out: SyntaxNode[] = [];
  for (const call of def.descendantsOfType("call")) {
    const receiver = call ? modelCallReceiver(call) : null;
    const device =
      receiver?.type === "identifier" && models.has(receiver.text) ? callArgs(call!).keywords.get("device") : undefined;
    if (device) out.push(device);
  }
  return out;
}

/** GPU049: a thread target that selects its GPU through CUDA_VISIBLE_DEVICES, started in several threads. */
export const rule: Rule = {
  meta: {
    code: "GPU049",
    name: "visible-devices-per-thread",
    severity: "error",
    fixable: false,
    // A thread start (Thread, ThreadPoolExecutor, ThreadPool) and a CUDA_VISIBLE_DEVICES write or an Ultralytics device=.
    trigger: (t) =>
      t.has("Thread") && (t.envWith(["CUDA_VISIBLE_DEVICES"]) || (t.hasWord("ultralytics") && t.has("device"))),
    docs: {
      what: "Finds a module-level function that is started in several threads (`threading.Thread(target=f, ...)` in a loop or comprehension or more than once, `ThreadPoolExecutor`'s `submit` in a loop or `map`, `multiprocessing.pool.ThreadPool`'s `map`/`apply_async`) and that selects a GPU from one of its parameters through the process environment: `os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(gpu)`, or an Ultralytics model call with `device=gpu` (which Ultralytics applies by writing `CUDA_VISIBLE_DEVICES`). Not reported when the function starts a child process (a `subprocess` call, `os.system`, a `Process`): there the write may be meant for the child, which copies the environment when it starts.",
      follows:
        "The file's thread starts whose target is a module-level function of the file, and that function's own body (its parameters, and local names assigned from them). Not followed: targets that are methods, lambdas or functions of other modules, and writes in functions the target calls.",
      why: "Threads share one process environment and one CUDA state, and CUDA reads `CUDA_VISIBLE_DEVICES` once, when the process first initialises it. Measured on an H100 with torch 2.11 (ground-truth.md, 'A thread per GPU, each setting CUDA_VISIBLE_DEVICES'): when one thread has already used CUDA, another thread's write of a different id changes nothing (it runs on the first thread's GPU); when both write before either uses CUDA, both see the last value written (here an id the machine lacks: 'No CUDA GPUs are available' in both threads). Either way the threads do not get a GPU each. Ultralytics' `device=N` is such a write (`ultralytics/utils/torch_utils.py` `select_device`), so models predicting with `device=0`, `1` and `2` in three threads all run on one GPU (ultralytics/ultralytics issue 3300).",
      example:
        'import os\nimport threading\nimport torch\n\ndef work(gpu):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)  # GPU049: shared by every thread\n    x = torch.ones(1, device="cuda")\n\nfor gpu in range(4):\n    threading.Thread(target=work, args=(gpu,)).start()\n',
      fix: 'import threading\nimport torch\n\ndef work(gpu):\n    x = torch.ones(1, device=f"cuda:{gpu}")  # an explicit device per thread\n\nfor gpu in range(4):\n    threading.Thread(target=work, args=(gpu,)).start()\n',
      whenNotToCare:
        "When every thread passes the same id (then the write is only redundant), or when the thread only prepares the environment for a child process it starts through a library the analysis does not know.",
      references: [
        "Python documentation, os.environ: a mapping object of the process's environment (one per process, shared by its threads)",
        `${GROUND_TRUTH} (verify/frameworks/thread_probe.py, verify/results-threads-h100.json)`,
        `ultralytics/ultralytics 0009995d90 ${SELECT_DEVICE_SOURCE}: \`os.environ["CUDA_VISIBLE_DEVICES"] = device\`, then \`arg = "cuda:0"\``,
      ],
    },
  },
  check(ctx) {
    const starts = threadStarts(ctx).filter((s) => s.repeated);
    const seen = new Set<string>();
    for (const start of starts) {
      if (seen.has(start.target)) continue;
      seen.add(start.target);
      const def = ctx.model.functions.get(start.target)!;
      if (startsChildWithin(ctx, def)) continue;
      const params = derivedNames(def, parameterNames(def.childForFieldName("parameters")));
      const where = `${start.target}() runs in several threads (started on ${ctx.where(start.call.startPosition.row)})`;
      const related = [{ range: nodeRange(start.call), message: "the threads start here" }];
      const shared = `the threads share one process environment and CUDA reads the variable once, when the process first initialises CUDA (measured on an H100 with torch 2.11)`;
      for (const { statement, writes } of ctx.model.statementWrites()) {
        if (statement.startIndex < def.startIndex || statement.endIndex > def.endIndex) continue;
        if (enclosingFunction(statement)?.id !== def.id) continue;
        const w = writes.find(
          (x) => x.variable === "CUDA_VISIBLE_DEVICES" && x.form !== "putenv" && readsAnyName(x.value, params),
        );
        if (w)
          ctx.report({
            range: w.range,
            message: `CUDA_VISIBLE_DEVICES is set per thread: ${where}, but ${shared}, so every thread gets the GPUs of whichever value was set then, not its own; give each thread an explicit device instead (torch.device(f"cuda:{gpu}"), every GPU left visible) or start a process per GPU`,
            related,
          });
      }
      for (const device of ultralyticsDevices(ctx, def))
        if (readsAnyName(device, params))
          ctx.report({
            range: nodeRange(device.parent ?? device),
            message: `Ultralytics applies device=${device.text} by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (${SELECT_DEVICE_SOURCE}), and ${where}: ${shared}, so every thread's model runs on the same GPU, not its own; start a process per GPU with CUDA_VISIBLE_DEVICES set before it starts`,
            related,
          });
    }
  },
};
