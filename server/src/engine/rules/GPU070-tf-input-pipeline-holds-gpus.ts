import type { PythonRule, RuleContext } from "../rule";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { importedModules } from "../python/imports";
import { TF_DEVICE_CONFIG } from "../frameworks";
import { calleePath } from "./shared/py";

/** The frameworks that train on the GPUs beside a TensorFlow input pipeline. */
const TRAINERS: ReadonlyArray<{ module: string; name: string }> = [
  { module: "jax", name: "JAX" },
  { module: "flax", name: "JAX" },
  { module: "torch", name: "PyTorch" },
];

/** TensorFlow's input-pipeline calls: tf.data and tf.io ops, and tensorflow_datasets' loaders (which build a tf.data pipeline). */
function isPipelineCall(path: string): boolean {
  // Feature specs, options and file-system helpers build no tensor (they start no runtime).
  if (/^tensorflow\.io\.(gfile\.|[A-Z])|^tensorflow\.data\.Options$/.test(path)) return false;
  return (
    path.startsWith("tensorflow.data.") ||
    path.startsWith("tensorflow.io.") ||
    path === "tensorflow_datasets.load" ||
    path === "tensorflow_datasets.as_numpy" ||
    path === "tensorflow_datasets.builder"
  );
}

/**
 * Words whose presence anywhere in the project's modules means TensorFlow's GPUs may be hidden or
 * its memory bounded elsewhere (the call in `main()` of another module, as in Flax's examples): the
 * TF configuration calls (GPU012's list) and the environment variable that turns on memory growth.
 */
const HIDING_WORDS: readonly string[] = [
  "set_visible_devices",
  "set_memory_growth",
  "set_logical_device_configuration",
  "set_virtual_device_configuration",
  "TF_FORCE_GPU_ALLOW_GROWTH",
  "per_process_gpu_memory_fraction",
  "allow_growth",
];

/** The first import of `tensorflow` (or a submodule) or `tensorflow_datasets` in the file, and the first of a trainer framework. */
function importsOf(ctx: RuleContext): { tf: SyntaxNode | null; trainer: string | null } {
  let tf: SyntaxNode | null = null;
  let trainer: string | null = null;
  for (const stmt of ctx.model.nodesOfType(["import_statement", "import_from_statement"])) {
    if (!stmt) continue;
    for (const mod of importedModules(stmt)) {
      const top = mod.split(".")[0];
      if (!tf && (top === "tensorflow" || top === "tensorflow_datasets")) tf = stmt;
      // jax2tf converts JAX functions into TensorFlow ones: a module importing it serves TF.
      if (mod.startsWith("jax.experimental") && stmt.text.includes("jax2tf")) continue;
      trainer ??= TRAINERS.find((t) => t.module === top)?.name ?? null;
    }
  }
  return { tf, trainer };
}

/** Whether the file itself hides the GPUs from TensorFlow, bounds its memory, or names the variables that decide it. */
function hidesHere(ctx: RuleContext): boolean {
  for (const call of ctx.model.nodesOfType("call")) {
    if (call && TF_DEVICE_CONFIG.has(calleePath(ctx.model, call) ?? "")) return true;
  }
  if (
    envWritesAnywhere(ctx.model).some((w) => ["CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH"].includes(w.variable))
  )
    return true;
  const has = (w: string) => ctx.model.text.includes(w);
  return HIDING_WORDS.some(has) || has("CUDA_VISIBLE_DEVICES") || has("jax_platform") || has("JAX_PLATFORM");
}

/**
 * The file's first input-pipeline call (earliest line; of a chain `tf.data.X(...).batch(...)`, the
 * innermost, whose path is the shortest), with its dotted path; null when none.
 */
function firstPipelineCall(ctx: RuleContext): { call: SyntaxNode; path: string } | null {
  let best: { call: SyntaxNode; path: string } | null = null;
  for (const call of ctx.model.nodesMentioning("call", ["data", "io", "load", "as_numpy", "builder"])) {
    const path = call ? calleePath(ctx.model, call) : null;
    if (!call || !path || !isPipelineCall(path)) continue;
    const row = call.startPosition.row;
    if (!best || row < best.call.startPosition.row) best = { call, path };
    else if (row === best.call.startPosition.row && path.length < best.path.length) best = { call, path };
  }
  return best;
}

/** GPU070: a TensorFlow input pipeline beside JAX or PyTorch, with TensorFlow's GPUs left visible to it. */
export const rule: PythonRule = {
  meta: {
    code: "GPU070",
    name: "tf-input-pipeline-holds-gpus",
    severity: "warning",
    fixable: false,
    preview: true,
    // An import of tensorflow (or tensorflow_datasets) and of jax, flax or torch, all by name.
    trigger: (t) => t.has("tensorflow") && (t.has("jax") || t.has("torch") || t.has("flax")),
    docs: {
      what: 'Finds a module that imports TensorFlow (or `tensorflow_datasets`) beside JAX or PyTorch (for PyTorch, in a module that names `cuda`) and runs a TensorFlow input pipeline (`tf.data.*`, `tf.io.*`, `tfds.load`, `tfds.as_numpy`, `tfds.builder`) without `tf.config.set_visible_devices([], "GPU")` or another bound on TensorFlow\'s GPU memory.',
      follows:
        "The file's imports (anywhere in it) and its calls into `tf.data`, `tf.io` and `tensorflow_datasets`. It stays silent when the file, or any other `.py` module of the project (the files GPU001's writers' scan lists), names a TensorFlow device or memory setting (`set_visible_devices`, `set_memory_growth`, `set_logical_device_configuration`, `set_virtual_device_configuration`, `allow_growth`, `per_process_gpu_memory_fraction`, `TF_FORCE_GPU_ALLOW_GROWTH`), when the file names `CUDA_VISIBLE_DEVICES` or JAX's platform setting, in a module whose JAX import is `jax.experimental.jax2tf` (which serves TensorFlow), and in test modules (a text with no file around it, an unsaved buffer, is judged alone). Not followed: the launch environment (`TF_FORCE_GPU_ALLOW_GROWTH` exported in a shell or container), and which TensorFlow build is installed (`tensorflow-cpu` sees no GPU, and an import does not tell it apart).",
      why: 'TensorFlow\'s GPU guide ("Limiting GPU memory growth"): "By default, TensorFlow maps nearly all of the GPU memory of all GPUs (subject to CUDA_VISIBLE_DEVICES) visible to the process". It does so when its runtime starts, at the first TensorFlow op: here the input pipeline\'s. JAX\'s documentation on GPU memory ("Running JAX and GPU TensorFlow concurrently") says TensorFlow also preallocates, so running both is like running two JAX processes on one GPU, and gives the cure: CPU-only TensorFlow when it only loads data, with `tf.config.experimental.set_visible_devices([], "GPU")`; JAX\'s tensorflow_datasets tutorial makes that call right after importing TensorFlow ("Ensure TF does not see GPU and grab all GPU memory"). Without it the framework that trains finds most of each GPU taken (an out-of-memory error, or JAX preallocating from what is left).',
      example:
        "import jax\nimport tensorflow as tf  # GPU070: the pipeline's first op maps most of every GPU's memory\n\n\ndef batches(paths):\n    ds = tf.data.TFRecordDataset(paths).batch(32)\n    return ds.as_numpy_iterator()\n",
      fix: 'import jax\nimport tensorflow as tf\n\n# TensorFlow only feeds the input pipeline: keep it off the GPUs\ntf.config.set_visible_devices([], "GPU")\n\n\ndef batches(paths):\n    ds = tf.data.TFRecordDataset(paths).batch(32)\n    return ds.as_numpy_iterator()\n',
      whenNotToCare:
        "When the project installs `tensorflow-cpu`, when TensorFlow's GPU memory is bounded in the launch environment (`TF_FORCE_GPU_ALLOW_GROWTH=true`), or when the program never runs TensorFlow and the other framework on the same GPUs.",
      references: [
        'TensorFlow guide, Use a GPU, "Limiting GPU memory growth" (https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth; tensorflow/docs@fd8ac77643 site/en/guide/gpu.ipynb): "By default, TensorFlow maps nearly all of the GPU memory of all GPUs (subject to CUDA_VISIBLE_DEVICES) visible to the process"',
        'JAX documentation, GPU memory allocation, "Running JAX and GPU TensorFlow concurrently" (jax-ml/jax@cec06d116c docs/new_docs/201/gpu-memory.md:48-55): TensorFlow also preallocates; use CPU-only TensorFlow for data loading with tf.config.experimental.set_visible_devices([], "GPU")',
        "JAX tutorial, Training a simple neural network, with tensorflow/datasets data loading (jax-ml/jax@cec06d116c docs/notebooks/neural_network_with_tfds_data.md:194-195): \"# Ensure TF does not see GPU and grab all GPU memory.\" before tf.config.set_visible_devices([], device_type='GPU')",
        "p-doom/jasmine#38 (2025): a JAX world-model trainer's tf.data loader, fixed by hiding the GPUs from TensorFlow after its import",
      ],
    },
  },
  check(ctx) {
    if (ctx.testModule) return;
    const { tf, trainer } = importsOf(ctx);
    // PyTorch shares the GPUs only where the module puts its work there (a dataset converter
    // that makes CPU tensors leaves them to TensorFlow alone).
    if (!tf || !trainer || (trainer === "PyTorch" && !ctx.model.text.includes("cuda"))) return;
    const first = firstPipelineCall(ctx);
    if (!first || hidesHere(ctx)) return;
    // Another module may hide the GPUs first (Flax's examples call it in main.py, the pipeline
    // lives in input_pipeline.py). A text linted without a project (an unsaved buffer) is judged alone.
    if (ctx.project?.projectMentions && ctx.project.projectMentions(HIDING_WORDS) !== null) return;
    const { call, path } = first;
    ctx.report({
      range: nodeRange(tf),
      message: `TensorFlow is imported beside ${trainer} and runs the input pipeline (${path.replace(/^tensorflow\./, "tf.").replace(/^tensorflow_datasets\./, "tfds.")}(), ${ctx.where(call.startPosition.row)}) with every GPU visible to it: its first op maps nearly all of each visible GPU's memory (TensorFlow's GPU guide), which ${trainer} then lacks. Call tf.config.set_visible_devices([], "GPU") right after importing TensorFlow`,
      preview: true,
    });
  },
};
