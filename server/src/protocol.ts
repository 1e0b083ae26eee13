/**
 * Messages and setting shapes shared by the client (extension host) and the language server.
 * Imports only the LSP protocol package: no `vscode`, no transport.
 */
import { NotificationType } from "vscode-languageserver-protocol";

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
}

/** The client command that opens a rule's documentation page; argument: the rule code. */
export const SHOW_RULE_DOC_COMMAND = "gpuPilot.showRuleDoc";

export namespace SettingsNotification {
  export const method = "gpuPilot/settings";
  export const type = new NotificationType<Partial<EditorLintSettings>>(method);
}
