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

import { ALLOC_CONF_VARIABLES, STARTUP_VARIABLES } from "./frameworks";
import { FOLKLORE_VARIABLES } from "./rules/GPU016-unknown-gpu-variable";
import { KNOWN_WRONG_NAMES, VENDOR_VARIABLES } from "./rules/GPU007-misspelled-cuda-variable";

const ENV = ["environ", "putenv", "getenv"];
const CVD = ["CUDA_VISIBLE_DEVICES"];
const WRONG_NAMES_LOWER = [...KNOWN_WRONG_NAMES.keys()].map((k) => k.toLowerCase());
const FOLKLORE = [...FOLKLORE_VARIABLES.keys()];

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
  /**
   * The text holds an environment access (`environ` / `putenv` / `getenv`) and one of `names`. The
   * model takes a variable name only from one string literal or an `update(K=...)` keyword
   * (python/parser.ts `keyName`), and a name made of letters, digits and `_` is written in the
   * source as it is, so a rule about these variables needs one of them in the text.
   */
  envWith(names: readonly string[]): boolean {
    return this.hasAnyWord(ENV) && this.hasAny(names);
  }
  /**
   * Some string in the text is within `edits` edits of one of `names`, ignoring case (for
   * GPU007's misspellings, whose names are printable ASCII: rules/GPU007 `SPELLABLE`). Pigeonhole:
   * cut a name into `edits + 3` pieces; each edit touches at most one piece, so 3 pieces stay
   * intact, and each edit shifts what follows by at most one character, so each later intact piece
   * starts within `edits` characters of where the name puts it relative to the first.
   */
  nearMiss(names: readonly string[], edits: number): boolean {
    const text = this.lowerText();
    const near = (s: string, at: number) => {
      for (let d = -edits; d <= edits; d++) if (at + d >= 0 && text.startsWith(s, at + d)) return true;
      return false;
    };
    return names.some((n) => {
      const pieces = piecesOf(n.toLowerCase(), edits + 3);
      for (let i = 0; i < pieces.length; i++) {
        for (let a = text.indexOf(pieces[i].s); a >= 0; a = text.indexOf(pieces[i].s, a + 1)) {
          for (let j = i + 1; j < pieces.length; j++) {
            if (!near(pieces[j].s, a + pieces[j].at - pieces[i].at)) continue;
            for (let l = j + 1; l < pieces.length; l++) if (near(pieces[l].s, a + pieces[l].at - pieces[i].at)) return true;
          }
        }
      }
      return false;
    });
  }
  /** The lower-case text contains `w` (lower case). */
  hasLower(w: string): boolean {
    return this.lowerText().includes(w);
  }
  private lower: string | undefined;
  private lowerText(): string {
    this.lower ??= this.text.toLowerCase();
    return this.lower;
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

/** `name` cut into `n` pieces of nearly equal length, each with its offset. */
function piecesOf(name: string, n: number): Array<{ s: string; at: number }> {
  const out: Array<{ s: string; at: number }> = [];
  for (let k = 0; k < n; k++) {
    const from = Math.floor((k * name.length) / n);
    const to = Math.floor(((k + 1) * name.length) / n);
    if (to > from) out.push({ s: name.slice(from, to), at: from });
  }
  return out;
}

/** Whether `word` occurs in `text` as a whole identifier (not inside a longer one). */
export function hasWord(text: string, word: string): boolean {
  return wordIndex(text, word, 0) >= 0;
}

/** Per rule: a necessary condition on the text of a Python file for the rule to report anything. */
export const PYTHON_TRIGGERS: Readonly<Record<string, (t: TextProbe, preview: boolean) => boolean>> = {
  // Environment writes and reads: need os.environ / putenv / getenv and the variable the rule is
  // about, by name (TextProbe.envWith): issue 20 item 3.
  GPU001: (t) => t.envWith(STARTUP_VARIABLES),
  GPU002: (t) => t.envWith(STARTUP_VARIABLES),
  GPU003: (t) => t.envWith(CVD),
  GPU004: (t) => t.envWith(CVD), // needs the file's own CUDA_VISIBLE_DEVICES write
  GPU005: (t) => t.envWith(CVD), // a read of CUDA_VISIBLE_DEVICES or the value the file wrote to it
  GPU006: (t) => t.envWith(CVD),
  // A name within 2 edits of a startup variable, 1 of a vendor variable, or a known wrong name.
  GPU007: (t) => t.hasAnyWord(ENV) && (WRONG_NAMES_LOWER.some((k) => t.hasLower(k)) || t.nearMiss(STARTUP_VARIABLES, 2) || t.nearMiss(VENDOR_VARIABLES, 1)),
  // Default: set_device in a thread (threading, concurrent.futures, multiprocessing's thread pools,
  // asyncio.to_thread, any run_in_executor); preview: any set_device.
  GPU008: (t, preview) => t.has("set_device") && (preview || t.hasAnyWord(["threading", "concurrent", "multiprocessing", "asyncio", "run_in_executor"])),
  // `importlib.reload(torch)` (the name reload); `sys.modules.pop("torch")` (the names sys, modules
  // and pop); `del torch` / `del sys.modules[...]` followed by a re-import (a `del` before an `import`).
  GPU009: (t) => t.hasWord("reload") || (t.hasWord("pop") && t.hasWord("modules") && t.hasWord("sys")) || t.wordBefore("del", "import"),
  GPU010: (t) => t.hasWord("DataParallel"), // torch.nn(.parallel(.data_parallel)).DataParallel, not DistributedDataParallel
  // Default: init_process_group; preview: also the file's LOCAL_RANK reads.
  GPU011: (t, preview) => t.has("init_process_group") || (preview && t.has("LOCAL_RANK")),
  GPU012: (t) => t.has("tensorflow") || t.has("keras"),
  GPU013: (t) => t.has("tensorflow") || t.has("keras"),
  GPU014: () => false, // notebook shell lines only
  GPU015: (t) => t.has("putenv") && t.hasAny(STARTUP_VARIABLES),
  GPU016: (t) => t.envWith(FOLKLORE),
  GPU017: (t) => t.hasAnyWord(ENV) || t.has("cuda") || t.has("device"), // only with a known machine
  // Issue 21: environment writes (GPU026, 027, 028, 030) and `jax.config.update("jax_platforms", ...)` (GPU027, 029).
  GPU026: (t) => t.envWith(ALLOC_CONF_VARIABLES),
  GPU027: (t) => t.envWith(["JAX_PLATFORMS"]) || t.has("jax_platforms"),
  GPU028: (t) => t.envWith(["XLA_PYTHON_CLIENT_MEM_FRACTION"]),
  GPU029: (t) => t.has("jax_platforms"),
  GPU030: (t) => t.envWith(["KERAS_BACKEND"]),
  // Vendor rules: HIP_VISIBLE_DEVICES (GPU031), the MPS fallback and Level Zero mask (GPU032);
  // `@ray.remote` needs `ray` imported (GPU033, 034); CUDA_VISIBLE_DEVICES (GPU035).
  GPU031: (t) => t.envWith(["HIP_VISIBLE_DEVICES"]),
  GPU032: (t) => t.envWith(["PYTORCH_ENABLE_MPS_FALLBACK", "ZE_AFFINITY_MASK"]),
  GPU033: (t) => t.has("remote") && t.hasWord("ray") && t.envWith(["CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]),
  GPU034: (t) => t.has("remote") && t.hasWord("ray"),
  GPU035: (t) => t.envWith(CVD) && t.has("parallel_size"),
  // Issue 23: Slurm-started Python (GPU036, GPU037 run only when a job script starts the file).
  GPU036: (t) => t.has("LOCAL_RANK"),
  GPU037: (t) => t.has("cuda") || t.has("device"),
  GPU038: (t) => t.has("SLURM_") && t.envWith(CVD),
};

/**
 * The rules worth running on a Python file's text, among `enabled`. Notebooks run every rule (their
 * `%env`/`!export` lines are events too). GPU017 only runs when the machine is known, GPU036 and
 * GPU037 only when a job script starts the file (`slurmLaunched`).
 */
export function candidateRules(text: string, enabled: readonly string[], opts: { notebook: boolean; machineKnown: boolean; slurmLaunched?: boolean; preview?: boolean }): Set<string> {
  const out = new Set<string>();
  const probe = new TextProbe(text);
  for (const code of enabled) {
    if (code === "GPU017" && !opts.machineKnown) continue;
    if ((code === "GPU036" || code === "GPU037") && !opts.slurmLaunched) continue;
    const trigger = PYTHON_TRIGGERS[code];
    if (opts.notebook || !trigger || trigger(probe, !!opts.preview)) out.add(code);
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
