/**
 * What the language server is told about a notebook's running kernel (issue 42 item 2): the
 * client asks the kernel with the probe (probe.ts) through the Jupyter extension's kernel API and
 * sends the facts as the notification `gpuPilot/runningKernel` (commandIds.ts); the server's notebook lint
 * (GPU001) and its hover on `"cuda:0"` read them. Shared by both processes: no `vscode`, no LSP
 * package (the method is a plain string both sides pass to their connection).
 */
import { cudaInitialised, type KernelProbe } from "./probe";

export { RESTART_KERNEL_COMMAND, RUNNING_KERNEL_METHOD } from "./commandIds";

/** The frameworks the probe reports, in its order. */
export const KERNEL_FRAMEWORKS = ["torch", "jax", "tensorflow", "cupy"] as const;
/** One of {@link KERNEL_FRAMEWORKS}. */
export type KernelFramework = (typeof KERNEL_FRAMEWORKS)[number];

/** The running kernel of one notebook, as the probe saw it. */
export interface RunningKernelFacts {
  /** The frameworks that initialised CUDA in the kernel (empty: none did yet, startup variables still count). */
  initialisedBy: KernelFramework[];
  /** `CUDA_VISIBLE_DEVICES` in the kernel's environment (null: unset). */
  cudaVisibleDevices: string | null;
  /** `CUDA_DEVICE_ORDER` in the kernel's environment (null: unset). */
  cudaDeviceOrder: string | null;
  /** `ROCR_VISIBLE_DEVICES` in the kernel's environment (null: unset). */
  rocrVisibleDevices: string | null;
  /**
   * What a GPU Pilot kernel's launcher applied at this start (kernelLauncher.ts
   * `GPU_PILOT_KERNEL_DEVICES`): the ids joined by commas, `""` when it applied none, null for a
   * kernel GPU Pilot did not launch.
   */
  launcherDevices: string | null;
  /** torch's current device index once torch initialised CUDA (`cuda:N` of bare `"cuda"`); undefined otherwise. */
  torchCurrent?: number;
  /** The kernel's process id. */
  pid: number;
}

/** Params of {@link RUNNING_KERNEL_METHOD}: the notebook's URI and its kernel's facts, or null when unknown (no access, no kernel, the probe timed out). */
export interface RunningKernelParams {
  notebook: string;
  kernel: RunningKernelFacts | null;
}

/** The facts a probe report gives. Never throws. */
export function factsOfProbe(p: KernelProbe): RunningKernelFacts {
  const env = (k: string): string | null => (typeof p.env[k] === "string" ? p.env[k] : null);
  const torch = p.frameworks.torch;
  return {
    initialisedBy: cudaInitialised(p) ? KERNEL_FRAMEWORKS.filter((f) => p.frameworks[f].initialised === true) : [],
    cudaVisibleDevices: env("CUDA_VISIBLE_DEVICES"),
    cudaDeviceOrder: env("CUDA_DEVICE_ORDER"),
    rocrVisibleDevices: env("ROCR_VISIBLE_DEVICES"),
    launcherDevices: env("GPU_PILOT_KERNEL_DEVICES"),
    ...(torch.initialised === true && typeof torch.current === "number" ? { torchCurrent: torch.current } : {}),
    pid: p.pid,
  };
}

const stringOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";

/**
 * Checks the params of a {@link RUNNING_KERNEL_METHOD} notification (anything a peer sent).
 * @returns the params, or a problem in words (the first field of the wrong shape).
 */
export function checkRunningKernelParams(v: unknown): { value: RunningKernelParams } | { problem: string } {
  if (typeof v !== "object" || v === null) return { problem: "params must be an object" };
  const o = v as Record<string, unknown>;
  if (typeof o.notebook !== "string" || o.notebook === "")
    return { problem: "params.notebook must be a non-empty string (a notebook URI)" };
  if (o.kernel === null) return { value: { notebook: o.notebook, kernel: null } };
  const k = o.kernel as Record<string, unknown> | undefined;
  if (typeof k !== "object" || k === null) return { problem: "params.kernel must be an object or null" };
  if (
    !Array.isArray(k.initialisedBy) ||
    !k.initialisedBy.every((f) => (KERNEL_FRAMEWORKS as readonly unknown[]).includes(f))
  ) {
    return { problem: `params.kernel.initialisedBy must list frameworks of ${KERNEL_FRAMEWORKS.join(", ")}` };
  }
  for (const key of ["cudaVisibleDevices", "cudaDeviceOrder", "rocrVisibleDevices", "launcherDevices"]) {
    if (!stringOrNull(k[key])) return { problem: `params.kernel.${key} must be a string or null` };
  }
  if (typeof k.pid !== "number" || !Number.isInteger(k.pid)) return { problem: "params.kernel.pid must be an integer" };
  if (
    k.torchCurrent !== undefined &&
    (typeof k.torchCurrent !== "number" || !Number.isInteger(k.torchCurrent) || k.torchCurrent < 0)
  ) {
    return { problem: "params.kernel.torchCurrent must be a non-negative integer when present" };
  }
  const kernel: RunningKernelFacts = {
    initialisedBy: [...k.initialisedBy] as KernelFramework[],
    cudaVisibleDevices: k.cudaVisibleDevices as string | null,
    cudaDeviceOrder: k.cudaDeviceOrder as string | null,
    rocrVisibleDevices: k.rocrVisibleDevices as string | null,
    launcherDevices: k.launcherDevices as string | null,
    ...(typeof k.torchCurrent === "number" ? { torchCurrent: k.torchCurrent } : {}),
    pid: k.pid,
  };
  return { value: { notebook: o.notebook, kernel } };
}

/** The framework names for a message: `torch`, `torch and JAX`, `torch, JAX and TensorFlow`. */
export function frameworksText(fws: readonly KernelFramework[]): string {
  const names = fws.map((f) => ({ torch: "torch", jax: "JAX", tensorflow: "TensorFlow", cupy: "CuPy" })[f]);
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * The status bar's words for the GPUs a kernel started with: `Kernel: GPU 1`, `Kernel: GPUs 0,1`,
 * `Kernel: all GPUs` (nothing restricted what it sees), `Kernel: no GPU` (an empty list hides every GPU).
 * @param devices the visible-devices value the kernel started with (null: unset).
 */
export function kernelGpusText(devices: string | null): string {
  if (devices === null) return "Kernel: all GPUs";
  const ids = devices
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) return "Kernel: no GPU";
  return ids.length === 1 ? `Kernel: GPU ${ids[0]}` : `Kernel: GPUs ${ids.join(",")}`;
}
