/**
 * The GPU Pilot agent tools, without `vscode` and without processes: their names, JSON
 * input schemas, input validation and the text results an agent reads. The VS Code
 * language-model tools (client/src/agents/lmTools.ts) and `gpu-pilot mcp` (server/src/mcp/server.ts) both use this
 * module, so an agent gets the same answer in and outside the editor.
 *
 * Every validator returns `{ value }` or `{ error }` (a sentence naming the field and what it must
 * be); none throws.
 */
import type { AgentFinding } from "../lsp/protocol";
import type { ComputeApp, Gpu, Inventory, ProcessDetails } from "../gpu/nvidiaSmi";
import { normalizePolicy, pickFreeGpus, type PickPolicy, type PickResult } from "../gpu/policy";
import { escapeControls } from "../text/controls";
import { indexOfEntry, isDeviceId, normalizeSelection, type SelectBy } from "../gpu/selection";
import type { GpuVendor } from "../run/launch";
import { TOOL, type ToolName } from "./toolNames";

/** Tool names, as `contributes.languageModelTools` and the MCP server list them. */
export { TOOL, type ToolName } from "./toolNames";

/** The launchers an agent may ask for: those that need no workspace-only settings (custom, docker) or another machine (slurm). */
export const AGENT_LAUNCHERS = ["python", "torchrun", "accelerate", "deepspeed"] as const;
export type AgentLauncher = (typeof AGENT_LAUNCHERS)[number];

/** How many output lines a run result keeps (its last ones). */
export const OUTPUT_TAIL_LINES = 40;
/** The default and the largest run time an agent may ask for, s. */
export const RUN_TIMEOUT_DEFAULT_S = 600;
export const RUN_TIMEOUT_MAX_S = 24 * 3600;
/** The longest wait gpu-pilot_pickGpus accepts (`waitSeconds`), s. */
export const PICK_WAIT_MAX_S = 3600;

/** JSON Schema (draft 7 subset) of each tool's input; package.json's `languageModelTools` holds the same (a unit test compares them). */
export const INPUT_SCHEMAS: Record<ToolName, Record<string, unknown>> = {
  [TOOL.listGpus]: { type: "object", properties: {}, additionalProperties: false },
  [TOOL.pickGpus]: {
    type: "object",
    properties: {
      count: {
        type: "integer",
        minimum: 1,
        description: "How many GPUs are needed (default: the gpuPilot.pick.count setting, 1).",
      },
      minFreeMemoryMiB: {
        type: "number",
        minimum: 0,
        description:
          "Each GPU needs at least this much free memory, MiB (default: gpuPilot.pick.minFreeMemoryMiB, 1024). 0: no limit.",
      },
      maxUtilizationPercent: {
        type: "number",
        minimum: 0,
        maximum: 100,
        description:
          "Each GPU may be at most this busy (utilization.gpu), % (default: gpuPilot.pick.maxUtilizationPercent, 10). 100: no limit.",
      },
      excludeBusyWithOtherUsers: {
        type: "boolean",
        description: "Skip GPUs on which another user's process runs (default: true).",
      },
      waitSeconds: {
        type: "integer",
        minimum: 0,
        maximum: PICK_WAIT_MAX_S,
        description:
          "Wait up to this many seconds until enough GPUs are free and unclaimed, then claim them all at once (default 0: answer now). Picked GPUs are claimed in the machine-wide GPU claims ledger, so other GPU Pilots skip them.",
      },
    },
    additionalProperties: false,
  },
  [TOOL.checkFile]: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description:
          "The file to check: a .py file, a .ipynb notebook, a Dockerfile, compose file or Kubernetes YAML; absolute, or relative to the workspace folder.",
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  [TOOL.runOnGpus]: {
    type: "object",
    properties: {
      path: { type: "string", description: "The Python file to run; absolute, or relative to the workspace folder." },
      gpus: {
        type: "array",
        items: { type: "string" },
        minItems: 1,
        description:
          'The GPUs to run on: nvidia-smi indices ("0", "1") or GPU-/MIG- UUIDs, as gpu-pilot_listGpus or gpu-pilot_pickGpus gives them.',
      },
      launcher: {
        type: "string",
        enum: [...AGENT_LAUNCHERS],
        description: "python (one process, default), torchrun or accelerate (one process per GPU), deepspeed.",
      },
      args: {
        type: "array",
        items: { type: "string" },
        description: "Arguments after the file, one element each (no shell: nothing is expanded).",
      },
      timeoutSeconds: {
        type: "integer",
        minimum: 1,
        maximum: RUN_TIMEOUT_MAX_S,
        description: `Stop the run after this many seconds (default ${RUN_TIMEOUT_DEFAULT_S}).`,
      },
    },
    required: ["path", "gpus"],
    additionalProperties: false,
  },
};

/** One-paragraph descriptions (the model reads them to decide when to call a tool). */
export const DESCRIPTIONS: Record<ToolName, string> = {
  [TOOL.listGpus]:
    "List this machine's NVIDIA GPUs as nvidia-smi reports them now: index, UUID, name, memory used/total (MiB), utilisation %, temperature, the compute processes on each (pid, user, GPU memory, command line) and whether the GPU is free by GPU Pilot's pick policy (and if not, why). Use it before choosing GPUs for a run; never guess GPU ids.",
  [TOOL.pickGpus]:
    "Choose free GPUs for a job: given how many GPUs, the minimum free memory (MiB) and the maximum utilisation (%), returns the GPUs to use and the exact environment to start the job with (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER=PCI_BUS_ID), or why no set of GPUs fits (each GPU's reason). Changes nothing.",
  [TOOL.checkFile]:
    "Check a Python file, notebook, Dockerfile, compose file or Kubernetes YAML for GPU device-selection mistakes (GPU Pilot's rules GPU001-GPU020: CUDA_VISIBLE_DEVICES set after CUDA initialisation, out-of-range device ordinals, hidden GPUs, ...). Returns each finding with code, severity, message, line and the fix text when there is one. Use it after editing code that selects GPUs.",
  [TOOL.runOnGpus]:
    "Run a Python file on the given GPUs (CUDA_VISIBLE_DEVICES set to them, CUDA_DEVICE_ORDER=PCI_BUS_ID) with a launcher (python, torchrun, accelerate, deepspeed), wait for it to end and return its exit code and the last lines of its output. Executes code: the user confirms each run; refused in an untrusted workspace.",
};

/** A validated input, or the reason it is not one. */
export type Checked<T> = { value: T } | { error: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Input objects: undefined/null count as `{}`; unknown keys are refused (a typo would otherwise be silently ignored). */
function fields(input: unknown, tool: ToolName): Checked<Record<string, unknown>> {
  if (input === undefined || input === null) return { value: {} };
  if (!isObject(input))
    return { error: `${tool}: the input must be an object, not ${Array.isArray(input) ? "an array" : typeof input}` };
  const known = Object.keys((INPUT_SCHEMAS[tool].properties ?? {}) as Record<string, unknown>);
  const unknown = Object.keys(input).filter((k) => !known.includes(k));
  if (unknown.length)
    return {
      error: `${tool}: unknown input field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}${known.length ? ` (known: ${known.join(", ")})` : " (it takes none)"}`,
    };
  return { value: input };
}

/** Checks gpu-pilot_listGpus's input (none). */
export function checkListInput(input: unknown): Checked<Record<string, never>> {
  const f = fields(input, TOOL.listGpus);
  return "error" in f ? f : { value: {} };
}

/**
 * Checks gpu-pilot_pickGpus's input; absent fields come from `defaults` (the `gpuPilot.pick.*`
 * settings, or DEFAULT_PICK_POLICY).
 */
export function checkPickInput(input: unknown, defaults: PickPolicy): Checked<PickPolicy & { waitSeconds: number }> {
  const f = fields(input, TOOL.pickGpus);
  if ("error" in f) return f;
  const v = f.value;
  const num = (k: string, ok: (n: number) => boolean, what: string): string | undefined => {
    if (v[k] === undefined) return undefined;
    return typeof v[k] === "number" && Number.isFinite(v[k]) && ok(v[k])
      ? undefined
      : `${TOOL.pickGpus}: ${k} must be ${what}, not ${JSON.stringify(v[k])}`;
  };
  const problem =
    num("count", (n) => Number.isInteger(n) && n >= 1, "a whole number ≥ 1") ??
    num("minFreeMemoryMiB", (n) => n >= 0, "a number of MiB ≥ 0") ??
    num("maxUtilizationPercent", (n) => n >= 0 && n <= 100, "a percentage from 0 to 100") ??
    num(
      "waitSeconds",
      (n) => Number.isInteger(n) && n >= 0 && n <= PICK_WAIT_MAX_S,
      `a whole number of seconds from 0 to ${PICK_WAIT_MAX_S}`,
    ) ??
    (v.excludeBusyWithOtherUsers !== undefined && typeof v.excludeBusyWithOtherUsers !== "boolean"
      ? `${TOOL.pickGpus}: excludeBusyWithOtherUsers must be true or false`
      : undefined);
  if (problem) return { error: problem };
  return {
    value: {
      ...normalizePolicy({ ...defaults, ...(v as Partial<PickPolicy>) }),
      waitSeconds: typeof v.waitSeconds === "number" ? v.waitSeconds : 0,
    },
  };
}

/** Checks gpu-pilot_checkFile's input: a non-empty `path` without NUL. */
export function checkCheckInput(input: unknown): Checked<{ path: string }> {
  const f = fields(input, TOOL.checkFile);
  if ("error" in f) return f;
  const p = f.value.path;
  if (typeof p !== "string" || p.trim() === "")
    return { error: `${TOOL.checkFile}: path must be a non-empty string (the file to check)` };
  if (p.includes("\0")) return { error: `${TOOL.checkFile}: path must not contain a NUL character` };
  return { value: { path: p } };
}

/** A checked run request (the GPUs are device ids, not yet matched to this machine: {@link resolveRunGpus}). */
export interface RunInput {
  path: string;
  gpus: string[];
  launcher: AgentLauncher;
  args: string[];
  timeoutSeconds: number;
}

/**
 * Why `file` cannot be run by gpu-pilot_runOnGpus, or undefined when it can: every launcher
 * (python, torchrun, accelerate, deepspeed) runs a Python file, so only `.py` files.
 */
export function notRunnable(file: string): string | undefined {
  return /\.py$/i.test(file) ? undefined : `${TOOL.runOnGpus} runs Python files (.py); ${file} is not one`;
}

/** Checks gpu-pilot_runOnGpus's input: path, gpus (device ids), launcher, args, timeoutSeconds. */
export function checkRunInput(input: unknown): Checked<RunInput> {
  const f = fields(input, TOOL.runOnGpus);
  if ("error" in f) return f;
  const v = f.value;
  const t = TOOL.runOnGpus;
  if (typeof v.path !== "string" || v.path.trim() === "" || v.path.includes("\0"))
    return { error: `${t}: path must be a non-empty string without NUL (the Python file to run)` };
  if (!Array.isArray(v.gpus) || v.gpus.length === 0)
    return {
      error: `${t}: gpus must be a non-empty array of GPU indices or UUIDs, e.g. ["0"] (see gpu-pilot_listGpus)`,
    };
  const gpus = v.gpus.map((g) => (typeof g === "string" ? g.trim() : typeof g === "number" ? String(g) : g));
  const bad = gpus.filter((g) => typeof g !== "string" || !isDeviceId(g));
  if (bad.length)
    return {
      error: `${t}: not a GPU index or UUID: ${bad.map((b) => JSON.stringify(b)).join(", ")}. Use nvidia-smi indices ("0", "1") or GPU-/MIG- UUIDs.`,
    };
  const launcher = v.launcher ?? "python";
  if (typeof launcher !== "string" || !(AGENT_LAUNCHERS as readonly string[]).includes(launcher))
    return { error: `${t}: launcher must be one of ${AGENT_LAUNCHERS.join(", ")}, not ${JSON.stringify(launcher)}` };
  const args = v.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string" || a.includes("\0")))
    return { error: `${t}: args must be an array of strings without NUL` };
  const timeout = v.timeoutSeconds ?? RUN_TIMEOUT_DEFAULT_S;
  if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1 || timeout > RUN_TIMEOUT_MAX_S)
    return { error: `${t}: timeoutSeconds must be a whole number from 1 to ${RUN_TIMEOUT_MAX_S}` };
  return {
    value: {
      path: v.path,
      gpus: [...new Set(gpus as string[])],
      launcher: launcher as AgentLauncher,
      args: args as string[],
      timeoutSeconds: timeout,
    },
  };
}

/**
 * Matches requested GPUs to this machine's inventory.
 * @returns the entries normalised per `selectBy` (index order), or an error naming each GPU this
 *   machine does not have, with the GPUs it does have.
 */
export function resolveRunGpus(
  gpus: readonly string[],
  inv: Inventory,
  selectBy: SelectBy = "index",
): Checked<string[]> {
  const mig = inv.mig ?? [];
  const unknown = gpus.filter((id) => {
    if (mig.some((m) => m.uuid.toLowerCase() === id.toLowerCase())) return false;
    const index = indexOfEntry(id, inv.gpus, mig);
    return index === undefined || !inv.gpus.some((g) => g.index === index);
  });
  if (unknown.length) {
    const have = inv.gpus.map((g) => `${g.index} (${g.uuid})`).join(", ") || "none";
    return { error: `${TOOL.runOnGpus}: this machine has no GPU ${unknown.join(", ")}; its GPUs are ${have}` };
  }
  return { value: normalizeSelection(gpus, inv.gpus, mig, selectBy) };
}

const mib = (n: number | null) => (n === null ? "?" : String(n));
const pct = (n: number | null) => (n === null ? "unknown" : `${n}%`);
/** One line: control characters (nvidia-smi names and command lines may hold newlines, ESC) written as visible escapes. */
const oneLine = (s: string) => escapeControls(s.trim());

function policyText(p: PickPolicy): string {
  return `at least ${p.minFreeMemoryMiB} MiB free, at most ${p.maxUtilizationPercent}% busy${p.excludeBusyWithOtherUsers ? ", no other user's process" : ""}`;
}

function processLine(app: ComputeApp, details: ProcessDetails | undefined): string {
  const cmd = oneLine(details?.commandLine || app.processName);
  return `    pid ${app.pid} · user ${details?.user ?? "unknown"} · ${app.usedMemoryMiB === null ? "? MiB" : `${app.usedMemoryMiB} MiB`} · ${cmd}`;
}

/**
 * gpu-pilot_listGpus's text: a header line, then per GPU one line of numbers, one line saying
 * whether it is free by `policy` (and why not), and one line per compute process.
 * SM activity is not in nvidia-smi's query (DCGM's DCGM_FI_PROF_SM_ACTIVE is): the header says so.
 */
export function formatGpuList(
  inv: Inventory,
  details: readonly ProcessDetails[],
  policy: PickPolicy,
  claimedByOthers: ReadonlyMap<string, string> = new Map(),
): string {
  if (inv.gpus.length === 0) return "nvidia-smi lists no GPUs on this machine.";
  const all = pickFreeGpus(inv.gpus, inv.apps, details, { ...policy, count: inv.gpus.length }, claimedByOthers);
  const byUuid = new Map(all.candidates.map((c) => [c.gpu.uuid, c]));
  const byPid = new Map(details.map((d) => [d.pid, d]));
  const lines = [
    `${inv.gpus.length} GPU${inv.gpus.length === 1 ? "" : "s"} (nvidia-smi at ${new Date(inv.takenAt).toISOString()}; free means: ${policyText(policy)}; SM activity: unknown, nvidia-smi does not report it):`,
  ];
  for (const g of inv.gpus) {
    lines.push(gpuLine(g));
    const reasons = byUuid.get(g.uuid)?.reasons ?? [];
    lines.push(reasons.length === 0 ? "  free: yes" : `  free: no (${reasons.join("; ")})`);
    const apps = inv.apps.filter((a) => a.gpuUuid.toLowerCase() === g.uuid.toLowerCase());
    lines.push(apps.length === 0 ? "  processes: none" : "  processes:");
    for (const a of apps) lines.push(processLine(a, byPid.get(a.pid)));
  }
  for (const m of inv.mig ?? [])
    lines.push(`MIG device ${m.uuid}: ${m.profile} on GPU ${m.gpuIndex} (device ${m.device})`);
  if (inv.problems.length) lines.push(`nvidia-smi problems: ${inv.problems.map(oneLine).join("; ")}`);
  return lines.join("\n");
}

function gpuLine(g: Gpu): string {
  return `GPU ${g.index} · ${oneLine(g.name)} · ${g.uuid} · memory ${mib(g.memoryUsedMiB)}/${mib(g.memoryTotalMiB)} MiB used (${mib(g.memoryFreeMiB)} MiB free) · utilisation ${pct(g.utilizationGpuPercent)} · temperature ${g.temperatureC === null ? "unknown" : `${g.temperatureC} °C`}${g.lost ? " · LOST (fell off the bus)" : ""}`;
}

/** What {@link formatPick} says, as data too (tests, the e2e). */
export interface PickOutcome {
  /** CUDA_VISIBLE_DEVICES entries, per `selectBy`; empty when none fits. */
  ids: string[];
  text: string;
}

/**
 * gpu-pilot_pickGpus's answer: the picked GPUs and the environment lines to use, or (fewer GPUs
 * eligible than asked) that none fits, with each GPU's reason. Nothing partial is offered.
 */
export function formatPick(
  result: PickResult,
  inv: Inventory,
  policy: PickPolicy,
  selectBy: SelectBy = "index",
  claims: { held?: string; note?: string } = {},
): PickOutcome {
  const skipped = result.candidates
    .filter((c) => c.reasons.length > 0)
    .map((c) => `  GPU ${c.gpu.index}: ${c.reasons.join("; ")}`);
  if (result.short) {
    const eligible = result.candidates.length - skipped.length;
    return {
      ids: [],
      text: [
        `No ${policy.count} GPU${policy.count === 1 ? "" : "s"} fit (${policyText(policy)}): ${eligible} of ${inv.gpus.length} GPU${inv.gpus.length === 1 ? "" : "s"} qualif${eligible === 1 ? "ies" : "y"}.`,
        ...(skipped.length ? ["Why the others do not:", ...skipped] : []),
        ...(claims.note ? [`Claims: ${claims.note}.`] : []),
        "Ask for fewer GPUs, less free memory or a higher utilisation limit, or wait for GPUs to become free (waitSeconds).",
      ].join("\n"),
    };
  }
  const ids = normalizeSelection(
    result.picked.map((g) => String(g.index)),
    inv.gpus,
    inv.mig ?? [],
    selectBy,
  );
  return {
    ids,
    text: [
      `Use GPU${result.picked.length === 1 ? "" : "s"} ${result.picked.map((g) => `${g.index} (${oneLine(g.name)}, ${mib(g.memoryFreeMiB)} MiB free, ${pct(g.utilizationGpuPercent)} busy)`).join(", ")}.`,
      "Start the job with this environment (set before the process starts, not inside it after importing a framework):",
      `CUDA_VISIBLE_DEVICES=${ids.join(",")}`,
      "CUDA_DEVICE_ORDER=PCI_BUS_ID",
      ...(claims.held
        ? [`Claimed for ${claims.held} in the machine-wide GPU claims ledger: other GPU Pilots skip these GPUs.`]
        : []),
      ...(skipped.length ? ["Not picked:", ...skipped] : []),
    ].join("\n"),
  };
}

const where = (f: { line: number; column: number; cell?: number }) =>
  `${f.cell !== undefined ? `cell ${f.cell}, ` : ""}line ${f.line}, column ${f.column}`;

/** gpu-pilot_checkFile's text: a count line, then per finding its place, severity, code, message, fix and documentation. */
export function formatFindings(displayPath: string, findings: readonly AgentFinding[]): string {
  if (findings.length === 0) return `${displayPath}: no GPU Pilot findings.`;
  const lines = [`${displayPath}: ${findings.length} finding${findings.length === 1 ? "" : "s"}:`];
  for (const f of findings) {
    lines.push(`- ${where(f)}: ${f.severity} ${f.code}: ${oneLine(f.message.replace(/\s*[\r\n]+\s*/g, " "))}`);
    if (f.fix) {
      lines.push(`  fix (${f.fix.safe ? "safe" : "unsafe: review it"}): ${oneLine(f.fix.title)}`);
      for (const e of f.fix.edits) {
        const span = `${e.cell !== undefined ? `cell ${e.cell}, ` : ""}${e.line}:${e.column}-${e.endLine}:${e.endColumn}`;
        lines.push(
          e.newText === ""
            ? `    delete ${span}`
            : `    ${e.line === e.endLine && e.column === e.endColumn ? "insert at" : "replace"} ${span} with ${JSON.stringify(e.newText)}`,
        );
      }
    }
    if (f.url) lines.push(`  docs: ${f.url}`);
  }
  return lines.join("\n");
}

/** The last `n` lines of `text` (a trailing line break does not count as a line). */
export function lastLines(text: string, n = OUTPUT_TAIL_LINES): { lines: string[]; dropped: number } {
  const all = text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  if (all.length === 1 && all[0] === "") return { lines: [], dropped: 0 };
  return { lines: all.slice(-n), dropped: Math.max(0, all.length - n) };
}

/** How a run ended, as {@link formatRunResult} reads it. */
export interface RunEnd {
  /** The exit code; null when a signal ended it or it never started. */
  exitCode: number | null;
  signal?: string;
  /** Why it could not start. */
  error?: string;
  /** True when it was stopped because it ran past `timeoutSeconds`. */
  timedOut?: boolean;
}

/**
 * gpu-pilot_runOnGpus's text: what ran (on an AMD `vendor`, the selection is named as
 * ROCR_VISIBLE_DEVICES, the variable the run got), how it ended, then the last output lines.
 */
export function formatRunResult(
  what: { file: string; launcher: string; visibleDevices: string; vendor?: GpuVendor; command: readonly string[] },
  end: RunEnd,
  output: string,
  timeoutSeconds: number,
): string {
  const how =
    end.error !== undefined
      ? `could not start: ${oneLine(end.error)}`
      : end.timedOut
        ? `stopped after ${timeoutSeconds} s (timeoutSeconds)${end.signal ? ` by ${end.signal}` : ""}`
        : end.signal
          ? `ended by ${end.signal}`
          : end.exitCode === null
            ? "ended without an exit code"
            : `exit code ${end.exitCode}`;
  const tail = lastLines(output);
  const on =
    what.vendor === "amd"
      ? `ROCR_VISIBLE_DEVICES=${what.visibleDevices}`
      : `CUDA_VISIBLE_DEVICES=${what.visibleDevices} (CUDA_DEVICE_ORDER=PCI_BUS_ID)`;
  return [
    `Ran ${what.file} with ${what.launcher} on ${on}: ${how}.`,
    `exitCode: ${end.exitCode === null ? "none" : end.exitCode}`,
    `command: ${JSON.stringify(what.command)}`,
    tail.lines.length === 0
      ? "output: (none)"
      : `last ${tail.lines.length} line${tail.lines.length === 1 ? "" : "s"} of output${tail.dropped ? ` (${tail.dropped} earlier lines left out)` : ""}:`,
    ...tail.lines,
  ].join("\n");
}

/**
 * The confirmation VS Code shows before gpu-pilot_runOnGpus runs anything: one line, with line
 * breaks, other controls and bidirectional overrides (U+202E) in the file name, GPUs and arguments
 * written as escapes (escapeControls), so a name cannot fake a second sentence or reorder the text.
 */
export function runConfirmation(
  file: string,
  launcher: string,
  gpuText: string,
  args: readonly string[],
): { title: string; message: string } {
  const argText = args.length ? `, arguments ${escapeControls(JSON.stringify(args))}` : "";
  return {
    title: "Run a file on GPUs?",
    message: `GPU Pilot will run ${escapeControls(file)} with ${escapeControls(launcher)} on ${escapeControls(gpuText)}${argText}. This executes the file's code.`,
  };
}

/** `text` as Markdown that shows every character as typed (`~~`, `*`, backticks... escaped with a backslash). */
export function confirmationMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~=:^$&]/g, "\\$&");
}
