/**
 * Queries on the CUDA timeline: what happened before a given environment write.
 */
import { freezes, readersOf } from "../frameworks";
import type { EnvWriteEvent, ImportEvent, InitEvent, ModuleModel, TimelineCall, TimelineEvent } from "./model";
import type { SyntaxNode } from "./parser";

/** What ran before one write of a startup variable. */
export interface WriteState {
  /** The first call before the write that initialised a framework which reads (and so froze) the variable. */
  frozenBy: InitEvent | null;
  /** The first import before the write of a framework that reads the variable. */
  firstImport: ImportEvent | null;
}

/** Walks the timeline up to `write` and returns its {@link WriteState}. */
export function stateBefore(model: ModuleModel, write: EnvWriteEvent): WriteState {
  let frozenBy: InitEvent | null = null;
  let firstImport: ImportEvent | null = null;
  const readers = readersOf(write.variable);
  for (const e of model.events) {
    if (e === write) break;
    if (e.kind === "init" && !frozenBy && freezes(e.framework, e.depth, write.variable)) frozenBy = e;
    if (e.kind === "import" && !firstImport && (e.eagerInit || (e.framework && (!readers || readers.includes(e.framework))))) firstImport = e;
  }
  return { frozenBy, firstImport };
}

/**
 * The {@link WriteState} of a write inside a function the module never calls
 * (`model.functionTimelines`): the module's code above the definition ran first (the module was
 * imported), then the function's own events up to the write. Module code below the definition is
 * left out: it may be what calls the function (`unittest.main()`, `app.run()` in a `__main__` block).
 */
export function stateInFunction(model: ModuleModel, def: SyntaxNode, segment: readonly TimelineEvent[], write: EnvWriteEvent): WriteState {
  let frozenBy: InitEvent | null = null;
  let firstImport: ImportEvent | null = null;
  const readers = readersOf(write.variable);
  const above = model.events.filter((e) => "node" in e && e.node.startIndex < def.startIndex);
  for (const e of [...above, ...segment]) {
    if (e === write) break;
    if (e.kind === "init" && !frozenBy && freezes(e.framework, e.depth, write.variable)) frozenBy = e;
    if (e.kind === "import" && !firstImport && (e.eagerInit || (e.framework && (!readers || readers.includes(e.framework))))) firstImport = e;
  }
  return { frozenBy, firstImport };
}

/** The first framework import of the module (any framework), or null: where a moved write goes. */
export function firstFrameworkImport(model: ModuleModel): ImportEvent | null {
  for (const e of model.events) if (e.kind === "import") return e;
  return null;
}

/** Whether any CUDA-initialising call comes after `after` in the timeline. */
export function cudaUsedAfter(model: ModuleModel, after: EnvWriteEvent): boolean {
  let seen = false;
  for (const e of model.events) {
    if (e === after) seen = true;
    else if (seen && e.kind === "init") return true;
  }
  return false;
}

/** The timeline entry of a call node, or null when the walk never reached it (e.g. a function the module does not call). */
export function timelineCall(model: ModuleModel, call: SyntaxNode): TimelineCall | null {
  return model.calls.find((c) => c.node.id === call.id) ?? null;
}
