/**
 * What a Python program does with its CUDA device, as GPU075 asks it of the two sides of a child
 * process start: the child (a project module started with `python -m`), whose CUDA work may be on
 * the default device, and the parent (a file the project's scripts start once per GPU), which may
 * pick its GPU by the local rank. Everything is read from the syntax tree (the module model).
 */
import { SET_DEVICE_PATHS } from "../frameworks";
import type { ModuleModel } from "./model";
import { stringValue, type SyntaxNode } from "./parser";
import { RankFlow } from "./rankFlow";
import { callArgs, calleePath } from "../rules/shared/py";
import { closureOf, MAIN_SCOPE, MODULE_SCOPE, moduleCalls, scopeOf } from "./argparseReach";

/** Where a module uses CUDA (1-based line) and how, for messages: `torch.device("cuda")`. */
export interface DeviceSite {
  line: number;
  form: string;
}

/** The environment variables whose read means the program knows its rank (and may pick a device by it). */
const RANK_READS = ["LOCAL_RANK", "RANK", "SLURM_LOCALID", "SLURM_PROCID", "OMPI_COMM_WORLD_LOCAL_RANK"];

/** Calls that choose the current device, or a device for a block (torch.cuda.device is a context manager). */
const CHOOSES_DEVICE: ReadonlySet<string> = new Set([...SET_DEVICE_PATHS, "torch.cuda.device"]);

/** `"cuda"` as a string literal (no ordinal): the current device (PyTorch, CUDA semantics). */
const isDefaultCuda = (n: SyntaxNode | null | undefined): boolean => !!n && stringValue(n) === "cuda";

/**
 * How one call uses the default CUDA device: `torch.device("cuda")`, `device="cuda"` given to a
 * torch function, `x.cuda()` without an argument, `x.to("cuda")`; null otherwise.
 */
function defaultUseOf(model: ModuleModel, call: SyntaxNode): string | null {
  const path = calleePath(model, call);
  const { positional, keywords } = callArgs(call);
  if (path === "torch.device" && positional.length === 1 && isDefaultCuda(positional[0])) return 'torch.device("cuda")';
  if (path?.startsWith("torch.") && isDefaultCuda(keywords.get("device"))) return `${path}(device="cuda")`;
  const fn = call.childForFieldName("function");
  const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
  if (path?.startsWith("torch.") || !model.frameworks.has("torch")) return null;
  if (method === "cuda" && positional.length === 0 && keywords.size === 0) return ".cuda()";
  if (method === "to" && positional.length >= 1 && isDefaultCuda(positional[0])) return '.to("cuda")';
  return null;
}

/**
 * Whether the module may choose its device itself: it calls torch.cuda.set_device (or
 * `torch.accelerator.set_device_index`, or enters `torch.cuda.device(...)`), writes
 * CUDA_VISIBLE_DEVICES, names a CUDA device with an ordinal (`"cuda:1"`, `f"cuda:{i}"`,
 * `torch.device("cuda", i)`, `.cuda(i)`), builds a device from a value (`torch.device(args.device)`),
 * or reads a rank variable or a variable that names a device or GPU.
 */
function choosesDevice(model: ModuleModel): boolean {
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const path = calleePath(model, call);
    if (path && CHOOSES_DEVICE.has(path)) return true;
    const { positional, keywords } = callArgs(call);
    if (path === "torch.device" && !(positional.length === 1 && stringValue(positional[0]) !== null)) return true;
    const fn = call.childForFieldName("function");
    const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
    if (method === "cuda" && !path?.startsWith("torch.") && (positional.length > 0 || keywords.size > 0)) return true;
  }
  // A string (or f-string) whose text names an ordinal, `cuda:` followed by anything.
  if (model.nodesOfType("string").some((s) => !!s && s.text.includes("cuda:"))) return true;
  if (model.statementWrites().some((w) => w.writes.some((x) => x.variable === "CUDA_VISIBLE_DEVICES"))) return true;
  return model.events.some(
    (e) => e.kind === "envRead" && (RANK_READS.includes(e.variable) || /DEVICE|GPU/i.test(e.variable)),
  );
}

/**
 * The module's first use of the default CUDA device ({@link defaultUseOf}) in what running it runs
 * (its module level and `__main__` block, and the module functions they call by name), when it never chooses
 * a device itself ({@link choosesDevice}) and imports no module of the project (which could choose
 * one for it: `isProjectModule`); null otherwise. Only torch's forms are read.
 */
export function defaultDeviceUse(model: ModuleModel, isProjectModule: (path: string) => boolean): DeviceSite | null {
  if (!model.frameworks.has("torch")) return null;
  if ([...model.symbols.values()].some((p) => isProjectModule(p))) return null;
  // What running the module runs: its module level and `__main__` block, and the module functions they call by name.
  const calls = moduleCalls(model);
  const runs = new Set([...closureOf(calls, MODULE_SCOPE), ...closureOf(calls, MAIN_SCOPE)]);
  let first: DeviceSite | null = null;
  for (const call of model.nodesOfType("call")) {
    if (!call || !runs.has(scopeOf(call))) continue;
    const form = defaultUseOf(model, call);
    if (form) {
      first = { line: call.startPosition.row + 1, form };
      break;
    }
  }
  return first && !choosesDevice(model) ? first : null;
}

/** The module's first `torch.cuda.set_device(x)` (or `torch.accelerator.set_device_index(x)`) whose argument is the local rank (python/rankFlow.ts), anywhere in the file; null when none. */
function localRankCall(model: ModuleModel): SyntaxNode | null {
  let flow: RankFlow | null = null;
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const path = calleePath(model, call);
    if (!path || !SET_DEVICE_PATHS.includes(path)) continue;
    const arg = callArgs(call).positional[0];
    if (!arg) continue;
    flow ??= new RankFlow(model);
    if (flow.origin(arg).kind === "local") return call;
  }
  return null;
}

/**
 * The module's first `torch.cuda.set_device(x)` whose argument is the local rank
 * (`int(os.environ["LOCAL_RANK"])` through names, `args.local_rank`, ...), anywhere in the file,
 * with how it is written; null when none.
 */
export function localRankDevice(model: ModuleModel): DeviceSite | null {
  const call = localRankCall(model);
  if (!call) return null;
  const fn = call.childForFieldName("function")?.text ?? "";
  const arg = callArgs(call).positional[0]?.text ?? "";
  return { line: call.startPosition.row + 1, form: `${fn}(${arg})` };
}

/** Names that mark a test of the process's rank (`if rank == 0:`, `if is_main_process():`, `if accelerator.is_local_main_process:`). */
const RANK_TEST = /rank|main_process|is_master|process_index|local_main/i;

/** Whether a condition names the rank (a name holding rank, main_process, is_master, process_index, local_main). */
function testsRank(cond: SyntaxNode | null | undefined): boolean {
  if (!cond) return false;
  const names = [cond, ...cond.descendantsOfType(["identifier", "attribute"])];
  return names.some((n) => !!n && (n.type === "identifier" || n.type === "attribute") && RANK_TEST.test(n.text));
}

/** Whether an enclosing `if`/`elif`/`while`/conditional expression of `node` (inside its function) tests the rank: then only some ranks run it. */
export function underRankTest(node: SyntaxNode): boolean {
  for (let p = node.parent; p && p.type !== "function_definition"; p = p.parent) {
    const cond =
      p.type === "if_statement" || p.type === "elif_clause" || p.type === "while_statement"
        ? p.childForFieldName("condition")
        : p.type === "conditional_expression"
          ? p.namedChildren[1]
          : null;
    if (testsRank(cond)) return true;
  }
  return false;
}

const EXITS = ["return_statement", "raise_statement", "continue_statement", "break_statement"];
const EXIT_CALLS = new Set(["sys.exit", "exit", "quit", "os._exit"]);

/**
 * Whether only some ranks reach `node`: a rank test around it in its function ({@link underRankTest}),
 * or an `if` on the rank before it in the same function (not around it) whose body leaves
 * (`return`, `raise`, `continue`, `break`, `sys.exit(...)`): `if rank != 0: return`.
 */
export function rankGated(model: ModuleModel, node: SyntaxNode): boolean {
  if (underRankTest(node)) return true;
  let fn: SyntaxNode | null = null;
  for (let p = node.parent; p && !fn; p = p.parent) if (p.type === "function_definition") fn = p;
  // At module level: every chunk's `if` statements (a chunk's root holds only its own statements).
  const ifs = fn ? fn.descendantsOfType("if_statement") : model.nodesOfType("if_statement");
  return ifs.some((i) => {
    if (!i || i.endIndex > node.startIndex || !testsRank(i.childForFieldName("condition"))) return false;
    const body = i.childForFieldName("consequence");
    if (!body) return false;
    if (body.descendantsOfType(EXITS).length) return true;
    return body
      .descendantsOfType("call")
      .some((c) => !!c && EXIT_CALLS.has(model.resolve(c.childForFieldName("function")) ?? ""));
  });
}

/** A call made after the rank's device is set, in the same function: where, and the dotted path it calls. */
export interface RankCall {
  line: number;
  text: string;
  /** `pkg.mod.func`, or `pkg.mod.Cls().method` for a method of an instance made from a class. */
  path: string;
}

const SCOPES = new Set(["function_definition", "lambda", "class_definition"]);
const enclosingScope = (n: SyntaxNode): SyntaxNode | null => {
  for (let p = n.parent; p; p = p.parent) if (SCOPES.has(p.type)) return p;
  return null;
};

/**
 * The class a name holds at `at` when one assignment makes it from a class call: in the function
 * `scope`, its last `name = Cls(...)` before `at`, else the module-level one (`TUNER = Autotuner(...)`);
 * the class's dotted path, or null.
 */
function instanceClass(model: ModuleModel, name: string, at: SyntaxNode, scope: SyntaxNode | null): string | null {
  let value: SyntaxNode | null = null;
  if (scope) {
    for (const a of scope.descendantsOfType("assignment")) {
      if (!a || a.startIndex >= at.startIndex || enclosingScope(a)?.id !== scope.id) continue;
      if (a.childForFieldName("left")?.text === name) value = a.childForFieldName("right");
    }
  }
  // A parameter of the function shadows the module-level name.
  const params = scope?.type === "function_definition" ? scope.childForFieldName("parameters") : null;
  const shadowed = !!params?.descendantsOfType("identifier").some((n) => n?.text === name);
  if (!value && !shadowed) value = model.valueOf(name, at.startIndex);
  if (value?.type !== "call") return null;
  const path = model.resolve(value.childForFieldName("function"));
  return path && !path.includes("()") ? path : null;
}

/**
 * The local-rank device of the module ({@link localRankCall}) and the calls that run after it in
 * the same function (or at module level), outside a rank test ({@link underRankTest}) and outside
 * nested functions, each with the dotted path it calls: resolved as the module imports it, or for
 * `obj.method(...)` on a name made from a class call (`TUNER = Autotuner(...)`), `Cls().method`.
 * Null when the module sets no device by the local rank.
 */
export function callsAfterRankDevice(model: ModuleModel): { device: DeviceSite; calls: RankCall[] } | null {
  const set = localRankCall(model);
  const device = localRankDevice(model);
  if (!set || !device) return null;
  const scope = enclosingScope(set);
  const calls: RankCall[] = [];
  for (const c of model.nodesOfType("call")) {
    if (!c || c.startIndex < set.endIndex || enclosingScope(c)?.id !== scope?.id) continue;
    if (scope && c.startIndex >= scope.endIndex) continue;
    if (rankGated(model, c)) continue;
    const fn = c.childForFieldName("function");
    let path = model.resolve(fn);
    if (!path && fn?.type === "attribute") {
      const obj = fn.childForFieldName("object");
      const cls = obj?.type === "identifier" ? instanceClass(model, obj.text, c, scope) : null;
      if (cls) path = `${cls}().${fn.childForFieldName("attribute")?.text ?? ""}`;
    }
    if (path) calls.push({ line: c.startPosition.row + 1, text: c.text.split("\n")[0], path });
  }
  return { device, calls };
}
