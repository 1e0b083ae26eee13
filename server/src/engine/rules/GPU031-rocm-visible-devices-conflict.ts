import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { rocmConflict } from "../rocmVisible";

/** The single literal value the file's module-level writes give `variable`, with its first write; null when none or several. */
function singleValue(writes: EnvWriteEvent[], variable: string): { value: string; write: EnvWriteEvent } | null {
  const ws = writes.filter((w) => w.variable === variable);
  const values = new Set(ws.map((w) => w.literal));
  if (ws.length === 0 || values.size !== 1 || values.has(null)) return null;
  return { value: ws[0].literal!, write: ws[0] };
}

/**
 * GPU031: ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES both set so that HIP's indices fall outside
 * what ROCR left (or HIP lists UUIDs); HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES set to different values.
 */
export const rule: PythonRule = {
  meta: {
    code: "GPU031",
    name: "rocm-visible-devices-conflict",
    severity: "error",
    fixable: false,
    // A HIP_VISIBLE_DEVICES access, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["HIP_VISIBLE_DEVICES"]),
    docs: {
      what: "Finds files that set both `ROCR_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES` (literal values) where an index of `HIP_VISIBLE_DEVICES` is not below the number of devices `ROCR_VISIBLE_DEVICES` lists, or where `HIP_VISIBLE_DEVICES` lists UUIDs; and files that set `HIP_VISIBLE_DEVICES` and `CUDA_VISIBLE_DEVICES` to different values (a warning).",
      follows:
        "The literal ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES values written by the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep (each variable must be given one value). Not followed: writes in functions the module never calls, computed values, and values set in the shell, a launcher or the container.",
      why: "On AMD GPUs the two variables are applied in sequence: the ROCm runtime first keeps the devices `ROCR_VISIBLE_DEVICES` lists, then HIP numbers those from 0 and keeps the ones `HIP_VISIBLE_DEVICES` names (ROCm documentation, 'GPU isolation techniques'). `ROCR_VISIBLE_DEVICES=2,3` with `HIP_VISIBLE_DEVICES=2` therefore names a third device that does not exist, and when no HIP index is in range every GPU is hidden. PyTorch on ROCm checks this when it counts devices and raises 'HIP_VISIBLE_DEVICES out of bounds index after applying ROCR_VISIBLE_DEVICES', or 'Cannot specify both ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES using UUIDs' (pytorch/pytorch#142292). AMD recommends `ROCR_VISIBLE_DEVICES` alone on Linux. HIP's documentation no longer lists `CUDA_VISIBLE_DEVICES` as an alias of `HIP_VISIBLE_DEVICES` (ROCm/rocm-systems#10473, 2026), and ROCm 7.14's profiler library aborts on 'Conflicting visibility between HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES' (pytorch/pytorch#190579), so the two set to different values is a warning. Documented, not measured here: there is no AMD GPU on the machine this project measures on.",
      example:
        'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "2,3"\nos.environ["HIP_VISIBLE_DEVICES"] = "2"  # GPU031: HIP index 2 of the 2 devices ROCR left\nimport torch\n',
      fix: 'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "2"  # physical GPU 2, as cuda:0\nimport torch\n',
      whenNotToCare:
        "Never for the out-of-range case on an AMD machine. The CUDA_VISIBLE_DEVICES warning does not matter on NVIDIA machines, where HIP_VISIBLE_DEVICES is not read.",
      references: [
        "ROCm documentation, GPU isolation techniques (rocm.docs.amd.com, conceptual/gpu-isolation): ROCR_VISIBLE_DEVICES (indices or UUIDs, ROCm runtime), HIP_VISIBLE_DEVICES (indices, HIP runtime); recommendation: on Linux use ROCR_VISIBLE_DEVICES",
        "ROCm documentation, HIP environment variables (rocm.docs.amd.com/projects/HIP/en/latest/reference/env_variables.html)",
        "pytorch/pytorch#142292 'Respect ROCR_VISIBLE_DEVICES on AMD GPU device discovery': the two RuntimeErrors quoted above",
        "ROCm/rocm-systems#10473 'docs(hip): Remove the support of a cuda environment variable in HIP documents' (CUDA_VISIBLE_DEVICES)",
        "pytorch/pytorch#190579: rocprofiler-sdk aborts with 'Conflicting visibility between HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES'",
      ],
    },
  },
  check(ctx) {
    const writes = envWrites(ctx.model);
    const hip = singleValue(writes, "HIP_VISIBLE_DEVICES");
    if (!hip) return;
    const rocr = singleValue(writes, "ROCR_VISIBLE_DEVICES");
    const where = (w: EnvWriteEvent) => ctx.where(w.range.start.line);
    if (rocr) {
      const c = rocmConflict(rocr.value, hip.value);
      if (c?.kind === "hip-uuid") {
        ctx.report({
          range: hip.write.range,
          message: `HIP_VISIBLE_DEVICES="${hip.value}" lists UUIDs while ROCR_VISIBLE_DEVICES="${rocr.value}" (${where(rocr.write)}) is set: PyTorch on ROCm raises 'Cannot specify both ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES using UUIDs' (pytorch/pytorch#142292). Select the GPUs with ROCR_VISIBLE_DEVICES alone`,
          related: [{ range: rocr.write.range, message: "ROCR_VISIBLE_DEVICES set here" }],
        });
      } else if (c) {
        const left =
          c.rocrCount === 1 ? "1 device (HIP index 0)" : `${c.rocrCount} devices (HIP indices 0..${c.rocrCount - 1})`;
        ctx.report({
          range: hip.write.range,
          message: `HIP_VISIBLE_DEVICES="${hip.value}" indexes the devices ROCR_VISIBLE_DEVICES="${rocr.value}" (${where(rocr.write)}) left, ${left}, so ${c.outOfRange.join(", ")} ${c.outOfRange.length === 1 ? "does" : "do"} not exist${c.hidesAll ? " and no GPU is left" : ""}: the two are applied in sequence (ROCm documentation), and PyTorch on ROCm raises 'HIP_VISIBLE_DEVICES out of bounds index after applying ROCR_VISIBLE_DEVICES' (pytorch/pytorch#142292). Select the GPUs with ROCR_VISIBLE_DEVICES alone`,
          related: [{ range: rocr.write.range, message: "ROCR_VISIBLE_DEVICES applied first, here" }],
        });
      }
    }
    const cuda = singleValue(writes, "CUDA_VISIBLE_DEVICES");
    if (cuda && cuda.value.replace(/\s/g, "") !== hip.value.replace(/\s/g, "")) {
      ctx.report({
        range: hip.write.range,
        severity: "warning",
        message: `HIP_VISIBLE_DEVICES="${hip.value}" and CUDA_VISIBLE_DEVICES="${cuda.value}" (${where(cuda.write)}) name different GPUs: HIP's documentation no longer lists CUDA_VISIBLE_DEVICES (ROCm/rocm-systems#10473) and ROCm 7.14's profiler aborts on 'Conflicting visibility between HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES' (pytorch/pytorch#190579); on AMD select GPUs with ROCR_VISIBLE_DEVICES`,
        related: [{ range: cuda.write.range, message: "CUDA_VISIBLE_DEVICES set here" }],
      });
    }
  },
};
