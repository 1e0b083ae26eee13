/**
 * `nvidia-smi pmon` output, parsed: per-process SM % for the dashboard's Processes tab (issue 45
 * item 2). `nvidia-smi pmon -c 1 -s u` prints one sample of every process on every GPU under two
 * header lines (names, then units), one line per process, as captured on 1 x H100 with driver
 * 580.159.04 (test/fixtures/nvidia-smi/h100-pmon/pmon-c1-u-0.txt, a matmul loop and an idle process
 * holding memory):
 *
 * ```text
 * # gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command
 * # Idx           #    C/G      %      %      %      %      %      %    name
 *     0        698     C     99      9      -      -      -      -    python3
 *     0        719     C      -      -      -      -      -      -    python3
 * ```
 *
 * `nvidia-smi pmon -h`: `-c`/`--count` "Collect specified number of samples and exit",
 * `-s`/`--select` "u - Utilization" (the default; `m` adds FB memory: the `fb` and `ccpm` columns of
 * pmon-c1-um-0.txt), `-d`/`--delay` the interval in seconds (default 1, at most 10), `-o D`/`-o T` a
 * date and time column in front. A value printed `-` is "no sample": the driver recorded no
 * utilisation sample for that process in the interval, so it did no GPU work then (the idle process
 * of the capture reads `-` in every sample of pmon-stream-d5.txt while the busy one reads 98-99).
 *
 * Header-driven, as dmon.ts: the columns are found by name in the last header (`gpu`, `pid`,
 * `type`, `sm`, `mem`, `command`), so older drivers without `jpg`/`ofa`, `-s um`'s `fb`/`ccpm` and
 * a date/time in front all read the same. A line whose pid is `-` (a GPU without processes) is
 * skipped; blank lines are skipped; anything else unreadable is a problem line, never an exception.
 *
 * Pure text in, data out (no process, no `vscode`, nothing the webview bundle cannot load): the
 * dashboard's webview imports the constants and types from here.
 */
import type { ParseProblem } from "../../../common/src/nvidiaSmi/parse";
import type { SmiResult } from "../../../common/src/gpu/nvidiaSmi";

/** The one-shot pmon: one sample of utilisation (SM, memory, encoder, ...) per process, then exit. */
export const PMON_ARGS: readonly string[] = ["pmon", "-c", "1", "-s", "u"];

/**
 * The most GPUs one pmon call reports on. `nvidia-smi pmon -h` (driver 580.159.04, 1 x H100,
 * test/fixtures/nvidia-smi/h100-pmon/pmon-help.txt): "Monitoring is limited to a maximum of 4
 * devices. If no devices are specified, then up to first four supported devices under natural
 * enumeration (starting with GPU index 0) are used for monitoring purpose." So without `-i` the
 * processes of GPUs 4 to 7 of an 8-GPU server would never get a number.
 */
export const PMON_MAX_GPUS = 4;

/**
 * The pmon calls that cover the GPUs at nvidia-smi indices `gpus` (those holding a compute
 * process: a GPU without one has nothing to report), as argument arrays: {@link PMON_ARGS} with
 * `-i` and at most {@link PMON_MAX_GPUS} indices each, in ascending order; [] for none. Each call
 * costs about 31 ms of CPU (the H100 measurement above), so 8 busy GPUs cost 2 calls per interval.
 */
export function pmonCalls(gpus: readonly number[]): string[][] {
  const ids = [...new Set(gpus)].filter((i) => Number.isInteger(i) && i >= 0).sort((a, b) => a - b);
  const calls: string[][] = [];
  for (let k = 0; k < ids.length; k += PMON_MAX_GPUS)
    calls.push([...PMON_ARGS, "-i", ids.slice(k, k + PMON_MAX_GPUS).join(",")]);
  return calls;
}

/**
 * How often the Processes tab reads per-process SM %, ms: one round of {@link pmonCalls} every
 * 15 s, and only while that tab is shown. Measured on 1 x H100, driver 580.159.04
 * (verify/frameworks/smi_pmon.py, test/fixtures/nvidia-smi/h100-pmon/smi-pmon.json): a one-shot
 * `pmon -c 1 -s u` costs 30.9 ms of CPU (37.7 ms wall, median of 10). The whole GPU side with this
 * tab open, measured at once on the same machine (verify/gpm/dmon_period.py,
 * test/fixtures/nvidia-smi/h100-gpm/dmon-period.json): the GPU stream 235.9 ms of CPU a minute, the
 * process stream 36.5, SM activity's dmon 168.2, pmon every 10 s 195.0 (32.5 ms a call): 636 ms a
 * minute, over issue 45's 600; every 15 s pmon costs 130 and the sum 571. The stream `pmon -d 1 -s u`
 * costs 1,624 ms/min, `-d 5` 499 ms/min, `-d 10` 295 ms/min (a long-lived process for a tab that is
 * mostly closed): see BENCHMARKS.md, nvidia-smi's looping modes.
 */
export const PMON_INTERVAL_MS = 15_000;

/** After pmon failed (unsupported, refused, timed out, unreadable), the next try waits this long, ms (5 min). */
export const PMON_RETRY_AFTER_MS = 5 * 60_000;

/** One process line of pmon's table. */
export interface PmonRow {
  /** The `gpu` column (`Idx`): nvidia-smi's GPU index, the same as `--query-gpu=index`. */
  gpuIndex: number;
  /** The process id, as `--query-compute-apps` reports it. */
  pid: number;
  /** `type` (`C/G`): `C` compute, `G` graphics, `C+G` both; "" when the column is absent. */
  type: string;
  /** `sm`: SM utilisation of the process in the sample, %; null where pmon printed `-` (no sample) or the column is absent. */
  smPercent: number | null;
  /** `mem`: memory (frame buffer) utilisation of the process in the sample, %; null where `-` or absent. */
  memPercent: number | null;
  /** `command` (`name`): the process name as pmon prints it; "" when none. */
  command: string;
  /** 1-based line number in the text. */
  line: number;
}

/** What one line was. */
export type PmonLine =
  | { kind: "header" }
  | { kind: "row"; row: PmonRow }
  | { kind: "noProcess"; gpuIndex: number }
  | { kind: "problem"; problem: ParseProblem }
  | { kind: "blank" };

const NUMBER = /^\d+(?:\.\d+)?$/;
const INTEGER = /^\d+$/;

/**
 * Reads pmon's output line by line. Keeps the last header seen; a process line is read against
 * it by column name. Never throws: a line it cannot read is a `problem` (a line before any header,
 * too few columns, a GPU index or pid that is not a whole number, an `sm` or `mem` value that is
 * neither a number nor `-`: nvidia-smi's error text, for instance).
 */
export class PmonReader {
  private names: string[] = [];
  private lineNo = 0;

  /** The column names of the last header (`gpu`, `pid`, `type`, `sm`, ...); empty before the first header. */
  get columns(): readonly string[] {
    return this.names;
  }

  /** Reads one line (without its newline). */
  push(raw: string): PmonLine {
    this.lineNo++;
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return { kind: "blank" };
    const problem = (reason: string): PmonLine => ({
      kind: "problem",
      problem: { line: this.lineNo, text: line, reason },
    });
    if (line.trimStart().startsWith("#")) {
      // `# gpu pid ...`, or `#Date Time gpu pid ...` with -o DT: the `#` may touch the first name.
      const tokens = line.trim().replace(/^#\s*/, "").split(/\s+/).filter(Boolean);
      if (tokens.includes("gpu") && tokens.includes("pid")) {
        this.names = tokens;
        return { kind: "header" };
      }
      // The units line (`# Idx # C/G % ...`) has as many cells as the names.
      if (this.names.length > 0 && tokens.length === this.names.length) return { kind: "header" };
      return problem("a header line that matches no column header");
    }
    if (this.names.length === 0) return problem("a process line before pmon's column header");
    return this.row(line.trim().split(/\s+/), problem);
  }

  private row(tokens: string[], problem: (reason: string) => PmonLine): PmonLine {
    const at = (name: string): string | undefined => {
      const i = this.names.indexOf(name);
      return i < 0 ? undefined : tokens[i];
    };
    const commandAt = this.names.indexOf("command");
    const commandLast = commandAt === this.names.length - 1;
    // The command is last: it may hold spaces (the rest of the line) or be missing.
    const least = commandLast ? this.names.length - 1 : this.names.length;
    if (tokens.length < least || (!commandLast && tokens.length > this.names.length))
      return problem(`${tokens.length} columns where the header names ${this.names.length}`);
    const gpu = at("gpu");
    if (gpu === undefined || !INTEGER.test(gpu)) return problem("no GPU index in the gpu column");
    const pid = at("pid");
    if (pid === "-") return { kind: "noProcess", gpuIndex: Number(gpu) };
    if (pid === undefined || !INTEGER.test(pid) || Number(pid) === 0) return problem("no process id in the pid column");
    const percent = (name: string): number | null | string => {
      const t = at(name);
      if (t === undefined || t === "-") return null;
      return NUMBER.test(t) ? Number(t) : `column ${name}: ${JSON.stringify(t)} is neither a number nor -`;
    };
    const sm = percent("sm");
    const mem = percent("mem");
    if (typeof sm === "string") return problem(sm);
    if (typeof mem === "string") return problem(mem);
    const command = commandAt < 0 ? "" : tokens.slice(commandAt).join(" ");
    const row: PmonRow = {
      gpuIndex: Number(gpu),
      pid: Number(pid),
      type: at("type") ?? "",
      smPercent: sm,
      memPercent: mem,
      command,
      line: this.lineNo,
    };
    return { kind: "row", row };
  }
}

/**
 * Parses a whole pmon output (`pmon -c 1`, or a capture of the stream).
 * @returns the process rows in order, the unreadable lines, and the column names of the last header
 *   (empty: no header at all, so not pmon's table).
 */
export function parsePmon(text: string): { rows: PmonRow[]; problems: ParseProblem[]; columns: string[] } {
  const reader = new PmonReader();
  const rows: PmonRow[] = [];
  const problems: ParseProblem[] = [];
  for (const line of text.split("\n")) {
    const r = reader.push(line);
    if (r.kind === "row") rows.push(r.row);
    else if (r.kind === "problem") problems.push(r.problem);
  }
  return { rows, problems, columns: [...reader.columns] };
}

/** The key of a process on a GPU in {@link ProcessSmSnapshot.sm}: `<gpu index>:<pid>`. */
export function processKey(gpuIndex: number, pid: number): string {
  return `${gpuIndex}:${pid}`;
}

/**
 * SM % per process ({@link processKey}): a number, or null where pmon printed `-` (no sample). A
 * process listed twice (a stream's samples) keeps its last number; a later `-` does not hide it.
 */
export function smByProcess(rows: readonly PmonRow[]): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const r of rows) {
    const key = processKey(r.gpuIndex, r.pid);
    if (r.smPercent !== null || !out.has(key)) out.set(key, r.smPercent);
  }
  return out;
}

/** What the Processes tab knows about per-process SM %. */
export interface ProcessSmSnapshot {
  /**
   * `off`: not read (the Processes tab is not shown); `waiting`: asked, no answer yet; `ok`: the
   * last answer is in {@link sm}; `failed`: pmon failed or is not supported here ({@link note}
   * says why), not asked again before {@link PMON_RETRY_AFTER_MS}.
   */
  state: "off" | "waiting" | "ok" | "failed";
  /** By {@link processKey}: SM %, 0..100, or null for no sample (`-`). A process not in it was not in pmon's answer. */
  sm: ReadonlyMap<string, number | null>;
  /** When the last answer came, ms since the epoch; 0 before one. */
  at: number;
  /** Why SM % is not available, in words (state `failed`); "" otherwise. */
  note: string;
  /** State `failed`: when pmon is asked again, ms since the epoch; absent: not asked again (AMD GPUs). */
  retryAt?: number;
}

/** The snapshot while nothing is read. */
export const PROCESS_SM_OFF: ProcessSmSnapshot = { state: "off", sm: new Map(), at: 0, note: "" };

/**
 * What one run of {@link PMON_ARGS} came to: `ok` with the SM % of every process it listed, or
 * `failed` with a calm reason (nvidia-smi's exit code in words, a timeout, output without pmon's
 * header or without one readable process line).
 * @param r the run's result (nvidiaSmi.ts runNvidiaSmi); `canceled` is the caller's to ignore.
 * @param at when it ended, ms since the epoch.
 */
export function pmonSnapshot(r: SmiResult, at: number): ProcessSmSnapshot {
  const failed = (why: string): ProcessSmSnapshot => ({ state: "failed", sm: new Map(), at, note: why });
  if (r.kind === "failed")
    return failed(`nvidia-smi pmon failed: ${r.message}${r.message === r.explanation ? "" : ` (${r.explanation})`}`);
  if (r.kind !== "ok") return failed(`nvidia-smi pmon: ${r.message}`);
  const parsed = parsePmon(r.stdout);
  if (parsed.columns.length === 0) {
    const first = r.stdout.trim().split("\n")[0]?.trim().slice(0, 120) ?? "";
    return failed(`nvidia-smi pmon printed no process table${first ? ` (${JSON.stringify(first)})` : ""}`);
  }
  if (!parsed.columns.includes("sm")) return failed("nvidia-smi pmon printed no sm column");
  if (parsed.rows.length === 0 && parsed.problems.length > 0)
    return failed(
      `nvidia-smi pmon's output could not be read: line ${parsed.problems[0].line}: ${parsed.problems[0].reason}`,
    );
  return { state: "ok", sm: smByProcess(parsed.rows), at, note: "" };
}
