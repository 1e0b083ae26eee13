/**
 * A Hydra task that hands a config value to Lightning's Trainer as its GPU count (GPU052, preview):
 * `@hydra.main(...) def main(cfg): ... Trainer(devices=cfg.num_gpus)`, so that a shell script's
 * override `python main.py num_gpus=2` is the number of GPUs Lightning asks for.
 *
 * Facts:
 * - Lightning-AI/pytorch-lightning@eddba2fc src/lightning/fabric/utilities/device_parser.py:49
 *   `_parse_gpu_ids` (which the CUDA accelerator's `parse_devices` calls for `Trainer(devices=...)`):
 *   "Any int N > 0 indicates that GPUs [0..N) should be used" (:63); `_normalize_parse_gpu_input_to_list`
 *   returns `list(range(gpus))` (:154); `_sanitize_gpu_ids` raises `MisconfigurationException(f"You
 *   requested gpu: {gpus}\n But your machine only has: {all_available_gpus}")` (:133-136) for an id
 *   that is not among the visible CUDA devices; the check is skipped under torchelastic (:92-98), which
 *   a plain `python x.py` start is not.
 * - Hydra's command line: `key=value` overrides a config value, `+key=value` adds one, `++key=value`
 *   adds or overrides (Hydra documentation, "Override grammar/Basic"); an integer literal is given to
 *   the task as an int.
 *
 * Read from the script's tree-sitter parse and model; empty whenever the code is not of that shape.
 * Never throws.
 */
import { ModuleTrees } from "../python/moduleTrees";
import { buildModel, namesVisibleDevices, type ModuleModel } from "../python/model";
import { enclosingFunction, pythonInput, stringValue, type SyntaxNode } from "../python/parser";
import { callArgs, calleePath, walk } from "../rules/shared/py";
import { DEFAULT_EAGER_INIT_MODULES } from "../frameworks";
import { hydraMains } from "./hydra";

/** One Trainer call of a Hydra task whose GPU count is a config value. */
export interface LightningDevicesUse {
  /** The config path (`num_gpus`, `trainer.devices`) the count is read from. */
  path: string;
  /** The Trainer keyword: `devices`, or `gpus` of PyTorch Lightning before 2.0. */
  keyword: string;
  /** 1-based line of the keyword in the script. */
  line: number;
}

const TRAINERS = new Set([
  "lightning.Trainer",
  "lightning.pytorch.Trainer",
  "lightning.pytorch.trainer.Trainer",
  "lightning.pytorch.trainer.trainer.Trainer",
  "pytorch_lightning.Trainer",
  "pytorch_lightning.trainer.Trainer",
  "pytorch_lightning.trainer.trainer.Trainer",
]);

/** Accelerators that use CUDA GPUs (`auto` picks CUDA when a GPU is visible; the default). */
const CUDA_ACCELERATORS = new Set(["gpu", "cuda", "auto"]);

/** Calls a task may hand the whole config to without changing it. */
const READS_ONLY = new Set(["print", "str", "repr", "OmegaConf.to_yaml", "omegaconf.OmegaConf.to_yaml"]);

const kept = new Map<string, LightningDevicesUse[]>();

/**
 * The Trainer calls of the script's `@hydra.main` functions that take their GPU count from the
 * task's config: `devices=cfg.a.b` (or `gpus=`), directly in the task function, with no `**`
 * arguments and an accelerator that is absent or a literal `"gpu"`/`"cuda"`/`"auto"`. Empty where
 * the task may change that value (assigns to its path or a path above it, or rebinds the config,
 * anywhere in the task; hands the whole config to any call but printing before the Trainer call:
 * `open_dict(cfg)`, `setup(cfg)`), or where the script's code names CUDA_VISIBLE_DEVICES in a string
 * (python/model.ts `namesVisibleDevices`; a comment does not count).
 */
export function hydraLightningDevices(text: string): LightningDevicesUse[] {
  if (!text.includes("hydra") || !text.includes("Trainer")) return [];
  const hit = kept.get(text);
  if (hit) return hit;
  const tree = ModuleTrees.parse(pythonInput(text), false);
  let out: LightningDevicesUse[] = [];
  try {
    const model = buildModel(tree, text, { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false });
    // Ids may be relative to a selection the script makes (a string of its code, not a comment).
    out = namesVisibleDevices(model) ? [] : hydraMains(model).flatMap((m) => usesIn(model, m.def));
  } catch {
    out = [];
  } finally {
    tree.delete();
  }
  if (kept.size >= 16) kept.delete(kept.keys().next().value!);
  kept.set(text, out);
  return out;
}

/** The first parameter's name of a function definition, or null. */
function firstParam(def: SyntaxNode): string | null {
  const p = def.childForFieldName("parameters")?.namedChildren[0];
  if (!p) return null;
  if (p.type === "identifier") return p.text;
  if (p.type === "typed_parameter") return p.namedChildren.find((c) => c?.type === "identifier")?.text ?? null;
  return null;
}

/** {@link hydraLightningDevices} for one task function. */
function usesIn(model: ModuleModel, def: SyntaxNode): LightningDevicesUse[] {
  const cfg = firstParam(def);
  const body = def.childForFieldName("body");
  if (!cfg || !body) return [];
  const configPath = new RegExp(`^${cfg}((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)$`);
  // The config paths the task assigns ("" for the whole config), and where it first hands the whole config to a call.
  const assigned: string[] = [];
  let handed = Infinity;
  const found: (LightningDevicesUse & { at: number })[] = [];
  walk(body, (n) => {
    if (n.type === "assignment" || n.type === "augmented_assignment") {
      const left = n.childForFieldName("left")?.text ?? "";
      if (left === cfg || left.startsWith(`${cfg}[`)) assigned.push("");
      else if (left.startsWith(`${cfg}.`)) assigned.push(left.slice(cfg.length + 1));
    }
    if (n.type !== "call") return true;
    const path = calleePath(model, n);
    const { positional, keywords } = callArgs(n);
    const handsConfig = [...positional, ...keywords.values()].some((a) => a.type === "identifier" && a.text === cfg);
    if (handsConfig && !READS_ONLY.has(path ?? "")) handed = Math.min(handed, n.startIndex);
    if (!path || !TRAINERS.has(path) || enclosingFunction(n)?.id !== def.id) return true;
    if (positional.some((a) => a.type === "dictionary_splat" || a.type === "list_splat")) return true;
    const accelerator = keywords.get("accelerator");
    if (accelerator && !CUDA_ACCELERATORS.has(stringValue(accelerator) ?? "")) return true;
    for (const keyword of ["devices", "gpus"]) {
      const v = keywords.get(keyword);
      const m = v ? configPath.exec(v.text) : null;
      if (v && m) found.push({ path: m[1].slice(1), keyword, line: v.startPosition.row + 1, at: n.startIndex });
    }
    return true;
  });
  // A call the config went to before the Trainer may have changed it; an assignment anywhere to the path (or above it) may too.
  return found
    .filter((u) => u.at < handed && !assigned.some((p) => p === "" || u.path === p || u.path.startsWith(`${p}.`)))
    .map(({ path, keyword, line }) => ({ path, keyword, line }));
}

/** A Hydra override's key and value (`num_gpus=2`, `+trainer.devices=2`, `++x=1`); null for anything else. */
export function hydraOverride(word: string): { key: string; value: string } | null {
  const m = /^\+{0,2}([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=(.*)$/s.exec(word);
  return m ? { key: m[1], value: m[2] } : null;
}
