/**
 * The module-level functions of a module that configure TensorFlow's devices on every call (GPU012's
 * per-job helper, through ProjectLookup.callableTfConfig): a `tf.config.set_visible_devices(...)`
 * (or another call of frameworks.ts TF_DEVICE_CONFIG) as a statement of the function's own body, with
 * no `return` or `raise` before it anywhere in the body (a guard such as `if _configured: return`
 * runs the call once). Calls in a branch, a loop or a `try` do not count. Kept by text (16 texts).
 */
import { ModuleTrees } from "./moduleTrees";
import { buildModel, type ModelOptions } from "./model";
import { pythonInput, type SyntaxNode } from "./parser";
import { TF_DEVICE_CONFIG } from "../frameworks";
import { calleePath } from "../rules/shared/py";

/** One helper: the configuration call (`tf.config.set_visible_devices`) and its 1-based line. */
export interface TfConfigHelper {
  call: string;
  line: number;
}

/** Words one of which a module's text must hold before it is parsed. */
export const TF_CONFIG_WORDS = ["set_visible_devices", "set_memory_growth", "device_configuration"];

const kept = new Map<string, Map<string, TfConfigHelper>>();

/** {@link TfConfigHelper} by function name, for the module text `text`; empty when it does not parse. */
export function tfConfigHelpers(
  text: string,
  options: Pick<ModelOptions, "eagerInitModules" | "torchBelow24">,
): ReadonlyMap<string, TfConfigHelper> {
  if (!TF_CONFIG_WORDS.some((w) => text.includes(w))) return new Map();
  const hit = kept.get(text);
  if (hit) return hit;
  const out = new Map<string, TfConfigHelper>();
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    const model = buildModel(tree, text, options);
    for (const s of model.tree.statements) {
      const def = s.type === "decorated_definition" ? s.childForFieldName("definition") : s;
      if (def?.type !== "function_definition") continue;
      const name = def.childForFieldName("name")?.text;
      const body = def.childForFieldName("body");
      if (!name || !body) continue;
      for (const st of body.namedChildren) {
        if (!st) continue;
        const call = st.type === "expression_statement" ? st.namedChildren[0] : null;
        const path = call?.type === "call" ? calleePath(model, call) : null;
        if (path && TF_DEVICE_CONFIG.has(path)) {
          out.set(name, { call: path.replace(/^tensorflow\./, "tf."), line: call!.startPosition.row + 1 });
          break;
        }
        if (leaves(st)) break;
      }
    }
  } catch {
    out.clear();
  } finally {
    tree.delete();
  }
  if (kept.size >= 16) kept.delete(kept.keys().next().value!);
  kept.set(text, out);
  return out;
}

/** Whether a statement may leave the function (`return`/`raise` in it, nested functions aside). */
function leaves(st: SyntaxNode): boolean {
  if (st.type === "return_statement" || st.type === "raise_statement") return true;
  return st.descendantsOfType(["return_statement", "raise_statement"]).length > 0;
}
