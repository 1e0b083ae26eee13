import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Pair } from "yaml";
import type { KeyedDeviceUse, ModuleModel } from "../../python/model";
import type { SyntaxNode } from "../../python/parser";
import { stringValue } from "../../python/parser";
import type { RuleContext } from "../../rule";
import { callArgs, calleePath, enclosingFunction } from "./py";
import { argparseDefaultOf, argparseOptionDefault } from "../../launch/script";

/** The loaders whose result is the YAML file's mapping as written (no defaults merged in). */
const LOADERS = new Set(["omegaconf.OmegaConf.load", "yaml.safe_load", "yaml.load", "yaml.full_load"]);

/** A device ordinal that a YAML config file loaded by the module, or its argparse namespace, hands to a project function. */
export interface ConfigOrdinal {
  /** The argument that passes the config (or namespace). */
  node: SyntaxNode;
  /** The ids it gives (one ordinal, or DataParallel's list). */
  ids: number[];
  /** Where the value comes from, for messages: `cfg.yaml sets gpu to 1 (line 2)`. */
  origin: string;
  /** The callee as written, its dotted path, and its use of the entry. */
  callee: string;
  path: string;
  use: KeyedDeviceUse;
  /**
   * The value is what every run gets: a YAML file the module loads by a literal path. False for an
   * option's default (`open(args.config)`, `args.gpu`), which a launch may override.
   */
  fixed: boolean;
}

/** Where a name's entries come from: a YAML file's text (its path as written, or an option's default), or the module's argparse options. */
type Source = { text: string; file: string; option: string | null } | "options";

/**
 * The device ordinals that YAML configs loaded by the module hand to project functions: a name bound
 * once to `OmegaConf.load("cfg.yaml")`, `yaml.safe_load(open("cfg.yaml"))` (or `yaml.load`,
 * `yaml.full_load`; also a file opened by `with open("cfg.yaml") as f`), the path a string literal
 * relative to the module's folder (or an option's plain-string default), passed as it is to a
 * function or class of another project module that uses one of its entries as a device ordinal
 * (ProjectLookup.callableKeyedDeviceParams: `f"cuda:{self.args['gpu_number']}"`), where the file's
 * top-level key holds an integer (or a string of digits, where the use converts it or builds a
 * device string). Also the module's argparse namespace (`args = parser.parse_args()`) passed so,
 * the option's default for an attribute use (`set_device(args.gpu)`: launch/script.ts
 * `argparseOptionDefault`). Silent where the name is used in any other way than reading its entries
 * and passing it to such calls (printing aside): a call may change the config (`OmegaConf.merge`, a
 * helper assigning `cfg.gpu`), as may an assignment; for an option's default, also where a script
 * or document of the project starts the module (it may pass the option).
 */
export function loadedConfigOrdinals(ctx: RuleContext): ConfigOrdinal[] {
  const project = ctx.project;
  const model = ctx.model;
  if (!project?.callableKeyedDeviceParams || !project.projectText) return [];
  const yaml = model.text.includes("load") && /yaml|OmegaConf/.test(model.text);
  if (!yaml && !model.text.includes("parse_args")) return [];
  const launched = () => !!(ctx.launchNodes?.length || project.documentedPythonLaunches?.().length);
  const out: ConfigOrdinal[] = [];
  for (const a of model.nodesOfType("assignment")) {
    const name = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!a || name?.type !== "identifier" || right?.type !== "call") continue;
    const fn = right.childForFieldName("function");
    const parsed = fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "parse_args";
    const loaded = yaml && !parsed ? loadedPath(model, right) : null;
    // An option's default is what a run without the option gives: a launch of the file may pass it.
    if ((!parsed && !loaded) || ((parsed || loaded?.option) && launched())) continue;
    const calls = judgedCalls(model, name, project.callableKeyedDeviceParams.bind(project));
    if (!calls?.length) continue;
    const text = loaded ? project.projectText(loaded.path) : null;
    if (loaded && text === null) continue;
    const source: Source = loaded ? { text: text!, file: loaded.path, option: loaded.option } : "options";
    for (const { call, arg, path, prefix, use } of calls) {
      const v = entryOf(model, source, prefix, use);
      if (v)
        out.push({
          node: arg,
          ids: v.ids,
          origin: v.origin,
          callee: call.childForFieldName("function")!.text,
          path,
          use,
          fixed: typeof source !== "string" && !source.option,
        });
    }
  }
  return out;
}

/** The ordinals that `source` gives `use`'s entry (one, or a list for DataParallel), with where they come from; null where unknown or no ordinals. */
function entryOf(
  model: ModuleModel,
  source: Source,
  prefix: readonly string[],
  use: KeyedDeviceUse,
): { ids: number[]; origin: string } | null {
  let value: number | string | number[];
  let origin: (shown: string) => string;
  if (source === "options") {
    const d = use.subscript || use.list || prefix.length ? null : argparseOptionDefault(model, use.key);
    if (!d) return null;
    value = d.integer ? Number(d.text) : d.text.trim();
    origin = (o) => `the default of ${d.option} is ${o} (line ${d.line}: a run without ${d.option})`;
  } else {
    const keys = [...prefix, use.key];
    const entry = yamlEntry(source.text, keys);
    if (!entry) return null;
    value = entry.value;
    const file = source.option ? `${source.file} (the default of ${source.option})` : source.file;
    origin = (o) => `${file} sets ${keys.join(".")} to ${o} (line ${entry.line})`;
  }
  if (use.list !== Array.isArray(value)) return null;
  if (Array.isArray(value)) return { ids: value, origin: origin(`[${value.join(", ")}]`) };
  const ordinal = typeof value === "number" ? value : use.converts && /^\d+$/.test(value) ? Number(value) : null;
  return ordinal !== null && Number.isSafeInteger(ordinal) && ordinal >= 0
    ? { ids: [ordinal], origin: origin(String(ordinal)) }
    : null;
}

/**
 * The path of `OmegaConf.load("x.yaml")`, `yaml.safe_load(open("x.yaml"))` or of a `with open("x.yaml") as f`
 * read: a string literal, or an argparse option's plain-string default (`open(args.config)`,
 * launch/script.ts `argparseDefaultOf`), with the option; null for anything else.
 */
function loadedPath(model: ModuleModel, n: SyntaxNode | null): { path: string; option: string | null } | null {
  if (n?.type !== "call" || !LOADERS.has(calleePath(model, n) ?? "")) return null;
  let src: SyntaxNode | undefined = callArgs(n).positional[0];
  if (src?.type === "identifier") src = withOpened(src) ?? undefined;
  else if (src?.type === "call" && src.childForFieldName("function")?.text === "open")
    src = callArgs(src).positional[0];
  const fallback =
    src?.type === "attribute" && !model.text.includes("set_defaults") ? argparseDefaultOf(model, src) : null;
  const path = src?.type === "string" ? stringValue(src) : (fallback?.text ?? null);
  if (!path || !/\.ya?ml$/.test(path) || path.includes("{")) return null;
  return { path, option: fallback ? `${fallback.option}, line ${fallback.line}` : null };
}

/** The path argument of the `with open(PATH) as f` that binds identifier `f`, or null. */
function withOpened(f: SyntaxNode): SyntaxNode | null {
  for (let p = f.parent; p; p = p.parent) {
    if (p.type !== "with_statement") continue;
    for (const item of p.descendantsOfType("with_item")) {
      const value = item?.childForFieldName("value");
      if (value?.type !== "as_pattern") continue;
      const opened = value.namedChildren[0];
      const alias = value.childForFieldName("alias") ?? value.namedChildren[1];
      if (alias?.text !== f.text && alias?.namedChildren[0]?.text !== f.text) continue;
      if (opened?.type === "call" && opened.childForFieldName("function")?.text === "open")
        return callArgs(opened).positional[0] ?? null;
    }
    return null;
  }
  return null;
}

/** A call of a project function that gets a config (or one of its sections: `prefix`, `cfg["train"]`) whose entry it uses as a device ordinal. */
interface JudgedCall {
  call: SyntaxNode;
  arg: SyntaxNode;
  path: string;
  prefix: string[];
  use: KeyedDeviceUse;
}

/**
 * The calls of project functions that take `name` (bound once, by this assignment), or a section of
 * it (`name["train"]`), as an argument whose entries they use as a device ordinal, each with its
 * use; null where `name` is used any other way than reading its entries, printing it or passing it
 * (or a section) to project calls.
 */
function judgedCalls(
  model: ModuleModel,
  name: SyntaxNode,
  keyed: (path: string) => ReadonlyArray<KeyedDeviceUse> | null,
): JudgedCall[] | null {
  const out: JudgedCall[] = [];
  /** `node` as an argument of a call: false where the call is no project function (it may change the config). */
  const asArgument = (node: SyntaxNode, prefix: string[]): boolean => {
    const parent = node.parent!;
    const call = parent.type === "argument_list" ? parent.parent : parent.parent?.parent;
    if (
      call?.type !== "call" ||
      (parent.type === "keyword_argument" && parent.childForFieldName("value")?.id !== node.id)
    )
      return false;
    if (call.childForFieldName("function")!.text === "print") return true;
    const path = calleePath(model, call);
    const uses = path?.includes(".") ? keyed(path) : null;
    if (!uses) return false;
    const { positional, keywords } = callArgs(call);
    for (const use of uses) {
      const arg = keywords.get(use.name) ?? positional[use.index];
      if (arg?.id === node.id && (!use.method || methodCalled(model, call, use.method)))
        out.push({ call, arg, path: path!, prefix, use });
    }
    return true;
  };
  const passed = (n: SyntaxNode | null) => n?.type === "argument_list" || n?.type === "keyword_argument";
  for (const ref of model.nodesOfType("identifier")) {
    if (!ref || ref.text !== name.text || ref.id === name.id) continue;
    const parent = ref.parent;
    if (!parent) return null;
    // `cfg.x` / `cfg["x"]` read (not assigned, not a method called on it); `f(cfg["train"])` hands a section on.
    if (
      (parent.type === "attribute" && parent.childForFieldName("object")?.id === ref.id) ||
      parent.type === "subscript"
    ) {
      if (parent.type === "subscript" && parent.childForFieldName("value")?.id !== ref.id) continue;
      if (isTarget(parent) || parent.parent?.type === "call") return null;
      const key = parent.type === "subscript" ? stringValue(parent.childForFieldName("subscript")) : null;
      if (key !== null && passed(parent.parent) && !asArgument(parent, [key])) return null;
      if (key === null && passed(parent.parent)) return null;
      continue;
    }
    if (passed(parent)) {
      if (!asArgument(ref, [])) return null;
      continue;
    }
    return null;
  }
  return out;
}

/**
 * Whether the instance that `call` makes (`server = Server(...)`, the name's one assignment in its
 * function) gets `method` called on it there after it (`server.setup()`).
 */
function methodCalled(model: ModuleModel, call: SyntaxNode, method: string): boolean {
  const a = call.parent;
  const name =
    a?.type === "assignment" && a.childForFieldName("right")?.id === call.id ? a.childForFieldName("left") : null;
  if (!a || name?.type !== "identifier") return false;
  const scope = enclosingFunction(a)?.id ?? null;
  const here = (n: SyntaxNode) => (enclosingFunction(n)?.id ?? null) === scope;
  const bound = model
    .nodesOfType("assignment")
    .filter((b) => !!b && b.childForFieldName("left")?.text === name.text && here(b)).length;
  return (
    bound === 1 &&
    model.nodesOfType("call").some((c) => {
      const fn = c?.childForFieldName("function");
      return (
        !!c &&
        c.startIndex > call.endIndex &&
        fn?.type === "attribute" &&
        fn.childForFieldName("object")?.text === name.text &&
        fn.childForFieldName("attribute")?.text === method &&
        here(c)
      );
    })
  );
}

/** Whether `n` is (part of) an assignment's target. */
function isTarget(n: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p; c = p, p = p.parent) {
    if (p.type === "assignment" || p.type === "augmented_assignment")
      return p.childForFieldName("left")?.startIndex === c.startIndex && p.childForFieldName("left")?.id === c.id;
    if (p.type === "expression_statement" || p.type === "block") return false;
  }
  return false;
}

/** The top-level `key`'s scalar (an integer or a string) in the YAML file's one document, with its 1-based line; null for anything else. */
function yamlEntry(text: string, keys: readonly string[]): { value: number | string | number[]; line: number } | null {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length) return null;
  let map: unknown = doc.contents;
  let pairs: Pair[] = [];
  for (const key of keys) {
    if (!isMap(map)) return null;
    pairs = (map.items as Pair[]).filter((p) => isScalar(p.key) && String(p.key.value) === key);
    if (pairs.length !== 1) return null;
    map = pairs[0].value;
  }
  const at = (pairs[0].key as { range?: [number, number, number] }).range?.[0] ?? 0;
  const line = lines.linePos(at).line;
  // A list of ids: plain non-negative integers only.
  const seq = pairs[0].value;
  if (isSeq(seq)) {
    const ids = seq.items.map((i) => (isScalar(i) && Number.isSafeInteger(i.value) ? (i.value as number) : -1));
    return ids.length && ids.every((i) => i >= 0) ? { value: ids, line } : null;
  }
  if (!isScalar(pairs[0].value)) return null;
  const v = pairs[0].value.value;
  if (typeof v === "number" && Number.isInteger(v)) return { value: v, line };
  return typeof v === "string" ? { value: v.trim(), line } : null;
}
