/**
 * What the run checks need to know about a script, read from the lint engine's tree-sitter parse and
 * module model (server/src/engine/python: no `vscode` import, web-tree-sitter with the wasm files
 * beside the bundle), never from regular expressions over the source:
 * - reads of LOCAL_RANK / RANK / WORLD_SIZE (`envRead` events) and env:// `init_process_group`
 *   calls: the script expects a distributed launcher such as torchrun;
 * - its own writes of CUDA_VISIBLE_DEVICES (`envWrite` events): they replace the selection;
 * The `if __name__ == "__main__":` line, where the CodeLens goes, is found by a line scan instead
 * ({@link mainGuardLine}): the lens is asked for on every edit.
 */
import { buildModel } from "../../../server/src/engine/python/model";
import { initPythonParser, parsePython, stringValue, type SyntaxNode, type SyntaxTree } from "../../../server/src/engine/python/parser";
import { logicalLines } from "../../../server/src/engine/python/lineStructure";

/** Variables only a distributed launcher (torchrun, accelerate, deepspeed) sets. */
export const DISTRIBUTED_VARIABLES: readonly string[] = ["LOCAL_RANK", "RANK", "WORLD_SIZE"];

/** A read of a launcher-set variable. `line` is 0-based. */
export interface DistributedRead {
  variable: string;
  line: number;
  /** `os.environ.get("K", default)` / `os.getenv("K", default)`: it does not fail under plain python. */
  withDefault: boolean;
  /** The expression as written, e.g. `os.environ["LOCAL_RANK"]`. */
  text: string;
}

/** A write of CUDA_VISIBLE_DEVICES by the script itself. `line` is 0-based. */
export interface VisibleDevicesWrite {
  line: number;
  /** The literal value, or null when it is computed. */
  value: string | null;
  /** The statement as written. */
  text: string;
}

/** What {@link analyzeScript} found. Lines are 0-based. */
export interface ScriptAnalysis {
  distributedReads: DistributedRead[];
  /** `init_process_group(...)` calls that take rank and world size from the environment (env://). */
  envInitProcessGroup: { line: number; text: string }[];
  /** Writes that replace the selection (not `setdefault`, which keeps a value already set). */
  visibleDevicesWrites: VisibleDevicesWrite[];
  /** The line of the module-level `if __name__ == "__main__":`, or undefined. */
  mainGuardLine?: number;
}

/** Keywords of init_process_group that give rank/world size some other way than the environment. */
const EXPLICIT_INIT = new Set(["rank", "world_size", "init_method", "store"]);

/** True when `cond` is `__name__ == "__main__"` (either side). */
function isMainCheck(cond: SyntaxNode | null): boolean {
  if (!cond || cond.type !== "comparison_operator") return false;
  const operands = cond.namedChildren.filter((c): c is SyntaxNode => !!c);
  if (operands.length !== 2) return false;
  const ops = cond.children.filter((c) => c && !c.isNamed).map((c) => c!.type);
  if (ops.length !== 1 || ops[0] !== "==") return false;
  const [a, b] = operands;
  const named = (n: SyntaxNode) => n.type === "identifier" && n.text === "__name__";
  const main = (n: SyntaxNode) => stringValue(n) === "__main__";
  return (named(a) && main(b)) || (main(a) && named(b));
}

/** The line (0-based) of the first module-level `if __name__ == "__main__":` of a parsed tree. */
export function findMainGuard(tree: SyntaxTree): number | undefined {
  for (const stmt of tree.rootNode.namedChildren) {
    if (stmt?.type === "if_statement" && isMainCheck(stmt.childForFieldName("condition"))) return stmt.startPosition.row;
  }
  return undefined;
}

/** Loads the tree-sitter runtime and grammar once (from dist/ in the bundle, node_modules from source). */
export function initAnalyzer(): Promise<void> {
  return initPythonParser();
}

/**
 * Parses `text` and collects {@link ScriptAnalysis}. Broken code is fine (ERROR nodes are skipped).
 * @param eagerInitModules passed to the model (`gpuPilot.eagerInitModules`).
 */
export async function analyzeScript(text: string, eagerInitModules: readonly string[] = []): Promise<ScriptAnalysis> {
  await initAnalyzer();
  const tree = parsePython(text);
  try {
    const model = buildModel(tree, text, { eagerInitModules, torchBelow24: false });
    const out: ScriptAnalysis = { distributedReads: [], envInitProcessGroup: [], visibleDevicesWrites: [], mainGuardLine: findMainGuard(tree) };
    const seenWrites = new Set<number>();
    for (const e of model.events) {
      if (e.kind === "envRead" && DISTRIBUTED_VARIABLES.includes(e.variable)) {
        const args = e.node.type === "call" ? e.node.childForFieldName("arguments")?.namedChildren ?? [] : [];
        out.distributedReads.push({ variable: e.variable, line: e.node.startPosition.row, withDefault: args.length >= 2, text: e.node.text });
      } else if (e.kind === "envWrite" && e.variable === "CUDA_VISIBLE_DEVICES" && e.form !== "setdefault" && e.statement) {
        // A write in a function called twice appears twice on the timeline: report the statement once.
        if (seenWrites.has(e.statement.id)) continue;
        seenWrites.add(e.statement.id);
        out.visibleDevicesWrites.push({ line: e.range.start.line, value: e.literal, text: e.statement.text });
      }
    }
    for (const call of tree.rootNode.descendantsOfType("call")) {
      if (!call || model.resolve(call.childForFieldName("function")) !== "torch.distributed.init_process_group") continue;
      const keywords = (call.childForFieldName("arguments")?.namedChildren ?? [])
        .filter((a) => a?.type === "keyword_argument")
        .map((a) => a!.childForFieldName("name")?.text ?? "");
      if (keywords.some((k) => EXPLICIT_INIT.has(k))) continue;
      out.envInitProcessGroup.push({ line: call.startPosition.row, text: call.text });
    }
    out.distributedReads.sort((a, b) => a.line - b.line);
    out.visibleDevicesWrites.sort((a, b) => a.line - b.line);
    return out;
  } finally {
    tree.delete();
  }
}

/** Texts longer than this (UTF-16 code units, 2 Mi: `gpuPilot.maxFileSizeKB`'s default) get no CodeLens. */
export const MAIN_GUARD_MAX_CHARS = 2 * 1024 * 1024;

/** `if __name__ == "__main__":` (either side, either quote, optional parentheses) at the start of a logical line. */
const MAIN_GUARD = /^if[ \t]*\(?[ \t]*(?:__name__[ \t]*==[ \t]*(["'])__main__\1|(["'])__main__\2[ \t]*==[ \t]*__name__)[ \t]*\)?[ \t]*:/;

/**
 * The 0-based line of the first module-level `if __name__ == "__main__":` in `text`, or undefined;
 * for the CodeLens, which VS Code asks for on every edit in the extension host. No parse (issue 18
 * item 4: it parsed the whole file there, with no size limit): a line scan over the logical lines
 * at column 0 (engine/python/lineStructure.ts skips lines inside strings and brackets and
 * continued lines), and nothing for a text over {@link MAIN_GUARD_MAX_CHARS}. Linear in the text.
 */
export async function mainGuardLine(text: string): Promise<number | undefined> {
  if (text.length > MAIN_GUARD_MAX_CHARS) return undefined;
  let found: number | undefined;
  logicalLines(text, (line, offset, col) => {
    if (found !== undefined || col !== 0 || text.charCodeAt(offset) !== 105 /* i */) return;
    const end = text.indexOf("\n", offset);
    if (MAIN_GUARD.test(text.slice(offset, end < 0 ? text.length : end))) found = line;
  });
  return found;
}
