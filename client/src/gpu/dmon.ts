/**
 * `nvidia-smi dmon` output, parsed: the scrolling whitespace table that
 * `nvidia-smi dmon -s u --gpm-metrics 2,3,5 -d 1` prints, one line per GPU per sample, under two
 * header lines (names, then units) that nvidia-smi repeats every 20 samples:
 *
 * ```text
 * # gpu     sm    mem    enc    dec    jpg    ofa      gract     smutil      smocc     mmaact       dram       fp16
 * # Idx      %      %      %      %      %      %      GPM:%      GPM:%      GPM:%      GPM:%      GPM:%      GPM:%
 *     0    100      0      0      0      0      0         99          0          0          0          0          0
 * ```
 *
 * Header-driven: every column is found by its name in the last header line, so the order of the
 * columns and the set of `--gpm-metrics` ids do not matter. A value printed `-` (no value: the
 * first one or two samples of a GPM column, a GPM id the GPU or driver does not support, a
 * utilisation dmon cannot read on a MIG-enabled GPU) is undefined. An id nvidia-smi has no name for
 * heads its column as `id=<n>`.
 *
 * Pure text in, data out (no process, no `vscode`). Sources: `nvidia-smi dmon -h`
 * (test/fixtures/nvidia-smi/h200-gpm/dmon-help.txt), NVML's `nvmlGpmMetricId_t` (nvml.h) for the
 * GPM ids and what they measure, and real captures on an H200 with driver 580.159.04
 * (test/fixtures/nvidia-smi/h200-gpm, see its README).
 */
import type { ParseProblem } from "../../../common/src/nvidiaSmi/parse";

/**
 * GPM metrics GPU Pilot reads: NVML's `nvmlGpmMetricId_t` id, the column name dmon prints for it
 * (from the H200 capture) and NVML's definition. Every value is a percentage 0..100 of one sample
 * interval. GPM (GPU performance monitoring) exists on Hopper and newer GPUs only.
 */
export const GPM_METRICS = {
  /** `NVML_GPM_METRIC_GRAPHICS_UTIL` (1): percentage of time any compute/graphics app was active on the GPU. */
  graphicsActivity: { id: 1, column: "gract" },
  /** `NVML_GPM_METRIC_SM_UTIL` (2): percentage of SMs that were busy (SM activity; DCGM's SMACT). */
  smActivity: { id: 2, column: "smutil" },
  /** `NVML_GPM_METRIC_SM_OCCUPANCY` (3): percentage of warps that were active vs the theoretical maximum. */
  smOccupancy: { id: 3, column: "smocc" },
  /** `NVML_GPM_METRIC_ANY_TENSOR_UTIL` (5): percentage of time the SMs were doing any tensor operation. */
  tensorActivity: { id: 5, column: "mmaact" },
  /** `NVML_GPM_METRIC_DRAM_BW_UTIL` (10): percentage of DRAM bandwidth used vs the theoretical maximum. */
  dramActivity: { id: 10, column: "dram" },
  /** `NVML_GPM_METRIC_FP16_UTIL` (13): percentage of time the SMs were doing non-tensor FP16 math. */
  fp16Activity: { id: 13, column: "fp16" },
} as const;

/** The GPM ids the GPU view streams: SM activity, SM occupancy, tensor activity. */
export const DMON_GPM_IDS: readonly number[] = [
  GPM_METRICS.smActivity.id,
  GPM_METRICS.smOccupancy.id,
  GPM_METRICS.tensorActivity.id,
];

/**
 * Arguments of the streaming dmon: `dmon -s u --gpm-metrics <ids> -d <seconds>`. `-s u` adds the
 * utilisation columns (`sm` is GPU-Util, the same number as `--query-gpu=utilization.gpu`), so that
 * GPU-Util and SM activity come from the same sample. dmon monitors at most 16 GPUs (`dmon -h`).
 * @param delaySeconds sampling period in whole seconds (dmon's `-d`; rounded, at least 1).
 * @param ids GPM ids (default {@link DMON_GPM_IDS}).
 */
export function dmonArgs(delaySeconds: number, ids: readonly number[] = DMON_GPM_IDS): string[] {
  return ["dmon", "-s", "u", "--gpm-metrics", ids.join(","), "-d", String(Math.max(1, Math.round(delaySeconds)))];
}

/** One line of dmon's table: one GPU in one sample. */
export interface DmonSample {
  /** The `gpu` column (`Idx`): nvidia-smi's GPU index, the same as `--query-gpu=index`. */
  index: number;
  /** Every column but `gpu` by its header name (`sm`, `smutil`, `id=99`, ...); undefined where dmon printed `-`. */
  values: Record<string, number | undefined>;
  /** 1-based line number in the text (or stream) it came from. */
  line: number;
}

/**
 * The numbers of a {@link DmonSample} GPU Pilot uses, in percent (0..100) of the sample interval;
 * undefined where the column is absent or printed `-`.
 */
export interface DmonActivity {
  /** `sm` (`-s u`): GPU-Util, percentage of time one or more kernels was executing (NVML `nvmlDeviceGetUtilizationRates().gpu`). */
  gpuUtilPercent: number | undefined;
  /** `smutil`: SM activity, percentage of SMs that were busy ({@link GPM_METRICS}.smActivity). */
  smActivityPercent: number | undefined;
  /** `smocc`: SM occupancy ({@link GPM_METRICS}.smOccupancy). */
  smOccupancyPercent: number | undefined;
  /** `mmaact`: any tensor activity ({@link GPM_METRICS}.tensorActivity). */
  tensorActivityPercent: number | undefined;
}

/** Reads the {@link DmonActivity} of a sample by column name. */
export function dmonActivity(sample: DmonSample): DmonActivity {
  return {
    gpuUtilPercent: sample.values.sm,
    smActivityPercent: sample.values[GPM_METRICS.smActivity.column],
    smOccupancyPercent: sample.values[GPM_METRICS.smOccupancy.column],
    tensorActivityPercent: sample.values[GPM_METRICS.tensorActivity.column],
  };
}

/** Whether a sample carries a value in any GPM column (a column whose unit is `GPM:%`, or one named in {@link GPM_METRICS}). */
export function hasGpmValue(sample: DmonSample, gpmColumns: readonly string[]): boolean {
  return gpmColumns.some((c) => sample.values[c] !== undefined);
}

/** What one line was. */
export type DmonLine =
  | { kind: "header" }
  | { kind: "sample"; sample: DmonSample }
  | { kind: "problem"; problem: ParseProblem }
  | { kind: "blank" };

const NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * Reads dmon's output line by line (a stream, or {@link parseDmon}'s text). Keeps the last header
 * seen; a data line is read against it. Never throws: a line it cannot read is a `problem` (data
 * before any header, a column count that does not match the header, no GPU index, a value that is
 * neither a number nor `-`: nvidia-smi's error text, for instance).
 */
export class DmonReader {
  private names: string[] = [];
  private units: string[] = [];
  private lineNo = 0;

  /** The column names of the last header (`gpu`, `sm`, ..., `smutil`); empty before the first header. */
  get columns(): readonly string[] {
    return this.names;
  }

  /**
   * The GPM columns of the last header: those whose unit line says `GPM:...`, else those named in
   * {@link GPM_METRICS} or `id=<n>`.
   */
  get gpmColumns(): string[] {
    const known = new Set<string>(Object.values(GPM_METRICS).map((m) => m.column));
    return this.names.filter((n, i) => (this.units[i] ?? "").startsWith("GPM:") || known.has(n) || /^id=\d+$/.test(n));
  }

  /** Reads one line (without its newline). */
  push(raw: string): DmonLine {
    this.lineNo++;
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return { kind: "blank" };
    const problem = (reason: string): DmonLine => ({
      kind: "problem",
      problem: { line: this.lineNo, text: line, reason },
    });
    if (line.trimStart().startsWith("#")) {
      const tokens = line.trim().replace(/^#\s*/, "").split(/\s+/).filter(Boolean);
      if (tokens.includes("gpu")) {
        this.names = tokens;
        this.units = [];
        return { kind: "header" };
      }
      if (this.names.length > 0 && tokens.length === this.names.length) {
        this.units = tokens;
        return { kind: "header" };
      }
      return problem("a header line that matches no column header");
    }
    if (this.names.length === 0) return problem("a data line before dmon's column header");
    const tokens = line.trim().split(/\s+/);
    if (tokens.length !== this.names.length)
      return problem(`${tokens.length} columns where the header names ${this.names.length}`);
    const values: Record<string, number | undefined> = {};
    let index: number | undefined;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      const name = this.names[i];
      if (t !== "-" && !NUMBER.test(t))
        return problem(`column ${name}: ${JSON.stringify(t)} is neither a number nor -`);
      const v = t === "-" ? undefined : Number(t);
      if (name === "gpu") index = v;
      else values[name] = v;
    }
    if (index === undefined || !Number.isInteger(index) || index < 0) return problem("no GPU index in the gpu column");
    return { kind: "sample", sample: { index, values, line: this.lineNo } };
  }
}

/**
 * Parses a whole dmon output (a capture, `dmon -c N`).
 * @returns the samples in order, the unreadable lines, the column names and GPM columns of the last header.
 */
export function parseDmon(text: string): {
  samples: DmonSample[];
  problems: ParseProblem[];
  columns: string[];
  gpmColumns: string[];
} {
  const reader = new DmonReader();
  const samples: DmonSample[] = [];
  const problems: ParseProblem[] = [];
  for (const line of text.split("\n")) {
    const r = reader.push(line);
    if (r.kind === "sample") samples.push(r.sample);
    else if (r.kind === "problem") problems.push(r.problem);
  }
  return { samples, problems, columns: [...reader.columns], gpmColumns: reader.gpmColumns };
}
