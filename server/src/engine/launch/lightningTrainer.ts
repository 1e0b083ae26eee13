/**
 * What a launched Python file asks of PyTorch Lightning: its one `Trainer(...)` (or Fabric's
 * `Fabric(...)`) call with the `devices`, `accelerator`, `strategy` and `num_nodes` it is given,
 * each read as written or from an argparse option on the launch's command line (GPU022).
 */
import { ModuleTrees } from "../python/moduleTrees";
import { buildModel, type ModuleModel } from "../python/model";
import { pythonInput, stringValue, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath } from "../rules/shared/py";
import { DEFAULT_EAGER_INIT_MODULES } from "../frameworks";
import { assignedAttributes, launchedScriptFacts } from "./script";
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
function optionValueOf(text: string, model: ModuleModel, argv: readonly string[] | null): OptionValue {
  const facts = launchedScriptFacts(text);
  const assigned = assignedAttributes(text);
  return (attribute) => {
    const obj = attribute.childForFieldName("object");
    const dest = attribute.childForFieldName("attribute")?.text;
    if (!obj || obj.type !== "identifier" || !dest || assigned.dynamic || assigned.names.has(dest)) return null;
    if (text.includes("set_defaults") || !namespaceName(model, obj.text, facts.returning)) return null;
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

/**
 * The file's Lightning `Trainer(...)` and `Fabric(...)` calls, read with the command line `argv`
 * (the words after the file; null when not known, then no option is read). A call with positional
 * arguments, `*args`/`**kwargs`, or {@link OPAQUE_KEYWORDS} is left out. Never throws.
 */
export function lightningCalls(text: string, argv: readonly string[] | null): LightningCall[] {
  if (!/\b(?:Trainer|Fabric)\b/.test(text)) return [];
  const tree = ModuleTrees.parse(pythonInput(text), false);
  const out: LightningCall[] = [];
  try {
    const model = buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false });
    const option = optionValueOf(text, model, argv);
    const path = (c: SyntaxNode) => calleePath(model, c);
    for (const call of model.nodesOfType("call")) {
      const callee = path(call) ?? "";
      const kind = TRAINER.test(callee) ? "Trainer" : FABRIC.test(callee) ? "Fabric" : null;
      if (!kind) continue;
      const args = callArgs(call);
      if (args.positional.length || OPAQUE_KEYWORDS.some((k) => args.keywords.has(k))) {
        out.push({
          kind,
          line: call.startPosition.row + 1,
          devices: null,
          accelerator: null,
          strategy: null,
          numNodes: null,
        });
        continue;
      }
      const accelerator = args.keywords.has("accelerator") ? scalar(args.keywords.get("accelerator"), option) : "auto";
      const nodes = args.keywords.has("num_nodes") ? scalar(args.keywords.get("num_nodes"), option) : "1";
      out.push({
        kind,
        line: call.startPosition.row + 1,
        devices: devicesOf(args.keywords.get("devices"), option),
        accelerator,
        strategy: strategyOf(args.keywords.get("strategy"), option, path),
        numNodes: nodes !== null && /^\d+$/.test(nodes.trim()) ? Number(nodes) : null,
      });
    }
  } catch {
    return [];
  } finally {
    tree.delete();
  }
  return out;
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
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    const model = buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false });
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
  } catch {
    return [];
  } finally {
    tree.delete();
  }
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
