/**
 * Typed getters for the `gpuPilot.*` settings of package.json. Each read is fresh (settings can
 * change at any time); values of the wrong type fall back to the default, numbers are clamped to
 * the documented minimum.
 */
import * as os from "node:os";
import * as vscode from "vscode";
import type { EditorLintSettings } from "../../common/src/lsp/protocol";

/** The settings section: every key below is `gpuPilot.<key>`. */
export const SECTION = "gpuPilot";

/**
 * Settings read when the language server starts (initializationOptions; the trace channel): a
 * change restarts it.
 */
export const SERVER_RESTART_KEYS: readonly string[] = [`${SECTION}.eagerInitModules`, `${SECTION}.trace.server`];

/** Settings the GPU view reads on each poll: a change triggers a refresh. */
export const NVIDIA_SMI_KEYS: readonly string[] = [`${SECTION}.nvidiaSmiPath`, `${SECTION}.nvidiaSmiTimeoutMs`];

/** package.json's default for gpuPilot.eagerInitModules: the init catalogue's list (server/src/engine/initCatalogue.json; frameworkTable.test.ts holds package.json to it). */
const DEFAULT_EAGER = [
  "torch_geometric",
  "deepspeed",
  "bitsandbytes",
  "transformer_engine",
  "python_vali",
  "unsloth",
  "catalyst",
  "paddle",
  "mmengine.device",
  "mmengine.runner",
  "mmengine.model",
  "mmengine.dist",
  "mmengine.dataset",
  "mmengine.hooks",
  "mmengine.optim",
  "mmengine.evaluator",
  "mmengine.visualization",
  "mmengine.hub",
  "mmengine.testing",
  "mmengine.structures",
  "mmengine.infer",
  "mmengine.utils.dl_utils",
  "mmengine._strategy",
  "pycuda.autoinit",
  "flash_attn",
  "monai",
];

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

function numberSetting(key: string, fallback: number, minimum: number): number {
  const v = cfg().get<unknown>(key);
  return typeof v === "number" && Number.isFinite(v) ? Math.max(minimum, v) : fallback;
}

/**
 * `gpuPilot.nvidiaSmiPath` (machine scope): the program to run, an absolute path or a bare name
 * looked up on PATH. A leading `~/` is expanded; empty or non-string values give `nvidia-smi`.
 */
export function nvidiaSmiPath(): string {
  const v = cfg().get<unknown>("nvidiaSmiPath");
  if (typeof v !== "string" || v.trim() === "") return "nvidia-smi";
  const p = v.trim();
  return p === "~" || p.startsWith("~/") ? os.homedir() + p.slice(1) : p;
}

/** `gpuPilot.refreshIntervalMs`: sampling period of the visible GPU view (`nvidia-smi -lms`), ms (default 1000, at least 250). */
export function refreshIntervalMs(): number {
  return numberSetting("refreshIntervalMs", 1000, 250);
}

/** `gpuPilot.history.minutes`: how far back the GPU History panel reaches, minutes (default 10, at least 1, at most 1440). */
export function historyMinutes(): number {
  return Math.min(1440, numberSetting("history.minutes", 10, 1));
}

/**
 * `gpuPilot.monitor.smActivity`: `auto` (default: stream SM activity with `nvidia-smi dmon
 * --gpm-metrics` while the GPU view or dashboard is visible, where the GPU and driver support it)
 * or `off`.
 */
export function smActivity(): "auto" | "off" {
  return cfg().get<unknown>("monitor.smActivity") === "off" ? "off" : "auto";
}

/** `gpuPilot.selectBy`: how ticked GPUs are written into CUDA_VISIBLE_DEVICES, `index` (default) or `uuid`. */
export function selectBy(): "index" | "uuid" {
  return cfg().get<unknown>("selectBy") === "uuid" ? "uuid" : "index";
}

/**
 * `gpuPilot.pick.*`: the "Pick Free GPUs" policy: `count` (GPUs), `minFreeMemoryMiB` (MiB),
 * `maxUtilizationPercent` (%), `excludeBusyWithOtherUsers`. Missing or malformed values are left
 * out (the policy's defaults apply).
 */
export function pickPolicy(): {
  count?: number;
  minFreeMemoryMiB?: number;
  maxUtilizationPercent?: number;
  excludeBusyWithOtherUsers?: boolean;
} {
  const n = (key: string) => {
    const v = cfg().get<unknown>(key);
    return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  };
  const b = cfg().get<unknown>("pick.excludeBusyWithOtherUsers");
  return {
    ...(n("pick.count") !== undefined ? { count: n("pick.count") } : {}),
    ...(n("pick.minFreeMemoryMiB") !== undefined ? { minFreeMemoryMiB: n("pick.minFreeMemoryMiB") } : {}),
    ...(n("pick.maxUtilizationPercent") !== undefined
      ? { maxUtilizationPercent: n("pick.maxUtilizationPercent") }
      : {}),
    ...(typeof b === "boolean" ? { excludeBusyWithOtherUsers: b } : {}),
  };
}

/** `gpuPilot.nvidiaSmiTimeoutMs`: limit of one nvidia-smi call, ms (default 5000, at least 500). */
export function nvidiaSmiTimeoutMs(): number {
  return numberSetting("nvidiaSmiTimeoutMs", 5000, 500);
}

/** `gpuPilot.eagerInitModules`: module names that initialise CUDA on import (non-empty strings only). */
export function eagerInitModules(): string[] {
  const v = cfg().get<unknown>("eagerInitModules");
  if (!Array.isArray(v)) return [...DEFAULT_EAGER];
  return v.filter((s): s is string => typeof s === "string" && s.trim() !== "").map((s) => s.trim());
}

/**
 * `gpuPilot.trace.server`: LSP message tracing. vscode-languageclient reads the value itself; the
 * client uses this to decide whether to create the trace channel.
 */
export function traceServer(): "off" | "messages" | "verbose" {
  const v = cfg().get<unknown>("trace.server");
  return v === "messages" || v === "verbose" ? v : "off";
}

/** Settings sent to the running server (SettingsNotification) when they change: no restart. */
export const LINT_KEYS: readonly string[] = [
  `${SECTION}.lint`,
  `${SECTION}.configurationPreference`,
  `${SECTION}.inlayHints`,
  `${SECTION}.maxFileSizeKB`,
];

const CODE = /^(GPU\d{0,3}|ALL)$/;
const SEVERITIES = new Set(["error", "warning", "information", "hint"]);

function codeList(key: string): string[] {
  const v = cfg().get<unknown>(key);
  return Array.isArray(v)
    ? v
        .filter((s): s is string => typeof s === "string" && CODE.test(s.trim().toUpperCase()))
        .map((s) => s.trim().toUpperCase())
    : [];
}

/** `gpuPilot.lint.severity`: code → severity; malformed entries are dropped. */
export function lintSeverity(): EditorLintSettings["severity"] {
  const v = cfg().get<unknown>("lint.severity");
  const out: EditorLintSettings["severity"] = {};
  if (v && typeof v === "object" && !Array.isArray(v)) {
    for (const [code, sev] of Object.entries(v as Record<string, unknown>)) {
      if (/^GPU\d{3}$/.test(code) && typeof sev === "string" && SEVERITIES.has(sev))
        out[code] = sev as EditorLintSettings["severity"][string];
    }
  }
  return out;
}

/** `gpuPilot.configurationPreference` (Ruff's semantics), default `editorFirst`. */
export function configurationPreference(): EditorLintSettings["configurationPreference"] {
  const v = cfg().get<unknown>("configurationPreference");
  return v === "filesystemFirst" || v === "editorOnly" ? v : "editorFirst";
}

/** `gpuPilot.maxFileSizeKB`: files over this many KB are not linted; 0: no limit. Default 2048. */
export function maxFileSizeKB(): number {
  return Math.floor(numberSetting("maxFileSizeKB", 2048, 0));
}

/** `gpuPilot.lint.preview`: true/false where the user set it, undefined at the default (pyproject decides). */
export function lintPreview(): boolean | undefined {
  const c = cfg();
  const i = typeof c.inspect === "function" ? c.inspect<unknown>("lint.preview") : undefined;
  const set = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  return typeof set === "boolean" ? set : undefined;
}

/** `gpuPilot.lint.targetTorch`: the torch version the code runs on ("2.11"), or undefined when empty or not a version. */
export function lintTargetTorch(): string | undefined {
  const v = cfg().get<unknown>("lint.targetTorch");
  return typeof v === "string" && /^\d+\.\d+(\.\d+)?$/.test(v.trim()) ? v.trim() : undefined;
}

/** The settings the language server needs, resolved here (the server never reads raw settings). */
export function lintSettings(): EditorLintSettings {
  return {
    eagerInitModules: eagerInitModules(),
    select: codeList("lint.select"),
    ignore: codeList("lint.ignore"),
    severity: lintSeverity(),
    configurationPreference: configurationPreference(),
    inlayHints: cfg().get<unknown>("inlayHints.physicalDevice") === true,
    maxFileSizeKB: maxFileSizeKB(),
    preview: lintPreview() ?? null,
    targetTorch: lintTargetTorch() ?? null,
  };
}

/** True when the change touches a setting in `keys`. */
export function affects(e: vscode.ConfigurationChangeEvent, keys: readonly string[]): boolean {
  return keys.some((k) => e.affectsConfiguration(k));
}

/**
 * `gpuPilot.claims.*`: whether picking GPUs claims them in the machine-wide ledger (`enabled`,
 * default true), the ledger folder (`directory`; empty: `$GPU_PILOT_CLAIMS_DIR`, else
 * `/tmp/gpu-pilot-claims`) and how long a claim lives without the window's heartbeat
 * (`ttlMinutes`, default 15, at least 1). docs/claims.md.
 */
export function claims(): { enabled: boolean; directory: string; ttlMs: number } {
  const dir = cfg().get<unknown>("claims.directory");
  return {
    enabled: cfg().get<unknown>("claims.enabled") !== false,
    directory: typeof dir === "string" ? dir : "",
    ttlMs: numberSetting("claims.ttlMinutes", 15, 1) * 60_000,
  };
}

/** `gpuPilot.monitor.idleHeldMinutes`: flag a process that holds GPU memory while its GPU does nothing for this long, minutes (default 10; 0: off). */
export function idleHeldMinutes(): number {
  return numberSetting("monitor.idleHeldMinutes", 10, 0);
}
