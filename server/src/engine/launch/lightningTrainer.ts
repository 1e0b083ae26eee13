/**
 * What a launched Python file asks of PyTorch Lightning: its one `Trainer(...)` (or Fabric's
 * `Fabric(...)`) call with the `devices`, `accelerator`, `strategy` and `num_nodes` it is given,
 * each read as written or from an argparse option on the launch's command line (GPU022).
 */
import type { ModuleModel } from "../python/model";
import { stringValue, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath, isAssignmentTarget } from "../rules/shared/py";
import { methodOf } from "../python/argparseReach";
import { assignedAttributes, callsMethod, launchedScriptFacts, withScriptModel } from "./script";
import { libraryPins, requirementsIn } from "../requirements";

/** `pl.Trainer`, `lightning.pytorch.Trainer`, `lightning.Trainer` as their imports resolve them. */
const TRAINER = /^(?:pytorch_lightning|lightning(?:\.pytorch)?)(?:\.trainer(?:\.trainer)?)?\.Trainer$/;
/** `lightning.Fabric`, `lightning.fabric.Fabric`, `lightning_fabric.Fabric`. */
const FABRIC = /^(?:lightning(?:\.fabric)?|lightning_fabric)(?:\.fabric)?\.Fabric$/;
/** Registered strategies that start their processes as scripts (`start_method="popen"`): their launcher validates the settings against the cluster. */
const POPEN_STRATEGIES = new Set(["ddp", "ddp_find_unused_parameters_false", "ddp_find_unused_parameters_true"]);
/** Keywords that make the call's settings other than read here: old API (`gpus`, `num_processes`) or a cluster environment among the plugins. */
const OPAQUE_KEYWORDS = ["plugins", "gpus", "num_processes", "tpu_cores", "auto_select_gpus"];

/** One Lightning `Trainer`/`Fabric` call's settings as the launch gives them. */
export interface LightningCall {
  kind: "Trainer" | "Fabric";
  /** 1-based line of the call. */
  line: number;
  /** `devices`: a count, `"all"` (`"auto"`, `-1`, or not given: every device of the accelerator), or null when not known. */
  devices: number | "all" | null;
  /** `accelerator` as a string (`"auto"` when not given); null when not known. */
  accelerator: string | null;
  /**
   * How the strategy starts processes: `"auto"` (not given or `"auto"`: DDP, which starts them as
   * scripts, for more than one device or node), `"popen"` (`"ddp"`, `DDPStrategy()` without a
   * `start_method`), or null (another strategy, or not known).
   */
  strategy: "auto" | "popen" | null;
  /** `num_nodes` (1 when not given); null when not known. */
  numNodes: number | null;
}

/** The value an option of the launched file gets from the command line `argv` (the words after the file), else its plain default. */
type OptionValue = (attribute: SyntaxNode) => string | null;

/**
 * The value of `ns.dest` where `ns` is a namespace that `parse_args()` returned in the file and
 * `dest` the destination of exactly one of its single-valued options, never assigned in the file:
 * the option's last value on the command line, else its plain default. Null otherwise.
 */
function optionValueOf(model: ModuleModel, argv: readonly string[] | null): OptionValue {
  const facts = launchedScriptFacts(model.text, undefined, model);
  const assigned = assignedAttributes(model.text, model);
  const setsDefaults = callsMethod(model, "set_defaults");
  return (attribute) => {
    const obj = attribute.childForFieldName("object");
    const dest = attribute.childForFieldName("attribute")?.text;
    if (!obj || obj.type !== "identifier" || !dest || assigned.dynamic || assigned.names.has(dest)) return null;
    if (setsDefaults || !namespaceName(model, obj.text, facts.returning)) return null;
    const options = [...facts.options].filter(([, o]) => o.dest === dest);
    if (!options.length || options.some(([, o]) => o.notSingle) || new Set(options.map(([, o]) => o.line)).size !== 1)
      return null;
    if (argv === null) return null;
    let found: string | null | undefined;
    for (let i = 0; i < argv.length; i++) {
      for (const [name] of options) {
        if (argv[i] === name) found = i + 1 < argv.length ? argv[i + 1] : null;
        else if (argv[i].startsWith(`${name}=`)) found = argv[i].slice(name.length + 1);
      }
    }
    if (found !== undefined) return found;
    // An abbreviation argparse would accept (`--gpu` for `--gpus`) or an unknown word: not read.
    if (argv.some((w) => w.startsWith("--") && options.some(([name]) => name.startsWith(w.split("=")[0])))) return null;
    return options[0][1].defaultInteger ?? options[0][1].defaultText;
  };
}

/**
 * Whether `name` is assigned a namespace in the module: `name = parser.parse_args()` (or
 * `parse_known_args`, whose first element `name, rest = ...` takes), or the call of one of the
 * file's functions that return one (`returning`), read from the module's assignments.
 */
function namespaceName(model: ModuleModel, name: string, returning: readonly string[]): boolean {
  return model.nodesOfType("assignment").some((a) => {
    const left = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!left || right?.type !== "call") return false;
    const target = left.type === "identifier" ? left : left.type === "pattern_list" ? left.namedChildren[0] : null;
    if (target?.type !== "identifier" || target.text !== name) return false;
    const fn = right.childForFieldName("function");
    const last = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : fn?.text;
    return (
      last === "parse_args" || last === "parse_known_args" || (fn?.type === "identifier" && returning.includes(fn.text))
    );
  });
}

/** A literal (or option) value as text: a string, an integer (`-1` too), or null. */
function scalar(node: SyntaxNode | undefined, option: OptionValue): string | null {
  if (!node) return null;
  if (node.type === "integer") return node.text;
  if (node.type === "unary_operator" && node.text.replace(/\s/g, "") === "-1") return "-1";
  if (node.type === "string") return stringValue(node);
  if (node.type === "attribute") return option(node);
  return null;
}

/** `devices` as Lightning reads it: an int, `"-1"`/`-1`/`"auto"` (all), `"0,1"` (a list), or a list of ints. */
function devicesOf(node: SyntaxNode | undefined, option: OptionValue): number | "all" | null {
  if (!node) return "all";
  if (node.type === "list" || node.type === "tuple") {
    const items = node.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment");
    return items.length && items.every((c) => c.type === "integer") ? items.length : null;
  }
  const s = scalar(node, option)?.trim();
  if (s === undefined || s === null) return null;
  if (s === "auto" || s === "-1") return "all";
  if (/^\d+$/.test(s)) return Number(s) >= 1 ? Number(s) : null;
  if (/^\d+(?:\s*,\s*\d+)*\s*,?$/.test(s)) return s.split(",").filter((p) => p.trim()).length;
  return null;
}

function strategyOf(node: SyntaxNode | undefined, option: OptionValue, path: (c: SyntaxNode) => string | null) {
  if (!node) return "auto" as const;
  if (node.type === "call") {
    const callee = path(node) ?? "";
    const direct = /(?:^|\.)DDPStrategy$/.test(callee) && /^(?:pytorch_lightning|lightning)\./.test(callee);
    const args = callArgs(node);
    return direct && !args.keywords.has("start_method") && !args.positional.some((a) => a.type.includes("splat"))
      ? ("popen" as const)
      : null;
  }
  const s = scalar(node, option);
  return s === "auto" ? ("auto" as const) : s !== null && POPEN_STRATEGIES.has(s) ? ("popen" as const) : null;
}

/** What a launched file shows of its Lightning program ({@link lightningProgram}). */
export interface LightningProgram {
  /** Its Lightning `Trainer(...)` and `Fabric(...)` calls. */
  calls: LightningCall[];
  /**
   * It may change what Lightning detects or is given under Slurm: it makes a cluster environment of
   * its own (a call of a `...Environment` class: `SLURMEnvironment(...)`, `LightningEnvironment()`;
   * or a class of its own named so or derived from one),
   * changes Slurm's variables in `os.environ` ({@link changesSlurmVariables}), or names Lightning's
   * defaults from the environment (`PL_TRAINER_DEVICES`, Fabric's `LT_DEVICES`) in its code.
   */
  ownSettings: boolean;
  /** It calls a `launch()` method (Fabric's, whose launcher runs the Slurm check). */
  launches: boolean;
}

/**
 * The Lightning program of a launched file, from its syntax tree (one parse: the launch/script.ts
 * facts that the options' values need are made from the same model and kept by text): its
 * `Trainer(...)` and `Fabric(...)` calls, read with the command line `argv` (the words after the
 * file; null when not known, then no option is read); a call with positional arguments,
 * `*args`/`**kwargs`, or {@link OPAQUE_KEYWORDS} has no setting known. No call for a text that
 * names neither `Trainer` nor `Fabric` (then it is not parsed) or does not parse. Never throws.
 */
export function lightningProgram(text: string, argv: readonly string[] | null): LightningProgram {
  const none: LightningProgram = { calls: [], ownSettings: false, launches: false };
  // A sound text test: a callee that resolves to a Trainer or a Fabric names it in the text.
  if (!text.includes("Trainer") && !text.includes("Fabric")) return none;
  return withScriptModel(text, (model) => programOf(model, argv)) ?? none;
}

/** {@link lightningProgram} of a model. */
function programOf(model: ModuleModel, argv: readonly string[] | null): LightningProgram {
  const option = optionValueOf(model, argv);
  const path = (c: SyntaxNode) => calleePath(model, c);
  const calls: LightningCall[] = [];
  for (const call of model.nodesOfType("call")) {
    const callee = path(call) ?? "";
    const kind = TRAINER.test(callee) ? "Trainer" : FABRIC.test(callee) ? "Fabric" : null;
    if (!kind) continue;
    const line = call.startPosition.row + 1;
    const args = callArgs(call);
    if (args.positional.length || OPAQUE_KEYWORDS.some((k) => args.keywords.has(k))) {
      calls.push({ kind, line, devices: null, accelerator: null, strategy: null, numNodes: null });
      continue;
    }
    const accelerator = args.keywords.has("accelerator") ? scalar(args.keywords.get("accelerator"), option) : "auto";
    const nodes = args.keywords.has("num_nodes") ? scalar(args.keywords.get("num_nodes"), option) : "1";
    calls.push({
      kind,
      line,
      devices: devicesOf(args.keywords.get("devices"), option),
      accelerator,
      strategy: strategyOf(args.keywords.get("strategy"), option, path),
      numNodes: nodes !== null && /^\d+$/.test(nodes.trim()) ? Number(nodes) : null,
    });
  }
  if (!calls.length) return { calls, ownSettings: false, launches: false };
  const words = launchedScriptFacts(model.text, undefined, model).words;
  const ownSettings =
    model.nodesOfType("call").some((c) => ENVIRONMENT.test(lastName(c.childForFieldName("function")) ?? "")) ||
    definesEnvironment(model) ||
    changesSlurmVariables(model) ||
    words === null ||
    [...words].some((w) => w.startsWith("PL_TRAINER_") || /^LT_[A-Z]/.test(w));
  return { calls, ownSettings, launches: callsMethod(model, "launch") };
}

/** A cluster environment class's name as Lightning's are named (`SLURMEnvironment`, `LightningEnvironment`, `ClusterEnvironment`). */
const ENVIRONMENT = /^\w+Environment$/;

/** Whether the module defines a class named as a cluster environment, or one derived from such a class (a cluster environment of its own). */
function definesEnvironment(model: ModuleModel): boolean {
  return model.nodesOfType("class_definition").some((c) => {
    const bases = c.childForFieldName("superclasses")?.namedChildren ?? [];
    return [c.childForFieldName("name"), ...bases].some((n) => ENVIRONMENT.test(lastName(n) ?? ""));
  });
}

/** The last name of an identifier or attribute (`SLURMEnvironment` of `envs.SLURMEnvironment`); null for anything else. */
function lastName(n: SyntaxNode | null | undefined): string | null {
  if (n?.type === "identifier") return n.text;
  return n?.type === "attribute" ? (n.childForFieldName("attribute")?.text ?? null) : null;
}

/** Methods of `os.environ` (a `MutableMapping`) that change it. */
const ENVIRON_CHANGES = new Set(["pop", "popitem", "setdefault", "update", "clear", "__setitem__", "__delitem__"]);

/**
 * Whether the module may change Slurm's variables in `os.environ`, where Lightning's
 * SLURMEnvironment reads them (also an object named `environ`): a `SLURM_*` key, or one not
 * written out as a string, assigned, deleted, or given to one of {@link ENVIRON_CHANGES}
 * (`os.environ["SLURM_NTASKS"] = "1"`, `del os.environ[k]`, `os.environ.pop("SLURM_NTASKS")`,
 * `os.environ.update(env)`); `popitem()` and `clear()` always. Read from the syntax tree, so a
 * name in a comment or an unrelated string does not count.
 */
function changesSlurmVariables(model: ModuleModel): boolean {
  const isEnviron = (n: SyntaxNode | null | undefined) => model.isEnviron(n) || lastName(n) === "environ";
  const slurmKey = (k: SyntaxNode | null | undefined) => {
    const v = stringValue(k);
    return v === null || v.startsWith("SLURM_");
  };
  for (const sub of model.nodesOfType("subscript")) {
    if (!isEnviron(sub.childForFieldName("value"))) continue;
    if (changedTarget(sub) && slurmKey(sub.childForFieldName("subscript"))) return true;
  }
  for (const call of model.nodesOfType("call")) {
    const fn = call.childForFieldName("function");
    const method = methodOf(call);
    if (!method || !ENVIRON_CHANGES.has(method) || !isEnviron(fn?.childForFieldName("object"))) continue;
    const { positional, keywords } = callArgs(call);
    if (method === "popitem" || method === "clear") return true;
    if (method !== "update") {
      if (slurmKey(positional[0])) return true;
      continue;
    }
    if ([...keywords.keys()].some((k) => k.startsWith("SLURM_"))) return true;
    for (const p of positional) {
      if (p.type !== "dictionary") return true; // `update(env)`, `update(**env)`: keys not known
      for (const pair of p.namedChildren) {
        if (pair && pair.type !== "comment" && (pair.type !== "pair" || slurmKey(pair.childForFieldName("key"))))
          return true;
      }
    }
  }
  return false;
}

/** Whether a subscript is assigned (also in a tuple target or augmented) or deleted. */
function changedTarget(sub: SyntaxNode): boolean {
  let n = sub;
  while (n.parent && (n.parent.type === "pattern_list" || n.parent.type === "tuple_pattern")) n = n.parent;
  const p = n.parent;
  if (p?.type === "delete_statement" || (p?.type === "expression_list" && p.parent?.type === "delete_statement"))
    return true;
  return isAssignmentTarget(n) || (p?.type === "augmented_assignment" && p.childForFieldName("left")?.id === n.id);
}

/** Lightning distributions whose pins decide what the project runs (PEP 503 names). */
const LIGHTNING_DISTRIBUTIONS = ["pytorch-lightning", "lightning", "lightning-fabric"];

/**
 * The Lightning pins (one specifier per Lightning distribution) that the project file named `name`
 * (its base name) gives in `text`: requirements*.txt, pyproject.toml and environment.yml as
 * config.ts `requirementsIn` reads them; setup.py's `setup(install_requires=[...])` strings, read
 * from its syntax tree; setup.cfg's `install_requires` lines. Broken text gives none.
 */
export function lightningPinsIn(name: string, text: string): string[] {
  const requirements =
    name === "setup.py"
      ? setupPyRequirements(text)
      : name === "setup.cfg"
        ? setupCfgRequirements(text)
        : requirementsIn(name, text);
  const pins = libraryPins(requirements);
  return LIGHTNING_DISTRIBUTIONS.flatMap((d) => (pins[d] ? [pins[d]] : []));
}

/** The string elements of `install_requires=[...]` (a list or tuple written in the call) of a `setup(...)` call. */
function setupPyRequirements(text: string): string[] {
  if (!text.includes("install_requires")) return [];
  return (
    withScriptModel(text, (model) => {
      const out: string[] = [];
      for (const call of model.nodesOfType("call")) {
        const fn = call?.childForFieldName("function");
        const last = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : fn?.text;
        if (!call || last !== "setup") continue;
        const list = callArgs(call).keywords.get("install_requires");
        if (list?.type !== "list" && list?.type !== "tuple") continue;
        for (const e of list.namedChildren) {
          const v = e ? stringValue(e) : null;
          if (v !== null && v !== undefined) out.push(v);
        }
      }
      return out;
    }) ?? []
  );
}

/** The requirements of setup.cfg's `install_requires` (its value and the indented lines that continue it). */
function setupCfgRequirements(text: string): string[] {
  const out: string[] = [];
  let inKey = false;
  for (const line of text.split(/\r?\n/)) {
    const key = /^install_requires\s*=\s*(.*)$/.exec(line);
    if (key) {
      inKey = true;
      if (key[1].trim()) out.push(key[1].trim());
    } else if (inKey && /^\s+\S/.test(line)) out.push(line.trim());
    else if (inKey && line.trim()) inKey = false;
  }
  return out;
}
