/**
 * The GPU view's inventory on an AMD ROCm machine: runs `amd-smi` (metric, static and list, each
 * `--json`) or, without it, the deprecated `rocm-smi --showallinfo --json`, and parses the output
 * with common/src/amdSmi/parse.ts. No `vscode` import; processes are started by
 * nvidiaSmi.ts's runner (execa, argument arrays, timeouts, abort), whose words are rewritten to
 * name the AMD tool.
 *
 * Not read on AMD: the compute processes (the inventory's `apps` is empty) and MIG.
 */
import {
  type InventoryResult,
  type RunOptions,
  type SmiFailure,
  type SmiResult,
  describeProblem,
  runNvidiaSmi,
} from "./nvidiaSmi";
import {
  AMD_SMI_LIST_ARGS,
  AMD_SMI_METRIC_ARGS,
  AMD_SMI_STATIC_ARGS,
  ROCM_SMI_ARGS,
  parseAmdSmi,
  parseRocmSmi,
} from "../amdSmi/parse";
import type { VendorFacts } from "./vendor";

/** The AMD tool to read: vendor.ts {@link VendorFacts.amdTool}. */
export type AmdTool = NonNullable<VendorFacts["amdTool"]>;

/** A runner result with the AMD tool's name in its messages instead of nvidia-smi's. */
function renamed(r: SmiResult, tool: AmdTool): SmiResult {
  if (r.kind === "ok") return r;
  const fix = (s: string) => s.replace(/nvidia-smi/g, tool.name);
  const out = { ...r, message: fix(r.message) } as SmiFailure;
  // nvidia-smi's exit codes mean nothing for AMD's tools.
  if (out.kind === "failed")
    out.explanation = out.exitCode === null ? fix(out.explanation) : `${tool.name} exited with code ${out.exitCode}`;
  return out;
}

/**
 * Queries the GPUs with `tool`. amd-smi: `metric --json` is required (its failure is the result);
 * a failure of `static --json` or `list --json` only adds a line to `problems` (names, PCI
 * addresses and UUIDs are then missing). Output with no GPU is `garbage`. Never rejects.
 */
export async function queryAmdInventory(tool: AmdTool, options: RunOptions): Promise<InventoryResult> {
  const run = async (args: readonly string[]) => renamed(await runNvidiaSmi(tool.path, args, options), tool);
  const problems: string[] = [];
  let parsed;
  if (tool.name === "amd-smi") {
    const metric = await run(AMD_SMI_METRIC_ARGS);
    if (metric.kind !== "ok") return metric;
    const side = async (args: readonly string[], what: string): Promise<string | undefined> => {
      const r = await run(args);
      if (r.kind === "ok") return r.stdout;
      problems.push(`amd-smi ${what} unavailable: ${r.message}`);
      return undefined;
    };
    const stat = await side(AMD_SMI_STATIC_ARGS, "static");
    if (options.signal?.aborted) return { kind: "canceled", message: "amd-smi call was canceled" };
    const list = await side(AMD_SMI_LIST_ARGS, "list");
    if (options.signal?.aborted) return { kind: "canceled", message: "amd-smi call was canceled" };
    parsed = parseAmdSmi(metric.stdout, stat, list);
  } else {
    const r = await run(ROCM_SMI_ARGS);
    if (r.kind !== "ok") return r;
    parsed = parseRocmSmi(r.stdout);
  }
  if (parsed.rows.length === 0) {
    const p = parsed.problems[0];
    return {
      kind: "garbage",
      message: `${tool.name}'s GPU list could not be read: ${p?.reason ?? "no GPU"}`,
      sample: p?.text ?? "",
    };
  }
  problems.push(...parsed.problems.map((p) => describeProblem(tool.name, p)));
  return {
    kind: "ok",
    inventory: { gpus: parsed.rows, apps: [], problems, takenAt: Date.now(), mig: [], vendor: "amd" },
  };
}
