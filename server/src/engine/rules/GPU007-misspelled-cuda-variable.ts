import type { PythonRule } from "../rule";
import type { NameSet } from "../textProbe";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { STARTUP_VARIABLES } from "../frameworks";
import type { Fix, Range } from "../types";
import { FOLKLORE_VARIABLES } from "./GPU016-unknown-gpu-variable";

/**
 * Device-selection variables of AMD (ROCm), Intel (Level Zero, oneAPI), Apple (PyTorch MPS) and Ray:
 * real names that are never a misspelling, and (GPU007) the names a near-miss is compared with.
 */
export const VENDOR_VARIABLES: readonly string[] = [
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
  "ZE_AFFINITY_MASK",
  "ZE_FLAT_DEVICE_HIERARCHY",
  "ZE_ENABLE_PCI_ID_DEVICE_ORDER",
  "ONEAPI_DEVICE_SELECTOR",
  "PYTORCH_ENABLE_MPS_FALLBACK",
  "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
  "PYTORCH_MPS_LOW_WATERMARK_RATIO",
  "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES",
  "RAY_EXPERIMENTAL_NOSET_ROCR_VISIBLE_DEVICES",
  "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES",
];

/** Names that are wrong but too far from the right one for the edit distance to catch (rules.md). */
export const KNOWN_WRONG_NAMES: ReadonlyMap<string, string> = new Map([
  ["CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"],
  ["CUDA_AVAILABLE_DEVICES", "CUDA_VISIBLE_DEVICES"],
  ["CUDA_DEVICES", "CUDA_VISIBLE_DEVICES"],
]);

/**
 * Real variables that sit near a startup variable or share its prefix and must never be reported:
 * read by CUDA, NCCL, ROCm, the container runtime, PyTorch, TensorFlow or JAX.
 */
export const REAL_VARIABLES: ReadonlySet<string> = new Set([
  "CUDA_HOME",
  "CUDA_PATH",
  "CUDA_ROOT",
  "CUDA_LAUNCH_BLOCKING",
  "CUDA_MODULE_LOADING",
  "CUDA_CACHE_PATH",
  "CUDA_CACHE_DISABLE",
  "CUDA_CACHE_MAXSIZE",
  "CUDA_DEVICE_MAX_CONNECTIONS",
  "CUDA_MPS_LOG_DIRECTORY",
  "CUDA_AUTO_BOOST",
  "CUDA_FORCE_PTX_JIT",
  "CUDA_DISABLE_PTX_JIT",
  "CUDA_DEVICE_WAITS_ON_EXCEPTION",
  "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
  "CUDA_COREDUMP_FILE",
  "CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING",
  "HIP_VISIBLE_DEVICES",
  "ROCR_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
  "NVIDIA_VISIBLE_DEVICES",
  "NVIDIA_DRIVER_CAPABILITIES",
  "PYTORCH_HIP_ALLOC_CONF",
  "PYTORCH_ALLOC_CONF",
  "PYTORCH_NO_CUDA_MEMORY_CACHING",
  "PYTORCH_CUDA_FUSER_DISABLE",
  "TF_XLA_FLAGS",
  "TF_CPP_MIN_LOG_LEVEL",
  "TF_GPU_THREAD_MODE",
  "TF_GPU_THREAD_COUNT",
  "TF_ENABLE_ONEDNN_OPTS",
  "TF_CUDNN_DETERMINISTIC",
  "TF_DETERMINISTIC_OPS",
  "JAX_PLATFORMS",
  "JAX_PLATFORM_NAME",
  "JAX_ENABLE_X64",
  "LOCAL_RANK",
  "RANK",
  "WORLD_SIZE",
  "LOCAL_WORLD_SIZE",
  "MASTER_ADDR",
  "MASTER_PORT",
  // Other vendors' device selection (GPU031, GPU032) and Ray's switch (GPU033): ROCm documentation
  // 'GPU isolation techniques', Intel Level Zero, PyTorch 'MPS Environment Variables', Ray 'Accelerator Support'.
  ...VENDOR_VARIABLES,
]);

/**
 * Levenshtein distance of `a` and `b` (UTF-16 code units): exact when it is at most `max`, some
 * number above `max` otherwise. Only the band of cells within `max` of the diagonal is filled (a
 * path of cost d never leaves the band of width d; a cell outside stands in as `max + 1`, which no
 * cell outside it is below), in two reused rows, and it stops once a row exceeds `max` (the
 * CLI judges thousands of names against every startup variable).
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  const n = a.length,
    m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  const band = Math.min(max, Math.max(n, m));
  const outside = band + 1;
  if (rows[0].length < m + 2) rows = [new Int32Array(m + 2), new Int32Array(m + 2)];
  let [prev, cur] = rows;
  for (let j = 0; j <= m + 1; j++) prev[j] = j <= band ? j : outside;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - band),
      hi = Math.min(m, i + band);
    cur[lo - 1] = lo === 1 ? i : outside;
    let rowMin = cur[lo - 1];
    const c = a.charCodeAt(i - 1);
    for (let j = lo; j <= hi; j++) {
      const sub = prev[j - 1] + (c === b.charCodeAt(j - 1) ? 0 : 1),
        del = prev[j] + 1,
        ins = cur[j - 1] + 1;
      const v = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (hi < m) cur[hi + 1] = outside;
    if (rowMin > max) return max + 1;
    const done = prev;
    prev = cur;
    cur = done;
  }
  return prev[m];
}
/** editDistance's two rows, grown to the longest `b` asked. */
let rows = [new Int32Array(64), new Int32Array(64)];

/**
 * The names GPU007 judges: printable ASCII without backslash or quotes. Such a name is written in
 * the source exactly as it is (no escape can produce it), which the text prefilter relies on
 * (textProbe.ts `TextProbe.writesName`). A variable name
 * with other characters is not a typing slip of a CUDA variable.
 */
const SPELLABLE = /^[\x20-\x21\x23-\x26\x28-\x5b\x5d-\x7e]+$/;

/** The startup variable a name is a misspelling of, or null (the name itself is right, real, or not close). */
export function misspellingOf(name: string): string | null {
  let hit = misspellings.get(name);
  if (hit === undefined) {
    if (misspellings.size >= MISSPELLINGS_KEPT) misspellings.clear();
    hit = computeMisspelling(name);
    misspellings.set(name, hit);
  }
  return hit;
}

/**
 * {@link misspellingOf}'s answers by name: a pure function of the name, asked again for every
 * read and write at each keystroke in the editor (edit distances to every startup variable).
 * Bounded: cleared when full.
 */
const misspellings = new Map<string, string | null>();
const MISSPELLINGS_KEPT = 10_000;

/** The shortest truncated startup-variable name reported (`CUDA_VISIBLE`, 12 characters). */
const TRUNCATED_MIN = 12;

/** Edits a misspelling may be away from a startup variable, and from a vendor variable. */
const STARTUP_EDITS = 2;
const VENDOR_EDITS = 1;

/**
 * The shortest and longest name {@link misspellingOf} can report (characters): within the edits
 * above of a startup or vendor variable, or a known wrong name. The text trigger judges only
 * candidates of these lengths ({@link MISSPELLINGS}).
 */
const MISSPELLING_LENGTHS: { readonly min: number; readonly max: number } = {
  min: Math.min(
    ...STARTUP_VARIABLES.map((v) => v.length - STARTUP_EDITS),
    ...VENDOR_VARIABLES.map((v) => v.length - VENDOR_EDITS),
    ...[...KNOWN_WRONG_NAMES.keys()].map((k) => k.length),
  ),
  max: Math.max(
    ...STARTUP_VARIABLES.map((v) => v.length + STARTUP_EDITS),
    ...VENDOR_VARIABLES.map((v) => v.length + VENDOR_EDITS),
    ...[...KNOWN_WRONG_NAMES.keys()].map((k) => k.length),
  ),
};

/**
 * The names {@link misspellingOf} reports, as the text trigger asks for them (textProbe.ts
 * `TextProbe.writesName`: every name a text writes of a length in this range is judged).
 */
export const MISSPELLINGS: NameSet = {
  minLength: MISSPELLING_LENGTHS.min,
  maxLength: MISSPELLING_LENGTHS.max,
  has: (name) => misspellingOf(name) !== null,
};

function computeMisspelling(name: string): string | null {
  if (!SPELLABLE.test(name)) return null;
  if (
    STARTUP_VARIABLES.includes(name) ||
    REAL_VARIABLES.has(name) ||
    FOLKLORE_VARIABLES.has(name) ||
    name.startsWith("NCCL_")
  )
    return null;
  const known = KNOWN_WRONG_NAMES.get(name.toUpperCase());
  if (known) return known;
  let best: string | null = null;
  let bestDistance = STARTUP_EDITS + 1;
  const upper = name.toUpperCase();
  for (const v of STARTUP_VARIABLES) {
    const d = editDistance(upper, v, STARTUP_EDITS);
    if (d < bestDistance) {
      best = v;
      bestDistance = d;
    }
  }
  // A name cut short (`CUDA_VISIBLE=0`, mmagic#1580): a strict prefix of a startup variable of at
  // least TRUNCATED_MIN characters that lacks part of its last word only (`PYTORCH_CUDA`, a build
  // script's own name for a CUDA version, lacks two; `CUDA_DEVICE`, 11 characters, is too short).
  if (!best && upper.length >= TRUNCATED_MIN)
    best =
      STARTUP_VARIABLES.find(
        (v) => v.length > upper.length && v.startsWith(upper) && !v.slice(upper.length + 1).includes("_"),
      ) ?? null;
  // Vendor names: one edit away only (other accelerators' real names sit two edits from them).
  if (!best) {
    for (const v of VENDOR_VARIABLES) if (editDistance(upper, v, VENDOR_EDITS) <= VENDOR_EDITS) return v;
  }
  return best;
}

/** GPU007: an environment variable name a typo away from a CUDA startup variable. */
export const rule: PythonRule = {
  meta: {
    code: "GPU007",
    name: "misspelled-cuda-variable",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // An environment access and a name misspellingOf reports, written whole in a string literal or a
    // keyword (TextProbe.writesName); in a notebook, a variable an IPython line writes counts too.
    trigger: (t) => t.envAccess() && t.writesName(MISSPELLINGS),
    docs: {
      what: "Finds reads and writes of environment variables whose name is within two edits of a startup variable (`CUDA_VISIBLE_DEVICE`, `PYTORCH_CUDA_ALLOC_CNOF`, `XLA_PYTHON_CLIENT_PREALLOCATE` in lower case) or is a known wrong name (`CUDA_VISIBLE_DEVICE`, `CUDA_AVAILABLE_DEVICES`, `CUDA_DEVICES`), or is a startup variable's name cut short in its last word (a strict prefix of at least 12 characters: `CUDA_VISIBLE`, `PYTORCH_CUDA_ALLOC`; not `PYTORCH_CUDA`). Names one edit away from another vendor's device variable (`ROCR_VISIBLE_DEVICE`, `ZE_AFFINITY_MASKS`, `PYTORCH_ENABLE_MPS_FALLBAK`) are reported too. Real variables near them (`CUDA_HOME`, `CUDA_PATH`, `CUDA_LAUNCH_BLOCKING`, `NCCL_*`, `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `ZE_FLAT_DEVICE_HIERARCHY`, `PYTORCH_ENABLE_MPS_FALLBACK`, `RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES`, ...) are never reported.",
      follows:
        'Every environment read and write in the file with a literal name (`os.environ[...]`, `.get`, `setdefault`, `update`, `os.getenv`, `os.putenv`), functions included, and a notebook\'s `%env` and `!export` lines. Not followed: names built at run time (`"CUDA_" + name`), and variables set in manifests or other modules; GPU055 judges the names shell scripts set the same way.',
      why: 'Environment variable names are exact and case-sensitive, and nothing warns about a name no one reads: `os.environ["CUDA_VISIBLE_DEVICE"] = "0"` simply does nothing, so the program runs on every GPU (ground-truth.md: with the variable unset, all GPUs are visible) while its author believes it is confined to one. A misspelled read returns the default, so the code takes the \'not set\' branch.',
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICE"] = "0"  # GPU007: nothing reads this name\nimport torch\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\n',
      whenNotToCare:
        "When the name is your own variable that only your code reads (rename it away from the CUDA namespace, or silence the line with `# noqa: GPU007`).",
      references: [
        "rules.md: the startup variables (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, PYTORCH_CUDA_ALLOC_CONF, XLA_*, TF_*)",
        "ground-truth.md: each case started with CUDA_VISIBLE_DEVICES unset, and both GPUs were visible",
        "CUDA C Programming Guide, CUDA Environment Variables",
      ],
    },
  },
  check(ctx) {
    const seen = new Set<string>();
    // The range is asked for only for a misspelled name: a replayed event finds its node on first use.
    const report = (
      variable: string,
      rangeOf: () => Range,
      kind: "write" | "read",
      nameNode: () => SyntaxNode | null | undefined,
    ) => {
      const right = misspellingOf(variable);
      if (!right) return;
      const range = rangeOf();
      const key = `${range.start.line}:${range.start.character}:${variable}`;
      if (seen.has(key)) return;
      seen.add(key);
      ctx.report({
        range,
        message:
          kind === "write"
            ? `"${variable}" is not a variable that CUDA or the frameworks read: did you mean ${right}? As written, the assignment has no effect${right === "CUDA_VISIBLE_DEVICES" ? " and every GPU stays visible" : ""}`
            : `"${variable}" is not a variable that CUDA or the frameworks read: did you mean ${right}? This read never sees the real setting`,
        fix: renameFix(nameNode(), variable, right),
      });
    };
    for (const w of envWritesAnywhere(ctx.model))
      report(
        w.variable,
        () => w.range,
        "write",
        () => w.nameNode,
      );
    for (const e of ctx.model.events) {
      if (e.kind === "envRead")
        report(
          e.variable,
          () => nodeRange(e.node),
          "read",
          () => e.nameNode,
        );
      else if (e.kind === "shellExport")
        report(
          e.variable,
          () => e.range,
          "write",
          () => null,
        );
    }
  },
};

/** Renames the variable inside its name string (keeping quotes and prefix) or its `update(K=...)` keyword. */
function renameFix(nameNode: SyntaxNode | null | undefined, wrong: string, right: string): Fix | undefined {
  if (!nameNode) return undefined;
  let target: SyntaxNode | null = null;
  if (nameNode.type === "identifier") target = nameNode;
  else if (nameNode.type === "string") {
    const parts = nameNode.namedChildren.filter((c) => c?.type === "string_content");
    if (parts.length === 1 && parts[0]!.text === wrong) target = parts[0]!;
  }
  if (!target) return undefined;
  return { title: `Rename to ${right}`, edits: [{ range: nodeRange(target), newText: right }], safe: false };
}
