/**
 * The Python script a launch command line names (GPU040, GPU042, GPU052): where it is, and what its
 * own command-line options do: which `argparse` destination each option fills, which destination it
 * writes to CUDA_VISIBLE_DEVICES, which it hands to CUDA as a device ordinal. Read from the script's
 * tree-sitter parse and model ({@link launchedScriptFacts}); the answers are empty whenever the code
 * is not of the shapes described there.
 */
import { dirname, isAbsolute, join } from "node:path";
import { ModuleTrees } from "../python/moduleTrees";
import { buildModel, namesVisibleDevices, type ModuleModel } from "../python/model";
import { enclosingFunction, pythonInput, stringValue, type SyntaxNode } from "../python/parser";
import { deviceSlots, namesBoundIn, positionalParams } from "../python/devices";
import { loopsOverDevices } from "../python/deviceLoops";
import { callArgs, isAssignmentTarget } from "../rules/shared/py";
import { isParseArgs } from "../python/rankFlow";
import { DEFAULT_EAGER_INIT_MODULES } from "../frameworks";
import type { EnvWriteEvent } from "../python/events";
import type { Range } from "../types";

/**
 * A path under the running shell script's own folder, `rest` in group 1: `$(dirname "$0")/rest`,
 * `$(dirname "${BASH_SOURCE[0]}")/rest`, `` `dirname $0`/rest `` (bash(1), Special Parameters: "0
 * Expands to the name of the shell or shell script"), as mmdetection's and mmocr's
 * tools/dist_train.sh start `"$(dirname "$0")/train.py"`.
 */
export const SCRIPT_DIR =
  /^(?:\$\(\s*dirname\s+(?:"(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\})"|\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\})\s*\)|`\s*dirname\s+"?\$0"?\s*`)\/(.*)$/;

/**
 * The text of a script named in a launch line: relative to the launching file's folder, then up to
 * three folders above it (a `$(dirname "$0")/` path: in the launching file's folder only); null when
 * not a readable `.py` path. `read`: how files are read (a manifest rule's ManifestRuleContext.read,
 * which records them as the result's dependencies).
 */
export function launchedScriptText(
  file: string | null,
  path: string,
  read: (path: string, maxBytes: number) => string | null,
): string | null {
  return launchedScript(file, path, read)?.text ?? null;
}

/** {@link launchedScriptText} with the path it was read from; `suffix`: the file name's ending that is looked for (`.sh` for a shell script a script runs). */
export function launchedScript(
  file: string | null,
  path: string,
  read: (path: string, maxBytes: number) => string | null,
  suffix = ".py",
): { path: string; text: string } | null {
  const own = file ? SCRIPT_DIR.exec(path) : null;
  if (own && !own[1].includes("$") && own[1].endsWith(suffix)) {
    const at = join(dirname(file!), own[1]);
    const text = read(at, 4 * 1024 * 1024);
    return text === null ? null : { path: at, text };
  }
  if (!file || path.includes("$") || path.startsWith("~") || !path.endsWith(suffix)) return null;
  const candidates = isAbsolute(path)
    ? [path]
    : [0, 1, 2, 3].map((k) => {
        let d = dirname(file);
        for (let i = 0; i < k; i++) d = dirname(d);
        return join(d, path);
      });
  for (const c of candidates) {
    const text = read(c, 4 * 1024 * 1024);
    if (text !== null) return { path: c, text };
  }
  return null;
}

/** One `add_argument` option of a launched script. */
export interface ScriptOption {
  /**
   * The argparse destination: `dest=` when given, else the first long option string without its
   * dashes (else the first short one), `-` turned into `_` (Python documentation, argparse, "dest").
   */
  dest: string;
  /** `nargs=` or `action=` was given: the option takes a list, no value or an optional one, never read as one value here. */
  notSingle: boolean;
  /** The `default=` value when it is a plain string (`default="7"`); null for any other default, or none. */
  defaultText: string | null;
  /** The `default=` value when it is a plain integer (`default=1`), as written; null otherwise. */
  defaultInteger: string | null;
  /** The 1-based line of the `add_argument` call. */
  line: number;
}

/** Where a launched script hands one of its options' values to CUDA as a device ordinal. */
export interface DeviceOption {
  /** How, for messages: `torch.cuda.set_device()`, `f"cuda:{…}"` (devices.ts {@link deviceSlots}' forms). */
  form: string;
  /** 1-based line of that use in the script. */
  line: number;
  /** The use builds a device string around the value (`f"cuda:{…}"`): only a bare number is an ordinal there. */
  inString: boolean;
}

/** What a launched script's own command-line options do ({@link launchedScriptFacts}). */
export interface LaunchedScriptFacts {
  /** Its `add_argument` options by option string (`--device`, `-d`). */
  options: Map<string, ScriptOption>;
  /** The destinations that its one write of CUDA_VISIBLE_DEVICES copies (`os.environ["CUDA_VISIBLE_DEVICES"] = args.device`); empty when it writes the variable otherwise, or more than once. */
  visibleDests: string[];
  /** It writes CUDA_VISIBLE_DEVICES anywhere. */
  writesVisible: boolean;
  /**
   * Its one write of CUDA_VISIBLE_DEVICES when that is a literal string written at the module's top
   * level (`os.environ["CUDA_VISIBLE_DEVICES"] = "1"`, not in a block or a function), before
   * anything in the module initialises CUDA: every process that runs the script sees those GPUs.
   * Null otherwise (no write, two, one from a value, in a branch, or after CUDA started: GPU001's).
   */
  visibleLiteral: { value: string; range: Range; line: number } | null;
  /** The destinations it hands to CUDA as a device ordinal as they are, with the first such use. */
  deviceDests: Map<string, DeviceOption>;
  /**
   * The imported callables it hands a namespace to, as the imports name them (`utils.transforms`,
   * `architect.Architect`): their modules may set a destination ({@link assignedAttributes} tells).
   */
  handedTo: string[];
  /** The names of its own functions that return a namespace (`def get_args(): ... return parser.parse_args()`). */
  returning: string[];
  /** What it imports by name, as dotted paths (`from getArgs import get_args` → `getArgs.get_args`; `import utils` → `utils`). */
  imports: string[];
  /**
   * The words its code names, from its parse (comments left out): every identifier, and each run of
   * `[A-Za-z0-9_-]` in a string literal's text with its leading dashes dropped (`"--num-gpus"` gives
   * `num-gpus`). Null when the script could not be read as Python. GPU042 asks whether it names an
   * option by any parser (argparse, click, `sys.argv`, a config's attribute).
   */
  words: ReadonlySet<string> | null;
  /** It puts work on each visible GPU in turn in a loop over them (python/deviceLoops.ts `loopsOverDevices`): one process that spreads its work itself. */
  loopsOverDevices: boolean;
}

/** The option strings of `facts`' options whose destination is `dest`. */
export function optionsWithDest(facts: LaunchedScriptFacts, dest: string): string[] {
  return [...facts.options].filter(([, o]) => o.dest === dest).map(([name]) => name);
}

/** Callees a parsed-arguments namespace may be handed to without changing it (they only read or print it). */
const READS_ONLY = new Set(["print", "vars", "str", "repr", "len", "format", "pprint", "pprint.pprint", "json.dumps"]);
/** Method names of loggers and writers that only read what they are given (`logger.info(args)`). */
const READING_METHODS = new Set(["info", "debug", "warning", "warn", "error", "log", "write", "print"]);

/** No callables of other modules known to return a namespace. */
const NO_PARSERS: ReadonlySet<string> = new Set();

/** The last {@link launchedScriptFacts} answers by text: a script is asked once per launch line that names it. */
const factsKept = new Map<string, LaunchedScriptFacts>();

/**
 * What the options of a launched Python script do, from its parse (tree-sitter) and model:
 * - `options`: its `x.add_argument("--opt", ...)` calls (any receiver, sub-parsers and groups included).
 * - `visibleDests`: what its one CUDA_VISIBLE_DEVICES write copies, when that write's value is `ns.attr`.
 * - `deviceDests`: the destinations whose value reaches one of devices.ts {@link deviceSlots}
 *   (`torch.cuda.set_device(args.gpu)`, `torch.device(f"cuda:{args.gpu}")`, `.to(int(args.gpu))`, or
 *   a name assigned once from such a value in the same function), read from a namespace that
 *   `parse_args()` returned: a name assigned `p.parse_args()` / `p.parse_known_args()[0]` (or the
 *   first of `a, b = p.parse_known_args()`), or the call of one of the file's functions that returns
 *   one, or the parameter of one of the file's functions that the file calls with one. Left out,
 *   to stay silent where the value may be another: a destination the file assigns (`args.gpu =
 *   local_rank`, on any object), and everything when a namespace is handed to a callee that is
 *   neither the file's own nor imported (a method of an object, `setattr`), other than printing and
 *   logging ({@link READS_ONLY}), or changed through `vars(args).update(...)` or `args.__dict__`.
 *   The imported callables it is handed to are listed in `handedTo`: their modules may set a
 *   destination (`init_distributed_mode(args)`), which the caller checks ({@link assignedAttributes}).
 * - `returning`, `imports`: what a caller needs to follow a namespace that another module makes.
 * @param parsers the dotted paths (as this module's imports resolve them) of other modules'
 *   callables that return a namespace (`getArgs.get_args`): a call of one is a namespace too.
 * @param model the text's model when the caller has built it (launch/lightningTrainer.ts): the
 *   text is then not parsed again.
 * Empty answers when the text does not parse into a module. Never throws.
 */
export function launchedScriptFacts(
  text: string,
  parsers: ReadonlySet<string> = NO_PARSERS,
  model?: ModuleModel,
): LaunchedScriptFacts {
  const key = parsers.size ? `${[...parsers].sort().join(",")}\n${text}` : text;
  const kept = factsKept.get(key);
  if (kept) return kept;
  const facts = withScriptModel(text, (m) => factsOf(m, parsers), model) ?? noFacts();
  if (factsKept.size >= 16) factsKept.delete(factsKept.keys().next().value!);
  factsKept.set(key, facts);
  return facts;
}

/** The answers of {@link launchedScriptFacts} for a text that does not parse into a module. */
const noFacts = (): LaunchedScriptFacts => ({
  options: new Map(),
  visibleDests: [],
  writesVisible: false,
  visibleLiteral: null,
  deviceDests: new Map(),
  handedTo: [],
  returning: [],
  imports: [],
  words: null,
  loopsOverDevices: false,
});

/**
 * `read` of the model of `text` (one parse, with the launched scripts' model options; the tree is
 * deleted afterwards, so what `read` returns must hold no syntax node), or of `model` when the
 * caller has built it; null when it throws (a text that does not parse into a module).
 */
export function withScriptModel<T>(text: string, read: (model: ModuleModel) => T, model?: ModuleModel): T | null {
  if (model) {
    try {
      return read(model);
    } catch {
      return null;
    }
  }
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    return read(buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false }));
  } catch {
    return null;
  } finally {
    tree.delete();
  }
}

/** {@link launchedScriptFacts} of a model. */
function factsOf(model: ModuleModel, parsers: ReadonlySet<string>): LaunchedScriptFacts {
  const options = argparseOptions(model);
  const writes = model
    .statementWrites()
    .flatMap((s) => s.writes)
    .filter((w) => w.variable === "CUDA_VISIBLE_DEVICES");
  const copied = writes.length === 1 && writes[0].value?.type === "attribute" ? writes[0].value : null;
  const copiedDest =
    copied?.childForFieldName("object")?.type === "identifier"
      ? copied.childForFieldName("attribute")?.text
      : undefined;
  return {
    options,
    visibleDests: copiedDest ? [copiedDest] : [],
    writesVisible: writes.length > 0,
    visibleLiteral: writes.length === 1 ? topLevelLiteral(model, writes[0]) : null,
    ...deviceDestinations(model, parsers),
    imports: [...new Set(model.symbols.values())],
    words: namedWords(model),
    loopsOverDevices: loopsOverDevices(model),
  };
}

/** {@link LaunchedScriptFacts.visibleLiteral}: `w` when it is a literal top-level `os.environ[...] = "..."` (or `update`) that runs before CUDA starts. */
function topLevelLiteral(model: ModuleModel, w: EnvWriteEvent): LaunchedScriptFacts["visibleLiteral"] {
  if (w.literal === null || w.inFunction || w.nested || (w.form !== "subscript" && w.form !== "update")) return null;
  const same = (r: Range) => r.start.line === w.range.start.line && r.start.character === w.range.start.character;
  const at = model.events.findIndex((e) => e.kind === "envWrite" && same(e.range));
  if (at < 0 || model.events.slice(0, at).some((e) => e.kind === "init")) return null;
  return { value: w.literal, range: w.range, line: w.range.start.line + 1 };
}

/** {@link LaunchedScriptFacts.words} of a module. */
function namedWords(model: ModuleModel): Set<string> {
  const out = new Set<string>();
  for (const n of model.nodesOfType(["identifier", "string_content"])) {
    if (n.type === "identifier") {
      out.add(n.text);
      continue;
    }
    const text = n.text;
    for (let i = 0; i < text.length;) {
      while (i < text.length && !isOptionCode(text.charCodeAt(i))) i++;
      let start = i;
      while (i < text.length && isOptionCode(text.charCodeAt(i))) i++;
      while (start < i && text.charCodeAt(start) === 45) start++;
      if (start < i) out.add(text.slice(start, i));
    }
  }
  return out;
}

/** `[A-Za-z0-9_-]`: a character of an option's name. */
const isOptionCode = (k: number): boolean =>
  (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95 || k === 45;

/** The `add_argument` options of the module, by option string. */
function argparseOptions(model: ModuleModel): Map<string, ScriptOption> {
  const out = new Map<string, ScriptOption>();
  for (const call of model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    const { positional, keywords } = callArgs(call);
    const names: string[] = [];
    for (const p of positional) {
      const v = stringValue(p);
      if (v === null || !v.startsWith("-")) break;
      names.push(v);
    }
    if (!names.length) continue;
    const explicit = stringValue(keywords.get("dest"));
    const long = names.find((n) => n.startsWith("--"));
    const dest = explicit ?? (long ?? names[0]).replace(/^-+/, "").replace(/-/g, "_");
    const notSingle = keywords.has("nargs") || keywords.has("action");
    const defaultText = keywords.get("required")?.text === "True" ? null : stringValue(keywords.get("default"));
    const given = keywords.get("required")?.text === "True" ? undefined : keywords.get("default");
    const defaultInteger = given?.type === "integer" && /^\d+$/.test(given.text) ? given.text : null;
    const line = call.startPosition.row + 1;
    for (const n of names) out.set(n, { dest, notSingle, defaultText, defaultInteger, line });
  }
  return out;
}

/** The key of the scope `node` is in: its function's node id, -1 for the module. */
const scopeOf = (node: SyntaxNode): number => enclosingFunction(node)?.id ?? -1;

/** The method a call calls (`parse_args` of `p.parse_args()`); undefined for anything else. */
function methodName(n: SyntaxNode | null | undefined): string | undefined {
  const fn = n?.type === "call" ? n.childForFieldName("function") : null;
  return fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : undefined;
}

/** Whether the module calls a method named `name` anywhere (`p.set_defaults(...)`), read from its syntax tree: a comment or a string does not count. */
export function callsMethod(model: ModuleModel, name: string): boolean {
  return model.text.includes(name) && model.nodesOfType("call").some((c) => methodName(c) === name);
}

/** Methods of a dict that only read it (`vars(args).items()`). */
const DICT_READS = new Set(["items", "keys", "values", "get", "copy"]);

/**
 * Whether a `vars(x)` call may change `x`: its dict is changed in place (`vars(x).update(...)`,
 * `vars(x)["gpu"] = 0`) or kept in a name (then anything may change it); `vars(x)` passed as an
 * argument, iterated, or read through {@link DICT_READS} only reads.
 */
function changesThroughVars(call: SyntaxNode): boolean {
  const p = call.parent;
  if (!p || p.type === "argument_list" || p.type === "for_in_clause" || p.type === "for_statement") return false;
  if (p.type === "attribute") return !DICT_READS.has(p.childForFieldName("attribute")?.text ?? "");
  if (p.type === "subscript") return isAssignmentTarget(p);
  return true;
}

/**
 * The expression whose value a device slot takes as it is: through `int(x)`, `str(x)`, `f"{x}"`
 * and `x if torch.cuda.is_available() else "cpu"` (its GPU branch); anything else as it is.
 */
function valueTaken(n: SyntaxNode | null | undefined, model: ModuleModel): SyntaxNode | null {
  if (n?.type === "call" && ["int", "str"].includes(n.childForFieldName("function")?.text ?? ""))
    return valueTaken(
      n.childForFieldName("arguments")?.namedChildren.find((c) => c?.type !== "comment"),
      model,
    );
  // `x if torch.cuda.is_available() else "cpu"`: on a machine with a GPU, the first branch.
  const test = n?.type === "conditional_expression" ? n.namedChildren[1] : null;
  if (test?.type === "call" && model.resolve(test.childForFieldName("function")) === "torch.cuda.is_available")
    return valueTaken(n!.namedChildren[0], model);
  // `f"{x}"`: the string is x's value and nothing else.
  if (n?.type === "string") {
    const parts = n.namedChildren.filter((c) => c?.type !== "string_start" && c?.type !== "string_end");
    if (parts.length === 1 && parts[0]?.type === "interpolation")
      return valueTaken(parts[0].childForFieldName("expression") ?? parts[0].namedChildren[0], model);
  }
  return n ?? null;
}

/**
 * The parsed-arguments namespaces of the module ({@link launchedScriptFacts}): `isNamespace` tells
 * whether an identifier names one where it stands; `escapes` whether one is handed to a callee that
 * may change it, or changed through `vars()`/`__dict__`.
 */
function namespaces(
  model: ModuleModel,
  parsers: ReadonlySet<string>,
): { isNamespace: (id: SyntaxNode) => boolean; escapes: Escapes; returning: Set<string> } {
  const names = new Map<number, Set<string>>();
  const boundKept = new Map<number, Set<string>>();
  const bound = (def: SyntaxNode) => {
    let b = boundKept.get(def.id);
    if (!b) boundKept.set(def.id, (b = new Set([...positionalParams(def), ...namesBoundIn(def)])));
    return b;
  };
  const isNamespace = (id: SyntaxNode): boolean => {
    for (let f = enclosingFunction(id); ; f = enclosingFunction(f)) {
      if (names.get(f?.id ?? -1)?.has(id.text)) return true;
      if (!f || bound(f).has(id.text)) return false;
    }
  };
  const add = (scope: number, name: string | undefined): boolean => {
    let s = names.get(scope);
    if (!s) names.set(scope, (s = new Set()));
    if (!name || s.has(name)) return false;
    s.add(name);
    return true;
  };
  const returning = new Set<string>();
  const isValue = (v: SyntaxNode | null): boolean =>
    !!v &&
    (isParseArgs(v) ||
      (v.type === "identifier" && isNamespace(v)) ||
      (v.type === "call" &&
        (returning.has(v.childForFieldName("function")?.text ?? "") ||
          (parsers.size > 0 && parsers.has(model.resolve(v.childForFieldName("function")) ?? "")))));
  for (let round = 0, changed = true; changed && round < 6; round++) {
    changed = false;
    for (const a of model.nodesOfType("assignment")) {
      const left = a.childForFieldName("left");
      const right = a.childForFieldName("right");
      if (left?.type === "identifier" && isValue(right)) changed = add(scopeOf(a), left.text) || changed;
      else if (
        (left?.type === "pattern_list" || left?.type === "tuple_pattern") &&
        methodName(right) === "parse_known_args"
      )
        changed =
          add(scopeOf(a), left.namedChildren[0]?.type === "identifier" ? left.namedChildren[0].text : undefined) ||
          changed;
    }
    for (const r of model.nodesOfType("return_statement")) {
      const def = enclosingFunction(r);
      const name = def?.childForFieldName("name")?.text;
      if (name && !returning.has(name) && isValue(r.namedChildren[0] ?? null)) {
        returning.add(name);
        changed = true;
      }
    }
    for (const call of model.nodesOfType("call")) {
      const def = model.functions.get(call.childForFieldName("function")?.text ?? "");
      if (!def || call.childForFieldName("function")?.type !== "identifier") continue;
      const params = positionalParams(def);
      const { positional, keywords } = callArgs(call);
      positional.forEach((p, i) => {
        if (isValue(p)) changed = add(def.id, params[i]) || changed;
      });
      for (const [k, v] of keywords) if (isValue(v) && params.includes(k)) changed = add(def.id, k) || changed;
    }
  }
  return { isNamespace, escapes: namespaceEscapes(model, isNamespace), returning };
}

/** Where the module's namespaces go that it does not follow: `unknown` when one may be changed unseen, else the imported callables it is handed to. */
interface Escapes {
  unknown: boolean;
  handedTo: Set<string>;
}

/**
 * Whether a namespace is handed to a callee that may change it, or changed through `vars(ns)` or
 * `ns.__dict__` ({@link namespaces}): a callee the module imports is listed in `handedTo` (its
 * module is read by the caller); any other (a method of an object, `setattr`) makes it `unknown`.
 */
function namespaceEscapes(model: ModuleModel, isNamespace: (id: SyntaxNode) => boolean): Escapes {
  const handedTo = new Set<string>();
  for (const call of model.nodesOfType("call")) {
    const fn = call.childForFieldName("function");
    const { positional, keywords } = callArgs(call);
    if (![...positional, ...keywords.values()].some((a) => a.type === "identifier" && isNamespace(a))) continue;
    const name = fn?.type === "identifier" ? fn.text : null;
    if (name && (model.functions.has(name) || model.classes.has(name))) continue; // followed (or its assignments seen)
    if (name === "vars" && changesThroughVars(call)) return { unknown: true, handedTo };
    const path = model.resolve(fn);
    if ((name && READS_ONLY.has(name)) || (path && READS_ONLY.has(path))) continue;
    if (fn?.type === "attribute" && READING_METHODS.has(fn.childForFieldName("attribute")?.text ?? "")) continue;
    if (path && model.symbols.has(fn!.text.split(".")[0])) handedTo.add(path);
    else return { unknown: true, handedTo };
  }
  for (const a of model.nodesOfType("attribute")) {
    const obj = a.childForFieldName("object");
    if (a.childForFieldName("attribute")?.text === "__dict__" && obj?.type === "identifier" && isNamespace(obj))
      return { unknown: true, handedTo };
  }
  return { unknown: false, handedTo };
}

/** The destinations the module hands to CUDA as device ordinals ({@link launchedScriptFacts}' `deviceDests`). */
function deviceDestinations(
  model: ModuleModel,
  parsers: ReadonlySet<string>,
): Pick<LaunchedScriptFacts, "deviceDests" | "handedTo" | "returning"> {
  const out = new Map<string, DeviceOption>();
  const none = { deviceDests: out, handedTo: [], returning: [] };
  if (!parsers.size && !model.text.includes("parse_args") && !model.text.includes("parse_known_args")) return none;
  const { isNamespace, escapes, returning } = namespaces(model, parsers);
  if (escapes.unknown) return { ...none, returning: [...returning] };
  // Attribute names assigned anywhere (`args.gpu = local_rank`), and names assigned once per scope.
  const assigned = attributeTargets(model);
  const { once } = singleAssignments(model);
  for (const slot of deviceSlots(model)) {
    let o = valueTaken(slot.ordinal, model);
    if (o?.type === "identifier") {
      const def = enclosingFunction(o);
      if (def && positionalParams(def).includes(o.text)) continue;
      o = valueTaken(once.get(`${scopeOf(o)}:${o.text}`), model);
    }
    const obj = o?.type === "attribute" ? o.childForFieldName("object") : null;
    const dest = o?.childForFieldName("attribute")?.text;
    if (obj?.type !== "identifier" || !dest || !isNamespace(obj) || assigned.has(dest) || out.has(dest)) continue;
    out.set(dest, { form: slot.form, line: slot.ordinal.startPosition.row + 1, inString: slot.form.includes('"cuda') });
  }
  return { deviceDests: out, handedTo: [...escapes.handedTo], returning: [...returning] };
}

/** The last {@link assignedAttributes} answers by text. */
const assignedKept = new Map<string, { names: ReadonlySet<string>; dynamic: boolean }>();

/**
 * The attribute names a module assigns anywhere (`args.gpu = ...`, `self.opt.gpu += 1`, a `for`
 * target), from its parse; `dynamic` when it may set any (`setattr(...)`, `x.__dict__`, `vars(x)`
 * other than read). What GPU052 asks of a module that a launched script hands its namespace to:
 * a destination it never assigns keeps the option's value. Never throws (an unparsable text is dynamic).
 */
export function assignedAttributes(
  text: string,
  model?: ModuleModel,
): { names: ReadonlySet<string>; dynamic: boolean } {
  const kept = assignedKept.get(text);
  if (kept) return kept;
  const out = withScriptModel(text, attributesOf, model) ?? {
    names: new Set<string>(),
    dynamic: true,
  };
  if (assignedKept.size >= 32) assignedKept.delete(assignedKept.keys().next().value!);
  assignedKept.set(text, out);
  return out;
}

/** {@link assignedAttributes} of a model. */
function attributesOf(model: ModuleModel): { names: ReadonlySet<string>; dynamic: boolean } {
  let dynamic = false;
  for (const n of model.nodesOfType(["call", "attribute"])) {
    const name = n.type === "call" ? n.childForFieldName("function")?.text : n.childForFieldName("attribute")?.text;
    if (name === "setattr" || name === "__dict__" || (name === "vars" && changesThroughVars(n))) dynamic = true;
  }
  return { names: attributeTargets(model), dynamic };
}

/**
 * The module that a launched script's import names (`utils.transforms` → `utils/transforms.py`,
 * else `utils.py` or `utils/__init__.py`; `models.arch.Arch` → `models/arch.py`, ...), looked for
 * beside the script as Python's own search finds it when the script runs (its folder is
 * `sys.path[0]`: Python documentation, sys.path): its text, and the names after the module's
 * (`["transforms"]` for `utils.transforms` in `utils.py`). Null when none is there (a library, or
 * a module elsewhere).
 * @param script absolute path of the launched script
 * @param dotted a dotted path as the script's imports resolve it
 */
export function importedModule(
  script: string,
  dotted: string,
  read: (path: string, maxBytes: number) => string | null,
): { text: string; rest: string[] } | null {
  const parts = dotted.replace(/^\.+/, "").split(".");
  for (let k = parts.length; k >= 1; k--) {
    const base = join(dirname(script), ...parts.slice(0, k));
    for (const candidate of [`${base}.py`, join(base, "__init__.py")]) {
      const text = read(candidate, 4 * 1024 * 1024);
      if (text !== null) return { text, rest: parts.slice(k) };
    }
  }
  return null;
}

/**
 * The value `value` holds when it reads a parsed-arguments namespace's attribute (`args.gpu_id`)
 * and the script is run without that option: the option's `default=` when it is a plain string
 * (`add_argument("--gpu-id", default="7")`; argparse: "The default keyword argument ... specifies
 * what value should be used if the command-line argument is not present"). Null when the value is
 * not such a read, the destination is declared more than once or assigned anywhere in the module
 * (`args.gpu_id = ...`), or a namespace goes where the module does not see what happens to it (an
 * imported or unknown callee, `vars(args).update`); see {@link launchedScriptFacts} for namespaces.
 * @returns the default's text, the option's longest spelling, and the declaration's 1-based line
 */
export function argparseDefaultOf(
  model: ModuleModel,
  value: SyntaxNode | null,
): { text: string; option: string; line: number } | null {
  const obj = value?.type === "attribute" ? value.childForFieldName("object") : null;
  const dest = value?.childForFieldName("attribute")?.text;
  if (obj?.type !== "identifier" || !dest || !model.text.includes("add_argument")) return null;
  const declared = [...argparseOptions(model)].filter(([, o]) => o.dest === dest);
  const lines = new Set(declared.map(([, o]) => o.line));
  const first = declared[0]?.[1];
  if (lines.size !== 1 || !first || first.defaultText === null || first.notSingle) return null;
  const { isNamespace, escapes } = namespaces(model, NO_PARSERS);
  if (!isNamespace(obj) || escapes.unknown || escapes.handedTo.size || attributeTargets(model).has(dest)) return null;
  const option = declared.map(([k]) => k).sort((a, b) => b.length - a.length)[0];
  return { text: first.defaultText, option, line: first.line };
}

/**
 * Calls `visit` with each target of the module's assignments, augmented assignments and `for`
 * loops (each element of a tuple target on its own; `single`: the statement has one target).
 */
function forEachTarget(
  model: ModuleModel,
  visit: (target: SyntaxNode, statement: SyntaxNode, single: boolean) => void,
): void {
  for (const a of model.nodesOfType(["assignment", "augmented_assignment", "for_statement"])) {
    const left = a.childForFieldName("left");
    const targets = left?.type === "pattern_list" || left?.type === "tuple_pattern" ? left.namedChildren : [left];
    for (const t of targets) if (t) visit(t, a, targets.length === 1);
  }
}

/** The attribute names the module assigns anywhere (`x.gpu = ...`, `x.gpu += 1`, a `for` target). */
function attributeTargets(model: ModuleModel): Set<string> {
  const out = new Set<string>();
  forEachTarget(model, (t) => {
    if (t.type === "attribute") out.add(t.childForFieldName("attribute")?.text ?? "");
  });
  return out;
}

/** A device ordinal that a run without an argparse option uses: the option's default ({@link argparseDefaultOrdinals}). */
export interface DefaultOrdinal {
  /** The expression that hands the ordinal (or the list of them) to CUDA. */
  node: SyntaxNode;
  /** How, for messages (devices.ts {@link deviceSlots}' forms, or `device_ids=`). */
  form: string;
  /** The ordinals the default gives there. */
  ids: number[];
  /** The option's longest spelling, its default as written (`"0,1"`, `3`), and the declaration's 1-based line. */
  option: string;
  text: string;
  line: number;
}

/** An option's default as {@link argparseDefaultOrdinals} reads it; `integer`: written as an integer (`default=1`). */
interface OptionDefault {
  option: string;
  text: string;
  line: number;
  integer: boolean;
}

/**
 * The device ordinals that a run of the module without one of its argparse options hands to CUDA,
 * where the option's default gives them: a plain ordinal (`default=1`, `default="1"`) used as it is
 * (`torch.device(f"cuda:{args.gpu}")`, `.to(args.gpu)`), or a comma-separated list of ids
 * (`default="0,1"`) turned into ints by the file (`ids = [int(i) for i in args.gpu_ids.split(",")]`
 * or `list(map(int, ...))`, a name assigned once in its scope) and used as `device_ids=ids` (also
 * DataParallel's second positional argument) or `ids[k]`; also the destination itself where its one
 * assignment converts it so (`args.gpu_ids = [int(i) for i in args.gpu_ids.split(",")]`), read after it. A string default (`"1"`) counts only
 * where the use builds a device string around it or converts it (`int(args.gpu)`). Silent, as
 * {@link argparseDefaultOf}, where the option is declared more than once, takes a list (`nargs`,
 * `action`), its destination is assigned anywhere in the module, or a namespace goes where the
 * module does not see what happens to it; also where the module parses no arguments of its own,
 * calls `set_defaults`, or hands a parser to a call ({@link parserEscapes}).
 */
export function argparseDefaultOrdinals(model: ModuleModel): DefaultOrdinal[] {
  if (!model.text.includes("add_argument") || !model.text.includes("parse_args")) return [];
  const byDest = optionDefaults(model);
  if (![...byDest.values()].some(Boolean) || parserEscapes(model)) return [];
  const { isNamespace, escapes } = namespaces(model, NO_PARSERS);
  if (escapes.unknown || escapes.handedTo.size) return [];
  const assigned = attributeTargets(model);
  const { converted, once } = singleAssignments(model);
  /** The option whose default `n` reads as it is (`args.gpu`), or null. */
  const optionOf = (n: SyntaxNode | null) => {
    const obj = n?.type === "attribute" ? n.childForFieldName("object") : null;
    const dest = n?.childForFieldName("attribute")?.text;
    if (obj?.type !== "identifier" || !dest || !isNamespace(obj) || assigned.has(dest)) return null;
    return byDest.get(dest) ?? null;
  };
  const bound = (n: SyntaxNode | null) =>
    n?.type === "identifier" ? (once.get(`${scopeOf(n)}:${n.text}`) ?? null) : n;
  /** The ids of a list built from an option's "0,1" default, or null. */
  /** The option of a converted destination that `n` reads after its conversion (`args.gpu_ids`), or null. */
  const convertedOf = (n: SyntaxNode | null) => {
    const obj = n?.type === "attribute" ? n.childForFieldName("object") : null;
    const at = converted.get(n?.childForFieldName("attribute")?.text ?? "");
    if (!at || obj?.type !== "identifier" || !isNamespace(obj) || n!.startIndex < at.endIndex) return null;
    const src = splitInts(at.childForFieldName("right"));
    const srcObj = src?.childForFieldName("object");
    return srcObj?.type === "identifier" && isNamespace(srcObj)
      ? (byDest.get(src!.childForFieldName("attribute")!.text) ?? null)
      : null;
  };
  const listOf = (n: SyntaxNode | null) => {
    const src = splitInts(bound(n));
    const opt = src ? optionOf(src) : convertedOf(n);
    const ids = opt ? idsOf(opt.text) : null;
    return opt && ids ? { opt, ids } : null;
  };
  const out: DefaultOrdinal[] = [];
  const add = (node: SyntaxNode, form: string, opt: OptionDefault, ids: number[]) => {
    if (!out.some((o) => o.node.id === node.id))
      out.push({ node, form, ids, option: opt.option, text: opt.integer ? opt.text : `"${opt.text}"`, line: opt.line });
  };
  for (const slot of deviceSlots(model)) {
    const o = valueTaken(slot.ordinal, model);
    const opt = optionOf(o) ?? optionOf(valueTaken(bound(o), model));
    // A string default is an ordinal where the use builds a device string or converts it (`int(args.gpu)`).
    const converted = slot.ordinal.type === "call" || slot.form.includes('"cuda');
    const single = opt && /^\d+$/.test(opt.text) && (converted || opt.integer) ? opt : null;
    if (single) {
      add(slot.ordinal, slot.form, single, [Number(single.text.trim())]);
      continue;
    }
    // ids[k], or a loop variable over the ids.
    const element = o?.type === "subscript" ? o : null;
    const k = element?.childForFieldName("subscript");
    const list = element && k?.type === "integer" ? listOf(element.childForFieldName("value")) : null;
    if (list && Number(k!.text) < list.ids.length) add(slot.ordinal, slot.form, list.opt, [list.ids[Number(k!.text)]]);
  }
  for (const call of model.nodesOfType("call")) {
    const { positional, keywords } = callArgs(call);
    const path = model.resolve(call.childForFieldName("function")) ?? "";
    const dataParallel = /(^|\.)(DataParallel|DistributedDataParallel)$/.test(path);
    const ids = keywords.get("device_ids") ?? (dataParallel ? positional[1] : undefined);
    if (!ids || ids.type === "list" || ids.type === "tuple") continue;
    const list = listOf(ids);
    if (list) add(ids, "device_ids=", list.opt, list.ids);
  }
  return out;
}

/**
 * The default of the module's argparse option with destination `dest` as a run without the option
 * gets it (`integer`: written as an integer, `default=1`), with the option's longest spelling and its
 * 1-based line; null where the option is declared more than once or has no plain default, the module
 * assigns the destination anywhere (`args.gpu = ...`), calls `set_defaults` or hands a parser to a
 * call. Whether the namespace reaches other code is the caller's to judge.
 */
export function argparseOptionDefault(
  model: ModuleModel,
  dest: string,
): { text: string; integer: boolean; option: string; line: number } | null {
  if (!model.text.includes("add_argument") || parserEscapes(model) || attributeTargets(model).has(dest)) return null;
  return optionDefaults(model).get(dest) ?? null;
}

/**
 * Whether the module may change its options' defaults unseen: it calls `set_defaults`, or hands a
 * parser (a receiver of `add_argument`) to a call (`parser = set_config(path, parser)`).
 */
function parserEscapes(model: ModuleModel): boolean {
  if (callsMethod(model, "set_defaults")) return true;
  const parsers = new Set<string>();
  for (const call of model.nodesOfType("call")) {
    const fn = call.childForFieldName("function");
    if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "add_argument")
      parsers.add(fn.childForFieldName("object")?.text ?? "");
  }
  for (const call of model.nodesOfType("call")) {
    const { positional, keywords } = callArgs(call);
    if ([...positional, ...keywords.values()].some((a) => parsers.has(a.text))) return true;
  }
  return false;
}

/** The defaults of the module's options by destination: null for one declared twice or without a usable default. */
function optionDefaults(model: ModuleModel): Map<string, OptionDefault | null> {
  const byDest = new Map<string, OptionDefault | null>();
  for (const [name, o] of argparseOptions(model)) {
    const seen = byDest.get(o.dest);
    if (seen === null) continue;
    const text = o.notSingle ? null : (o.defaultText ?? o.defaultInteger);
    if (text === null || (seen && seen.line !== o.line)) byDest.set(o.dest, null);
    else if (!seen || name.length > seen.option.length)
      byDest.set(o.dest, { option: name, text, line: o.line, integer: o.defaultText === null });
  }
  return byDest;
}

/** `x` of `[int(t) for t in x.split(",")]` or `list(map(int, x.split(",")))`; null for anything else. */
function splitInts(n: SyntaxNode | null): SyntaxNode | null {
  let split: SyntaxNode | null = null;
  if (n?.type === "list_comprehension") {
    const body = n.childForFieldName("body");
    const clause = n.namedChildren.find((c) => c?.type === "for_in_clause");
    const variable = clause?.childForFieldName("left");
    const arg =
      body?.type === "call" && body.childForFieldName("function")?.text === "int" ? callArgs(body).positional[0] : null;
    if (variable?.type === "identifier" && arg?.text === variable.text) split = clause!.childForFieldName("right");
  } else if (n?.type === "call" && n.childForFieldName("function")?.text === "list") {
    const m = callArgs(n).positional[0];
    const args = m?.type === "call" && m.childForFieldName("function")?.text === "map" ? callArgs(m).positional : [];
    if (args.length === 2 && args[0].text === "int") split = args[1];
  }
  const fn = split?.type === "call" ? split.childForFieldName("function") : null;
  if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "split") return null;
  return stringValue(callArgs(split!).positional[0]) === "," ? fn.childForFieldName("object") : null;
}

/** The ids of a "0,1" default (plain non-negative integers only), or null. */
function idsOf(text: string): number[] | null {
  const parts = text.split(",").map((p) => p.trim());
  return parts.length && parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : null;
}

/**
 * The module's assignments that later reads can rely on: `converted`, per namespace attribute, its
 * one assignment when that converts the attribute's own value to a list of ints in place
 * (`args.gpu_ids = [int(i) for i in args.gpu_ids.split(",")]`: its later reads are the list), null
 * when it is assigned otherwise or more than once; `once`, per `scope:name`, the right side of the
 * name's one plain assignment in that scope, null when it is assigned more than once or otherwise.
 */
function singleAssignments(model: ModuleModel): {
  converted: Map<string, SyntaxNode | null>;
  once: Map<string, SyntaxNode | null>;
} {
  const converted = new Map<string, SyntaxNode | null>();
  const once = new Map<string, SyntaxNode | null>();
  forEachTarget(model, (t, a, single) => {
    const dest = t.type === "attribute" ? t.childForFieldName("attribute")?.text : undefined;
    if (dest) {
      const src = a.type === "assignment" && single ? splitInts(a.childForFieldName("right")) : null;
      const same = src?.type === "attribute" && src.childForFieldName("attribute")?.text === dest;
      converted.set(dest, converted.has(dest) || !same ? null : a);
    }
    if (t.type !== "identifier") return;
    const key = `${scopeOf(a)}:${t.text}`;
    once.set(key, once.has(key) || a.type !== "assignment" || !single ? null : a.childForFieldName("right"));
  });
  return { converted, once };
}

/** A list of device ids that a function's returned namespace holds for a run without the option ({@link returnedOptionLists}). */
export interface OptionList {
  /** The namespace attribute (`gpu_ids`), and the ids the option's `"0,1"` default becomes. */
  dest: string;
  ids: number[];
  /** The option's longest spelling, its default as written (`"0,1"`), and the declaration's 1-based line. */
  option: string;
  text: string;
  line: number;
  /** Every spelling of the option (`-g`, `--gpu_ids`). */
  spellings: string[];
}

/**
 * The functions of the module (and methods of its classes, as `Class.method`) that parse the
 * command line (`opt = self.parser.parse_args()`, the name's one assignment there), turn an
 * option's comma-separated default into a list of ints in place and return the namespace (`return
 * opt`, every return): `opt.gpu_ids = ids` after `ids = []` and a loop `for t in opt.gpu_ids.split(","):`
 * that appends `int(t)` (kept where `>= 0`), or `opt.gpu_ids = [int(t) for t in opt.gpu_ids.split(",")]`.
 * Silent, as {@link argparseDefaultOrdinals}, where the option is declared more than once or has no
 * plain-string default, the module names CUDA_VISIBLE_DEVICES, the attribute is assigned elsewhere in the module, the module calls
 * `set_defaults` or hands a parser to a call, or the function hands the namespace to a call (printing
 * and `vars(opt)` reads aside).
 */
export function returnedOptionLists(model: ModuleModel): Map<string, OptionList[]> {
  const out = new Map<string, OptionList[]>();
  if (!model.text.includes("add_argument") || !model.text.includes("parse_args") || parserEscapes(model)) return out;
  // Ids may be relative to a selection the module makes.
  if (namesVisibleDevices(model)) return out;
  const byDest = optionDefaults(model);
  const assigned = new Map<string, number>();
  forEachTarget(model, (t) => {
    const dest = t.type === "attribute" ? t.childForFieldName("attribute")!.text : null;
    if (dest) assigned.set(dest, (assigned.get(dest) ?? 0) + 1);
  });
  for (const def of model.nodesOfType("function_definition")) {
    const key = def ? topLevelName(def) : null;
    const ns = def && key ? parsedNamespace(def) : null;
    if (!def || !key || !ns || !namespaceKept(def, ns)) continue;
    const lists: OptionList[] = [];
    for (const a of def.descendantsOfType("assignment")) {
      const left = a?.childForFieldName("left");
      const dest = left?.type === "attribute" ? left.childForFieldName("attribute")!.text : null;
      if (!a || !dest || left!.childForFieldName("object")?.text !== ns || assigned.get(dest) !== 1) continue;
      const o = byDest.get(dest);
      const ids = o && !o.integer ? idsOf(o.text) : null;
      if (!o || !ids || enclosingFunction(a)?.id !== def.id || !convertsInPlace(def, a, ns, dest)) continue;
      const spellings = [...argparseOptions(model)].filter(([, x]) => x.dest === dest).map(([k]) => k);
      lists.push({ dest, ids, option: o.option, text: `"${o.text}"`, line: o.line, spellings });
    }
    if (lists.length) out.set(key, lists);
  }
  return out;
}

/** `f` for a module-level function, `C.m` for a method of a module-level class; null otherwise. */
function topLevelName(def: SyntaxNode): string | null {
  const name = def.childForFieldName("name")?.text;
  const at = def.parent?.type === "decorated_definition" ? def.parent : def;
  if (!name || at.parent?.type === "module") return name ?? null;
  const cls = at.parent?.parent;
  const outer = cls?.parent?.type === "decorated_definition" ? cls.parent : cls;
  if (cls?.type !== "class_definition" || outer?.parent?.type !== "module") return null;
  return `${cls.childForFieldName("name")?.text}.${name}`;
}

/** The name `def` binds once to `X.parse_args()` (no arguments) and returns at every `return`; null otherwise. */
function parsedNamespace(def: SyntaxNode): string | null {
  const own = (n: SyntaxNode) => enclosingFunction(n)?.id === def.id;
  let ns: string | null = null;
  for (const a of def.descendantsOfType("assignment")) {
    const left = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!a || !own(a) || left?.type !== "identifier" || methodName(right) !== "parse_args") continue;
    if (ns !== null || right!.childForFieldName("arguments")?.namedChildren.length) return null;
    ns = left.text;
  }
  if (!ns) return null;
  let bound = 0;
  forEachTargetIn(def, (t) => {
    if (t.type === "identifier" && t.text === ns) bound++;
  });
  const returns = def.descendantsOfType("return_statement").filter((r) => !!r && own(r));
  return bound === 1 && returns.length > 0 && returns.every((r) => r!.namedChildren[0]?.text === ns) ? ns : null;
}

/** Calls `visit` with each target of the assignments and `for` loops in `def` (nested ones included). */
function forEachTargetIn(def: SyntaxNode, visit: (t: SyntaxNode) => void): void {
  for (const a of def.descendantsOfType(["assignment", "augmented_assignment", "for_statement"])) {
    const left = a?.childForFieldName("left");
    const targets = left?.type === "pattern_list" || left?.type === "tuple_pattern" ? left.namedChildren : [left];
    for (const t of targets) if (t) visit(t);
  }
}

/** Whether every mention of namespace `ns` in `def` reads or assigns an attribute, is printed, read through `vars()`, or returned. */
function namespaceKept(def: SyntaxNode, ns: string): boolean {
  for (const ref of def.descendantsOfType("identifier")) {
    if (!ref || ref.text !== ns) continue;
    const p = ref.parent;
    if (!p) return false;
    if (p.type === "attribute") {
      if (p.childForFieldName("object")?.id !== ref.id) continue;
      const called = p.parent?.type === "call" && p.parent.childForFieldName("function")?.id === p.id;
      if (called && p.childForFieldName("attribute")?.text !== "split") return false;
      continue;
    }
    if (p.type === "return_statement" || (p.type === "assignment" && p.childForFieldName("left")?.id === ref.id))
      continue;
    const call = p.type === "argument_list" ? p.parent : null;
    const fn = call?.childForFieldName("function")?.text;
    if (fn === "print" || (fn === "vars" && !changesThroughVars(call!))) continue;
    return false;
  }
  return true;
}

/**
 * Whether assignment `a` (`ns.dest = ...`) stores the ints of `ns.dest.split(",")`: a list
 * comprehension or `list(map(int, ...))` of it, or a name bound once in `def` to `[]` and filled
 * only by `name.append(int(t))` (or of a name bound to `int(t)`, under `if g >= 0` at most) in a
 * loop `for t in ns.dest.split(","):` before `a`, with no `break`, `continue` or other mention.
 */
function convertsInPlace(def: SyntaxNode, a: SyntaxNode, ns: string, dest: string): boolean {
  const right = a.childForFieldName("right");
  const split = splitInts(right);
  if (split) return split.text === `${ns}.${dest}`;
  if (right?.type !== "identifier") return false;
  const name = right.text;
  const loops = def
    .descendantsOfType("for_statement")
    .filter((f) => !!f && f.endIndex < a.startIndex && splitOf(f.childForFieldName("right")) === `${ns}.${dest}`);
  const loop = loops.length === 1 ? loops[0]! : null;
  const t = loop?.childForFieldName("left");
  const body = loop?.childForFieldName("body");
  if (
    !loop ||
    t?.type !== "identifier" ||
    !body ||
    body.descendantsOfType(["break_statement", "continue_statement"]).length
  )
    return false;
  let appends = 0;
  for (const ref of def.descendantsOfType("identifier")) {
    if (!ref || ref.text !== name || ref.id === right.id) continue;
    const p = ref.parent!;
    if (p.type === "assignment" && p.childForFieldName("left")?.id === ref.id) {
      const v = p.childForFieldName("right");
      if (v?.type !== "list" || v.namedChildren.length || p.endIndex > loop.startIndex) return false;
      continue;
    }
    const call = p.type === "attribute" && p.childForFieldName("attribute")?.text === "append" ? p.parent : null;
    const arg = call?.type === "call" ? callArgs(call).positional : [];
    if (!call || arg.length !== 1 || call.startIndex < body.startIndex || call.endIndex > body.endIndex) return false;
    if (!intOf(arg[0], t.text, body) || !keptNonNegative(call, body, arg[0])) return false;
    appends++;
  }
  return (
    appends > 0 &&
    def.descendantsOfType("assignment").filter((x) => x?.childForFieldName("left")?.text === name).length === 1
  );
}

/** `x` of `x.split(",")` as written; null otherwise. */
function splitOf(n: SyntaxNode | null): string | null {
  const fn = n?.type === "call" ? n.childForFieldName("function") : null;
  if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "split") return null;
  return stringValue(callArgs(n!).positional[0]) === "," ? (fn.childForFieldName("object")?.text ?? null) : null;
}

/** Whether `v` is `int(t)`, or a name bound once in `body` to `int(t)`. */
function intOf(v: SyntaxNode, t: string, body: SyntaxNode): boolean {
  const isInt = (n: SyntaxNode | null | undefined) =>
    n?.type === "call" && n.childForFieldName("function")?.text === "int" && callArgs(n).positional[0]?.text === t;
  if (isInt(v)) return true;
  if (v.type !== "identifier") return false;
  const binds = body.descendantsOfType("assignment").filter((a) => a?.childForFieldName("left")?.text === v.text);
  return binds.length === 1 && isInt(binds[0]!.childForFieldName("right"));
}

/** Whether the append `call` runs for every non-negative id: under no condition in `body`, or only under `if g >= 0` / `g > -1` of its argument. */
function keptNonNegative(call: SyntaxNode, body: SyntaxNode, g: SyntaxNode): boolean {
  for (let p = call.parent; p && p.id !== body.id; p = p.parent) {
    if (p.type === "expression_statement" || p.type === "block") continue;
    if (
      p.type !== "if_statement" ||
      p.namedChildren.some((c) => c?.type === "else_clause" || c?.type === "elif_clause")
    )
      return false;
    const c = p.childForFieldName("condition");
    const text = c?.type === "comparison_operator" ? c.text.replace(/\s+/g, "") : "";
    if (text !== `${g.text}>=0` && text !== `${g.text}>-1`) return false;
  }
  return true;
}
