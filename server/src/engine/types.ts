/**
 * The lint engine's own types. Positions follow LSP: 0-based line, 0-based character counted in
 * UTF-16 code units. No `vscode` and no LSP transport here: the server and the CLI share them.
 */

/** A position in a text: 0-based line, 0-based UTF-16 column. */
export interface Position {
  line: number;
  character: number;
}
/** A half-open range [start, end). */
export interface Range {
  start: Position;
  end: Position;
}
/** A replacement of `range` by `newText` (LSP TextEdit shape). */
export interface TextEdit {
  range: Range;
  newText: string;
}

export type Severity = "error" | "warning" | "information" | "hint";

/** A rule code, `GPU001` .. `GPU020` (../shared/spec/rules.md). */
export type RuleCode = `GPU${number}`;

/** A fix offered for one diagnostic. */
export interface Fix {
  /** Quick-fix title shown in the editor, e.g. "Move the CUDA_VISIBLE_DEVICES write above `import torch`". */
  title: string;
  /** Edits on the linted text (for notebooks: on the joined cell text; the caller maps them to cells). */
  edits: TextEdit[];
  /** Safe fixes keep the program's meaning and may run on save / `--fix`; unsafe ones are offered only. */
  safe: boolean;
  /** A note to show after applying (e.g. "restart the kernel"). */
  note?: string;
}

/** A related location that explains a diagnostic (e.g. the initialising call for GPU001). */
export interface RelatedInfo {
  range: Range;
  message: string;
  /**
   * The absolute path of another file the range is in (GPU040: the deepspeed line of a script that
   * the linted script runs); absent: the linted file itself.
   */
  file?: string;
}

/** One finding. */
export interface LintDiagnostic {
  code: RuleCode;
  /** The rule's kebab-case name, e.g. `env-after-cuda-init`. */
  name: string;
  message: string;
  severity: Severity;
  range: Range;
  related?: RelatedInfo[];
  fix?: Fix;
  /**
   * The finding is undone by restarting the notebook's kernel (GPU001 from the running kernel's
   * state): the editor offers "Restart kernel on GPU N". `devices`: the CUDA_VISIBLE_DEVICES ids
   * the write asks for (a literal value), else null (restart on the GPU selection as it is).
   */
  kernelRestart?: KernelRestart;
}

/** What {@link LintDiagnostic.kernelRestart} says: the variable written and, for CUDA_VISIBLE_DEVICES with a literal value, its ids. */
export interface KernelRestart {
  variable: string;
  devices: string[] | null;
}

/** Rule documentation, in Ruff's order; rendered into docs/rules/GPUnnn.md and hovers. */
export interface RuleDocs {
  /** What it does. */
  what: string;
  /**
   * What the analysis follows for this rule and what it does not, in one or two plain sentences:
   * the module's own code in the order it runs, the functions it inlines, the project's modules,
   * notebook cells, the job script or manifest itself, ... Rendered as "What it follows".
   */
  follows: string;
  /** Why is this bad: with the measured fact (ground-truth row) or the cited source. */
  why: string;
  /** An example that triggers the rule (Python unless `language` says otherwise). */
  example: string;
  /** The fixed example / what to use instead. */
  fix: string;
  /** When not to care. */
  whenNotToCare: string;
  /** Sources: ground-truth rows, NVIDIA / PyTorch / TensorFlow / JAX documentation. */
  references: string[];
  /** Language (Markdown fence) of `example` and `fix`: `python` when left out; `yaml` or `dockerfile` for manifest rules; `dotenv` for a dotenv file (GPU076). */
  language?: "python" | "yaml" | "dockerfile" | "bash" | "jsonc" | "dotenv";
}

/** A rule's fixed metadata. */
export interface RuleMeta {
  code: RuleCode;
  name: string;
  /** Default severity (rules.md); a rule may report some cases at another severity. */
  severity: Severity;
  /** Whether the rule offers a quick fix for at least some findings. */
  fixable: boolean;
  /**
   * Which fixes a fixable rule offers: `safe` ones only (applied by `--fix`, Fix All and
   * `source.fixAll` on save), `unsafe` ones only (offered as quick fixes and applied by
   * `--fix --unsafe-fixes` or Apply Unsafe Fixes, never by `--fix` alone), or `both`, by finding
   * (`Fix.safe`). Set exactly when `fixable`; registry.test.ts checks it against the fixes the rule's
   * snapshot shows.
   */
  fixSafety?: "safe" | "unsafe" | "both";
  /**
   * In the preview set: off unless preview is on (`--preview`, `gpuPilot.lint.preview`,
   * `[tool.gpu-pilot] preview = true`), as Ruff does, because its precision on the ecosystem corpus
   * (test/ecosystem) is below the default set's 95% bar. Checks of a default rule can be preview
   * one by one (`preview: true` on the finding).
   */
  preview?: boolean;
  docs: RuleDocs;
}
