import type { Rule } from "../rule";
import { nodeRange } from "../python/events";
import { callArgs, calleePath } from "./shared/py";
import { LAUNCHER_SOURCE, NOTEBOOK_LAUNCHERS } from "./GPU048-notebook-launcher-after-cuda-init";

/**
 * accelerate's notebook_launcher without a process count (read at huggingface/accelerate
 * 16cb6eb80dd9, src/accelerate/launchers.py notebook_launcher): a TPU runtime on Colab or Kaggle
 * defaults to 8 cores, Colab with fewer than two GPUs runs the function in the notebook's process,
 * and everywhere else `if num_processes is None: raise ValueError("You have to specify the number
 * of GPUs you would like to use, add `num_processes=...` to your call.")`.
 */
export const rule: Rule = {
  meta: {
    code: "GPU068",
    name: "notebook-launcher-without-process-count",
    severity: "warning",
    fixable: false,
    // The launcher's name is in the text of every call of it.
    trigger: (t) => t.hasWord("notebook_launcher"),
    docs: {
      what: "Finds Hugging Face Accelerate's `notebook_launcher(fn, args)` called with no process count (no `num_processes=` and no third positional argument). Outside a Colab runtime with fewer than two GPUs (and Colab's or Kaggle's TPU runtimes) accelerate stops with `ValueError: You have to specify the number of GPUs you would like to use, add num_processes=... to your call.`",
      follows:
        "Every call of `accelerate.notebook_launcher` (or `accelerate.launchers.notebook_launcher`) in the notebook or module, resolved through its imports, functions included. A count given through `**kwargs` counts as given. Silent in a notebook saved from Google Colab (its metadata carries Colab's `colab` key): Colab's hosted runtimes have one GPU or a TPU, where the default works; and in one saved from Kaggle (its `kaggle` key), whose TPU runtime sets the count and whose GPU runtime accelerate before 0.20 ran in the notebook's own process (launchers.py at v0.10.0: `if in_colab_or_kaggle:`). The releases read (v0.5.0, v0.10.0, v0.20.0, v0.30.0, v1.0.0, v1.14.0) all raise the ValueError everywhere else. Not followed: wrappers of notebook_launcher in other modules.",
      why: `notebook_launcher's process count defaults to None. On a TPU runtime in Colab or Kaggle it becomes 8; in Colab with fewer than two GPUs the launcher calls the function in the notebook's own process; on every other machine (a workstation, a Jupyter server, a VS Code kernel, Kaggle's GPU runtimes) it raises ValueError before starting anything (${LAUNCHER_SOURCE}, read at huggingface/accelerate 16cb6eb80dd9: \`elif in_colab and get_gpu_info()[1] < 2: ... function(*args)\` then \`else: if num_processes is None: raise ValueError(...)\`). Tutorial notebooks written for Colab's free GPU carry the call to machines where it fails (huggingface/notebooks#594 added num_processes to such a notebook).`,
      example:
        "from accelerate import notebook_launcher\n\nnotebook_launcher(training_function, (model,))  # GPU068: ValueError outside Colab's one-GPU runtime\n",
      fix: "from accelerate import notebook_launcher\n\nnotebook_launcher(training_function, (model,), num_processes=2)  # the GPUs to train on\n",
      whenNotToCare:
        "A notebook meant only for Colab's one-GPU or TPU runtimes, where the default works (one saved from Colab or Kaggle is not reported): a notebook written for Colab but saved elsewhere looks the same as one meant for a workstation, and raises on the workstation, in a VS Code kernel or in Jupyter.",
      references: [
        'huggingface/accelerate 16cb6eb80dd9 src/accelerate/launchers.py notebook_launcher: `num_processes=None` default; `elif in_colab and get_gpu_info()[1] < 2:` runs `function(*args)`; `if num_processes is None: raise ValueError("You have to specify the number of GPUs you would like to use, add `num_processes=...` to your call.")`',
        "huggingface/notebooks#594 (2025-05-12): an Accelerate example notebook's `notebook_launcher(training_function, (model,))` given num_processes",
      ],
    },
  },
  check(ctx) {
    // A notebook saved from Colab (or Kaggle) runs there: one GPU at most, or a TPU, where the default works.
    if (ctx.notebookHost === "colab" || ctx.notebookHost === "kaggle") return;
    for (const call of ctx.model.nodesOfType("call")) {
      const path = call ? calleePath(ctx.model, call) : null;
      if (!call || !path || !NOTEBOOK_LAUNCHERS.has(path)) continue;
      const args = call.childForFieldName("arguments")?.namedChildren ?? [];
      if (args.some((a) => a?.type === "list_splat" || a?.type === "dictionary_splat")) continue;
      const { positional, keywords } = callArgs(call);
      if (keywords.has("num_processes") || positional.length >= 3) continue;
      ctx.report({
        range: nodeRange(call),
        message: `notebook_launcher() without num_processes stops with "ValueError: You have to specify the number of GPUs you would like to use" everywhere but a Colab runtime with fewer than two GPUs or a TPU runtime (${LAUNCHER_SOURCE}); pass num_processes= the number of GPUs to train on`,
      });
    }
  },
};
