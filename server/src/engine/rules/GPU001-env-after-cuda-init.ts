import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { freezes, STARTUP_VARIABLES } from "../frameworks";
import type { RuleContext } from "../rule";
import type { KernelRestart, Range } from "../types";
import { frameworksText } from "../../../../common/src/kernel/runningKernel";
import { freezesVariable, stateBefore, statesInFunction } from "../python/timeline";
import {
  nodeRange,
  type EnvDeleteEvent,
  type EnvWriteEvent,
  type FunctionTimeline,
  type InitEvent,
  type ProjectWriteEvent,
  type TimelineEvent,
} from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { moveWriteFix } from "./shared/moveWrite";
import { startsChildAfter, type ChildProcessFacts } from "./shared/childProcess";

/** GPU001: a startup variable written after a CUDA-initialising call of a framework that reads it. */
/**
 * Added to a write's message where a child process starts after it but JAX's backend already
 * started in this process: the child gets the value, this process keeps its preallocation. Measured
 * on an H200 with jax 0.11 (ground-truth.md, "JAX default": 107,918 of 143,771 MiB after `jax.devices()`).
 */
const JAX_HOLDS_MEMORY =
  "; the child processes started after it get the new value, but this process keeps the memory JAX preallocated on the GPUs it sees (75% of the GPU's memory by default), which they cannot use";

export const rule: PythonRule = {
  meta: {
    code: "GPU001",
    name: "env-after-cuda-init",
    severity: "error",
    fixable: true,
    fixSafety: "both",
    // An environment write of a startup variable, by name (TextProbe.envWith); or, with a project
    // index, the name of a project function that writes one (its call is the write: python/walker.ts
    // projectCall), as a whole word.
    trigger: (t, _preview, facts) => {
      if (t.envWith(STARTUP_VARIABLES)) return true;
      const writers = facts?.projectWriters?.();
      return !!writers?.size && t.hasAnyWord([...writers]);
    },
    docs: {
      what: 'Finds a CUDA startup variable (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `PYTORCH_CUDA_ALLOC_CONF`, `XLA_PYTHON_CLIENT_PREALLOCATE`, ...) written after a call that already initialised CUDA in a framework that reads it: `torch.cuda.is_available()`, a tensor on CUDA, `jax.devices()`, `accelerate.Accelerator()`, a TensorFlow op, or the import of a module that initialises CUDA on import. The project\'s own modules count too: importing a project module whose top level initialises CUDA (directly or through the project modules and functions it uses), or calling a project function that does, initialises CUDA here (the message names each file and line on the way). A removal of a startup variable after such a call (`del os.environ["CUDA_VISIBLE_DEVICES"]`, `os.environ.pop("CUDA_VISIBLE_DEVICES", None)`) is as late as a write and is reported too, with no fix (moving a removal above the imports would change what it removes); not a removal that puts the environment back (in a `finally:` clause, or in an `if` whose other branch writes the saved value), nor one followed by the start of a child process, which reads its own environment. A write followed by the start of a child process (`subprocess.run`, `os.system`, ...: later in its block, or anywhere later in the module for a top-level write) is meant for the child, which reads its own environment, and is not reported; except after JAX\'s backend started in this process, which then keeps its preallocation (75% of the GPU\'s memory by default) while the children run, and the message says so. A call of a project function whose own body writes a startup variable before it initialises anything (`train(cfg)` whose first statement sets `PYTORCH_CUDA_ALLOC_CONF`), made after CUDA was initialised, is reported at the call, naming the write. Modules are found as Python\'s import system finds them from the file (its folder up to the project root, `src/`, relative imports); a module that cannot be found or read counts as initialising nothing. In a notebook whose running kernel GPU Pilot may ask (VS Code with the Jupyter extension, access granted), a cell that writes a startup variable is flagged whatever the cells\' order when the kernel reports that a framework reading it has already initialised CUDA there ("no effect in the running kernel"), with the action *Restart kernel on GPU N*.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep; a module function or method this walk does not reach (a callback, a hook, a method of a class the module never instantiates) is checked on its own, after the module's code above it (a write there after a mere module-level import is reported only where the function is a hook a framework calls in a worker process it spawns, which imports the module first: the `setup` method of a `litserve.LitAPI` subclass); the project's own modules it imports and the project functions it calls, for whether they initialise CUDA (found as Python's import system finds them, up to four imports or calls deep); in a notebook, what the running kernel reports. Environment writes made in other modules are followed only as a project function's own statement (not inside a branch, loop or `try`, nor in a helper it calls), run before the function initialises anything; the prefilter finds the callers by those functions' names, which it lists from the project's `.py` files (those that name a startup variable are parsed; the CLI keeps each module's answer in its result cache until the module changes). Removals are followed as statements of the file (module level and functions, as writes are), not in other modules. Not followed: other writes in other modules, nested functions and lambdas, the source of installed libraries (only the catalogue of those that initialise CUDA when imported), and code run in another process.",
      why: 'These variables are read once, when the CUDA driver or the framework initialises. Measured on 2 x H200 with torch 2.11 (ground-truth.md): after `torch.cuda.is_available()`, setting `CUDA_VISIBLE_DEVICES="1"` has no effect — the program still runs on physical GPU 0, while `device_count()` now reports 1: a silent mismatch. After `jax.devices()`, `XLA_PYTHON_CLIENT_PREALLOCATE=false` is ignored and JAX preallocates 75% of the GPU (107,918 MiB of 143,771 MiB). Each variable freezes at its own moment: `PYTORCH_CUDA_ALLOC_CONF` survives `is_available()` but not the first allocation; `PYTORCH_NO_CUDA_MEMORY_CACHING` is read at the first allocation through torch\'s caching allocator (a tensor or module put on CUDA), so a context alone (`set_device`) leaves it open (read in pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, `forceUncachedAllocator()`: a function-local static).',
      example:
        'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # GPU001: too late, still GPU 0\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\n',
      whenNotToCare:
        "Never in a long-running process. In a notebook, the fix also needs a kernel restart: the kernel keeps its initialised CUDA state. For a project module, the analysis assumes the module the file's folder (or the project root) holds is the one Python imports; a program started from elsewhere with another sys.path may import another.",
      references: [
        'ground-truth.md: \'When does setting os.environ["CUDA_VISIBLE_DEVICES"] = "1" still take effect?\' rows `torch.cuda.is_available()`, `accelerate.Accelerator()`, `jax.devices()`',
        "ground-truth.md: 'Each variable freezes at its own moment'",
        "A removal changes the variable as a write does: CUDA reads it once, at initialisation (the CUDA C Programming Guide reference below), so removing it afterwards changes nothing in the process. Measured by verify/GPU001-delete-after-init on an H200 with torch 2.11 (verify/results-GPU001-delete-h200.json, 2026-12-07): started with CUDA_VISIBLE_DEVICES empty, `is_available()` False, then `del os.environ[\"CUDA_VISIBLE_DEVICES\"]`: `device_count()` then reports the GPU (torch counts through NVML, which reads the environment at each call), yet the first tensor on CUDA fails with 'No CUDA GPUs are available', because the CUDA runtime keeps the empty value it read; removed before `is_available()`, the GPU is used",
        'pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp: `forceUncachedAllocator()` keeps `getenv("PYTORCH_NO_CUDA_MEMORY_CACHING")` in a static on its first call, from the first `allocate()`',
        "GPU Pilot's init catalogue (listed in GPU002's documentation): the libraries that initialise CUDA when imported, each measured or read at a named commit and line; the message quotes the entry",
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES is read at CUDA initialisation",
        'JAX, GPU memory allocation: "JAX will preallocate 75% of the total GPU memory when the first JAX operation is run"; "Common causes of OOM failures: Running multiple JAX processes concurrently" (https://docs.jax.dev/en/latest/gpu_memory_allocation.html); measured in one process: ground-truth.md, "JAX default" (107,918 of 143,771 MiB on an H200)',
      ],
    },
  },
  check(ctx) {
    const childFacts: ChildProcessFacts = { lastWord: new Map() };
    const report = (w: EnvWriteEvent, frozenBy: InitEvent, where: string, severity?: "warning", hook = false) => {
      // A write followed by the start of a child process is meant for the child, which reads its own
      // environment; except after JAX's backend started here: this process then holds JAX's
      // preallocation on the GPUs it sees while the children run (ground-truth.md: 75%).
      const forChild = !!w.statement && startsChildAfter(ctx, w.statement, childFacts);
      if (forChild && frozenBy.framework !== "jax") return;
      ctx.report({
        range: w.range,
        ...(severity ? { severity } : {}),
        message: `${w.variable} is set after CUDA was initialised by ${initialisedBy(ctx, frozenBy)}${where}: it has no effect in this process${w.variable === "CUDA_VISIBLE_DEVICES" ? " (the program stays on the GPUs it already saw)" : ""}${forChild ? JAX_HOLDS_MEMORY : ""}`,
        related: [initialisedHere(frozenBy)],
        // A worker hook's write cannot move above the module's imports (the worker's own device
        // is known only in the hook): the imports move into it instead, which no fix here writes.
        ...(hook ? {} : { fix: moveWriteFix(ctx, w) ?? undefined }),
        ...(frozenInKernel(ctx, w.variable).length ? { kernelRestart: kernelRestartOf(w) } : {}),
      });
    };
    const staticLines = new Set<string>();
    for (const w of envWrites(ctx.model)) {
      if (!STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv") continue;
      const { frozenBy } = stateBefore(ctx.model, w);
      if (frozenBy) {
        report(w, frozenBy, "");
        staticLines.add(writeKey(w));
      }
    }
    removalFindings(ctx, childFacts);
    runningKernelFindings(ctx, staticLines);
    // A call of a project function that writes a startup variable first (python/walker.ts
    // projectCall): the write runs here, after what initialised CUDA above the call.
    const calls = new Set<number>();
    const reportCall = (w: ProjectWriteEvent, frozenBy: InitEvent, where: string, severity?: "warning") => {
      if (calls.has(w.node.id)) return;
      calls.add(w.node.id);
      ctx.report({
        range: nodeRange(w.node),
        ...(severity ? { severity } : {}),
        message: `${w.what} sets ${w.variable} (${w.project.where}) after CUDA was initialised by ${initialisedBy(ctx, frozenBy)}${where}: the write has no effect in this process${w.variable === "CUDA_VISIBLE_DEVICES" ? " (the program stays on the GPUs it already saw)" : ""}; set it before CUDA initialises (at the start of the program, or in the launch environment)`,
        related: [initialisedHere(frozenBy)],
      });
    };
    const before = (events: readonly TimelineEvent[], w: ProjectWriteEvent): InitEvent | null => {
      for (const e of events) {
        if (e === w) return null;
        if (freezesVariable(e, w.variable)) return e;
      }
      return null;
    };
    for (const w of ctx.model.events) {
      if (w.kind !== "projectWrite") continue;
      const frozenBy = before(ctx.model.events, w);
      if (frozenBy) reportCall(w, frozenBy, "");
    }
    // Functions the module never calls (tests, hooks, callbacks) run after the module's own code:
    // a write there is checked against the module's timeline and the function's own events.
    // A method of a class the module never calls runs after the object's constructor (its timeline
    // starts with `__init__`): "whenever `Trainer.fit()` runs". A write reached from two timelines
    // (a helper method called by another) is reported once, from the first.
    const reported = new Set<string>();
    for (const fn of ctx.model.functionTimelines) {
      const stateOf = statesInFunction(ctx.model, fn);
      const fnName = timelineName(fn);
      for (const w of fn.events) {
        if (w.kind !== "projectWrite") continue;
        // Initialised in the function's own timeline only: the module's events above a definition
        // are placed by their nodes, and a `__main__` block below that inlines a function above
        // puts its events there too (on the ecosystem corpus, yolov5's train.py `run()` got the
        // set_device() of `main()` that runs after the call).
        const frozenBy = before(fn.events, w);
        if (frozenBy) reportCall(w, frozenBy, ` whenever \`${fnName}()\` runs`);
      }
      for (const w of fn.events) {
        if (w.kind !== "envWrite" || !STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv") continue;
        const { frozenBy } = stateOf(w);
        const key = writeKey(w);
        const verdict = frozenBy && !reported.has(key) ? lateInFunction(fn, frozenBy) : null;
        const spawned =
          !verdict && frozenBy && !reported.has(key) && runsInWorker(frozenBy.node) ? spawnedWorkerHook(ctx, fn) : null;
        if (!verdict && !spawned) continue;
        reported.add(key);
        if (spawned) report(w, frozenBy!, ` whenever \`${fnName}()\` runs (${spawned})`, undefined, true);
        else report(w, frozenBy!, ` whenever \`${fnName}()\` runs`, verdict === "error" ? undefined : verdict!);
      }
    }
  },
};

/** `frozenBy.what (line N: note)`: what initialised CUDA and where, for messages. */
function initialisedBy(ctx: RuleContext, frozenBy: InitEvent): string {
  const line = ctx.where(frozenBy.node.startPosition.row);
  return `${frozenBy.what} (${line}${frozenBy.note ? `: ${frozenBy.note}` : ""})`;
}

/** The related information every GPU001 finding carries: where CUDA was initialised. */
function initialisedHere(frozenBy: InitEvent): { range: Range; message: string } {
  return { range: nodeRange(frozenBy.node), message: `CUDA initialised here by ${frozenBy.what}` };
}

/** A function timeline's name in messages: `train`, or `Trainer.fit` for a method. */
function timelineName(fn: FunctionTimeline): string {
  const own = fn.def.childForFieldName("name")?.text ?? "";
  return fn.owner ? `${fn.owner}.${own}` : own;
}

/**
 * How certain a change of a startup variable (a write or a removal) in a function the module never
 * calls is late, given what initialised CUDA before it: `error` when the function initialised CUDA
 * itself, then changed the variable; `warning` when the module above did (the change is late
 * whenever the function runs in this process, but a helper may run it only to prepare a child's
 * environment); null when only a module-level import came first (eager-init modules, a default
 * list, do not make a helper's change certainly late: on the ecosystem corpus, DeepSpeed's and
 * gpt-neox's test helpers set CUDA_VISIBLE_DEVICES after `import deepspeed` for the worker
 * processes they start next).
 */
export function lateInFunction(fn: Pick<FunctionTimeline, "events">, frozenBy: InitEvent): "error" | "warning" | null {
  if (fn.events.includes(frozenBy)) return "error";
  return /import/.test(frozenBy.node.type) ? null : "warning";
}

/**
 * The hooks a serving framework calls in a worker process it starts with the `spawn` method, after
 * the worker has imported the module that defines the class (unpickling the instance imports it, its
 * top-level imports included, the `if __name__ == "__main__":` block left out), by the base class's
 * path and the method's name. LitServe: `LitServer.launch_inference_worker` starts every inference
 * worker with `mp.get_context("spawn")` and its `inference_worker` calls `lit_api.setup(device)`
 * first (Lightning-AI/LitServe@793930108a src/litserve/server.py:303 and
 * src/litserve/loops/loops.py:60, 2025-01; still so at 1311d5b4ae, loops.py:81). A startup
 * variable written there comes after every module-level import of the module, in that worker.
 */
const SPAWNED_WORKER_HOOKS: ReadonlyArray<{ base: string; method: string; how: string }> = [
  {
    base: "litserve.LitAPI",
    method: "setup",
    how: "LitServe calls it in each inference worker it spawns, after the worker has imported this module",
  },
  {
    base: "litserve.api.LitAPI",
    method: "setup",
    how: "LitServe calls it in each inference worker it spawns, after the worker has imported this module",
  },
];

/**
 * Why a module-level import that initialised CUDA comes before a function's write in every run,
 * when the function is a method a framework calls in a worker process it spawns (SPAWNED_WORKER_HOOKS)
 * of a module-level class whose base names that framework's class; else null. Preview: measured on
 * no public code yet.
 */
export function spawnedWorkerHook(ctx: RuleContext, fn: FunctionTimeline): string | null {
  const method = fn.def.childForFieldName("name")?.text;
  const cls = fn.owner ? ctx.model.classes.get(fn.owner) : undefined;
  if (!method || !cls) return null;
  const def = cls.type === "decorated_definition" ? cls.childForFieldName("definition") : cls;
  const bases = def?.childForFieldName("superclasses")?.namedChildren ?? [];
  for (const b of bases) {
    const path = ctx.model.resolve(b);
    const hook = SPAWNED_WORKER_HOOKS.find((h) => h.base === path && h.method === method);
    if (hook) return hook.how;
  }
  return null;
}

/** Whether a spawned worker runs `node` when it imports the module: not in an `if __name__ == "__main__":` block. */
function runsInWorker(node: SyntaxNode): boolean {
  for (let n: SyntaxNode | null = node.parent; n; n = n.parent) {
    if (n.type === "if_statement" && /__main__/.test(n.childForFieldName("condition")?.text ?? "")) return false;
  }
  return true;
}

/**
 * GPU001 on removals (events.ts `EnvDeleteEvent`): `del os.environ[K]` or `os.environ.pop(K)` of a
 * startup variable after CUDA initialised is as late as a write: the process keeps what CUDA read
 * (verify/GPU001-delete-after-init; recall case direct-visible-devices-deleted-before-second-model).
 * At module level and in the functions the module never calls (error when the function itself
 * initialised CUDA first, warning when the module above did; not after a mere import). No fix.
 */
function removalFindings(ctx: RuleContext, childFacts: ChildProcessFacts): void {
  const done = new Set<number>();
  const report = (d: EnvDeleteEvent, frozenBy: InitEvent, where: string, severity?: "warning") => {
    if (done.has(d.node.id) || startsChildAfter(ctx, d.node, childFacts) || restores(ctx, d)) return;
    done.add(d.node.id);
    ctx.report({
      range: nodeRange(d.node),
      ...(severity ? { severity } : {}),
      message: `${d.variable} is removed after CUDA was initialised by ${initialisedBy(ctx, frozenBy)}${where}: the removal has no effect in this process${d.variable === "CUDA_VISIBLE_DEVICES" ? " (the program still sees only the GPUs it saw when CUDA initialised, numbered from 0)" : ""}`,
      related: [initialisedHere(frozenBy)],
    });
  };
  const removal = (e: TimelineEvent): e is EnvDeleteEvent =>
    e.kind === "envDelete" && STARTUP_VARIABLES.includes(e.variable);
  for (const d of ctx.model.events.filter(removal)) {
    const { frozenBy } = stateBefore(ctx.model, d);
    if (frozenBy) report(d, frozenBy, "");
  }
  for (const fn of ctx.model.functionTimelines) {
    const removals = fn.events.filter(removal);
    if (!removals.length) continue;
    const stateOf = statesInFunction(ctx.model, fn);
    for (const d of removals) {
      const { frozenBy } = stateOf(d);
      const verdict = frozenBy ? lateInFunction(fn, frozenBy) : null;
      if (verdict)
        report(d, frozenBy!, ` whenever \`${timelineName(fn)}()\` runs`, verdict === "error" ? undefined : verdict);
    }
  }
}

/**
 * Whether a removal puts the environment back as it was rather than choosing GPUs: it sits in a
 * `finally:` clause, or in an `if` that also writes the same variable (in practice the other branch
 * writes the saved value: `if old is None: del os.environ[K] else: os.environ[K] = old`). Such code restores `os.environ` for what runs
 * later (child processes, other tests), not this process's CUDA (public code read for GPU001's
 * removal check: context managers and test fixtures that restore the variable).
 */
function restores(ctx: RuleContext, d: EnvDeleteEvent): boolean {
  let branch: SyntaxNode | null = null;
  for (let p = d.node.parent; p && p.type !== "function_definition" && p.type !== "module"; p = p.parent) {
    if (p.type === "finally_clause") return true;
    if (!branch && p.type === "if_statement") branch = p;
  }
  if (!branch) return false;
  const b = branch;
  return ctx.model
    .statementWrites()
    .some(
      ({ statement, writes }) =>
        statement.startIndex >= b.startIndex &&
        statement.endIndex <= b.endIndex &&
        writes.some((w) => w.variable === d.variable),
    );
}

/** A write's identity: its place and variable. */
const writeKey = (w: EnvWriteEvent): string => `${w.range.start.line}:${w.range.start.character}:${w.variable}`;

/**
 * The frameworks that initialised CUDA in the notebook's running kernel and freeze `variable`
 * (frameworks.ts `freezes` at the `driver` depth: `torch.cuda.is_initialized()` is true only after
 * torch's lazy init, which freezes the allocator variables too). Empty for a file, a notebook
 * whose kernel is not known, or a kernel where nothing that reads `variable` initialised yet.
 */
function frozenInKernel(ctx: RuleContext, variable: string) {
  return (ctx.runningKernel?.initialisedBy ?? []).filter((f) => freezes(f, "driver", variable));
}

/** The restart a finding offers: CUDA_VISIBLE_DEVICES with a literal value asks for its ids; else the selection as it is. */
function kernelRestartOf(w: EnvWriteEvent): KernelRestart {
  const ids =
    w.variable === "CUDA_VISIBLE_DEVICES" && w.literal !== null
      ? w.literal
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : null;
  return { variable: w.variable, devices: ids && ids.length ? ids : null };
}

/**
 * GPU001 from the running kernel (issue 42 item 2): in a notebook whose kernel reports CUDA
 * initialised, every module-level write of a startup variable that the kernel froze has no effect
 * when its cell runs, whatever the cells' order says; the writes the timeline already reported
 * (`reported`, by {@link writeKey}) are not reported twice.
 */
function runningKernelFindings(ctx: RuleContext, reported: ReadonlySet<string>): void {
  if (!ctx.notebook || !ctx.runningKernel?.initialisedBy.length) return;
  for (const w of envWrites(ctx.model)) {
    if (!STARTUP_VARIABLES.includes(w.variable) || w.form === "putenv" || reported.has(writeKey(w))) continue;
    const by = frozenInKernel(ctx, w.variable);
    if (!by.length) continue;
    const stays =
      w.variable === "CUDA_VISIBLE_DEVICES"
        ? ` (the kernel stays on the GPUs it started with: CUDA_VISIBLE_DEVICES=${ctx.runningKernel.cudaVisibleDevices ?? "unset, every GPU"})`
        : "";
    ctx.report({
      range: w.range,
      message: `${w.variable} is set here, but it has no effect in the running kernel: CUDA was initialised there (by ${frameworksText(by)}, as the kernel reports)${stays}. Restart the kernel, then run this cell before any CUDA call`,
      kernelRestart: kernelRestartOf(w),
    });
  }
}
