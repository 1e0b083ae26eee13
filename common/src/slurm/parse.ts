/**
 * Parsers for what the Slurm commands print, for the Slurm view: `sinfo -N -h -O
 * 'NodeList:|,Partition:|,Gres:|,GresUsed:|,StateCompact:|'` (one line per node and partition, each
 * field followed by `|`) and `squeue --me --json`. Shapes as printed by Slurm 22.05.8; the captures
 * in test/fixtures/slurm/ are real output of that version (test/fixtures/slurm/measured.md).
 * No `vscode` import: unit-tested on the captures. Shared by the client's Slurm view
 * (client/src/slurm/) and the language server's partition hover
 * (server/src/slurm/partitionHover.ts), so neither reaches into the other.
 */

/** The `sinfo -O` fields these parsers expect, in order, each ending in `|` (no width: the whole value). */
export const SINFO_NODE_FORMAT = "NodeList:|,Partition:|,Gres:|,GresUsed:|,StateCompact:|";

/** GPUs of one GRES string: total count and the types named (`a100`), from `gpu:a100:4`, `gpu:2(IDX:0,2)`, `gpu:a100:2,gpu:v100:2`. */
export interface GresGpus {
  count: number;
  types: string[];
}

/** Splits on commas outside parentheses (`gpu:2(IDX:0,2),nvme:1` has two items). */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const c of s) {
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    if (c === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * The GPUs in a GRES string as sinfo and squeue print it. `(null)` and empty strings have none;
 * items of other GRES (`nvme:1`, `shard:8`) are skipped. A `gres:` prefix (squeue's TRES form) is
 * accepted. `gpu` alone counts 1, as in a `--gres=gpu` request.
 * @throws Error for a GPU item whose count is not a whole number (`gpu:a100:x`).
 */
export function parseGres(s: string): GresGpus {
  const out: GresGpus = { count: 0, types: [] };
  const text = s.trim();
  if (!text || text === "(null)" || text === "N/A") return out;
  for (const raw of splitTop(text)) {
    const item = raw
      .trim()
      .replace(/^gres[:/]/, "")
      .replace(/\(.*\)$/, "");
    const parts = item.split(":");
    if (parts[0] !== "gpu") continue;
    let count = 1;
    let type: string | null = null;
    if (parts.length === 2) {
      if (/^[0-9]+$/.test(parts[1])) count = Number(parts[1]);
      else type = parts[1];
    } else if (parts.length >= 3) {
      type = parts.slice(1, -1).join(":");
      if (!/^[0-9]+$/.test(parts[parts.length - 1]))
        throw new Error(`GRES item ${JSON.stringify(raw)} has no whole GPU count`);
      count = Number(parts[parts.length - 1]);
    }
    out.count += count;
    if (type && !out.types.includes(type)) out.types.push(type);
  }
  return out;
}

/** One line of the node listing. */
export interface SinfoNode {
  node: string;
  /** The partition name, without the `*` that marks the default one. */
  partition: string;
  isDefault: boolean;
  gpus: number;
  gpusUsed: number;
  /** Types of its GPUs (`a100`), empty when the GRES is untyped. */
  types: string[];
  /** StateCompact as printed (`idle`, `mix`, `alloc`, `down*`, `drain`, ...). */
  state: string;
}

/** States in which a node takes no new job: its free GPUs are not offered. */
const UNAVAILABLE = /^(down|drain|drng|fail|maint|boot|powered_down|power_down|inval|unk|futr|resv|plnd|npc)/;

/**
 * Parses `sinfo -N -h -O` output made with {@link SINFO_NODE_FORMAT}. Blank lines are skipped.
 * @throws Error naming the 1-based line when a line has not five `|`-ended fields or a GRES is unreadable.
 */
export function parseSinfoNodes(text: string): SinfoNode[] {
  const out: SinfoNode[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const fields = line.split("|");
    if (fields.length !== 6 || fields[5].trim() !== "")
      throw new Error(
        `sinfo line ${i + 1}: expected 5 fields ending in '|' (${SINFO_NODE_FORMAT}), got ${JSON.stringify(line)}`,
      );
    const [node, part, gres, used, state] = fields.map((f) => f.trim());
    try {
      const total = parseGres(gres);
      out.push({
        node,
        partition: part.replace(/\*$/, ""),
        isDefault: part.endsWith("*"),
        gpus: total.count,
        gpusUsed: parseGres(used).count,
        types: total.types,
        state,
      });
    } catch (e) {
      throw new Error(`sinfo line ${i + 1}: ${(e as Error).message}`);
    }
  });
  return out;
}

/** GPUs of one partition, summed over its nodes. */
export interface PartitionGpus {
  partition: string;
  isDefault: boolean;
  nodes: number;
  gpus: number;
  gpusUsed: number;
  /** GPUs not in use on nodes that take jobs (not down, drained, ...). */
  gpusFree: number;
  types: string[];
}

/** Sums the nodes of each partition, in the order sinfo listed the partitions. */
export function partitionGpus(nodes: readonly SinfoNode[]): PartitionGpus[] {
  const by = new Map<string, PartitionGpus>();
  for (const n of nodes) {
    let p = by.get(n.partition);
    if (!p) {
      p = { partition: n.partition, isDefault: n.isDefault, nodes: 0, gpus: 0, gpusUsed: 0, gpusFree: 0, types: [] };
      by.set(n.partition, p);
    }
    p.nodes++;
    p.gpus += n.gpus;
    p.gpusUsed += n.gpusUsed;
    if (!UNAVAILABLE.test(n.state)) p.gpusFree += Math.max(0, n.gpus - n.gpusUsed);
    for (const t of n.types) if (!p.types.includes(t)) p.types.push(t);
  }
  return [...by.values()];
}

/** One job of `squeue --json`. Times are Unix seconds; null where Slurm gives none. */
export interface SlurmJob {
  id: number;
  name: string;
  /** `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, ... */
  state: string;
  partition: string;
  user: string;
  /** GPUs per node asked for (`tres_per_node`: `--gpus-per-node`, `--gres=gpu:N`), or null when the job asked none that way. */
  gpusPerNode: number | null;
  /** GPUs of the whole job (`tres_per_job`: `--gpus=N`), or null. */
  gpusPerJob: number | null;
  /** GPUs per task (`tres_per_task`: `--gpus-per-task=N`), or null. */
  gpusPerTask: number | null;
  /** The allocated GPUs as Slurm lists them per node (`gpu:a100:2(IDX:0-1)`), running jobs only. */
  gresDetail: string[];
  nodes: string;
  nodeCount: number;
  /** `state_reason` (`Resources`, `Priority`, ...); null for `None`. */
  reason: string | null;
  /** Time limit in minutes; null for the partition's default or no limit. */
  timeLimitMinutes: number | null;
  submitTime: number | null;
  startTime: number | null;
  /** End time, Unix seconds: the real end of a finished job, the expected end (start + limit) of a running one; null when not known. */
  endTime: number | null;
  /** Run time in seconds as squeue printed it (`%M`, the format-string fallback); absent from the JSON, where it follows from the times. */
  runTimeSeconds?: number;
  /** The output file (`standard_output`), or null when Slurm reports none. */
  output: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A number field: a plain number (22.05) or `{set, infinite, number}` (23.02 and later). */
function num(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (isObj(v)) {
    if (v.set === false || v.infinite === true) return null;
    return typeof v.number === "number" ? v.number : null;
  }
  return null;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
/** `job_state`: a string (22.05) or a list of strings (23.02 and later). */
const state = (v: unknown): string => (Array.isArray(v) ? v.filter((x) => typeof x === "string").join(",") : str(v));

/**
 * Parses `squeue --json` output.
 * @throws Error when the text is no JSON, has no `jobs` list, or reports `errors`.
 */
export function parseSqueueJson(text: string): SlurmJob[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`squeue --json printed no JSON: ${(e as Error).message}`);
  }
  if (!isObj(doc) || !Array.isArray(doc.jobs)) throw new Error('squeue --json output has no "jobs" list');
  const errors = Array.isArray(doc.errors) ? doc.errors : [];
  if (errors.length)
    throw new Error(
      `squeue reported: ${errors.map((e) => (isObj(e) ? str(e.error) || str(e.description) || JSON.stringify(e) : String(e))).join("; ")}`,
    );
  return doc.jobs.filter(isObj).map((j) => {
    const tpn = str(j.tres_per_node);
    const gpusOf = (v: unknown) => {
      const t = str(v);
      return t ? parseGres(t).count || null : null;
    };
    const start = num(j.start_time);
    const end = num(j.end_time);
    const submit = num(j.submit_time);
    const reason = str(j.state_reason);
    return {
      id: num(j.job_id) ?? -1,
      name: str(j.name),
      state: state(j.job_state),
      partition: str(j.partition),
      user: str(j.user_name),
      gpusPerNode: tpn ? parseGres(tpn).count || null : null,
      gpusPerJob: gpusOf(j.tres_per_job),
      gpusPerTask: gpusOf(j.tres_per_task),
      gresDetail: Array.isArray(j.gres_detail) ? j.gres_detail.filter((x): x is string => typeof x === "string") : [],
      nodes: str(j.nodes),
      nodeCount: num(j.node_count) ?? 0,
      reason: reason && reason !== "None" ? reason : null,
      timeLimitMinutes: num(j.time_limit),
      submitTime: submit && submit > 0 ? submit : null,
      startTime: start && start > 0 ? start : null,
      endTime: end && end > 0 ? end : null,
      output: str(j.standard_output) || null,
    };
  });
}

/**
 * The `squeue -o` format of {@link parseSqueueFormat}, for Slurm without `--json` (before 21.08):
 * job id, name, state (long), partition, user, GPUs per node (`%b`, tres-per-node), node list,
 * node count, reason, time limit, run time, each ended by `|`.
 */
export const SQUEUE_FORMAT = "%i|%j|%T|%P|%u|%b|%N|%D|%r|%l|%M|";

/**
 * Seconds of a Slurm duration as squeue prints it (`%M`, `%l`): `M:SS`, `H:MM:SS`, `D-HH:MM:SS`;
 * null for `UNLIMITED`, `INVALID`, `N/A` or anything else.
 */
export function parseSlurmDuration(s: string): number | null {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(s.trim());
  if (!m) return null;
  return (Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/**
 * Parses `squeue -h -o` output made with {@link SQUEUE_FORMAT} (one job a line). Times other than
 * the run time are not in it (null); `output` is null (ask `scontrol show job`).
 * @throws Error naming the 1-based line when a line has not the 11 `|`-ended fields.
 */
export function parseSqueueFormat(text: string): SlurmJob[] {
  const out: SlurmJob[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const f = line.split("|");
    if (f.length !== 12 || f[11].trim() !== "")
      throw new Error(
        `squeue line ${i + 1}: expected 11 fields ending in '|' (${SQUEUE_FORMAT}), got ${JSON.stringify(line)}`,
      );
    const [id, name, st, partition, user, tpn, nodes, count, reason, limit, run] = f.map((x) => x.trim());
    const limitS = parseSlurmDuration(limit);
    const runS = parseSlurmDuration(run);
    out.push({
      id: /^\d+$/.test(id) ? Number(id) : -1,
      name,
      state: st,
      partition,
      user,
      gpusPerNode: parseGres(tpn).count || null,
      gpusPerJob: null,
      gpusPerTask: null,
      gresDetail: [],
      nodes: nodes === "(null)" ? "" : nodes,
      nodeCount: /^\d+$/.test(count) ? Number(count) : 0,
      reason: reason && reason !== "None" ? reason : null,
      timeLimitMinutes: limitS === null ? null : Math.round(limitS / 60),
      submitTime: null,
      startTime: null,
      endTime: null,
      ...(runS !== null ? { runTimeSeconds: runS } : {}),
      output: null,
    });
  });
  return out;
}
