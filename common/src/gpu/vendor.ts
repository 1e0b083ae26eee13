/**
 * Which vendor's GPUs this machine has, from the management tools on PATH: NVIDIA when `nvidia-smi`
 * is there, AMD ROCm when `amd-smi` or `rocm-smi` is there and `nvidia-smi` is not. No
 * `vscode` import; nothing is run, the tools are only looked up.
 */
import type { GpuVendor } from "../run/launch";

/** The tools that decide, in the order they are looked for. */
export const VENDOR_TOOLS = { nvidia: ["nvidia-smi"], amd: ["amd-smi", "rocm-smi"] } as const;

/** What {@link detectVendor} found: the vendor, and the AMD tool to read when it is AMD. */
export interface VendorFacts {
  vendor: GpuVendor;
  /** The absolute path of amd-smi (preferred) or rocm-smi, when the vendor is `amd`. */
  amdTool?: { name: "amd-smi" | "rocm-smi"; path: string };
}

/**
 * The vendor of this machine. `find(name)` returns a tool's absolute path or undefined (run/which.ts
 * `findProgram`). With neither kind of tool, or with both, it is `nvidia` (the launcher's behaviour
 * before vendors were known: CUDA_VISIBLE_DEVICES).
 */
export function detectVendor(find: (name: string) => string | undefined): VendorFacts {
  if (find("nvidia-smi")) return { vendor: "nvidia" };
  for (const name of VENDOR_TOOLS.amd) {
    const p = find(name);
    if (p) return { vendor: "amd", amdTool: { name, path: p } };
  }
  return { vendor: "nvidia" };
}
