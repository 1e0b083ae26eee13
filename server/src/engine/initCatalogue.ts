/**
 * The catalogue of libraries that initialise CUDA when imported (or through named functions), as
 * data with provenance: initCatalogue.json, validated here when the engine loads (a malformed entry
 * throws at load: the build's tests catch it before a user does). docs/init-catalogue.md lists the
 * entries and says how to add one; scripts/scan-init-at-import.mjs proposes entries from a library's
 * source.
 *
 * Each fact is either measured on a GPU machine (a row of verify/results-frameworks-*.json, written
 * by verify/frameworks/probe.py) or read in the library's source at a named commit, file and line.
 */
import catalogueJson from "./initCatalogue.json";
import type { Framework, InitDepth } from "./frameworks";

/** Measured on a GPU machine: the row of verify/results-frameworks-*.json (`FILE#group|case`). */
export interface MeasuredProvenance {
  kind: "measured";
  /** `verify/results-frameworks-h200.json#import-freeze|import torch_geometric`. */
  row: string;
  /** The library version installed when measured (the row's `version`). */
  library_version: string;
  /** The torch version of the measurement (`environment.torch`). */
  torch: string;
  /** The NVIDIA driver version of the measurement (`environment.nvidia_smi`). */
  driver: string;
}

/** Read in the library's source: the line that initialises (or the evidence that nothing does). */
export interface ReadProvenance {
  kind: "read";
  /** GitHub `owner/name`. */
  repo: string;
  /** The commit read: 40 hex digits. */
  commit: string;
  /** File path inside the repository. */
  path: string;
  /** 1-based line of {@link quote} in `path` at `commit`. */
  line: number;
  /** That line, trimmed. */
  quote: string;
  /** What was checked besides the line (tags, `git log -S`), in one sentence. */
  checked?: string;
}

/**
 * Reported, neither measured nor read to the line: a public user report (or the contract's default
 * list, ../shared/spec/rules.md) says the import initialises CUDA. Such an entry keeps a library
 * in the default eager list until a measurement confirms or refutes it, also where a
 * reading of newer versions found no initialising call (that reading is kept as its own entry).
 */
export interface ReportedProvenance {
  kind: "reported";
  /** The report's URL, or `spec/rules.md` for the contract's default list. */
  source: string;
  /** The report's date, `YYYY-MM-DD`, when `source` is a report. */
  date?: string;
  /** What was reported, in our words, and what a reading found against it. */
  summary: string;
}

export type Provenance = MeasuredProvenance | ReadProvenance | ReportedProvenance;

/** One catalogue fact about one library over a version range. A library may have several entries. */
export interface CatalogueEntry {
  /** Top-level import name (`flash_attn`). */
  library: string;
  /** PyPI distribution name (`flash-attn`): the name looked up in the project's dependency pins. */
  package: string;
  /** PEP 440 specifier set the fact holds for (`>=0.7,<0.8`); `*` only where read across versions. */
  versions: string;
  /**
   * `"import"`: importing the library initialises CUDA; a list: the dotted callables that do
   * (`deepspeed.init_distributed`), the import itself not; `[]`: neither the import nor a known
   * callable initialises (kept, with its provenance, so that the library counts as catalogued).
   */
  initialises: "import" | string[];
  /** How deep the initialisation goes (frameworks.ts InitDepth); absent only when `initialises` is `[]`. */
  depth?: InitDepth;
  /** The framework whose runtime is initialised; default `torch`. */
  framework?: Framework;
  /**
   * The import initialises only by importing this other catalogued library (its import name:
   * `bitsandbytes`), which the library imports only where that one is installed (peft before
   * 0.7.1). Such an entry applies only where the project pins both: this library within
   * `versions`, and that one at a version whose entries initialise at import ({@link
   * applicableEntries}); elsewhere the library is not settled ({@link throughPending}). Only with
   * `initialises: "import"`.
   */
  through?: string;
  provenance: Provenance;
  /** One line on what initialises (shown in docs, not in messages). */
  note?: string;
}

/** A catalogue entry that fails {@link validateEntry}: the entry's index and library, and why. */
export class CatalogueError extends Error {}

const DEPTHS: readonly InitDepth[] = ["nvml", "driver", "context", "alloc"];
const FRAMEWORKS: readonly Framework[] = ["torch", "jax", "tensorflow", "cupy", "numba", "paddle", "mxnet"];
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * A PEP 440 release version (`2.8.0.post1`, `0.7`, `1.0rc1`) as its numeric release segments; the
 * pre/post/dev/local suffixes are dropped (ranges here are written on releases). Null when `v` does
 * not start with a release number.
 */
export function releaseOf(v: string): number[] | null {
  const m = /^\s*v?(\d+(?:\.\d+)*)/.exec(v);
  return m ? m[1].split(".").map(Number) : null;
}

/** -1, 0, 1: `a` before, equal to, after `b` (missing segments count as 0: 0.7 == 0.7.0). */
export function compareRelease(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** One end of a version interval. */
interface Bound {
  v: number[];
  inclusive: boolean;
}
/** The versions a specifier set admits, as one interval (`!=` clauses are ignored: they only punch holes). */
export interface VersionInterval {
  lo: Bound | null;
  hi: Bound | null;
}

/**
 * The interval of a PEP 440 specifier set (`>=0.7,<0.8`, `==2.8.*`, `~=1.4.2`, `*` or empty: all
 * versions). Clauses: `==`, `===`, `>=`, `>`, `<=`, `<`, `~=`, `!=` (PEP 440, "Version specifiers").
 * @throws CatalogueError on a clause it cannot read.
 */
export function intervalOf(spec: string): VersionInterval {
  const out: VersionInterval = { lo: null, hi: null };
  const raise = (b: Bound) => {
    if (!out.lo || compareRelease(b.v, out.lo.v) > 0 || (compareRelease(b.v, out.lo.v) === 0 && !b.inclusive))
      out.lo = b;
  };
  const lower = (b: Bound) => {
    if (!out.hi || compareRelease(b.v, out.hi.v) < 0 || (compareRelease(b.v, out.hi.v) === 0 && !b.inclusive))
      out.hi = b;
  };
  const s = spec.trim();
  if (s === "" || s === "*") return out;
  for (const raw of s.split(",")) {
    const m = /^\s*(===|==|>=|<=|~=|!=|>|<)\s*([0-9][0-9A-Za-z.+!*-]*)\s*$/.exec(raw);
    if (!m) throw new CatalogueError(`cannot read the version clause "${raw.trim()}" of "${spec}"`);
    const [, op, ver] = m;
    const wildcard = ver.endsWith(".*");
    const v = releaseOf(wildcard ? ver.slice(0, -2) : ver);
    if (!v || (ver.includes("*") && !wildcard))
      throw new CatalogueError(`cannot read the version "${ver}" of "${spec}"`);
    if (op === "!=") continue;
    if ((op === "==" || op === "===") && wildcard) {
      raise({ v, inclusive: true });
      lower({ v: [...v.slice(0, -1), v[v.length - 1] + 1], inclusive: false });
    } else if (op === "==" || op === "===") {
      raise({ v, inclusive: true });
      lower({ v, inclusive: true });
    } else if (wildcard) throw new CatalogueError(`a wildcard goes only with == (${raw.trim()})`);
    else if (op === ">=") raise({ v, inclusive: true });
    else if (op === ">") raise({ v, inclusive: false });
    else if (op === "<=") lower({ v, inclusive: true });
    else if (op === "<") lower({ v, inclusive: false });
    else {
      // ~=X.Y.Z: >=X.Y.Z, ==X.Y.*
      if (v.length < 2) throw new CatalogueError(`~= needs two release segments (${raw.trim()})`);
      raise({ v, inclusive: true });
      const prefix = v.slice(0, -1);
      lower({ v: [...prefix.slice(0, -1), prefix[prefix.length - 1] + 1], inclusive: false });
    }
  }
  return out;
}

/** Whether two specifier sets admit a common version (their intervals overlap). */
export function rangesOverlap(a: string, b: string): boolean {
  const x = intervalOf(a),
    y = intervalOf(b);
  const lo = !x.lo
    ? y.lo
    : !y.lo
      ? x.lo
      : compareRelease(x.lo.v, y.lo.v) > 0 || (compareRelease(x.lo.v, y.lo.v) === 0 && !x.lo.inclusive)
        ? x.lo
        : y.lo;
  const hi = !x.hi
    ? y.hi
    : !y.hi
      ? x.hi
      : compareRelease(x.hi.v, y.hi.v) < 0 || (compareRelease(x.hi.v, y.hi.v) === 0 && !x.hi.inclusive)
        ? x.hi
        : y.hi;
  if (!lo || !hi) return true;
  const c = compareRelease(lo.v, hi.v);
  return c < 0 || (c === 0 && lo.inclusive && hi.inclusive);
}

/**
 * Checks one entry's shape: names, a readable `versions`, `initialises`, a depth where something
 * initialises, and a complete provenance (measured: row and versions; read: repo, 40-hex commit,
 * path, line >= 1, quote).
 * @throws CatalogueError naming the entry and the field.
 */
export function validateEntry(e: unknown, index: number): CatalogueEntry {
  const o = (e ?? {}) as Record<string, unknown>;
  const who = `initCatalogue entry ${index} (${typeof o.library === "string" ? o.library : "?"})`;
  const fail = (why: string): never => {
    throw new CatalogueError(`${who}: ${why}`);
  };
  const str = (v: unknown, name: string): string =>
    typeof v === "string" && v.trim() !== "" ? v : fail(`${name} must be a non-empty string`);
  if (!IDENT.test(str(o.library, "library"))) fail("library must be a dotted import name");
  str(o.package, "package");
  try {
    intervalOf(str(o.versions, "versions"));
  } catch (err) {
    fail(`versions: ${(err as Error).message}`);
  }
  const init = o.initialises;
  if (
    init !== "import" &&
    !(
      Array.isArray(init) &&
      init.every((n) => typeof n === "string" && IDENT.test(n) && n.split(".")[0] === String(o.library).split(".")[0])
    )
  ) {
    fail('initialises must be "import" or a list of dotted callables under the library');
  }
  const initialisesSomething = init === "import" || (init as string[]).length > 0;
  if (initialisesSomething && !DEPTHS.includes(o.depth as InitDepth)) fail(`depth must be one of ${DEPTHS.join(", ")}`);
  if (!initialisesSomething && o.depth !== undefined) fail("depth is only for an entry that initialises");
  if (o.framework !== undefined && !FRAMEWORKS.includes(o.framework as Framework))
    fail(`framework must be one of ${FRAMEWORKS.join(", ")}`);
  if (o.through !== undefined && (init !== "import" || typeof o.through !== "string" || !IDENT.test(o.through)))
    fail('through must be an import name, and only with initialises "import"');
  const p = (o.provenance ?? null) as Record<string, unknown> | null;
  if (!p || typeof p !== "object") fail("provenance is missing");
  if (p!.kind === "measured") {
    if (!/^verify\/results-frameworks-[^#]+\.json#[^|]+\|.+$/.test(str(p!.row, "provenance.row")))
      fail("provenance.row must be verify/results-frameworks-*.json#group|case");
    str(p!.library_version, "provenance.library_version");
    str(p!.torch, "provenance.torch");
    str(p!.driver, "provenance.driver");
  } else if (p!.kind === "read") {
    if (!/^[\w.-]+\/[\w.-]+$/.test(str(p!.repo, "provenance.repo"))) fail("provenance.repo must be owner/name");
    if (!/^[0-9a-f]{40}$/.test(str(p!.commit, "provenance.commit"))) fail("provenance.commit must be 40 hex digits");
    str(p!.path, "provenance.path");
    str(p!.quote, "provenance.quote");
    if (!Number.isInteger(p!.line) || (p!.line as number) < 1) fail("provenance.line must be a line number");
  } else if (p!.kind === "reported") {
    str(p!.source, "provenance.source");
    str(p!.summary, "provenance.summary");
    if (p!.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(p!.date)))
      fail("provenance.date must be YYYY-MM-DD");
  } else fail('provenance.kind must be "measured", "read" or "reported"');
  return o as unknown as CatalogueEntry;
}

/** Validates every entry of a catalogue document (`{ entries: [...] }`). @throws CatalogueError */
export function loadCatalogue(doc: unknown): readonly CatalogueEntry[] {
  const entries = (doc as { entries?: unknown })?.entries;
  if (!Array.isArray(entries)) throw new CatalogueError("initCatalogue: `entries` must be a list");
  return entries.map(validateEntry);
}

/** The catalogue shipped with the engine (initCatalogue.json), validated at load. */
export const INIT_CATALOGUE: readonly CatalogueEntry[] = loadCatalogue(catalogueJson);

/** The entries that apply to a project that pins none of the catalogued libraries. */
export const APPLICABLE_UNPINNED: readonly CatalogueEntry[] = applicableEntries({});

/** The project's pinned specifier per PyPI package (lower-case, `_` → `-`), e.g. `{ kornia: "==0.6.12" }`. */
export type LibraryPins = Readonly<Record<string, string>>;

/** PyPI names compare case-insensitively with `_`, `.` and `-` alike (PEP 503 normalisation). */
export function normalisePackage(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/**
 * Whether every version `later` admits comes after every version `earlier` admits (`>=0.0.23` after
 * `>=0.0.20,<0.0.23`): `earlier` describes releases an unpinned install no longer gets.
 */
export function whollyAfter(later: string, earlier: string): boolean {
  const lo = intervalOf(later).lo,
    hi = intervalOf(earlier).hi;
  if (!lo || !hi) return false;
  const c = compareRelease(lo.v, hi.v);
  return c > 0 || (c === 0 && !(lo.inclusive && hi.inclusive));
}

/**
 * The entries that apply to a project with `pins`: an entry whose `versions` admit no version the
 * library's pin admits is skipped. For a library the project does not pin (or pins unreadably),
 * every entry applies except one that another entry of the same library wholly follows
 * ({@link whollyAfter}: the install gets the newer releases).
 */
export function applicableEntries(
  pins: LibraryPins = {},
  catalogue: readonly CatalogueEntry[] = INIT_CATALOGUE,
): CatalogueEntry[] {
  const pending = new Set(throughPending(pins, catalogue));
  return catalogue.filter((e) => versionApplies(e, pins, catalogue) && !pending.has(e));
}

/** Whether `e`'s versions apply to the project's pin of its package (unpinned: unless a later entry wholly follows it). */
function versionApplies(e: CatalogueEntry, pins: LibraryPins, catalogue: readonly CatalogueEntry[]): boolean {
  const pin = pins[normalisePackage(e.package)];
  if (pin) {
    try {
      return rangesOverlap(e.versions, pin);
    } catch {
      /* unreadable pin: as unpinned */
    }
  }
  return !catalogue.some((f) => f !== e && f.library === e.library && whollyAfter(f.versions, e.versions));
}

/**
 * The entries with `through` (CatalogueEntry.through) whose versions apply to the project but whose
 * condition the pins do not settle: the library itself is not pinned (an unpinned install could be
 * any release), or the library it imports is not pinned (it may not be installed) or is pinned at
 * versions whose entries do not initialise at import. Such a library is neither initialising nor
 * known not to ({@link isCatalogued} is false: GPU002 names it, with {@link throughNote}).
 */
export function throughPending(
  pins: LibraryPins = {},
  catalogue: readonly CatalogueEntry[] = INIT_CATALOGUE,
): CatalogueEntry[] {
  const direct = catalogue.filter((e) => !e.through && versionApplies(e, pins, catalogue));
  const eager = new Set(eagerModulesOf(direct));
  return catalogue.filter((e) => {
    if (!e.through || !versionApplies(e, pins, catalogue)) return false;
    const via = catalogue.find((f) => f.library === e.through);
    const settled =
      !!pins[normalisePackage(e.package)] && !!via && !!pins[normalisePackage(via.package)] && eager.has(e.through);
    return !settled;
  });
}

/** The import names whose import initialises CUDA, per the applicable entries (first-seen order). */
export function eagerModulesOf(entries: readonly CatalogueEntry[]): string[] {
  return [...new Set(entries.filter((e) => e.initialises === "import").map((e) => e.library))];
}

/**
 * The eager-init modules for a project's library pins (normalised package name → specifier), or
 * undefined when none of them pins a catalogued package (the engine's default list,
 * frameworks.ts `DEFAULT_EAGER_INIT_MODULES`, applies).
 */
export function catalogueEagerOf(pins: Readonly<Record<string, string>>): string[] | undefined {
  if (!INIT_CATALOGUE.some((e) => pins[normalisePackage(e.package)])) return undefined;
  return eagerModulesOf(applicableEntries(pins));
}

/** Where a fact was read or measured, briefly, for a message: `read in kornia/kornia kornia/x.py:12` or `measured: torch_geometric 2.8.0.post1, torch 2.11.0+cu130`. */
export function provenanceBrief(e: CatalogueEntry): string {
  const p = e.provenance;
  if (p.kind === "reported") return `reported in ${p.source}; not measured yet`;
  return p.kind === "read"
    ? `read in ${p.repo} ${p.path}:${p.line}`
    : `measured with ${e.library} ${p.library_version}, torch ${p.torch}`;
}

/**
 * The catalogue's words on an initialising import of `library`, for GPU001: `deepspeed >=0.14.1
 * initialises CUDA when imported (read in microsoft/DeepSpeed accelerator/real_accelerator.py:186)`;
 * null when no entry of `entries` (default: those of an unpinned project) says the import initialises.
 */
export function importInitNote(
  library: string,
  entries: readonly CatalogueEntry[] = APPLICABLE_UNPINNED,
): string | null {
  const e = entries.find((x) => x.library === library && x.initialises === "import");
  if (!e) return null;
  const range = `${e.library}${e.versions === "*" ? "" : ` ${e.versions}`}`;
  if (e.through) {
    const via = importInitNote(e.through, entries) ?? importInitNote(e.through);
    return `${range} imports ${e.through} at import (${provenanceBrief(e)})${via ? `, and ${via}` : ""}`;
  }
  return `${range} initialises CUDA when imported (${provenanceBrief(e)})`;
}

/**
 * The entry that says `library`'s import initialises for a project that pins the library (or, for
 * an entry with `through`, the library it imports): where the pins select an entry other than an
 * unpinned project's, its depth and words are the ones to use. Null when `pins` names neither.
 */
export function pinnedImportEntry(library: string, pins: LibraryPins): CatalogueEntry | null {
  const own = INIT_CATALOGUE.filter((e) => e.library === library);
  const named = own.some((e) => pins[normalisePackage(e.package)] || (e.through && pinOf(e.through, pins)));
  if (!named) return null;
  return settledFor(pins).applicable.find((e) => e.library === library && e.initialises === "import") ?? null;
}

/** The project's pin of the package of the catalogued library `library`, or undefined. */
function pinOf(library: string, pins: LibraryPins): string | undefined {
  const e = INIT_CATALOGUE.find((x) => x.library === library);
  return e ? pins[normalisePackage(e.package)] : undefined;
}

/** Whether the dotted import path `modulePath` is `library` or inside it. */
function within(modulePath: string, library: string): boolean {
  return modulePath === library || modulePath.startsWith(library + ".");
}

/**
 * Whether `modulePath` (an import's dotted path) is a library the catalogue settles for a project
 * with `pins`, whatever it says: an entry applies to the pinned version ({@link applicableEntries};
 * unpinned, the entries an unpinned install gets), and no entry with `through` leaves it open
 * ({@link throughPending}: peft imports bitsandbytes where it is installed).
 */
export function isCatalogued(modulePath: string, pins: LibraryPins = {}): boolean {
  const { pending, applicable } = settledFor(pins);
  if (pending.some((e) => within(modulePath, e.library))) return false;
  return applicable.some((e) => within(modulePath, e.library));
}

/** {@link throughPending} and {@link applicableEntries} of the shipped catalogue, per set of pins (a project has one). */
const SETTLED = new Map<string, { pending: CatalogueEntry[]; applicable: CatalogueEntry[] }>();
function settledFor(pins: LibraryPins): { pending: CatalogueEntry[]; applicable: CatalogueEntry[] } {
  const key = JSON.stringify(Object.entries(pins).sort());
  let got = SETTLED.get(key);
  if (!got) {
    if (SETTLED.size > 64) SETTLED.clear();
    got = { pending: throughPending(pins), applicable: applicableEntries(pins) };
    SETTLED.set(key, got);
  }
  return got;
}

/** `bitsandbytes >=0.36.0`: the library with the lowest version from which its entries say its import initialises (all versions: the name alone). */
function initialisingFrom(library: string): string {
  let lo: { v: number[]; text: string } | null = null;
  for (const f of INIT_CATALOGUE) {
    if (f.library !== library || f.initialises !== "import") continue;
    const b = intervalOf(f.versions).lo;
    if (!b) return library;
    if (!lo || compareRelease(b.v, lo.v) < 0) lo = { v: b.v, text: b.v.join(".") };
  }
  return lo ? `${library} >=${lo.text}` : library;
}

/**
 * What the catalogue knows of a library that {@link isCatalogued} leaves open through an entry with
 * `through`, for GPU002: `peft >=0.20.0 imports bitsandbytes where it is installed (read in
 * huggingface/peft src/peft/helpers.py:27), and importing bitsandbytes initialises CUDA`; null
 * when no such entry applies.
 */
export function throughNote(modulePath: string, pins: LibraryPins = {}): string | null {
  const e = settledFor(pins).pending.find((x) => within(modulePath, x.library));
  if (!e) return null;
  const range = `${e.library}${e.versions === "*" ? "" : ` ${e.versions}`}`;
  const unpinned = [e.package, INIT_CATALOGUE.find((x) => x.library === e.through)?.package ?? e.through!].filter(
    (p) => !pins[normalisePackage(p)],
  );
  const settle = unpinned.length ? `; pinning ${unpinned.join(" and ")} settles it` : "";
  return `${range} imports ${e.through} where it is installed (${provenanceBrief(e)}), and importing ${initialisingFrom(e.through!)} initialises CUDA${settle}`;
}

/**
 * The whole catalogue in one sentence, for the rule documentation that users have (docs/rules,
 * hovers): which libraries initialise CUDA when imported, which through named calls, and which were
 * checked and do not, each with its version range (`deepspeed >=0.14.1`). Messages point here, never
 * to docs/init-catalogue.md, which only the repository holds.
 */
export function catalogueSummary(entries: readonly CatalogueEntry[] = INIT_CATALOGUE): string {
  const name = (e: CatalogueEntry) => `\`${e.library}\`${e.versions === "*" ? "" : ` ${e.versions}`}`;
  const list = (xs: string[]) => [...new Set(xs)].join(", ");
  const atImport = entries.filter((e) => e.initialises === "import" && !e.through).map(name);
  const through = entries.filter((e) => e.through).map((e) => `${name(e)} (imports \`${e.through}\` where installed)`);
  const calls = entries.flatMap((e) =>
    Array.isArray(e.initialises) && e.initialises.length
      ? [`\`${e.initialises[0]}()\`${e.versions === "*" ? "" : ` (${e.library} ${e.versions})`}`]
      : [],
  );
  const none = entries.filter((e) => Array.isArray(e.initialises) && !e.initialises.length).map(name);
  return (
    "GPU Pilot's init catalogue (each entry measured on a GPU machine, read in the library's source at a named commit and line, or, until measured, reported by users): " +
    `importing ${list(atImport)} initialises CUDA; ` +
    (through.length ? `importing ${list(through)} initialises it where the project pins both; ` : "") +
    `calling ${list(calls)} initialises it; ` +
    `importing ${list(none)} does not`
  );
}
