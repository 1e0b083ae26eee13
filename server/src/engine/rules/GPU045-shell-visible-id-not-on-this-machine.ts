import type { ManifestRule } from "../rule";
import { isPython, parseLaunchLine } from "../launch/commandLine";
import { visibleForCommand } from "../launch/sources";
import { hasSbatchLine } from "../manifests/prefilter";
import { missingIdMessage } from "./shared/machineIds";

/** GPU045: a plain shell script gives the Python it starts a CUDA_VISIBLE_DEVICES id this machine does not have. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU045",
    name: "shell-visible-id-not-on-this-machine",
    severity: "warning",
    fixable: false,
    // Shell scripts only: never a YAML manifest.
    trigger: () => false,
    docs: {
      what: "In a shell script without `#SBATCH` lines, compares the CUDA_VISIBLE_DEVICES in force for a command that starts Python (`python ...`, `torchrun`, `python -m torch.distributed.run|launch`, `accelerate launch`) with the machine's GPUs: an `export CUDA_VISIBLE_DEVICES=...` earlier in the script or a `CUDA_VISIBLE_DEVICES=... python ...` prefix. The machine is the one GPU017 reads: the editor's nvidia-smi inventory, or `--gpus N` / `--inventory FILE` / `[tool.gpu-pilot] gpus` in the CLI. Off when the machine is unknown. GPU017 does the same for values written in Python.",
      follows:
        "The commands of a shell script without `#SBATCH` lines that start Python (`python`, `torchrun`, `accelerate launch`, ...), with the CUDA_VISIBLE_DEVICES in force for each (a `CUDA_VISIBLE_DEVICES=...` prefix, also through `env`, or the last `export` before it in the script), and the machine's GPU inventory. Not followed: scripts it sources or that run it, values that expand a variable, assignments without `export`, branches (the last `export` in the text wins), `bash -c '...'`, and commands under `srun`, `deepspeed` or `docker run`. A notebook's shell lines (`!torchrun ...`, `!CUDA_VISIBLE_DEVICES=3 python x.py`) are read as such a script, in the cells' order, with the kernel's `%env` settings before them as exports (IPython runs each `!` line in a shell of its own that inherits the kernel's environment: a `!export` or a bare `!N=8` reaches no other line); findings sit on the cell's line.",
      why: "Measured on 2 x H200 (ground-truth.md, 'How CUDA parses CUDA_VISIBLE_DEVICES'): CUDA stops parsing at the first id that does not exist, so `1,7,0` on two GPUs leaves only GPU 1 and drops GPU 0, and an id list that starts with a missing id hides every GPU: `torch.cuda.is_available()` is False, and a program that falls back to the CPU trains there without an error.",
      example:
        "#!/bin/bash\n# on a machine with 1 GPU (index 0)\nexport CUDA_VISIBLE_DEVICES=1   # GPU045: hides every GPU\npython train.py\n",
      fix: "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\npython train.py\n",
      whenNotToCare:
        "When the script is written for another machine (a server with more GPUs than the one it is checked on): silence the line with `# noqa: GPU045`, or do not give the CLI a GPU count for it. Not read: Slurm job scripts (GPU021 and GPU025 check those: the job's GPUs are not this machine's), values that expand a variable, assignments without `export` (they reach Python only if the caller exported the variable), commands under `srun`, `deepspeed` (it resets CUDA_VISIBLE_DEVICES itself when given GPUs) and containers (`docker run`: GPU043).",
      references: [
        'ground-truth.md: rows "0,5,1" and "1,7,0" (parsing stops at the first id that does not exist)',
        "nvidia-smi --query-gpu=index,uuid (the inventory)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    if (
      ctx.manifest.kind !== "jobscript" ||
      !facts ||
      ctx.machine.gpuCount === null ||
      hasSbatchLine(ctx.manifest.src.text)
    )
      return;
    const reported = new Set<string>();
    for (const c of facts.commands) {
      // After env/nohup/exec prefixes: python, or a launcher that starts it (deepspeed resets the variable itself).
      const line = parseLaunchLine(c.words, c.assignments);
      if (line.underSrun) continue;
      const python =
        isPython(line.words[0]?.value ?? "") ||
        line.launcher === "torchrun" ||
        line.launcher === "accelerate" ||
        line.launcher === "colossalai";
      if (!python) continue;
      const { visible } = visibleForCommand(ctx.manifest, c, line);
      if (!visible || visible.value === null) continue;
      const key = `${visible.range.start.line}:${visible.range.start.character}`;
      if (reported.has(key)) continue;
      const message = missingIdMessage(visible.value, ctx.machine);
      if (!message) continue;
      reported.add(key);
      const where = ctx.manifest.src.lineOf(c.start) + 1;
      ctx.report({
        range: visible.range,
        message: `${message}: the Python started on line ${where} ${visible.from === "inline" ? "gets it inline" : `inherits it (${visible.from})`}`,
      });
    }
  },
};
