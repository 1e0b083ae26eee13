/**
 * The rule contract, after ESLint's shape: `meta` (code, name, severity, fixable, docs, and the
 * text trigger the prefilter reads) plus `check(context)` for a Python rule or
 * `checkManifest(context)` for a manifest rule, which report findings through `context.report`.
 */
import type { LintDiagnostic, RuleMeta, Severity, Fix, RelatedInfo, Range, KernelRestart } from "./types";
import type { RunningKernelFacts } from "../../../common/src/kernel/runningKernel";
import type { ModuleModel, ProjectLookup } from "./python/model";
import type { EnvWriteEvent } from "./python/events";
import type { SyntaxNode } from "./python/parser";
import type { ManifestModel } from "./manifests/model";
import type { LaunchNodes, RankArgLaunch, SeveralNodeLaunch, SlurmLaunch, VisibleLaunch } from "./slurmLaunch";
import type { TextProbe } from "./textProbe";
import type { PrefilterFacts } from "./prefilter";
import { escapeControls } from "../../../common/src/text/controls";

/** Facts about the machine, for GPU017 (inventory sent by the client, or `--gpus`/`--inventory` in the CLI). */
export interface MachineFacts {
  /** Number of physical GPUs, or null when unknown (the rule stays silent). */
  gpuCount: number | null;
  /** Their UUIDs (`GPU-...`), in nvidia-smi index order; may be empty. */
  uuids: string[];
}

/** Everything a rule may read. */
export interface RuleContext {
  model: ModuleModel;
  /** The machine, when known. */
  machine: MachineFacts;
  /** Whether the text is a notebook (cells joined in order). */
  notebook: boolean;
  /** How the project's Slurm job scripts start this file (slurmLaunch.ts); empty when none does or the file is unknown. */
  slurm?: readonly SlurmLaunch[];
  /** How many nodes the project's job and shell scripts start this file on (slurmLaunch.ts `launchNodesIn`); empty when none does. The Markdown documents' launches: ProjectLookup.documentedLaunches. */
  launchNodes?: readonly LaunchNodes[];
  /** The other Python files the job and shell scripts around this file start with the local rank as an argument (GPU044); empty when none. */
  rankArgLaunches?: readonly RankArgLaunch[];
  /** The commands of the project's shell and job scripts that start this file with a literal CUDA_VISIBLE_DEVICES (GPU064); empty when none. */
  visibleLaunches?: readonly VisibleLaunch[];
  /** The other Python files the project's job and shell scripts start on several nodes (slurmLaunch.ts `severalNodeLaunchesIn`); empty when none, or in a test module. */
  severalNodeLaunches?: readonly SeveralNodeLaunch[];
  /** The other Python files the project's job and shell scripts start, each with whether every launch of it says one node (slurmLaunch.ts `startedFilesIn`); empty when none, in a test module, or where too many are started to list. */
  startedFiles?: readonly SeveralNodeLaunch[];
  /** The file is a test module (LintOptions.testModule). */
  testModule?: boolean;
  /** Where a notebook says it runs (LintOptions.notebookHost): `"colab"` or `"kaggle"` for one saved from Google Colab or Kaggle. */
  notebookHost?: "colab" | "kaggle";
  /**
   * Whether preview findings are kept (LintOptions.preview). A rule may skip work whose findings
   * would all be preview ones when this is off; `report` drops them anyway.
   */
  preview?: boolean;
  /** The project pins (or targets) torch < 2.0 (LintOptions.torchBelow20). */
  torchBelow20?: boolean;
  /** The project's pins of the libraries a rule's claim depends on (LintOptions.libraryPins); a library left out is unpinned. */
  libraryPins?: Readonly<Record<string, string>>;
  /** Names a 0-based line for messages: "line 4" in a file, "cell 2, line 1" in a notebook. */
  where(line: number): string;
  /**
   * Whether the model's text holds `word` as a whole identifier (textProbe.ts TextProbe: in the
   * editor an answer is carried from the last version, so a keystroke searches only around its
   * change). Absent: the rule searches the text itself.
   */
  hasWord?(word: string): boolean;
  /**
   * A notebook's running kernel as the editor's probe saw it (common/src/kernel/runningKernel.ts);
   * absent for files, the CLI, and notebooks whose kernel is not known (no access, the probe timed out).
   */
  runningKernel?: RunningKernelFacts;
  /**
   * The project's other modules as this file imports them (python/project.ts), for rules that
   * follow values into them (GPU039: ranks returned by a project function). Absent: opaque.
   */
  project?: ProjectLookup;
  /** Reports one finding; severity defaults to the rule's. */
  report(finding: {
    range: Range;
    message: string;
    severity?: Severity;
    related?: RelatedInfo[];
    fix?: Fix;
    preview?: boolean;
    kernelRestart?: KernelRestart;
  }): void;
}

/** Everything a manifest rule (GPU018-GPU020: Dockerfiles, compose files, Kubernetes manifests) may read. */
export interface ManifestRuleContext {
  manifest: ManifestModel;
  /** The machine, when known (the launch rule, GPU040, compares a plain shell script's launches with it). */
  machine: MachineFacts;
  /** Absolute path of the linted file; null for an unsaved buffer or text without a name. */
  file: string | null;
  /**
   * Reads another workspace file the result depends on (a launched script, an accelerate config, a
   * sourced environment file) through the safe reader, at most `maxBytes` bytes; null when it cannot
   * be read. In the editor a file open there is read from its document (LintOptions.openText). The
   * path is recorded as a dependency of the result (the CLI's cache re-checks the file when it
   * changes; the language server lints the document again); one that cannot be read only with
   * `absentMatters` (the result depends on its absence: it is checked again once it appears).
   */
  read(path: string, maxBytes: number, absentMatters?: boolean): string | null;
  /** The project's pins of the libraries a rule's claim depends on (RuleContext.libraryPins); a library left out is unpinned. */
  libraryPins?: Readonly<Record<string, string>>;
  /** Reports one finding; severity defaults to the rule's. */
  report(finding: Parameters<RuleContext["report"]>[0]): void;
}

/**
 * A Python rule's text trigger: false only for a text on which the rule cannot report anything, so
 * the file (or, for this rule, the rule) can be skipped without parsing (prefilter.ts). `probe`
 * answers cheap questions about the raw text (textProbe.ts); `preview` is whether preview checks
 * run (a preview check may need a wider trigger); `facts` what else the prefilter knows (prefilter.ts
 * PrefilterFacts: the project's functions that write a startup variable). Each trigger says in a comment why it is sound;
 * test/unit/server/engine/prefilter.test.ts checks it on every Python file of the repository.
 */
export type PythonTrigger = (probe: TextProbe, preview: boolean, facts?: PrefilterFacts) => boolean;

/**
 * What a Python rule needs besides the text: the machine's GPUs (GPU017), a job script that starts
 * the file (GPU036, GPU037), a script that passes the local rank as an argument to the file or to
 * another file around it (GPU044), a script that starts the file with CUDA_VISIBLE_DEVICES set (GPU064).
 */
export type PythonRuleNeed = "machine" | "slurm" | "localRankArg" | "visibleLaunch";

/** The metadata of a Python rule: the common part and its text trigger. */
export interface PythonRuleMeta extends RuleMeta {
  /** The cheap text test that decides whether the rule can fire on a file (prefilter.ts). */
  trigger: PythonTrigger;
  /** The rule runs only when this is known (the linter skips it otherwise). */
  needs?: PythonRuleNeed;
}

/**
 * A manifest rule's text trigger for a YAML manifest (`kind` compose or yaml): false only for a
 * text on which the rule cannot report (manifests/prefilter.ts, which says why a substring test is
 * sound on YAML). Dockerfiles and job scripts are not prefiltered by it.
 */
export type ManifestTrigger = (text: string, kind: "compose" | "yaml") => boolean;

/** The metadata of a manifest rule: the common part and its YAML trigger. */
export interface ManifestRuleMeta extends RuleMeta {
  /** The cheap text test that decides whether the rule can fire on a YAML manifest. */
  trigger: ManifestTrigger;
  /** The rule reads Dev Container configurations (devcontainer.json): only such rules run on them. */
  devcontainer?: true;
  /** The rule reads dotenv files (`.env`, `*.env`: files.ts `dotenv`): only such rules run on them. */
  dotenv?: true;
}

/** A rule that lints Python modules and notebooks. */
export interface PythonRule {
  meta: PythonRuleMeta;
  /** Lints a Python module or notebook. */
  check(context: RuleContext): void;
  checkManifest?: never;
}

/** A rule that lints Dockerfiles, compose files, Kubernetes manifests and shell (job) scripts. */
export interface ManifestRule {
  meta: ManifestRuleMeta;
  /** Lints one manifest. */
  checkManifest(context: ManifestRuleContext): void;
  check?: never;
}

/** A rule: Python or manifest, told apart by {@link isManifestRule}. */
export type Rule = PythonRule | ManifestRule;

/** Whether a rule lints manifests (it has {@link ManifestRule.checkManifest}). */
export function isManifestRule(rule: Rule): rule is ManifestRule {
  return typeof rule.checkManifest === "function";
}

/** Whether a rule lints Python (it has {@link PythonRule.check}). */
export function isPythonRule(rule: Rule): rule is PythonRule {
  return typeof rule.check === "function";
}

/**
 * Builds a diagnostic from a rule and a finding (used by the engine, for Python, notebooks and
 * manifests alike). Messages quote values from the code under review, so the message, the related
 * messages and the fix title get their control characters escaped here (common/src/text/controls.ts
 * {@link escapeControls}): a value with a newline or an ESC reaches no output raw.
 */
export function toDiagnostic(rule: Rule, f: Parameters<RuleContext["report"]>[0]): LintDiagnostic {
  return {
    code: rule.meta.code,
    name: rule.meta.name,
    message: escapeControls(f.message),
    severity: f.severity ?? rule.meta.severity,
    range: f.range,
    ...(f.related ? { related: f.related.map((r) => ({ ...r, message: escapeControls(r.message) })) } : {}),
    ...(f.fix ? { fix: { ...f.fix, title: escapeControls(f.fix.title) } } : {}),
    ...(f.kernelRestart ? { kernelRestart: f.kernelRestart } : {}),
  };
}

/**
 * The `report` of a rule's context: findings become diagnostics in `into`, a preview finding only
 * when preview is on (RuleMeta.preview in types.ts).
 */
export function reporter(rule: Rule, into: LintDiagnostic[], preview: boolean | undefined): RuleContext["report"] {
  return (f) => {
    if (!f.preview || preview) into.push(toDiagnostic(rule, f));
  };
}

/** The env writes of the timeline, in execution order. */
export function envWrites(model: ModuleModel): EnvWriteEvent[] {
  return model.events.filter((e): e is EnvWriteEvent => e.kind === "envWrite");
}

/** The statement's source text starting at `node`, for messages: first line only, at most 80 chars. */
export function snippet(node: SyntaxNode): string {
  const first = node.text.split("\n")[0];
  return first.length > 80 ? `${first.slice(0, 77)}...` : first;
}
