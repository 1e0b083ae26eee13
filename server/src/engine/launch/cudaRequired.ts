/**
 * Whether a launched Python script needs a CUDA device whatever happens (GPU060): read from the
 * script's tree-sitter parse and model, never from its text. The script needs one when, on the path
 * that runs when it is started (its module level, its `if __name__ == "__main__":` block, and the
 * bodies of its own module-level functions that those call, one level deep), outside any `if`,
 * `elif`/`else`, conditional expression, `and`/`or`, `try`, `while`, `match`, lambda or nested
 * definition:
 * - it stops without CUDA: `if not torch.cuda.is_available(): raise ...` (or `sys.exit(...)`,
 *   `exit()`, `quit()`, `os._exit(...)`), `assert torch.cuda.is_available()`;
 * - or it puts work on CUDA: `x.cuda()`, `x.to("cuda")` (on any value, a torch call's result too:
 *   `nn.Linear(4, 4).cuda()`), a `device="cuda"` argument, `torch.cuda.set_device(...)` and the
 *   other `torch.cuda` calls that start CUDA ({@link STARTS_CUDA});
 * - or it chooses a CUDA device: `torch.device("cuda"|"cuda:N")`.
 * A use under `if torch.cuda.is_available():` or in `"cuda" if torch.cuda.is_available() else "cpu"`
 * is conditional and does not count.
 */
import { ModuleTrees } from "../python/moduleTrees";
import { buildModel, type ModuleModel } from "../python/model";
import { pythonInput, stringValue, type SyntaxNode } from "../python/parser";
import { isMainGuard } from "../python/walker";
import { cudaDeviceOrdinal, DEFAULT_EAGER_INIT_MODULES } from "../frameworks";

/** Where a script needs CUDA: 0-based line and the code, shortened to its first line. */
export interface CudaNeed {
  line: number;
  code: string;
  /**
   * `stops`: it exits or raises without CUDA; `uses`: it puts work on a CUDA device; `chooses`: it makes
   * a CUDA `torch.device` (which starts nothing by itself, but is what the script then puts work on).
   */
  kind: "stops" | "uses" | "chooses";
}

/** `torch.cuda` calls that initialise CUDA and raise without a device (the queries and seeds do not). */
const STARTS_CUDA = new Set([
  "torch.cuda.set_device",
  "torch.cuda.current_device",
  "torch.cuda.synchronize",
  "torch.cuda.get_device_name",
  "torch.cuda.get_device_properties",
  "torch.cuda.get_device_capability",
  "torch.cuda.mem_get_info",
]);

/** Ancestors that make what is inside them conditional (or not run at all). */
const CONDITIONAL = new Set([
  "if_statement",
  "elif_clause",
  "else_clause",
  "conditional_expression",
  "boolean_operator",
  "try_statement",
  "while_statement",
  "match_statement",
  "lambda",
  "function_definition",
  "class_definition",
]);

/** Calls that end the process (`sys.exit`, `os._exit`, the `exit`/`quit` builtins). */
function exits(model: ModuleModel, call: SyntaxNode): boolean {
  const fn = call.childForFieldName("function");
  const path = model.resolve(fn);
  if (path === "sys.exit" || path === "os._exit") return true;
  return fn?.type === "identifier" && (fn.text === "exit" || fn.text === "quit") && path === null;
}

/** Whether `node` runs whenever `scope` (the module, or a followed function) runs. */
function unconditional(node: SyntaxNode, scope: SyntaxNode | null): boolean {
  for (let p = node.parent; p && p.id !== scope?.id; p = p.parent) {
    if (p.type === "module") return scope === null;
    if (p.type === "if_statement" && scope === null && p.parent?.type === "module" && isMainGuard(p)) continue;
    if (CONDITIONAL.has(p.type)) return false;
  }
  return true;
}

const isCudaString = (n: SyntaxNode | null | undefined): boolean => {
  const s = n?.type === "string" ? stringValue(n) : null;
  return s !== null && (s === "cuda" || (cudaDeviceOrdinal(s) ?? -1) >= 0);
};

/** How a call needs CUDA (it puts work on CUDA or starts it, or makes a CUDA `torch.device`), or null. */
function cudaUse(model: ModuleModel, call: SyntaxNode): "uses" | "chooses" | null {
  const fn = call.childForFieldName("function");
  const path = model.resolve(fn);
  if (path !== null && STARTS_CUDA.has(path)) return "uses";
  const args = (call.childForFieldName("arguments")?.namedChildren ?? []).filter((a): a is SyntaxNode => !!a);
  if (
    args.some(
      (a) =>
        a.type === "keyword_argument" &&
        a.childForFieldName("name")?.text === "device" &&
        isCudaString(a.childForFieldName("value")),
    )
  )
    return "uses";
  if (path === "torch.device") return isCudaString(args[0]) ? "chooses" : null;
  // A method called on any value, a torch call's result too (`nn.Linear(4, 4).cuda()`,
  // `torch.ones(1).to("cuda")`); `torch.cuda`'s own functions are named by STARTS_CUDA above.
  if (fn?.type !== "attribute" || (path !== null && path.startsWith("torch.cuda."))) return null;
  const method = fn.childForFieldName("attribute")?.text;
  if (method === "cuda") return "uses";
  return method === "to" && args.some((a) => a.type !== "keyword_argument" && isCudaString(a)) ? "uses" : null;
}

/** `if not torch.cuda.is_available(): raise|exit` or `assert torch.cuda.is_available()`. */
function stopsWithoutCuda(model: ModuleModel, stmt: SyntaxNode): boolean {
  const isAvailable = (n: SyntaxNode | null | undefined) =>
    n?.type === "call" && model.resolve(n.childForFieldName("function")) === "torch.cuda.is_available";
  if (stmt.type === "assert_statement") return isAvailable(stmt.namedChildren[0]);
  const cond = stmt.childForFieldName("condition");
  if (cond?.type !== "not_operator" || !isAvailable(cond.childForFieldName("argument"))) return false;
  const body = stmt.childForFieldName("consequence");
  if (!body) return false;
  return (
    body.descendantsOfType("raise_statement").length > 0 ||
    body.descendantsOfType("call").some((c) => !!c && exits(model, c))
  );
}

/** The module-level functions that the module (or its `__main__` block) calls unconditionally, by name. */
function calledFunctions(model: ModuleModel): SyntaxNode[] {
  const defs = new Map<string, SyntaxNode>();
  for (const d of model.nodesOfType("function_definition")) {
    const at = d.parent?.type === "decorated_definition" ? d.parent : d;
    const name = d.childForFieldName("name")?.text;
    if (name && at.parent?.type === "module") defs.set(name, d);
  }
  const out: SyntaxNode[] = [];
  for (const c of model.nodesOfType("call")) {
    const fn = c.childForFieldName("function");
    const def = fn?.type === "identifier" ? defs.get(fn.text) : undefined;
    if (def && !out.includes(def) && unconditional(c, null)) out.push(def);
  }
  return out;
}

/** The first place (in source order) where `model`'s started path needs CUDA, or null. */
function firstNeed(model: ModuleModel): CudaNeed | null {
  const scopes: Array<SyntaxNode | null> = [null, ...calledFunctions(model)];
  const inScope = (n: SyntaxNode) =>
    scopes.some((s) => (s ? n.startIndex >= s.startIndex && n.endIndex <= s.endIndex : true) && unconditional(n, s));
  let best: CudaNeed | null = null;
  const take = (n: SyntaxNode, kind: CudaNeed["kind"]) => {
    if (best && n.startPosition.row >= best.line) return;
    best = { line: n.startPosition.row, code: n.text.split("\n")[0].trim().slice(0, 80), kind };
  };
  for (const s of model.nodesOfType(["if_statement", "assert_statement"]))
    if (stopsWithoutCuda(model, s) && inScope(s)) take(s, "stops");
  for (const c of model.nodesOfType("call")) {
    const how = cudaUse(model, c);
    if (how && inScope(c)) take(c, how);
  }
  return best;
}

const kept = new Map<string, CudaNeed | null>();

/** Where the script `text` needs CUDA on the path it runs when started (module comment), or null. Never throws. */
export function cudaRequired(text: string): CudaNeed | null {
  if (kept.has(text)) return kept.get(text)!;
  let need: CudaNeed | null = null;
  if (text.includes("cuda")) {
    const tree = ModuleTrees.parse(pythonInput(text), false);
    try {
      need = firstNeed(buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false }));
    } catch {
      need = null;
    } finally {
      tree.delete();
    }
  }
  if (kept.size >= 16) kept.delete(kept.keys().next().value!);
  kept.set(text, need);
  return need;
}
