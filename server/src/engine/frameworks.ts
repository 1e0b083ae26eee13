/**
 * What the rules know about GPU frameworks: which imports bring which framework, which calls
 * initialise CUDA (and so freeze which startup variables), per ../shared/spec/ground-truth.md
 * (measured on 2 x H200, torch 2.11, jax 0.11) and ../shared/spec/rules.md.
 */
import { APPLICABLE_UNPINNED, INIT_CATALOGUE, eagerModulesOf } from "./initCatalogue";

/** A runtime that reads CUDA startup variables when it initialises. */
export type Framework = "torch" | "jax" | "tensorflow" | "cupy" | "numba" | "paddle" | "mxnet";

/**
 * Top-level module (or dotted prefix) → the framework its import brings in.
 * Libraries that import a framework on import count as that framework's import (ground truth:
 * `import transformers`/`lightning`/`accelerate` leave CUDA uninitialised, like `import torch`).
 */
export const FRAMEWORK_MODULES: ReadonlyMap<string, Framework> = new Map<string, Framework>([
  ["torch", "torch"],
  ["torchvision", "torch"],
  ["torchaudio", "torch"],
  ["torchtext", "torch"],
  ["lightning", "torch"],
  ["pytorch_lightning", "torch"],
  ["accelerate", "torch"],
  ["transformers", "torch"],
  ["timm", "torch"],
  ["diffusers", "torch"],
  ["peft", "torch"],
  ["trl", "torch"],
  ["bitsandbytes", "torch"],
  ["xformers", "torch"],
  ["torch_geometric", "torch"],
  ["sentence_transformers", "torch"],
  ["ultralytics", "torch"],
  ["torchmetrics", "torch"],
  ["fairseq", "torch"],
  ["detectron2", "torch"],
  ["mmcv", "torch"],
  ["mmdet", "torch"],
  ["vllm", "torch"],
  // FlashInfer's kernels are torch extensions (flashinfer-ai/flashinfer flashinfer/utils.py imports torch);
  // its import may initialise CUDA where cuda-tile is installed (flashinfer/cutile/cutile_common.py
  // is_cuda_tile_available: torch.cuda.get_device_capability(), called from flashinfer/gemm/__init__.py).
  ["flashinfer", "torch"],
  ["apex", "torch"],
  ["einops", "torch"],
  ["tensorflow", "tensorflow"],
  ["keras", "tensorflow"],
  ["keras_core", "tensorflow"],
  ["tf_keras", "tensorflow"],
  ["tensorflow_hub", "tensorflow"],
  ["jax", "jax"],
  ["jaxlib", "jax"],
  ["flax", "jax"],
  ["optax", "jax"],
  ["haiku", "jax"],
  ["equinox", "jax"],
  ["orbax", "jax"],
  ["chex", "jax"],
  ["cupy", "cupy"],
  ["cupyx", "cupy"],
  ["numba.cuda", "numba"],
  ["paddle", "paddle"],
  ["mxnet", "mxnet"],
]);

/**
 * Default modules that initialise CUDA at import: the catalogue's `"import"` entries
 * (initCatalogue.json, each measured or read at a named commit and line; docs/init-catalogue.md),
 * for a project that pins none of them (a pin outside an entry's range drops it: options.ts).
 * Configurable: eagerInitModules.
 */
export const DEFAULT_EAGER_INIT_MODULES: readonly string[] = eagerModulesOf(APPLICABLE_UNPINNED);

/**
 * How deep an eager module's import initialises: the depth of the library's first `"import"` entry
 * in the catalogue (measured entries come first). A module listed only in the eagerInitModules
 * setting gets `context`.
 */
export const EAGER_INIT_DEPTH: ReadonlyMap<string, InitDepth> = new Map<string, InitDepth>(
  [...APPLICABLE_UNPINNED]
    .reverse()
    .filter((e) => e.initialises === "import")
    .map((e) => [e.library, e.depth!]),
);

/**
 * Which framework's runtime an eager module's import starts: the `framework` of the library's
 * `"import"` entries in the catalogue (`augmax` < 0.3.3 starts JAX's backend), `torch` where the
 * entry names none. Any version's entry: the framework a library uses does not change with the pin.
 */
export const EAGER_INIT_FRAMEWORK: ReadonlyMap<string, Framework> = new Map<string, Framework>(
  [...INIT_CATALOGUE]
    .reverse()
    .filter((e) => e.initialises === "import")
    .map((e) => [e.library, e.framework ?? "torch"]),
);

/**
 * Callables that initialise CUDA when called, by their dotted path (`accelerate.Accelerator`): the
 * catalogue's named entries, with their depth and framework.
 */
export const INIT_CALLABLES: ReadonlyMap<string, { depth: InitDepth; framework: Framework }> = new Map(
  [...INIT_CATALOGUE]
    .reverse()
    .flatMap((e) =>
      Array.isArray(e.initialises)
        ? e.initialises.map((n) => [n, { depth: e.depth!, framework: e.framework ?? "torch" }] as const)
        : [],
    ),
);

/** Which framework an imported module path brings, or null. `numba` alone brings none, `numba.cuda` does. */
export function frameworkOfModule(modulePath: string): Framework | null {
  const parts = modulePath.split(".");
  for (let i = parts.length; i >= 1; i--) {
    const f = FRAMEWORK_MODULES.get(parts.slice(0, i).join("."));
    if (f) return f;
  }
  return null;
}

/**
 * The eager-initialising module an import of `modulePath` falls under: the longest of `eager` that is the
 * path or a dotted prefix of it (`magic_pdf.tools.common.do_parse` → `magic_pdf.tools.common`; `paddle.fluid`
 * → `paddle`), else the path's top-level name. The catalogue's entries (depth, framework, note) are keyed by it.
 */
export function eagerLibraryOf(modulePath: string, eager: readonly string[]): string {
  let best: string | null = null;
  for (const m of eager)
    if ((modulePath === m || modulePath.startsWith(m + ".")) && (!best || m.length > best.length)) best = m;
  return best ?? modulePath.split(".")[0];
}

/** True when `modulePath` is (inside) one of the eager-initialising modules. */
export function isEagerInitModule(modulePath: string, eager: readonly string[]): boolean {
  return eager.some((m) => modulePath === m || modulePath.startsWith(m + "."));
}

/** The variables read once when CUDA or a framework initialises (rules.md, "Startup variables"). */
export const STARTUP_VARIABLES: readonly string[] = [
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  "CUDA_MPS_PIPE_DIRECTORY",
  "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
  "PYTORCH_CUDA_ALLOC_CONF",
  "PYTORCH_ALLOC_CONF",
  "PYTORCH_NVML_BASED_CUDA_CHECK",
  "XLA_PYTHON_CLIENT_PREALLOCATE",
  "XLA_PYTHON_CLIENT_MEM_FRACTION",
  "XLA_CLIENT_MEM_FRACTION",
  "XLA_PYTHON_CLIENT_ALLOCATOR",
  "XLA_FLAGS",
  "TF_FORCE_GPU_ALLOW_GROWTH",
  "TF_GPU_ALLOCATOR",
  "PYTORCH_NO_CUDA_MEMORY_CACHING",
];

/**
 * The prefixes of {@link STARTUP_VARIABLES} up to their first `_` (`CUDA_`, `PYTORCH_`, `XLA_`,
 * `TF_`): a text holds a variable's name only if it holds its prefix, and the few prefixes are
 * searched first (python/project.ts's writers' scan; the shell prefilter, manifests/lintManifest.ts).
 */
export const STARTUP_PREFIXES: readonly string[] = [
  ...new Set(STARTUP_VARIABLES.map((v) => v.slice(0, v.indexOf("_") + 1))),
];

/**
 * Which frameworks read a startup variable: `null` means every framework (read by the CUDA driver
 * itself at initialisation, whoever triggers it).
 */
export function readersOf(variable: string): readonly Framework[] | null {
  if (variable.startsWith("CUDA_")) return null;
  if (variable.startsWith("PYTORCH_")) return ["torch"];
  if (variable.startsWith("XLA_")) return ["jax"];
  if (variable.startsWith("TF_")) return ["tensorflow"];
  return null;
}

/**
 * How deep an initialising call goes, which decides which variables it freezes (ground truth,
 * "Each variable freezes at its own moment"):
 * - `nvml`: `torch.cuda.is_available()`: initialises the CUDA driver (freezes CUDA_VISIBLE_DEVICES)
 *   but creates no context, so PYTORCH_CUDA_ALLOC_CONF still applies after it (measured);
 * - `driver`: device queries (`get_device_name`, ...): freeze the CUDA variables and the allocator
 *   variables (they run torch's lazy init; measured for `get_device_name(0)` and
 *   `torch.accelerator.current_device_index()`, torch 2.11);
 * - `context`: a CUDA context (`mem_get_info`, `set_device`, streams);
 * - `alloc`: a first allocation through torch's caching allocator (a tensor or module put on CUDA);
 *   everything `context` freezes, and `PYTORCH_NO_CUDA_MEMORY_CACHING` too.
 */
export type InitDepth = "nvml" | "driver" | "context" | "alloc";

/**
 * `PYTORCH_NO_CUDA_MEMORY_CACHING`: read once, at the first allocation through torch's caching
 * allocator (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp `forceUncachedAllocator()` keeps
 * `getenv("PYTORCH_NO_CUDA_MEMORY_CACHING")` in a function-local static; its first caller is the
 * first `allocate()`). A context alone does not read it.
 */
export const NO_CACHING_VARIABLE = "PYTORCH_NO_CUDA_MEMORY_CACHING";

/**
 * The caching allocator's configuration variables: `PYTORCH_ALLOC_CONF` is the newer name,
 * `PYTORCH_CUDA_ALLOC_CONF` the older (both honoured by torch 2.11; when both are set the
 * `PYTORCH_CUDA_ALLOC_CONF` value was the one in effect: verify/results-frameworks-h200.json).
 */
export const ALLOC_CONF_VARIABLES: readonly string[] = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"];

/**
 * Whether an allocator-variable value selects the `cudaMallocAsync` backend (`backend:cudaMallocAsync`,
 * among other comma-separated options; spaces around `:` and `,` allowed as torch's tokenizer does).
 * torch reads the backend once when it loads (`import torch`) and again at the first CUDA use;
 * measured on torch 2.11: when the two differ the first CUDA use raises `INTERNAL ASSERT FAILED ...
 * Allocator backend parsed at runtime != allocator backend parsed at load time` (pytorch#104801).
 */
export function selectsAsyncAllocator(value: string): boolean {
  return value.split(",").some((opt) => {
    const [k, v] = opt.split(":").map((x) => x.trim());
    return k === "backend" && v === "cudaMallocAsync";
  });
}

/**
 * Whether an initialising call of `framework` at `depth` freezes `variable`. The allocator variables
 * survive `nvml`-depth calls (measured: written after `is_available()` or `device_count()` they still
 * apply; after `get_device_name(0)` or `torch.accelerator.current_device_index()` they do not).
 */
export function freezes(framework: Framework, depth: InitDepth, variable: string): boolean {
  const readers = readersOf(variable);
  if (readers && !readers.includes(framework)) return false;
  if (ALLOC_CONF_VARIABLES.includes(variable) && depth === "nvml") return false;
  if (variable === NO_CACHING_VARIABLE) return depth === "alloc";
  return true;
}

/*
 * The freeze-point tables below are tested against the measured table
 * verify/results-frameworks-*.json (test/unit/server/engine/frameworkTable.test.ts): every member is measured, a
 * member of an *_INIT table froze CUDA_VISIBLE_DEVICES, a member of a *_LAZY table did not. A new
 * torch version is one `python3 verify/frameworks/probe.py` run away (verify/README in
 * verify/frameworks/probe.py).
 */

/** torch.cuda functions that initialise CUDA (measured: verify/results-frameworks-h200.json), with their depth. */
export const TORCH_CUDA_INIT: ReadonlyMap<string, InitDepth> = new Map<string, InitDepth>([
  ["is_available", "nvml"],
  ["is_bf16_supported", "driver"],
  ["get_arch_list", "driver"],
  ["get_device_name", "driver"],
  ["get_device_properties", "driver"],
  ["get_device_capability", "driver"],
  ["init", "driver"],
  ["current_device", "driver"],
  ["get_gencode_flags", "driver"],
  ["set_device", "context"],
  ["mem_get_info", "context"],
  ["synchronize", "context"],
  ["Stream", "context"],
  ["device", "context"],
  ["set_per_process_memory_fraction", "context"],
  ["ipc_collect", "context"],
  ["stream", "context"],
  ["current_stream", "context"],
  ["get_rng_state", "context"],
]);

/**
 * torch.cuda functions that measured lazy (no initialisation). `Event`: torch 2.11 creates the CUDA
 * event on first record, so `torch.cuda.Event()` alone leaves CUDA_VISIBLE_DEVICES writable (measured).
 */
export const TORCH_CUDA_LAZY: readonly string[] = [
  "device_count",
  "manual_seed",
  "manual_seed_all",
  "seed",
  "seed_all",
  "memory_allocated",
  "empty_cache",
  "is_initialized",
  "max_memory_allocated",
  "memory_reserved",
  "Event",
];

/**
 * torch.accelerator (torch >= 2.6) functions that initialise CUDA, with their depth (measured, torch
 * 2.11): `is_available()` like `torch.cuda.is_available()`; `current_device_index()` runs torch's lazy
 * init; `set_device_index()` is `torch.cuda.set_device` under the device-generic name.
 */
export const TORCH_ACCELERATOR_INIT: ReadonlyMap<string, InitDepth> = new Map<string, InitDepth>([
  ["is_available", "nvml"],
  ["current_device_index", "driver"],
  ["set_device_index", "context"],
  ["synchronize", "context"],
]);

/** torch.accelerator functions that measured lazy (torch 2.11). */
export const TORCH_ACCELERATOR_LAZY: readonly string[] = ["device_count", "current_accelerator"];

/**
 * Other torch calls (full dotted path) that initialise CUDA (measured, torch 2.11):
 * `torch.__config__.show()` freezes the CUDA variables without torch's lazy init;
 * `torch.backends.cudnn.version()` runs the lazy init.
 */
export const TORCH_OTHER_INIT: ReadonlyMap<string, InitDepth> = new Map<string, InitDepth>([
  ["torch.__config__.show", "nvml"],
  ["torch.backends.cudnn.version", "driver"],
]);

/** Other torch calls that measured lazy (torch 2.11). */
export const TORCH_OTHER_LAZY: readonly string[] = ["torch.backends.cudnn.is_available"];

/**
 * torch.cuda queries whose first argument is a device ordinal, checked against the visible GPUs:
 * `get_device_properties` raises `AssertionError("Invalid device id")` for `device >= device_count()`
 * (torch/cuda/__init__.py, read in Debian's python3-torch 1.13; `get_device_name` and
 * `get_device_capability` call it), and the memory queries take the same device argument
 * (torch.cuda documentation: "device (torch.device or int, optional)").
 */
export const DEVICE_QUERY_PATHS: readonly string[] = [
  "torch.cuda.get_device_properties",
  "torch.cuda.get_device_name",
  "torch.cuda.get_device_capability",
  "torch.cuda.mem_get_info",
  "torch.cuda.memory_allocated",
  "torch.cuda.memory_reserved",
  "torch.cuda.max_memory_allocated",
  "torch.cuda.max_memory_reserved",
  "torch.cuda.memory_stats",
  "torch.cuda.reset_peak_memory_stats",
  "torch.cuda.synchronize",
];

/**
 * Library parameters that take a CUDA device ordinal, by callee path (as the model resolves it):
 * the positional index (0-based, `self` not counted) and the keyword name of the parameter.
 * - `transformers.pipeline(device=...)`: "Defines the device (*e.g.*, `"cpu"`, `"cuda:1"`, `"mps"`,
 *   or a GPU ordinal rank like `1`) on which this pipeline will be allocated"
 *   (huggingface/transformers src/transformers/pipelines/__init__.py, `pipeline` docstring).
 * - `sglang.bench_one_batch.load_model(server_args, port_args, tp_rank)`: builds
 *   `ModelRunner(..., gpu_id=tp_rank, tp_rank=tp_rank, ...)` (sgl-project/sglang
 *   python/sglang/bench_one_batch.py, `load_model`), so its third argument is the GPU's ordinal.
 * - sglang's `ModelRunner(gpu_id=...)`: the GPU the runner binds (`torch.cuda.set_device(self.gpu_id)`
 *   in python/sglang/srt/model_executor/model_runner.py); keyword only here, its positional order
 *   changed between releases.
 * - DeepSpeed's accelerator, `get_accelerator().set_device(device_index)`: on CUDA it is
 *   `torch.cuda.set_device(device_index)` (deepspeedai/DeepSpeed accelerator/cuda_accelerator.py:76
 *   at edaa7221267243c7be7fb49c5d5f5c4fb97b4641).
 * `device_map=` is handled apart (devices.ts `deviceMapValues`): any call, since transformers'
 * `from_pretrained`, diffusers, peft and Accelerate's dispatch helpers all take it.
 */
export const LIBRARY_DEVICE_PARAMS: ReadonlyMap<string, { index: number | null; keyword: string }> = new Map([
  ["transformers.pipeline", { index: null, keyword: "device" }],
  ["transformers.pipelines.pipeline", { index: null, keyword: "device" }],
  ["sglang.bench_one_batch.load_model", { index: 2, keyword: "tp_rank" }],
  ["sglang.srt.model_executor.model_runner.ModelRunner", { index: null, keyword: "gpu_id" }],
  ["deepspeed.accelerator.get_accelerator.set_device", { index: 0, keyword: "device_index" }],
]);

/** The callee paths that set torch's current CUDA device: `torch.cuda.set_device` and its device-generic twin. */
export const SET_DEVICE_PATHS: readonly string[] = ["torch.cuda.set_device", "torch.accelerator.set_device_index"];

/**
 * jax functions that start the backend (measured, jax 0.11.2: verify/results-frameworks-h200.json;
 * `import jax`, `jax.config.update(...)`, `import flax`/`optax` do not).
 */
export const JAX_INIT_FUNCTIONS: ReadonlySet<string> = new Set([
  "devices",
  "local_devices",
  "device_count",
  "local_device_count",
  "device_put",
  "device_put_replicated",
  "device_put_sharded",
  "default_backend",
  "process_count",
  "process_index",
  "block_until_ready",
  "make_mesh",
]);

/** jax submodules any call into which starts the backend (they create arrays). */
export const JAX_INIT_SUBMODULES: readonly string[] = [
  "jax.numpy",
  "jax.random",
  "jax.lax",
  "jax.nn",
  "jax.scipy",
  "jax.image",
];

/** TensorFlow calls that do NOT initialise the runtime (configuration before init is their purpose). */
export const TF_NON_INIT_PREFIXES: readonly string[] = [
  "tensorflow.config.",
  "tensorflow.function",
  "tensorflow.get_logger",
  "tensorflow.autograph.",
  "tensorflow.debugging.set_log_device_placement",
  "tensorflow.random.set_seed",
  "tensorflow.executing_eagerly",
  "tensorflow.compat.v1.ConfigProto",
  "tensorflow.compat.v1.GPUOptions",
  "tensorflow.compat.v1.disable_eager_execution",
  "tensorflow.compat.v1.enable_eager_execution",
  "tensorflow.compat.v1.logging",
  "tensorflow.TensorSpec",
  "tensorflow.keras.mixed_precision.set_global_policy",
  "tensorflow.keras.utils.set_random_seed",
  "tensorflow.get_static_value",
  "tensorflow.experimental.numpy.experimental_enable_numpy_behavior",
];

/** TensorFlow config calls that DO initialise the runtime (rules.md). */
export const TF_CONFIG_INIT: readonly string[] = [
  "tensorflow.config.list_logical_devices",
  "tensorflow.config.experimental.list_logical_devices",
];

/** The device-selection spellings of "a CUDA device": `cuda`, `cuda:N`. Returns N, -1 for bare `cuda`, or null. */
export function cudaDeviceOrdinal(literal: string): number | null {
  const s = literal.trim();
  if (s === "cuda") return -1;
  if (!s.startsWith("cuda:")) return null;
  const n = s.slice(5).trim();
  if (n === "" || ![...n].every((ch) => ch >= "0" && ch <= "9")) return null;
  return Number(n);
}

/** TensorFlow device configuration calls that raise RuntimeError once the runtime initialised (TF documentation; GPU012). */
export const TF_DEVICE_CONFIG: ReadonlySet<string> = new Set([
  "tensorflow.config.set_visible_devices",
  "tensorflow.config.experimental.set_visible_devices",
  "tensorflow.config.experimental.set_memory_growth",
  "tensorflow.config.set_logical_device_configuration",
  "tensorflow.config.experimental.set_virtual_device_configuration",
]);
