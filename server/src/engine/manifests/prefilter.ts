/**
 * The sound text prefilter of YAML manifests (compose files and other YAML, read for Kubernetes
 * objects), as prefilter.ts is for Python: per manifest rule, a substring test on the raw text that
 * every YAML file the rule can report on passes. A YAML file that no enabled rule's test passes is
 * not parsed at all (issue 20: on the python3-torch tree, parsing native_functions.yaml, 0.5 MB with
 * no container, service or GPU in it, was most of the manifest time). Dockerfiles and job scripts
 * are not prefiltered here (job scripts have their own `#SBATCH` test, prefilter.ts `hasSbatchLine`).
 *
 * Why each test is sound. The rules compare keys and names with fixed strings (yaml.ts `pairOf`,
 * `scalarText`: the scalar's value); a YAML scalar's value is its source text except for (1) line
 * folding, which only joins lines with a space or a line break (so a needle without white space
 * lies within one line of the source), and (2) the escapes of double-quoted scalars: `\/`, `\x..`,
 * `\u....`, `\U........` can write any needle character, and a `\` before a line break joins two
 * lines without a space. The other escapes (`\"`, `\\`, `\t`, `\n`, `\0`, `\_`, ...) write
 * characters no needle has. So a text with none of `\/ \x \u \U`, `\` + line break holds every key
 * and name as written, and one with any of them is parsed with every rule (as without the prefilter).
 * Anchors and aliases repeat a node written elsewhere in the same text. The soundness of this table
 * is tested on every YAML fixture and on escaped, aliased and flow-style spellings
 * (test/unit/manifestPrefilter.test.ts); the CLI's output is the same with and without
 * `--no-prefilter` on the corpora (BENCHMARKS.md).
 */
import type { ManifestKind } from "./files";

/** An escape of a double-quoted YAML scalar that can write a character of a needle (see the module comment). */
const NEEDLE_ESCAPE = /\\[/xuU\r\n]/;

/** Per manifest rule: a necessary condition on a YAML manifest's text (kind `compose` or `yaml`) for the rule to report. */
export const YAML_TRIGGERS: Readonly<Record<string, (text: string, kind: "compose" | "yaml") => boolean>> = {
  // A GPU resource name in a container's limits or requests (GPU018 isGpuResource): nvidia.com/gpu,
  // nvidia.com/gpu.shared, nvidia.com/mig-*, amd.com/gpu; pod containers are read from YAML, not compose files.
  GPU018: (t, kind) => kind === "yaml" && (t.includes("nvidia.com/") || t.includes("amd.com/gpu")),
  // CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES set in a compose environment or a pod's env.
  GPU019: (t) => t.includes("VISIBLE_DEVICES"),
  // services.<name>.deploy.resources.reservations.devices of a compose file.
  GPU020: (t, kind) => kind === "compose" && t.includes("devices") && t.includes("services"),
  // Job-script rules report on job scripts only (rules/shared/jobScript.ts `jobScriptOf`).
  GPU021: () => false,
  GPU022: () => false,
  GPU023: () => false,
  GPU024: () => false,
  GPU025: () => false,
  // A launcher in a container's command (compose, Kubernetes), or an accelerate config (num_processes with gpu_ids).
  GPU040: (t) => mentionsLauncher(t) || (t.includes("num_processes") && t.includes("gpu_ids")),
  GPU042: (t) => mentionsLauncher(t),
  GPU043: () => false,
  // Shell scripts only.
  GPU045: () => false,
};

/**
 * Whether a shell text may run a container with GPUs (`docker run --gpus`, GPU043): a script without
 * `#SBATCH` or a launcher is read only when this holds.
 */
export function mentionsContainerGpus(text: string): boolean {
  return text.includes("--gpus") && (text.includes("docker") || text.includes("podman") || text.includes("nerdctl"));
}

/**
 * Whether a text names a launcher that GPU040 and GPU042 read (launch/commandLine.ts): `torchrun`,
 * `torch.distributed.run|launch`, `accelerate`, `deepspeed`, `colossalai run`. A shell script without `#SBATCH` is
 * linted only when this holds; a YAML file is parsed for GPU040 only when this (or an accelerate
 * config's keys) holds.
 */
export function mentionsLauncher(text: string): boolean {
  return text.includes("torchrun") || text.includes("torch.distributed.") || text.includes("accelerate") || text.includes("deepspeed") || text.includes("colossalai");
}

/**
 * Whether manifest rule `code` may report on a manifest of `kind` with this text. Dockerfiles and
 * job scripts: always (not prefiltered here); a code without a trigger: always.
 */
export function manifestRuleMayFire(code: string, text: string, kind: ManifestKind, escapes: () => boolean): boolean {
  if (kind !== "compose" && kind !== "yaml") return true;
  const trigger = YAML_TRIGGERS[code];
  return !trigger || escapes() || trigger(text, kind);
}

/** Whether `text` has an escape that can write a needle character (then every rule runs). */
export function hasNeedleEscape(text: string): boolean {
  return NEEDLE_ESCAPE.test(text);
}
