import type { PythonRule, RuleContext } from "../rule";
import type { ProcessDevice } from "../python/model";
import type { SeveralNodeLaunch } from "../slurmLaunch";
import type { RelatedInfo } from "../types";
import { nodeRange } from "../python/events";
import { stringValue, type SyntaxNode } from "../python/parser";
import { localRankDevice, rankGated } from "../python/childDevice";
import { CLASS_SCOPE, closureOf, MAIN_SCOPE, MODULE_SCOPE, moduleCalls, scopeOf } from "../python/argparseReach";
import { callArgs, calleePath } from "./shared/py";
import { SUBPROCESS_STARTS } from "./shared/childProcess";

const CUDA_GUIDE =
  'NVIDIA, CUDA C++ Programming Guide, "Device Selection": "A host thread can set the device it operates on at any time by calling cudaSetDevice() ... If no call to cudaSetDevice() is made, the current device is device 0." CUDA Runtime API, cudaSetDevice: "Sets device as the current device for the calling host thread"';
const TORCH_DOC =
  'PyTorch, CUDA semantics (https://pytorch.org/docs/stable/notes/cuda.html): "torch.cuda ... keeps track of the currently selected GPU, and all CUDA tensors you allocate will by default be created on that device"; `torch.device(\'cuda\')` is the "Default CUDA device"; torch.cuda.set_device: "Set the current device"';
const SUBPROCESS_DOC =
  "Python documentation, subprocess.Popen: without `env` the child inherits the current process' environment (CUDA_VISIBLE_DEVICES included, unchanged); the current CUDA device is no part of it";

/** The command of a subprocess call that starts `python -m MODULE` (its first element `sys.executable` or a literal `python`/`python3[.N]`), or null. */
function startedModule(ctx: RuleContext, call: SyntaxNode): { module: string; node: SyntaxNode } | null {
  const { positional, keywords } = callArgs(call);
  const cmd = positional[0] ?? keywords.get("args");
  if (!cmd || (cmd.type !== "list" && cmd.type !== "tuple")) return null;
  const words = cmd.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment");
  const first = words[0];
  const program = first ? stringValue(first) : null;
  const isPython =
    (first && ctx.model.resolve(first) === "sys.executable") ||
    (program !== null && /^python(3(\.\d+)?)?$/.test(program));
  if (!isPython) return null;
  for (let i = 1; i < words.length; i++) {
    const w = stringValue(words[i]);
    // Interpreter options before `-m` (`-u`, `-O`, `-B`); anything else (a script, `-c`, a value) ends the search.
    if (w === "-m") {
      const mod = stringValue(words[i + 1]);
      if (!mod || !/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(mod)) return null;
      // The child's own arguments: one that is not a literal, or names a device, may give it its GPU.
      const rest = words.slice(i + 2).map((n) => stringValue(n));
      return rest.every((a) => a !== null && !/device|gpu|cuda|rank/i.test(a))
        ? { module: mod, node: words[i + 1] }
        : null;
    }
    if (w === null || !/^-[uOBsSIEq]+$/.test(w)) return null;
  }
  return null;
}

/**
 * Why the code that starts the child runs once per GPU with its own current device: this file sets
 * it (`self`), or a file the project's scripts start sets it and reaches this code, through a call
 * made right after in the same function (`direct`: the call and the launch's workers per node) or
 * through its imports and calls (`reach`).
 */
type Parent =
  | { kind: "self"; line: number; form: string }
  | {
      kind: "launched";
      launch: SeveralNodeLaunch;
      device: ProcessDevice;
      launched: string;
      via: { where: string; text: string; direct: boolean };
    };

/**
 * The scopes of this module whose run runs `scope` (as targets of ProjectLookup.launchReach): for a
 * module-level function, each module-level function whose calls by name lead to it and the module
 * level; for module-level code and methods, the module level (any use of the module).
 */
function targetsFor(ctx: RuleContext, scope: string): Map<string, "parses"> {
  if (scope === MODULE_SCOPE || scope === CLASS_SCOPE) return new Map([[MODULE_SCOPE, "parses"]]);
  const calls = moduleCalls(ctx.model);
  const out = new Map<string, "parses">();
  for (const s of [MODULE_SCOPE, ...calls.functions]) if (closureOf(calls, s).has(scope)) out.set(s, "parses");
  return out;
}

/** The function definition directly holding `node` (not a lambda's or a nested class's), or null. */
function ownFunction(node: SyntaxNode): SyntaxNode | null {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "function_definition") return p;
    if (p.type === "lambda" || p.type === "class_definition") return null;
  }
  return null;
}

/**
 * For a call in a method of a module-level class: the class's name and the methods whose
 * `self.name(...)` calls, outside rank tests, lead to that method (itself included); null otherwise.
 */
function methodsReaching(ctx: RuleContext, call: SyntaxNode): { cls: string; methods: string[] } | null {
  const fn = ownFunction(call);
  const body = fn?.parent?.type === "decorated_definition" ? fn.parent.parent : fn?.parent;
  const cls = body?.type === "block" ? body.parent : null;
  const name = cls?.type === "class_definition" ? cls.childForFieldName("name")?.text : null;
  if (!fn || !cls || !name || ctx.model.classes.get(name)?.id !== cls.id) return null;
  const defs = cls
    .descendantsOfType("function_definition")
    .filter((d): d is SyntaxNode => !!d && ownFunction(d) === null);
  const callers = new Map<string, Set<string>>();
  for (const d of defs) {
    const own = d.childForFieldName("name")?.text ?? "";
    const self = d.childForFieldName("parameters")?.namedChildren[0]?.text;
    for (const c of d.descendantsOfType("call")) {
      const f = c?.childForFieldName("function");
      if (!c || f?.type !== "attribute" || f.childForFieldName("object")?.text !== self || rankGated(ctx.model, c))
        continue;
      const target = f.childForFieldName("attribute")?.text ?? "";
      if (!callers.has(target)) callers.set(target, new Set());
      callers.get(target)!.add(own);
    }
  }
  const start = fn.childForFieldName("name")?.text ?? "";
  const out = new Set([start]);
  const todo = [start];
  while (todo.length) {
    for (const c of callers.get(todo.pop()!) ?? []) {
      if (out.has(c)) continue;
      out.add(c);
      todo.push(c);
    }
  }
  return { cls: name, methods: [...out] };
}

/**
 * A file that the project's scripts start (ctx.startedFiles) and that sets its device by the local
 * rank, with how it runs the code around `call`: a call of its own function or method right after
 * the device is set (ProjectLookup.rankCaller), else its imports and calls (launchReach).
 */
function launchedParent(ctx: RuleContext, call: SyntaxNode, scope: string): Parent | null {
  const project = ctx.project;
  if (!project?.launchReach || !project.processDevice || scope === MAIN_SCOPE) return null;
  const fn = ownFunction(call);
  const callee =
    scope === CLASS_SCOPE
      ? methodsReaching(ctx, call)
      : scope !== MODULE_SCOPE && fn
        ? { functions: [fn.childForFieldName("name")?.text ?? ""] }
        : null;
  const targets = targetsFor(ctx, scope);
  for (const launch of ctx.startedFiles ?? []) {
    const device = project.processDevice({ file: launch.file });
    if (!device?.rankDevice) continue;
    const launched = device.label;
    const direct = callee && project.rankCaller ? project.rankCaller(launch.file, callee) : null;
    if (direct) return { kind: "launched", launch, device, launched, via: { ...direct, direct: true } };
    const reach = targets.size ? project.launchReach(launch.file, targets) : null;
    if (reach)
      return {
        kind: "launched",
        launch,
        device,
        launched: reach.launched,
        via: { where: reach.where, text: "", direct: false },
      };
  }
  return null;
}

/** Whether the finding is certain: the launched file calls this code right after it sets the rank's device, and its launch runs several workers per node. */
const certain = (p: Parent): boolean => p.kind === "launched" && p.via.direct && (p.launch.workersPerNode ?? 0) > 1;

const base = (path: string) => path.replace(/^.*[\\/]/, "");

function parentText(ctx: RuleContext, p: Parent): string {
  if (p.kind === "self") return `this file picks its GPU by the local rank (\`${p.form}\`, ${ctx.where(p.line - 1)})`;
  const rd = p.device.rankDevice!;
  const workers = p.launch.workersPerNode ? ` with ${p.launch.workersPerNode} processes per node` : "";
  const via = p.via.direct
    ? `then calls into this code (\`${p.via.text}\`, ${p.via.where})`
    : `reaches this code (${p.via.where})`;
  return `${base(p.launch.script)} (line ${p.launch.line + 1}) starts ${p.launched}${workers}, which picks its GPU by the local rank (\`${rd.form}\`, ${rd.where}) and ${via}`;
}

function parentRelated(p: Parent): RelatedInfo[] {
  if (p.kind === "self") return [];
  const at = { line: p.launch.line, character: 0 };
  const rd = { line: p.device.rankDevice!.line - 1, character: 0 };
  return [
    { range: { start: at, end: at }, message: `${p.launched} is started here`, file: p.launch.script },
    { range: { start: rd, end: rd }, message: "the rank's GPU becomes the current device here", file: p.device.file },
  ];
}

/** GPU075: a child Python process of a per-GPU process, whose CUDA work is on the default device (cuda:0). */
export const rule: PythonRule = {
  meta: {
    code: "GPU075",
    name: "child-process-loses-current-device",
    severity: "warning",
    fixable: false,
    // A callee resolves to `subprocess.*` only through an import that names `subprocess`, and the
    // command's `"-m"` literal holds `-m`.
    trigger: (t) => t.has("-m") && t.hasWord("subprocess"),
    docs: {
      what: 'Reports `subprocess.Popen/run/call/check_call/check_output([sys.executable, "-m", "pkg.module", ...])` without `env=` in code that runs once per GPU with the rank\'s GPU as its current device, when the started module is a file of the project whose CUDA work is on the default device (`torch.device("cuda")`, `device="cuda"`, `.cuda()`, `.to("cuda")`) and that chooses no device itself. In the default set where a Python file that the project\'s shell or job scripts start with torchrun and a literal `--nproc_per_node` above 1 calls `torch.cuda.set_device(local_rank)` and then, in the same function and outside a rank test, calls the function (or, on an instance made from its class, the method) that starts the child. Preview where the evidence is weaker: the file itself calls `torch.cuda.set_device(local_rank)`, the launch\'s process count is not written as a number, or the started file reaches this code only through its imports and further calls.',
      follows:
        "The subprocess calls of the file (functions and methods included) whose command is a list or tuple literal: `sys.executable` or a literal `python`/`python3`, interpreter flags, `-m` and a literal module name, looked up as an import from this file (its own `.py` file; a package's `__main__` is not followed), with the child's own arguments all literal strings that name no device, GPU or rank; a rank test around the call (`if rank == 0:`, `is_main_process`: a name holding rank, main_process, is_master, process_index), or an earlier `if` on the rank in the same function that leaves it (`if rank != 0: return`, `raise`, `sys.exit()`), silences it. The started module's syntax tree: its uses of the default CUDA device in what running it runs (module level, `__main__` block, and the module functions they call by name), and what would choose a device (`torch.cuda.set_device`, `torch.cuda.device(...)`, a write of CUDA_VISIBLE_DEVICES, a `cuda:` string, `torch.device(x)` with anything but a literal, `.cuda(i)`, a read of LOCAL_RANK/RANK/SLURM_LOCALID/OMPI_COMM_WORLD_LOCAL_RANK or of a variable whose name holds DEVICE or GPU, an import of another project module). The parent: the Python files the project's shell and job scripts start (as GPU039 lists them), each with the largest literal `--nproc_per_node` of its torchrun launches (a `$VAR` assigned once to a number counts), read through their syntax tree for `torch.cuda.set_device(x)` with `x` the local rank (python/rankFlow.ts) and the calls after it in the same function that no rank test gates (around them, or an earlier `if` on the rank that leaves): a module-level function of this file by name, or a method on a name assigned from a call of this file's class (`TUNER = Autotuner(...)`, module level or in that function) whose `self.` calls outside rank tests lead to the method that starts the child. Otherwise (preview) the started file's imports and calls that reach this code (python/project.ts `reach`), or `torch.cuda.set_device(local_rank)` in this file. Not followed: commands built at run time or held in a variable, scripts started by path (`python worker.py`: its folder is the working directory's), `multiprocessing` and `torch.multiprocessing` children, `env=` of any kind (then the rule is silent), branches other than rank tests, and other frameworks' default devices (CuPy, JAX).",
      why: "The current CUDA device is state of the process (of its host thread), not of its environment: a new process starts on device 0 (CUDA C++ Programming Guide, Device Selection) whatever device its parent had selected with `torch.cuda.set_device`, and a child started without `env=` gets the parent's CUDA_VISIBLE_DEVICES unchanged. Under torchrun with several processes per node, each rank works on `cuda:LOCAL_RANK`, but the child of every rank creates its CUDA context and tensors on GPU 0: one GPU holds every rank's children (out of memory, or work timed on a GPU busy with other ranks) while the others get none.",
      example:
        '# train.py, started by `torchrun --nproc_per_node=8 train.py`\nimport os\nimport subprocess\nimport sys\n\nimport torch\n\n\ndef main():\n    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n    # bench/worker.py (a module of this project) uses torch.device("cuda")\n    subprocess.run([sys.executable, "-m", "bench.worker"], check=True)  # GPU075\n',
      fix: '# train.py, started by `torchrun --nproc_per_node=8 train.py`\nimport os\nimport subprocess\nimport sys\n\nimport torch\n\n\ndef main():\n    local_rank = int(os.environ["LOCAL_RANK"])\n    torch.cuda.set_device(local_rank)\n    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(local_rank))\n    subprocess.run([sys.executable, "-m", "bench.worker"], check=True, env=env)\n',
      whenNotToCare:
        "When the child is meant to run on GPU 0 for every rank. With a CUDA_VISIBLE_DEVICES set by the launcher for each process (Slurm's per-task GPU binding), the parent's `set_device(local_rank)` would fail first. The preview findings may be right without being certain: a rank test in a caller (`if rank == 0:` around the call that leads here) makes the child run where its rank's GPU is, and a launch of one process per node leaves only GPU 0 in use.",
      references: [CUDA_GUIDE, TORCH_DOC, SUBPROCESS_DOC],
    },
  },
  check(ctx) {
    const project = ctx.project;
    if (!project?.processDevice) return;
    const calls = ctx.model
      .nodesMentioning("call", ["subprocess", "Popen", "run", "call", "check_call", "check_output"], true)
      .filter((c) => SUBPROCESS_STARTS.has(calleePath(ctx.model, c) ?? ""));
    let self: Parent | null | undefined;
    const byScope = new Map<string, Parent | null>();
    for (const call of calls) {
      const args = callArgs(call);
      if (args.keywords.has("env") || args.positional.some((a) => a.type === "dictionary_splat")) continue;
      const started = startedModule(ctx, call);
      if (!started || rankGated(ctx.model, call)) continue;
      const child = project.processDevice({ module: started.module });
      if (!child?.defaultUse) continue;
      if (self === undefined) {
        const own = localRankDevice(ctx.model);
        self = own ? { kind: "self", ...own } : null;
      }
      const scope = scopeOf(call);
      const key = `${scope}\u0000${ownFunction(call)?.id ?? -1}`;
      if (!byScope.has(key)) byScope.set(key, launchedParent(ctx, call, scope));
      const parent = byScope.get(key) ?? self;
      if (!parent) continue;
      const use = child.defaultUse;
      ctx.report({
        ...(certain(parent) ? {} : { preview: true }),
        range: nodeRange(call.childForFieldName("function") ?? call),
        message: `\`python -m ${started.module}\` runs on GPU 0 whatever this process's GPU: ${parentText(ctx, parent)}, but a new process does not inherit the current device (it starts on device 0) and gets CUDA_VISIBLE_DEVICES unchanged, so ${use.where}'s \`${use.form}\` is GPU 0 in every rank's child; start it with env= narrowing CUDA_VISIBLE_DEVICES to this rank's GPU, or give it its device`,
        related: [
          ...parentRelated(parent),
          {
            range: { start: { line: use.line - 1, character: 0 }, end: { line: use.line - 1, character: 0 } },
            message: `the child's CUDA work on the default device`,
            file: child.file,
          },
        ],
      });
    }
  },
};
