/**
 * The text probe of the Python prefilter (prefilter.ts): cheap tests on the raw text of a Python
 * file or a notebook's joined code cells, each word searched at most once however many rules' triggers
 * ask (a rule's trigger is its `meta.trigger`, rule.ts `PythonRuleMeta`). The tests are sound in one
 * direction only: each says whether the text can hold what the model would need to see, never
 * that the model will see it.
 *
 * Why the primitives are sound: the model recognises an environment access only through a name that
 * resolves to `os.environ` / `os.putenv` / `os.getenv`, and such a name can only come from source
 * text containing `environ`, `putenv` or `getenv` as a whole identifier (an attribute or an
 * imported name: a resolved path is an import binding followed by attribute names, so
 * `environment` or `getenvironment` in a comment or a name does not count); a framework only
 * through an import naming it; a call only through its name. In a notebook, an IPython line
 * (`%env K=v`, `!export K=v`) is an environment write with no Python text: the probe is given the
 * variables those lines write, and every test about a variable or an environment access counts
 * them (`magicVariables`).
 */
import { codeWords, isWordCode } from "../../../common/src/python/lineStructure";

const ENV = ["environ", "putenv", "getenv"];

/**
 * A set of names a trigger looks for among the names a text writes (TextProbe.writesName): `has`
 * is the exact test, and every name it accepts is `minLength` to `maxLength` characters long, printable
 * ASCII without quotes or a backslash (so a name is written in the source as it is).
 */
export interface NameSet {
  readonly minLength: number;
  readonly maxLength: number;
  has(name: string): boolean;
}

/** Where a new version of a text differs from the old one (python/keptText.ts `TextChange`). */
interface ProbeChange {
  start: number;
  oldEnd: number;
  newEnd: number;
}

/**
 * Substring tests on one text, each word searched at most once however many rules ask. A probe
 * made with {@link TextProbe.after} from the probe of the previous version of a document answers
 * `has` and `hasWord` from the previous answers and the changed text (no whole-file scan per
 * keystroke for a word the edit cannot have added or removed).
 */
export class TextProbe {
  /** First index of each word asked for (-1: absent). */
  private readonly found = new Map<string, number>();
  /** First index of each word asked for as a whole identifier (-1: absent). */
  private readonly words = new Map<string, number>();
  private prev: { probe: TextProbe; change: ProbeChange } | undefined;
  /** The first index and the first whole-identifier index of each of {@link SCANNED_WORDS}, made on the first ask. */
  private scanned: WordScan | undefined;
  /**
   * @param text the Python text (a notebook's code cells joined, IPython lines blanked).
   * @param magicVariables the variables a notebook's IPython lines write (python/events.ts
   *   `magicEvents`: `%env K=v`, `%set_env K v`, `!export K=v`, `!K=v cmd`), which reach the model
   *   as writes without any Python text; empty for a Python file.
   */
  constructor(
    private readonly text: string,
    private readonly magicVariables: readonly string[] = [],
  ) {}
  /**
   * A probe of `text`, the next version of `previous`'s text, `change` being where they differ.
   * Call {@link detach} when done asking (the probe then stops holding the old one).
   */
  static after(
    previous: TextProbe,
    text: string,
    change: ProbeChange,
    magicVariables: readonly string[] = [],
  ): TextProbe {
    const p = new TextProbe(text, magicVariables);
    p.prev = { probe: previous, change };
    return p;
  }
  /** Drops the previous version's probe (answers found so far stay, for the next version). */
  detach(): void {
    this.prev = undefined;
  }
  /** The text contains `w`. */
  has(w: string): boolean {
    let at = this.found.get(w);
    if (at === undefined) {
      at = this.firstIndex(w, false);
      this.found.set(w, at);
    }
    return at >= 0;
  }
  /**
   * The first index of `w` (as a whole identifier: `whole`), from the previous version's answer
   * where that settles it: an occurrence before the change (with the character after it) is still
   * the first; with none before, every occurrence in the new text touches the changed part (or,
   * for a whole identifier, the characters beside it), so only that window is searched.
   */
  private firstIndex(w: string, whole: boolean): number {
    const full = () => {
      // A fresh probe answers the common words from one scan of the text (below); an edited
      // document's probe searches only the changed window instead, so it keeps indexOf.
      const k = this.prev ? undefined : SCANNED_INDEX.get(w);
      if (k === undefined) return whole ? wordIndex(this.text, w, 0) : this.text.indexOf(w);
      this.scanned ??= scanWords(this.text);
      return whole ? this.scanned.whole[k] : this.scanned.first[k];
    };
    const old = this.prev && (whole ? this.prev.probe.words : this.prev.probe.found).get(w);
    if (old === undefined) return full();
    const { start, newEnd } = this.prev!.change;
    const margin = whole ? 1 : 0;
    if (old >= 0 && old + w.length + margin <= start) return old;
    if (old >= 0) return full();
    // Occurrences starting in [from, newEnd + margin): searched in that window only.
    const from = Math.max(0, start - w.length - margin + 1);
    const window = this.text.slice(from, Math.min(this.text.length, newEnd + margin + w.length - 1));
    for (let i = window.indexOf(w); i >= 0; i = window.indexOf(w, i + 1)) {
      if (!whole || wholeAt(this.text, w, from + i)) return from + i;
    }
    return -1;
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
    return (this.hasAnyWord(ENV) && this.hasAny(names)) || this.magicWith(names);
  }
  /** The text names an environment access (`environ` / `putenv` / `getenv`), or an IPython line writes a variable. */
  envAccess(): boolean {
    return this.magicVariables.length > 0 || this.hasAnyWord(ENV);
  }
  /** An IPython line writes a variable whose name holds one of `names` (a notebook's `%env` or `!export`). */
  magicWith(names: readonly string[]): boolean {
    return this.magicVariables.some((v) => names.some((n) => v.includes(n)));
  }
  /**
   * Some variable name written in the text is one of `names` (GPU007's test, with the names
   * `misspellingOf` reports). The model takes a variable name only from one string literal
   * (python/parser.ts `keyName`) or an `update(K=...)` keyword, and a name of `names` is written
   * as it is (no quote, no backslash). So it is the whole text between two consecutive quote
   * characters (no escape can produce it), or an identifier followed by `=` (not `==`); a `=` that
   * opens a line (after blanks) passes, as its keyword may stand lines above. Each candidate of a
   * length in `names`' range is judged by `names.has` itself, so the test is exact on those. In a
   * notebook, a variable an IPython line writes counts too.
   */
  writesName(names: NameSet): boolean {
    let found = this.namesFound.get(names);
    if (found === undefined) {
      found =
        this.writesNameAfterEdit(names) ??
        (this.quotedName(names, 0, this.text.length) || this.keywordName(names, 0, this.text.length));
      this.namesFound.set(names, found);
    }
    return found || this.magicVariables.some((v) => nameIn(names, v, 0, v.length));
  }
  /** {@link writesName}'s answers, per name set asked. */
  private readonly namesFound = new Map<NameSet, boolean>();
  /**
   * {@link writesName} from the previous version's answer where that settles it (the editor: no
   * whole-file scan per keystroke): the previous text had no such name, and the edit neither
   * removed nor inserted a quote or `=`. Then the quotes and the `=` signs are the old ones, so
   * every text between consecutive quotes is an old one except the one around the edit, and every
   * `=`'s identifier (which stops at a line's start) is an old one except on the lines the edit
   * touches: only those are judged. Undefined when it does not settle it.
   */
  private writesNameAfterEdit(names: NameSet): boolean | undefined {
    if (!this.prev || this.prev.probe.namesFound.get(names) !== false) return undefined;
    const { start, oldEnd, newEnd } = this.prev.change;
    const old = this.prev.probe.text,
      t = this.text;
    const cutIn = (s: string, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const c = s.charCodeAt(i);
        if (c === 0x22 || c === 0x27 || c === 0x3d) return true;
      }
      return false;
    };
    if (cutIn(old, start, oldEnd) || cutIn(t, start, newEnd)) return undefined;
    const before = Math.max(t.lastIndexOf('"', start - 1), t.lastIndexOf("'", start - 1));
    let after = t.indexOf('"', newEnd);
    const sq = t.indexOf("'", newEnd);
    if (after < 0 || (sq >= 0 && sq < after)) after = sq;
    if (before >= 0 && after >= 0 && this.quotedName(names, before, after + 1)) return true;
    let lineStart = start;
    while (lineStart > 0 && t.charCodeAt(lineStart - 1) !== 10 && t.charCodeAt(lineStart - 1) !== 13) lineStart--;
    let lineEnd = newEnd;
    while (lineEnd < t.length && t.charCodeAt(lineEnd) !== 10 && t.charCodeAt(lineEnd) !== 13) lineEnd++;
    return this.keywordName(names, lineStart, lineEnd);
  }
  /** Whether the text between two consecutive quotes of `text[from, to)` is one of `names`. */
  private quotedName(names: NameSet, from: number, to: number): boolean {
    const t = this.text;
    let prev = -1;
    let dq = t.indexOf('"', from),
      sq = t.indexOf("'", from);
    while ((dq >= 0 && dq < to) || (sq >= 0 && sq < to)) {
      const q = dq < 0 || dq >= to ? sq : sq < 0 || sq >= to ? dq : Math.min(dq, sq);
      if (prev >= 0 && nameIn(names, t, prev + 1, q)) return true;
      prev = q;
      if (q === dq) dq = t.indexOf('"', q + 1);
      else sq = t.indexOf("'", q + 1);
    }
    return false;
  }
  /**
   * Whether some `=` (not `==`) in `text[from, to)` follows one of `names`, or opens its line.
   * `from` is a line's start, so no run of `=` is cut.
   */
  private keywordName(names: NameSet, from: number, to: number): boolean {
    const t = this.text;
    for (let i = t.indexOf("=", from); i >= 0 && i < to; i = t.indexOf("=", i + 1)) {
      if (t.charCodeAt(i + 1) === 61) {
        i++;
        continue;
      } // `==`
      let k = i - 1;
      while (k >= 0 && (t.charCodeAt(k) === 32 || t.charCodeAt(k) === 9 || t.charCodeAt(k) === 12)) k--;
      if (k < 0) continue;
      const c = t.charCodeAt(k);
      if (c === 10 || c === 13) return true;
      if (!isWordCode(c)) continue;
      let start = k;
      while (start > 0 && isWordCode(t.charCodeAt(start - 1))) start--;
      if (nameIn(names, t, start, k + 1)) return true;
    }
    return false;
  }
  /**
   * Some code word `word` (common/src/python/lineStructure.ts `codeWords`) is followed, before its logical
   * line ends, by a string literal that can hold the name of one of `modules` or of a submodule
   * (`"torch"`, `'torch.cuda'`): the key of `del sys.modules[...]` and the argument of
   * `sys.modules.pop(...)`, read by python/parser.ts `stringValue`, which joins implicitly
   * concatenated pieces and unescapes only `\\"`, `\\'`, `\\\\`, `\\n`, `\\t`. So a quote is
   * followed by the module's name and then `.` or a quote, or the first piece is a proper prefix
   * of the name between quotes (`"to" "rch"`). A text whose line structure CPython rejects passes.
   */
  quotedAfterWord(word: string, modules: readonly string[]): boolean {
    return this.afterWord(word, (text, from, to) => quotedModuleIn(text, modules, from, to));
  }
  /**
   * Some code word `word` (common/src/python/lineStructure.ts `codeWords`: not in a string or comment) is
   * followed, up to the end of its logical line, by text `test` accepts (`text[from, to)`): the rest of any statement
   * or call the word starts lies there. True for a text whose line structure CPython rejects (the
   * scan stops at the error).
   */
  afterWord(word: string, test: (text: string, from: number, to: number) => boolean): boolean {
    if (!this.hasWord(word)) return false;
    const scan = this.codeSpans(word);
    return scan.error || scan.spans.get(word)!.some((span) => test(this.text, span.from, span.to));
  }
  /**
   * Some code word (common/src/python/lineStructure.ts `codeWords`: not in a string or comment) is `word`
   * (`whole`) or contains it; true for a text whose line structure CPython rejects. The model
   * resolves a name only through code words (import bindings and attributes), so a rule about
   * a dotted name (GPU010's `torch.nn.DataParallel`, GPU012/013's `tensorflow.config...`) needs
   * its words in the code, not only in a docstring or comment. Words of {@link CODE_WORDS} share
   * one scan with {@link afterWord}'s.
   */
  codeWord(word: string, whole: boolean): boolean {
    if (!(whole ? this.hasWord(word) : this.has(word))) return false;
    const scan = this.codeSpans(word);
    return scan.error || (whole ? scan.exact : scan.within).has(word);
  }
  /**
   * For `word` and each of {@link SPAN_WORDS}: from the end of its first code word on each logical
   * line to that line's end (common/src/python/lineStructure.ts `codeWords`), in order; which words of
   * {@link CODE_WORDS} are or lie in a code word; `error` when CPython rejects the text's line
   * structure (the scan stopped there). One scan of the text serves every word of SPAN_WORDS and
   * CODE_WORDS (the triggers of GPU008 to GPU013 ask for them, often on the same file); another word
   * gets a scan of its own.
   */
  private codeSpans(word: string): CodeSpans {
    const done = this.scans.find((s) => s.spans.has(word) || s.sought.includes(word));
    if (done) return done;
    const shared = SPAN_WORDS.includes(word) || CODE_WORDS.includes(word);
    const watched = shared ? SPAN_WORDS : [word];
    const sought = shared ? CODE_WORDS : [];
    const t = this.text;
    const spans = new Map<string, CodeSpan[]>(watched.map((w) => [w, []]));
    const open: Array<CodeSpan | null> = watched.map(() => null);
    let anyOpen = false;
    // Each sought word's next occurrence in the raw text at or after the current code word.
    const next = sought.map((w) => t.indexOf(w));
    const exact = new Set<string>(),
      within = new Set<string>();
    const error = codeWords(
      t,
      (start, end) => {
        if (anyOpen) {
          const w = t.slice(start, end);
          for (const o of open) o?.words.push(w);
        }
        for (let k = 0; k < watched.length; k++) {
          const w = watched[k];
          if (open[k] === null && end - start === w.length && t.startsWith(w, start)) {
            open[k] = { from: end, to: t.length, words: [] };
            anyOpen = true;
          }
        }
        for (let k = 0; k < sought.length; k++) {
          const w = sought[k];
          while (next[k] >= 0 && next[k] < start) next[k] = t.indexOf(w, next[k] + 1);
          if (next[k] >= 0 && next[k] + w.length <= end) {
            within.add(w);
            if (next[k] === start && end - start === w.length) exact.add(w);
          }
        }
      },
      (offset) => {
        if (!anyOpen) return;
        for (let k = 0; k < watched.length; k++) {
          const o = open[k];
          if (o) {
            o.to = offset;
            spans.get(watched[k])!.push(o);
            open[k] = null;
          }
        }
        anyOpen = false;
      },
    );
    for (let k = 0; k < watched.length; k++) if (open[k]) spans.get(watched[k])!.push(open[k]!);
    const scan = { error: error !== null, spans, sought, exact, within };
    this.scans.push(scan);
    return scan;
  }
  private readonly scans: CodeSpans[] = [];
  /**
   * GPU009's `del NAME` test: some `del` statement names a name an import binds to exactly one of
   * `frameworks` (python/walker.ts `importBindings`: `import torch`, `import torch.cuda` bind
   * `torch`; `import torch as t` binds `t`; a from-import always binds a dotted path). The words
   * are those of the code as CPython's tokenizer reads them (common/src/python/lineStructure.ts `codeWords`:
   * a `del` in a string or a comment is no statement), and a statement ends with its logical
   * line. A text whose line structure CPython rejects passes (the scan stops at the error).
   */
  delOfModule(frameworks: readonly string[]): boolean {
    const names = new Set<string>();
    for (const f of frameworks) {
      if (!this.hasWord(f)) continue;
      names.add(f);
      for (const alias of aliasesOf(this.text, f)) names.add(alias);
    }
    if (names.size === 0 || !this.hasWord("del")) return false;
    const scan = this.codeSpans("del");
    if (scan.error) return true;
    return scan.spans.get("del")!.some((span) => span.words.some((w) => names.has(w)));
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
    let at = this.words.get(w);
    if (at === undefined) {
      at = this.has(w) ? this.firstIndex(w, true) : -1;
      this.words.set(w, at);
    }
    return at >= 0;
  }
}

/** Whether `text[from, to)` is of a length in `names`' range and one of `names`. */
const nameIn = (names: NameSet, text: string, from: number, to: number) =>
  to - from >= names.minLength && to - from <= names.maxLength && names.has(text.slice(from, to));

const wholeAt = (text: string, word: string, i: number) =>
  (i === 0 || !isWordCode(text.charCodeAt(i - 1))) &&
  (i + word.length >= text.length || !isWordCode(text.charCodeAt(i + word.length)));

/**
 * The code words whose logical lines one scan records for all (TextProbe.codeSpans): the words the
 * rules' triggers pass to `afterWord`, `quotedAfterWord` and `delOfModule` (GPU008's `set_device`,
 * GPU009's `del` and `pop`, GPU011's `init_process_group`). Only a grouping for speed: a word not
 * listed gets a scan of its own, with the same answers.
 */
const SPAN_WORDS = ["set_device", "del", "pop", "init_process_group"];

/** The words the same scan looks for in code words (TextProbe.codeWord): GPU010's and GPU012/013's (a grouping for speed, as SPAN_WORDS). */
const CODE_WORDS = ["DataParallel", "tensorflow", "keras"];

/**
 * The words that the triggers of the default and preview rules ask about on nearly every file
 * (TextProbe.has / hasWord): a fresh probe finds all of them in one pass over the text
 * ({@link scanWords}) instead of one `indexOf` (and, for a whole identifier, one more search) per
 * word: V8's indexOf is fast, but some 25 searches of each file for words that are mostly absent
 * cost more than one pass (on python3-torch's 1,141 files the prefilter took 225 ms warm, 130 ms
 * with the pass). Only a grouping for speed, as SPAN_WORDS: a word not listed is searched on its
 * own, with the same answers. Each is ASCII and at least 3 characters long (the pass keys on 3).
 */
export const SCANNED_WORDS: readonly string[] = [
  "environ",
  "putenv",
  "getenv",
  "torch",
  "set_device",
  "DataParallel",
  "init_process_group",
  "tensorflow",
  "keras",
  "jax_platforms",
  "jax_platform",
  "remote",
  "SLURM_",
  "OMPI_COMM_WORLD",
  "PMI_RANK",
  "Get_rank",
  "COMM_WORLD",
  "ultralytics",
  "notebook_launcher",
  "Thread",
  "CUDA_VISIBLE_DEVICES",
  "get_rank",
  "LOCAL_RANK",
  "process_index",
  "local_rank",
  "reload",
  "pop",
  "del",
  // GPU039's and GPU058's, asked of every file (python3-torch: four more searches of each of its
  // 1,141 files, about 20 ms warm, against a few ms more for the pass).
  "parallel_config",
  "ParallelConfig",
  "tensorrt_llm",
  "MEM_FRACTION",
  // Asked of nearly every file (GPU065's libraries, of each; GPU056's, GPU061's, GPU009's, and
  // GPU011's, GPU017's and GPU037's `cuda` and `device`), mostly absent from it, so that each
  // indexOf read the whole file: on python3-torch about 3,900 searches of a whole file in a
  // default run, about 40 ms, for a pass whose cost did not measurably change.
  "faster_whisper",
  "ctranslate2",
  "vllm",
  "runtime_env",
  "cuda",
  "device",
  "jax",
];
const SCANNED_INDEX = new Map(SCANNED_WORDS.map((w, k) => [w, k]));

/** {@link scanWords}'s answers, by index in SCANNED_WORDS (-1: absent). */
interface WordScan {
  first: Int32Array;
  whole: Int32Array;
}

/**
 * The words of SCANNED_WORDS by their first three characters (each of them & 127, so a position
 * holding any other character may be tried too, never missed): `TRIGRAM[key]` is 0, or 1 + the
 * index in `TRIGRAM_WORDS` of the first word with that key (`TRIGRAM_WORDS` holds them grouped by
 * key, each group ended by -1).
 */
const TRIGRAM = new Uint8Array(1 << 21);
const TRIGRAM_WORDS: number[] = [];
{
  const keyOf = (w: string) => (w.charCodeAt(0) << 14) | (w.charCodeAt(1) << 7) | w.charCodeAt(2);
  const keys = [...new Set(SCANNED_WORDS.map(keyOf))];
  for (const key of keys) {
    TRIGRAM[key] = TRIGRAM_WORDS.length + 1;
    SCANNED_WORDS.forEach((w, k) => keyOf(w) === key && TRIGRAM_WORDS.push(k));
    TRIGRAM_WORDS.push(-1);
  }
  if (TRIGRAM_WORDS.length >= 255) throw new Error("SCANNED_WORDS: too many words for TRIGRAM's one-byte entries");
}

/**
 * The first index of each of SCANNED_WORDS in `text` and its first index as a whole identifier
 * (-1: absent): the same as `text.indexOf(w)` and `wordIndex(text, w, 0)`, from one pass that
 * looks up each position's next three characters in {@link TRIGRAM} and compares only the words
 * that start with them.
 */
function scanWords(text: string): WordScan {
  const first = new Int32Array(SCANNED_WORDS.length).fill(-1);
  const whole = new Int32Array(SCANNED_WORDS.length).fill(-1);
  const n = text.length;
  let key = ((text.charCodeAt(0) & 127) << 7) | (text.charCodeAt(1) & 127);
  for (let i = 2; i < n; i++) {
    key = ((key << 7) | (text.charCodeAt(i) & 127)) & 0x1fffff;
    const at = TRIGRAM[key];
    if (at === 0) continue;
    const s = i - 2;
    for (let j = at - 1; TRIGRAM_WORDS[j] >= 0; j++) {
      const k = TRIGRAM_WORDS[j];
      if (whole[k] >= 0 || !text.startsWith(SCANNED_WORDS[k], s)) continue;
      if (first[k] < 0) first[k] = s;
      if (wholeAt(text, SCANNED_WORDS[k], s)) whole[k] = s;
    }
  }
  return { first, whole };
}

/** The rest of a logical line after a code word: `text[from, to)` and the code words in it. */
interface CodeSpan {
  from: number;
  to: number;
  words: string[];
}
/**
 * One codeWords scan: per word, the rest of each logical line it is a code word of; which `sought`
 * words are a code word (`exact`) or lie in one (`within`); `error`: the scan stopped at a
 * line-structure error.
 */
interface CodeSpans {
  error: boolean;
  spans: Map<string, CodeSpan[]>;
  sought: readonly string[];
  exact: Set<string>;
  within: Set<string>;
}

/** Index of the first whole-identifier `word` at or after `from`, or -1. */
function wordIndex(text: string, word: string, from: number): number {
  for (let i = text.indexOf(word, from); i >= 0; i = text.indexOf(word, i + 1)) if (wholeAt(text, word, i)) return i;
  return -1;
}

/** Index of the last whole-identifier `word`, or -1. */
function lastWordIndex(text: string, word: string): number {
  for (let i = text.lastIndexOf(word); i >= 0; i = i === 0 ? -1 : text.lastIndexOf(word, i - 1))
    if (wholeAt(text, word, i)) return i;
  return -1;
}

/** Whether `text[from, to)` holds a digit or a quote. */
export function digitOrQuoteIn(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 48 && c <= 57) || c === 0x22 || c === 0x27) return true;
  }
  return false;
}

/** Whether `text[from, to)` holds a quote followed by one of `modules` (TextProbe.quotedAfterWord). */
function quotedModuleIn(text: string, modules: readonly string[], from: number, to: number): boolean {
  const endsName = (c: number) => c === 0x2e || c === 0x22 || c === 0x27;
  const isQuote = (c: number) => c === 0x22 || c === 0x27;
  for (let i = from; i < to; i++) {
    if (!isQuote(text.charCodeAt(i))) continue;
    for (const m of modules) {
      if (text.startsWith(m, i + 1) && endsName(text.charCodeAt(i + 1 + m.length))) return true;
      for (let k = 1; k < m.length; k++)
        if (text.startsWith(m.slice(0, k), i + 1) && isQuote(text.charCodeAt(i + 1 + k))) return true;
    }
  }
  return false;
}

/**
 * The names `import MODULE as NAME` binds to exactly `module`: each whole-word `module` followed
 * (over blanks and `\\` line continuations) by the word `as` and an identifier.
 */
function aliasesOf(text: string, module: string): string[] {
  const out: string[] = [];
  const blanks = (i: number) => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 12) i++;
      else if (c === 92 && text.charCodeAt(i + 1) === 10) i += 2;
      else if (c === 92 && text.charCodeAt(i + 1) === 13) i += text.charCodeAt(i + 2) === 10 ? 3 : 2;
      else return i;
    }
  };
  for (let i = wordIndex(text, module, 0); i >= 0; i = wordIndex(text, module, i + 1)) {
    const as = blanks(i + module.length);
    if (!text.startsWith("as", as) || !wholeAt(text, "as", as)) continue;
    const from = blanks(as + 2);
    let to = from;
    while (to < text.length && isWordCode(text.charCodeAt(to))) to++;
    if (to > from) out.push(text.slice(from, to));
  }
  return out;
}

/** Whether `word` occurs in `text` as a whole identifier (not inside a longer one). */
export function hasWord(text: string, word: string): boolean {
  return wordIndex(text, word, 0) >= 0;
}
