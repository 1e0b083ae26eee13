/**
 * Messages and setting shapes shared by the client (extension host) and the language server.
 * Imports only the LSP protocol package (and the run facts' types, erased at build): no `vscode`, no transport.
 */
import { NotificationType, RequestType } from "vscode-languageserver-protocol";
import type { RunFacts } from "../run/runFacts";

/** One physical GPU as nvidia-smi reports it (PCI bus order, the order nvidia-smi numbers in). */
export interface InventoryGpu {
  /** nvidia-smi index (PCI bus order; nvidia-smi ignores CUDA_VISIBLE_DEVICES). */
  index: number;
  /** `GPU-xxxxxxxx-...` */
  uuid: string;
  name: string;
  /** e.g. `00000000:00:07.0` */
  pciBusId: string;
  /** MiB */
  memoryTotalMiB: number | null;
  /** MiB */
  memoryFreeMiB: number | null;
}

/** The machine's GPUs and the user's selection (GPU Pilot's picker), sent by the client. */
export interface InventoryParams {
  /** null when nvidia-smi could not be run: machine-aware rules stay silent. */
  gpus: InventoryGpu[] | null;
  /** The ticked GPUs as CUDA_VISIBLE_DEVICES entries (indices or UUIDs), in order. */
  selection: string[];
}

export namespace InventoryNotification {
  export const method = "gpuPilot/inventory";
  export const type = new NotificationType<InventoryParams>(method);
}

/** Params of {@link RunFactsRequest}: the document's URI (for its pyproject settings) and the text to analyse. */
export interface RunFactsParams {
  uri: string;
  /** The Python source as it will run (the saved document's text). */
  text: string;
}

/** Result of {@link RunFactsRequest}: the engine's facts, or why the text could not be analysed (in words). */
export type RunFactsResult = { ok: true; facts: RunFacts } | { ok: false; error: string };

/**
 * `gpuPilot/runFacts` (client → server): what the checks before a run need to know about a Python
 * script (server/src/engine/runFacts.ts computes it, common/src/run/runFacts.ts types it): launcher-set variables it reads, env:// init_process_group calls,
 * its CUDA_VISIBLE_DEVICES writes with the engine's verdict on whether each takes effect (GPU001).
 * The client asks instead of bundling a second copy of the parser.
 */
export namespace RunFactsRequest {
  export const method = "gpuPilot/runFacts";
  export const type = new RequestType<RunFactsParams, RunFactsResult, void>(method);
}

/**
 * Checks the shape of a {@link RunFactsResult} a peer sent (the client does not trust it blindly).
 * @returns the result, or an `ok: false` result that says what was wrong.
 */
export function checkRunFactsResult(v: unknown): RunFactsResult {
  if (!isObject(v)) return { ok: false, error: "the answer is not an object" };
  if (v.ok === false) return { ok: false, error: typeof v.error === "string" ? v.error : "no reason given" };
  const f = v.facts;
  const lines = (a: unknown, fields: (x: Record<string, unknown>) => boolean) =>
    Array.isArray(a) &&
    a.every(
      (x) =>
        isObject(x) &&
        Number.isSafeInteger(x.line) &&
        (x.line as number) >= 0 &&
        typeof x.text === "string" &&
        fields(x),
    );
  if (
    v.ok !== true ||
    !isObject(f) ||
    !lines(f.distributedReads, (x) => typeof x.variable === "string" && typeof x.withDefault === "boolean") ||
    !lines(f.envInitProcessGroup, () => true) ||
    !lines(
      f.visibleDevicesWrites,
      (x) =>
        (x.value === null || typeof x.value === "string") && (x.noEffect === null || typeof x.noEffect === "string"),
    )
  ) {
    return {
      ok: false,
      error: "the answer is not run facts (distributedReads, envInitProcessGroup, visibleDevicesWrites)",
    };
  }
  return { ok: true, facts: f as unknown as RunFacts };
}

/** Lint settings resolved on the client; the server never parses raw settings. */
export interface LintSettings {
  /** Modules that initialise CUDA when imported (gpuPilot.eagerInitModules). */
  eagerInitModules: string[];
}

/** Editor-side lint settings, resolved on the client; sent at start and whenever they change. */
export interface EditorLintSettings extends LintSettings {
  /** gpuPilot.lint.select: codes or prefixes to enable (empty: all). */
  select: string[];
  /** gpuPilot.lint.ignore: codes or prefixes to disable. */
  ignore: string[];
  /** gpuPilot.lint.severity: severity per code. */
  severity: Record<string, "error" | "warning" | "information" | "hint">;
  /** gpuPilot.configurationPreference (Ruff's semantics). */
  configurationPreference: "editorFirst" | "filesystemFirst" | "editorOnly";
  /** gpuPilot.inlayHints.physicalDevice: `→ GPU n` after device literals. */
  inlayHints: boolean;
  /** gpuPilot.maxFileSizeKB: larger files are not linted (one information diagnostic says so); 0: no limit. */
  maxFileSizeKB?: number;
  /** gpuPilot.lint.preview: also run the preview rules and checks (null or absent: not set, pyproject decides). */
  preview?: boolean | null;
  /** gpuPilot.lint.targetTorch: the torch version the code runs on ("2.11"; null or absent: not set). */
  targetTorch?: string | null;
}

// The client command that opens a rule's documentation page (argument: the rule code). It lives in
// commandIds.ts, which imports nothing: the client's entry bundle uses it without pulling in the
// LSP protocol library this file imports, which would slow the client's load.
export { SHOW_RULE_DOC_COMMAND } from "./commandIds";

export namespace SettingsNotification {
  export const method = "gpuPilot/settings";
  export const type = new NotificationType<Partial<EditorLintSettings>>(method);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
const isMiB = (v: unknown): v is number | null => v === null || (typeof v === "number" && Number.isFinite(v) && v >= 0);
const SEVERITY_NAMES = new Set(["error", "warning", "information", "hint"]);
const PREFERENCES = new Set(["editorFirst", "filesystemFirst", "editorOnly"]);

/**
 * Checks the shape of an {@link InventoryNotification}'s params (or anything else a peer sent).
 * @returns the params, or `problem` (in words) when they are not {@link InventoryParams}: `gpus`
 *   null or an array of GPUs (index a whole number, uuid/name/pciBusId strings, MiB null or a
 *   finite number ≥ 0), `selection` an array of strings.
 */
export function checkInventoryParams(v: unknown): { value: InventoryParams } | { problem: string } {
  if (!isObject(v)) return { problem: "not an object" };
  if (!isStringArray(v.selection)) return { problem: "selection is not an array of strings" };
  if (v.gpus !== null) {
    if (!Array.isArray(v.gpus)) return { problem: "gpus is neither null nor an array" };
    for (const [i, g] of v.gpus.entries()) {
      const ok =
        isObject(g) &&
        Number.isSafeInteger(g.index) &&
        (g.index as number) >= 0 &&
        typeof g.uuid === "string" &&
        typeof g.name === "string" &&
        typeof g.pciBusId === "string" &&
        isMiB(g.memoryTotalMiB) &&
        isMiB(g.memoryFreeMiB);
      if (!ok)
        return { problem: `gpus[${i}] is not a GPU (index, uuid, name, pciBusId, memoryTotalMiB, memoryFreeMiB)` };
    }
  }
  return {
    value: {
      gpus: v.gpus === null ? null : (v.gpus as InventoryGpu[]).map((g) => ({ ...g })),
      selection: [...v.selection],
    },
  };
}

/**
 * Keeps the well-formed keys of settings sent at start (`initializationOptions`) or by a
 * {@link SettingsNotification}; each key of the wrong shape is dropped and named in `problems`.
 * Unknown keys are dropped silently (a newer client may send more).
 */
export function checkEditorSettings(v: unknown): { value: Partial<EditorLintSettings>; problems: string[] } {
  const value: Partial<EditorLintSettings> = {};
  const problems: string[] = [];
  if (v === undefined || v === null) return { value, problems };
  if (!isObject(v)) return { value, problems: ["the settings are not an object"] };
  const take = <K extends keyof EditorLintSettings>(key: K, ok: (x: unknown) => boolean, what: string) => {
    if (!(key in v) || v[key] === undefined) return;
    if (ok(v[key])) value[key] = v[key] as EditorLintSettings[K];
    else problems.push(`${key} is not ${what}`);
  };
  take("select", isStringArray, "an array of strings");
  take("ignore", isStringArray, "an array of strings");
  take("eagerInitModules", isStringArray, "an array of strings");
  take(
    "severity",
    (x) => isObject(x) && Object.values(x).every((s) => typeof s === "string" && SEVERITY_NAMES.has(s)),
    "an object of severities (error, warning, information, hint)",
  );
  take(
    "configurationPreference",
    (x) => typeof x === "string" && PREFERENCES.has(x),
    "editorFirst, filesystemFirst or editorOnly",
  );
  take("inlayHints", (x) => typeof x === "boolean", "true or false");
  take("maxFileSizeKB", (x) => typeof x === "number" && Number.isFinite(x) && x >= 0, "a number of KB ≥ 0");
  take("preview", (x) => typeof x === "boolean" || x === null, "true, false or null");
  take(
    "targetTorch",
    (x) => x === null || (typeof x === "string" && /^\d+\.\d+(\.\d+)?$/.test(x)),
    'a version such as "2.11" or null',
  );
  return { value, problems };
}

// ---- Agent tools: `gpu-pilot_checkFile` asks the server, the client bundles no parser ----

/** One edit of a fix, 1-based lines and columns (UTF-16 code units), end exclusive. */
export interface AgentEdit {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** 1-based notebook cell the edit is in; absent outside notebooks. */
  cell?: number;
  newText: string;
}

/** A finding as the agent tools report it: positions 1-based, the fix written out. */
export interface AgentFinding {
  /** `GPU001` ... (`GPU000`: the file was not linted, and why). */
  code: string;
  severity: "error" | "warning" | "information" | "hint";
  message: string;
  /** 1-based line (in the cell, for notebooks). */
  line: number;
  /** 1-based column. */
  column: number;
  /** 1-based notebook cell; absent outside notebooks. */
  cell?: number;
  /** The rule's documentation URL; absent for GPU000. */
  url?: string;
  /** The fix, when the rule has one: its title, whether it is safe (keeps the program's meaning), its edits. */
  fix?: { title: string; safe: boolean; edits: AgentEdit[] };
}

/** Params of {@link CheckFileRequest}: an absolute path of a .py, .ipynb, Dockerfile, compose file or Kubernetes YAML. */
export interface CheckFileParams {
  path: string;
}

/** Result of {@link CheckFileRequest}: the findings, or why the file could not be checked (missing, not a file, unreadable). */
export type CheckFileResult =
  | { ok: true; path: string; findings: AgentFinding[]; source: "editor" | "disk" }
  | { ok: false; path: string; error: string };

/** `gpuPilot/checkFile`: lints one file now (the open editor's text when it is open, else the file on disk). */
export namespace CheckFileRequest {
  export const method = "gpuPilot/checkFile";
  export const type = new RequestType<CheckFileParams, CheckFileResult, void>(method);
}
