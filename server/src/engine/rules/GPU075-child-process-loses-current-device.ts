import type { PythonRule, RuleContext } from "../rule";
import type { ProcessDevice, ProjectReach } from "../python/model";
import type { SeveralNodeLaunch } from "../slurmLaunch";
import type { RelatedInfo } from "../types";
import { nodeRange } from "../python/events";
import { stringValue, type SyntaxNode } from "../python/parser";
import { localRankDevice } from "../python/childDevice";
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

/** Names that mark a test of the process's rank (`if rank == 0:`, `if is_main_process():`, `if accelerator.is_local_main_process:`). */
const RANK_TEST = /rank|main_process|is_master|process_index|local_main/i;

/** Whether an enclosing `if`/`elif`/`while`/conditional of `node` (inside its function) tests the rank: then only some ranks start the child. */
function underRankTest(node: SyntaxNode): boolean {
  for (let p = node.parent; p && p.type !== "function_definition"; p = p.parent) {
    const cond =
      p.type === "if_statement" ||
      p.type === "elif_clause" ||
      p.type === "while_statement" ||
      p.type === "conditional_expression"
        ? (p.childForFieldName("condition") ?? (p.type === "conditional_expression" ? p.namedChildren[1] : null))
        : null;
    if (!cond) continue;
    const names = [cond, ...cond.descendantsOfType(["identifier", "attribute"])];
    if (names.some((n) => !!n && (n.type === "identifier" || n.type === "attribute") && RANK_TEST.test(n.text)))
      return true;
  }
  return false;
}

/** Why the code that starts the child runs once per GPU with its own current device. */
type Parent =
  | { kind: "self"; line: number; form: string }
  | { kind: "launched"; launch: SeveralNodeLaunch; reach: ProjectReach; device: ProcessDevice };

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

/** A file that the project's scripts start (ctx.startedFiles), that reaches `scope` of this module and sets its device by the local rank. */
function launchedParent(ctx: RuleContext, scope: string): Parent | null {
  const project = ctx.project;
  if (!project?.launchReach || !project.processDevice || scope === MAIN_SCOPE) return null;
  const targets = targetsFor(ctx, scope);
  if (!targets.size) return null;
  for (const launch of ctx.startedFiles ?? []) {
    const device = project.processDevice({ file: launch.file });
    if (!device?.rankDevice) continue;
    const reach = project.launchReach(launch.file, targets);
    if (reach) return { kind: "launched", launch, reach, device };
  }
  return null;
}

const base = (path: string) => path.replace(/^.*[\\/]/, "");

function parentText(ctx: RuleContext, p: Parent): string {
  if (p.kind === "self") return `this file picks its GPU by the local rank (\`${p.form}\`, ${ctx.where(p.line - 1)})`;
  const rd = p.device.rankDevice!;
  return `${base(p.launch.script)} (line ${p.launch.line + 1}) starts ${p.reach.launched}, which picks its GPU by the local rank (\`${rd.form}\`, ${rd.where}) and reaches this code (${p.reach.where})`;
}

function parentRelated(p: Parent): RelatedInfo[] {
  if (p.kind === "self") return [];
  const at = { line: p.launch.line, character: 0 };
  const rd = { line: p.device.rankDevice!.line - 1, character: 0 };
  return [
    { range: { start: at, end: at }, message: `${p.reach.launched} is started here`, file: p.launch.script },
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
    preview: true,
    // A callee resolves to `subprocess.*` only through an import that names `subprocess`, and the
    // command's `"-m"` literal holds `-m`.
    trigger: (t) => t.has("-m") && t.hasWord("subprocess"),
    docs: {
      what: 'Reports `subprocess.Popen/run/call/check_call/check_output([sys.executable, "-m", "pkg.module", ...])` without `env=` in code that runs once per GPU with the rank\'s GPU as its current device, when the started module is a file of the project whose CUDA work is on the default device (`torch.device("cuda")`, `device="cuda"`, `.cuda()`, `.to("cuda")`) and that chooses no device itself. The code runs once per GPU when the file itself calls `torch.cuda.set_device(local_rank)`, or when a file that the project\'s shell or job scripts start calls it and reaches this code through its imports and calls.',
      follows:
        "The subprocess calls of the file (functions and methods included) whose command is a list or tuple literal: `sys.executable` or a literal `python`/`python3`, interpreter flags, `-m` and a literal module name, looked up as an import from this file (its own `.py` file; a package's `__main__` is not followed). The started module's syntax tree: its uses of the default CUDA device, and what would choose a device (`torch.cuda.set_device`, `torch.cuda.device(...)`, a write of CUDA_VISIBLE_DEVICES, a `cuda:` string, a device given to torch that is not a literal, a read of LOCAL_RANK/RANK/SLURM_LOCALID, an import of another project module). The parent: `torch.cuda.set_device(x)` with `x` the local rank (python/rankFlow.ts) in this file, or in a Python file that the project's shell and job scripts start (as GPU039 lists them) and whose imports and calls reach the function (or, for a method or module-level code, the module) that starts the child (python/project.ts `reach`). Not followed: commands built at run time or held in a variable, scripts started by path (`python worker.py`: its folder is the working directory's), `multiprocessing` and `torch.multiprocessing` children, `env=` of any kind (then the rule is silent), rank tests in the callers, and other frameworks' default devices (CuPy, JAX).",
      why: "The current CUDA device is state of the process (of its host thread), not of its environment: a new process starts on device 0 (CUDA C++ Programming Guide, Device Selection) whatever device its parent had selected with `torch.cuda.set_device`, and a child started without `env=` gets the parent's CUDA_VISIBLE_DEVICES unchanged. Under torchrun with several processes per node, each rank works on `cuda:LOCAL_RANK`, but the child of every rank creates its CUDA context and tensors on GPU 0: one GPU holds every rank's children (out of memory, or work timed on a GPU busy with other ranks) while the others get none.",
      example:
        '# train.py, started by `torchrun --nproc_per_node=8 train.py`\nimport os\nimport subprocess\nimport sys\n\nimport torch\n\n\ndef main():\n    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n    # bench/worker.py (a module of this project) uses torch.device("cuda")\n    subprocess.run([sys.executable, "-m", "bench.worker"], check=True)  # GPU075\n',
      fix: '# train.py, started by `torchrun --nproc_per_node=8 train.py`\nimport os\nimport subprocess\nimport sys\n\nimport torch\n\n\ndef main():\n    local_rank = int(os.environ["LOCAL_RANK"])\n    torch.cuda.set_device(local_rank)\n    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(local_rank))\n    subprocess.run([sys.executable, "-m", "bench.worker"], check=True, env=env)\n',
      whenNotToCare:
        "When only one process per node runs (torchrun with one process, local rank 0), or when the child is meant to run on GPU 0 for every rank. With a CUDA_VISIBLE_DEVICES set by the launcher for each process (Slurm's per-task GPU binding), the parent's `set_device(local_rank)` would fail first. Preview: whether every rank reaches the call is not followed into the callers (a rank test there, `if rank == 0:`, makes the child run on the right GPU), nor is the number of processes per node.",
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
      if (!started || underRankTest(call)) continue;
      const child = project.processDevice({ module: started.module });
      if (!child?.defaultUse) continue;
      if (self === undefined) {
        const own = localRankDevice(ctx.model);
        self = own ? { kind: "self", ...own } : null;
      }
      const scope = scopeOf(call);
      if (!self && !byScope.has(scope)) byScope.set(scope, launchedParent(ctx, scope));
      const parent = self ?? byScope.get(scope);
      if (!parent) continue;
      const use = child.defaultUse;
      ctx.report({
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
