/**
 * A stand-in project index for GPU075's fixtures and doc example: the module `bench.worker` is a
 * project file whose CUDA work is on the default device (`torch.device("cuda")`, its line 7) and
 * that chooses no device; `bench.picker` chooses its own; nothing else is a project module.
 */
import type { ProjectLookup } from "../../../server/src/engine/python/model";

export const CHILD_PROJECT: ProjectLookup = {
  version: "child-project",
  moduleInit: () => null,
  callableInit: () => null,
  processDevice: (target) => {
    if (!("module" in target)) return null;
    if (target.module === "bench.worker")
      return {
        file: "/p/bench/worker.py",
        label: "bench/worker.py",
        defaultUse: { line: 7, form: 'torch.device("cuda")', where: "bench/worker.py:7" },
        rankDevice: null,
      };
    if (target.module === "bench.picker")
      return { file: "/p/bench/picker.py", label: "bench/picker.py", defaultUse: null, rankDevice: null };
    return null;
  },
};
