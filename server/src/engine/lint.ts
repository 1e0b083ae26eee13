/**
 * The lint engine: parse, build the module model, run each rule in isolation, apply `# noqa`,
 * selection and severity overrides, and check every fix re-parses. Shared by the language server
 * and the CLI; imports nothing from `vscode` or the LSP transport.
 */
import { initPythonParser, parsePython, pythonInput, syntaxErrorCount, type SyntaxNode } from "./python/parser";
import { ModuleTrees } from "./python/moduleTrees";
import { buildModel, type KnownChange, type ModuleModel } from "./python/model";
import { magicVariables, type MagicLine } from "./python/events";
import { ModelCache } from "./python/cache";
import { DocumentAnalysis } from "./analysis";
import { RULES } from "./rules/index";
import type { RunningKernelFacts } from "../../../common/src/kernel/runningKernel";
import { reporter, isPythonRule, type MachineFacts, type PythonRule, type RuleContext, type Rule } from "./rule";
import { candidateRules, type PrefilterFacts } from "./prefilter";
import { TextProbe } from "./textProbe";
import { blankMagics } from "./notebook"; // call-time use only: the import cycle is harmless
import { applyEdits, lineStarts, offsetAt } from "./fixes";
import { lineStructureError } from "../../../common/src/python/lineStructure";
import { fileOverSizeLimit, nestingDiagnostic, nestingProblem } from "./limits";
import { KeptNesting, textChange } from "./python/keptText";
import { DEFAULT_EAGER_INIT_MODULES } from "./frameworks";
import type { ProjectLookup } from "./python/model";
import type { LintDiagnostic, Severity, TextEdit } from "./types";
import type { LaunchNodes, RankArgLaunch, SeveralNodeLaunch, SlurmLaunch, VisibleLaunch } from "./slurmLaunch";
import { tasksShareGpus } from "./slurmLaunch";

/** Options of one lint run (resolved from settings, pyproject and CLI flags by the caller). */
export interface LintOptions {
  /** Codes or prefixes to enable (`GPU0` enables GPU001..GPU009); default: all. */
  select?: readonly string[];
  /** Codes or prefixes to disable. */
  ignore?: readonly string[];
  /** Severity overrides per code. */
  severity?: Readonly<Record<string, Severity>>;
  eagerInitModules?: readonly string[];
  /** The project pins torch < 2.4. */
  torchBelow24?: boolean;
  /** The project pins torch < 2.0 (or targets it): torch.distributed.launch then passes `--local_rank` (GPU044). */
  torchBelow20?: boolean;
  /**
   * The project's pins of the libraries whose behaviour a rule's claim depends on (options.ts
   * RULE_PINNED_PACKAGES), by PEP 503 name: `{ vllm: "==0.8.4" }`. A library left out is unpinned.
   */
  libraryPins?: Readonly<Record<string, string>>;
  /**
   * The project's own modules as this file imports them (python/project.ts `ProjectIndex.lookupFor`):
   * imports and calls of project code that initialise CUDA count as initialising here. Absent: they are opaque.
   */
  project?: ProjectLookup;
  machine?: MachineFacts;
  /** How the project's Slurm job scripts start the file (slurmLaunch.ts `slurmLaunchesOf`); default none. */
  slurm?: readonly SlurmLaunch[];
  /** How many nodes the project's job and shell scripts start the file on (slurmLaunch.ts `launchNodesIn`); default none. */
  launchNodes?: readonly LaunchNodes[];
  /**
   * The other Python files that the job and shell scripts around the file start with the local rank
   * as an argument (slurmLaunch.ts `rankArgLaunchesIn`; GPU044 follows their calls into this file's
   * parser); default none.
   */
  rankArgLaunches?: readonly RankArgLaunch[];
  /** The commands of the project's shell and job scripts that start this file with a literal CUDA_VISIBLE_DEVICES (slurmLaunch.ts `scriptLaunchesIn`; GPU064); default none. */
  visibleLaunches?: readonly VisibleLaunch[];
  /** The other Python files the project's job and shell scripts start on several nodes (slurmLaunch.ts `severalNodeLaunchesIn`; GPU039 asks whether one imports this file); absent in test modules. */
  severalNodeLaunches?: readonly SeveralNodeLaunch[];
  /**
   * The other Python files the project's job and shell scripts start, each with the first of its
   * launches that does not say one node, else its first (slurmLaunch.ts `startedFilesIn`; GPU039: a
   * module whose every started user runs on one node); absent in test modules, and where the
   * scripts start more files than are listed.
   */
  startedFiles?: readonly SeveralNodeLaunch[];
  /**
   * The Markdown documents around the file that GPU039 may read (slurmLaunch.ts `jobScriptsAround`),
   * by path: not read by the engine from here (ProjectLookup.documentedLaunches reads them when asked),
   * but part of the options so that a document added or removed makes the CLI's cached result stale.
   */
  launchDocuments?: readonly string[];
  /** The file is a test module (options.ts `isTestModule`: pytest's `test_*.py`, `*_test.py`, `conftest.py`, a `tests` folder). */
  testModule?: boolean;
  /** Where a notebook says it runs (notebook.ts `notebookHostOf`: `"colab"` or `"kaggle"` for a notebook saved from Google Colab or Kaggle); absent for files. */
  notebookHost?: "colab" | "kaggle";
  /** Texts over this many KB (UTF-8) are not linted: one information diagnostic says why. 0: no limit; default 2048. */
  maxFileSizeKB?: number;
  /**
   * The `[tool.gpu-pilot] exclude`/`extend-exclude` pattern that leaves this file out (exclude.ts
   * `excludedBy`): nothing is reported, not even GPU000. Set by the editor; the CLI leaves excluded
   * files out of its folder walk instead.
   */
  excluded?: string;
  /** Run every enabled rule even where the text prefilter says none can fire (benchmarks, tests). */
  noPrefilter?: boolean;
  /**
   * Keep fixes without re-parsing the fixed text now (the editor validates one when its code action
   * is asked for, with {@link fixParsesCleanly}); the CLI validates every fix eagerly.
   */
  lazyFixValidation?: boolean;
  /** Also run the preview rules and the preview checks of default rules (see RuleMeta.preview in types.ts). */
  preview?: boolean;
  /** Replaces the registry (tests: a throwing rule is isolated). */
  rules?: readonly Rule[];
  /** A notebook's running kernel (RuleContext.runningKernel); read only when the text is a notebook. */
  runningKernel?: RunningKernelFacts;
  /**
   * The editor's open documents (the language server, handlers/context.ts): the text of the one
   * whose file is the absolute, normalised `path`, saved or not; null when none is open there. The
   * files a shell script's or a notebook's shell lines' launch rules read (ManifestRuleContext.read:
   * a launched script, the modules it hands its namespace to, a sourced file, an accelerate config)
   * are read from it first, then from the disk (manifests/lintManifest.ts). Absent: the disk only.
   */
  openText?: (path: string) => string | null;
}

/** A rule that threw: reported to the log, never to the user as a crash. */
export interface RuleFailure {
  code: string;
  error: string;
}

export interface LintResult {
  diagnostics: LintDiagnostic[];
  ruleFailures: RuleFailure[];
  /**
   * The module's syntax trees; null when the prefilter skipped parsing. The caller deletes them
   * (with `incremental`, they are {@link analysis}'s trees: dispose of the analysis instead).
   */
  tree: ModuleTrees | null;
  /**
   * With `incremental`, when the text was parsed: what this lint keeps for the next lint of the
   * document (analysis.ts: the trees, the statements' facts, the nesting scan, the probe). Edit its
   * trees to the next text and pass it as the next lint's `previous`; the caller disposes of it.
   */
  analysis?: DocumentAnalysis;
  /** False when no enabled rule could fire on the text, so it was not parsed (prefilter.ts). */
  parsed: boolean;
  /** Whether the source had syntax errors (rules still run on the recovered tree). */
  syntaxErrors: boolean;
  /**
   * The module model the rules read (python/model.ts), when the text was parsed: valid while
   * `tree` is neither edited nor deleted (the server answers hovers, inlay hints and code actions
   * of that document version from it instead of analysing the text again).
   */
  model?: ModuleModel;
  /**
   * How many parses of fixed texts checked this lint's fixes (0 with `lazyFixValidation`): at most
   * one per fix, and one per round of non-overlapping fixes where there are many (for tests and benches).
   */
  fixChecks?: number;
}

/** The result for a text that is not linted: that of an empty text, plus the GPU000 diagnostic `why` (none for an excluded file). */
function notLinted(why: LintDiagnostic | null): LintResult {
  const empty = lintPython("", { maxFileSizeKB: 0 });
  empty.tree?.delete(); // no tree: the server must not keep one for incremental parsing of this text
  return { ...empty, tree: null, diagnostics: why ? [why] : [] };
}

/**
 * Parses and models Python text for editor features (hover, inlay hints) without running rules.
 * The caller deletes `model.tree` when done.
 */
export function analyzePython(
  text: string,
  options: LintOptions = {},
  magics: MagicLine[] = [],
): ReturnType<typeof buildModel> {
  const tree = ModuleTrees.parse(pythonInput(text), false);
  return buildModel(
    tree,
    text,
    {
      eagerInitModules: options.eagerInitModules ?? DEFAULT_EAGER_INIT_MODULES,
      torchBelow24: options.torchBelow24 ?? false,
      ...(options.libraryPins ? { libraryPins: options.libraryPins } : {}),
      ...(options.project ? { project: options.project } : {}),
    },
    magics,
  );
}

/** Loads the parser. Call once (awaited) before {@link lintPython}. */
export async function initEngine(): Promise<void> {
  await initPythonParser();
}

/** Whether `code` is enabled by select/ignore (Ruff semantics: the longest matching prefix wins). */
export function isEnabled(
  code: string,
  select: readonly string[] | undefined,
  ignore: readonly string[] | undefined,
): boolean {
  // No select: every rule, at the weakest level (ALL), so that `--ignore ALL` turns them all off.
  const sel = select && select.length ? select : ["ALL"];
  const s = longestPrefix(code, sel);
  const i = longestPrefix(code, ignore ?? []);
  return s >= 0 && s > i;
}

/** Whether a rule runs: enabled by select/ignore, and in the default set or preview is on. */
export function isRuleOn(rule: Rule, options: Pick<LintOptions, "select" | "ignore" | "preview">): boolean {
  return isEnabled(rule.meta.code, options.select, options.ignore) && (!rule.meta.preview || !!options.preview);
}

/** Length of the longest entry of `prefixes` that `code` starts with (`ALL`: 0), -1 for none. A loop, not a spread: lists of any length. */
function longestPrefix(code: string, prefixes: readonly string[]): number {
  let best = -1;
  for (const p of prefixes) {
    const n = p === "ALL" ? 0 : code.startsWith(p) ? p.length : -1;
    if (n > best) best = n;
  }
  return best;
}

/**
 * `# noqa` comments by 0-based line: `null` means bare `# noqa` (every code), else the listed codes.
 * Parses comment nodes of the tree (never string contents).
 */
export function noqaLines(tree: ModuleTrees, comments?: readonly SyntaxNode[]): Map<number, Set<string> | null> {
  const out = new Map<number, Set<string> | null>();
  for (const c of comments ?? tree.descendantsOfType("comment")) {
    if (!c) continue;
    const m = /#\s*noqa(?::\s*([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?/i.exec(c.text);
    if (!m) continue;
    out.set(
      c.startPosition.row,
      m[1]
        ? new Set(
            m[1]
              .split(/[\s,]+/)
              .filter(Boolean)
              .map((s) => s.toUpperCase()),
          )
        : null,
    );
  }
  return out;
}

/**
 * limits.ts `nestingProblem(text)`, from the state `previous` kept (rescanning only the changed
 * lines) when there is one, else from scratch; with the state to keep for `text`. Called only for a
 * text within the size limit.
 */
function keptNestingScan(
  text: string,
  previous: DocumentAnalysis | undefined,
): ReturnType<typeof KeptNesting.scan> & { edit?: KnownChange } {
  const kept = previous?.takeNesting();
  if (!previous || !kept) return KeptNesting.scan(text);
  // The trees know what their recorded edits changed (the server's didChange ranges); else compare the texts.
  const previousTree = previous.trees;
  const known = previousTree.pendingChange;
  const change =
    known && kept.text === previousTree.text && previousTree.text.length - (known.oldEnd - known.newEnd) === text.length
      ? known
      : textChange(kept.text, text);
  return { ...kept.next(text, change), edit: { from: kept.text, change } };
}

/**
 * The comment nodes that start on one of `lines` whose text mentions `noqa` (any case): a query
 * of the trees per line, no scan of the text (the editor lints every keystroke).
 */
function commentsOnLines(tree: ModuleTrees, lines: ReadonlySet<number>): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (const line of [...lines].sort((a, b) => a - b)) {
    const found = tree.descendantsOfType("comment", { row: line, column: 0 }, { row: line + 1, column: 0 });
    for (const c of found) if (c.startPosition.row === line && /noqa/i.test(c.text)) out.push(c);
  }
  return out;
}

/** How the project's scripts start this file and the files around it (RuleContext's launch fields), from the lint's options. */
function launchFacts(
  options: LintOptions,
): Pick<
  RuleContext,
  "slurm" | "launchNodes" | "rankArgLaunches" | "severalNodeLaunches" | "startedFiles" | "visibleLaunches"
> {
  return {
    slurm: options.slurm ?? [],
    launchNodes: options.launchNodes ?? [],
    rankArgLaunches: options.rankArgLaunches ?? [],
    severalNodeLaunches: options.severalNodeLaunches ?? [],
    startedFiles: options.startedFiles ?? [],
    visibleLaunches: options.visibleLaunches ?? [],
  };
}

/** What the prefilter knows besides the text (prefilter.ts PrefilterFacts), from the lint's options and machine. */
function prefilterFacts(options: LintOptions, machine: MachineFacts): PrefilterFacts {
  return {
    machineKnown: machine.gpuCount !== null,
    slurmLaunched: !!options.slurm?.length,
    localRankArg: !!options.slurm?.some((l) => l.passesLocalRankArg) || !!options.rankArgLaunches?.length,
    severalNodes: !!options.launchNodes?.some((l) => l.nodes === "several"),
    importerOnSeveralNodes: !!options.severalNodeLaunches?.length,
    visibleLaunched: !!options.visibleLaunches?.length,
    sharedGpuTasks: !!options.slurm?.some(tasksShareGpus) || !!options.startedFiles?.some((l) => !!l.shared),
    testModule: !!options.testModule,
    preview: !!options.preview,
    ...(options.project?.writerNames ? { projectWriters: () => options.project!.writerNames!() } : {}),
  };
}

/**
 * Lints Python source. Never throws for any input text: a rule that throws is recorded in
 * `ruleFailures` and the other rules still report.
 * @param magics IPython lines blanked out of `text` (notebooks only).
 * @param extra.previous the analysis the last lint of this document returned (`analysis`), its
 *   trees edited (`ModuleTrees.edit`) to match `text`: only the chunks the edits touched are
 *   parsed again. What it holds is handed over to the result's analysis (dispose of it after as
 *   before: then a no-op).
 * @param extra.incremental (the editor) parse the module in chunks of top-level statements
 *   (python/moduleTrees.ts: an edit re-parses one chunk) and return a {@link DocumentAnalysis}
 *   (analysis.ts) that keeps the facts of each top-level statement, and reuse those `previous`
 *   kept: a statement that tree-sitter's incremental parse reused (same subtree, same text) is
 *   not analysed again unless a name it looked up (an import, an alias, an assigned value, a
 *   module function) is bound differently. The findings are the same as without it
 *   (test/unit/server/engine/incremental.test.ts checks random edits of real files). Usage:
 *   `r = lintPython(text, o, { incremental: true })`, then per edit `r.analysis.trees.edit(...)`,
 *   `next = lintPython(newText, o, { previous: r.analysis, incremental: true })`,
 *   `r.analysis.dispose()`, `r = next`. A notebook (notebook.ts `lintNotebook` with `keep`) keeps its
 *   trees and facts the same way; its IPython lines' events are read again at each lint.
 */
export function lintPython(
  text: string,
  options: LintOptions = {},
  extra: {
    notebook?: boolean;
    magics?: MagicLine[];
    previous?: DocumentAnalysis;
    where?: (line: number) => string;
    incremental?: boolean;
  } = {},
): LintResult {
  if (options.excluded) return notLinted(null); // [tool.gpu-pilot] exclude (exclude.ts): not read at all
  // Size and nesting first: a text the parser cannot take gets GPU000 whether or not a rule could
  // fire on it, so the output is the same with and without the prefilter. The editor's nesting scan
  // covers only the lines an edit changed (python/keptText.ts).
  const overSize = fileOverSizeLimit(text, options.maxFileSizeKB);
  const previous = extra.previous;
  const nesting = !overSize && extra.incremental ? keptNestingScan(text, previous) : null;
  const deep = overSize ? null : nesting ? nesting.problem : nestingProblem(text);
  if (overSize || deep !== null) return notLinted(overSize ?? nestingDiagnostic(deep!));
  const machine = options.machine ?? { gpuCount: null, uuids: [] };
  const enabled = RULES.filter(isPythonRule).filter((r) => isRuleOn(r, options));
  const previousProbe = previous?.takeProbe();
  const magics = extra.magics?.length ? magicVariables(extra.magics) : [];
  const probe =
    previousProbe && nesting?.edit
      ? TextProbe.after(previousProbe, text, nesting.edit.change, magics)
      : new TextProbe(text, magics);
  const candidates = options.noPrefilter
    ? new Set(enabled.map((r) => r.meta.code as string))
    : candidateRules(
        text,
        enabled.map((r) => r.meta.code),
        prefilterFacts(options, machine),
        probe,
      );
  if (candidates.size === 0 && !previous) {
    probe.detach();
    return { diagnostics: [], ruleFailures: [], tree: null, syntaxErrors: false, parsed: false };
  }
  // The size and nesting check above found the nesting safe for the parser: no other scan before parsing.
  const input = pythonInput(text);
  const tree = previous ? previous.trees.next(input) : ModuleTrees.parse(input, !!extra.incremental);
  const facts = extra.incremental ? previous?.takeFacts() || new ModelCache() : undefined;
  // What the next lint of the document continues from (the probe is detached from its own previous one below).
  const analysis = extra.incremental
    ? new DocumentAnalysis(tree, { facts, probe, ...(nesting?.kept ? { nesting: nesting.kept } : {}) })
    : undefined;
  const model = buildModel(
    tree,
    text,
    {
      eagerInitModules: options.eagerInitModules ?? DEFAULT_EAGER_INIT_MODULES,
      torchBelow24: options.torchBelow24 ?? false,
      ...(options.libraryPins ? { libraryPins: options.libraryPins } : {}),
      ...(options.project ? { project: options.project } : {}),
    },
    extra.magics ?? [],
    facts,
    nesting?.edit,
  );
  const { diagnostics, ruleFailures } = runPythonRules(options.rules?.filter(isPythonRule) ?? enabled, options, {
    candidates,
    context: {
      model,
      machine,
      notebook: !!extra.notebook,
      ...launchFacts(options),
      ...(options.testModule ? { testModule: true } : {}),
      ...(options.notebookHost ? { notebookHost: options.notebookHost } : {}),
      ...(options.preview ? { preview: true } : {}),
      torchBelow20: !!options.torchBelow20,
      ...(options.libraryPins ? { libraryPins: options.libraryPins } : {}),
      where: extra.where ?? ((l) => `line ${l + 1}`),
      hasWord: (w) => probe.hasWord(w),
      ...(extra.notebook && options.runningKernel ? { runningKernel: options.runningKernel } : {}),
      ...(options.project ? { project: options.project } : {}),
    },
  });
  probe.detach(); // after the rules: their words too are answered from the last version's probe
  const base = { ruleFailures, tree, ...(analysis ? { analysis } : {}), parsed: true, model };
  if (diagnostics.length === 0) return { diagnostics, ...base, syntaxErrors: tree.hasError };
  const { kept, baseErrors, fixChecks } = keptFindings(text, diagnostics, tree, options, !!extra.notebook);
  return { diagnostics: kept, ...base, syntaxErrors: baseErrors > 0, fixChecks };
}

/**
 * Runs `rules` (those the prefilter left in `candidates`; all of them when `options.rules` names
 * them) with `context`. A rule that throws loses its findings and is listed in `ruleFailures`.
 */
function runPythonRules(
  rules: readonly PythonRule[],
  options: LintOptions,
  run: { candidates: ReadonlySet<string>; context: Omit<RuleContext, "report"> },
): { diagnostics: LintDiagnostic[]; ruleFailures: RuleFailure[] } {
  const diagnostics: LintDiagnostic[] = [];
  const ruleFailures: RuleFailure[] = [];
  for (const rule of rules) {
    if (!run.candidates.has(rule.meta.code) && !options.rules) continue;
    const ctx: RuleContext = { ...run.context, report: reporter(rule, diagnostics, options.preview) };
    const before = diagnostics.length;
    try {
      rule.check(ctx);
    } catch (e) {
      diagnostics.length = before;
      ruleFailures.push({
        code: rule.meta.code,
        error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e),
      });
    }
  }
  return { diagnostics, ruleFailures };
}

/**
 * The findings of {@link lintPython} that no `noqa` comment silences, with `options.severity`
 * applied and their fixes checked ({@link checkFixes}, unless `options.lazyFixValidation`), in
 * order of position, then code; with the text's syntax error count and the fix checks made.
 */
function keptFindings(
  text: string,
  diagnostics: LintDiagnostic[],
  tree: ModuleTrees,
  options: LintOptions,
  notebook: boolean,
): { kept: LintDiagnostic[]; baseErrors: number; fixChecks: number } {
  // Comments only on the lines of findings, and only where the line says `noqa` (a comment that
  // starts there is on that line): no traversal of the whole tree for one finding.
  const noqa = noqaLines(tree, commentsOnLines(tree, new Set(diagnostics.map((d) => d.range.start.line))));
  const kept = diagnostics.filter((d) => {
    if (!noqa.has(d.range.start.line)) return true;
    const codes = noqa.get(d.range.start.line);
    return codes !== null && !codes!.has(d.code);
  });
  const baseErrors = tree.syntaxErrorCount();
  for (const d of kept) {
    const override = options.severity?.[d.code];
    if (override) d.severity = override;
  }
  let fixChecks = 0;
  if (!options.lazyFixValidation && kept.some((d) => d.fix)) {
    fixChecks = checkFixes(
      text,
      kept.filter((d) => d.fix),
      { errors: baseErrors, linesOk: lineStructureError(text) === null },
      notebook,
      tree,
    );
  }
  kept.sort(
    (a, b) =>
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character ||
      a.code.localeCompare(b.code),
  );
  return { kept, baseErrors, fixChecks };
}

/**
 * Whether applying `fix` to `text` adds no syntax error (the check every fix passes before the
 * user sees it): no more tree-sitter ERROR/MISSING nodes, and no CPython line-structure error
 * (indentation, tabs, continuation: common/src/python/lineStructure.ts) where the text had none. For
 * notebooks pass the joined, magic-blanked text and `notebook: true`. `trees`: the parse of `text`
 * at hand (the server's kept trees of this document version, in chunks): the errors are counted
 * there and only the chunks the fix touches are parsed again, as the lint's own check does;
 * without them the text is parsed whole.
 */
export function fixParsesCleanly(
  text: string,
  fix: NonNullable<LintDiagnostic["fix"]>,
  notebook = false,
  trees?: ModuleTrees,
): boolean {
  const linesOk = lineStructureError(text) === null;
  if (trees)
    return fixKeepsSyntax(
      text,
      { fix } as LintDiagnostic,
      { errors: trees.syntaxErrorCount(), linesOk },
      notebook,
      trees,
    );
  return fixKeepsSyntax(text, { fix } as LintDiagnostic, { errors: errorsOfParse(text), linesOk }, notebook);
}

/** Up to this many fixes in one text are checked one by one; with more, in batches ({@link checkFixes}). */
export const FIXES_CHECKED_ALONE = 32;

/**
 * At most this many checks (each a parse of the text, whole or incremental) settle the fixes of one
 * text checked in batches; fixes not settled within are not offered (never offered unchecked).
 */
export const MAX_FIX_CHECKS = 256;

/**
 * Keeps the fixes of `ds` that pass {@link fixKeepsSyntax} and deletes the others, linear in the
 * number of fixes where they pass (one re-parse per fix made `check` quadratic:
 * 2,000 GPU002 findings took 41-60 s). Up to {@link FIXES_CHECKED_ALONE} fixes are checked one by
 * one. With more: fixes with the same edits share one verdict; the others are laid out in rounds of
 * fixes whose edits do not overlap (applyEdits's rule: zero-width inserts at one point do not), and
 * each round is applied at once and parsed once. A round that keeps the syntax keeps all its fixes;
 * one that does not is halved until the fixes that fail are found alone. At most
 * {@link MAX_FIX_CHECKS} parses; fixes left unsettled lose their fix.
 * The one thing a batch cannot see: a fix that breaks the syntax alone, repaired by another fix of
 * the same round (each fix is made on its own by a rule and inserts or moves whole statements, so
 * no rule makes such pairs; fix-all applies the fixes of a pass together anyway).
 * @returns the number of checks made (parses of a fixed text).
 */
function checkFixes(
  text: string,
  ds: LintDiagnostic[],
  before: { errors: number; linesOk: boolean },
  notebook: boolean,
  tree: ModuleTrees,
): number {
  if (ds.length <= FIXES_CHECKED_ALONE) {
    for (const d of ds) if (!fixKeepsSyntax(text, d, before, notebook, tree)) delete d.fix;
    return ds.length;
  }
  // Same edits, same verdict: one representative each.
  const starts = lineStarts(text);
  const same = sameEdits(ds);
  const candidates: FixCandidate[] = [...same.values()].map(([d]) => ({
    d,
    spans: d.fix!.edits.map((e) => ({
      s: offsetAt(starts, text, e.range.start),
      e: offsetAt(starts, text, e.range.end),
    })),
  }));
  const settled = new Set<FixCandidate>();
  const rounds = fixRounds(candidates, settled);
  let checks = 0;
  const verdict = (c: FixCandidate, ok: boolean) => {
    settled.add(c);
    if (!ok) delete c.d.fix;
  };
  const settle = (fixes: FixCandidate[]): void => {
    if (checks >= MAX_FIX_CHECKS) return;
    checks++;
    if (fixes.length === 1) {
      verdict(fixes[0], fixKeepsSyntax(text, fixes[0].d, before, notebook, tree));
      return;
    }
    if (
      batchKeepsSyntax(
        text,
        fixes.flatMap((c) => c.d.fix!.edits),
        before,
        notebook,
      )
    ) {
      for (const c of fixes) verdict(c, true);
      return;
    }
    const half = fixes.length >> 1;
    settle(fixes.slice(0, half));
    settle(fixes.slice(half));
  };
  for (const r of rounds) settle(r.fixes);
  for (const c of candidates) if (!settled.has(c)) delete c.d.fix; // over the budget: not offered
  for (const list of same.values()) if (!list[0].fix) for (const d of list) delete d.fix;
  return checks;
}

/** The span of one edit of a fix, as offsets in the text: [s, e). */
type Span = { s: number; e: number };

/** A fix checked for the findings with the same edits ({@link checkFixes}), with its edits' spans. */
type FixCandidate = { d: LintDiagnostic; spans: Span[] };

/** The findings of `ds` grouped by their fix's edits (same edits, same verdict), in first-seen order. */
function sameEdits(ds: LintDiagnostic[]): Map<string, LintDiagnostic[]> {
  const same = new Map<string, LintDiagnostic[]>();
  for (const d of ds) {
    const key = JSON.stringify(
      d.fix!.edits.map((e) => [
        e.range.start.line,
        e.range.start.character,
        e.range.end.line,
        e.range.end.character,
        e.newText,
      ]),
    );
    const list = same.get(key);
    if (list) list.push(d);
    else same.set(key, [d]);
  }
  return same;
}

/**
 * Whether `x` overlaps one of `spans`, a round's spans sorted by start (then end): there the ends
 * do not decrease either, so the one span that may overlap [s, e) is the first that ends after s.
 */
function overlapsRound(spans: Span[], x: Span): boolean {
  let lo = 0,
    hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid].e > x.s) hi = mid;
    else lo = mid + 1;
  }
  return lo < spans.length && spans[lo].s < x.e;
}

/** Whether two of a fix's own spans overlap (applyEdits would throw on it). */
const selfOverlap = (spans: Span[]) =>
  [...spans].sort((a, b) => a.s - b.s || a.e - b.e).some((x, i, a) => i > 0 && x.s < a[i - 1].e);

/**
 * Lays out `candidates` in rounds of fixes with no overlapping edits, each in the first round it
 * fits. A candidate whose own edits overlap never passes: it loses its fix and joins `settled`.
 */
function fixRounds(
  candidates: FixCandidate[],
  settled: Set<FixCandidate>,
): Array<{ fixes: FixCandidate[]; spans: Span[] }> {
  const rounds: Array<{ fixes: FixCandidate[]; spans: Span[] }> = [];
  for (const c of candidates) {
    if (selfOverlap(c.spans)) {
      // applyEdits would throw: it never passed
      settled.add(c);
      delete c.d.fix;
      continue;
    }
    let round = rounds.find((r) => !c.spans.some((x) => overlapsRound(r.spans, x)));
    if (!round) {
      round = { fixes: [], spans: [] };
      rounds.push(round);
    }
    round.fixes.push(c);
    for (const x of c.spans) {
      let at = 0,
        hi = round.spans.length;
      while (at < hi) {
        const mid = (at + hi) >> 1;
        const y = round.spans[mid];
        if (y.s < x.s || (y.s === x.s && y.e <= x.e)) at = mid + 1;
        else hi = mid;
      }
      round.spans.splice(at, 0, x);
    }
  }
  return rounds;
}

/** {@link fixKeepsSyntax} for several fixes' non-overlapping edits applied together, by one whole parse. */
function batchKeepsSyntax(
  text: string,
  edits: TextEdit[],
  before: { errors: number; linesOk: boolean },
  notebook: boolean,
): boolean {
  try {
    const applied = applyEdits(text, edits);
    const fixed = notebook ? blankMagics(applied, 0).text : applied;
    if (before.linesOk && lineStructureError(fixed) !== null) return false;
    return errorsOfParse(fixed) <= before.errors;
  } catch {
    return false;
  }
}

/** The syntax errors (ERROR and MISSING nodes) of a fresh parse of `text`, the tree freed after. */
function errorsOfParse(text: string): number {
  const tree = parsePython(text);
  try {
    return syntaxErrorCount(tree);
  } finally {
    tree.delete();
  }
}

/**
 * Whether `fixed` (a fix applied to `text`, both whole Python texts) has no more tree-sitter
 * syntax errors than `text`, and CPython's line structure wherever `text` has it: the test of
 * {@link fixKeepsSyntax}, by two full parses (a notebook's fix, checked when it is offered).
 */
export function fixedTextParsesCleanly(text: string, fixed: string): boolean {
  if (lineStructureError(text) === null && lineStructureError(fixed) !== null) return false;
  return errorsOfParse(fixed) <= errorsOfParse(text);
}

/** One edit that turns `oldText` into `newText`: what lies between their common prefix and suffix (keptText.ts `textChange`). */
function differingSpan(oldText: string, newText: string): { start: number; end: number; text: string } {
  const c = textChange(oldText, newText);
  return { start: c.start, end: c.oldEnd, text: newText.slice(c.start, c.newEnd) };
}

/** A fix's edits as offsets in `text` (for incremental re-parsing). */
function editOffsets(text: string, edits: readonly TextEdit[]): Array<{ start: number; end: number; text: string }> {
  const starts = lineStarts(text);
  return edits.map((e) => ({
    start: offsetAt(starts, text, e.range.start),
    end: offsetAt(starts, text, e.range.end),
    text: e.newText,
  }));
}

/**
 * A fix is kept only if the fixed text parses with no more syntax errors than the original
 * (`before.errors`) and, when CPython accepted the original's line structure (`before.linesOk`),
 * it accepts the fixed text's too: tree-sitter's error recovery takes a line inserted after a `\`
 * continuation or spaces in a tab-indented block, CPython does not. In a
 * notebook, IPython lines the fix writes (`%env K=v`) are blanked first, as the linted text's were.
 */
function fixKeepsSyntax(
  text: string,
  d: LintDiagnostic,
  before: { errors: number; linesOk: boolean },
  notebook: boolean,
  base?: ModuleTrees,
): boolean {
  const baseErrors = before.errors;
  try {
    const applied = applyEdits(text, d.fix!.edits);
    const fixed = notebook ? blankMagics(applied, 0).text : applied;
    if (before.linesOk && lineStructureError(fixed) !== null) return false;
    // With the text's tree at hand, re-parse incrementally: one full parse per fix made a file with
    // many findings quadratic (a 0.25 MB file with 400 fixes took 34 s).
    if (base)
      return (
        base.syntaxErrorsAfter(
          pythonInput(fixed),
          notebook ? [differingSpan(text, fixed)] : editOffsets(text, d.fix!.edits),
        ) <= baseErrors
      );
    return errorsOfParse(fixed) <= baseErrors;
  } catch {
    return false;
  }
}
