/**
 * A sound text prefilter: for each rule, a cheap test on the raw text that every file the rule can
 * report on passes. A file none of whose enabled rules passes is not parsed at all; a file that
 * passes runs only the rules that passed. (Issue 8: on the python3-torch tree only a fraction of the
 * files mention anything a rule looks at.)
 *
 * Why each test is sound: the model recognises an environment access only through a name that
 * resolves to `os.environ` / `os.putenv` / `os.getenv`, and such a name can only come from source
 * text containing `environ`, `putenv` or `getenv` as a whole identifier (an attribute or an
 * imported name: a resolved path is an import binding followed by attribute names, so
 * `environment` or `getenvironment` in a comment or a name does not count); a framework only
 * through an import naming it; a call only through its name. The soundness of this table is tested
 * on every fixture, shared case, example and verify program (test/unit/prefilter.test.ts), and the
 * benchmark compares the prefiltered and the full output on the whole corpus.
 */

const ENV = ["environ", "putenv", "getenv"];

/** Substring tests on one text, each word searched at most once however many rules ask. */
export class TextProbe {
  private readonly found = new Map<string, boolean>();
  private readonly words = new Map<string, boolean>();
  constructor(private readonly text: string) {}
  /** The text contains `w`. */
  has(w: string): boolean {
    let v = this.found.get(w);
    if (v === undefined) { v = this.text.includes(w); this.found.set(w, v); }
    return v;
  }
  /** The text contains any of `ws`. */
  hasAny(ws: readonly string[]): boolean {
    return ws.some((w) => this.has(w));
  }
  /** The text contains any of `ws` as a whole identifier. */
  hasAnyWord(ws: readonly string[]): boolean {
    return ws.some((w) => this.hasWord(w));
  }
  /** Some whole-word `first` comes before some whole-word `then` in the text. */
  wordBefore(first: string, then: string): boolean {
    if (!this.hasWord(first) || !this.hasWord(then)) return false;
    const firstAt = wordIndex(this.text, first, 0);
    const lastThen = lastWordIndex(this.text, then);
    return firstAt >= 0 && lastThen > firstAt;
  }
  /** The text contains `w` as a whole identifier. */
  hasWord(w: string): boolean {
    let v = this.words.get(w);
    if (v === undefined) { v = this.has(w) && hasWord(this.text, w); this.words.set(w, v); }
    return v;
  }
}

const isIdent = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127;

const wholeAt = (text: string, word: string, i: number) =>
  (i === 0 || !isIdent(text.charCodeAt(i - 1))) && (i + word.length >= text.length || !isIdent(text.charCodeAt(i + word.length)));

/** Index of the first whole-identifier `word` at or after `from`, or -1. */
function wordIndex(text: string, word: string, from: number): number {
  for (let i = text.indexOf(word, from); i >= 0; i = text.indexOf(word, i + 1)) if (wholeAt(text, word, i)) return i;
  return -1;
}

/** Index of the last whole-identifier `word`, or -1. */
function lastWordIndex(text: string, word: string): number {
  for (let i = text.lastIndexOf(word); i >= 0; i = i === 0 ? -1 : text.lastIndexOf(word, i - 1)) if (wholeAt(text, word, i)) return i;
  return -1;
}

/** Whether `word` occurs in `text` as a whole identifier (not inside a longer one). */
export function hasWord(text: string, word: string): boolean {
  return wordIndex(text, word, 0) >= 0;
}

/** Per rule: a necessary condition on the text of a Python file for the rule to report anything. */
export const PYTHON_TRIGGERS: Readonly<Record<string, (t: TextProbe) => boolean>> = {
  // Environment writes and reads (GPU001-007, 015, 016): need os.environ / putenv / getenv.
  GPU001: (t) => t.hasAnyWord(ENV),
  GPU002: (t) => t.hasAnyWord(ENV),
  GPU003: (t) => t.hasAnyWord(ENV),
  GPU004: (t) => t.hasAnyWord(ENV), // needs the file's own CUDA_VISIBLE_DEVICES write
  GPU005: (t) => t.hasAnyWord(ENV),
  GPU006: (t) => t.hasAnyWord(ENV),
  GPU007: (t) => t.hasAnyWord(ENV),
  GPU008: (t) => t.has("set_device"),
  // `importlib.reload(torch)` (the name reload); `sys.modules.pop("torch")` (the names sys and
  // modules); `del torch` / `del sys.modules[...]` followed by a re-import (a `del` before an `import`).
  GPU009: (t) => t.hasWord("reload") || (t.hasWord("modules") && t.hasWord("sys")) || t.wordBefore("del", "import"),
  GPU010: (t) => t.has("DataParallel"),
  GPU011: (t) => t.has("init_process_group") || t.has("LOCAL_RANK"),
  GPU012: (t) => t.has("tensorflow") || t.has("keras"),
  GPU013: (t) => t.has("tensorflow") || t.has("keras"),
  GPU014: () => false, // notebook shell lines only
  GPU015: (t) => t.has("putenv"),
  GPU016: (t) => t.hasAnyWord(ENV),
  GPU017: (t) => t.hasAnyWord(ENV) || t.has("cuda") || t.has("device"), // only with a known machine
  // Issue 21: environment writes (GPU026, 027, 028, 030) and `jax.config.update("jax_platforms", ...)` (GPU027, 029).
  GPU026: (t) => t.hasAnyWord(ENV),
  GPU027: (t) => t.hasAnyWord(ENV) || t.has("jax_platforms"),
  GPU028: (t) => t.hasAnyWord(ENV),
  GPU029: (t) => t.has("jax_platforms"),
  GPU030: (t) => t.hasAnyWord(ENV),
  // Vendor rules: environment writes (GPU031, 032, 035's CUDA_VISIBLE_DEVICES); `@ray.remote` (GPU033, 034).
  GPU031: (t) => t.hasAnyWord(ENV),
  GPU032: (t) => t.hasAnyWord(ENV),
  GPU033: (t) => t.has("remote") && t.hasAnyWord(ENV),
  GPU034: (t) => t.has("remote"),
  GPU035: (t) => t.hasAnyWord(ENV) && t.has("parallel_size"),
  // Issue 23: Slurm-started Python (GPU036, GPU037 run only when a job script starts the file).
  GPU036: (t) => t.has("LOCAL_RANK"),
  GPU037: (t) => t.has("cuda") || t.has("device"),
  GPU038: (t) => t.has("SLURM_") && t.hasAnyWord(ENV),
};

/**
 * The rules worth running on a Python file's text, among `enabled`. Notebooks run every rule (their
 * `%env`/`!export` lines are events too). GPU017 only runs when the machine is known, GPU036 and
 * GPU037 only when a job script starts the file (`slurmLaunched`).
 */
export function candidateRules(text: string, enabled: readonly string[], opts: { notebook: boolean; machineKnown: boolean; slurmLaunched?: boolean }): Set<string> {
  const out = new Set<string>();
  const probe = new TextProbe(text);
  for (const code of enabled) {
    if (code === "GPU017" && !opts.machineKnown) continue;
    if ((code === "GPU036" || code === "GPU037") && !opts.slurmLaunched) continue;
    const trigger = PYTHON_TRIGGERS[code];
    if (opts.notebook || !trigger || trigger(probe)) out.add(code);
  }
  return out;
}

/**
 * The prefilter of shell scripts: whether some line starts with `#SBATCH`. sbatch reads a directive
 * only from a line that starts with it, and every job-script rule (GPU021-GPU025) needs the GPUs or
 * the directives those lines give, so a script without one is not parsed.
 */
export function hasSbatchLine(text: string): boolean {
  for (let i = text.indexOf("#SBATCH"); i >= 0; i = text.indexOf("#SBATCH", i + 1)) {
    if (i === 0 || text[i - 1] === "\n" || text[i - 1] === "\r") return true;
  }
  return false;
}
