import type { Rule, RuleContext } from "../rule";
import { freezesVariable } from "../python/timeline";
import { nodeRange, type InitEvent } from "../python/events";
import { stringValue, type SyntaxNode } from "../python/parser";
import { callArgs } from "./shared/py";
import {
  pinnedReleases,
  RETURNS_REQUESTED_FROM,
  SELECT_DEVICE_SOURCE,
  STOPS_WRITING_FROM,
  ultralyticsModelCall,
} from "./shared/ultralytics";

/** The single GPU ordinal a `device=` value names when it is a literal (`2`, `"2"`, `"cuda:2"`), or null. */
export function literalOrdinal(node: SyntaxNode | null | undefined): number | null {
  if (!node) return null;
  if (node.type === "integer") return /^\d+$/.test(node.text) ? Number(node.text) : null;
  const s = node.type === "string" ? stringValue(node) : null;
  if (s === null) return null;
  const m = /^\s*(?:cuda:)?(\d+)\s*$/i.exec(s);
  return m ? Number(m[1]) : null;
}

/** The first init before timeline position `at` that froze CUDA_VISIBLE_DEVICES, unless the program wrote the variable itself before it. */
function frozenBefore(ctx: RuleContext, at: number): InitEvent | null {
  for (const e of ctx.model.events.slice(0, at)) {
    if (e.kind === "envWrite" && e.variable === "CUDA_VISIBLE_DEVICES") return null;
    if (freezesVariable(e, "CUDA_VISIBLE_DEVICES")) return e;
  }
  return null;
}

/**
 * The start of GPU046's message: who applies `device=written` by the write. `pin`: the project's
 * ultralytics pin where every release it admits has the behaviour (8.0.0 to 8.4.84); else the
 * releases that do.
 */
function appliesBy(written: string, pin: string | undefined): string {
  const how = `by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (${SELECT_DEVICE_SOURCE})`;
  return pin
    ? `The pinned ultralytics${pin} applies device=${written} ${how}`
    : `With Ultralytics before ${RETURNS_REQUESTED_FROM}, device=${written} is applied ${how}`;
}

/** GPU046: Ultralytics' `device=N` after CUDA was initialised: the model runs on the first visible GPU, not GPU N. */
export const rule: Rule = {
  meta: {
    code: "GPU046",
    name: "ultralytics-device-after-cuda-init",
    severity: "error",
    fixable: false,
    // An Ultralytics model call with device= needs the package's name (its import) and the keyword.
    trigger: (t) => t.hasWord("ultralytics") && t.has("device"),
    docs: {
      what: 'Finds an Ultralytics model call (`model.predict/train/val/track/benchmark/export/tune(..., device=N)` or `model(src, device=N)`, where `model` is an Ultralytics model such as `YOLO`, `RTDETR` or `SAM` made in this module) with a literal GPU ordinal N >= 1 (`2`, `"2"`, `"cuda:2"`) after something initialised CUDA in this program (`torch.cuda.is_available()`, a tensor on CUDA, an import that initialises CUDA, or an earlier Ultralytics call with a GPU device: two cameras on two GPUs, `m0.predict(device=0)` then `m1.predict(device=1)`). Not reported where the program wrote `CUDA_VISIBLE_DEVICES` itself before CUDA was initialised. In the default set (an error) only where the project pins ultralytics to releases that all apply `device=N` this way after CUDA started (8.0.0 to 8.4.84). Unpinned (an install gets the newest release, which selects the GPU with `torch.cuda.set_device`), or with a pin that admits 8.4.85 or later, it is a preview finding (a warning) that says which releases misbehave and names the upgrade as a fix; silent where the pin admits only 8.4.87 or later.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each Ultralytics model call against the CUDA initialisations that run before it (the import of a library that the catalogue says initialises CUDA counts), with the model found through a name assigned in the file (`model = YOLO(...)`); the project's ultralytics pin (`requirements*.txt`, `pyproject.toml`, as the init catalogue reads them). Not followed: a device held in a variable or given as a list, a model returned by a function (`model = load()`) or held in an attribute (`self.model`), model calls in functions the module never calls, CUDA initialised by other modules (the project's own modules count only where the file writes an environment variable after them), and the ultralytics actually installed.",
      why: 'Ultralytics 8.0.0 to 8.4.84 applies `device=N` by writing `CUDA_VISIBLE_DEVICES=N` and then using `cuda:0`, the first visible GPU (`select_device`: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`, then `arg = "cuda:0"`; read at the commit that set 8.0.0, 422c49d439 ultralytics/yolo/utils/torch_utils.py:71 and :84, and at 8.4.84, cc8576c36; GPU053 lists the releases between that it was read at; YOLOv5\'s `select_device` is the same). Once CUDA is initialised the variable is no longer read (measured, ground-truth.md: after `torch.cuda.is_available()` a `CUDA_VISIBLE_DEVICES` write has no effect), so every GPU stays visible and `cuda:0` is physical GPU 0: the model runs on GPU 0 whatever N says, often on a card someone else is using. 8.4.85 (ultralytics#24987) returns `cuda:N` when `torch.cuda.is_initialized()` (00572f1cb9 ultralytics/utils/torch_utils.py:214 `remap = not torch.cuda.is_initialized()`, :252 `arg = "cuda:0" if remap else f"cuda:{devices[0]}"`), but torch sets that flag only in its lazy initialisation, not in `torch.cuda.is_available()` (pytorch/pytorch torch/cuda/__init__.py: `is_initialized` returns `_initialized`, set at the end of `_lazy_init`; `is_available` calls `_cuda_getDeviceCount` only), so 8.4.85 and 8.4.86 still use GPU 0 after `is_available()` alone, and refuse N after an earlier call left one GPU visible; hence those releases stay preview. 8.4.87 (ultralytics#25021, 21e038cfa3) never writes the variable and selects the GPU with `torch.cuda.set_device(int(devices[0]))`, returning `cuda:N` (read at 8.4.114, ee3fe3eabf ultralytics/utils/torch_utils.py:236, :316).',
      example:
        'import torch\nfrom ultralytics import YOLO\n\nassert torch.cuda.is_available()\nmodel = YOLO("yolo11n.pt")\nmodel.predict("video.mp4", device=2)  # GPU046: runs on GPU 0\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"  # before anything touches CUDA\nimport torch\nfrom ultralytics import YOLO\n\nassert torch.cuda.is_available()\nmodel = YOLO("yolo11n.pt")\nmodel.predict("video.mp4", device=0)  # GPU 2, the only one visible\n',
      whenNotToCare:
        "When the process already hides every GPU but the one meant (CUDA_VISIBLE_DEVICES set by the shell or a launcher), so `cuda:0` is that GPU anyway, or when the ultralytics that runs the code is 8.4.87 or later (pin it, and the rule is silent).",
      references: [
        'ultralytics/ultralytics 0009995d90 ultralytics/utils/torch_utils.py select_device: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()` ... `arg = "cuda:0"`',
        "ultralytics/ultralytics 422c49d439 (8.0.0) ultralytics/yolo/utils/torch_utils.py:71 (the write) and :84 (`arg = 'cuda:0'`), read through forks that carry the upstream history",
        'ultralytics/ultralytics history of select_device\'s file (`git log -G`, ultralytics/yolo/utils/torch_utils.py then ultralytics/utils/torch_utils.py) from 8.0.0 on: the write `os.environ["CUDA_VISIBLE_DEVICES"] = device` and `arg = "cuda:0"` change only in quote style (fe27db2f6, 8.0.239) until 3912d7f736 (8.4.85) made the return conditional and 21e038cfa3 (8.4.87) removed the write',
        'ultralytics/ultralytics#24987 (3912d7f736, first released in 8.4.85, 00572f1cb9): ultralytics/utils/torch_utils.py:214 `remap = not torch.cuda.is_initialized()`, :252 `arg = "cuda:0" if remap else f"cuda:{devices[0]}"`; ultralytics#25018 (5d57f2111, 8.4.86) :223 `remap = remap or visible == device`',
        'ultralytics/ultralytics#25021 (21e038cfa3, 8.4.87): select_device no longer writes CUDA_VISIBLE_DEVICES; at 8.4.114 (ee3fe3eabf) ultralytics/utils/torch_utils.py:236 "This function never modifies CUDA_VISIBLE_DEVICES", :316 `torch.cuda.set_device(int(devices[0]))`',
        "pytorch/pytorch 000d1f4a10 torch/cuda/__init__.py: `is_initialized()` returns `_initialized`, set only at the end of `_lazy_init()`; `is_available()` calls `torch._C._cuda_getDeviceCount()` without `_lazy_init()`",
        "ultralytics/yolov5 5081342f04 utils/torch_utils.py:117, the same write in YOLOv5's select_device",
        'ground-truth.md: \'When does setting os.environ["CUDA_VISIBLE_DEVICES"] = "1" still take effect?\' (not after torch.cuda.is_available())',
      ],
    },
  },
  check(ctx) {
    // Default only where the pin admits only releases that write the variable and return cuda:0
    // after CUDA started (8.0.0 to 8.4.84); silent where it admits only 8.4.87 or later (no write,
    // torch.cuda.set_device); 8.4.85 and 8.4.86 return cuda:N once torch's CUDA state is initialised.
    const pin = ctx.libraryPins?.ultralytics;
    const pinned = pinnedReleases(pin, RETURNS_REQUESTED_FROM, STOPS_WRITING_FROM);
    if (pinned === "none") return;
    const upgrade =
      pinned === "all"
        ? ""
        : `, or use ultralytics ${STOPS_WRITING_FROM} or later (it selects the GPU with torch.cuda.set_device and leaves CUDA_VISIBLE_DEVICES alone)`;
    // An earlier Ultralytics call with a GPU device started CUDA itself: its select_device calls
    // torch.cuda.is_available() right after writing CUDA_VISIBLE_DEVICES (the process keeps the GPU
    // that write left, or all of them when CUDA had started before it).
    let earlier: { what: string; node: SyntaxNode; note: string; gpu: number } | null = null;
    for (const tc of ctx.model.calls) {
      const device = callArgs(tc.node).keywords.get("device");
      const n = literalOrdinal(device);
      if (n === null || !ultralyticsModelCall(ctx.model, tc.node)) continue;
      const frozen = frozenBefore(ctx, tc.at);
      const init = n < 1 ? null : (frozen ?? earlier);
      earlier ??= {
        what: `an Ultralytics call with device=${device!.text}`,
        node: device!.parent ?? device!,
        note: "its select_device calls torch.cuda.is_available()",
        gpu: frozen ? 0 : n,
      };
      if (!init) continue;
      const gpu = "gpu" in init ? init.gpu : 0;
      const fix =
        "gpu" in init
          ? `pass each model its GPU as a torch.device (device=torch.device("cuda:${n}"), used as it is, without the write)`
          : `set CUDA_VISIBLE_DEVICES=${n} before CUDA is initialised and pass device=0`;
      ctx.report({
        range: nodeRange(device!.parent ?? device!),
        ...(pinned === "all" ? {} : { preview: true, severity: "warning" as const }),
        message: `${appliesBy(device!.text, pinned === "all" ? pin : undefined)}, but CUDA was already initialised by ${init.what} (${ctx.where(init.node.startPosition.row)}${init.note ? `: ${init.note}` : ""}): the write has no effect, so this runs on the first GPU the process sees (GPU ${gpu}), not GPU ${n}; ${fix}${upgrade}`,
        related: [{ range: nodeRange(init.node), message: `CUDA initialised here by ${init.what}` }],
      });
    }
  },
};
