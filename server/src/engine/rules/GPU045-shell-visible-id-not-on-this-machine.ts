import type { Node } from "yaml";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { JobScriptFacts } from "../manifests/jobscript";
import { isPython, parseLaunchLine } from "../launch/commandLine";
import { visibleForCommand } from "../launch/sources";
import { hasSbatchLine } from "../manifests/prefilter";
import { isSeq, scalarText, valueAt, valueOf } from "../manifests/yaml";
import { gpusDeviceIds, machineGpus, missingHostIds, missingIdMessage } from "./shared/machineIds";
import { containerRun } from "../launch/containerRun";

/** How the NVIDIA Container Toolkit answers a host id it does not find (libnvidia-container, legacy mode). */
const UNKNOWN_DEVICE = (id: string) => `"nvidia-container-cli: device error: ${id}: unknown device"`;

/** A host GPU id the machine lacks, for messages: an index, or a UUID that none of its GPUs' starts with. */
function hostIdMissing(id: string, n: number): string {
  const mig = /^(\d+):/.exec(id);
  if (mig) return `MIG device ${id} of host GPU ${mig[1]}, which this machine does not have (${machineGpus(n)})`;
  return /^\d/.test(id)
    ? `host GPU ${id}, which this machine does not have (${machineGpus(n)})`
    : `${id}, which none of this machine's GPU UUIDs starts with (${machineGpus(n)})`;
}

/**
 * A compose file: the `device_ids` of each service's GPU reservations
 * (`deploy.resources.reservations.devices` entries with `driver: nvidia` or `capabilities: [gpu]`).
 */
function checkCompose(ctx: ManifestRuleContext, n: number): void {
  for (const s of ctx.manifest.services) {
    const devices = valueAt(s.node, ["deploy", "resources", "reservations", "devices"]);
    if (!isSeq(devices)) continue;
    for (const d of devices.items) {
      const caps = valueOf(d, "capabilities");
      const gpu =
        (isSeq(caps) && caps.items.some((c) => scalarText(c) === "gpu")) ||
        scalarText(valueOf(d, "driver")) === "nvidia";
      const ids = valueOf(d, "device_ids");
      if (!gpu || !isSeq(ids)) continue;
      for (const item of ids.items as Node[]) {
        const text = scalarText(item);
        // Compose fills in `${VAR}` before it reads the file: not known here.
        if (text === null || text.includes("$") || !item.range) continue;
        for (const id of missingHostIds(
          text.split(",").map((x) => x.trim()),
          ctx.machine,
        ))
          ctx.report({
            range: ctx.manifest.src.range(item.range[0], item.range[1]),
            message: `device_ids of service "${s.name}" names ${hostIdMissing(id, n)}: Docker hands the ids to the NVIDIA Container Toolkit, which refuses to start the container (${UNKNOWN_DEVICE(id)}); use an id that nvidia-smi lists here, or reserve by count (count: 1) instead`,
          });
      }
    }
  }
}

/** A shell script's `docker run --gpus device=...` (also podman, nerdctl, `create`) with an id the machine lacks. */
function checkContainerRuns(ctx: ManifestRuleContext, facts: JobScriptFacts, n: number): void {
  for (const c of facts.commands) {
    const gpus = containerRun(c)?.gpus;
    const ids = gpus ? gpusDeviceIds(gpus.value) : null;
    if (!gpus || !ids) continue;
    for (const id of missingHostIds(ids, ctx.machine))
      ctx.report({
        range: ctx.manifest.src.range(gpus.word.start, gpus.word.end),
        message: `--gpus ${gpus.value} asks for ${hostIdMissing(id, n)}: the NVIDIA Container Toolkit refuses to start the container (${UNKNOWN_DEVICE(id)}); use an id that nvidia-smi lists here, or a count (--gpus 1)`,
      });
  }
}

/** GPU045: a plain shell script gives the Python it starts a CUDA_VISIBLE_DEVICES id this machine does not have. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU045",
    name: "shell-visible-id-not-on-this-machine",
    severity: "warning",
    fixable: false,
    // Shell scripts, and compose files with a GPU reservation's device_ids.
    trigger: (t, kind) => kind === "compose" && t.includes("device_ids"),
    docs: {
      what: "In a shell script without `#SBATCH` lines, compares the CUDA_VISIBLE_DEVICES in force for a command that starts Python (`python ...`, `torchrun`, `python -m torch.distributed.run|launch`, `accelerate launch`) with the machine's GPUs: an `export CUDA_VISIBLE_DEVICES=...` earlier in the script or a `CUDA_VISIBLE_DEVICES=... python ...` prefix. The machine is the one GPU017 reads: the editor's nvidia-smi inventory, or `--gpus N` / `--inventory FILE` / `[tool.gpu-pilot] gpus` in the CLI. Also compares the host GPU ids a container is given with the machine: `docker run --gpus device=N` (also `'\"device=1,2\"'`, podman, nerdctl) in such a script, and the `device_ids` of a compose service's GPU reservation (`deploy.resources.reservations.devices`): an index at or beyond the machine's GPU count, or, when the inventory gives UUIDs, a `GPU-` UUID none of its GPUs starts with. Off when the machine is unknown. GPU017 does the same for values written in Python.",
      follows:
        "The commands of a shell script without `#SBATCH` lines that start Python (`python`, `torchrun`, `accelerate launch`, ...), with the CUDA_VISIBLE_DEVICES in force for each (a `CUDA_VISIBLE_DEVICES=...` prefix, also through `env`, or the last `export` before it in the script), and the machine's GPU inventory. Not followed: scripts it sources or that run it, values that expand a variable, assignments without `export`, branches (the last `export` in the text wins), `bash -c '...'`, and commands under `srun`, `deepspeed` or `docker run` (for `docker run`, only the ids of `--gpus device=...` are read). In a compose file: each service's `deploy.resources.reservations.devices` entries that ask for GPUs (`driver: nvidia` or `capabilities: [gpu]`) and their `device_ids`, as written (an index, `N:M` for a MIG device of GPU N, `GPU-<uuid>`, `MIG-GPU-<uuid>/...`); not followed: `${...}` interpolation, other compose files merged with it, `MIG-<uuid>` ids (the inventory lists GPUs, not MIG devices) and `NVIDIA_VISIBLE_DEVICES` in `environment` (GPU019 reports host ids there). A notebook's shell lines (`!torchrun ...`, `!CUDA_VISIBLE_DEVICES=3 python x.py`) are read as such a script, in the cells' order, with the kernel's `%env` settings before them as exports (IPython runs each `!` line in a shell of its own that inherits the kernel's environment: a `!export` or a bare `!N=8` reaches no other line); findings sit on the cell's line.",
      why: "Measured on 2 x H200 (ground-truth.md, 'How CUDA parses CUDA_VISIBLE_DEVICES'): CUDA stops parsing at the first id that does not exist, so `1,7,0` on two GPUs leaves only GPU 1 and drops GPU 0, and an id list that starts with a missing id hides every GPU: `torch.cuda.is_available()` is False, and a program that falls back to the CPU trains there without an error. A container's GPUs are chosen by host id before it starts: Docker's `--gpus device=...` and compose's `device_ids` are host GPU ids as nvidia-smi shows them (indexes or UUIDs), handed to the NVIDIA Container Toolkit, which stops at an id the host does not have, so the container never starts: `nvidia-container-cli: device error: 3: unknown device` (Vexa-ai/vexa#85: `device_ids: [\"3\"]` on single-GPU hosts and WSL2).",
      example:
        "#!/bin/bash\n# on a machine with 1 GPU (index 0)\nexport CUDA_VISIBLE_DEVICES=1   # GPU045: hides every GPU\npython train.py\n",
      fix: "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\npython train.py\n",
      whenNotToCare:
        "When the script is written for another machine (a server with more GPUs than the one it is checked on): silence the line with `# noqa: GPU045`, or do not give the CLI a GPU count for it. Not read: Slurm job scripts (GPU021 and GPU025 check those: the job's GPUs are not this machine's), values that expand a variable, assignments without `export` (they reach Python only if the caller exported the variable), commands under `srun`, `deepspeed` (it resets CUDA_VISIBLE_DEVICES itself when given GPUs) and containers (`docker run`: GPU043), except the host ids of `--gpus device=...`. A compose file meant for a server with more GPUs than the machine it is checked on gets the same answer: `# noqa: GPU045` on the `device_ids` line, or no GPU count for the CLI.",
      references: [
        'ground-truth.md: rows "0,5,1" and "1,7,0" (parsing stops at the first id that does not exist)',
        "nvidia-smi --query-gpu=index,uuid (the inventory)",
        "Docker documentation, 'Run Docker Compose services with GPU access' (https://docs.docker.com/compose/gpu-support/): \"device_ids. This value, specified as a list of strings, represents GPU device IDs from the host. You can find the device ID in the output of nvidia-smi on the host.\"",
        'NVIDIA Container Toolkit, \'Specialized Configurations with Docker\', GPU Enumeration: NVIDIA_VISIBLE_DEVICES (what `--gpus` and `device_ids` become) takes "a comma-separated list of GPU UUID(s) or index(es)"; `\'"device=2,3"\'` "enumerates GPUs 2 and 3 to the container"',
        "Vexa-ai/vexa#85 (2025-12-12): `device_ids: [\"3\"]` stopped the container on single-GPU hosts with 'nvidia-container-cli: device error: 3: unknown device'; NVIDIA/nvidia-docker#1264 (2020-05-02): `docker run --gpus 2` on a one-GPU machine failed at the runtime hook, answered 'unknown device id because you have only 1 GPU'",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const n = ctx.machine.gpuCount;
    if (n === null) return;
    if (ctx.manifest.kind === "compose") return checkCompose(ctx, n);
    const facts = ctx.manifest.jobscript;
    if (ctx.manifest.kind !== "jobscript" || !facts || hasSbatchLine(ctx.manifest.src.text)) return;
    checkContainerRuns(ctx, facts, n);
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
