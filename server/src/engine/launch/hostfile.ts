/**
 * DeepSpeed's hostfile and its `--include`/`--exclude` filter, as its launcher reads them
 * (deepspeedai/DeepSpeed deepspeed/launcher/runner.py; line numbers at edaa7221):
 * - `fetch_hostfile` (:230-240) opens the `--hostfile` path as given (`os.path.isfile`, relative to
 *   the launcher's working directory; a missing file means "local resources only");
 * - `_parse_hostfile` (:243-272) takes one `host slots=N` per line, skips blank and `#` lines,
 *   refuses a host listed twice; releases before 0.8.0 split each line into exactly two words
 *   (`hostname, slots = line.split()`, v0.6.0 runner.py:168);
 * - `parse_inclusion_exclusion` (:391-398) gives each host the slots `list(range(slots))` (every
 *   release before 0.15.2; from 0.15.2, commit 5cbbff40 "Fix device selection using
 *   CUDA_VISIBLE_DEVICES" (#6530), a host named in `--include` takes the `--include` slots instead);
 * - `parse_resource_filter` (:310-388) raises "Hostname '...' not found in hostfile" for a host
 *   the pool lacks (:346, :363) and "No slot '...' specified on host '...'" for a slot it lacks (:349).
 */

/** A hostfile's hosts and their `slots=`, in order, with the 0-based line of each and its length. */
export type Hostfile = Map<string, { slots: number; line: number; length: number }>;

/**
 * The hosts of a DeepSpeed hostfile's text: every line that is not blank or a `#` comment must be
 * `host slots=N` and nothing else (the form every release reads alike); null for anything else (a
 * line with more words, a host listed twice, no host at all), where releases differ or refuse it.
 */
export function parseDeepspeedHostfile(text: string): Hostfile | null {
  const hosts: Hostfile = new Map();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(\S+)\s+slots=([0-9]{1,4})$/.exec(line);
    if (!m || hosts.has(m[1])) return null;
    hosts.set(m[1], { slots: Number(m[2]), line: i, length: lines[i].length });
  }
  return hosts.size ? hosts : null;
}

/** One `NAME[:SLOT[,SLOT ...]]` of a `--include`/`--exclude` value; `slots` empty for the whole host. */
export interface HostSpec {
  host: string;
  slots: number[];
}

/**
 * The node specs of a literal `--include`/`--exclude` value: `NODE_SPEC[@NODE_SPEC ...]`,
 * `NODE_SPEC = NAME[:SLOT[,SLOT ...]]` (runner.py `--include` help, :61-73); null when it is not
 * in that form (an expansion, an empty part, a slot that is not a number).
 */
export function parseHostFilter(value: string): HostSpec[] | null {
  const v = value.trim().replace(/^(["'])(.*)\1$/, "$2");
  if (!v || /[$`\s]/.test(v)) return null;
  const out: HostSpec[] = [];
  for (const part of v.split("@")) {
    const m = /^([^:@,]+)(?::([0-9]{1,4}(?:,[0-9]{1,4})*))?$/.exec(part);
    if (!m) return null;
    out.push({ host: m[1], slots: m[2] ? m[2].split(",").map(Number) : [] });
  }
  return out;
}

/**
 * The local GPU ids of a deepspeed `--include` value that names only this node with its slots
 * (`localhost:0,1`), read as {@link parseHostFilter} reads it; null when it names another host or
 * several (`localhost:0,1@worker-1:0`), or no slots.
 */
export function deepspeedLocalIds(value: string): number[] | null {
  const specs = parseHostFilter(value);
  return specs?.length === 1 && specs[0].host === "localhost" && specs[0].slots.length ? specs[0].slots : null;
}

/** What DeepSpeed's launcher refuses in a `--include`/`--exclude` filter against its hostfile. */
export interface HostfileProblem {
  /** `host`: the hostfile does not list the host; `slot`: the host's `slots=` has no such slot. */
  kind: "host" | "slot";
  host: string;
  /** The slots at or beyond the host's `slots=` (kind `slot`). */
  slots: number[];
}

/**
 * The hosts and slots of `specs` that the launcher refuses against `pool` (runner.py
 * `parse_resource_filter`): a host the hostfile does not list, in every release; a slot at or
 * beyond the host's `slots=`, for `--exclude` in every release, for `--include` only where
 * `includeSlots` (releases before 0.15.2, which give each host `list(range(slots))` before the filter).
 */
export function hostfileProblems(
  pool: Hostfile,
  specs: readonly HostSpec[],
  include: boolean,
  includeSlots: boolean,
): HostfileProblem[] {
  const out: HostfileProblem[] = [];
  for (const s of specs) {
    const host = pool.get(s.host);
    if (!host) {
      if (!out.some((p) => p.kind === "host" && p.host === s.host)) out.push({ kind: "host", host: s.host, slots: [] });
      continue;
    }
    if (include && !includeSlots) continue;
    const beyond = [...new Set(s.slots.filter((n) => n >= host.slots))];
    if (beyond.length) out.push({ kind: "slot", host: s.host, slots: beyond });
  }
  return out;
}
