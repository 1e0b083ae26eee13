import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { parseVisibleDevices } from "../visibleDevices";

const CVD = "CUDA_VISIBLE_DEVICES";

/** `docker`, `podman`, `nerdctl`: the container CLIs whose `run`/`create` take `--gpus`. */
const ENGINES = new Set(["docker", "podman", "nerdctl"]);
/**
 * `docker run` options that take no value (docker run --help, Docker 27): the others take one
 * (`-e X`, `--name x`); an option written `--x=v` never takes the next word.
 */
const SWITCHES = new Set([
  "--rm",
  "-d",
  "--detach",
  "-i",
  "--interactive",
  "-t",
  "--tty",
  "-it",
  "-ti",
  "-dit",
  "-itd",
  "-P",
  "--publish-all",
  "--privileged",
  "--init",
  "--read-only",
  "--no-healthcheck",
  "--oom-kill-disable",
  "--sig-proxy",
  "-q",
  "--quiet",
  "--disable-content-trust",
  "--use-api-socket",
]);

/** A `docker run` command line, as far as this rule (and GPU045) reads it. */
export interface ContainerRun {
  /** `--gpus` and its value (`all`, `2`, `device=1,2`, `"device=${X}"` with the quotes removed). */
  gpus: { value: string; word: ShellWord } | null;
  /** The `CUDA_VISIBLE_DEVICES` passed with `-e`/`--env`: its value, or null when the host's is passed on (`-e CUDA_VISIBLE_DEVICES`). */
  env: { value: string | null; fromHost: boolean; word: ShellWord } | null;
}

/** Reads a command as `docker run`/`docker container run`/`podman run` (also `create`), or null. */
export function containerRun(c: ShellCommand): ContainerRun | null {
  const w = c.words;
  let k = 0;
  while (k < w.length && (w[k].value === "sudo" || w[k].value === "exec")) k++;
  const engine = w[k]?.value.replace(/^.*\//, "");
  if (!engine || !ENGINES.has(engine)) return null;
  k++;
  if (w[k]?.value === "container") k++;
  if (w[k]?.value !== "run" && w[k]?.value !== "create") return null;
  const out: ContainerRun = { gpus: null, env: null };
  for (k++; k < w.length; k++) {
    const word = w[k];
    const v = word.value;
    if (!v.startsWith("-") || v === "--") break; // the image: what follows is the container's command
    const eq = v.indexOf("=");
    const name = eq > 0 && v.startsWith("--") ? v.slice(0, eq) : v;
    if (SWITCHES.has(name) || /^-[dit]+$/.test(name)) continue;
    const inline = eq > 0 && v.startsWith("--") ? { value: v.slice(eq + 1), word } : null;
    const taken = inline ?? (k + 1 < w.length ? { value: w[k + 1].value, word: w[k + 1] } : null);
    if (!inline) k++;
    if (!taken) break;
    if (name === "--gpus") out.gpus = taken;
    else if (name === "-e" || name === "--env") {
      const e = taken.value.indexOf("=");
      const key = e < 0 ? taken.value : taken.value.slice(0, e);
      if (key !== CVD) continue;
      const value = e < 0 ? null : taken.value.slice(e + 1);
      const fromHost = value === null || /^\$\{?CUDA_VISIBLE_DEVICES\b/.test(value);
      out.env = { value, fromHost, word: taken.word };
    }
  }
  return out;
}

/**
 * The GPUs `--gpus` exposes: `all` (null: every GPU, numbered as on the host), a count, or a
 * `device=` list (its length when literal, NaN when it expands a variable).
 */
function exposed(value: string): number | null {
  const v = value.trim().replace(/^["']|["']$/g, "");
  if (v === "all" || /(^|,)count=all\b/.test(v)) return null;
  if (/^[0-9]+$/.test(v)) return Number(v);
  const count = /(?:^|,)count=([0-9]+)\b/.exec(v);
  if (count) return Number(count[1]);
  const ids = /(?:^|,)"?device=([^"]*)"?/.exec(v);
  if (!ids) return null;
  if (ids[1].includes("$")) return Number.NaN;
  return ids[1].split(",").filter((x) => x.trim() !== "").length;
}

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
