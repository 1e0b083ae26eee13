/**
 * Queries on the CUDA timeline: what happened before a given environment write.
 */
import { freezes, readersOf } from "../frameworks";
import type { ModuleModel } from "./model";
import type {
  EnvDeleteEvent,
  EnvWriteEvent,
  FunctionTimeline,
  ImportEvent,
  InitEvent,
  ShellExportEvent,
  TimelineCall,
  TimelineEvent,
} from "./events";
import type { SyntaxNode } from "./parser";

/** What ran before one write of a startup variable. */
export interface WriteState {
  /** The first call before the write that initialised a framework which reads (and so froze) the variable. */
  frozenBy: InitEvent | null;
  /** The first import before the write of a framework that reads the variable. */
  firstImport: ImportEvent | null;
}

/**
 * The {@link WriteState} of `write` (an environment write, or a notebook `!export` line that GPU014
 * would turn into `%env`): the first freezing init and the first reading import in the timeline before it. Both depend only on the variable, so each model keeps, per variable, the
 * first of each over the whole timeline (one walk), and per event its position: O(1) per write.
 * Walking the timeline up to each write made a file with n writes cost O(n²) in GPU001, GPU002 and
 * GPU004.
 */
export function stateBefore(model: ModuleModel, write: EnvWriteEvent | ShellExportEvent | EnvDeleteEvent): WriteState {
  const memo = (model.derived.firsts ??= { position: null, lookups: 0, byVariable: new Map() });
  let firsts = memo.byVariable.get(write.variable);
  if (!firsts) {
    let init: { e: InitEvent; at: number } | null = null;
    let imp: { e: ImportEvent; at: number } | null = null;
    const readers = readersOf(write.variable);
    model.events.forEach((e, at) => {
      if (!init && freezesVariable(e, write.variable)) init = { e, at };
      if (!imp && readsAtImport(e, readers)) imp = { e, at };
    });
    firsts = { init, imp };
    memo.byVariable.set(write.variable, firsts);
  }
  const at = positionOf(model.events, write, memo) ?? model.events.length; // a write outside the timeline: all of it came first
  return {
    frozenBy: firsts.init && firsts.init.at < at ? firsts.init.e : null,
    firstImport: firsts.imp && firsts.imp.at < at ? firsts.imp.e : null,
  };
}
/** {@link stateBefore}'s answers for one model (kept in `model.derived.firsts`). */
export interface Firsts {
  /** Each event's index, made at the ninth lookup ({@link positionOf}). */
  position: Map<TimelineEvent, number> | null;
  lookups: number;
  byVariable: Map<string, { init: { e: InitEvent; at: number } | null; imp: { e: ImportEvent; at: number } | null }>;
}

/**
 * The index of `e` in `events`, or undefined. The first eight lookups of a model search the array;
 * the ninth makes a map of every event (a file with 1,000 writes asks 1,000 times).
 * A map per lint for the one write of a typical file was 50 KB of garbage per keystroke on the
 * 5,000-line file (~900 events).
 */
function positionOf(events: readonly TimelineEvent[], e: TimelineEvent, memo: Firsts): number | undefined {
  if (!memo.position && ++memo.lookups > 8) memo.position = new Map(events.map((x, i) => [x, i]));
  if (memo.position) return memo.position.get(e);
  const i = events.indexOf(e);
  return i < 0 ? undefined : i;
}

/** Whether an event is an initialising call that freezes `variable` (its framework reads it). */
export function freezesVariable(e: TimelineEvent, variable: string): e is InitEvent {
  return e.kind === "init" && freezes(e.framework, e.depth, variable);
}

/** Whether an event imports a framework among `readers` (all when null), or an eager-init module that is no other framework's. */
function readsAtImport(e: TimelineEvent, readers: ReturnType<typeof readersOf>): e is ImportEvent {
  return (
    e.kind === "import" && (!e.framework || !readers || readers.includes(e.framework)) && (e.eagerInit || !!e.framework)
  );
}

/**
 * The {@link WriteState} of each write of a function the module never calls
 * (`model.functionTimelines`): the module's code above the definition ran first (the module was
 * imported), then the function's own events up to the write. Module code below the definition is
 * left out: it may be what calls the function (`unittest.main()`, `app.run()` in a `__main__` block).
 * The events above the definition are selected once per function, on the first question (most
 * functions have no write to ask about: selecting them for each of a file's functions was the cost).
 */
export function statesInFunction(
  model: ModuleModel,
  fn: FunctionTimeline,
): (write: EnvWriteEvent | EnvDeleteEvent) => WriteState {
  let selected: TimelineEvent[] | undefined;
  return (write) => {
    const events = (selected ??= [
      ...model.events.filter((e) => "node" in e && e.node.startIndex < fn.def.startIndex),
      ...fn.events,
    ]);
    const readers = readersOf(write.variable);
    let frozenBy: InitEvent | null = null;
    let firstImport: ImportEvent | null = null;
    for (const e of events) {
      if (e === write) break;
      if (!frozenBy && freezesVariable(e, write.variable)) frozenBy = e;
      if (!firstImport && readsAtImport(e, readers)) firstImport = e;
    }
    return { frozenBy, firstImport };
  };
}

/**
 * The {@link WriteState} of a write of `variable` made right after `events` (in execution order):
 * the first freezing init and the first reading import among them. For a write that is no event of
 * the timeline (GPU062: the one Hydra makes from `hydra.job.env_set` when it starts the task
 * function), given the events that ran before it.
 */
export function stateAfter(events: readonly TimelineEvent[], variable: string): WriteState {
  const readers = readersOf(variable);
  return {
    frozenBy: events.find((e): e is InitEvent => freezesVariable(e, variable)) ?? null,
    firstImport: events.find((e): e is ImportEvent => readsAtImport(e, readers)) ?? null,
  };
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
