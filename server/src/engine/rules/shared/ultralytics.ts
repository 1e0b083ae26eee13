/** What GPU046 and GPU049 know of Ultralytics' device selection (read in its source, cited below). */
import type { ModuleModel } from "../../python/model";
import type { SyntaxNode } from "../../python/parser";
import { calleePath } from "./py";
import { rangesOverlap } from "../../initCatalogue";

/**
 * Ultralytics' model classes (the `ultralytics` package's exports). Each one's `predict`, `train`,
 * `val`, `track`, `benchmark`, `export` and `tune`, and a call of the model itself (`model(src)` is
 * `predict`), pass `device=` to `select_device`.
 */
const MODEL_CLASSES: ReadonlySet<string> = new Set(["YOLO", "YOLOWorld", "YOLOE", "RTDETR", "SAM", "FastSAM", "NAS"]);
/** The model methods that take `device=` (see {@link MODEL_CLASSES}). */
const DEVICE_METHODS: ReadonlySet<string> = new Set([
  "predict",
  "train",
  "val",
  "track",
  "benchmark",
  "export",
  "tune",
]);

/**
 * How Ultralytics applies `device=N` (read in ultralytics/ultralytics @ 0009995d90,
 * `ultralytics/utils/torch_utils.py`, `select_device`): `os.environ["CUDA_VISIBLE_DEVICES"] = device
 * # set environment variable - must be before assert is_available()`, then `arg = "cuda:0"`, i.e. it
 * selects GPU N by hiding the others and using the first visible one. YOLOv5's `select_device` does
 * the same (ultralytics/yolov5 @ 5081342f04, utils/torch_utils.py:117).
 */
export const SELECT_DEVICE_SOURCE = "ultralytics/utils/torch_utils.py select_device";

/**
 * The first ultralytics release of YOLOv8 (select_device writes CUDA_VISIBLE_DEVICES and returns
 * `cuda:0`: 422c49d439 ultralytics/yolo/utils/torch_utils.py:71, :84); earlier version numbers are
 * another package.
 */
export const ULTRALYTICS_FIRST = "8.0.0";
/**
 * From 8.4.85 (ultralytics#24987, 3912d7f736; 8.4.85 is 00572f1cb9) select_device returns the
 * requested `cuda:N` once torch's CUDA state is initialised (torch_utils.py:214 `remap = not
 * torch.cuda.is_initialized()`, :252 `arg = "cuda:0" if remap else f"cuda:{devices[0]}"`); before,
 * `cuda:0` whatever was asked.
 */
export const RETURNS_REQUESTED_FROM = "8.4.85";
/**
 * From 8.4.87 (ultralytics#25021, 21e038cfa3) select_device never writes CUDA_VISIBLE_DEVICES and
 * selects one GPU with `torch.cuda.set_device` (read at 8.4.114, ee3fe3eabf torch_utils.py:236, :316).
 */
export const STOPS_WRITING_FROM = "8.4.87";

/**
 * What the project's ultralytics pin admits of a behaviour that releases from {@link ULTRALYTICS_FIRST}
 * up to (not including) `until` have: `"all"` when every release it admits has it, `"none"` when it
 * admits only releases from `goneFrom` on (default `until`; releases between `until` and `goneFrom`
 * may have it or not), `"some"` when unpinned, unreadable, or both.
 */
export function pinnedReleases(pin: string | undefined, until: string, goneFrom = until): "all" | "none" | "some" {
  if (!pin) return "some";
  try {
    if (!rangesOverlap(pin, `<${goneFrom}`)) return "none";
    const outside = rangesOverlap(pin, `>=${until}`) || rangesOverlap(pin, `<${ULTRALYTICS_FIRST}`);
    return outside ? "some" : "all";
  } catch {
    return "some";
  }
}

/**
 * The model a call passes `device=` to, as written: `model` in `model.predict(...)` (a
 * {@link DEVICE_METHODS} method) or in `model(src)` (a call of the model is `predict`), or the
 * `YOLO("x.pt")` in `YOLO("x.pt").predict(...)`; null for any other call. Whether it is an
 * Ultralytics model is {@link makesModel}'s question.
 */
export function modelCallReceiver(call: SyntaxNode): SyntaxNode | null {
  const fn = call.childForFieldName("function");
  if (fn?.type === "attribute")
    return DEVICE_METHODS.has(fn.childForFieldName("attribute")?.text ?? "") ? fn.childForFieldName("object") : null;
  return fn?.type === "identifier" ? fn : null;
}

/** Whether `made` is a call that makes an Ultralytics model (`YOLO("x.pt")`, `ultralytics.RTDETR(...)`: {@link MODEL_CLASSES}). */
export function makesModel(model: ModuleModel, made: SyntaxNode | null | undefined): boolean {
  const path = made?.type === "call" ? calleePath(model, made) : null;
  return !!path && path.startsWith("ultralytics.") && MODEL_CLASSES.has(path.slice(path.lastIndexOf(".") + 1));
}

/**
 * Whether `call` passes `device=` to an Ultralytics model: a device method of (or a call of) a model
 * made in place (`YOLO("x.pt").predict(...)`) or bound to a name in the module before the call
 * (`model = YOLO("x.pt")`, then `model.predict(...)`).
 */
export function ultralyticsModelCall(model: ModuleModel, call: SyntaxNode): boolean {
  const receiver = modelCallReceiver(call);
  const made =
    receiver?.type === "call"
      ? receiver
      : receiver?.type === "identifier"
        ? model.valueOf(receiver.text, call.startIndex)
        : null;
  return makesModel(model, made);
}
