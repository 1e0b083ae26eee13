import type { SyntaxNode } from "../../python/parser";
import { namesVisibleDevices } from "../../python/model";
import type { RuleContext } from "../../rule";
import { callArgs, calleePath } from "./py";

/** A list of device ids from an option's default that a call hands to a project function's DataParallel ({@link optionListOrdinals}). */
export interface OptionListOrdinal {
  /** The argument that passes the list (`opt.gpu_ids`). */
  node: SyntaxNode;
  ids: number[];
  /** The option, its default as written, and where it is declared (`options.py:13`). */
  option: string;
  text: string;
  where: string;
  /** The callee as written, and its use (`init_net() → DataParallel(device_ids=…)`, `networks.py:27`). */
  callee: string;
  form: string;
  useWhere: string;
  /**
   * Every launch of the file is known and passes no spelling of the option: a project script
   * (never a document) whose words after the script's path are all literal. False where nothing
   * starts the file (a run may pass the option: preview).
   */
  settled: boolean;
}

/**
 * The lists of device ids that the argparse namespace returned by a project function, called
 * without arguments, gives a run without the option (`opt = TrainOptions().parse()`, whose `parse` turns the `"0,1"` default of
 * `--gpu_ids` into `[0, 1]` in place: ProjectLookup.callableOptionLists), where the module passes
 * `opt.gpu_ids` to a project function that hands that parameter to DataParallel as its ids
 * (ProjectLookup.callableListParams: `define_G(opt.ngf, opt.gpu_ids)`). The namespace must be
 * bound once and only read (its attributes, never assigned, no method of it called, printing
 * aside). Silent where the file, the options' module or the callee's module names
 * CUDA_VISIBLE_DEVICES, a project document starts the file, or a script that starts it passes the
 * option or words not known (`$ARGS`).
 */
export function optionListOrdinals(ctx: RuleContext): OptionListOrdinal[] {
  const project = ctx.project;
  const model = ctx.model;
  if (!project?.callableOptionLists || !project.callableListParams || !model.text.includes(".")) return [];
  // Ids may be relative to a selection the file makes.
  if (namesVisibleDevices(model)) return [];
  const out: OptionListOrdinal[] = [];
  for (const a of model.nodesOfType("assignment")) {
    const name = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    // `opt = TrainOptions().parse()`: a call without arguments (most calls are asked nothing).
    if (!a || name?.type !== "identifier" || right?.type !== "call") continue;
    if (right.childForFieldName("arguments")?.namedChildren.some((c) => c?.type !== "comment")) continue;
    const path = calleePath(model, right);
    if (!path?.includes(".")) continue;
    const lists = project.callableOptionLists(path);
    const passed = lists ? passedAttributes(ctx, name) : null;
    for (const { attr, node, call } of passed ?? []) {
      const list = lists!.find((l) => l.dest === attr);
      const callee = calleePath(model, call);
      const uses = list && callee?.includes(".") ? project.callableListParams(callee) : null;
      const { positional, keywords } = callArgs(call);
      const use = uses?.find((d) => (keywords.get(d.name) ?? positional[d.index])?.id === node.id);
      if (!list || !use || project.callableModuleMentions?.(callee!, "CUDA_VISIBLE_DEVICES") !== false) continue;
      const settled = settledWithout(ctx, list.spellings);
      if (settled === null) continue;
      out.push({
        node,
        ids: list.ids,
        option: list.option,
        text: list.text,
        where: list.where,
        callee: call.childForFieldName("function")!.text,
        form: use.form,
        useWhere: use.where,
        settled,
      });
    }
  }
  return out;
}

/**
 * The attributes of namespace `name` (bound once in the module, by this assignment) passed as they
 * are as an argument of a call (`f(opt.gpu_ids)`), with the call; null where the name is used
 * otherwise than reading its attributes or printing it (a call may change it), or an attribute is
 * assigned or a method of it called.
 */
function passedAttributes(
  ctx: RuleContext,
  name: SyntaxNode,
): Array<{ attr: string; node: SyntaxNode; call: SyntaxNode }> | null {
  const model = ctx.model;
  const out: Array<{ attr: string; node: SyntaxNode; call: SyntaxNode }> = [];
  for (const ref of model.nodesOfType("identifier")) {
    if (!ref || ref.text !== name.text || ref.id === name.id) continue;
    const p = ref.parent;
    if (p?.type === "keyword_argument" && p.childForFieldName("name")?.id === ref.id) continue;
    if (p?.type === "attribute" && p.childForFieldName("attribute")?.id === ref.id) continue;
    if (p?.type === "argument_list" && p.parent?.childForFieldName("function")?.text === "print") continue;
    if (p?.type !== "attribute" || p.childForFieldName("object")?.id !== ref.id) return null;
    const up = p.parent;
    if (up?.type === "call" && up.childForFieldName("function")?.id === p.id) return null;
    if (isTarget(p)) return null;
    const call = up?.type === "argument_list" ? up.parent : up?.type === "keyword_argument" ? up.parent?.parent : null;
    if (up?.type === "keyword_argument" && up.childForFieldName("value")?.id !== p.id) continue;
    if (call?.type === "call") out.push({ attr: p.childForFieldName("attribute")!.text, node: p, call });
  }
  // Bound once: no other assignment of the name.
  const bound = model
    .nodesOfType(["assignment", "augmented_assignment", "for_statement"])
    .filter((a) => a?.childForFieldName("left")?.text === name.text).length;
  return bound === 1 ? out : null;
}

/** Whether `n` is (part of) an assignment's target, or deleted. */
function isTarget(n: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p; c = p, p = p.parent) {
    if (p.type === "assignment" || p.type === "augmented_assignment" || p.type === "for_statement")
      return p.childForFieldName("left")?.id === c.id;
    if (p.type === "delete_statement") return true;
    if (p.type === "expression_statement" || p.type === "block") return false;
  }
  return false;
}

/**
 * Whether every launch of the file is known to pass none of the option's `spellings` (true), or
 * nothing starts it (false: a run may pass it); null where a document starts it, or a script's
 * words after the file are not known or may name the option (a prefix of a long spelling:
 * argparse's abbreviations; a short spelling with its value attached).
 */
function settledWithout(ctx: RuleContext, spellings: readonly string[]): boolean | null {
  if ((ctx.project?.documentedPythonLaunches?.().length ?? 0) > 0) return null;
  const launches = ctx.launchNodes ?? [];
  if (!launches.length) return false;
  for (const l of launches) {
    if (l.documented || !l.args) return null;
    for (const word of l.args) {
      if (!word.startsWith("-")) continue;
      const w = word.split("=")[0];
      const long = w.startsWith("--");
      if (spellings.some((s) => (long ? w.length > 2 && s.startsWith(w) : !s.startsWith("--") && w.startsWith(s))))
        return null;
    }
  }
  return true;
}
