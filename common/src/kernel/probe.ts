/**
 * The running-kernel probe (its core): a short Python snippet to execute in a
 * notebook's kernel (silently) that says whether CUDA is already initialised there by torch, JAX,
 * TensorFlow or CuPy and which devices the kernel sees, and the parser of its one line of output.
 * The editor runs it through the Jupyter extension's kernel API (client/src/notebook/kernelProbe.ts)
 * and sends what it found to the language server (runningKernel.ts).
 *
 * Side-effect free: it imports nothing that is not already in `sys.modules` (every module is taken
 * from there, never imported), calls only what does not initialise CUDA, defines one function and
 * deletes it, and prints one line, `GPU_PILOT_PROBE {json}`. What it reads:
 * - torch: `torch.cuda.is_initialized()` (does not initialise); once initialised,
 *   `torch.cuda.device_count()` and the current device (reading them then changes nothing);
 *   never `device_count()` before (it initialises CUDA before torch 2.4: GPU Pilot's own rule).
 * - JAX: the backends jax/_src/xla_bridge.py caches in `_backends` (filled by the first use);
 *   once there, `jax.devices()`.
 * - TensorFlow: the eager context (tensorflow/python/eager/context.py `_context`) has a
 *   `_context_handle` once TF set up its devices.
 * - CuPy: no public "initialised" answer: `initialised` is null, `imported` true.
 * - The environment: CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, ROCR_VISIBLE_DEVICES,
 *   HIP_VISIBLE_DEVICES and GPU_PILOT_KERNEL_DEVICES (what a GPU Pilot kernel's launcher applied).
 */

/** The marker before the JSON on the probe's output line. */
export const PROBE_MARKER = "GPU_PILOT_PROBE ";

/** The probe's Python source (3.6+). */
export const KERNEL_PROBE_SOURCE = `def __gpu_pilot_probe():
    import sys
    m = sys.modules
    out = {"pid": m["os"].getpid(), "env": {}, "frameworks": {}}
    for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_PILOT_KERNEL_DEVICES"):
        out["env"][k] = m["os"].environ.get(k)
    def fw(name, probe):
        if name not in m:
            out["frameworks"][name] = {"imported": False, "initialised": False, "devices": None}
            return
        r = {"imported": True, "initialised": None, "devices": None}
        try:
            probe(m[name], r)
        except Exception as e:
            r["error"] = type(e).__name__ + ": " + str(e)[:200]
        out["frameworks"][name] = r
    def torch(t, r):
        r["initialised"] = bool(t.cuda.is_initialized())
        if r["initialised"]:
            r["devices"] = t.cuda.device_count()
            r["current"] = t.cuda.current_device()
    def jax(j, r):
        xb = m.get("jax._src.xla_bridge")
        r["initialised"] = bool(getattr(xb, "_backends", None))
        if r["initialised"]:
            r["devices"] = [str(d) for d in j.devices()]
    def tensorflow(tf, r):
        ctx = getattr(m.get("tensorflow.python.eager.context"), "_context", None)
        r["initialised"] = ctx is not None and getattr(ctx, "_context_handle", None) is not None
    def cupy(c, r):
        pass
    fw("torch", torch)
    fw("jax", jax)
    fw("tensorflow", tensorflow)
    fw("cupy", cupy)
    print("${PROBE_MARKER}" + m["json"].dumps(out), flush=True)
try:
    __gpu_pilot_probe()
finally:
    del __gpu_pilot_probe
`;

/** One framework's state in the kernel. */
export interface FrameworkState {
  /** In `sys.modules`. */
  imported: boolean;
  /** CUDA (or the framework's GPU runtime) initialised; null: cannot be told (CuPy) or the probe failed. */
  initialised: boolean | null;
  /** torch: the device count; JAX: the devices' names; null until initialised. */
  devices: number | string[] | null;
  /** torch: the current device index, once initialised. */
  current?: number;
  /** What went wrong while asking (the framework's own exception). */
  error?: string;
}

/** What the probe reports. */
export interface KernelProbe {
  pid: number;
  /** The selection variables as the kernel has them (null: unset). */
  env: Record<string, string | null>;
  frameworks: { torch: FrameworkState; jax: FrameworkState; tensorflow: FrameworkState; cupy: FrameworkState };
}

const FRAMEWORKS = ["torch", "jax", "tensorflow", "cupy"] as const;

function isFrameworkState(v: unknown): v is FrameworkState {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  const devices =
    o.devices === null ||
    typeof o.devices === "number" ||
    (Array.isArray(o.devices) && o.devices.every((d) => typeof d === "string"));
  return (
    typeof o.imported === "boolean" &&
    (o.initialised === null || typeof o.initialised === "boolean") &&
    devices &&
    (o.current === undefined || typeof o.current === "number") &&
    (o.error === undefined || typeof o.error === "string")
  );
}

/**
 * The probe's report in a kernel's stdout text (the first line that starts with {@link PROBE_MARKER}).
 * @returns the report, or undefined when there is no such line or its JSON is not the probe's shape.
 *   Never throws.
 */
export function parseKernelProbe(stdout: string): KernelProbe | undefined {
  const line = stdout.split(/\r?\n/).find((l) => l.startsWith(PROBE_MARKER));
  if (!line) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line.slice(PROBE_MARKER.length));
  } catch {
    return undefined;
  }
  const o = v as Record<string, unknown>;
  if (typeof o !== "object" || o === null || typeof o.pid !== "number" || typeof o.env !== "object" || o.env === null)
    return undefined;
  if (!Object.values(o.env).every((x) => x === null || typeof x === "string")) return undefined;
  const fws = o.frameworks as Record<string, unknown> | undefined;
  if (typeof fws !== "object" || fws === null || !FRAMEWORKS.every((f) => isFrameworkState(fws[f]))) return undefined;
  return v as KernelProbe;
}

/** True when some framework has initialised CUDA in the kernel: a startup variable written now has no effect there. */
export function cudaInitialised(p: KernelProbe): boolean {
  return FRAMEWORKS.some((f) => p.frameworks[f].initialised === true);
}
