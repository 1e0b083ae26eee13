/**
 * The Python side of GPU076: which pydantic `BaseSettings` classes of a module name a dotenv file
 * (`env_file`), and what in a module copies a dotenv file (or a settings value) into `os.environ`.
 * Everything is read from the syntax tree and the module model's import bindings.
 */
import { basename, dirname, resolve } from "node:path";
import { ModuleTrees } from "../../python/moduleTrees";
import { buildModel, envWritesAnywhere, type ModuleModel } from "../../python/model";
import { nodeRange } from "../../python/events";
import { pythonInput, stringValue, type SyntaxNode } from "../../python/parser";
import { DEFAULT_EAGER_INIT_MODULES } from "../../frameworks";
import type { Range } from "../../types";
import { callArgs, calleePath } from "./py";

/** The dotted paths `BaseSettings` is imported from: pydantic-settings (pydantic 2) and pydantic 1. */
const BASE_SETTINGS = new Set([
  "pydantic_settings.BaseSettings",
  "pydantic_settings.main.BaseSettings",
  "pydantic.BaseSettings",
  "pydantic.env_settings.BaseSettings",
  "pydantic.v1.BaseSettings",
  "pydantic.v1.env_settings.BaseSettings",
]);
const FIND_DOTENV = new Set(["dotenv.find_dotenv", "dotenv.main.find_dotenv"]);
const LOAD_DOTENV = new Set(["dotenv.load_dotenv", "dotenv.main.load_dotenv"]);
const DOTENV_VALUES = new Set(["dotenv.dotenv_values", "dotenv.main.dotenv_values"]);
const SETTINGS_CONFIG_DICT = new Set([
  "pydantic_settings.SettingsConfigDict",
  "pydantic_settings.main.SettingsConfigDict",
]);

/** One dotenv path a settings class names. */
export interface EnvFileName {
  /** The path as written (`.env`, `config/local.env`), or the name given to `find_dotenv(...)`. */
  path: string;
  /** The settings class. */
  className: string;
  /** Where it is named: the `env_file` value, or the `_env_file=` keyword. */
  range: Range;
  /** How: `env_file` (class Config or model_config) or `_env_file` (an instantiation). */
  how: "env_file" | "_env_file";
}

/** What a module does that can export a dotenv file or a settings value to the process environment. */
export interface ModuleExports {
  /** `load_dotenv(...)` calls: the base name of the file each names (`.env` when none), or null when not literal. */
  loads: Array<{ name: string | null; range: Range }>;
  /** Where the module may copy many values into an environment (ModuleExports docs: `bulkCall`, `unnamedEnvironWrite`), or `dotenv_values(...)` in a module that uses os.environ. */
  bulk: Range | null;
  /** The startup variables the module writes to `os.environ` (any form, anywhere), with where. */
  writes: Map<string, Range>;
  /** The attribute names the module reads, lower-cased (`settings.cuda_visible_devices`: a setting of a variable's name is used). */
  attributes: Set<string>;
}

/** The facts of one module's text, or null when it cannot be parsed. */
export function settingsFacts(
  text: string,
): { names: EnvFileName[]; exports: ModuleExports; aliases: Map<string, string> } | null {
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    const model = buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false });
    return { names: envFileNames(model), exports: moduleExports(model), aliases: fieldAliases(model) };
  } catch {
    return null;
  } finally {
    tree.delete();
  }
}

/** The names of a dotenv path expression: a string literal, `find_dotenv("x")` (literal or none: `.env`), a tuple or list of those. */
function pathsOf(model: ModuleModel, node: SyntaxNode | null | undefined): string[] {
  if (!node) return [];
  const literal = stringValue(node);
  if (literal !== null) return literal ? [literal] : [];
  if (node.type === "tuple" || node.type === "list" || node.type === "parenthesized_expression")
    return node.namedChildren.flatMap((c) => pathsOf(model, c));
  if (node.type === "call" && FIND_DOTENV.has(calleePath(model, node) ?? "")) {
    const { positional, keywords } = callArgs(node);
    const arg = positional[0] ?? keywords.get("filename");
    if (!arg) return [".env"];
    const name = stringValue(arg);
    return name ? [name] : [];
  }
  return [];
}

/** The module's classes that derive from `BaseSettings` (directly, by an imported name), by name. */
function settingsClasses(model: ModuleModel): Map<string, SyntaxNode> {
  const out = new Map<string, SyntaxNode>();
  for (const cls of model.tree.descendantsOfType("class_definition")) {
    const bases = cls.childForFieldName("superclasses")?.namedChildren ?? [];
    const name = cls.childForFieldName("name")?.text;
    if (name && bases.some((b) => b && BASE_SETTINGS.has(model.resolve(b) ?? ""))) out.set(name, cls);
  }
  return out;
}

/** The `NAME = value` statements directly in a class body. */
function bodyAssignments(cls: SyntaxNode): Array<{ name: string; value: SyntaxNode }> {
  const out: Array<{ name: string; value: SyntaxNode }> = [];
  for (const stmt of cls.childForFieldName("body")?.namedChildren ?? []) {
    const a = stmt?.type === "expression_statement" ? stmt.namedChildren[0] : null;
    const left = a?.type === "assignment" ? a.childForFieldName("left") : null;
    const value = a?.childForFieldName("right");
    if (left?.type === "identifier" && value) out.push({ name: left.text, value });
  }
  return out;
}

/** The `env_file` value of a settings class: `class Config: env_file = ...`, `model_config = SettingsConfigDict(env_file=...)` or `{"env_file": ...}`. */
function classEnvFile(model: ModuleModel, cls: SyntaxNode): SyntaxNode | null {
  for (const stmt of cls.childForFieldName("body")?.namedChildren ?? []) {
    if (stmt?.type !== "class_definition" || stmt.childForFieldName("name")?.text !== "Config") continue;
    const v = bodyAssignments(stmt).find((a) => a.name === "env_file");
    if (v) return v.value;
  }
  const config = bodyAssignments(cls).find((a) => a.name === "model_config")?.value;
  if (config?.type === "call" && SETTINGS_CONFIG_DICT.has(calleePath(model, config) ?? ""))
    return callArgs(config).keywords.get("env_file") ?? null;
  if (config?.type === "dictionary")
    for (const p of config.namedChildren)
      if (p?.type === "pair" && stringValue(p.childForFieldName("key")) === "env_file")
        return p.childForFieldName("value");
  return null;
}

/** The `Field(...)` keywords that name the environment variable of a settings field. */
const ALIAS_KEYWORDS = ["alias", "validation_alias", "env"];

/**
 * The settings fields whose environment variable is given by `Field(alias=...)`,
 * `validation_alias=` or (pydantic 1) `env=`: variable name to field name, both lower-cased
 * (`gpus: str = Field("0", alias="CUDA_VISIBLE_DEVICES")` reads the variable into `settings.gpus`).
 */
function fieldAliases(model: ModuleModel): Map<string, string> {
  const out = new Map<string, string>();
  for (const cls of settingsClasses(model).values()) {
    for (const { name, value } of bodyAssignments(cls)) {
      if (value.type !== "call" || !/(?:^|\.)Field$/.test(calleePath(model, value) ?? "")) continue;
      const { keywords } = callArgs(value);
      for (const k of ALIAS_KEYWORDS) {
        const alias = stringValue(keywords.get(k));
        if (alias) out.set(alias.toLowerCase(), name.toLowerCase());
      }
    }
  }
  return out;
}

/** The dotenv paths the module's settings classes name: their `env_file`, and `_env_file=` where the module instantiates one. */
function envFileNames(model: ModuleModel): EnvFileName[] {
  const classes = settingsClasses(model);
  if (!classes.size) return [];
  const out: EnvFileName[] = [];
  for (const [className, cls] of classes) {
    const value = classEnvFile(model, cls);
    for (const path of pathsOf(model, value)) out.push({ path, className, range: nodeRange(value!), how: "env_file" });
  }
  for (const call of model.tree.descendantsOfType("call")) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "identifier" || !classes.has(fn.text)) continue;
    const value = callArgs(call).keywords.get("_env_file");
    for (const path of pathsOf(model, value))
      out.push({ path, className: fn.text, range: nodeRange(value!), how: "_env_file" });
  }
  return out;
}

/** What the module does that may put a dotenv file's or a setting's values into `os.environ`. */
function moduleExports(model: ModuleModel): ModuleExports {
  const loads: ModuleExports["loads"] = [];
  let values: Range | null = null;
  let bulk: Range | null = null;
  for (const call of model.tree.descendantsOfType("call")) {
    const path = calleePath(model, call) ?? "";
    if (LOAD_DOTENV.has(path)) {
      const { positional, keywords } = callArgs(call);
      const arg = positional[0] ?? keywords.get("dotenv_path");
      const named = arg ? pathsOf(model, arg) : [".env"];
      loads.push({ name: named.length === 1 ? basename(named[0]) : null, range: nodeRange(call) });
    } else if (DOTENV_VALUES.has(path)) values ??= nodeRange(call);
    else if (bulkCall(model, call, path)) bulk ??= nodeRange(call);
  }
  bulk ??= unnamedEnvironWrite(model);
  // `dotenv_values(...)` read into a dict is exported only by a write to os.environ: any use of
  // os.environ in the module counts.
  if (!bulk && values && usesEnviron(model)) bulk = values;
  const writes = new Map<string, Range>();
  for (const w of envWritesAnywhere(model)) if (!writes.has(w.variable)) writes.set(w.variable, w.range);
  const attributes = new Set<string>();
  for (const a of model.tree.descendantsOfType("attribute")) {
    const name = a.childForFieldName("attribute")?.text;
    if (name) attributes.add(name.toLowerCase());
  }
  return { loads, bulk, writes, attributes };
}

/** Calls of os.environ and os.putenv whose key the model cannot name. */
const KEYED = new Set(["os.putenv", "os.environ.setdefault", "os.environ.__setitem__"]);
/** Methods that turn a settings object into a mapping (pydantic 2 and 1). */
const DUMPS = new Set(["model_dump", "dict"]);

/**
 * Whether a call may copy many values into an environment: `os.environ.update(...)` of anything but
 * a dict literal, `os.putenv(k, v)` or `os.environ.setdefault(k, v)` with a non-literal key, or an
 * `env=` argument (a child process's environment) built with `**mapping` of something other than
 * os.environ or from a settings dump (`settings.model_dump()`, `.dict()`).
 */
function bulkCall(model: ModuleModel, call: SyntaxNode, path: string): boolean {
  const { positional, keywords } = callArgs(call);
  if (path === "os.environ.update") return !literalMapping(positional[0]);
  if (KEYED.has(path)) return stringValue(positional[0]) === null;
  const env = keywords.get("env");
  if (!env) return false;
  for (const n of [env, ...env.descendantsOfType(["dictionary_splat", "call"])]) {
    if (n?.type === "dictionary_splat" && !model.isEnviron(n.namedChildren[0])) return true;
    const fn = n?.type === "call" ? n.childForFieldName("function") : null;
    if (fn?.type === "attribute" && DUMPS.has(fn.childForFieldName("attribute")?.text ?? "")) return true;
  }
  return false;
}

/** The first `os.environ[key] = ...` (or `os.environ |= ...`) whose key is not a string literal. */
function unnamedEnvironWrite(model: ModuleModel): Range | null {
  for (const a of model.tree.descendantsOfType(["assignment", "augmented_assignment"])) {
    const left = a.childForFieldName("left");
    if (a.type === "augmented_assignment" && model.isEnviron(left)) return nodeRange(a);
    if (left?.type !== "subscript" || !model.isEnviron(left.childForFieldName("value"))) continue;
    if (stringValue(left.childForFieldName("subscript")) === null) return nodeRange(a);
  }
  return null;
}

/** Whether the module names `os.environ` anywhere (an attribute or a name bound to it). */
function usesEnviron(model: ModuleModel): boolean {
  for (const n of model.tree.descendantsOfType(["attribute", "identifier"])) if (model.isEnviron(n)) return true;
  return false;
}

/** Whether an `os.environ.update` argument is absent or a dict literal (its keys are then env writes the model sees). */
const literalMapping = (node: SyntaxNode | undefined): boolean => !node || node.type === "dictionary";

/**
 * Whether `path`, named by a module in folder `moduleDir`, can be the dotenv file `file`: resolved
 * against the module's folder or one of its ancestors (pydantic-settings resolves a relative
 * `env_file` against the working directory, where the program is started; `find_dotenv` searches
 * upwards from the calling module's folder).
 */
export function namesFile(path: string, moduleDir: string, file: string): boolean {
  const target = resolve(file);
  if (basename(path) !== basename(target)) return false;
  for (let d = resolve(moduleDir); ; d = dirname(d)) {
    if (resolve(d, path) === target) return true;
    if (dirname(d) === d) return false;
  }
}
