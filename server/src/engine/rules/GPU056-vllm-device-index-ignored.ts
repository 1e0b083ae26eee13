import type { PythonRule } from "../rule";
import type { ModuleModel } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { callArgs, calleePath, intLiteral } from "./shared/py";
import { VLLM_TP_CALLS } from "./GPU035-vllm-tensor-parallel-exceeds-visible";
import { rangesOverlap } from "../initCatalogue";

/**
 * What vLLM does with `device="cuda:N"` (N >= 1) for a one-GPU engine, release by release (read in
 * vllm-project/vllm and its threads; cited in the docs below). `honours`: the engine runs on GPU N.
 * - before 0.7.3 the GPU worker binds `torch.device(f"cuda:{self.local_rank}")` (local rank 0) and
 *   profiles memory there, while the model loader (`target_device = torch.device(device_config.device)`,
 *   vllm/model_executor/model_loader/loader.py) and runner follow `DeviceConfig.device` (cuda:N): the
 *   engine is split over two GPUs (vllm#6189 "will error out", #13027 "device conflict", #4608 out of
 *   memory on GPU 0; huggingface/trl's GRPO trainer patched out the profiling check to run it);
 * - 0.7.3 to 0.8.x: the one-GPU executor takes N as the worker's local rank (vllm#13027, "set local
 *   rank as the device index if specified", vllm/executor/uniproc_executor.py);
 * - 0.9: `create_engine_config` builds `DeviceConfig(device=current_platform.device_type)`, so the
 *   value is ignored (vllm#19069: 0.9.0.1 logs `device_config=cuda` for device="cuda:1"; #18399, #18808);
 * - 0.10 removed `EngineArgs.device` (vllm#21349): the keyword raises TypeError.
 */
const VLLM_DEVICE_ERAS: ReadonlyArray<{
  versions: string;
  honours?: true;
  says?: (n: number, call: string) => string;
}> = [
  {
    versions: "<0.7.3",
    says: () =>
      "before 0.7.3 the weights follow device= while the worker binds cuda:{local rank} (cuda:0): its memory profile and KV cache budget are GPU 0's (a check that fails unless patched out) and tensors made on the current device land on GPU 0 (vllm-project/vllm#13027, #6189, #4608)",
  },
  { versions: ">=0.7.3,<0.9", honours: true },
  {
    versions: ">=0.9,<0.10",
    says: (n) =>
      `0.9 ignores device= (its engine config takes the platform's device type: vllm-project/vllm#19069), so the engine runs on the first visible GPU, not GPU ${n}`,
  },
  {
    versions: ">=0.10",
    says: (_n, call) =>
      `0.10 and later no longer take device=: ${call}(...) raises TypeError (unexpected keyword argument 'device', vllm-project/vllm#21349)`,
  },
];

/** The eras of {@link VLLM_DEVICE_ERAS} the project's vLLM pin admits, and the pin when it is readable; unpinned (or unreadable): the newest, which an install gets. */
function erasFor(pin: string | undefined): { eras: typeof VLLM_DEVICE_ERAS; pin?: string } {
  const newest = { eras: VLLM_DEVICE_ERAS.slice(-1) };
  if (!pin) return newest;
  try {
    return { eras: VLLM_DEVICE_ERAS.filter((e) => rangesOverlap(e.versions, pin)), pin };
  } catch {
    return newest;
  }
}

/** The message for GPU `n` given to `call` (`LLM`) as `written` (`"cuda:3"`, `GPU`), or null when every release the pin admits honours the index. */
function deviceMessage(n: number, call: string, written: string, vllmPin: string | undefined): string | null {
  const { eras, pin } = erasFor(vllmPin);
  const says = eras.filter((e) => e.says).map((e) => e.says!(n, call));
  if (!says.length) return null;
  const which = pin ? `the pinned vllm${pin}` : "the vLLM an unpinned install gets (0.10 or later)";
  const honoured = eras.some((e) => e.honours) || !pin;
  const given =
    written.replace(/^['"]|['"]$/g, "") === `cuda:${n}` ? `device=${written}` : `device=${written} (cuda:${n})`;
  return `With ${which}, ${given} does not place this engine on GPU ${n} alone: ${says.join("; ")}${honoured ? `. Only vLLM 0.7.3 to 0.8.x place a one-GPU engine on GPU ${n} (vllm-project/vllm#13027)` : ""}. Choose the GPU with CUDA_VISIBLE_DEVICES=${n} in the environment that starts the program, and drop device=`;
}

/**
 * The GPU index a `device=` value names, as written: `"cuda:2"`, `torch.device("cuda:2")`,
 * `torch.device("cuda", 2)`, or a name the module binds to one of those before the call; null for
 * anything else (`"cuda"`, `"auto"`, a variable of unknown value).
 */
function deviceIndex(model: ModuleModel, value: SyntaxNode, at: number): number | null {
  let v: SyntaxNode | null = value;
  if (v.type === "identifier") v = model.valueOf(v.text, at);
  if (!v) return null;
  const text = stringValue(v);
  if (text !== null) {
    const m = /^cuda:([0-9]+)$/.exec(text.trim());
    return m ? Number(m[1]) : null;
  }
  if (v.type !== "call" || calleePath(model, v) !== "torch.device") return null;
  const { positional } = callArgs(v);
  if (positional.length === 1) return deviceIndex(model, positional[0], at);
  if (positional.length === 2 && stringValue(positional[0]) === "cuda") return intLiteral(positional[1]);
  return null;
}

/** GPU056: vLLM's `LLM(..., device="cuda:N")`: the engine takes a device type only and runs on the first visible GPU. */
export const rule: PythonRule = {
  meta: {
    code: "GPU056",
    name: "vllm-device-index-ignored",
    severity: "warning",
    fixable: false,
    // Preview: the code search found fewer than 10 public engines given a GPU index (ecosystem.md),
    // and what vLLM does with it depends on the release (read in its source and threads, not measured).
    preview: true,
    // vLLM and a CUDA device string (the word vllm, and cuda).
    trigger: (t) => t.has("vllm") && t.has("cuda"),
    docs: {
      what: 'Finds vLLM\'s `LLM(...)`, `EngineArgs(...)` and `AsyncEngineArgs(...)` given `device` with a GPU index of 1 or more: `device="cuda:3"`, `torch.device("cuda", 3)`, or a name bound to one of those. Only vLLM 0.7.3 to 0.8.x put a one-GPU engine on that GPU: earlier releases split the engine between GPU 0 and it, 0.9 ignores the index, and 0.10 and later reject the keyword (TypeError). The message says what the project\'s vLLM pin does; a pin that admits only 0.7.3 to 0.8.x is left alone.',
      follows:
        "Every such call in the module, with the value written in the call or bound to a name before it in the module, and the project's vLLM pin (`requirements*.txt`, `pyproject.toml` dependencies, as the init catalogue reads them; unpinned: the newest release, which an install gets). Not followed: values passed through `**kwargs`, function parameters or values built at run time, the vLLM actually installed, and `CUDA_VISIBLE_DEVICES` set elsewhere (with it the first visible GPU is the one it names first, whatever `device` says).",
      why: 'vLLM\'s `device` has named a device type, not a GPU, through most of its releases (vllm/config/device.py: `Device = Literal["auto", "cuda", "cpu", "tpu", "xpu"]`, "Device type for vLLM execution. This parameter is deprecated"). Before 0.7.3 the GPU worker binds `torch.device(f"cuda:{self.local_rank}")` (rank 0 for a one-GPU engine) and profiles memory there, while the model loader follows `device` (vllm/model_executor/model_loader/loader.py: `target_device = torch.device(device_config.device)`), so the engine ends up on two GPUs: the memory check fails unless patched out (huggingface/trl\'s GRPO trainer patched `Worker._assert_memory_footprint_increased_during_profiling` to place vLLM on its own GPU), the KV cache is sized from GPU 0\'s free memory, and tensors made on the current device land on GPU 0: vllm-project/vllm#6189 ("the following code will error out": `LLM(model="gpt2", tensor_parallel_size=1, device="cuda:1")`), #4608 (out of memory on the full GPU 0 with `device="cuda:3"`), #13027 ("device conflict because the tensors (such as attn_bias) will be put on card-0"). vllm-project/vllm#13027 (0.7.3) made the one-GPU executor take the index as the worker\'s local rank ("set local rank as the device index if specified"), so 0.7.3 to 0.8.x run such an engine on GPU N. From 0.9 `create_engine_config` builds `DeviceConfig(device=current_platform.device_type)` and the value is ignored (vllm-project/vllm#19069: 0.9.0.1 placed `LLM(device="cuda:1")` on `cuda`; #18808: "we intentionally make \'device\' arg not honored"), and vllm-project/vllm#21349 removed the argument in 0.10: `EngineArgs.__init__() got an unexpected keyword argument \'device\'`. The way to choose the GPU in every release is `CUDA_VISIBLE_DEVICES` (vllm-project/vllm#3750). Read in the source and the threads, not measured here.',
      example:
        'from vllm import LLM\n\nllm = LLM(model="facebook/opt-125m", device="cuda:3")  # GPU056: TypeError from vLLM 0.10, GPU 0 in 0.9\n',
      fix: '# CUDA_VISIBLE_DEVICES=3 python serve.py\nfrom vllm import LLM\n\nllm = LLM(model="facebook/opt-125m")\n',
      whenNotToCare:
        "When the vLLM that runs the code is 0.7.3 to 0.8.x and the engine has one GPU (pin it, and the rule is silent), or when CUDA_VISIBLE_DEVICES already makes the intended GPU the first visible one and the release ignores `device` (0.9): it is then harmless but misleading; remove it.",
      references: [
        'vllm-project/vllm vllm/config/device.py @ 00634b8acf93: `DeviceConfig.device`, "Device type for vLLM execution. This parameter is deprecated"; `self.device = torch.device(self.device_type)`',
        'vllm-project/vllm vllm/v1/worker/gpu_worker.py `init_device`: `self.device = torch.device(f"cuda:{self.local_rank}")` @ 0012cf691b7e',
        'vllm-project/vllm#13027 (merged February 2025): "[executor] init `local_rank` as device index", vllm/executor/uniproc_executor.py "set local rank as the device index if specified"',
        'vllm-project/vllm#6189, #4608: `device="cuda:1"` / `"cuda:3"` before 0.7.3 errors out or fills GPU 0; vllm/model_executor/model_loader/loader.py `DefaultModelLoader.load_model`: `target_device = torch.device(device_config.device)`',
        'huggingface/trl trl/trainer/grpo_trainer.py @ 22759c820867: `patch("vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling", return_value=None)` to place vLLM on its own GPU',
        "vllm-project/vllm#19069 (0.9.0.1 ignores `device`), #18399 (`--device` deprecated), #18808 (`DeviceConfig(device=current_platform.device_type)` in `create_engine_config`)",
        "vllm-project/vllm#21349 (0.10: `device` removed from EngineArgs); HuiResearch/FlashTTS#95: `AsyncEngineArgs.__init__() got an unexpected keyword argument 'device'`",
        "vllm-project/vllm#3750: choose the GPU with CUDA_VISIBLE_DEVICES",
      ],
    },
  },
  check(ctx) {
    for (const call of ctx.model.nodesOfType("call")) {
      const path = calleePath(ctx.model, call);
      if (!path || !VLLM_TP_CALLS.includes(path)) continue;
      const device = callArgs(call).keywords.get("device");
      if (!device) continue;
      const index = deviceIndex(ctx.model, device, call.startIndex);
      if (index === null || index < 1) continue;
      const message = deviceMessage(index, path.slice(path.lastIndexOf(".") + 1), device.text, ctx.libraryPins?.vllm);
      if (message) ctx.report({ range: nodeRange(device), message });
    }
  },
};
