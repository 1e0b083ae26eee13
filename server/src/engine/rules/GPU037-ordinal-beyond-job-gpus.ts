import type { PythonRule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import { deviceUses } from "../python/devices";
import { SET_DEVICE_PATHS } from "../frameworks";
import { scriptNameOf, type SlurmLaunch } from "../slurmLaunch";
import { callArgs, calleePath, envReadsOf, flowsFrom } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";
/** Variables that hold a task's node-local (or global) rank. */
const RANK_VARIABLES = ["SLURM_LOCALID", "LOCAL_RANK", "SLURM_PROCID", "RANK"];

/** The launch whose processes see the fewest GPUs (a known number), or null. */
function narrowest(ctx: RuleContext): (SlurmLaunch & { gpusPerProcess: number }) | null {
  let best: (SlurmLaunch & { gpusPerProcess: number }) | null = null;
  for (const l of ctx.slurm ?? []) {
    if (l.gpusPerProcess === null || l.gpusPerProcess <= 0) continue;
    if (!best || l.gpusPerProcess < best.gpusPerProcess) best = l as SlurmLaunch & { gpusPerProcess: number };
  }
  return best;
}

/** GPU037: a device ordinal at or beyond the GPUs each process gets from the job script that starts the file. */
export const rule: PythonRule = {
  meta: {
    code: "GPU037",
    name: "ordinal-beyond-job-gpus",
    severity: "warning",
    fixable: true,
    // A device use (the words cuda or device: python/devices.ts `deviceUses`); runs only when a job
    // script starts the file.
    trigger: (t) => t.has("cuda") || t.has("device"),
    needs: "slurm",
    docs: {
      what: "In a Python file that a Slurm job script of the project starts (see GPU036 for where job scripts are looked for), compares device ordinals with the GPUs each of its processes gets: `--gpus-per-task=k` (srun's or the job's) gives each task k, `--gres=gpu:N` / `--gpus-per-node=N` without a per-task option gives every task and the batch step all N. Reports `cuda:N`, `set_device(N)`, `device_ids=[...]` with N at or beyond that count, and, when each task gets one GPU and several tasks run per node, `set_device(local_rank)` (or `torch.device(\"cuda\", local_rank)`) with the rank read from SLURM_LOCALID, LOCAL_RANK, SLURM_PROCID or RANK. A file that writes CUDA_VISIBLE_DEVICES itself is left to GPU004.",
      follows:
        'The project\'s job scripts that start the file (looked for as for GPU036), with the GPUs each process gets from their `#SBATCH` and `srun` options; literal device ordinals anywhere in the file; and `set_device` or `torch.device("cuda", ...)` whose value comes from a rank variable (SLURM_LOCALID, LOCAL_RANK, SLURM_PROCID, RANK) through names assigned in the file. Not followed: `--gpu-bind`, counts held in shell variables, devices chosen in other modules, and ranks passed in as function parameters.',
      why: `Slurm lists only the GPUs it gave a process in its CUDA_VISIBLE_DEVICES, and CUDA numbers the visible devices from 0. Measured on Slurm 22.05.8 (${MEASURED}): with \`srun -n2 --gpus-per-task=1\` task 0 sees \`CUDA_VISIBLE_DEVICES=0\` and task 1 sees \`CUDA_VISIBLE_DEVICES=1\`: one device each, \`cuda:0\`. An ordinal beyond the visible devices raises \`invalid device ordinal\` (measured on 2 x H200: ground-truth.md, \`CUDA_VISIBLE_DEVICES="1"\` then \`set_device(1)\`), so \`set_device(local_rank)\` fails in every task but the first. With \`--gpus=2\` and no per-task option both tasks see \`0,1\` (measured), and there \`set_device(local_rank)\` is right.`,
      example:
        '# train.py, started by a job script with `#SBATCH --ntasks-per-node=4` and `#SBATCH --gpus-per-task=1`: `srun python train.py`\nimport os\nimport torch\n\nlocal_rank = int(os.environ["SLURM_LOCALID"])\ntorch.cuda.set_device(local_rank)  # GPU037: each task sees only cuda:0\n',
      fix: "# train.py, started by a job script with `#SBATCH --ntasks-per-node=4` and `#SBATCH --gpus-per-task=1`: `srun python train.py`\nimport os\nimport torch\n\ntorch.cuda.set_device(0)  # Slurm gave this task one GPU\n",
      whenNotToCare:
        "When the job script is not how the file is run any more. `--gpu-bind` and counts held in variables are not followed (the rule stays silent). The workstation's own GPU count (GPU017) is not used for a file that a job script starts.",
      references: [
        `Measured: ${MEASURED} (CUDA_VISIBLE_DEVICES per task under --gpus-per-task and --gpus)`,
        "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management: CUDA_VISIBLE_DEVICES is set for each job step (https://slurm.schedmd.com/gres.html#GPU_Management)",
        'srun(1), Slurm 22.05: --gpus-per-task "Specify the number of GPUs required for the job on each task" (https://slurm.schedmd.com/srun.html)',
        "ground-truth.md: 'Other facts measured' row invalid device ordinal",
      ],
    },
  },
  check(ctx) {
    const l = narrowest(ctx);
    if (!l) return;
    if (envWrites(ctx.model).some((w) => w.variable === "CUDA_VISIBLE_DEVICES")) return; // GPU004's business
    const k = l.gpusPerProcess;
    const visible = k === 1 ? "only cuda:0 exists" : `only cuda:0..cuda:${k - 1} exist`;
    const source = `${scriptNameOf(l)} line ${l.line + 1} starts this file with ${l.gpusFrom ?? "its GPU request"}`;
    for (const use of deviceUses(ctx.model)) {
      if (use.ordinal < k) continue;
      ctx.report({
        range: nodeRange(use.node),
        message: `${use.form} names device ${use.ordinal}, but each process of this file sees ${k} GPU${k === 1 ? "" : "s"} (${source}; Slurm lists only those in CUDA_VISIBLE_DEVICES, renumbered from 0 by CUDA): ${visible}, so this raises invalid device ordinal`,
      });
    }
    if (k !== 1 || l.launcher !== "srun" || (l.processesPerNode ?? 0) < 2) return;
    const sources = new Set(RANK_VARIABLES.flatMap((v) => envReadsOf(ctx.model, v)).map((r) => r.node.id));
    if (!sources.size) return;
    for (const call of ctx.model.nodesOfType("call")) {
      if (!call) continue;
      const q = calleePath(ctx.model, call);
      const { positional } = callArgs(call);
      let arg: SyntaxNode | undefined;
      if (q && SET_DEVICE_PATHS.includes(q)) arg = positional[0];
      else if (q === "torch.device" && positional.length === 2 && /^["']cuda["']$/.test(positional[0].text))
        arg = positional[1];
      if (!arg || !flowsFrom(ctx.model, arg, sources)) continue;
      ctx.report({
        range: nodeRange(call),
        message: `\`${call.text.split("\n")[0]}\` picks the device by the task's rank, but each task sees one GPU (${source}, ${l.processesPerNode} tasks per node): Slurm gives task 1 only its own GPU as cuda:0 (measured: task 1 sees CUDA_VISIBLE_DEVICES=1), so every task but the first fails with invalid device ordinal; use device 0`,
        fix: { title: "Use device 0", edits: [{ range: nodeRange(arg), newText: "0" }], safe: false },
      });
    }
  },
};
