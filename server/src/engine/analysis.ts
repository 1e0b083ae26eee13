/**
 * What the engine keeps of one analysed document (a Python file, or a notebook's joined code
 * cells) from one lint to the next, as one object instead of side tables keyed by its trees: an
 * incremental lint (lint.ts `lintPython` with `incremental`, notebook.ts `lintNotebook` with
 * `keep`) makes it and returns it (`analysis`), and the next lint of the document takes it back
 * (`previous`). The language server keeps one per open document in its OpenDocument (session.ts,
 * through incremental.ts `DocumentTrees`): closing the document disposes of it.
 *
 * Only what outlives a lint is here. The model (python/model.ts) is built anew at each lint, from
 * the kept facts; what the rules work out from it (the timeline's firsts, a fix's bound names, the
 * Ray definitions) is kept with the model (`ModuleModel.derived`) and goes with it. The lint returns
 * the model (`LintResult.model`); the server keeps only what its hovers read of it (machineHelp.ts
 * `MachineModel`, beside this object).
 */
import type { ModuleTrees } from "./python/moduleTrees";
import type { ModelCache } from "./python/cache";
import type { KeptNesting } from "./python/keptText";
import type { TextProbe } from "./textProbe";
import type { JoinedCell } from "./notebook";

/** The state an incremental lint keeps for the next one, beside the trees. */
export interface KeptState {
  /**
   * The facts of each top-level statement of the last model (python/cache.ts `ModelCache`): the
   * next lint analyses again only the statements an edit touched, and those whose names changed.
   */
  facts?: ModelCache;
  /**
   * The nesting scan of the last text (python/keptText.ts `KeptNesting`): the next scan covers only
   * the changed lines. Absent when the text had a nesting problem.
   */
  nesting?: KeptNesting;
  /** The prefilter's probe of the last text (textProbe.ts): the next probe starts from its answers (`TextProbe.after`). */
  probe?: TextProbe;
  /**
   * A notebook's joined cells by cell text (notebook.ts `joinCells`): the next lint, and the machine
   * help of a cell, do not blank the unchanged cells' IPython lines again.
   */
  cells?: ReadonlyMap<string, JoinedCell>;
}

/** One document's analysis, kept from one lint to the next (see the module comment). */
export class DocumentAnalysis implements KeptState {
  facts?: ModelCache;
  nesting?: KeptNesting;
  probe?: TextProbe;
  cells?: ReadonlyMap<string, JoinedCell>;

  /**
   * @param trees the syntax trees of the last lint's text (python/moduleTrees.ts, in chunks). The
   *   caller edits them to the next text (`ModuleTrees.edit`, `editTo`) and passes this analysis as
   *   the next lint's `previous`, which takes them over (`ModuleTrees.next`) with the kept state.
   */
  constructor(
    readonly trees: ModuleTrees,
    kept: KeptState = {},
  ) {
    this.facts = kept.facts;
    this.nesting = kept.nesting;
    this.probe = kept.probe;
    this.cells = kept.cells;
  }

  /** The kept nesting scan, no longer kept (the next lint's scan takes over its arrays). */
  takeNesting(): KeptNesting | undefined {
    const n = this.nesting;
    this.nesting = undefined;
    return n;
  }

  /** The kept probe, no longer kept (the next lint's probe asks it, then detaches from it). */
  takeProbe(): TextProbe | undefined {
    const p = this.probe;
    this.probe = undefined;
    return p;
  }

  /** The kept facts, no longer kept (the next lint's model updates them and its analysis keeps them). */
  takeFacts(): ModelCache | undefined {
    const f = this.facts;
    this.facts = undefined;
    return f;
  }

  /**
   * Frees the trees (a no-op once a later lint took them over) and drops the rest: the document
   * closed, or its analysis can no longer be continued (its trees are not of the text to lint).
   */
  dispose(): void {
    this.trees.delete();
    this.facts = undefined;
    this.nesting = undefined;
    this.probe = undefined;
    this.cells = undefined;
  }
}
