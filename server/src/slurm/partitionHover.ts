/**
 * The partition hover of job scripts: hovering `#SBATCH --partition=<name>` (or `-p
 * <name>`) shows that partition's total and free GPUs, as `sinfo` reports them now.
 *
 * sinfo is run with an argument array through execa (`sinfo -N -h -O <SINFO_NODE_FORMAT>
 * --partition=<name>`), with a timeout, and its answer (or failure) is kept for at most 30 s per
 * partition list, so hovering never loads the controller more than once per partition in that
 * time (Slurm Dashboard polls squeue every 300 s for the same reason). A missing, slow or failing
 * sinfo gives a calm one-line message in the hover, never an error pop-up.
 *
 * Facts about sinfo (Slurm 22.05.8, measured; test/fixtures/slurm/partition-hover/measured.md): an
 * unknown partition prints nothing and exits 0; with no controller it retries for about 9 s, then
 * prints `Unable to contact slurm controller` and exits 1; with a missing slurm.conf it retries for
 * up to 60 s.
 * No `vscode` import.
 */
import type { Position, Range } from "../engine/types";
import { SourceText } from "../engine/manifests/source";
import { jobScriptFacts } from "../engine/manifests/jobscript";
import { parseSinfoNodes, partitionGpus, SINFO_NODE_FORMAT, type PartitionGpus } from "../../../common/src/slurm/parse";

/** How long an answer of sinfo is reused, ms (at most every 30 s). */
export const SINFO_CACHE_MS = 30_000;
/** How long sinfo may take before the hover gives up, ms (sinfo retries for about 9 s without a controller). */
export const SINFO_TIMEOUT_MS = 4_000;

/** The partition option under the cursor: its names (`gpu,debug` gives two) and the option's range. */
export interface PartitionAt {
  names: string[];
  range: Range;
}

const within = (p: Position, r: Range) =>
  (p.line > r.start.line || (p.line === r.start.line && p.character >= r.start.character)) &&
  (p.line < r.end.line || (p.line === r.end.line && p.character <= r.end.character));

/**
 * The `--partition` / `-p` option of an `#SBATCH` line at `position` in a job script's text, or
 * null. Directives after the first command (which sbatch ignores) count too: the hover still says
 * what the partition has.
 */
export function partitionAt(text: string, position: Position): PartitionAt | null {
  if (!text.includes("#SBATCH")) return null;
  const facts = jobScriptFacts(new SourceText(text));
  for (const d of [...facts.directives, ...facts.ignoredDirectives]) {
    if (d.line !== position.line) continue;
    for (const o of d.options) {
      if (o.name !== "partition" || !o.value || !within(position, o.range)) continue;
      const names = o.value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      return names.length ? { names, range: o.range } : null;
    }
  }
  return null;
}

/** What running sinfo gave: its output, or why there is none (a phrase for the hover). */
export type SinfoAnswer = { ok: true; stdout: string } | { ok: false; reason: string };

/** Runs sinfo with `args`; never throws. */
export type SinfoRunner = (args: readonly string[], timeoutMs: number) => Promise<SinfoAnswer>;

type ExecaModule = typeof import("execa", { with: { "resolution-mode": "import" } });
let execaModule: Promise<ExecaModule> | undefined;

/**
 * The real runner: `sinfo` found on PATH, started by execa with an argument array (no shell), stdin
 * closed, killed at the timeout. ENOENT, a timeout and a non-zero exit become reasons in words.
 */
export const runSinfo: SinfoRunner = async (args, timeoutMs) => {
  execaModule ??= import("execa");
  const { execa } = await execaModule;
  try {
    const r = await execa("sinfo", [...args], {
      timeout: timeoutMs,
      reject: false,
      stdin: "ignore",
      stripFinalNewline: false,
    });
    if (r.timedOut) return { ok: false, reason: `sinfo did not answer within ${timeoutMs / 1000} s` };
    const code = (r as { code?: string }).code;
    if (code === "ENOENT" || (r.failed && r.exitCode === undefined && /ENOENT/.test(String(r.message))))
      return { ok: false, reason: "sinfo is not on PATH (no Slurm client commands on this machine)" };
    if (r.exitCode !== 0) {
      const first = String(r.stderr ?? "")
        .split("\n")
        .map((l) => l.trim())
        .find(Boolean);
      return { ok: false, reason: `sinfo failed (exit ${r.exitCode ?? "?"})${first ? `: ${first}` : ""}` };
    }
    return { ok: true, stdout: String(r.stdout ?? "") };
  } catch (e) {
    return { ok: false, reason: `sinfo could not be run: ${(e as Error).message}` };
  }
};

/** The GPUs of the asked partitions, or why they are unknown. */
export type PartitionAnswer =
  { ok: true; partitions: PartitionGpus[]; at: number } | { ok: false; reason: string; at: number };

/**
 * sinfo answers per partition list, kept {@link SINFO_CACHE_MS}; concurrent hovers of the same list
 * share one sinfo run.
 */
export class PartitionGpuCache {
  private readonly entries = new Map<string, { at: number; answer: Promise<PartitionAnswer> }>();

  /**
   * @param run the sinfo runner ({@link runSinfo} in the server; a fake in tests).
   * @param now the clock, ms.
   */
  constructor(
    private readonly run: SinfoRunner = runSinfo,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = SINFO_CACHE_MS,
    private readonly timeoutMs = SINFO_TIMEOUT_MS,
  ) {}

  /** The GPUs of `names` (from cache when younger than the TTL). Never throws. */
  gpus(names: readonly string[]): Promise<PartitionAnswer> {
    const key = names.join(",");
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.answer;
    const answer = this.run(["-N", "-h", "-O", SINFO_NODE_FORMAT, `--partition=${key}`], this.timeoutMs).then(
      (r): PartitionAnswer => {
        const at = this.now(); // when sinfo answered: the age the hover shows
        if (!r.ok) return { ok: false, reason: r.reason, at };
        try {
          return { ok: true, partitions: partitionGpus(parseSinfoNodes(r.stdout)), at };
        } catch (e) {
          return { ok: false, reason: `sinfo's output was not understood: ${(e as Error).message}`, at };
        }
      },
    );
    this.entries.set(key, { at: t, answer });
    return answer;
  }
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

/**
 * The hover's Markdown for one answer: per partition its GPUs (total, free, in use, on how many
 * nodes, GPU types), a line for a partition sinfo does not list, or the reason sinfo gave none.
 * `ageS` is how old the answer is, seconds.
 */
export function partitionMarkdown(names: readonly string[], answer: PartitionAnswer, ageS: number): string {
  if (!answer.ok)
    return `**Slurm partition ${names.map((n) => `\`${n}\``).join(", ")}**: GPUs unknown: ${answer.reason}.`;
  const when = ageS < 1 ? "sinfo, just now" : `sinfo, ${Math.round(ageS)} s ago`;
  const lines = names.map((n) => {
    const p = answer.partitions.find((x) => x.partition === n);
    if (!p) return `- \`${n}\`: sinfo lists no partition of this name`;
    if (p.gpus === 0) return `- \`${n}\`: no GPUs (no gpu GRES) on its ${plural(p.nodes, "node")}`;
    const types = p.types.length ? ` (${p.types.join(", ")})` : "";
    const down = p.gpus - p.gpusUsed - p.gpusFree;
    return `- \`${n}\`: **${p.gpusFree} of ${p.gpus} GPUs free**${types}, ${p.gpusUsed} in use${down > 0 ? `, ${down} on nodes that take no jobs` : ""}; ${plural(p.nodes, "node")}`;
  });
  return [`**Slurm partition GPUs** (${when})`, "", ...lines].join("\n");
}

/**
 * The hover for `position` in a job script: null when the position is not on a partition option.
 * @returns the Markdown and the option's range.
 */
export async function partitionHover(
  text: string,
  position: Position,
  cache: PartitionGpuCache,
  now: () => number = Date.now,
): Promise<{ markdown: string; range: Range } | null> {
  const at = partitionAt(text, position);
  if (!at) return null;
  const answer = await cache.gpus(at.names);
  return { markdown: partitionMarkdown(at.names, answer, Math.max(0, (now() - answer.at) / 1000)), range: at.range };
}
