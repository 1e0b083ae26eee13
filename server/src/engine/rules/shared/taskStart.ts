/**
 * The judgement of a write of a startup variable made when a module function starts, by code that
 * is not in the module (GPU062: Hydra's `hydra.job.env_set`, applied when Hydra starts the task
 * function): the judgement GPU001 and GPU002 give the same write written as the function's first
 * statement, from the module's timeline (python/timeline.ts) and nothing else:
 * - where the module calls the function (a `__main__` block's `main()`, which the walk inlines), what
 *   ran before that call: a freezing init makes it GPU001's (error; silent where the function starts
 *   a child process, which may be what the write is for); else a reading framework import makes it
 *   GPU002's (information, default only where an uncatalogued GPU library sits between that import
 *   and the function, preview otherwise);
 * - where the module never calls it, what runs above its definition, as GPU001 judges a write in
 *   a function the module never calls (warning after a module-level initialising call, silent after
 *   a mere import; GPU002 does not follow such functions).
 */
import { nodeRange } from "../../python/events";
import type { ModuleModel } from "../../python/model";
import type { SyntaxNode } from "../../python/parser";
import { stateAfter } from "../../python/timeline";
import type { Range } from "../../types";
import { lateInFunction } from "../GPU001-env-after-cuda-init";
import { afterImportWhy, uncataloguedImportBetween } from "../GPU002-env-after-framework-import";
import { startsChildWithin } from "./childProcess";

/** What a write at the start of a function meets, as GPU001 or GPU002 judge it. */
export interface TaskStartVerdict {
  /** `initialised`: GPU001's judgement (CUDA initialised before: no effect); `imported`: GPU002's (a framework imported, nothing initialised yet). */
  kind: "initialised" | "imported";
  severity: "error" | "warning" | "information";
  /** GPU002's preview condition: nothing but known libraries between the import and the function. */
  preview: boolean;
  /** The initialising call or import, or the framework import, in the module. */
  range: Range;
  /** What ran before, with its line named by `where`: `after CUDA was initialised by X (line N: note)`, `` after `import torch` (line N) ``. */
  after: string;
  /** GPU002's reason (`: it works only if ...`, rules/GPU002 `afterImportWhy`); null for GPU001's judgement. */
  why: string | null;
  /** The related location's message: `CUDA initialised here by X`, `torch imported here`. */
  related: string;
}

/**
 * The verdict on a write of `variable` when the module function `def` (named `name`) starts, or
 * null when GPU001 and GPU002 would both be silent (see the module comment).
 * @param where names a 0-based line of the module for messages
 */
export function writeAtTaskStart(
  model: ModuleModel,
  def: SyntaxNode,
  name: string,
  variable: string,
  where: (row: number) => string,
): TaskStartVerdict | null {
  const inlined = model.functions.get(name)?.id === def.id && !model.symbols.has(name);
  const call = inlined
    ? model.calls.find((c) => {
        const fn = c.node.childForFieldName("function");
        return fn?.type === "identifier" && fn.text === name;
      })
    : undefined;
  const start = (def.parent?.type === "decorated_definition" ? def.parent : def).startIndex;
  const before = call
    ? model.events.slice(0, call.at)
    : model.events.filter((e) => "node" in e && e.node.startIndex < start);
  const { frozenBy, firstImport } = stateAfter(before, variable);
  if (frozenBy) {
    const severity = call ? "error" : lateInFunction({ events: [] }, frozenBy);
    if (!severity || startsChildWithin({ model }, def)) return null;
    const line = where(frozenBy.node.startPosition.row);
    return {
      kind: "initialised",
      severity,
      preview: false,
      range: nodeRange(frozenBy.node),
      after: `after CUDA was initialised by ${frozenBy.what} (${line}${frozenBy.note ? `: ${frozenBy.note}` : ""})`,
      why: null,
      related: `CUDA initialised here by ${frozenBy.what}`,
    };
  }
  // GPU002: PYTORCH_NVML_BASED_CUDA_CHECK is read at each is_available() call, not frozen at import.
  if (!call || !firstImport || variable === "PYTORCH_NVML_BASED_CUDA_CHECK") return null;
  const bodyRow = def.childForFieldName("body")?.startPosition.row ?? def.startPosition.row;
  const suspect = uncataloguedImportBetween(model, firstImport.node.startPosition.row - 1, bodyRow);
  return {
    kind: "imported",
    severity: "information",
    preview: !suspect?.gpu,
    range: nodeRange(firstImport.node),
    after: `after \`${firstImport.node.text.split("\n")[0]}\` (${where(firstImport.node.startPosition.row)})`,
    why: afterImportWhy(where, firstImport, suspect, "GPU002's documentation"),
    related: `${firstImport.module} imported here`,
  };
}
