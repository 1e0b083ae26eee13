import type { PythonRule } from "../rule";

/**
 * The rules whose findings depend on what ran before a line: GPU050 replays them in the order a
 * saved notebook's cells last ran (notebook.ts `executionOrderFindings`).
 */
export const REPLAYED_RULES: readonly string[] = ["GPU001", "GPU012", "GPU029", "GPU041"];

/**
 * GPU050: a notebook cell whose saved execution count shows that it ran after the cell that
 * initialised CUDA, TensorFlow or JAX, where its setting came too late. The check itself is
 * notebook.ts `executionOrderFindings`: it lints the executed code cells a second time in the order
 * of their execution counts with the rules of {@link REPLAYED_RULES}, and reports what that order
 * adds to the cells' own order. This file holds the rule's identity and documentation; its `check`
 * has nothing to do on a Python file or on the cells in their own order.
 */
export const rule: PythonRule = {
  meta: {
    code: "GPU050",
    name: "notebook-cell-ran-after-init",
    severity: "warning",
    fixable: false,
    // Never on a module: the notebook pass (notebook.ts) runs it on saved execution counts.
    trigger: () => false,
    docs: {
      what: "In a notebook saved with execution counts, reports a cell that sets a startup variable (CUDA_VISIBLE_DEVICES, ...) or configures TensorFlow or JAX devices, whose execution count is higher than that of a later cell that had already initialised CUDA, TensorFlow or JAX: in the session the notebook was saved from, the setting ran too late (GPU001, GPU012, GPU029 and GPU041 in the order the cells last ran).",
      follows:
        "The `execution_count` of every code cell of the .ipynb file: when every executed code cell has one, the counts differ, and their order is not the cells' order, the executed cells are linted a second time in the order of their counts (cells without a count did not run in that session and are left out), with the checks of GPU001, GPU012, GPU029 and GPU041, and what that order adds is reported here, naming both cells and their counts. In the editor the cells' execution order comes from VS Code as the cells run (the language client syncs each cell's execution summary), so a re-run cell is reported as soon as it has run. Not followed: a notebook whose counts repeat (outputs kept from several sessions) and cells run in another kernel.",
      why: 'Execution counts number the cells in the order the kernel ran them, and one kernel session counts from 1 without repeating (IPython: `In [n]`, nbformat\'s `execution_count`). A configuration cell with a higher count than a cell that used the GPU ran after it: TensorFlow then raises RuntimeError "Virtual devices cannot be modified after being initialized" (or "Physical devices cannot be modified after being initialized", documented for tf.config.set_logical_device_configuration, set_visible_devices and set_memory_growth), and a CUDA_VISIBLE_DEVICES written after CUDA initialised has no effect (measured, ground-truth.md: GPU001). Re-running one cell of a notebook is how this happens: the cells\' order is right, the session is not. On the ecosystem corpus (37 code bases, 1,851 notebooks, 2026-12-06) 258 notebooks carry counts of one session, 63 of them out of the cells\' order; the replay reports nothing there.',
      example:
        '# cell 1, In [1]\nimport tensorflow as tf\n\n# cell 2, In [4]: run again after cell 3\ngpus = tf.config.list_physical_devices("GPU")\ntf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=4096)] * 2)  # GPU050\n\n# cell 3, In [3]\nwith tf.device("/GPU:0"):\n    y = tf.reduce_sum(tf.ones((4, 4)))\n',
      fix: "Restart the kernel and run the cells in order (the notebook's own order is right); to change the configuration, change the cell and run all cells again from a fresh kernel.",
      whenNotToCare:
        "A notebook whose counts mix sessions in a way the counts cannot show (a kernel restarted and only some cells run again, with the others' old counts kept higher): the finding then names an order that did not happen in one session. Outputs cleared before committing (no counts) give no finding.",
      references: [
        'nbformat, The Notebook file format, Code cells: `execution_count` (integer or null) "The code cell\'s prompt number. Will be null if the cell has not been run" (https://nbformat.readthedocs.io/en/latest/format_description.html#code-cells)',
        'TensorFlow documentation, tf.config.set_logical_device_configuration: "Raises: RuntimeError: Runtime is already initialized"',
        "docs/ground-truth.md, GPU001: CUDA_VISIBLE_DEVICES written after CUDA initialised has no effect (measured on H200s, torch 2.11)",
      ],
    },
  },
  check() {
    // Nothing on a module: see notebook.ts executionOrderFindings.
  },
};
