/**
 * What the checks before a run (client/src/run/checks.ts) need to know about a script, from the
 * engine's tree-sitter parse and module model; the language server answers `gpuPilot/runFacts`
 * with it (the result's types are common/src/run/runFacts.ts), so the client bundles no parser. No `vscode` import.
 * - reads of LOCAL_RANK / RANK / WORLD_SIZE (`envRead` events) and env:// `init_process_group`
 *   calls: the script expects a distributed launcher such as torchrun;
 * - its own writes of CUDA_VISIBLE_DEVICES (`envWrite` events), each with the engine's verdict on
 *   whether it takes effect: GPU001's finding on the write (CUDA already initialised when it runs)
 *   means it has no effect and replaces nothing.
 * The engine must be initialised (`initEngine`) first.
 */
import { pythonInput, type SyntaxNode } from "./python/parser";
import { ModuleTrees } from "./python/moduleTrees";
import { buildModel } from "./python/model";
import { DEFAULT_EAGER_INIT_MODULES } from "./frameworks";
import { reporter, type RuleContext } from "./rule";
import { rule as GPU001 } from "./rules/GPU001-env-after-cuda-init";
import type { LintDiagnostic } from "./types";
import type { RunFacts } from "../../../common/src/run/runFacts";

/** Variables only a distributed launcher (torchrun, accelerate, deepspeed) sets. */
export const DISTRIBUTED_VARIABLES: readonly string[] = ["LOCAL_RANK", "RANK", "WORLD_SIZE"];

/** Options of {@link runFacts}: the lint options that change the module model. */
export interface RunFactsOptions {
  /** Modules that initialise CUDA when imported (`gpuPilot.eagerInitModules`); default: the engine's list. */
  eagerInitModules?: readonly string[];
  /** The project pins torch < 2.4. */
  torchBelow24?: boolean;
}

/** Keywords of init_process_group that give rank/world size some other way than the environment. */
const EXPLICIT_INIT = new Set(["rank", "world_size", "init_method", "store"]);

/**
 * Parses `text` (Python source) and collects {@link RunFacts}. Broken code is fine (ERROR nodes
 * are skipped). Linear in the text (one parse, one model, GPU001's check).
 * @throws Error when the parser is not initialised (`initEngine` not awaited).
 */
export function runFacts(text: string, options: RunFactsOptions = {}): RunFacts {
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    const model = buildModel(tree, text, {
      eagerInitModules: options.eagerInitModules ?? DEFAULT_EAGER_INIT_MODULES,
      torchBelow24: options.torchBelow24 ?? false,
    });
    // The engine's verdict on each write: GPU001's findings, keyed by the write's start.
    const found: LintDiagnostic[] = [];
    const ctx: RuleContext = {
      model,
      machine: { gpuCount: null, uuids: [] },
      notebook: false,
      where: (l) => `line ${l + 1}`,
      report: reporter(GPU001, found, true),
    };
    GPU001.check(ctx);
    const noEffect = new Map(found.map((d) => [`${d.range.start.line}:${d.range.start.character}`, d.message]));

    const out: RunFacts = { distributedReads: [], envInitProcessGroup: [], visibleDevicesWrites: [] };
    const seenWrites = new Set<number>();
    for (const e of model.events) {
      if (e.kind === "envRead" && DISTRIBUTED_VARIABLES.includes(e.variable)) {
        const args = e.node.type === "call" ? (e.node.childForFieldName("arguments")?.namedChildren ?? []) : [];
        out.distributedReads.push({
          variable: e.variable,
          line: e.node.startPosition.row,
          withDefault: args.length >= 2,
          text: e.node.text,
        });
      } else if (
        e.kind === "envWrite" &&
        e.variable === "CUDA_VISIBLE_DEVICES" &&
        e.form !== "setdefault" &&
        e.statement
      ) {
        // A write in a function called twice appears twice on the timeline: report the statement once.
        if (seenWrites.has(e.statement.id)) continue;
        seenWrites.add(e.statement.id);
        out.visibleDevicesWrites.push({
          line: e.range.start.line,
          value: e.literal,
          text: e.statement.text,
          noEffect: noEffect.get(`${e.range.start.line}:${e.range.start.character}`) ?? null,
        });
      }
    }
    for (const call of tree.descendantsOfType("call")) {
      if (!call || model.resolve(call.childForFieldName("function")) !== "torch.distributed.init_process_group")
        continue;
      const keywords = (call.childForFieldName("arguments")?.namedChildren ?? [])
        .filter((a): a is SyntaxNode => a?.type === "keyword_argument")
        .map((a) => a.childForFieldName("name")?.text ?? "");
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
