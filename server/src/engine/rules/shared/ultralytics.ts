/**
 * What GPU046 and GPU049 know of Ultralytics' device selection (read in its source, cited below).
 *
 * Ultralytics' model classes (the `ultralytics` package's exports). Each one's `predict`, `train`,
 * `val`, `track`, `benchmark`, `export` and `tune`, and a call of the model itself (`model(src)` is
 * `predict`), pass `device=` to `select_device`.
 */
export const MODEL_CLASSES: ReadonlySet<string> = new Set([
  "YOLO",
  "YOLOWorld",
  "YOLOE",
  "RTDETR",
  "SAM",
  "FastSAM",
  "NAS",
]);
/** The model methods that take `device=` (see {@link MODEL_CLASSES}). */
export const DEVICE_METHODS: ReadonlySet<string> = new Set([
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
