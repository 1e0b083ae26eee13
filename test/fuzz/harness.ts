/**
 * The lint engine's fuzz harness (issue 9), shared by `npm run fuzz` (test/fuzz/fuzz.ts, 100,000+
 * cases) and the fixed-seed unit run (test/unit/server/engine/fuzz.test.ts).
 *
 * Generators: arbitrary strings (lone surrogates included), Python token and line soups, and real
 * files mutated (rule cases, rule fixtures, examples, notebooks' cells, and a Debian
 * python3-torch tree under .cache/debian/ when present): truncation, CRLF / CR / mixed line endings,
 * tabs, a BOM, non-ASCII identifiers and astral-plane characters (UTF-16 surrogate pairs), very
 * long lines, deep nesting.
 *
 * Properties, checked by {@link checkPython} and {@link checkNotebook} (each throws a
 * {@link PropertyFailure} describing the first violation):
 * - the engine never throws and no rule fails;
 * - every range (diagnostic, related information, fix edit) lies inside the document: line < line
 *   count, character ≤ that line's length in UTF-16 code units, never inside a surrogate pair;
 * - every quick fix, applied as an LSP client applies it, gives text that parses with no more
 *   syntax errors than before (and the engine's own applyEdits agrees with the LSP client);
 * - fix-all applied twice changes nothing the second time.
 * {@link checkPlanted} checks that positions count UTF-16 code units: a diagnostic's start on a
 * statement placed after arbitrary (astral-plane) characters.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { TextDocument } from "vscode-languageserver-textdocument";
import { lintPython, type LintOptions } from "../../server/src/engine/lint";
import { blankMagics, lintNotebook, type CellInput } from "../../server/src/engine/notebook";
import { fixAllNotebook, fixAllPython } from "../../server/src/engine/fixAll";
import { applyEdits } from "../../server/src/engine/fixes";
import { parsePython, syntaxErrorCount } from "../../server/src/engine/python/parser";
import type { Range, TextEdit } from "../../server/src/engine/types";

export const ROOT = join(__dirname, "..", "..");
const CASES = join(ROOT, "test", "cases");
/** The Debian python3-torch tree that scripts/debian-corpus.mjs unpacks (the version pinned in test/corpus/debian-expected.json). */
const TORCH_TREE = join(
  ROOT,
  ".cache",
  "debian",
  `python3-torch_${(JSON.parse(readFileSync(join(ROOT, "test", "corpus", "debian-expected.json"), "utf8")) as { packages: Record<string, string> }).packages["python3-torch"]}`,
);

/** A property violation, with what was checked. */
export class PropertyFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PropertyFailure";
  }
}

/** Real inputs the mutators start from. */
export interface Corpus {
  python: Array<{ name: string; text: string }>;
  notebooks: Array<{ name: string; cells: CellInput[] }>;
  /** Non-empty lines of every Python sample (for line soups). */
  lines: string[];
}

function listFiles(dir: string, ext: string, out: string[] = [], limit = Infinity): string[] {
  if (!existsSync(dir)) return out;
  for (const n of readdirSync(dir).sort()) {
    if (out.length >= limit) break;
    const p = join(dir, n);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) listFiles(p, ext, out, limit);
    else if (n.endsWith(ext) && st.size < 20_000) out.push(p);
  }
  return out;
}

function notebookCells(path: string): CellInput[] | null {
  try {
    const nb = JSON.parse(readFileSync(path, "utf8")) as {
      cells?: Array<{ cell_type?: string; source?: string | string[] }>;
    };
    return (nb.cells ?? []).map((c) => ({
      kind: c.cell_type === "code" ? "code" : "markup",
      text: Array.isArray(c.source) ? c.source.join("") : (c.source ?? ""),
    }));
  } catch {
    return null;
  }
}

/**
 * Loads the corpus: test/cases (Python files and the notebook), test/fixtures/rules,
 * examples (files and notebook), and up to `torchFiles` files of .cache/debian/python3-torch_* (a Debian
 * python3-torch tree; optional).
 */
export function loadCorpus(torchFiles = 300): Corpus {
  const pyFiles = [
    ...listFiles(CASES, ".py"),
    ...listFiles(join(ROOT, "test", "fixtures", "rules"), ".py"),
    ...listFiles(join(ROOT, "examples"), ".py"),
    ...listFiles(TORCH_TREE, ".py", [], torchFiles),
  ];
  const python = pyFiles.map((p) => ({ name: p.slice(ROOT.length - 4), text: readFileSync(p, "utf8") }));
  const notebooks: Corpus["notebooks"] = [];
  for (const p of [...listFiles(CASES, ".ipynb"), ...listFiles(join(ROOT, "examples"), ".ipynb")]) {
    const cells = notebookCells(p);
    if (cells) notebooks.push({ name: p, cells });
  }
  // Python files split into cells at blank lines make more notebooks.
  for (const f of python.slice(0, 40))
    notebooks.push({
      name: `${f.name} (as cells)`,
      cells: f.text.split(/\n\s*\n/).map((text) => ({ kind: "code", text })),
    });
  if (python.length === 0)
    python.push({
      name: "builtin",
      text: 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    });
  if (notebooks.length === 0)
    notebooks.push({
      name: "builtin",
      cells: [
        { kind: "code", text: "import torch" },
        { kind: "code", text: "%env CUDA_VISIBLE_DEVICES=1" },
      ],
    });
  const lines = [...new Set(python.flatMap((f) => f.text.split(/\r\n|\r|\n/)).filter((l) => l.trim() !== ""))].slice(
    0,
    5000,
  );
  return { python, notebooks, lines };
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/** Tokens that reach the rules: imports, CUDA calls, environment writes, magics, odd characters. */
const TOKENS = [
  "import os",
  "import torch",
  "import torch as th",
  "import tensorflow as tf",
  "import jax",
  "import cupy",
  "from os import environ",
  "from os import environ as env",
  "import os as o",
  "from torch import cuda",
  "import deepspeed",
  "import importlib",
  "import sys",
  'os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
  "os.environ['CUDA_VISIBLE_DEVICES'] = '1,1'",
  'os.environ["CUDA_VISIBLE_DEVICES"] = 0',
  'os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"',
  'os.environ.setdefault("CUDA_VISIBLE_DEVICES", "2")',
  'os.environ.update({"CUDA_VISIBLE_DEVICES": "3"})',
  'os.environ.update(CUDA_VISIBLE_DEVICES="0")',
  'os.putenv("CUDA_VISIBLE_DEVICES", "1")',
  'os.environ["CUDA_VISIBLE_DEVICE"] = "1"',
  'os.environ["NVIDIA_VISIBLE_DEVICES"] = "1"',
  'os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-1234"',
  'os.environ["CUDA_VISIBLE_DEVICES"] = ""',
  'os.environ["CUDA_VISIBLE_DEVICES"] = "-1"',
  'os.environ["CUDA_VISIBLE_DEVICES"] = f"{rank}"',
  'os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"',
  'os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"',
  'os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"',
  'os.getenv("CUDA_VISIBLE_DEVICES")',
  'os.environ.get("LOCAL_RANK", "0")',
  'int(os.environ["CUDA_VISIBLE_DEVICES"])',
  'del os.environ["CUDA_VISIBLE_DEVICES"]',
  "env = os.environ",
  'env["CUDA_VISIBLE_DEVICES"] = "1"',
  "torch.cuda.is_available()",
  "torch.cuda.init()",
  "torch.cuda.device_count()",
  "torch.cuda.set_device(0)",
  "torch.cuda.set_device(7)",
  'torch.device("cuda:3")',
  'torch.device("cuda", 1)',
  "x.cuda()",
  'x.to("cuda:1")',
  "x.to(device)",
  'device = "cuda:0"',
  'torch.zeros(1, device="cuda")',
  "torch.nn.DataParallel(model, device_ids=[0, 1])",
  "nn.DataParallel(model)",
  'torch.distributed.init_process_group("nccl")',
  "DDP(model, device_ids=[local_rank])",
  'local_rank = int(os.environ["LOCAL_RANK"])',
  'tf.config.list_physical_devices("GPU")',
  "tf.config.experimental.set_memory_growth(gpu, True)",
  "tf.test.is_gpu_available()",
  "jax.devices()",
  "jax.numpy.zeros(1)",
  "cupy.zeros(1)",
  "importlib.reload(torch)",
  'del sys.modules["torch"]',
  "torch.cuda.manual_seed(0)",
  'torch.autocast("cuda")',
  "torch.amp.GradScaler()",
  "accelerate.Accelerator()",
  "%env CUDA_VISIBLE_DEVICES=1",
  "%env CUDA_VISIBLE_DEVICES 0",
  "%set_env CUDA_VISIBLE_DEVICES=2",
  "!export CUDA_VISIBLE_DEVICES=0",
  "!CUDA_VISIBLE_DEVICES=1 python train.py",
  "%%bash",
  "%matplotlib inline",
  "!nvidia-smi",
  "# noqa",
  "# noqa: GPU001",
  "# noqa: GPU002, GPU006",
  "# expect: GPU001",
  "#",
  'if __name__ == "__main__":',
  "def main():",
  "main()",
  "def f(x):",
  "f(1)",
  "class C:",
  "lambda: torch.cuda.init()",
  "with ctx:",
  "try:",
  "except Exception:",
  "finally:",
  "else:",
  "elif x:",
  "for i in range(2):",
  "while True:",
  "match x:",
  "case 1:",
  "return",
  "pass",
  "@decorator",
  "async def g():",
  "await x",
  "global y",
  "x = 1",
  'x = y = os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ":",
  ",",
  ";",
  "=",
  ".",
  '"',
  "'",
  '"""',
  "'''",
  'f"',
  'b"',
  'r"',
  "{rank}",
  "\\",
  "+",
  "*",
  "**",
  "    ",
  "\t",
  " ",
  "\n",
  "\n",
  "\n",
  "\r\n",
  "\r",
  "\f",
  "\v",
  "😀",
  "🚀🚀",
  "é",
  "ñ",
  "变量",
  "переменная",
  "x😀",
  "\u00a0",
  "\u200b",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u0000",
  "\ud800",
  "\udc00",
  "\ud83d",
  "a".repeat(3),
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  '"PCI_BUS_ID"',
  '"0,1"',
  '"1"',
  "0",
  "7",
  "-1",
];

const token = fc.constantFrom(...TOKENS);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** Any UTF-16 string: full code points (surrogate pairs), lone surrogates, control characters. */
export const anyString = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 120 }), weight: 3 },
  {
    arbitrary: fc.string({
      unit: fc.oneof(
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
        loneSurrogate,
        fc.constantFrom("\n", "\r", "\t", " ", "(", '"', "#", ":"),
      ),
      maxLength: 120,
    }),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 80 }), weight: 1 },
);

/** Python-ish text made of tokens joined by spaces, newlines and indentation. */
const tokenSoup = fc
  .array(fc.tuple(token, fc.constantFrom("", " ", "\n", "\n    ", "\n        ", "(", ", ", "\r\n")), { maxLength: 40 })
  .map((parts) => parts.map(([t, sep]) => t + sep).join(""));

/** One mutation of a text: where (`at`, `len`: taken modulo the text's length) and what. */
export type Mutation =
  | { kind: "insert"; at: number; text: string }
  | { kind: "delete"; at: number; len: number }
  | { kind: "duplicate"; at: number; len: number }
  | { kind: "truncate"; at: number }
  | { kind: "eol"; style: "crlf" | "cr" | "mixed"; seed: number }
  | { kind: "tabs"; all: boolean; seed: number }
  | { kind: "bom" }
  | { kind: "longLine"; at: number; unit: string; /** UTF-16 length of the line, about */ count: number }
  | {
      kind: "nest";
      at: number;
      depth: number;
      style: "if" | "paren" | "bracket" | "call" | "attr" | "binop" | "not" | "ternary" | "lambda" | "unary";
    }
  | { kind: "indent"; at: number; width: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("insert" as const),
      at: fc.nat(),
      text: fc.oneof({ arbitrary: token, weight: 4 }, { arbitrary: anyString, weight: 1 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), len: fc.nat({ max: 40 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), len: fc.nat({ max: 200 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("eol" as const),
      style: fc.constantFrom("crlf" as const, "cr" as const, "mixed" as const),
      seed: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tabs" as const), all: fc.boolean(), seed: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("bom" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("longLine" as const),
      at: fc.nat(),
      unit: fc.constantFrom("a", "😀", "é", "x, ", "1 + ", "# ", "\t", 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"; '),
      count: fc.integer({ min: 100, max: 30_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("nest" as const),
      at: fc.nat(),
      depth: fc.oneof(fc.integer({ min: 2, max: 300 }), fc.integer({ min: 2, max: 12_000 })),
      style: fc.constantFrom(
        "if" as const,
        "paren" as const,
        "bracket" as const,
        "call" as const,
        "attr" as const,
        "binop" as const,
        "not" as const,
        "ternary" as const,
        "lambda" as const,
        "unary" as const,
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("indent" as const),
      at: fc.nat(),
      width: fc.integer({ min: 1, max: 12 }),
    }),
  },
);

/** Offsets of line starts (for line-based mutations). */
function lineOffsets(text: string): number[] {
  const out = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 && text.charCodeAt(i + 1) === 10) continue;
    if (c === 10 || c === 13) out.push(i + 1);
  }
  return out;
}

/** Applies one mutation (deterministic: the same mutation on the same text gives the same result). */
export function mutate(text: string, m: Mutation): string {
  const n = text.length;
  const pos = (at: number) => (n === 0 ? 0 : at % (n + 1));
  const lineStart = (at: number) => {
    const ls = lineOffsets(text);
    return ls[at % ls.length];
  };
  switch (m.kind) {
    case "insert": {
      const p = pos(m.at);
      return text.slice(0, p) + m.text + text.slice(p);
    }
    case "delete": {
      const p = pos(m.at);
      return text.slice(0, p) + text.slice(p + m.len);
    }
    case "duplicate": {
      const p = pos(m.at);
      return text.slice(0, p + m.len) + text.slice(p);
    }
    case "truncate":
      return text.slice(0, pos(m.at));
    case "eol": {
      const lines = text.split(/\r\n|\r|\n/);
      const eols = ["\n", "\r\n", "\r"];
      return lines
        .map((l, i) =>
          i === lines.length - 1
            ? l
            : l + (m.style === "crlf" ? "\r\n" : m.style === "cr" ? "\r" : eols[(m.seed + i * 7) % 3]),
        )
        .join("");
    }
    case "tabs":
      return text
        .split("\n")
        .map((l, i) => (m.all || (m.seed + i) % 3 === 0 ? l.replace(/^( {4})+/, (s) => "\t".repeat(s.length / 4)) : l))
        .join("\n");
    case "bom":
      return "\ufeff" + text;
    case "longLine": {
      const p = lineStart(m.at);
      const reps = Math.min(Math.ceil(m.count / m.unit.length), m.unit.length > 8 ? 40 : Infinity);
      return text.slice(0, p) + "x = " + m.unit.repeat(reps) + "\n" + text.slice(p);
    }
    case "nest": {
      const p = lineStart(m.at);
      const d = m.depth;
      let block: string;
      switch (m.style) {
        case "if": {
          const k = Math.min(d, 200);
          block =
            Array.from({ length: k }, (_, i) => `${" ".repeat(i)}if x:\n`).join("") +
            `${" ".repeat(k)}torch.cuda.init()\n`;
          break;
        }
        case "paren":
          block = `x = ${"(".repeat(d)}os.environ["CUDA_VISIBLE_DEVICES"]${")".repeat(d)}\n`;
          break;
        case "bracket":
          block = `x = ${"[".repeat(d)}"cuda:1"${"]".repeat(d)}\n`;
          break;
        case "call":
          block = `x = ${"f(".repeat(d)}torch.device("cuda:9")${")".repeat(d)}\n`;
          break;
        case "attr":
          block = `x = torch${".cuda".repeat(d)}.init()\n`;
          break;
        case "binop":
          block = `x = "0"${' + "0"'.repeat(d)}\n`;
          break;
        case "not":
          block = `  y,\nx = ${"not ".repeat(d)}"cuda:1"\n`;
          break;
        case "ternary":
          block = `  y,\nx = ${"a if b else ".repeat(d)}"cuda:1"\n`;
          break;
        case "lambda":
          block = `  y,\nx = ${"lambda: ".repeat(d)}"cuda:1"\n`;
          break;
        case "unary":
          block = `  y,\nx = ${"-".repeat(d)}"cuda:1"\n`;
          break;
      }
      return text.slice(0, p) + block + text.slice(p);
    }
    case "indent": {
      const p = lineStart(m.at);
      return text.slice(0, p) + " ".repeat(m.width) + text.slice(p);
    }
  }
}

/** Generators over a corpus. */
export function generators(corpus: Corpus) {
  const sample = fc.nat({ max: corpus.python.length - 1 });
  const mutated = fc
    .tuple(sample, fc.array(mutation, { minLength: 1, maxLength: 6 }))
    .map(([i, ms]) => ms.reduce(mutate, corpus.python[i].text));
  const lineSoup = fc
    .array(fc.tuple(fc.nat({ max: corpus.lines.length - 1 }), fc.nat({ max: 3 })), { minLength: 1, maxLength: 30 })
    .map((picks) => picks.map(([i, indent]) => " ".repeat(indent * 4) + corpus.lines[i].trimStart()).join("\n") + "\n");
  const python: fc.Arbitrary<string> = fc.oneof(
    { weight: 2, arbitrary: anyString },
    { weight: 3, arbitrary: tokenSoup },
    {
      weight: 2,
      arbitrary: lineSoup.chain((t) => fc.array(mutation, { maxLength: 3 }).map((ms) => ms.reduce(mutate, t))),
    },
    { weight: 6, arbitrary: mutated },
  );
  const cellText: fc.Arbitrary<string> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.nat({ max: corpus.notebooks.length - 1 }), fc.nat(), fc.array(mutation, { maxLength: 3 }))
        .map(([nb, c, ms]) => {
          const cells = corpus.notebooks[nb].cells;
          return ms.reduce(mutate, cells.length ? cells[c % cells.length].text : "");
        }),
    },
    { weight: 2, arbitrary: tokenSoup },
    { weight: 1, arbitrary: anyString },
  );
  const cell = fc.record({
    kind: fc.constantFrom<"code" | "markup">("code", "code", "code", "markup"),
    text: cellText,
  });
  const notebook: fc.Arbitrary<CellInput[]> = fc.oneof(
    { weight: 1, arbitrary: fc.array(cell, { maxLength: 8 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.nat({ max: corpus.notebooks.length - 1 }), fc.array(fc.tuple(fc.nat(), mutation), { maxLength: 4 }))
        .map(([nb, ms]) => {
          const cells = corpus.notebooks[nb].cells.map((c) => ({ ...c }));
          for (const [c, m] of ms)
            if (cells.length) {
              const k = c % cells.length;
              cells[k] = { ...cells[k], text: mutate(cells[k].text, m) };
            }
          return cells;
        }),
    },
  );
  return { python, notebook };
}

/** Lint options: machine facts (GPU017/GPU004), the torch < 2.4 pin, rule selection. */
export const lintOptions: fc.Arbitrary<LintOptions> = fc.record(
  {
    machine: fc.oneof(
      fc.constant({ gpuCount: null, uuids: [] as string[] }),
      fc.integer({ min: 0, max: 8 }).map((n) => ({
        gpuCount: n,
        uuids: Array.from({ length: n }, (_, i) => `GPU-${String(i).repeat(8)}-0000-0000-0000-000000000000`),
      })),
    ),
    torchBelow24: fc.boolean(),
    select: fc.constantFrom<string[] | undefined>(undefined, undefined, undefined, ["GPU00"], ["GPU01"]),
  },
  { requiredKeys: ["machine", "torchBelow24"] },
);

/** Text that may go inside a Python string literal on one line: no quote, backslash or line break. */
export const literalSafeString = fc
  .string({
    unit: fc.oneof(
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
      fc.constantFrom("😀", "🚀", "𝔘", "é", "变"),
    ),
    maxLength: 40,
  })
  .filter((s) => !/["\\\r\n\0]/.test(s) && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")));

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const show = (s: string) => JSON.stringify(s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);

/** LSP lines of a text: split at \r\n, \r and \n (lengths in UTF-16 code units, without the break). */
export function lspLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** Throws unless `r` lies inside `lines` and does not split a surrogate pair. */
export function assertRangeInside(r: Range, lines: string[], what: string): void {
  for (const [name, p] of [
    ["start", r.start],
    ["end", r.end],
  ] as const) {
    if (!Number.isInteger(p.line) || !Number.isInteger(p.character) || p.line < 0 || p.character < 0)
      throw new PropertyFailure(`${what}: ${name} ${JSON.stringify(p)} is not a position`);
    if (p.line >= lines.length)
      throw new PropertyFailure(`${what}: ${name} line ${p.line} ≥ line count ${lines.length}`);
    const line = lines[p.line];
    if (p.character > line.length)
      throw new PropertyFailure(
        `${what}: ${name} character ${p.character} > length ${line.length} of line ${p.line} ${show(line)}`,
      );
    const before = line.charCodeAt(p.character - 1);
    const at = line.charCodeAt(p.character);
    if (before >= 0xd800 && before <= 0xdbff && at >= 0xdc00 && at <= 0xdfff)
      throw new PropertyFailure(`${what}: ${name} ${JSON.stringify(p)} splits a surrogate pair`);
  }
  if (r.start.line > r.end.line || (r.start.line === r.end.line && r.start.character > r.end.character))
    throw new PropertyFailure(`${what}: start after end ${JSON.stringify(r)}`);
}

function errorCount(text: string): number {
  const t = parsePython(text);
  try {
    return syntaxErrorCount(t);
  } finally {
    t.delete();
  }
}

/** Applies edits as an LSP client does (vscode-languageserver-textdocument). */
export function applyLsp(text: string, edits: TextEdit[]): string {
  return TextDocument.applyEdits(TextDocument.create("file:///fuzz.py", "python", 1, text), edits);
}

/** Checks every property on one Python text; throws a {@link PropertyFailure} on the first violation. */
export function checkPython(text: string, options: LintOptions = {}): void {
  let r;
  try {
    r = lintPython(text, options);
  } catch (e) {
    throw new PropertyFailure(`lintPython threw: ${(e as Error).stack ?? String(e)}`);
  }
  r.tree?.delete();
  if (r.ruleFailures.length)
    throw new PropertyFailure(`rule failed: ${r.ruleFailures.map((f) => `${f.code}: ${f.error}`).join("\n")}`);
  const lines = lspLines(text);
  const baseErrors = errorCount(text);
  for (const d of r.diagnostics) {
    assertRangeInside(d.range, lines, `${d.code} range`);
    for (const rel of d.related ?? []) assertRangeInside(rel.range, lines, `${d.code} related range`);
    if (!d.fix) continue;
    for (const e of d.fix.edits) assertRangeInside(e.range, lines, `${d.code} fix edit`);
    let fixed: string;
    try {
      fixed = applyLsp(text, d.fix.edits);
    } catch (e) {
      throw new PropertyFailure(`${d.code} fix: the LSP client cannot apply it: ${(e as Error).message}`);
    }
    const own = applyEdits(text, d.fix.edits);
    if (own !== fixed)
      throw new PropertyFailure(
        `${d.code} fix: engine applyEdits differs from the LSP client's:\n${show(own)}\n${show(fixed)}`,
      );
    const after = errorCount(fixed);
    if (after > baseErrors)
      throw new PropertyFailure(
        `${d.code} fix "${d.fix.title}" adds syntax errors (${baseErrors} → ${after}):\n${show(fixed)}`,
      );
  }
  let once, twice;
  try {
    once = fixAllPython(text, options);
    twice = fixAllPython(once.text, options);
  } catch (e) {
    throw new PropertyFailure(`fixAllPython threw: ${(e as Error).stack ?? String(e)}`);
  }
  if (once.applied > 0 && errorCount(once.text) > baseErrors)
    throw new PropertyFailure(`fix-all adds syntax errors:\n${show(once.text)}`);
  if (twice.text !== once.text || twice.applied !== 0)
    throw new PropertyFailure(
      `fix-all is not idempotent (second run applied ${twice.applied}):\n${show(once.text)}\n→\n${show(twice.text)}`,
    );
}

/** The code cells joined and blanked as lintNotebook parses them (for syntax-error counts). */
function joinedCode(cells: CellInput[]): string {
  const parts: string[] = [];
  let line = 0;
  for (const c of cells) {
    if (c.kind !== "code") continue;
    const b = blankMagics(c.text, line);
    parts.push(b.text);
    line += lspLines(c.text).length;
  }
  return parts.join("\n");
}

/** Checks every property on one notebook; throws a {@link PropertyFailure} on the first violation. */
export function checkNotebook(cells: CellInput[], options: LintOptions = {}): void {
  let r;
  try {
    r = lintNotebook(cells, options);
  } catch (e) {
    throw new PropertyFailure(`lintNotebook threw: ${(e as Error).stack ?? String(e)}`);
  }
  if (r.ruleFailures.length)
    throw new PropertyFailure(`rule failed: ${r.ruleFailures.map((f) => `${f.code}: ${f.error}`).join("\n")}`);
  const cellLines = cells.map((c) => lspLines(c.text));
  const inCell = (cell: number, range: Range, what: string) => {
    if (!Number.isInteger(cell) || cell < 0 || cell >= cells.length)
      throw new PropertyFailure(`${what}: cell ${cell} of ${cells.length}`);
    if (cells[cell].kind !== "code") throw new PropertyFailure(`${what}: cell ${cell} is not a code cell`);
    assertRangeInside(range, cellLines[cell], `${what} (cell ${cell})`);
  };
  const baseErrors = errorCount(joinedCode(cells));
  for (const d of r.diagnostics) {
    inCell(d.cell, d.range, `${d.code} range`);
    for (const rel of d.related ?? []) inCell(rel.cell, rel.range, `${d.code} related range`);
    if (!d.fix) continue;
    const byCell = new Map<number, TextEdit[]>();
    for (const e of d.fix.edits) {
      inCell(e.cell, e.range, `${d.code} fix edit`);
      byCell.set(e.cell, [...(byCell.get(e.cell) ?? []), { range: e.range, newText: e.newText }]);
    }
    const fixed = cells.map((c) => ({ ...c }));
    try {
      for (const [cell, edits] of byCell) fixed[cell] = { ...fixed[cell], text: applyLsp(fixed[cell].text, edits) };
    } catch (e) {
      throw new PropertyFailure(`${d.code} fix: the LSP client cannot apply it: ${(e as Error).message}`);
    }
    const after = errorCount(joinedCode(fixed));
    if (after > baseErrors)
      throw new PropertyFailure(
        `${d.code} fix "${d.fix.title}" adds syntax errors (${baseErrors} → ${after}):\n${show(JSON.stringify(fixed))}`,
      );
  }
  let once, twice;
  try {
    once = fixAllNotebook(cells, options);
    twice = fixAllNotebook(once.cells, options);
  } catch (e) {
    throw new PropertyFailure(`fixAllNotebook threw: ${(e as Error).stack ?? String(e)}`);
  }
  if (once.cells.length !== cells.length || once.cells.some((c, i) => c.kind !== cells[i].kind))
    throw new PropertyFailure("fix-all changed the cells' number or kinds");
  if (twice.applied !== 0 || twice.cells.some((c, i) => c.text !== once.cells[i].text))
    throw new PropertyFailure(`notebook fix-all is not idempotent (second run applied ${twice.applied})`);
}

/**
 * UTF-16 positions: `os.environ[...] = "0"` written after `s = "<prefix>"; ` on line 3, after CUDA
 * was initialised, must be reported (GPU001) at character = the UTF-16 length of what precedes it.
 */
export function checkPlanted(prefix: string, notebook: boolean): void {
  const before = `s = "${prefix}"; `;
  const head = "import os\nimport torch\ntorch.cuda.init()\n";
  const line = `${before}os.environ["CUDA_VISIBLE_DEVICES"] = "0"`;
  let starts: Array<{ line: number; character: number }>;
  if (notebook) {
    const r = lintNotebook(
      [
        { kind: "code", text: head.trimEnd() },
        { kind: "markup", text: `# ${prefix}` },
        { kind: "code", text: `# ${prefix}\n${line}` },
      ],
      { select: ["GPU001"] },
    );
    starts = r.diagnostics.filter((d) => d.cell === 2).map((d) => d.range.start);
    if (JSON.stringify(starts) !== JSON.stringify([{ line: 1, character: before.length }]))
      throw new PropertyFailure(
        `notebook: GPU001 at ${JSON.stringify(starts)}, expected cell 2 line 1 character ${before.length} (UTF-16) after ${show(prefix)}`,
      );
  } else {
    const r = lintPython(`${head}${line}\n`, { select: ["GPU001"] });
    r.tree?.delete();
    starts = r.diagnostics.map((d) => d.range.start);
    if (JSON.stringify(starts) !== JSON.stringify([{ line: 3, character: before.length }]))
      throw new PropertyFailure(
        `GPU001 at ${JSON.stringify(starts)}, expected line 3 character ${before.length} (UTF-16) after ${show(prefix)}`,
      );
  }
}

/** One fuzz property: its name, its share of the runs, and how to check it. */
export interface FuzzProperty {
  name: string;
  share: number;
  /** Runs fast-check on the property with these parameters (numRuns, seed, path...). */
  check(params: { numRuns: number; seed: number; path?: string }): {
    failed: boolean;
    numRuns: number;
    seed: number;
    counterexamplePath: string | null;
    counterexample: unknown;
    errorInstance: unknown;
  };
}

/** The fuzz properties, each with its share of the runs. */
export function properties(corpus: Corpus): FuzzProperty[] {
  const g = generators(corpus);
  const python = fc.property(g.python, lintOptions, (t, o) => {
    checkPython(t, o);
  });
  const notebook = fc.property(g.notebook, lintOptions, (cells, o) => {
    checkNotebook(cells, o);
  });
  const planted = fc.property(literalSafeString, fc.boolean(), (p, nb) => {
    checkPlanted(p, nb);
  });
  return [
    { name: "python", share: 0.6, check: (params) => fc.check(python, params) },
    { name: "notebook", share: 0.3, check: (params) => fc.check(notebook, params) },
    { name: "utf16-positions", share: 0.1, check: (params) => fc.check(planted, params) },
  ];
}
