import type { Rule, RuleContext } from "../rule";
import { nodeRange, type InitEvent, type TimelineCall, type TimelineEvent } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { callArgs, calleePath } from "./shared/py";

/** accelerate's notebook launcher, under the paths the model resolves it to. */
export const NOTEBOOK_LAUNCHERS: ReadonlySet<string> = new Set([
  "accelerate.notebook_launcher",
  "accelerate.launchers.notebook_launcher",
]);

/**
 * Where accelerate starts the workers with `fork` (read at huggingface/accelerate 16cb6eb80dd9,
 * src/accelerate/launchers.py: `start_method = "spawn" if device_type == "xpu" or is_rocm_available()
 * else "fork"`), refuses an earlier Accelerator (`if len(AcceleratorState._shared_state) > 0: raise
 * ValueError("To launch a multi-device training from your notebook, the `Accelerator` should only be
 * initialized inside your training function. ...")`) and turns the children's CUDA error into
 * `RuntimeError: CUDA has been initialized before the `notebook_launcher` could create a forked
 * subprocess`.
 */
export const LAUNCHER_SOURCE = "accelerate/launchers.py notebook_launcher";

/**
 * Initialising calls of torch that break a forked child: torch's lazy init ran (`driver` and deeper:
 * python/frameworks.ts InitDepth; torch/cuda/__init__.py `_lazy_init` raises "Cannot re-initialize
 * CUDA in forked subprocess" in the child), and, measured, `torch.cuda.is_available()` (depth `nvml`).
 */
function breaksFork(e: TimelineEvent): e is InitEvent {
  return e.kind === "init" && e.framework === "torch" && (e.depth !== "nvml" || e.what === "torch.cuda.is_available()");
}

/** The number of processes a notebook_launcher call asks for: `num_processes=N` or the third positional argument, when a literal integer; else null. */
function processCount(call: SyntaxNode): number | null {
  const { positional, keywords } = callArgs(call);
  const n = keywords.get("num_processes") ?? positional[2];
  return n?.type === "integer" && /^\d+$/.test(n.text) ? Number(n.text) : null;
}

/**
 * What broke the fork before the launcher call `launch` ran: the first breaking init event before
 * it in the timeline (`events[0 .. launch.at)`); null when none. Library calls that initialise
 * (TrainingArguments, Seq2SeqTrainingArguments, Accelerator) are init events through the catalogue
 * (initCatalogue.json), each measured; that each of them also breaks a forked child was measured by
 * verify/frameworks/fork_probe.py (verify/results-fork-h200.json).
 */
function initBefore(ctx: RuleContext, launch: TimelineCall): { node: SyntaxNode; what: string; note?: string } | null {
  const e = ctx.model.events.slice(0, launch.at).find(breaksFork);
  return e ? { node: e.node, what: e.what, note: e.note } : null;
}

/** GPU048: accelerate's notebook_launcher with several processes after the notebook (or script) initialised CUDA. */
export const rule: Rule = {
  meta: {
    code: "GPU048",
    name: "notebook-launcher-after-cuda-init",
    severity: "error",
    fixable: false,
    // The launcher's name is in the text of every call of it.
    trigger: (t) => t.hasWord("notebook_launcher"),
    docs: {
      what: "Finds `notebook_launcher(fn, num_processes=N)` from Hugging Face Accelerate with a literal N > 1 after something in the same program (an earlier notebook cell, or the script above the call) ran torch's CUDA initialisation: `torch.cuda.is_available()`, a device query such as `torch.cuda.get_device_name()`, `torch.cuda.set_device()`, a tensor or model put on CUDA, `transformers.TrainingArguments(...)` or `Seq2SeqTrainingArguments(...)`, `accelerate.Accelerator()`, or an import that initialises CUDA; each measured to break a forked child (verify/results-fork-h200.json). `torch.cuda.device_count()` does not (measured) and is not reported.",
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each `notebook_launcher` call against the CUDA initialisations and the measured calls that run before it (the import of a library that the catalogue says initialises CUDA counts). Not followed: a process count held in a variable, launcher calls in functions the module never calls, and CUDA initialised by other modules (the project's own modules count only where the file writes an environment variable after them).",
      why: `With more than one process, notebook_launcher starts its workers with the \`fork\` start method on CUDA machines (${LAUNCHER_SOURCE}, read at huggingface/accelerate 16cb6eb80dd9: \`start_method = "spawn" if device_type == "xpu" or is_rocm_available() else "fork"\`). A forked child cannot use CUDA once the parent ran torch's CUDA initialisation: torch raises "Cannot re-initialize CUDA in forked subprocess" (torch/cuda/__init__.py \`_lazy_init\`; the PyTorch multiprocessing notes: "The CUDA runtime does not support the fork start method"), and accelerate reports it as "CUDA has been initialized before the \`notebook_launcher\` could create a forked subprocess". An \`Accelerator()\` created before the call is refused outright: "the \`Accelerator\` should only be initialized inside your training function".`,
      example:
        '# cell 1\nfrom accelerate import notebook_launcher\nfrom transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out")  # initialises CUDA\n# cell 2\nnotebook_launcher(train, num_processes=2)  # GPU048\n',
      fix: '# cell 1\nfrom accelerate import notebook_launcher\n# cell 2\ndef train():\n    from transformers import TrainingArguments\n    args = TrainingArguments(output_dir="out")  # inside each worker\n    ...\n\nnotebook_launcher(train, num_processes=2)\n',
      whenNotToCare:
        "With one process (`num_processes=1`) the launcher calls the function in the notebook's own process and nothing is forked. On ROCm and XPU machines accelerate uses `spawn`, where the parent's CUDA state does not matter (but the function and its arguments must then be picklable).",
      references: [
        'huggingface/accelerate 16cb6eb80dd9 src/accelerate/launchers.py: `start_method = "spawn" if device_type == "xpu" or is_rocm_available() else "fork"`; `the `Accelerator` should only be initialized inside your training function`; `has been initialized before the `notebook_launcher` could create a forked subprocess`',
        'PyTorch, Multiprocessing best practices, CUDA in multiprocessing: "The CUDA runtime does not support the fork start method; either the spawn or forkserver start method are required to use CUDA in subprocesses" (https://pytorch.org/docs/stable/notes/multiprocessing.html)',
        'pytorch/pytorch torch/cuda/__init__.py `_lazy_init`: `if _is_in_bad_fork(): raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. ...")`',
        'Measured on an H200 (verify/frameworks/fork_probe.py, verify/results-fork-h200.json; torch 2.11, transformers 5.17.0, accelerate 1.15.0): after torch.cuda.is_available(), get_device_name(0), set_device(0), mem_get_info(), a tensor on cuda, TrainingArguments(...), Seq2SeqTrainingArguments(...) or Accelerator() in the parent, a forked child raised "Cannot re-initialize CUDA in forked subprocess" and notebook_launcher(num_processes=2) failed (after Accelerator() with accelerate\'s ValueError); after import torch alone or torch.cuda.device_count() both worked',
      ],
    },
  },
  check(ctx) {
    for (const tc of ctx.model.calls) {
      const path = calleePath(ctx.model, tc.node);
      if (!path || !NOTEBOOK_LAUNCHERS.has(path)) continue;
      const n = processCount(tc.node);
      if (n === null || n < 2) continue;
      const init = initBefore(ctx, tc);
      if (!init) continue;
      const accelerator = /^accelerate\.(accelerator\.)?Accelerator\b/.test(init.what);
      const where = `${ctx.where(init.node.startPosition.row)}${init.note ? `: ${init.note}` : ""}`;
      ctx.report({
        range: nodeRange(tc.node),
        message: accelerator
          ? `notebook_launcher(num_processes=${n}) after ${init.what} (${where}): accelerate refuses it ("the Accelerator should only be initialized inside your training function", ${LAUNCHER_SOURCE}); create the Accelerator inside the launched function and restart the kernel`
          : `notebook_launcher(num_processes=${n}) forks its workers, but CUDA was already initialised by ${init.what} (${where}): each worker fails with "Cannot re-initialize CUDA in forked subprocess" (${LAUNCHER_SOURCE}); move that call into the launched function and restart the kernel`,
        related: [{ range: nodeRange(init.node), message: `CUDA initialised here by ${init.what}` }],
      });
    }
  },
};
