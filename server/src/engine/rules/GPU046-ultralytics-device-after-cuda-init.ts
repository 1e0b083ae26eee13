import type { Rule, RuleContext } from "../rule";
import { freezesVariable } from "../python/timeline";
import { nodeRange, type InitEvent } from "../python/events";
import { stringValue, type SyntaxNode } from "../python/parser";
import { callArgs } from "./shared/py";
import { SELECT_DEVICE_SOURCE, ultralyticsModelCall } from "./shared/ultralytics";

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
      what: 'Finds an Ultralytics model call (`model.predict/train/val/track/benchmark/export/tune(..., device=N)` or `model(src, device=N)`, where `model` is an Ultralytics model such as `YOLO`, `RTDETR` or `SAM` made in this module) with a literal GPU ordinal N >= 1 (`2`, `"2"`, `"cuda:2"`) after something initialised CUDA in this program (`torch.cuda.is_available()`, a tensor on CUDA, an import that initialises CUDA, or an earlier Ultralytics call with a GPU device: two cameras on two GPUs, `m0.predict(device=0)` then `m1.predict(device=1)`). Not reported where the program wrote `CUDA_VISIBLE_DEVICES` itself before CUDA was initialised.',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each Ultralytics model call against the CUDA initialisations that run before it (the import of a library that the catalogue says initialises CUDA counts), with the model found through a name assigned in the file (`model = YOLO(...)`). Not followed: a device held in a variable or given as a list, a model returned by a function (`model = load()`) or held in an attribute (`self.model`), model calls in functions the module never calls, and CUDA initialised by other modules (the project's own modules count only where the file writes an environment variable after them).",
      why: 'Ultralytics applies `device=N` by writing `CUDA_VISIBLE_DEVICES=N` and then using `cuda:0`, the first visible GPU (ultralytics/utils/torch_utils.py, `select_device`: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()`, then `arg = "cuda:0"`; read at ultralytics/ultralytics 0009995d90; YOLOv5\'s `select_device` is the same). Once CUDA is initialised the variable is no longer read (measured, ground-truth.md: after `torch.cuda.is_available()` a `CUDA_VISIBLE_DEVICES` write has no effect), so every GPU stays visible and `cuda:0` is physical GPU 0: the model runs on GPU 0 whatever N says, often on a card someone else is using.',
      example:
        'import torch\nfrom ultralytics import YOLO\n\nassert torch.cuda.is_available()\nmodel = YOLO("yolo11n.pt")\nmodel.predict("video.mp4", device=2)  # GPU046: runs on GPU 0\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"  # before anything touches CUDA\nimport torch\nfrom ultralytics import YOLO\n\nassert torch.cuda.is_available()\nmodel = YOLO("yolo11n.pt")\nmodel.predict("video.mp4", device=0)  # GPU 2, the only one visible\n',
      whenNotToCare:
        "When the process already hides every GPU but the one meant (CUDA_VISIBLE_DEVICES set by the shell or a launcher), so `cuda:0` is that GPU anyway.",
      references: [
        'ultralytics/ultralytics 0009995d90 ultralytics/utils/torch_utils.py select_device: `os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()` ... `arg = "cuda:0"`',
        "ultralytics/yolov5 5081342f04 utils/torch_utils.py:117, the same write in YOLOv5's select_device",
        'ground-truth.md: \'When does setting os.environ["CUDA_VISIBLE_DEVICES"] = "1" still take effect?\' (not after torch.cuda.is_available())',
      ],
    },
  },
  check(ctx) {
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
        message: `Ultralytics applies device=${device!.text} by writing CUDA_VISIBLE_DEVICES and then using cuda:0 (${SELECT_DEVICE_SOURCE}), but CUDA was already initialised by ${init.what} (${ctx.where(init.node.startPosition.row)}${init.note ? `: ${init.note}` : ""}): the write has no effect, so this runs on the first GPU the process sees (GPU ${gpu}), not GPU ${n}; ${fix}`,
        related: [{ range: nodeRange(init.node), message: `CUDA initialised here by ${init.what}` }],
      });
    }
  },
};
