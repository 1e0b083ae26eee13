/**
 * The sound text prefilter of YAML manifests (compose files and other YAML, read for Kubernetes
 * objects), as prefilter.ts is for Python: each manifest rule's `meta.trigger` (rule.ts
 * `ManifestTrigger`) is a substring test on the raw text that every YAML file the rule can report
 * on passes. A YAML file that no enabled rule's test passes is not parsed at all (on the
 * python3-torch tree, parsing native_functions.yaml, 0.5 MB with no container, service or GPU in
 * it, was most of the manifest time). Dockerfiles and job scripts are not prefiltered by the
 * triggers (job scripts have their own `#SBATCH` test, {@link hasSbatchLine}).
 *
 * Why each test is sound. The rules compare keys and names with fixed strings (yaml.ts `pairOf`,
 * `scalarText`: the scalar's value); a YAML scalar's value is its source text except for (1) line
 * folding, which only joins lines with a space or a line break (so a needle without white space
 * lies within one line of the source), and (2) the escapes of double-quoted scalars: `\/`, `\x..`,
 * `\u....`, `\U........` can write any needle character, and a `\` before a line break joins two
 * lines without a space. The other escapes (`\"`, `\\`, `\t`, `\n`, `\0`, `\_`, ...) write
 * characters no needle has. So a text with none of `\/ \x \u \U`, `\` + line break holds every key
 * and name as written, and one with any of them is parsed with every rule (as without the prefilter).
 * Anchors and aliases repeat a node written elsewhere in the same text. The soundness of the triggers
 * is tested on every YAML fixture and on escaped, aliased and flow-style spellings
 * (test/unit/server/engine/manifests/manifestPrefilter.test.ts); the CLI's output is the same with and without
 * `--no-prefilter` on the corpora (BENCHMARKS.md).
 */
import type { ManifestKind } from "./files";
import type { ManifestRule } from "../rule";

/** An escape of a double-quoted YAML scalar that can write a character of a needle (see the module comment). */
const NEEDLE_ESCAPE = /\\[/xuU\r\n]/;

/**
 * Whether a shell text may run a container with GPUs (`docker run --gpus`, GPU043): a script without
 * `#SBATCH` or a launcher is read only when this holds.
 */
export function mentionsContainerGpus(text: string): boolean {
  return text.includes("--gpus") && (text.includes("docker") || text.includes("podman") || text.includes("nerdctl"));
}

/**
 * Whether a text names a launcher that GPU040 and GPU042 read (launch/commandLine.ts): `torchrun`,
 * `torch.distributed.run|launch`, `accelerate`, `deepspeed`, `colossalai run`, vLLM's server (`vllm serve`,
 * `vllm.entrypoints...`, the `vllm/vllm-openai` image: each holds `vllm`). A shell script without `#SBATCH` is
 * linted only when this holds; a YAML file is parsed for GPU040 only when this (or an accelerate
 * config's keys) holds.
 */
export function mentionsLauncher(text: string): boolean {
  return (
    text.includes("torchrun") ||
    text.includes("torch.distributed.") ||
    text.includes("accelerate") ||
    text.includes("deepspeed") ||
    text.includes("colossalai") ||
    text.includes("vllm")
  );
}

/**
 * Whether manifest rule `rule` may report on a manifest of `kind` with this text: for YAML, its
 * `meta.trigger` passes or the text has an escape that can write a needle (`escapes`, asked only
 * then). Dockerfiles and job scripts: always (not prefiltered here). A devcontainer.json: only the
 * rules that read one (`meta.devcontainer`), whatever its text (such a file is small); a dotenv
 * file likewise only the rules that read one (`meta.dotenv`).
 */
export function manifestRuleMayFire(
  rule: ManifestRule,
  text: string,
  kind: ManifestKind,
  escapes: () => boolean,
): boolean {
  if (kind === "devcontainer") return rule.meta.devcontainer === true;
  if (kind === "dotenv") return rule.meta.dotenv === true;
  if (kind !== "compose" && kind !== "yaml") return true;
  return escapes() || rule.meta.trigger(text, kind);
}

/**
 * The prefilter of shell scripts: whether some line starts with `#SBATCH`. sbatch reads a directive
 * only from a line that starts with it, and every job-script rule (GPU021-GPU025) needs the GPUs or
 * the directives those lines give, so a script without one is not parsed.
 */
export function hasSbatchLine(text: string): boolean {
  for (let i = text.indexOf("#SBATCH"); i >= 0; i = text.indexOf("#SBATCH", i + 1)) {
    if (i === 0 || text[i - 1] === "\n" || text[i - 1] === "\r") return true;
  }
  return false;
}

/** Whether `text` has an escape that can write a needle character (then every rule runs). */
export function hasNeedleEscape(text: string): boolean {
  return NEEDLE_ESCAPE.test(text);
}
