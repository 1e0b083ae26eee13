import type { Rule, RuleContext } from "../rule";
import { nodeRange } from "../python/events";
import { parameterNames, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath, enclosingFunction, readsAnyName } from "./shared/py";
import { startsChildWithin } from "./shared/childProcess";
import {
  makesModel,
  modelCallReceiver,
  pinnedReleases,
  RETURNS_REQUESTED_FROM,
  SELECT_DEVICE_SOURCE,
  STOPS_WRITING_FROM,
} from "./shared/ultralytics";

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

/**
 * GPU049's message for an Ultralytics `device=written` in a thread target (`where`: which function
 * runs in threads, `shared`: why one environment): `pin` is the project's ultralytics pin where every
 * release it admits writes the variable (8.0.0 to 8.4.86), else undefined (unpinned or mixed: the
 * message names the releases, and the upgrade as a fix).
 */
function ultralyticsMessage(written: string, where: string, shared: string, pin: string | undefined): string {
  const how = `by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (${SELECT_DEVICE_SOURCE})`;
  const who = pin
    ? `The pinned ultralytics${pin} applies device=${written} ${how}`
    : `With Ultralytics before ${STOPS_WRITING_FROM}, device=${written} is applied ${how}`;
  const upgrade = pin
    ? ""
    : `, or use ultralytics ${STOPS_WRITING_FROM} or later (it selects each thread's GPU with torch.cuda.set_device and leaves CUDA_VISIBLE_DEVICES alone)`;
  // 8.4.85 and 8.4.86 return cuda:N once torch's CUDA state is initialised (ultralytics#24987), and
  // reject N when the process sees fewer GPUs.
  const later =
    pinnedReleases(pin, RETURNS_REQUESTED_FROM) === "all"
      ? ""
      : " (8.4.85 and 8.4.86 may instead reject a later thread's device as invalid)";
  return `${who}, and ${where}: ${shared}, so every thread's model runs on the same GPU (cuda:0 of whichever value was set when CUDA started), not its own${later}; start a process per GPU with CUDA_VISIBLE_DEVICES set before it starts${upgrade}`;
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
      what: "Finds a module-level function that is started in several threads (`threading.Thread(target=f, ...)` in a loop or comprehension or more than once, `ThreadPoolExecutor`'s `submit` in a loop or `map`, `multiprocessing.pool.ThreadPool`'s `map`/`apply_async`) and that selects a GPU from one of its parameters through the process environment: `os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(gpu)`, or an Ultralytics model call with `device=gpu` (which Ultralytics applies by writing `CUDA_VISIBLE_DEVICES`). Not reported when the function starts a child process (a `subprocess` call, `os.system`, a `Process`): there the write may be meant for the child, which copies the environment when it starts. The Ultralytics branch is in the default set (an error) only where the project pins ultralytics to releases that all write the variable (8.0.0 to 8.4.86); unpinned (an install gets the newest release) or with a pin that admits 8.4.87 or later it is a preview finding (a warning) that names the releases and the upgrade as a fix, and it is silent where the pin admits only 8.4.87 or later. The `os.environ` branch does not depend on a library and stays in the default set.",
      follows:
        "The file's thread starts whose target is a module-level function of the file, and that function's own body (its parameters, and local names assigned from them). For the Ultralytics branch, the project's ultralytics pin (`requirements*.txt`, `pyproject.toml`, as the init catalogue reads them). Not followed: targets that are methods, lambdas or functions of other modules, writes in functions the target calls, and the ultralytics actually installed.",
      why: "Threads share one process environment and one CUDA state, and CUDA reads `CUDA_VISIBLE_DEVICES` once, when the process first initialises it. Measured on an H100 with torch 2.11 (ground-truth.md, 'A thread per GPU, each setting CUDA_VISIBLE_DEVICES'): when one thread has already used CUDA, another thread's write of a different id changes nothing (it runs on the first thread's GPU); when both write before either uses CUDA, both see the last value written (here an id the machine lacks: 'No CUDA GPUs are available' in both threads). Either way the threads do not get a GPU each. Ultralytics 8.0.0 to 8.4.86 applies `device=N` by such a write (`select_device`: `os.environ[\"CUDA_VISIBLE_DEVICES\"] = device`, then `arg = \"cuda:0\"`; read at the commits that set 8.0.0, 422c49d439 ultralytics/yolo/utils/torch_utils.py:71, and 8.4.86, 5d57f2111 ultralytics/utils/torch_utils.py), so models predicting with `device=0`, `1` and `2` in three threads all run on one GPU (ultralytics/ultralytics issue 3300); 8.4.85 and 8.4.86 return `cuda:N` once torch's CUDA state is initialised (ultralytics#24987), which a thread whose N the one visible GPU lacks gets refused as an invalid device. 8.4.87 (ultralytics#25021, 21e038cfa3) never writes the variable and makes the requested GPU the thread's current device with `torch.cuda.set_device(int(devices[0]))`, returning `cuda:N` (read at 8.4.114, ee3fe3eabf ultralytics/utils/torch_utils.py:236, :316), so each thread's model gets its own GPU.",
      example:
        'import os\nimport threading\nimport torch\n\ndef work(gpu):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)  # GPU049: shared by every thread\n    x = torch.ones(1, device="cuda")\n\nfor gpu in range(4):\n    threading.Thread(target=work, args=(gpu,)).start()\n',
      fix: 'import threading\nimport torch\n\ndef work(gpu):\n    x = torch.ones(1, device=f"cuda:{gpu}")  # an explicit device per thread\n\nfor gpu in range(4):\n    threading.Thread(target=work, args=(gpu,)).start()\n',
      whenNotToCare:
        "When every thread passes the same id (then the write is only redundant), or when the thread only prepares the environment for a child process it starts through a library the analysis does not know; for the Ultralytics branch, when the ultralytics that runs the code is 8.4.87 or later (pin it, and that branch is silent).",
      references: [
        "Python documentation, os.environ: a mapping object of the process's environment (one per process, shared by its threads)",
        `${GROUND_TRUTH} (verify/frameworks/thread_probe.py, verify/results-threads-h100.json)`,
        `ultralytics/ultralytics 0009995d90 ${SELECT_DEVICE_SOURCE}: \`os.environ["CUDA_VISIBLE_DEVICES"] = device\`, then \`arg = "cuda:0"\``,
        "ultralytics/ultralytics 422c49d439 (8.0.0) ultralytics/yolo/utils/torch_utils.py:71, :84; 5d57f2111 (8.4.86) ultralytics/utils/torch_utils.py:224 (the write), read through forks that carry the upstream history",
        'ultralytics/ultralytics history of select_device\'s file (`git log -G`, ultralytics/yolo/utils/torch_utils.py then ultralytics/utils/torch_utils.py) from 8.0.0 on: the write `os.environ["CUDA_VISIBLE_DEVICES"] = device` and `arg = "cuda:0"` change only in quote style (fe27db2f6, 8.0.239) until 3912d7f736 (8.4.85) made the return conditional and 21e038cfa3 (8.4.87) removed the write',
        'ultralytics/ultralytics#24987 (3912d7f736, first released in 8.4.85, 00572f1cb9): ultralytics/utils/torch_utils.py:214 `remap = not torch.cuda.is_initialized()`, :252 `arg = "cuda:0" if remap else f"cuda:{devices[0]}"`',
        'ultralytics/ultralytics#25021 (21e038cfa3, 8.4.87): select_device no longer writes CUDA_VISIBLE_DEVICES; at 8.4.114 (ee3fe3eabf) ultralytics/utils/torch_utils.py:236 "This function never modifies CUDA_VISIBLE_DEVICES", :316 `torch.cuda.set_device(int(devices[0]))`',
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
      // Ultralytics' device= writes the variable only before 8.4.87: default (an error) where the pin
      // admits only such releases, preview otherwise, silent where it admits only 8.4.87 or later.
      const pin = ctx.libraryPins?.ultralytics;
      const pinned = pinnedReleases(pin, STOPS_WRITING_FROM);
      if (pinned === "none") continue;
      for (const device of ultralyticsDevices(ctx, def))
        if (readsAnyName(device, params))
          ctx.report({
            range: nodeRange(device.parent ?? device),
            ...(pinned === "all" ? {} : { preview: true, severity: "warning" as const }),
            message: ultralyticsMessage(device.text, where, shared, pinned === "all" ? pin : undefined),
            related,
          });
    }
  },
};
