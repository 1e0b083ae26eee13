import type { PythonRule } from "../rule";
import type { ModuleModel } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { callArgs, calleePath, intLiteral } from "./shared/py";
import { VLLM_TP_CALLS } from "./GPU035-vllm-tensor-parallel-exceeds-visible";

/**
 * Where vLLM's engine puts each worker (read in vllm-project/vllm): `DeviceConfig.device` is a
 * "Device type for vLLM execution" (vllm/config/device.py @ 00634b8acf93, `Device =
 * Literal["auto", "cuda", "cpu", "tpu", "xpu"]`, and `torch.device(self.device_type)` keeps the
 * type), and the GPU worker binds `torch.device(f"cuda:{self.local_rank}")` in `init_device`
 * (vllm/v1/worker/gpu_worker.py @ 35d5cda123ec; the V0 worker, vllm/worker/worker.py, did the same):
 * its local rank among the visible devices, 0 for a one-GPU engine.
 */
const VLLM_WORKER_SOURCE = 'vllm/v1/worker/gpu_worker.py `init_device`: torch.device(f"cuda:{self.local_rank}")';

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
    // Read in vLLM's source, not measured: the corpus holds no such call, and the code search found
    // none with an index of 1 or more beside vLLM (ecosystem.md).
    preview: true,
    // vLLM and a CUDA device string (the word vllm, and cuda).
    trigger: (t) => t.has("vllm") && t.has("cuda"),
    docs: {
      what: 'Finds vLLM\'s `LLM(...)`, `EngineArgs(...)` and `AsyncEngineArgs(...)` given `device` with a GPU index of 1 or more: `device="cuda:3"`, `torch.device("cuda", 3)`, or a name bound to one of those. vLLM takes `device` as a device type only: its worker binds `cuda:{local rank}`, the first visible GPU for a one-GPU engine, so the engine does not run on GPU 3.',
      follows:
        "Every such call in the module, with the value written in the call or bound to a name before it in the module. Not followed: values passed through `**kwargs` or built at run time, and `CUDA_VISIBLE_DEVICES` set elsewhere (with it the first visible GPU is the one it names first, whatever `device` says).",
      why: 'In vLLM, `DeviceConfig.device` is a "Device type for vLLM execution" (vllm/config/device.py: `Device = Literal["auto", "cuda", "cpu", "tpu", "xpu"]`; it is documented as deprecated and set from the platform), and the GPU worker binds `torch.device(f"cuda:{self.local_rank}")` in `init_device` (vllm/v1/worker/gpu_worker.py; the V0 worker did the same), its rank among the visible devices. With `device="cuda:3"` a one-GPU engine still loads the model and its KV cache on the first visible GPU, usually GPU 0, next to whatever runs there (vllm-project/vllm#4608). Read in the source, not measured here.',
      example:
        'from vllm import LLM\n\nllm = LLM(model="facebook/opt-125m", device="cuda:3")  # GPU056: runs on GPU 0\n',
      fix: '# CUDA_VISIBLE_DEVICES=3 python serve.py\nfrom vllm import LLM\n\nllm = LLM(model="facebook/opt-125m")\n',
      whenNotToCare:
        "When CUDA_VISIBLE_DEVICES already makes the intended GPU the first visible one: `device` is then harmless but misleading (and deprecated); remove it.",
      references: [
        'vllm-project/vllm vllm/config/device.py @ 00634b8acf93: `DeviceConfig.device`, "Device type for vLLM execution. This parameter is deprecated"; `self.device = torch.device(self.device_type)`',
        `vllm-project/vllm ${VLLM_WORKER_SOURCE} @ 35d5cda123ec`,
        'vllm-project/vllm#4608: LLM(device="cuda:3") ran on GPU 0',
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
      ctx.report({
        range: nodeRange(device),
        message: `vLLM reads only the device type from device=: its worker binds cuda:{local rank}, the first visible GPU for a one-GPU engine, so this engine does not run on GPU ${index}. Choose the GPU with CUDA_VISIBLE_DEVICES=${index} in the environment that starts the program, and drop device=`,
      });
    }
  },
};
