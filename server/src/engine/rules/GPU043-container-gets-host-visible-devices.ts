import type { ManifestRule, ManifestRuleContext } from "../rule";
import { parseVisibleDevices } from "../visibleDevices";
import { containerRun, gpusExposed as exposed, type ContainerRun } from "../launch/containerRun";

/** GPU043: `docker run --gpus <some GPUs>` that also passes the host's CUDA_VISIBLE_DEVICES into the container. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU043",
    name: "container-gets-host-visible-devices",
    severity: "warning",
    fixable: false,
    // Reports on shell scripts only (`docker run --gpus` lines), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "Reads `docker run` / `podman run` / `nerdctl run` (also `create`, `docker container run`, behind `sudo`) in shell scripts and Slurm job scripts, and reports `-e CUDA_VISIBLE_DEVICES` (passing the host's value on), `-e CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES`, or a literal id the container does not have, together with `--gpus` that gives the container some of the host's GPUs (`device=...`, a count), not all.",
      follows:
        "The `docker`, `podman` and `nerdctl` `run` and `create` commands of the shell or job script itself (also `docker container run`, behind `sudo` or `exec`), with their `--gpus` and `-e`/`--env` options. Not followed: commands built in variables, options after the image (the container's own command), `--env-file` files, what the image sets itself, and compose files (GPU019 and GPU020 read those). A notebook's shell lines (`!torchrun ...`, `!CUDA_VISIBLE_DEVICES=3 python x.py`) are read as such a script, in the cells' order, with the kernel's `%env` settings before them as exports (IPython runs each `!` line in a shell of its own that inherits the kernel's environment: a `!export` or a bare `!N=8` reaches no other line); findings sit on the cell's line.",
      why: "`--gpus device=2,3` makes the NVIDIA Container Toolkit enumerate only GPUs 2 and 3 inside the container, where CUDA numbers the GPUs it can see from 0. The host's CUDA_VISIBLE_DEVICES (say `3`, the id a CI runner or a scheduler gave the job) names host GPUs: inside the container id 3 does not exist, so CUDA finds no device (or, with two ids, the wrong one). The container already sees exactly the selected GPUs; no CUDA_VISIBLE_DEVICES is needed inside.",
      example:
        '#!/bin/bash\ndocker run --rm --gpus "device=$CUDA_VISIBLE_DEVICES" -e CUDA_VISIBLE_DEVICES my-image python train.py   # GPU043\n',
      fix: '#!/bin/bash\ndocker run --rm --gpus "device=$CUDA_VISIBLE_DEVICES" my-image python train.py\n',
      whenNotToCare:
        "With `--gpus all` the container sees every GPU under its host id, and a CUDA_VISIBLE_DEVICES from the host still means the same GPUs: not reported. A literal id inside the range of the exposed GPUs (`--gpus 2 -e CUDA_VISIBLE_DEVICES=1`) selects among them on purpose: not reported. Commands built in variables, options after the image (the container's own command) and `docker compose` are not read (GPU019 and GPU020 read compose files).",
      references: [
        "NVIDIA Container Toolkit, 'Specialized Configurations with Docker', GPU Enumeration: `--gpus '\"device=2,3\"'` enumerates GPUs 2 and 3 to the container; NVIDIA_VISIBLE_DEVICES controls which GPUs are accessible inside it",
        "Docker documentation, 'GPU access' (https://docs.docker.com/engine/containers/gpu/): `--gpus all`, `--gpus device=<ids>`, `--gpus <count>`",
        "CUDA C Programming Guide, CUDA environment variables: CUDA_VISIBLE_DEVICES makes only the listed devices visible, renumbered from 0; an id that names no device leaves CUDA with none",
        "docker run --help (Docker 27): `-e, --env list  Set environment variables` (`-e NAME` passes the client's value of NAME)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    for (const c of ctx.manifest.jobscript?.commands ?? []) {
      const run = containerRun(c);
      if (!run?.gpus || !run.env) continue;
      const n = exposed(run.gpus.value);
      if (n === null) continue;
      if (run.env.fromHost)
        report(
          ctx,
          run,
          `passes the host's CUDA_VISIBLE_DEVICES into a container that sees only the GPUs of --gpus ${run.gpus.value}, numbered from 0 there: the host's ids name other GPUs or none (CUDA finds no device); drop the -e, the container already sees the selected GPUs`,
        );
      else if (run.env.value !== null && Number.isFinite(n)) {
        const p = parseVisibleDevices(run.env.value);
        const beyond = p.kept
          .filter((e) => e.kind === "index" && e.index !== undefined && e.index >= n)
          .map((e) => e.text);
        if (beyond.length)
          report(
            ctx,
            run,
            `sets CUDA_VISIBLE_DEVICES=${run.env.value} in a container that has ${n} GPU${n === 1 ? "" : "s"} (--gpus ${run.gpus.value}), numbered 0${n > 1 ? `..${n - 1}` : ""} there: ${beyond.join(", ")} names no GPU inside; use ids from 0, or drop the -e`,
          );
      }
    }
  },
};

function report(ctx: ManifestRuleContext, run: ContainerRun, what: string): void {
  ctx.report({
    range: ctx.manifest.src.range(run.env!.word.start, run.env!.word.end),
    message: `docker run ${what}`,
    related: [
      {
        range: ctx.manifest.src.range(run.gpus!.word.start, run.gpus!.word.end),
        message: "the GPUs the container gets",
      },
    ],
  });
}
