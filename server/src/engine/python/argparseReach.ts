// What GPU044 reads of a module's argparse calls and of the calls that lead from a launched file to
// them: the option strings of `add_argument`, whether a parse reads sys.argv strictly, and, per
// scope of the module (a module-level function, the module level itself), the calls it makes into
// other modules (dotted paths, as the module's imports bind them) and into the module's own
// functions. python/project.ts `ProjectIndex` follows these from the file that
// `python -m torch.distributed.launch` starts into the module that declares `--local_rank`.
//
// argparse (docs.python.org/3/library/argparse.html#partial-parsing): parse_known_args() "works much
// like parse_args() except that it does not produce an error when extra arguments are present";
// a module that calls it anywhere is taken as setting the launcher's word aside (GPU044 is silent).
import type { Range } from "../types";
import type { ModuleModel } from "./model";
import { stringValue, type SyntaxNode } from "./parser";
import { nodeRange } from "./events";
import { isMainGuard } from "./walker";

/** The scope of a module's own top-level statements (what importing it runs). */
export const MODULE_SCOPE = "";
/** The scope of an `if __name__ == "__main__":` block at module level (runs only when the file is the program). */
export const MAIN_SCOPE = "<main>";
/** The scope of a module-level class (its methods are not followed as functions). */
export const CLASS_SCOPE = "<class>";

/** A call or import of another module: the dotted path it names (relative paths keep their dots) and where it is. */
export interface PathSite {
  path: string;
  range: Range;
}

/** What one scope of a module does that GPU044 follows. */
export interface ScopeCalls {
  /** Calls whose function resolves through the module's imports to a dotted path (`megatron.arguments.parse_args`). */
  calls: PathSite[];
  /** The module's own module-level functions it calls by name. */
  locals: string[];
  /** The modules it imports (`a.b` for `import a.b`, `a.b.c` for `from a.b import c`). */
  imports: PathSite[];
  /** It calls `X.parse_args()` on the command line itself ({@link isStrictParse}). */
  parses: boolean;
}

/** A module's scopes (module-level function names, {@link MODULE_SCOPE}, {@link MAIN_SCOPE}, {@link CLASS_SCOPE}) and its argparse facts. */
export interface ModuleCalls {
  scopes: Map<string, ScopeCalls>;
  /** Its module-level function names. */
  functions: Set<string>;
  /** It calls `parse_known_args` or `parse_known_intermixed_args` somewhere. */
  knownArgs: boolean;
  /** Some `add_argument` of it declares `--local-rank` (or a longer option that abbreviates to it). */
  dashed: boolean;
}

/** The positional string arguments of an `add_argument(...)` call (its option strings), with their nodes. */
export function optionStrings(call: SyntaxNode): Array<{ value: string; node: SyntaxNode }> {
  const out: Array<{ value: string; node: SyntaxNode }> = [];
  for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
    if (!a || a.type === "keyword_argument") continue;
    const v = stringValue(a);
    if (v !== null) out.push({ value: v, node: a });
  }
  return out;
}

/** The method name of a call `x.name(...)`, or null. */
export function methodOf(call: SyntaxNode): string | null {
  const fn = call.childForFieldName("function");
  return fn?.type === "attribute" ? (fn.childForFieldName("attribute")?.text ?? null) : null;
}

/** Whether a call is `parse_known_args` / `parse_known_intermixed_args` (unknown words set aside, no error). */
export const isKnownArgsParse = (call: SyntaxNode): boolean => {
  const m = methodOf(call);
  return m === "parse_known_args" || m === "parse_known_intermixed_args";
};

/** Whether a call is `X.parse_args()` reading sys.argv: no argument, `None`, `args=None` or `sys.argv[1:]`. */
export function isStrictParse(call: SyntaxNode): boolean {
  if (methodOf(call) !== "parse_args") return false;
  const args = (call.childForFieldName("arguments")?.namedChildren ?? []).filter(
    (a): a is SyntaxNode => !!a && a.type !== "comment",
  );
  if (args.length === 0) return true;
  if (args.length !== 1) return false;
  const value =
    args[0].type === "keyword_argument"
      ? args[0].childForFieldName("name")?.text === "args"
        ? args[0].childForFieldName("value")
        : null
      : args[0];
  return value?.text === "None" || value?.text.replace(/\s/g, "") === "sys.argv[1:]";
}

/** The module-level statement holding `node` (its ancestor whose parent is the module), or null. */
function topStatement(node: SyntaxNode): SyntaxNode | null {
  let n: SyntaxNode | null = node;
  while (n?.parent && n.parent.type !== "module") n = n.parent;
  return n?.parent ? n : null;
}

/**
 * The scope of `node` in its module: the name of the module-level function holding it (at any
 * depth: nested functions and lambdas count as their function's), {@link CLASS_SCOPE} in a class,
 * {@link MAIN_SCOPE} under `if __name__ == "__main__":`, else {@link MODULE_SCOPE}.
 */
export function scopeOf(node: SyntaxNode): string {
  let st = topStatement(node);
  if (st?.type === "decorated_definition") st = st.childForFieldName("definition");
  if (!st) return MODULE_SCOPE;
  if (st.type === "function_definition") return st.childForFieldName("name")?.text ?? CLASS_SCOPE;
  if (st.type === "class_definition") return CLASS_SCOPE;
  if (st.type === "if_statement" && isMainGuard(st)) return MAIN_SCOPE;
  return MODULE_SCOPE;
}

/** The dotted paths an import statement imports (see {@link ScopeCalls.imports}). */
function importedPaths(st: SyntaxNode): string[] {
  const nameOf = (n: SyntaxNode | null) => (n?.type === "aliased_import" ? n.childForFieldName("name") : n)?.text;
  if (st.type === "import_statement")
    return st.childrenForFieldName("name").flatMap((n) => (nameOf(n) ? [nameOf(n)!] : []));
  const from = st.childForFieldName("module_name")?.text;
  if (!from) return [];
  const join = (name: string) => (from.endsWith(".") ? `${from}${name}` : `${from}.${name}`);
  const names = st.childrenForFieldName("name").flatMap((n) => (nameOf(n) ? [join(nameOf(n)!)] : []));
  return names.length ? names : [from];
}

/** {@link ModuleCalls} of a module's model (every call and import of the file). */
export function moduleCalls(model: ModuleModel): ModuleCalls {
  const scopes = new Map<string, ScopeCalls>();
  const at = (node: SyntaxNode): ScopeCalls => {
    const s = scopeOf(node);
    let c = scopes.get(s);
    if (!c) scopes.set(s, (c = { calls: [], locals: [], imports: [], parses: false }));
    return c;
  };
  let knownArgs = false,
    dashed = false;
  for (const call of model.nodesOfType("call")) {
    if (!call) continue;
    const method = methodOf(call);
    if (method === "parse_known_args" || method === "parse_known_intermixed_args") knownArgs = true;
    if (method === "add_argument" && optionStrings(call).some((o) => o.value.startsWith("--local-rank"))) dashed = true;
    const fn = call.childForFieldName("function");
    if (fn?.type !== "identifier" && fn?.type !== "attribute") continue;
    const path = model.resolve(fn);
    // A function of another module (`arguments.parse_args()` is the project's function, not argparse's).
    if (path && !path.includes("()")) at(call).calls.push({ path, range: nodeRange(call) });
    else if (fn.type === "identifier") {
      if (!path && model.functions.has(fn.text)) at(call).locals.push(fn.text);
    } else if (isStrictParse(call)) at(call).parses = true;
  }
  for (const st of model.nodesOfType(["import_statement", "import_from_statement"]))
    if (st) for (const path of importedPaths(st)) at(st).imports.push({ path, range: nodeRange(st) });
  return { scopes, functions: new Set(model.functions.keys()), knownArgs, dashed };
}

/** The scopes a call of `scope` runs in its own module: itself and the module functions it calls by name, transitively. */
export function closureOf(m: ModuleCalls, scope: string): Set<string> {
  const out = new Set<string>([scope]);
  const todo = [scope];
  while (todo.length) {
    for (const next of m.scopes.get(todo.pop()!)?.locals ?? [])
      if (!out.has(next)) {
        out.add(next);
        todo.push(next);
      }
  }
  return out;
}

/**
 * What reaching each scope of the declaring module `m` does with a parser declared in `declaring`
 * (the scopes of its `add_argument` calls), by scope: `parses` when the scope, or a module function
 * it calls, parses the command line strictly and the option is declared on the way or at module
 * level (which the import runs before any call); `caller` when the scope itself declares it
 * without parsing (its caller must parse, python/project.ts checks that). Only
 * module-level functions and {@link MODULE_SCOPE} (reached by an import) are targets; none when the
 * module calls `parse_known_args` anywhere.
 */
export function parseTargets(m: ModuleCalls, declaring: ReadonlySet<string>): Map<string, "parses" | "caller"> {
  const out = new Map<string, "parses" | "caller">();
  if (m.knownArgs) return out;
  const moduleDeclares = declaring.has(MODULE_SCOPE);
  for (const scope of [MODULE_SCOPE, ...m.functions]) {
    const reached = closureOf(m, scope);
    const declaresOwn = [...declaring].some((d) => reached.has(d));
    if (!declaresOwn && !moduleDeclares) continue;
    if ([...reached].some((s) => m.scopes.get(s)?.parses)) out.set(scope, "parses");
    // A function that adds the option to a parser it does not parse: its caller's parse counts.
    else if (declaresOwn && scope !== MODULE_SCOPE) out.set(scope, "caller");
  }
  return out;
}
